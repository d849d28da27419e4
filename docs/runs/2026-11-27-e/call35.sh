#!/usr/bin/env bash
# call 35: the band kernel's bands for arg operators, 16-bit types and the dealt-out rows: every
# shape at the planner's split and at 4 … 64 (--splits), the final sources, no peers.
set -uo pipefail
. scripts/unpack_bins.sh
W=/tmp/c35; rm -rf $W; mkdir -p $W
pack() { tar -C /tmp -cJf $OUT/c35.tar.xz c35; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $W/gpu.txt
S=f32:argmax:columns:2048x2048,f32:argmax:columns:4096x4096,f32:argmax:columns:8192x8192,f32:argmax:columns:16384x1024,f32:argmax:columns:4096x4094,f32:max:columns:4096x4096,f32:max:columns:8192x8190,bf16:sum:columns:4096x4096,bf16:sum:columns:8192x8192,bf16:sum:columns:16384x1024,bf16:sum:columns:8192x8190,bf16:max:columns:4096x4096,bf16:max:columns:8192x8192,bf16:argmax:columns:4096x4096,f32:sum:columns:8192x8192,f32:sum:columns:16384x1022
timeout 560 $BIN/reduce-rs bench --no-cub --no-torch --shapes "$S" --splits 4,8,12,16,24,32,48,64 --out /tmp/o > $W/splits.log 2>&1; echo "splits rc=$?"
pack
grep -E 'reduce-rs' $W/splits.log | grep -v reproducible | sed 's/ \* / split=planned /' | awk '{print $1,$2,$3,$4,$7,$8}'
