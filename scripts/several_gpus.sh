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
# (.device/bin/ranks is the library's usage example of Rank, run here as a check; the timings
# are reduce-rs bench --ranks and bench --devices.)
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

# One process per GPU, as torchrun starts them: `per_rank NAME COMMAND…` runs COMMAND once per
# rank (RANK, WORLD_SIZE, LOCAL_RANK, a fresh REDUCE_NCCL_ID_FILE), rank 0 in the foreground.
per_rank() {
  local name=$1 id="/tmp/reduce-nccl-id-$$-$1" rank pid pids=()
  shift
  rm -f "$id"
  for rank in $(seq 1 $((WORLD - 1))); do
    RANK=$rank WORLD_SIZE=$WORLD LOCAL_RANK=$rank REDUCE_NCCL_ID_FILE=$id \
      "$@" >"$OUT/${name}_rank$rank.txt" 2>&1 &
    pids+=($!)
  done
  RANK=0 WORLD_SIZE=$WORLD LOCAL_RANK=0 REDUCE_NCCL_ID_FILE=$id \
    "$@" 2>&1 | tee "$OUT/${name}_rank0.txt" || status=1
  for pid in "${pids[@]}"; do
    wait "$pid" || status=1
  done
  cat "$OUT/${name}"_rank[1-9]*.txt 2>/dev/null
}

step "example: reduce/examples/ranks.rs, one process per GPU ($WORLD ranks)"
per_rank example "$BIN/ranks"

step "timings: bench --ranks, one process per GPU ($WORLD ranks)"
per_rank bench_ranks "$BIN/reduce-rs" bench --ranks --out "$OUT/bench_ranks"

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

step "timings: bench --devices all, one process driving every GPU (then PyTorch + NCCL, one process per GPU)"
"$BIN/reduce-rs" bench --devices all --out "$OUT/bench" 2>&1 | tee "$OUT/bench.txt" || status=1

exit $status
