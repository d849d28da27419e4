#!/usr/bin/env bash
# call 47: the 16-bit arg operators find the lane of a best key two lanes a word
# (Element::first_lane_holding), their group's words read across the vectors (the loads issued
# together), the arg split rows at a quarter of the wave: every GPU test and pytest; head's PTX
# against the new (--ptx-dir), one round each, 16-bit arg, max and min shapes; the arg rows by
# blocks per row; Nsight Compute of the 64-row vocabulary argmax (new).
set -uo pipefail
. scripts/unpack_bins.sh
W=/tmp/c47; rm -rf $W; mkdir -p $W
pack() { tar -C /tmp -cJf $OUT/c47.tar.xz c47; }
H=/tmp/headptx; mkdir -p $H; xz -dc .device/head/kernels_gpu.sm_90.cubin.xz > $H/kernels_gpu.sm_90.cubin; xz -dc .device/head/kernels_gpu.sm_90.ptx.xz > $H/kernels_gpu.sm_90.ptx; cp .device/head/kernels_gpu.source-hash $H/
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $W/gpu.txt
( timeout 300 $BIN/gpu -q > $W/gpu_tests.log 2>&1; tail -1 $W/gpu_tests.log; grep -E "FAIL|panicked" $W/gpu_tests.log | head -5 ) &
( SITE=$(mktemp -d); python3 -m pip install -q --no-index --no-deps --target $SITE .device/wheels/reduce_rs-*.whl && cd /tmp && PYTHONPATH=$SITE timeout 280 python3 -m pytest -q -p no:cacheprovider $OLDPWD/python/tests > $W/pytest.log 2>&1; tail -1 $W/pytest.log ) &
wait
echo "tests done ${SECONDS}s"
pack
S=bf16:argmax:rows:1x128256,bf16:argmax:rows:8x128256,bf16:argmax:rows:64x128256,f16:argmin:rows:64x128256,bf16:argmax:rows:32x200000,bf16:argmax:rows:16x4194304,bf16:argmax:rows:32768x4096,bf16:argmax:rows:65536x100,bf16:argmax:segments:100000x300,bf16:argmax:whole:2^20,bf16:argmax:whole:2^28,bf16:max:rows:32768x8192,bf16:max:rows:32768x4096,f16:min:rows:65536x512,bf16:max:rows:64x128256,bf16:max:whole:2^28,bf16:max:segments:100000x300,f32:argmax:rows:64x100000
timeout 100 $BIN/reduce-rs bench --no-cub --no-torch --shapes "$S" --ptx-dir $H --out /tmp/o > $W/head_r1.log 2>&1; echo "head rc=$? ${SECONDS}s"
timeout 100 $BIN/reduce-rs bench --no-cub --no-torch --shapes "$S" --out /tmp/o > $W/new_r1.log 2>&1; echo "new rc=$? ${SECONDS}s"
pack
V=bf16:argmax:rows:4x200000,bf16:argmax:rows:32x200000,bf16:argmax:rows:128x262144,bf16:argmax:rows:16x4194304
timeout 80 $BIN/reduce-rs bench --no-cub --no-torch --shapes "$V" --splits 1,2,4,8,16,32 --out /tmp/o > $W/splits.log 2>&1; echo "splits rc=$? ${SECONDS}s"
timeout 60 ncu --clock-control none --set full --import-source no -k regex:rows_split_bf16_argmax -c 1 -o $W/ncu_new $BIN/reduce-rs bench --no-cub --no-torch --shapes bf16:argmax:rows:64x128256 --repeat 1 --warmup 0 --out /tmp/o5 > $W/ncu_new.log 2>&1; echo "ncu rc=$?"
ncu -i $W/ncu_new.ncu-rep --page details > $W/ncu_new_details.txt 2>&1
ncu -i $W/ncu_new.ncu-rep --page source --csv --print-source sass > $W/ncu_new_sass.csv 2>&1
pack
echo "FAIL lines: $(cat $W/*_r?.log $W/splits.log | grep -c FAIL)"
for f in head_r1 new_r1; do grep -E '^\S+ \S+ \S+ \S+ +(reduce-rs|read-only) ' $W/$f.log | sed 's/ \* / planned /' | awk -v f=$f '{p=($7=="planned")?"*":""; print f,$1,$2,$3,$4,$6 p,($7=="planned")?$8:$7}' ; done > $W/ab.txt
awk '{k=$2" "$3" "$4" "$5" "$6; v[k]=v[k]" "$1"="$7} END{for(k in v) print k, v[k]}' $W/ab.txt | sort
grep -h "Executed Instructions  \|Duration  \|Registers Per\|Achieved Occupancy" $W/ncu_*_details.txt
grep -E 'reduce-rs' $W/splits.log | grep rows_split | sed 's/ \* / split=planned /' | awk '{print $1,$2,$3,$4,$7,$8}'
