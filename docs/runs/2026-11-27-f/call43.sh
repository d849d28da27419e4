#!/usr/bin/env bash
# call 43: the 16-bit arg operators' long split rows at a third of one wave (the planner), planned
# launches only, every result checked; no peers.
set -uo pipefail
. scripts/unpack_bins.sh
W=/tmp/c43; rm -rf $W; mkdir -p $W
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $W/gpu.txt
S=bf16:argmax:rows:64x1048576,bf16:argmin:rows:16x4194304,bf16:argmax:rows:16x4194304,f16:argmax:rows:128x262144,bf16:argmax:rows:128x262144,bf16:argmax:rows:64x128256,bf16:argmax:rows:8x128256,bf16:argmax:rows:32x200000,f32:argmax:rows:16x4194304
timeout 100 $BIN/reduce-rs bench --no-cub --no-torch --shapes "$S" --out /tmp/o > $W/planned.log 2>&1; echo "planned rc=$?"
tar -C /tmp -cJf $OUT/c43.tar.xz c43
grep -c FAIL $W/planned.log
grep -E '^\S+ \S+ \S+ \S+ +(reduce-rs .*\*|read-only) ' $W/planned.log | sed 's/ \* / /' | awk '{print $1,$2,$3,$4,$5,$6,$7,$NF}'
