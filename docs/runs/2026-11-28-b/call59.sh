#!/usr/bin/env bash
# call 59 (H100): the next group's loads issued before this group is folded
# (--cfg reduce_exp_prefetch, the "other" PTX) against the shipped loop; then the vocabulary
# rows by blocks per row with each PTX (its registers change the planner's wave).
set -uo pipefail
SHAPES=bf16:argmax:rows:64x128256,bf16:argmax:rows:8x128256,bf16:argmax:rows:1x128256,f32:argmax:rows:64x100000,bf16:argmax:rows:16x4194304,bf16:argmax:whole:2^28,f32:sum:whole:2^22,f32:sum:whole:2^18,f32:argmax:segments:100000x300,f32:sum:segments:100000x300,f32:sum:rows:65536x512,bf16:argmax:rows:32768x4096,f32:max:rows:32768x4096,f32:sum:rows:16x4194304 \
CAPPED= TESTS=none scripts/against_ptx.sh $OUT
. scripts/unpack_bins.sh
echo "== blocks per row: prefetch, then shipped"
for ptx in /tmp/other-ptx ""; do
  timeout 100 $BIN/reduce-rs bench --no-cub --no-torch --shapes bf16:argmax:rows:64x128256,f32:argmax:rows:64x100000,bf16:argmax:rows:8x128256 --splits 1,2,3,4,8,16 ${ptx:+--ptx-dir $ptx} --out /tmp/sp > $OUT/splits${ptx:+_prefetch}.log 2>&1
  grep -E "rows_split" $OUT/splits${ptx:+_prefetch}.log | awk '{print $1,$2,$3,$4,$7,$8}'
done
