#!/usr/bin/env bash
# call 27: the column kernels' max, min and arg operators finding each lane's best key with
# max.f32/min.f32 (`--cfg reduce_exp_lane_keys`, loaded by --ptx-dir) against what ships, two
# rounds, PyTorch beside the first.
set -uo pipefail
. scripts/unpack_bins.sh
W=/tmp/c27; rm -rf $W; mkdir -p $W
pack() { tar -C /tmp -cJf $OUT/c27.tar.xz c27; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $W/gpu.txt
d=/tmp/ptx-lanekeys; mkdir -p $d; cp reduce/kernels/kernels_gpu.source-hash $d/; xz -dc .device/exp/lanekeys.ptx.xz > $d/kernels_gpu.sm_90.ptx
timeout 200 $BIN/reduce-rs bench --no-cub --no-torch --repeat 1 --warmup 0 --shapes f32:max:rows:64x512 --ptx-dir $d --out /tmp/w1 > $W/warm_lanekeys.log 2>&1 &
timeout 200 $BIN/reduce-rs bench --no-cub --no-torch --repeat 1 --warmup 0 --shapes f32:max:rows:64x512 --out /tmp/w2 > $W/warm_ship.log 2>&1 &
wait
S=f32:argmax:columns:1048576x2,f32:argmax:columns:1048576x3,f32:argmax:columns:1048576x4,f32:argmax:columns:524288x8,f32:argmin:columns:1048576x2,f32:max:columns:1048576x2,f32:max:columns:1048576x20,f32:argmax:columns:8192x8192,f32:argmax:columns:4096x4096,f32:max:columns:8192x8192,f32:min:columns:4096x4096,f32:argmax:columns:262144x64
timeout 200 $BIN/reduce-rs bench --no-cub --shapes "$S" --out /tmp/o > $W/ship_r1.log 2>&1; echo "ship r1 rc=$?"
timeout 100 $BIN/reduce-rs bench --no-cub --no-torch --shapes "$S" --ptx-dir $d --out /tmp/o > $W/lanekeys_r1.log 2>&1; echo "lanekeys r1 rc=$?"
pack
timeout 100 $BIN/reduce-rs bench --no-cub --no-torch --shapes "$S" --ptx-dir $d --out /tmp/o > $W/lanekeys_r2.log 2>&1; echo "lanekeys r2 rc=$?"
timeout 100 $BIN/reduce-rs bench --no-cub --no-torch --shapes "$S" --out /tmp/o > $W/ship_r2.log 2>&1; echo "ship r2 rc=$?"
pack
grep -c PASS $W/lanekeys_r1.log $W/lanekeys_r2.log; grep -c FAIL $W/lanekeys_r1.log $W/lanekeys_r2.log
for v in ship lanekeys; do echo "== $v"; grep -h '^f32.*reduce-rs' $W/${v}_r1.log $W/${v}_r2.log | grep -v reproducible | sed 's/ \* / /' | awk '{k=$1" "$2" "$3" "$4" "$6; a[k]=a[k]" "$7} END{for(k in a) print k, a[k]}' | sort; done
echo "== torch"; grep -h '^f32.*torch ' $W/ship_r1.log | sed 's/(fastest peer)//' | awk '{print $1,$2,$3,$4,$7}'
