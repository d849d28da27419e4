#!/usr/bin/env bash
# call 21 (asked for an H200): the f32 arg operators with a thread's first group searched by its
# best key (`--cfg reduce_exp_arg_first`, loaded by --ptx-dir) against what ships, two rounds;
# narrow f32 columns of 20, 24 and 28 at 2^18..2^21 rows (flat and bands both printed); on an
# H200 also `bench --shapes table` with PyTorch, CUB and the CUDA twin.
set -uo pipefail
. scripts/unpack_bins.sh
W=/tmp/c21; rm -rf $W; mkdir -p $W
pack() { tar -C /tmp -cJf $OUT/c21.tar.xz c21; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $W/gpu.txt
d=/tmp/ptx-first; mkdir -p $d; cp reduce/kernels/kernels_gpu.source-hash $d/; xz -dc .device/exp/first.ptx.xz > $d/kernels_gpu.sm_90.ptx
timeout 200 $BIN/reduce-rs bench --no-cub --no-torch --repeat 1 --warmup 0 --shapes f32:max:rows:64x512 --ptx-dir $d --out /tmp/w1 > $W/warm_first.log 2>&1 &
timeout 200 $BIN/reduce-rs bench --no-cub --no-torch --repeat 1 --warmup 0 --shapes f32:max:rows:64x512 --out /tmp/w2 > $W/warm_ship.log 2>&1 &
wait
S=f32:argmax:rows:16384x4096,f32:argmax:rows:32768x2048,f32:argmax:rows:64x128256,f32:argmax:rows:8x128256,f32:argmax:rows:1x128256,f32:argmax:whole:2^22,f32:argmax:whole:2^28,f32:argmin:rows:65536x512,f32:argmin:segments:100000x300,f32:argmax:rows:4096x16384
for round in 1 2; do
  timeout 100 $BIN/reduce-rs bench --no-cub --no-torch --shapes "$S" --ptx-dir $d --out /tmp/o > $W/first_r$round.log 2>&1
  timeout 100 $BIN/reduce-rs bench --no-cub --no-torch --shapes "$S" --out /tmp/o > $W/ship_r$round.log 2>&1
  pack
done
N=""
for r in 262144 524288 1048576 2097152; do for c in 20 24 28; do N="$N,f32:sum:columns:${r}x$c"; done; done
timeout 150 $BIN/reduce-rs bench --no-cub --no-torch --shapes "${N#,}" --out /tmp/o > $W/narrow.log 2>&1
pack
for v in first ship; do echo "== $v"; grep -h 'reduce-rs.*\*' $W/${v}_r1.log $W/${v}_r2.log | awk '{print $1,$2,$3,$4,$8}' | sort | awk '{k=$1" "$2" "$3" "$4; a[k]=a[k]" "$5} END{for(k in a) print k, a[k]}' | sort; done
echo "== narrow"; grep -E 'columns(_narrow)?_f32_sum ' $W/narrow.log | awk '{print $4,$6,$(NF-6)}'
if grep -q H200 $W/gpu.txt; then
  timeout 300 $BIN/reduce-rs bench --shapes table --out /tmp/o > $W/table.log 2>&1; echo "table rc=$?"
  pack
  grep -E '^\S+ \S+ \S+ \S+ +reduce-rs .*\*' $W/table.log | grep -v reproducible | awk '{print $1,$2,$3,$4,$6,$7,$8}'
fi
