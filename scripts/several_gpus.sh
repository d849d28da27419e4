#!/usr/bin/env bash
# The several-GPU checks and timings, on a machine with two or more GPUs and NCCL, from binaries
# built elsewhere (no toolchain needed here):
#
#   cargo build --release -p host -p reduce-rs --examples --bins
#   cargo test --release -p host --test devices_gpu --no-run     # prints the test binary's path
#   mkdir -p .device/bin && strip -o .device/bin/ranks target/release/examples/ranks \
#     && strip -o .device/bin/reduce-rs target/release/reduce-rs \
#     && strip -o .device/bin/devices_gpu target/release/deps/devices_gpu-<hash>
#
# then, from the repository root on the GPU machine: scripts/several_gpus.sh [OUT]
# Writes every log to OUT (default several-gpus-out). NVLink multicast stays off
# (NCCL_NVLS_ENABLE=0, as the library also sets when it is unset).
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-.device/bin}
OUT=${1:-${OUT:-several-gpus-out}}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0
WORLD=${WORLD:-$(nvidia-smi -L | wc -l)}
status=0
step() { printf '\n== %s\n' "$*"; }
nvidia-smi topo -m >"$OUT/topo.txt" 2>&1

step "tests: every operation over every GPU, and two ranks in threads, against one GPU"
"$BIN/devices_gpu" --test-threads 1 2>&1 | tee "$OUT/devices_gpu.txt" || status=1

step "timings: one process per GPU ($WORLD ranks)"
id="/tmp/reduce-nccl-id-$$"
rm -f "$id"
for rank in $(seq 1 $((WORLD - 1))); do
  RANK=$rank WORLD_SIZE=$WORLD LOCAL_RANK=$rank REDUCE_NCCL_ID_FILE=$id \
    "$BIN/ranks" >"$OUT/ranks_rank$rank.txt" 2>&1 &
done
RANK=0 WORLD_SIZE=$WORLD LOCAL_RANK=0 REDUCE_NCCL_ID_FILE=$id \
  "$BIN/ranks" 2>&1 | tee "$OUT/ranks_per_process.txt" || status=1
wait || status=1
cat "$OUT"/ranks_rank*.txt

step "timings: one process driving every GPU"
"$BIN/ranks" --single 2>&1 | tee "$OUT/ranks_single.txt" || status=1

step "CLI: reduce-rs v8 --devices all, every operation, checked against the CPU reference"
for op in sum min max argmin argmax mean; do
  "$BIN/reduce-rs" v8 --devices all --n '2^28+3' --op "$op" || status=1
done 2>&1 | tee "$OUT/cli.txt"
"$BIN/reduce-rs" v8 --devices 1 --n '2^24' --op sum 2>&1 | tee -a "$OUT/cli.txt" || status=1

step "CLI: the reproducible mode gives one GPU's bits on every GPU count"
for dtype in f32 f64 bf16; do
  for n in 1 $WORLD; do
    "$BIN/reduce-rs" v8 --devices "$n" --n '2^28+3' --dtype "$dtype" --reproducible || status=1
  done
done 2>&1 | tee "$OUT/cli_reproducible.txt"

step "bench --devices all (one GPU alone, every GPU in one process, PyTorch + NCCL one process per GPU)"
"$BIN/reduce-rs" bench --devices all --out "$OUT/bench" 2>&1 | tee "$OUT/bench.txt" || status=1

exit $status
