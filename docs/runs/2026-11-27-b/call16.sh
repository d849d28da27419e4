#!/usr/bin/env bash
# call 16 (H100): f32 max, min, argmax and argmin find a group's best key by `max.f32`/`min.f32`
# over its lanes (Element::largest_key) instead of a key per lane: the previous PTX ("old",
# b2ff299) against this one in one binary, two rounds; the same shapes with PyTorch and CUB;
# then the narrow counts the rule reads flat unmeasured (10, 14, 20, 28 f32; 9-11 f64).
set -uo pipefail
. scripts/unpack_bins.sh
W=/tmp/c16; rm -rf $W; mkdir -p $W
pack() { tar -C /tmp -cJf $OUT/c16.tar.xz c16; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $W/gpu.txt
d=/tmp/ptx-old; mkdir -p $d; cp reduce/kernels/kernels_gpu.source-hash $d/; xz -dc .device/exp/old.ptx.xz > $d/kernels_gpu.sm_90.ptx
# Warm the driver's JIT cache for both PTX at once (CPU-bound).
timeout 200 $BIN/reduce-rs bench --no-cub --no-torch --repeat 1 --warmup 0 --shapes f32:max:rows:64x512 --ptx-dir $d --out /tmp/w1 > $W/warm_old.log 2>&1 &
timeout 200 $BIN/reduce-rs bench --no-cub --no-torch --repeat 1 --warmup 0 --shapes f32:max:rows:64x512 --out /tmp/w2 > $W/warm_new.log 2>&1 &
wait
S=f32:max:rows:32768x4096,f32:argmax:rows:32768x2048,f32:argmax:whole:2^28,f32:max:whole:2^28,f32:min:rows:65536x512,f32:argmax:rows:1x128256,f32:argmax:rows:64x128256,f32:argmin:segments:100000x300,f32:argmax:whole:2^22,f32:max:columns:1048576x4
for round in 1 2; do
  timeout 120 $BIN/reduce-rs bench --no-cub --no-torch --shapes "$S" --ptx-dir $d --out /tmp/o > $W/old_r$round.log 2>&1
  timeout 120 $BIN/reduce-rs bench --no-cub --no-torch --shapes "$S" --out /tmp/o > $W/new_r$round.log 2>&1
  pack
done
timeout 150 $BIN/reduce-rs bench --shapes "$S" --out /tmp/o > $W/peers.log 2>&1
pack
N=f32:sum:columns:1048576x10,f32:sum:columns:1048576x14,f32:sum:columns:1048576x20,f32:sum:columns:1048576x28,f32:sum:columns:262144x10,f32:sum:columns:262144x14,f32:sum:columns:262144x20,f32:sum:columns:262144x28,f64:sum:columns:1048576x9,f64:sum:columns:1048576x10,f64:sum:columns:1048576x11,f64:sum:columns:262144x9,f64:sum:columns:262144x11,f32:argmax:columns:1048576x10
timeout 150 $BIN/reduce-rs bench --no-cub --shapes "$N" --out /tmp/o > $W/narrow.log 2>&1
pack
for f in $W/old_r2.log $W/new_r2.log $W/peers.log $W/narrow.log; do echo "== $(basename $f)"; grep -vE '^\s*$' $f | tail -40; done
