#!/usr/bin/env bash
# call 40: the arg operators' rows cut over a third of a wave (the planner; the kernels are
# main's): every GPU test and the pytest suite in parallel, then the arg row shapes at the
# planned split and at the old rule's (--splits), PyTorch beside.
set -uo pipefail
. scripts/unpack_bins.sh
W=/tmp/c40; rm -rf $W; mkdir -p $W
pack() { tar -C /tmp -cJf $OUT/c40.tar.xz c40; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $W/gpu.txt
( timeout 300 $BIN/gpu -q > $W/gpu_tests.log 2>&1; tail -1 $W/gpu_tests.log ) &
( SITE=$(mktemp -d); python3 -m pip install -q --no-index --no-deps --target $SITE .device/wheels/reduce_rs-*.whl && cd /tmp && PYTHONPATH=$SITE timeout 280 python3 -m pytest -q -p no:cacheprovider $OLDPWD/python/tests > $W/pytest.log 2>&1; tail -1 $W/pytest.log ) &
wait
pack
S=bf16:argmax:rows:1x128256,bf16:argmax:rows:8x128256,bf16:argmax:rows:64x128256,bf16:argmin:rows:64x128256,f16:argmax:rows:64x128256,bf16:argmax:rows:4x200000,bf16:argmax:rows:32x200000,f32:argmax:rows:64x100000,f32:argmax:rows:16x4194304,bf16:argmax:rows:64x1048576
timeout 200 $BIN/reduce-rs bench --no-cub --shapes "$S" --splits 2,4,6,7,33,49,256 --out /tmp/o > $W/arg_rows.log 2>&1; echo "arg rc=$?"
pack
grep -c FAIL $W/arg_rows.log
grep -E '^\S+ \S+ \S+ \S+ +(reduce-rs|torch|read-only) ' $W/arg_rows.log | grep -v "rows_block\|rows_warp" | sed 's/(fastest peer)//; s/ \* / split=planned /' | awk '{print $1,$2,$3,$4,$5,$6,$7,$8}'
