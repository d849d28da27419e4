#!/usr/bin/env bash
# Nsight Compute profiles of the shapes where a peer is close to or ahead of reduce-rs: our
# chosen kernel, the read-only kernel and the fastest peers' kernels (PyTorch, CUB, the CUDA
# twin) on the same input, one launch each. What they showed is in
# kernels-gpu/src/shapes/PROFILES.md.
#
#   scripts/profile_shapes.sh OUT        # on a GPU machine, with .device/bin as gpu_session.sh
#                                        # has it (reduce-rs.xz)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?output folder}
mkdir -p "$OUT/ncu"
. scripts/unpack_bins.sh
SECTIONS="--section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis --section SchedulerStats"
NCU="ncu --clock-control none $SECTIONS -c 1"
nvcc -O3 -arch=sm_90 -std=c++17 -o /tmp/reduce_shapes bench/cuda/reduce_shapes.cu || echo "nvcc failed: no CUB profiles"

# profile LABEL WHO KERNEL_REGEX COMMAND...
profile() {
  local label=$1 who=$2 kernel=$3
  shift 3
  echo "== $label: $who ($kernel)"
  timeout 120 $NCU -k "regex:$kernel" "$@" >"$OUT/ncu/${label}_${who}.txt" 2>&1
  grep -E "Duration|Memory Throughput|DRAM Throughput|Achieved Occupancy|Registers Per|Block Size|Grid Size|Waves Per SM" \
    "$OUT/ncu/${label}_${who}.txt" | head -12
}
ours() { # LABEL KERNEL CASE
  profile "$1" reduce-rs "$2" "$BIN/reduce-rs" bench --shapes "$3" --repeat 1 --warmup 0 --no-cub --no-torch --out /tmp/profile-bench
}
readonly_probe() { # LABEL DTYPE CASE
  profile "$1" read-only "read_probe_$2" "$BIN/reduce-rs" bench --shapes "$3" --repeat 1 --warmup 0 --no-cub --no-torch --out /tmp/profile-bench
}
torch() { # LABEL ARGS...
  local label=$1
  shift
  profile "$label" torch "reduce_kernel" python3 bench/torch/reduce_torch.py --repeat 1 --warmup 0 "$@"
}
cub() { # LABEL KERNEL ARGS...
  local label=$1 kernel=$2
  shift 2
  [ -x /tmp/reduce_shapes ] && profile "$label" cub "$kernel" /tmp/reduce_shapes --no-read --repeat 1 --warmup 0 "$@"
}

ours rows16x4M rows_split_f32_sum f32:sum:rows:16x4194304
readonly_probe rows16x4M f32 f32:sum:rows:16x4194304
torch rows16x4M --case rows --op sum --dtype f32 --shapes 16x4194304

ours max32768x4096 rows_block_f32_max f32:max:rows:32768x4096
cub max32768x4096 Segmented --case rows --op max --dtype f32 --shapes 32768x4096
torch max32768x4096 --case rows --op max --dtype f32 --shapes 32768x4096

ours columns2Mx8 columns_narrow_f32_sum f32:sum:columns:1048576x8
readonly_probe columns2Mx8 f32 f32:sum:columns:1048576x8
torch columns2Mx8 --case columns --op sum --dtype f32 --shapes 1048576x8

ours columns4096 columns_f32_sum f32:sum:columns:4096x4096
cub columns4096 column_sum_partials --case columns --op sum --dtype f32 --shapes 4096x4096

ours argmax64 rows_split_bf16_argmax bf16:argmax:rows:64x128256
readonly_probe argmax64 bf16 bf16:argmax:rows:64x128256
torch argmax64 --case rows --op argmax --dtype bf16 --shapes 64x128256
ours argmax1 rows_split_bf16_argmax bf16:argmax:rows:1x128256

ours whole2e28 reduce_v8_f32_sum f32:sum:whole:2^28
readonly_probe whole2e28 f32 f32:sum:whole:2^28
cub whole2e28 DeviceReduceKernel --case whole --op sum --dtype f32 --n 2^28
echo "== done"
