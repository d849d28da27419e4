#!/usr/bin/env bash
# call 19 (asked for an H200): the shape table and the other shapes with PyTorch, CUB and the
# CUDA twin, sources of 6d6abeb.
set -uo pipefail
. scripts/unpack_bins.sh
W=/tmp/c19; rm -rf $W; mkdir -p $W
pack() { tar -C /tmp -cJf $OUT/c19.tar.xz c19; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $W/gpu.txt
timeout 300 $BIN/reduce-rs bench --shapes table --out /tmp/o > $W/table.log 2>&1; echo "table rc=$?"
pack
timeout 270 $BIN/reduce-rs bench --shapes others --out /tmp/o2 > $W/others.log 2>&1; echo "others rc=$?"
pack
for f in table others; do echo "== $f"; grep -E '^\S+ \S+ \S+ \S+ +reduce-rs .*\*' $W/$f.log | grep -v reproducible | awk '{print $1,$2,$3,$4,$6,$7,$8}'; done
