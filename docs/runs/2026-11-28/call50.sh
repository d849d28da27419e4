#!/usr/bin/env bash
# call 50 (H100): e7d44fa (first_lane_holding the one search) against 0def467's PTX: every GPU
# test, the arg kernels whose PTX changed; then v8 on small sums by block; then f32 argmax and
# max of 16 KiB rows beside CUB.
set -uo pipefail
SHAPES=f32:argmax:rows:64x100000,f32:argmax:rows:32768x4096,f32:argmin:rows:65536x512,f64:argmax:rows:8192x1024,i32:argmin:rows:65536x512,u64:argmax:rows:4096x4096,f32:argmax:whole:2^26,bf16:argmax:rows:64x128256,bf16:argmax:rows:32768x4096,bf16:argmax:whole:2^26,f32:argmax:segments:100000x300 \
CAPPED= TESTS=all scripts/against_ptx.sh $OUT
. scripts/unpack_bins.sh
for b in 128 256 512 1024; do
  echo "== v8 block $b"
  timeout 60 $BIN/reduce-rs bench --dtypes f32 --versions v8 --sizes 2^10,2^12,2^14,2^16 --block $b --no-cub --no-torch --out /tmp/v8b$b 2>&1 | grep -E "^ *(f32|v8)|2\^1" | tail -8
done 2>&1 | tee $OUT/v8_blocks.log
echo "== 16 KiB rows beside CUB"
timeout 200 $BIN/reduce-rs bench --shapes f32:argmax:rows:32768x4096,f32:max:rows:32768x4096,f32:argmax:rows:16384x4096 --peers-dir bench --no-torch --out /tmp/rows16k > $OUT/rows16k.log 2>&1
grep -E "reduce-rs|cub|read-only" $OUT/rows16k.log | tail -30
