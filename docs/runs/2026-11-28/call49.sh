#!/usr/bin/env bash
# call 49: on an H200 only: bench --shapes table with peers, then v8 at 2^28 and 2^30 beside CUB.
set -uo pipefail
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
case "$name" in *H200*) ;; *) echo "not an H200: $name"; exit 0 ;; esac
. scripts/unpack_bins.sh
W=/tmp/c49; rm -rf $W; mkdir -p $W
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $W/gpu.txt
timeout 430 $BIN/reduce-rs bench --shapes table --peers-dir bench --out /tmp/o > $W/table.log 2>&1; echo "table rc=$?"
tar -C /tmp -cJf $OUT/c49.tar.xz c49
timeout 100 $BIN/reduce-rs bench --dtypes f32 --versions v8 --sizes 2^28,2^30 --peers-dir bench --out /tmp/o2 > $W/v8.log 2>&1; echo "v8 rc=$?"
tar -C /tmp -cJf $OUT/c49.tar.xz c49
grep -E '^\S+ \S+ \S+ \S+ +(reduce-rs .*\*|read-only|torch|cub|cuda) ' $W/table.log | sed 's/(fastest peer)//; s/ \* / /' | awk '{print $1,$2,$3,$4,$5,$6,$7}'
tail -20 $W/v8.log
