#!/usr/bin/env bash
# The Python package on a GPU machine that has PyTorch (and CuPy) but no Rust: install the
# abi3 wheel built elsewhere, run the pytest suite (NumPy arrays on GPU 0, PyTorch tensors
# against PyTorch), the greedy-sampler example and the benchmark against PyTorch.
#
#   (cd python && maturin build --release -o ../.device/wheels)     # where Rust is
#   scripts/python_gpu.sh [WHEEL_DIR] [OUT_DIR]                      # on the GPU machine
#
# Logs and the benchmark's CSV go to OUT_DIR (default bench-out/python).
set -uo pipefail
cd "$(dirname "$0")/.."
WHEELS=${1:-.device/wheels}
OUT=${2:-bench-out/python}
mkdir -p "$OUT"
SITE=$(mktemp -d)
python3 -m pip install -q --no-index --no-deps --target "$SITE" "$WHEELS"/reduce_rs-*.whl || exit 1
export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
status=0
echo "== pytest python/tests"
(cd /tmp && python3 -m pytest -q -p no:cacheprovider "$OLDPWD/python/tests" 2>&1) | tee "$OUT/pytest.log" | tail -25
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
echo "== python/examples/greedy_sampler.py"
python3 python/examples/greedy_sampler.py --steps 50 2>&1 | tee "$OUT/greedy.log" || status=1
python3 python/examples/greedy_sampler.py --steps 50 --compile 2>&1 | tee -a "$OUT/greedy.log" || status=1
echo "== python/bench/overhead.py"
python3 python/bench/overhead.py --calls 5000 2>&1 | tee "$OUT/overhead.log" || status=1
echo "== python/bench/bench_torch.py ${BENCH_ARGS:-}"
python3 python/bench/bench_torch.py --csv "$OUT/bench.csv" ${BENCH_ARGS:-} 2>&1 | tee "$OUT/bench.log" || status=1
exit $status
