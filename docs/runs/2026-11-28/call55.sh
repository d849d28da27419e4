#!/usr/bin/env bash
# call 55: rows_block's arg operators by each group's best key (BY_BEST_KEY) and the planner's
# 16 KiB line for 4- and 8-byte arg rows, against 99ae538's PTX: every GPU test, the arg rows
# of every width, two rounds; the f32 argmax of 16 KiB rows beside CUB; pytest with the wheel.
set -uo pipefail
SHAPES=f32:argmax:rows:32768x4096,f32:argmax:rows:16384x4096,f32:argmin:rows:8192x8192,f32:argmax:rows:32768x2048,f32:argmax:rows:4096x16384,i32:argmax:rows:16384x4096,u32:argmin:rows:16384x4096,f64:argmax:rows:8192x4096,i64:argmax:rows:16384x2048,f32:argmax:segments:100000x300,f32:argmax:rows:64x100000,bf16:argmax:rows:16384x8192 \
CAPPED= TESTS=all scripts/against_ptx.sh $OUT
. scripts/unpack_bins.sh
echo "== 16 KiB f32 rows beside CUB"
timeout 150 $BIN/reduce-rs bench --shapes f32:argmax:rows:32768x4096,f32:argmax:rows:16384x4096 --peers-dir bench --no-torch --out /tmp/rows16k > $OUT/rows16k.log 2>&1
grep -E "reduce-rs|cub|read-only" $OUT/rows16k.log | tail -12
echo "== pytest"
SITE=$(mktemp -d)
python3 -m pip install -q --no-index --no-deps --target "$SITE" .device/wheels/reduce_rs-*.whl
(cd /tmp && PYTHONPATH=$SITE timeout 150 python3 -m pytest -q -p no:cacheprovider "$OLDPWD/python/tests" 2>&1) > $OUT/pytest.log; tail -2 $OUT/pytest.log
