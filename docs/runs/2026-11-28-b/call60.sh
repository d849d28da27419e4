#!/usr/bin/env bash
# call 60 (H100): prefetch (other PTX) against the shipped loop where call 59 left questions:
# bf16 argmax of 16 rows of 2^22 at fixed blocks per row, and the 16-bit arg rows that a warp
# or a block per row gets (8-64 KiB rows, 512 KiB rows).
set -uo pipefail
SHAPES=bf16:argmax:rows:16x4194304,bf16:argmax:rows:4096x32768,bf16:argmax:rows:16384x8192,bf16:argmax:rows:128x262144,f16:argmin:rows:8192x16384,bf16:argmax:rows:64x128256 \
CAPPED= TESTS=none scripts/against_ptx.sh $OUT
. scripts/unpack_bins.sh
echo "== blocks per row: prefetch, then shipped"
for ptx in /tmp/other-ptx ""; do
  timeout 100 $BIN/reduce-rs bench --no-cub --no-torch --shapes bf16:argmax:rows:16x4194304 --splits 2,4,8,16,32 ${ptx:+--ptx-dir $ptx} --out /tmp/sp > $OUT/splits${ptx:+_prefetch}.log 2>&1
  grep -E "rows_split" $OUT/splits${ptx:+_prefetch}.log | awk '{print $1,$2,$3,$4,$7,$8}'
done
