#!/usr/bin/env bash
# call 76 (the lanes build is `call76_lanes.patch` here): rows_warp with more lanes a row while the rows leave half the warps idle
# against the tip (3586707), same shapes, two rounds each; the tip's
# --splits on warp-planned shapes; the GPU tests of the lanes build.
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/unpack_bins.sh
L=/tmp/call76; rm -rf $L; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$L/gpu.txt"
pack() { tar -C /tmp -cJf "$OUT/call76.tar.xz" call76; }
xz -dc .device/lanes/reduce-rs.xz > /tmp/lanes-rs; xz -dc .device/lanes/gpu.xz > /tmp/lanes-gpu; chmod +x /tmp/lanes-rs /tmp/lanes-gpu
S=bf16:argmax:rows:1024x8192,bf16:argmax:rows:2048x8192,bf16:argmax:rows:4096x8192,bf16:argmax:rows:8192x8192,bf16:argmax:rows:16384x8192,bf16:argmax:rows:2048x4096,bf16:argmax:rows:8192x4096,bf16:argmax:rows:2048x12288,bf16:argmax:rows:4096x12288,bf16:argmax:rows:1024x16384,bf16:argmax:rows:2048x16384,bf16:argmax:rows:4096x16384,f16:argmin:rows:2048x8192,f32:argmax:rows:1024x2048,f32:argmax:rows:2000x1000,f32:sum:rows:1000x512,f32:max:rows:1000x2048,f32:sum:rows:300x128,bf16:argmax:segments:20000x20000,bf16:argmax:segments:2000x8000
for r in 1 2; do for b in tip lanes; do
  bin=$BIN/reduce-rs; [ $b = lanes ] && bin=/tmp/lanes-rs
  t0=$SECONDS; timeout 70 $bin bench --no-cub --no-torch --shapes "$S" --out /tmp/o > $L/ab_${b}_r$r.log 2>&1; echo "ab $b r$r rc=$? $((SECONDS-t0))s"
done; done; pack
SP=bf16:argmax:rows:2048x8192,bf16:argmax:rows:4096x8192,bf16:argmax:rows:2048x4096,bf16:argmax:rows:1024x16384,f32:argmax:rows:1024x2048,f32:sum:rows:1000x512,f32:max:rows:1000x2048
t0=$SECONDS; timeout 90 $BIN/reduce-rs bench --no-cub --no-torch --shapes "$SP" --splits 4,8,16,32 --out /tmp/o > $L/splits.log 2>&1; echo "splits rc=$? $((SECONDS-t0))s"; pack
t0=$SECONDS; timeout $((430-SECONDS)) /tmp/lanes-gpu -q > $L/gpu_tests.log 2>&1; echo "gpu tests rc=$? $((SECONDS-t0))s"; tail -3 $L/gpu_tests.log; pack
