#!/usr/bin/env bash
# call 30 (asked for an H200): on an H200 `bench --shapes table` with PyTorch, CUB and the CUDA
# twin, the kernels of 5f11a27; on an H100 nothing (its table is call 29's).
set -uo pipefail
W=/tmp/c30; rm -rf $W; mkdir -p $W
pack() { tar -C /tmp -cJf $OUT/c30.tar.xz c30; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $W/gpu.txt
grep -q H200 $W/gpu.txt || exit 0
. scripts/unpack_bins.sh
export NCCL_NVLS_ENABLE=0 CUDA_VISIBLE_DEVICES=0
timeout 250 $BIN/reduce-rs bench --shapes table --out /tmp/o > $W/table.log 2>&1; echo "table rc=$?"
pack
grep -E '^\S+ \S+ \S+ \S+ +(reduce-rs|torch|cub|cuda|read-only) ' $W/table.log | grep -v reproducible | sed 's/(fastest peer)//' | awk '{print $1,$2,$3,$4,$5,$6,$7,$8}'
