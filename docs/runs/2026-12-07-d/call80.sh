#!/usr/bin/env bash
# call 80: the sources of 52120fa (landed). An H200: `bench --shapes table`, then `others`, with
# PyTorch, CUB and the CUDA twins beside (README's H200 tables), then the Python bench. An H100:
# the GPU tests of the tip (the spread rule at a third), then `bench --shapes others` (README's
# H100 table of other shapes is from 2026-11-27).
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/unpack_bins.sh
L=/tmp/call80; rm -rf $L; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$L/gpu.txt"
pack() { tar -C /tmp -cJf "$OUT/call80.tar.xz" call80; }
summ() { grep -E '^\S+ \S+ \S+ \S+ +reduce-rs .*\*' $L/$1.log | grep -v reproducible | awk '{print $1,$2,$3,$4,$6,$7,$8}'; }
pybench() {
  SITE=/tmp/site; rm -rf $SITE; python3 -m pip install -q --no-index --no-deps --target $SITE .device/wheels/reduce_rs-*.whl
  t0=$SECONDS; (cd /tmp && PYTHONPATH=$SITE PYTHONUNBUFFERED=1 timeout $(($1-SECONDS)) python3 $OLDPWD/python/bench/bench_torch.py --compile --csv $L/py_bench.csv > $L/py_bench.log 2>&1); echo "py bench rc=$? $((SECONDS-t0))s"; pack
}
case "$(cat $L/gpu.txt)" in
*H200*)
  t0=$SECONDS; timeout 330 $BIN/reduce-rs bench --shapes table --peers-dir bench --out $L/table > $L/table.log 2>&1; echo "table rc=$? $((SECONDS-t0))s"; pack
  summ table
  t0=$SECONDS; timeout $((585-SECONDS)) $BIN/reduce-rs bench --shapes others --peers-dir bench --out $L/others > $L/others.log 2>&1; echo "others rc=$? $((SECONDS-t0))s"; pack
  summ others
  [ $SECONDS -lt 440 ] && pybench 590 ;;
*)
  t0=$SECONDS; timeout 250 $BIN/gpu -q > $L/gpu_tests.log 2>&1; echo "gpu tests rc=$? $((SECONDS-t0))s"; tail -n 3 $L/gpu_tests.log; pack
  t0=$SECONDS; timeout $((585-SECONDS)) $BIN/reduce-rs bench --shapes others --peers-dir bench --out $L/others > $L/others.log 2>&1; echo "others rc=$? $((SECONDS-t0))s"; pack
  summ others ;;
esac
