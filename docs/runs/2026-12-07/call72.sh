#!/usr/bin/env bash
# call 72: calls 68, 70 and 71 in one, by priority, each stage skipped when too little of the
# command's 10 minutes is left: v8 at the moved sizes (f7 vs exp), the row plans (tip vs exp),
# rows_warp by best key (tip vs exp), every GPU test of exp, pytest, the 16-bit warp/block line.
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/unpack_bins.sh
. .device/abc.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$OUT/gpu.txt"
left() { echo $((585 - SECONDS)); }
V8=bf16:argmax:whole:2^12,bf16:argmax:whole:2^13,bf16:argmax:whole:2^14,bf16:argmax:whole:2^15,bf16:argmax:whole:2^16,bf16:argmax:whole:2^20,bf16:argmax:whole:2^22,bf16:argmax:whole:2^23,bf16:argmax:whole:2^24,f16:argmin:whole:2^22
abc "$V8" v8 f7 exp cap; echo "left $(left)"
ROWS=bf16:argmax:rows:8x128256,bf16:argmax:rows:16x128256,bf16:argmax:rows:32x128256,bf16:argmax:rows:64x128256,bf16:argmax:rows:16x100000,bf16:argmax:rows:2x1048576,bf16:argmax:rows:150x65536,bf16:argmax:rows:200x65536,bf16:argmax:rows:1000x8192,bf16:argmax:rows:512x16384,bf16:argmax:rows:16x4194304,bf16:argmax:rows:32x200000
abc "$ROWS" rows tip exp; echo "left $(left)"
W=f32:argmax:segments:100000x300,f32:argmax:rows:65536x100,f32:argmax:rows:65536x512,f32:argmax:rows:32768x1024,f32:argmax:rows:16384x2048,f32:argmin:rows:8192x3000,f64:argmin:rows:16384x1024,i32:argmax:rows:65536x256,u64:argmax:segments:100000x300,i64:argmin:rows:32768x512
abc "$W" warp tip exp; echo "left $(left)"
if [ "$(left)" -gt 230 ]; then
  t0=$SECONDS; timeout $(( $(left) - 30 )) "$BIN/gpu" -q > "$OUT/gpu_tests.log" 2>&1; echo "gpu tests rc=$? $((SECONDS-t0))s"; tail -2 "$OUT/gpu_tests.log"
fi
if [ "$(left)" -gt 80 ]; then
  SITE=$(mktemp -d)
  python3 -m pip install -q --no-index --no-deps --target "$SITE" .device/wheels/reduce_rs-*.whl
  (cd /tmp && PYTHONPATH="$SITE" timeout $(( $(left) - 10 )) python3 -m pytest -q -p no:cacheprovider "$OLDPWD/python/tests" 2>&1) > "$OUT/pytest.log"; tail -2 "$OUT/pytest.log"
fi
timeout 100 $BIN/reduce-rs bench --no-cub --no-torch --shapes bf16:argmax:rows:16x128256,bf16:argmax:rows:150x65536 --splits 2,4,8,16,32 --out /tmp/o > "$OUT/caps_exp.log" 2>&1; echo "caps rc=$? left $(left)"
