#!/usr/bin/env bash
# call 42: the arg operators' long split rows by blocks per row (ARG_SPLIT_TILE_VECTORS), no peers.
set -uo pipefail
. scripts/unpack_bins.sh
W=/tmp/c42; rm -rf $W; mkdir -p $W
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $W/gpu.txt
S=bf16:argmax:rows:64x1048576,f32:argmax:rows:64x1048576,bf16:argmax:rows:16x4194304,f32:argmax:rows:16x4194304,bf16:argmax:rows:128x262144,f32:argmax:rows:32x1048576
timeout 150 $BIN/reduce-rs bench --no-cub --no-torch --shapes "$S" --splits 1,2,4,8,16,32,64,128 --out /tmp/o > $W/tiles.log 2>&1; echo "tiles rc=$?"
tar -C /tmp -cJf $OUT/c42.tar.xz c42
grep -c FAIL $W/tiles.log
grep -E '^\S+ \S+ \S+ \S+ +(reduce-rs|read-only) ' $W/tiles.log | grep -v "rows_block\|rows_warp" | sed 's/ \* / split=planned /' | awk '{print $1,$2,$3,$4,$5,$7,$8}'
