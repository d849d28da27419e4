#!/usr/bin/env bash
# call 32: the band kernel's scalar loads dealt out lane by lane (a warp reads consecutive
# columns), 16 loads in flight (embedded), against the same with 32 (exp/s32) and the sources
# of 327af42 (exp/head): rows that are no whole number of vectors, and aligned controls.
set -uo pipefail
. scripts/unpack_bins.sh
W=/tmp/c32; rm -rf $W; mkdir -p $W
pack() { tar -C /tmp -cJf $OUT/c32.tar.xz c32; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $W/gpu.txt
for v in head s32; do d=/tmp/ptx-$v; mkdir -p $d; cp reduce/kernels/kernels_gpu.source-hash $d/; xz -dc .device/exp/$v.ptx.xz > $d/kernels_gpu.sm_90.ptx; done
S=f32:sum:columns:4096x4094,f32:sum:columns:16384x1022,f32:max:columns:8192x8190,f32:argmax:columns:4096x4094,bf16:sum:columns:8192x8190,bf16:argmax:columns:4096x4094,f64:sum:columns:4096x4095,i32:sum:columns:4096x4095,f32:sum:columns:4096x4096,bf16:sum:columns:8192x8192,f32:max:columns:2048x2048,f64:sum:columns:4096x4096,f32:argmax:columns:4096x4096,bf16:max:columns:4096x4096
W1=f32:sum:columns:64x64
timeout 150 $BIN/reduce-rs bench --no-cub --no-torch --shapes $W1 --out /tmp/o > $W/warm_new.log 2>&1 &
timeout 150 $BIN/reduce-rs bench --no-cub --no-torch --shapes $W1 --ptx-dir /tmp/ptx-head --out /tmp/o2 > $W/warm_head.log 2>&1 &
timeout 150 $BIN/reduce-rs bench --no-cub --no-torch --shapes $W1 --ptx-dir /tmp/ptx-s32 --out /tmp/o3 > $W/warm_s32.log 2>&1 &
wait; echo warmed; date
run() { timeout $1 $BIN/reduce-rs bench --no-cub $3 --shapes "$S" $4 --out /tmp/o > $W/$2.log 2>&1; echo "$2 rc=$?"; date; }
run 200 new_r1 "" ""
run 120 head_r1 --no-torch "--ptx-dir /tmp/ptx-head"
run 120 s32_r1 --no-torch "--ptx-dir /tmp/ptx-s32"
run 120 s32_r2 --no-torch "--ptx-dir /tmp/ptx-s32"
run 120 head_r2 --no-torch "--ptx-dir /tmp/ptx-head"
run 120 new_r2 --no-torch ""
pack
grep -c FAIL $W/*_r?.log
for v in head s32 new; do echo "== $v"; grep -h '^\S* \S* \S* \S* *reduce-rs' $W/${v}_r1.log $W/${v}_r2.log | grep -v reproducible | sed 's/ \* / /' | awk '{k=$1" "$2" "$3" "$4" "$6; a[k]=a[k]" "$7} END{for(k in a) print k, a[k]}' | sort; done
echo "== repro"; for v in head s32 new; do grep -h 'reproducible' $W/${v}_r1.log $W/${v}_r2.log | sed 's/ \* / /' | awk -v v=$v '{print v, $1,$2,$3,$4,$6,$7}'; done | sort -k2 | head -30
echo "== peers"; grep -hE '^\S* \S* \S* \S* *(torch|read-only) ' $W/new_r1.log | sed 's/(fastest peer)//' | awk '{print $1,$2,$3,$4,$5,$7}'
