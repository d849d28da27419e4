#!/usr/bin/env bash
# call 48: bench --shapes table (PyTorch, CUB and the CUDA twins beside) with the final
# sources, on whichever GPU the call got.
set -uo pipefail
. scripts/unpack_bins.sh
W=/tmp/c48; rm -rf $W; mkdir -p $W
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $W/gpu.txt
timeout 480 $BIN/reduce-rs bench --shapes table --peers-dir bench --out /tmp/o > $W/table.log 2>&1; echo "table rc=$?"
tar -C /tmp -cJf $OUT/c48.tar.xz c48
grep -E '^\S+ \S+ \S+ \S+ +(reduce-rs .*\*|read-only|torch|cub|cuda) ' $W/table.log | sed 's/(fastest peer)//; s/ \* / /' | awk '{print $1,$2,$3,$4,$5,$6,$7}'
