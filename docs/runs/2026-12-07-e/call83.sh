#!/usr/bin/env bash
# call 83 (prepared in stop 46, not run): the binaries of 11d67fd and the wheel of the tip of stop 46
# (reduce_rs inside torch.compile). An H200: `bench --shapes table`, then `others`, with
# PyTorch, CUB and the CUDA twins beside (README's H200 tables), then the tests of reduce_rs
# inside torch.compile. An H100: the Python package's tests on the GPU (torch tensors, and
# inside torch.compile), the greedy sampler by hand and in torch.compile, the Python bench with
# --compile (each case compiled afresh, static shapes), the GPU tests of the tip.
set -uo pipefail
cd "$(dirname "$0")/.."
RUN=call83
. scripts/device_preamble.sh
wheel
case "$(cat $L/gpu.txt)" in
*H200*)
  t0=$SECONDS; timeout 330 $BIN/reduce-rs bench --shapes table --peers-dir bench --out $L/table > $L/table.log 2>&1; echo "table rc=$? $((SECONDS-t0))s"; pack
  summ table
  t0=$SECONDS; timeout $((500-SECONDS)) $BIN/reduce-rs bench --shapes others --peers-dir bench --out $L/others > $L/others.log 2>&1; echo "others rc=$? $((SECONDS-t0))s"; pack
  summ others
  t0=$SECONDS; (cd /tmp && PYTHONPATH=$SITE timeout $((590-SECONDS)) python3 -m pytest -q -p no:cacheprovider $OLDPWD/python/tests/test_compile.py > $L/pytest_compile.log 2>&1); echo "pytest compile rc=$? $((SECONDS-t0))s"; tail -n 3 $L/pytest_compile.log; pack ;;
*)
  t0=$SECONDS; (cd /tmp && PYTHONPATH=$SITE timeout 170 python3 -m pytest -q -p no:cacheprovider $OLDPWD/python/tests > $L/pytest.log 2>&1); echo "pytest rc=$? $((SECONDS-t0))s"; tail -n 3 $L/pytest.log; pack
  t0=$SECONDS; for mode in "" --compile; do PYTHONPATH=$SITE timeout 90 python3 python/examples/greedy_sampler.py --steps 50 $mode >> $L/greedy.log 2>&1; echo "greedy $mode rc=$?"; done; echo "$((SECONDS-t0))s"; tail -n 4 $L/greedy.log; pack
  t0=$SECONDS; (cd /tmp && PYTHONPATH=$SITE PYTHONUNBUFFERED=1 timeout $((420-SECONDS)) python3 $OLDPWD/python/bench/bench_torch.py --compile --csv $L/py_bench.csv > $L/py_bench.log 2>&1); echo "py bench rc=$? $((SECONDS-t0))s"; pack
  t0=$SECONDS; timeout $((590-SECONDS)) $BIN/gpu -q > $L/gpu_tests.log 2>&1; echo "gpu tests rc=$? $((SECONDS-t0))s"; tail -n 3 $L/gpu_tests.log; pack ;;
esac
