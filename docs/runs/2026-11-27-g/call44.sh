#!/usr/bin/env bash
# call 44, on whichever GPU the call got (asked: nvidia-h200-x2, for an H200): README's shapes
# table with PyTorch, CUB and the CUDA twins; rows of 8-32 KiB by kernel (the row max's line
# between a warp and a block per row); the 16-bit long arg rows as the planner now cuts them
# (call43.sh); Nsight Compute of the f32 row max of 32768 x 4096, ours and CUB's, if time is left.
set -uo pipefail
. scripts/unpack_bins.sh
W=/tmp/c44; rm -rf $W; mkdir -p $W
pack() { tar -C /tmp -cJf $OUT/c44.tar.xz c44; }
nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm --format=csv,noheader | tee $W/gpu.txt
export CUDA_VISIBLE_DEVICES=0
timeout 300 $BIN/reduce-rs bench --shapes table --peers-dir bench --out /tmp/o > $W/table.log 2>&1; echo "table rc=$? ${SECONDS}s"
pack
S=f32:max:rows:16384x4096,f32:max:rows:32768x2048,f32:max:rows:16384x8192,f32:sum:rows:32768x4096,f32:min:rows:32768x4096,bf16:max:rows:32768x8192,f32:argmax:rows:32768x4096
timeout 120 $BIN/reduce-rs bench --no-torch --shapes "$S" --peers-dir bench --out /tmp/o2 > $W/rows.log 2>&1; echo "rows rc=$? ${SECONDS}s"
pack
S=bf16:argmax:rows:64x1048576,bf16:argmin:rows:16x4194304,bf16:argmax:rows:16x4194304,f16:argmax:rows:128x262144,bf16:argmax:rows:128x262144,bf16:argmax:rows:64x128256,bf16:argmax:rows:8x128256,bf16:argmax:rows:32x200000,f32:argmax:rows:16x4194304
timeout 80 $BIN/reduce-rs bench --no-cub --no-torch --shapes "$S" --out /tmp/o3 > $W/arg16.log 2>&1; echo "arg16 rc=$? ${SECONDS}s"
pack
if [ $SECONDS -lt 420 ]; then
  for k in rows_block_f32_max rows_warp_f32_max read_probe_f32 DeviceSegmentedReduce; do
    peers=--no-cub; [ $k = DeviceSegmentedReduce ] && peers="--peers-dir bench"
    timeout 60 ncu --clock-control none --set full -k regex:$k -c 1 -o $W/ncu_$k $BIN/reduce-rs bench --no-torch $peers --shapes f32:max:rows:32768x4096 --repeat 1 --warmup 0 --out /tmp/o4 > $W/ncu_$k.log 2>&1
    echo "ncu $k rc=$? ${SECONDS}s"
  done
  pack
fi
echo "FAIL lines: $(cat $W/*.log | grep -c FAIL)"
grep -hE '^\S+ \S+ \S+ \S+ +(reduce-rs|read-only|torch|cub|cuda) ' $W/table.log $W/rows.log | grep -v reproducible | sed 's/(fastest peer)//' | awk '{print $1,$2,$3,$4,$5,$6,$7,$8}'
grep -hE '^\S+ \S+ \S+ \S+ +(reduce-rs .*\*|read-only) ' $W/arg16.log | sed 's/ \* / /' | awk '{print $1,$2,$3,$4,$5,$6,$7}'
