#!/usr/bin/env bash
# call 77: the sources of ec8a4f4 (landed). An H200: `bench --shapes table`, then `others`, with
# PyTorch, CUB and the CUDA twins beside (README's H200 tables). An H100: the GPU tests, then
# the spread rule between a quarter and half of the resident lanes (every lane count of
# rows_warp by --splits, two rounds) and rows of 32 KiB with more lanes.
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/unpack_bins.sh
L=/tmp/call77; rm -rf $L; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$L/gpu.txt"
pack() { tar -C /tmp -cJf "$OUT/call77.tar.xz" call77; }
case "$(cat $L/gpu.txt)" in
*H200*)
  t0=$SECONDS; timeout 330 $BIN/reduce-rs bench --shapes table --peers-dir bench --out $L/table > $L/table.log 2>&1; echo "table rc=$? $((SECONDS-t0))s"; pack
  grep -E ' (reduce-rs .*\*|read-only|torch|cub|cuda) ' $L/table.log | awk '{print $1,$2,$3,$4,$5,$6,$7,$8}' | head -80
  t0=$SECONDS; timeout $((580-SECONDS)) $BIN/reduce-rs bench --shapes others --peers-dir bench --out $L/others > $L/others.log 2>&1; echo "others rc=$? $((SECONDS-t0))s"; pack ;;
*)
  t0=$SECONDS; timeout 240 $BIN/gpu -q > $L/gpu_tests.log 2>&1; echo "gpu tests rc=$? $((SECONDS-t0))s"; tail -n 3 $L/gpu_tests.log; pack
  MID=bf16:argmax:rows:6144x8192,bf16:argmax:rows:8192x8192,bf16:argmax:rows:10240x8192,bf16:argmax:rows:12288x4096,bf16:argmax:rows:16384x4096,bf16:argmax:rows:20480x4096,bf16:argmax:rows:3072x12288,bf16:argmax:rows:4096x12288,f16:argmin:rows:6144x8192,f32:argmax:rows:6000x1000,f32:argmax:rows:8000x1000,f32:sum:rows:6000x512,f32:max:rows:3000x2048,bf16:argmax:rows:1024x16384,bf16:argmax:rows:2048x16384,bf16:argmax:rows:3072x16384
  mid() { t0=$SECONDS; timeout $(($2-SECONDS)) $BIN/reduce-rs bench --no-cub --no-torch --shapes "$MID" --splits 4,8,16,32 --out /tmp/o > $L/mid_r$1.log 2>&1; echo "mid r$1 rc=$? $((SECONDS-t0))s"; pack; }
  mid 1 330
  SITE=/tmp/site; rm -rf $SITE; python3 -m pip install -q --no-index --no-deps --target $SITE .device/wheels/reduce_rs-*.whl
  t0=$SECONDS; (cd /tmp && PYTHONPATH=$SITE PYTHONUNBUFFERED=1 timeout $((520-SECONDS)) python3 $OLDPWD/python/bench/bench_torch.py --compile --csv $L/py_bench.csv > $L/py_bench.log 2>&1); echo "py bench rc=$? $((SECONDS-t0))s"; pack
  [ $SECONDS -lt 480 ] && mid 2 575
  ;;
esac
