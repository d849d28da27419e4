#!/usr/bin/env bash
# call 64: the tip's kernels (rows_warp without the prefetch) against f7a7b29's PTX: every GPU
# test, the 16-bit arg shapes two rounds each; then pytest with a wheel of the tip.
set -uo pipefail
cd "$(dirname "$0")/.."
SHAPES=bf16:argmax:segments:100000x300,bf16:argmax:rows:32768x4096,f16:argmin:rows:8192x16384,bf16:argmax:rows:4096x32768,bf16:argmax:rows:64x128256,bf16:argmax:rows:8x128256,bf16:argmax:rows:16x4194304,bf16:argmax:whole:2^24,bf16:argmax:whole:2^28,f32:argmax:rows:32768x4096 \
CAPPED= TESTS=all scripts/against_ptx.sh "$OUT"
SITE=$(mktemp -d)
python3 -m pip install -q --no-index --no-deps --target "$SITE" .device/wheels/reduce_rs-*.whl || exit 1
export PYTHONPATH="$SITE" PYTHONUNBUFFERED=1
echo "== pytest python/tests"
(cd /tmp && timeout 200 python3 -m pytest -q -p no:cacheprovider "$OLDPWD/python/tests" 2>&1) > "$OUT/pytest.log"; tail -3 "$OUT/pytest.log"
echo "== greedy_sampler"
timeout 60 python3 python/examples/greedy_sampler.py --steps 50 > "$OUT/greedy.log" 2>&1; tail -4 "$OUT/greedy.log"
