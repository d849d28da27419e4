#!/usr/bin/env bash
# call 74: the build to land (rows_split's prefetch, rows_warp by best key, the 16-bit arg
# warp/block line from 32 KiB rows at every resident warp): the line's shapes, every kernel of
# each, two rounds; every GPU test; pytest with its wheel; the greedy sampler. One tarball.
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/unpack_bins.sh
L=/tmp/call74; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$L/gpu.txt"
pack() { tar -C /tmp -cJf "$OUT/call74.tar.xz" call74; }
S=bf16:argmax:rows:2048x16384,bf16:argmax:rows:3072x16384,bf16:argmax:rows:4096x16384,bf16:argmax:rows:6144x16384,bf16:argmax:rows:8192x16384,bf16:argmax:rows:4096x24576,bf16:argmax:rows:2048x32768,bf16:argmax:rows:4096x32768,f16:argmin:rows:4096x16384,bf16:argmax:rows:16x128256,bf16:argmax:rows:150x65536,f32:argmax:segments:100000x300
line() { t0=$SECONDS; timeout 100 $BIN/reduce-rs bench --no-cub --no-torch --shapes "$S" --out /tmp/o > "$L/line_r$1.log" 2>&1; echo "line r$1 rc=$? $((SECONDS-t0))s"; pack; }
line 1
t0=$SECONDS; timeout 170 "$BIN/gpu" -q > "$L/gpu_tests.log" 2>&1; echo "gpu tests rc=$? $((SECONDS-t0))s"; tail -2 "$L/gpu_tests.log"; pack
SITE=$(mktemp -d)
python3 -m pip install -q --no-index --no-deps --target "$SITE" .device/wheels/reduce_rs-*.whl
(cd /tmp && PYTHONPATH="$SITE" timeout 45 python3 -m pytest -q -p no:cacheprovider "$OLDPWD/python/tests" 2>&1) > "$L/pytest.log"; tail -1 "$L/pytest.log"
PYTHONPATH="$SITE" timeout 20 python3 python/examples/greedy_sampler.py --steps 50 > "$L/greedy.log" 2>&1; tail -1 "$L/greedy.log"
pack
line 2
