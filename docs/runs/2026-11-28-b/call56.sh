#!/usr/bin/env bash
# call 56: on an H200, bench --shapes table with peers and v8 at 2^28 and 2^30 beside CUB;
# on an H100, the tip's kernels (226f78d: first_lane_where) against e3df020's PTX: every GPU
# test, the arg rows of each width two rounds, CUB beside the 16 KiB f32 rows, pytest (wheel).
set -uo pipefail
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/gpu.txt
case "$name" in
*H200*)
  . scripts/unpack_bins.sh
  W=/tmp/c56; rm -rf $W; mkdir -p $W
  cp $OUT/gpu.txt $W/
  timeout 430 $BIN/reduce-rs bench --shapes table --peers-dir bench --out /tmp/o > $W/table.log 2>&1; echo "table rc=$?"
  tar -C /tmp -cJf $OUT/c56.tar.xz c56
  timeout 120 $BIN/reduce-rs bench --dtypes f32 --versions v8 --sizes 2^28,2^30 --peers-dir bench --out /tmp/o2 > $W/v8.log 2>&1; echo "v8 rc=$?"
  tar -C /tmp -cJf $OUT/c56.tar.xz c56
  grep -E '^\S+ \S+ \S+ \S+ +(reduce-rs .*\*|read-only|torch|cub|cuda) ' $W/table.log | sed 's/(fastest peer)//; s/ \* / /' | awk '{print $1,$2,$3,$4,$5,$6,$7}'
  tail -20 $W/v8.log
  ;;
*)
  SHAPES=f32:argmax:rows:32768x4096,f32:argmax:rows:16384x4096,f32:argmin:rows:8192x8192,i32:argmax:rows:16384x4096,f64:argmax:rows:8192x4096,i64:argmax:rows:16384x2048,f32:argmax:segments:100000x300,bf16:argmax:rows:64x128256 \
  CAPPED= TESTS=all scripts/against_ptx.sh $OUT
  . scripts/unpack_bins.sh
  echo "== 16 KiB f32 rows beside CUB"
  timeout 120 $BIN/reduce-rs bench --shapes f32:argmax:rows:32768x4096,f32:argmax:rows:16384x4096 --peers-dir bench --no-torch --out /tmp/rows16k > $OUT/rows16k.log 2>&1
  grep -E "reduce-rs|cub|read-only" $OUT/rows16k.log | tail -12
  echo "== pytest"
  SITE=$(mktemp -d)
  python3 -m pip install -q --no-index --no-deps --target "$SITE" .device/wheels/reduce_rs-*.whl
  (cd /tmp && PYTHONPATH=$SITE timeout 150 python3 -m pytest -q -p no:cacheprovider "$OLDPWD/python/tests" 2>&1) > $OUT/pytest.log; tail -2 $OUT/pytest.log
  ;;
esac
