#!/usr/bin/env bash
# call 37: the padded last group (every thread's loads in flight together) against head's
# PTX (--ptx-dir), two rounds each; the GPU tests first; then the vocabulary argmax by splits.
set -uo pipefail
. scripts/unpack_bins.sh
W=/tmp/c37; rm -rf $W; mkdir -p $W
pack() { tar -C /tmp -cJf $OUT/c37.tar.xz c37; }
H=/tmp/headptx; mkdir -p $H; xz -dc .device/head/kernels_gpu.sm_90.cubin.xz > $H/kernels_gpu.sm_90.cubin; xz -dc .device/head/kernels_gpu.sm_90.ptx.xz > $H/kernels_gpu.sm_90.ptx; cp .device/head/kernels_gpu.source-hash $H/
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $W/gpu.txt
timeout 280 $BIN/gpu -q > $W/gpu_tests.log 2>&1; tail -1 $W/gpu_tests.log; grep -E "FAIL|panicked" $W/gpu_tests.log | head -5
pack
S=table,f32:sum:whole:2^14,f32:sum:whole:2^16,f32:sum:whole:2^18,f32:sum:whole:2^20,bf16:argmax:whole:2^20,bf16:argmax:rows:32768x4096,bf16:max:rows:32768x4096,f32:max:rows:32768x2048,f32:sum:rows:64x512,f32:sum:rows:16x16384,f32:sum:rows:128x16384,f32:argmax:rows:64x100000,bf16:argmax:rows:4x200000
for r in 1 2; do
  timeout 100 $BIN/reduce-rs bench --no-cub --no-torch --shapes "$S" --ptx-dir $H --out /tmp/o > $W/head_r$r.log 2>&1; echo "head r$r rc=$?"
  timeout 100 $BIN/reduce-rs bench --no-cub --no-torch --shapes "$S" --out /tmp/o > $W/new_r$r.log 2>&1; echo "new r$r rc=$?"
  pack
done
V=bf16:argmax:rows:1x128256,bf16:argmax:rows:8x128256,bf16:argmax:rows:64x128256,f32:sum:rows:16x4194304
timeout 120 $BIN/reduce-rs bench --no-cub --no-torch --shapes "$V" --splits 2,4,6,8,12,16,24,32,48,64 --out /tmp/o > $W/splits.log 2>&1; echo "splits rc=$?"
pack
for f in head_r1 new_r1 head_r2 new_r2; do grep -E '^\S+ \S+ \S+ \S+ +(reduce-rs|read-only) ' $W/$f.log | sed 's/ \* / /' | awk -v f=$f '{print f,$1,$2,$3,$4,$5,$7}' ; done > $W/ab.txt
awk '{k=$2" "$3" "$4" "$5" "$6; v[k]=v[k]" "$1"="$7} END{for(k in v) print k, v[k]}' $W/ab.txt | sort
grep -E 'reduce-rs' $W/splits.log | sed 's/ \* / split=planned /' | awk '{print $1,$2,$3,$4,$7,$8}'
