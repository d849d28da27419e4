#!/usr/bin/env bash
# call 20 (H100): after the review (max.f32/min.f32 in asm!): the f32 max and min shapes of
# call 18 again, then every GPU test and the pytest suite (with both zeros in one vector of a
# long array, on the GPU), in parallel.
set -uo pipefail
. scripts/unpack_bins.sh
W=/tmp/c20; rm -rf $W; mkdir -p $W
pack() { tar -C /tmp -cJf $OUT/c20.tar.xz c20; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $W/gpu.txt
S=f32:max:rows:32768x4096,f32:min:rows:65536x512,f32:max:whole:2^28,f32:min:whole:2^22,f32:max:rows:32768x2048
timeout 150 $BIN/reduce-rs bench --no-cub --no-torch --shapes "$S" --out /tmp/o > $W/bench.log 2>&1
pack
( timeout 330 $BIN/gpu -q > $W/gpu_tests.log 2>&1; tail -3 $W/gpu_tests.log ) &
( SITE=$(mktemp -d); python3 -m pip install -q --no-index --no-deps --target $SITE .device/wheels/reduce_rs-*.whl && cd /tmp && PYTHONPATH=$SITE timeout 300 python3 -m pytest -q -p no:cacheprovider $OLDPWD/python/tests > $W/pytest.log 2>&1; tail -2 $W/pytest.log; PYTHONPATH=$SITE python3 -m pytest -q -p no:cacheprovider $OLDPWD/python/tests/test_numpy.py -k two_zeros -v 2>&1 | tail -8 > $W/two_zeros.log ) &
wait
pack
grep -h 'reduce-rs.*\*' $W/bench.log | awk '{print $1,$2,$3,$4,$6,$8}'
cat $W/two_zeros.log
