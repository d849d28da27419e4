#!/usr/bin/env bash
# call 58 (H100): eight vectors in flight per thread (--cfg reduce_exp_loads8, the "other" PTX)
# against the shipped four, on the shapes where a thread reads few groups (vocabulary argmax,
# v8's small sums) and some where it reads many; then the vocabulary rows by blocks per row
# with each PTX.
set -uo pipefail
SHAPES=bf16:argmax:rows:64x128256,bf16:argmax:rows:8x128256,bf16:argmax:rows:1x128256,f32:argmax:rows:64x100000,bf16:argmax:rows:16x4194304,bf16:argmax:whole:2^28,f32:sum:whole:2^22,f32:sum:whole:2^18,f32:sum:whole:2^28,f32:argmax:segments:100000x300,f32:sum:segments:100000x300,f32:sum:rows:65536x512,bf16:argmax:rows:32768x4096,f32:max:rows:32768x4096 \
CAPPED= TESTS=none scripts/against_ptx.sh $OUT
. scripts/unpack_bins.sh
echo "== blocks per row: loads8, then shipped"
for ptx in /tmp/other-ptx ""; do
  timeout 100 $BIN/reduce-rs bench --no-cub --no-torch --shapes bf16:argmax:rows:64x128256,f32:argmax:rows:64x100000 --splits 1,2,3,4,6,8 ${ptx:+--ptx-dir $ptx} --out /tmp/sp > $OUT/splits${ptx:+_loads8}.log 2>&1
  grep -E "rows_split" $OUT/splits${ptx:+_loads8}.log | awk '{print $1,$2,$3,$4,$7,$8}'
done
