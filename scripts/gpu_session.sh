#!/usr/bin/env bash
# One GPU session's checks, from binaries and a wheel built elsewhere (the GPU machines have no
# Rust): `.device/bin/*.xz` (reduce-rs, the GPU test binary `gpu`, the `repro_bits` and
# `overhead` examples, xz-compressed: each embeds the 20 MB of PTX) and `.device/wheels/`.
#
#   scripts/gpu_session.sh tests  OUT   # GPU tests, reproducible bits, v8 beside CUB and read-only
#   scripts/gpu_session.sh shapes OUT   # bench --shapes table (CUB, PyTorch, reproducible twins)
#   scripts/gpu_session.sh python OUT   # the Python package: pytest, example, benchmark, overhead
#
# Build them (where Rust is):
#   cargo build --release -p host --bins --examples && cargo test --release -p host --test gpu --no-run
#   scripts/pack_bins.sh     # strips and xz-compresses them into .device/bin/
#   (cd python && maturin build --release -o ../.device/wheels)
set -uo pipefail
cd "$(dirname "$0")/.."
what=${1:?tests, shapes or python}
OUT=${2:-bench-out/session}
mkdir -p "$OUT"
. scripts/unpack_bins.sh
export PYTHONUNBUFFERED=1
status=0
case "$what" in
tests)
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
  echo "== GPU tests (host/tests/gpu.rs)"
  "$BIN/gpu" -q 2>&1 | tail -4 | tee "$OUT/gpu.log" || status=1
  echo "== reproducible bits (host/examples/repro_bits.rs)"
  "$BIN/repro_bits" >"$OUT/repro_bits.txt" 2>&1 || status=1
  tail -3 "$OUT/repro_bits.txt"
  echo "== bench: v8, CUB, read-only, reproducible (f32, bf16)"
  "$BIN/reduce-rs" bench --dtypes f32,bf16 --versions v8 --sizes 2^10,2^14,2^16,2^18,2^20,2^22,2^24,2^26,2^28 \
    --peers-dir bench --out /tmp/bench-sweep 2>&1 | tee "$OUT/bench_sweep.log" | tail -45 || status=1
  ;;
shapes)
  echo "== bench --shapes table"
  "$BIN/reduce-rs" bench --shapes table --peers-dir bench --out /tmp/bench-shapes 2>&1 |
    tee "$OUT/bench_shapes.log" | grep -v "^bench: " | tail -120 || status=1
  ;;
python)
  scripts/python_gpu.sh .device/wheels "$OUT" || status=1
  ;;
esac
exit $status
