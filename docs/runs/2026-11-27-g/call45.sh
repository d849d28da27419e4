#!/usr/bin/env bash
# call 45: the 16-bit arg operators' lone vectors by their best key (Reduction::accumulate_vector)
# against head's PTX (--ptx-dir), two rounds each; every GPU test and pytest of the new sources
# first; then Nsight Compute's instruction counts of the 64-row vocabulary argmax, both PTX.
set -uo pipefail
. scripts/unpack_bins.sh
W=/tmp/c45; rm -rf $W; mkdir -p $W
pack() { tar -C /tmp -cJf $OUT/c45.tar.xz c45; }
H=/tmp/headptx; mkdir -p $H; xz -dc .device/head/kernels_gpu.sm_90.cubin.xz > $H/kernels_gpu.sm_90.cubin; xz -dc .device/head/kernels_gpu.sm_90.ptx.xz > $H/kernels_gpu.sm_90.ptx; cp .device/head/kernels_gpu.source-hash $H/
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $W/gpu.txt
( timeout 300 $BIN/gpu -q > $W/gpu_tests.log 2>&1; tail -1 $W/gpu_tests.log; grep -E "FAIL|panicked" $W/gpu_tests.log | head -5 ) &
( SITE=$(mktemp -d); python3 -m pip install -q --no-index --no-deps --target $SITE .device/wheels/reduce_rs-*.whl && cd /tmp && PYTHONPATH=$SITE timeout 280 python3 -m pytest -q -p no:cacheprovider $OLDPWD/python/tests > $W/pytest.log 2>&1; tail -1 $W/pytest.log ) &
wait
echo "tests done ${SECONDS}s"
pack
S=bf16:argmax:rows:1x128256,bf16:argmax:rows:8x128256,bf16:argmax:rows:64x128256,bf16:argmin:rows:64x128256,f16:argmax:rows:64x128256,bf16:argmax:rows:4x200000,bf16:argmax:rows:32x200000,bf16:argmax:rows:64x1048576,bf16:argmax:rows:128x262144,bf16:argmax:rows:32768x4096,bf16:argmax:rows:65536x100,bf16:argmax:segments:100000x300,bf16:argmax:whole:2^20,bf16:argmax:whole:2^28,f32:argmax:rows:64x100000,bf16:argmax:columns:4096x4096
for r in 1 2; do
  timeout 100 $BIN/reduce-rs bench --no-cub --no-torch --shapes "$S" --ptx-dir $H --out /tmp/o > $W/head_r$r.log 2>&1; echo "head r$r rc=$? ${SECONDS}s"
  timeout 100 $BIN/reduce-rs bench --no-cub --no-torch --shapes "$S" --out /tmp/o > $W/new_r$r.log 2>&1; echo "new r$r rc=$? ${SECONDS}s"
  pack
done
for v in head new; do
  dir=; [ $v = head ] && dir="--ptx-dir $H"
  timeout 60 ncu --clock-control none --set full --import-source no -k regex:rows_split_bf16_argmax -c 1 -o $W/ncu_$v $BIN/reduce-rs bench --no-cub --no-torch $dir --shapes bf16:argmax:rows:64x128256 --repeat 1 --warmup 0 --out /tmp/o5 > $W/ncu_$v.log 2>&1; echo "ncu $v rc=$?"
  ncu -i $W/ncu_$v.ncu-rep --page details > $W/ncu_${v}_details.txt 2>&1
  ncu -i $W/ncu_$v.ncu-rep --page source --csv --print-source sass > $W/ncu_${v}_sass.csv 2>&1 || ncu --help > $W/ncu_help.txt 2>&1
done
pack
echo "FAIL lines: $(cat $W/*_r?.log | grep -c FAIL)"
for f in head_r1 new_r1 head_r2 new_r2; do grep -E '^\S+ \S+ \S+ \S+ +(reduce-rs|read-only) ' $W/$f.log | sed 's/ \* / /' | awk -v f=$f '{print f,$1,$2,$3,$4,$6,$7}' ; done > $W/ab.txt
awk '{k=$2" "$3" "$4" "$5" "$6; v[k]=v[k]" "$1"="$7} END{for(k in v) print k, v[k]}' $W/ab.txt | sort
grep -h "Executed Instructions  \|Duration  \|Registers Per" $W/ncu_*_details.txt
