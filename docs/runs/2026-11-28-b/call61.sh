#!/usr/bin/env bash
# call 61: on an H200 only: bench --shapes table with peers (PyTorch, CUB, CUDA twins), its log
# written straight into OUT so that a run cut short still brings back what it finished.
set -uo pipefail
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/gpu.txt
case "$name" in *H200*) ;; *) echo "not an H200: $name"; exit 0 ;; esac
. scripts/unpack_bins.sh
timeout 370 $BIN/reduce-rs bench --shapes table --peers-dir bench --out /tmp/o > $OUT/table.log 2>&1; echo "table rc=$?"
grep -E '^\S+ \S+ \S+ \S+ +(reduce-rs .*\*|read-only|torch|cub|cuda) ' $OUT/table.log | sed 's/(fastest peer)//; s/ \* / /' | awk '{print $1,$2,$3,$4,$5,$6,$7}'
