#!/usr/bin/env bash
# The reproducible kernels of this checkout against another PTX (main's, say) in one binary, on
# a GPU machine, from binaries built elsewhere (no toolchain needed here):
#
#   cargo build --release -p host --bins --examples
#   cargo test --release -p host --test gpu --no-run            # prints the test binary's path
#   mkdir -p .device/bin .device/other
#   for b in reduce-rs examples/repro_bits; do xz -c target/release/$b > .device/bin/$(basename $b).xz; done
#   xz -c target/release/deps/gpu-<hash> > .device/bin/gpu.xz
#   git show main:reduce/kernels/kernels_gpu.ptx | xz > .device/other/kernels_gpu.ptx.xz
#
# then, from the repository root on the GPU machine: scripts/reproducible_against.sh [OUT]
# Writes to OUT (default reproducible-out): the reproducible GPU tests and repro_bits of this
# checkout's kernels; the bench's reproducible rows, the other PTX's and this one's, two rounds
# each, in one binary (`--ptx-dir`); and the whole-array sums with fewer blocks (`--splits`: at
# most that many), to see where fewer merge levels pay.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-${OUT:-reproducible-out}}
mkdir -p "$OUT"
. scripts/unpack_bins.sh
R=$BIN/reduce-rs
other=/tmp/other-ptx
mkdir -p "$other" && cp reduce/kernels/kernels_gpu.source-hash "$other/"
xz -dc .device/other/kernels_gpu.ptx.xz > "$other/kernels_gpu.sm_90.ptx"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$OUT/gpu.txt"

echo "== the reproducible GPU tests"
timeout 300 "$BIN/gpu" -q repro 2>&1 | tail -3 | tee "$OUT/gpu_repro.log"
echo "== repro_bits"
timeout 120 "$BIN/repro_bits" > "$OUT/repro_bits.txt" 2>&1; tail -2 "$OUT/repro_bits.txt"

whole=f32:sum:whole:2^14,f32:sum:whole:2^16,f32:sum:whole:2^18,f32:sum:whole:2^20,f32:sum:whole:2^22,f32:sum:whole:2^24,f32:sum:whole:2^26,f32:sum:whole:2^28,f64:sum:whole:2^24,bf16:sum:whole:2^24
shapes=f32:sum:rows:65536x512,f32:sum:rows:8192x8192,f32:sum:rows:16x4194304,f32:sum:segments:100000x300,f32:sum:columns:4096x4096,f32:sum:columns:1048576x8
for round in 1 2; do
  "$R" bench --no-cub --no-torch --shapes "$whole,$shapes" --ptx-dir "$other" --out /tmp/b_other > "$OUT/other_r$round.log" 2>&1
  "$R" bench --no-cub --no-torch --shapes "$whole,$shapes" --out /tmp/b_this > "$OUT/this_r$round.log" 2>&1
done
grep -hE "reproducible|reduce_v8" "$OUT/this_r2.log" | head -40
echo "== fewer blocks"
"$R" bench --no-cub --no-torch --shapes "$whole" --splits 1,2,4,8,16,32,64,128,256 --out /tmp/b_caps > "$OUT/caps.log" 2>&1
grep -E "reproducible|reduce_v8|read-only" "$OUT/caps.log" | head -150
