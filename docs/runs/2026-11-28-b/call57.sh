#!/usr/bin/env bash
# call 57 (H100): where the instructions go — Nsight Compute with per-SASS-instruction counts
# and stall samples (SourceCounters) for the bf16 argmax of 64 vocabulary rows (rows_split),
# the f32 argmax of 100000 segments of ~300 (rows_warp) and the 4096² f32 column sums.
set -uo pipefail
. scripts/unpack_bins.sh
W=/tmp/c57; rm -rf $W; mkdir -p $W
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $W/gpu.txt
NCU="ncu --clock-control none --section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats --section SchedulerStats --section InstructionStats --section SourceCounters -c 1"
prof() { # LABEL KERNEL CASE
  echo "== $1"
  timeout 150 $NCU -k "regex:^$2\$" -o $W/$1 -f $BIN/reduce-rs bench --shapes "$3" --repeat 1 --warmup 0 --no-cub --no-torch --out /tmp/pb > $W/$1.log 2>&1
  ncu -i $W/$1.ncu-rep --page details > $W/$1_details.txt 2>&1
  ncu -i $W/$1.ncu-rep --page source --csv --print-source sass > $W/$1_sass.csv 2>&1
  grep -E "Duration|Registers Per|Grid Size|Block Size|Achieved Occupancy|Executed Ipc A|Issue Slots Busy|DRAM Throughput" $W/$1_details.txt | head -10
  wc -l $W/$1_sass.csv; head -c 600 $W/$1_sass.csv; echo
  tar -C /tmp -cJf $OUT/c57.tar.xz --exclude='*.ncu-rep' c57
}
prof argmax64 rows_split_bf16_argmax bf16:argmax:rows:64x128256
prof segargmax rows_warp_f32_argmax f32:argmax:segments:100000x300
prof cols4096 columns_f32_sum f32:sum:columns:4096x4096
prof argmax1 rows_split_bf16_argmax bf16:argmax:rows:1x128256
ls -la $W
