#!/usr/bin/env bash
# call 31: the f32 column max and min where rows are no whole number of 16-byte vectors (the
# band kernel's scalar loads, `walk_column`, whose combine is now max.f32 and a NaN test): the
# sources of cbeb803 (embedded) against the PTX of 162ec59 (--ptx-dir),
# two rounds, PyTorch beside the first.
set -uo pipefail
. scripts/unpack_bins.sh
W=/tmp/c31; rm -rf $W; mkdir -p $W
pack() { tar -C /tmp -cJf $OUT/c31.tar.xz c31; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $W/gpu.txt
d=/tmp/ptx-base; mkdir -p $d; cp reduce/kernels/kernels_gpu.source-hash $d/; xz -dc .device/exp/base.ptx.xz > $d/kernels_gpu.sm_90.ptx
S=f32:max:columns:4096x4094,f32:max:columns:8192x8190,f32:min:columns:2048x2046,f32:max:columns:16384x1022,f32:sum:columns:4096x4094,f32:sum:columns:16384x1022,f32:argmax:columns:4096x4094
timeout 100 $BIN/reduce-rs bench --no-cub --shapes "$S" --out /tmp/o > $W/new_r1.log 2>&1; echo "new r1 rc=$?"
timeout 60 $BIN/reduce-rs bench --no-cub --no-torch --shapes "$S" --ptx-dir $d --out /tmp/o > $W/base_r1.log 2>&1; echo "base r1 rc=$?"
timeout 60 $BIN/reduce-rs bench --no-cub --no-torch --shapes "$S" --ptx-dir $d --out /tmp/o > $W/base_r2.log 2>&1; echo "base r2 rc=$?"
timeout 60 $BIN/reduce-rs bench --no-cub --no-torch --shapes "$S" --out /tmp/o > $W/new_r2.log 2>&1; echo "new r2 rc=$?"
pack
grep -c FAIL $W/new_r1.log $W/new_r2.log
for v in base new; do echo "== $v"; grep -h '^\S* \S* \S* \S* *reduce-rs' $W/${v}_r1.log $W/${v}_r2.log | grep -v reproducible | sed 's/ \* / /' | awk '{k=$1" "$2" "$3" "$4" "$6; a[k]=a[k]" "$7} END{for(k in a) print k, a[k]}' | sort; done
echo "== peers"; grep -hE '^\S* \S* \S* \S* *(torch|read-only) ' $W/new_r1.log | sed 's/(fastest peer)//' | awk '{print $1,$2,$3,$4,$5,$7}'
