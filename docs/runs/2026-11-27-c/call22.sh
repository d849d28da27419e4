#!/usr/bin/env bash
# call 22 (asked for an H200): on an H200 the shape tables (`bench --shapes table`, `others`)
# with PyTorch, CUB and the CUDA twin; on an H100 the narrow counts the new rule reads flat
# (f32 20, 24, 28 columns; f64 14 and 20, which the f32 measurements decided) beside PyTorch,
# then every GPU test and the pytest suite, in parallel.
set -uo pipefail
. scripts/unpack_bins.sh
W=/tmp/c22; rm -rf $W; mkdir -p $W
pack() { tar -C /tmp -cJf $OUT/c22.tar.xz c22; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $W/gpu.txt
if grep -q H200 $W/gpu.txt; then
  timeout 300 $BIN/reduce-rs bench --shapes table --out /tmp/o > $W/table.log 2>&1; echo "table rc=$?"
  pack
  timeout 270 $BIN/reduce-rs bench --shapes others --out /tmp/o2 > $W/others.log 2>&1; echo "others rc=$?"
  pack
  for f in table others; do echo "== $f"; grep -E '^\S+ \S+ \S+ \S+ +reduce-rs .*\*' $W/$f.log | grep -v reproducible | awk '{print $1,$2,$3,$4,$6,$7,$8}'; done
  exit 0
fi
N=f32:sum:columns:262144x24,f32:sum:columns:524288x20,f32:sum:columns:524288x28,f32:sum:columns:1048576x24,f32:sum:columns:2097152x28,f64:sum:columns:262144x14,f64:sum:columns:262144x20,f64:sum:columns:524288x14,f64:sum:columns:524288x20,f64:sum:columns:1048576x14,f64:sum:columns:1048576x20,f32:max:columns:1048576x20,f32:argmax:columns:1048576x24
timeout 200 $BIN/reduce-rs bench --no-cub --shapes "$N" --out /tmp/o > $W/narrow.log 2>&1; echo "narrow rc=$?"
pack
( timeout 330 $BIN/gpu -q > $W/gpu_tests.log 2>&1; tail -3 $W/gpu_tests.log ) &
( SITE=$(mktemp -d); python3 -m pip install -q --no-index --no-deps --target $SITE .device/wheels/reduce_rs-*.whl && cd /tmp && PYTHONPATH=$SITE timeout 300 python3 -m pytest -q -p no:cacheprovider $OLDPWD/python/tests > $W/pytest.log 2>&1; tail -2 $W/pytest.log ) &
wait
pack
echo "== narrow"; grep -E 'columns(_narrow)?_f(32|64)_(sum|max|argmax) |torch ' $W/narrow.log | grep -v reproducible | awk '{print $1,$2,$4,$6,$(NF-6)}'
