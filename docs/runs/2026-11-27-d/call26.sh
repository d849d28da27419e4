#!/usr/bin/env bash
# call 26 (asked for an H200): on an H200 the shape tables (`bench --shapes table`, `others`)
# with PyTorch, CUB and the CUDA twin, the kernels of 162ec59. On an H100: the splits of the
# shapes still behind (square columns against the CUDA twin, the column argmax of 2-3 columns
# against PyTorch), then Nsight Compute on those and on 128 rows of 64 KiB against CUB.
set -uo pipefail
. scripts/unpack_bins.sh
W=/tmp/c26; rm -rf $W; mkdir -p $W/ncu
pack() { tar -C /tmp -cJf $OUT/c26.tar.xz c26; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $W/gpu.txt
if grep -q H200 $W/gpu.txt; then
  timeout 300 $BIN/reduce-rs bench --shapes table --out /tmp/o > $W/table.log 2>&1; echo "table rc=$?"
  pack
  timeout 270 $BIN/reduce-rs bench --shapes others --out /tmp/o2 > $W/others.log 2>&1; echo "others rc=$?"
  pack
  for f in table others; do echo "== $f"; grep -E '^\S+ \S+ \S+ \S+ +reduce-rs .*\*' $W/$f.log | grep -v reproducible | awk '{print $1,$2,$3,$4,$6,$7,$8}'; done
  exit 0
fi
S=f32:sum:columns:4096x4096,f32:sum:columns:2048x2048,f32:sum:columns:1024x16384,f32:sum:columns:16384x1024
timeout 150 $BIN/reduce-rs bench --no-torch --shapes "$S" --splits 8,16,24,32,48,64 --out /tmp/o > $W/square.log 2>&1; echo "square rc=$?"
pack
S=f32:argmax:columns:1048576x2,f32:argmax:columns:1048576x3,bf16:argmax:columns:1048576x2,f32:sum:rows:128x16384
timeout 150 $BIN/reduce-rs bench --shapes "$S" --splits 132,264,396,528,792,1056 --out /tmp/o2 > $W/narrow_arg.log 2>&1; echo "narrow_arg rc=$?"
pack
SECTIONS="--section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis --section SchedulerStats --section InstructionStats"
NCU="ncu --clock-control none $SECTIONS -c 1"
nvcc -O3 -arch=sm_90 -std=c++17 -o /tmp/reduce_shapes bench/cuda/reduce_shapes.cu || echo "nvcc failed"
profile() { local label=$1 who=$2 kernel=$3; shift 3; echo "== $label $who"; timeout 120 $NCU -k "regex:$kernel" "$@" > $W/ncu/${label}_${who}.txt 2>&1
  grep -E "^ +(Duration|DRAM Throughput|Achieved Occupancy|Registers Per|Block Size|Grid Size|Issued Warp Per|Executed Ipc A)" $W/ncu/${label}_${who}.txt | head -10; }
ours() { profile "$1" ours "$2" $BIN/reduce-rs bench --shapes "$3" --repeat 1 --warmup 0 --no-cub --no-torch --out /tmp/pb; }
profile argmax2 torch reduce_kernel python3 bench/torch/reduce_torch.py --repeat 1 --warmup 0 --case columns --op argmax --dtype f32 --shapes 1048576x2
ours argmax2 columns_narrow_f32_argmax f32:argmax:columns:1048576x2
profile rows128 cub Segmented /tmp/reduce_shapes --no-read --repeat 1 --warmup 0 --case rows --op sum --dtype f32 --shapes 128x16384
ours rows128 rows_block_f32_sum f32:sum:rows:128x16384
profile bf16cols torch reduce_kernel python3 bench/torch/reduce_torch.py --repeat 1 --warmup 0 --case columns --op sum --dtype bf16 --shapes 8192x8192
ours bf16cols columns_bf16_sum bf16:sum:columns:8192x8192
pack
echo "== square"; grep -E '^f32' $W/square.log | grep -v reproducible | cut -c1-100 | head -60
echo "== narrow_arg"; grep -E '^(f32|bf16)' $W/narrow_arg.log | grep -v reproducible | cut -c1-100 | head -60
