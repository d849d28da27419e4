#!/usr/bin/env bash
# call 33: scalar rows in flight 4 (8 for 8-byte types) embedded, against the sources of
# 327af42 (exp/head), two rounds; then the aligned shapes' bands (--splits) on the new build.
set -uo pipefail
. scripts/unpack_bins.sh
W=/tmp/c33; rm -rf $W; mkdir -p $W
pack() { tar -C /tmp -cJf $OUT/c33.tar.xz c33; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $W/gpu.txt
for v in head; do d=/tmp/ptx-$v; mkdir -p $d; cp reduce/kernels/kernels_gpu.source-hash $d/; xz -dc .device/exp/$v.ptx.xz > $d/kernels_gpu.sm_90.ptx; done
S=f32:sum:columns:4096x4094,f32:sum:columns:16384x1022,f32:max:columns:8192x8190,f32:argmax:columns:4096x4094,bf16:sum:columns:8192x8190,bf16:argmax:columns:4096x4094,bf16:max:columns:4096x4094,f64:sum:columns:4096x4095,i32:sum:columns:4096x4095,f32:sum:columns:4096x4096,f32:argmax:columns:4096x4096,bf16:sum:columns:8192x8192,bf16:max:columns:4096x4096,f32:max:columns:2048x2048,f64:sum:columns:4096x4096,i64:sum:columns:4096x4096,f64:argmax:columns:4096x4096,u64:max:columns:4096x4096
W1=f32:sum:columns:64x64
timeout 150 $BIN/reduce-rs bench --no-cub --no-torch --shapes $W1 --out /tmp/o > $W/warm_new.log 2>&1 &
timeout 150 $BIN/reduce-rs bench --no-cub --no-torch --shapes $W1 --ptx-dir /tmp/ptx-head --out /tmp/o2 > $W/warm_head.log 2>&1 &
wait; echo warmed; date
run() { timeout $1 $BIN/reduce-rs bench --no-cub $3 --shapes "$S" $4 --out /tmp/o > $W/$2.log 2>&1; echo "$2 rc=$?"; date; }
run 200 new_r1 "" ""
run 120 head_r1 --no-torch "--ptx-dir /tmp/ptx-head"
run 120 head_r2 --no-torch "--ptx-dir /tmp/ptx-head"
run 120 new_r2 --no-torch ""
timeout 150 $BIN/reduce-rs bench --no-cub --no-torch --shapes f32:argmax:columns:4096x4096,bf16:sum:columns:8192x8192,bf16:max:columns:4096x4096,f32:sum:columns:4096x4096,bf16:argmax:columns:4096x4094 --splits 8,12,16,22,32,48 --out /tmp/o > $W/splits.log 2>&1; echo "splits rc=$?"
pack
grep -c FAIL $W/*.log
for v in head new; do echo "== $v"; grep -h '^\S* \S* \S* \S* *reduce-rs' $W/${v}_r1.log $W/${v}_r2.log | grep -v reproducible | sed 's/ \* / /' | awk '{k=$1" "$2" "$3" "$4" "$6; a[k]=a[k]" "$7} END{for(k in a) print k, a[k]}' | sort; done
echo "== repro"; for v in head new; do grep -h 'reproducible' $W/${v}_r1.log $W/${v}_r2.log | sed 's/ \* / /' | awk -v v=$v '{print v, $1,$2,$3,$4,$6,$7}'; done | sort -k2 | head -30
echo "== peers"; grep -hE '^\S* \S* \S* \S* *(torch|read-only) ' $W/new_r1.log | sed 's/(fastest peer)//' | awk '{print $1,$2,$3,$4,$5,$7}'
echo "== splits"; grep -v "^bench:" $W/splits.log | grep -v reproducible | head -60
