#!/usr/bin/env bash
# call 65: where a block per row overtakes a warp per row for the 16-bit arg operators now
# that rows_block issues its next group's loads early and rows_warp does not: the tip's
# kernels, every kernel of each shape, two rounds.
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/unpack_bins.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$OUT/gpu.txt"
S=bf16:argmax:rows:16384x8192,bf16:argmax:rows:8192x12288,bf16:argmax:rows:8192x16384,bf16:argmax:rows:2048x16384,bf16:argmax:rows:1024x16384,bf16:argmax:rows:4096x24576,bf16:argmax:rows:4096x32768,bf16:argmax:rows:1024x32768,bf16:argmax:rows:2048x32768,f16:argmin:rows:8192x16384,f16:argmin:rows:2048x32768,bf16:argmax:segments:20000x20000
for round in 1 2; do
  timeout 250 $BIN/reduce-rs bench --no-cub --no-torch --shapes "$S" --out /tmp/o > "$OUT/lines_r$round.log" 2>&1
done
grep -hE 'rows_(warp|block)' "$OUT/lines_r2.log" | awk '{print $1,$2,$3,$4,$6,$7,$8}'
