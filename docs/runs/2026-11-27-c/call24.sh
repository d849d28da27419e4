#!/usr/bin/env bash
# call 24 (asked for an H200): the final sources (5d41332): every GPU test and the pytest suite
# in parallel, then a few shapes through the bench's timing path (Shape::outputs_of); on an
# H200 also `bench --shapes table` with PyTorch, CUB and the CUDA twin.
set -uo pipefail
. scripts/unpack_bins.sh
W=/tmp/c24; rm -rf $W; mkdir -p $W
pack() { tar -C /tmp -cJf $OUT/c24.tar.xz c24; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $W/gpu.txt
( timeout 300 $BIN/gpu -q > $W/gpu_tests.log 2>&1; tail -3 $W/gpu_tests.log ) &
( SITE=$(mktemp -d); python3 -m pip install -q --no-index --no-deps --target $SITE .device/wheels/reduce_rs-*.whl && cd /tmp && PYTHONPATH=$SITE timeout 280 python3 -m pytest -q -p no:cacheprovider $OLDPWD/python/tests > $W/pytest.log 2>&1; tail -2 $W/pytest.log ) &
wait
pack
S=f32:sum:columns:524288x20,f64:sum:columns:524288x20,f32:argmax:rows:64x128256,f32:sum:segments:100000x300,bf16:argmax:rows:8x128256
timeout 60 $BIN/reduce-rs bench --no-cub --no-torch --shapes "$S" --out /tmp/o > $W/bench.log 2>&1; echo "bench rc=$?"
grep -h 'reduce-rs.*\*' $W/bench.log | awk '{print $1,$2,$3,$4,$6,$(NF-6),$NF}'
pack
if grep -q H200 $W/gpu.txt; then
  timeout 250 $BIN/reduce-rs bench --shapes table --out /tmp/o > $W/table.log 2>&1; echo "table rc=$?"
  pack
  grep -E '^\S+ \S+ \S+ \S+ +reduce-rs .*\*' $W/table.log | grep -v reproducible | awk '{print $1,$2,$3,$4,$6,$7,$8}'
fi
