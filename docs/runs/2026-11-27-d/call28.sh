#!/usr/bin/env bash
# call 28: f32 max and min combining by max.f32/min.f32 and a NaN test, their column kernels
# finding each lane's extreme the same way, and shuffles that skip an Arg's padding word (the
# sources of this call, embedded) against the PTX of 162ec59 (loaded by --ptx-dir), two rounds,
# PyTorch and CUB beside the first.
set -uo pipefail
. scripts/unpack_bins.sh
W=/tmp/c28; rm -rf $W; mkdir -p $W
pack() { tar -C /tmp -cJf $OUT/c28.tar.xz c28; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $W/gpu.txt
d=/tmp/ptx-base; mkdir -p $d; cp reduce/kernels/kernels_gpu.source-hash $d/; xz -dc .device/exp/base.ptx.xz > $d/kernels_gpu.sm_90.ptx
timeout 200 $BIN/reduce-rs bench --no-cub --no-torch --repeat 1 --warmup 0 --shapes f32:max:rows:64x512 --ptx-dir $d --out /tmp/w1 > $W/warm_base.log 2>&1 &
timeout 200 $BIN/reduce-rs bench --no-cub --no-torch --repeat 1 --warmup 0 --shapes f32:max:rows:64x512 --out /tmp/w2 > $W/warm_new.log 2>&1 &
wait
S=f32:max:columns:1048576x2,f32:max:columns:1048576x20,f32:max:columns:8192x8192,f32:min:columns:4096x4096,f32:max:columns:2048x2048,f32:max:rows:32768x4096,f32:max:rows:65536x512,f32:min:rows:16x4194304,f32:max:whole:2^22,f32:max:whole:2^28,f32:max:segments:100000x300,bf16:argmax:rows:64x128256,bf16:argmax:rows:8x128256,f32:argmax:rows:64x128256,f32:argmax:segments:100000x300,bf16:argmax:columns:1048576x2,f32:argmax:columns:1048576x2,bf16:argmax:whole:2^28
timeout 280 $BIN/reduce-rs bench --shapes "$S" --out /tmp/o > $W/new_r1.log 2>&1; echo "new r1 rc=$?"
pack
timeout 120 $BIN/reduce-rs bench --no-cub --no-torch --shapes "$S" --ptx-dir $d --out /tmp/o > $W/base_r1.log 2>&1; echo "base r1 rc=$?"
timeout 120 $BIN/reduce-rs bench --no-cub --no-torch --shapes "$S" --ptx-dir $d --out /tmp/o > $W/base_r2.log 2>&1; echo "base r2 rc=$?"
timeout 120 $BIN/reduce-rs bench --no-cub --no-torch --shapes "$S" --out /tmp/o > $W/new_r2.log 2>&1; echo "new r2 rc=$?"
pack
grep -c FAIL $W/new_r1.log $W/new_r2.log
for v in base new; do echo "== $v"; grep -h '^\S* \S* \S* \S* *reduce-rs' $W/${v}_r1.log $W/${v}_r2.log | grep -v reproducible | sed 's/ \* / /' | awk '{k=$1" "$2" "$3" "$4" "$6; a[k]=a[k]" "$7} END{for(k in a) print k, a[k]}' | sort; done
echo "== peers"; grep -hE '^\S* \S* \S* \S* *(torch|cub|cuda) ' $W/new_r1.log | sed 's/(fastest peer)//' | awk '{print $1,$2,$3,$4,$5,$7}'
