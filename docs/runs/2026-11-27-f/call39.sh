#!/usr/bin/env bash
# call 39: Nsight Compute on the vocabulary argmax (64 × 128256 bf16) with head's kernels:
# rows_split at 1, 2, 4 and 6 blocks per row, and the read-only kernel.
set -uo pipefail
. scripts/unpack_bins.sh
W=/tmp/c39; rm -rf $W; mkdir -p $W
pack() { tar -C /tmp -cJf $OUT/c39.tar.xz c39; }
D=/tmp/ptx-head; mkdir -p $D; for f in .device/head/*.xz; do xz -dc $f > $D/$(basename $f .xz); done; cp .device/head/kernels_gpu.source-hash $D/
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $W/gpu.txt
C=bf16:argmax:rows:64x128256
timeout 60 $BIN/reduce-rs bench --no-cub --no-torch --shapes $C --ptx-dir $D --splits 1,2,3,4,6 --out /tmp/o > $W/splits_head.log 2>&1; echo "splits rc=$?"
grep -E 'reduce-rs' $W/splits_head.log | sed 's/ \* / split=planned /' | awk '{print $1,$2,$3,$4,$5,$7,$8}'
for s in 1 2 4 6; do
  timeout 120 ncu --clock-control none --set full -k regex:rows_split_bf16_argmax -c 3 $BIN/reduce-rs bench --no-cub --no-torch --shapes $C --ptx-dir $D --splits $s --repeat 1 --warmup 0 --out /tmp/o > $W/ncu_split$s.txt 2>&1
  echo "== split $s"; grep -E "^ +(Duration|Memory Throughput|DRAM Throughput|Achieved Occupancy|Registers Per|Grid Size|Block Size|Waves Per SM|Issue Slots Busy|No Eligible|Active Warps Per Scheduler|Eligible Warps|Warp Cycles Per Issued|Executed Ipc A)" $W/ncu_split$s.txt | head -45
  pack
done
timeout 120 ncu --clock-control none --set full -k regex:read_probe_bf16 -c 1 $BIN/reduce-rs bench --no-cub --no-torch --shapes $C --ptx-dir $D --repeat 1 --warmup 0 --out /tmp/o > $W/ncu_read.txt 2>&1
echo "== read-only"; grep -E "^ +(Duration|DRAM Throughput|Achieved Occupancy|Grid Size|Block Size|Waves Per SM)" $W/ncu_read.txt | head -8
pack
