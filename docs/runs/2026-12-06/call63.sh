#!/usr/bin/env bash
# call 63: the tip's kernels (the 16-bit arg operators' prefetch, the planner's split by SMs,
# arg_op!'s merged at-once arms) against f7a7b29's PTX: every GPU test, then the affected
# shapes two rounds each, and the 16-bit splits around the plan.
set -uo pipefail
cd "$(dirname "$0")/.."
arg16=bf16:argmax:rows:64x128256,bf16:argmax:rows:8x128256,bf16:argmax:rows:1x128256,bf16:argmax:rows:16x4194304,bf16:argmax:rows:32x200000,bf16:argmax:rows:128x262144,bf16:argmax:rows:4096x32768,bf16:argmax:rows:16384x8192,bf16:argmax:rows:32768x4096,f16:argmin:rows:8192x16384,bf16:argmax:whole:2^24,bf16:argmax:whole:2^28,bf16:argmax:segments:100000x300
arg48=f32:argmax:rows:32768x4096,f32:argmax:rows:16384x4096,f32:argmin:rows:8192x8192,f64:argmin:rows:8192x4096,i64:argmax:rows:16384x2048,i32:argmax:rows:16384x4096,u32:argmin:rows:16384x4096,f32:argmax:rows:64x100000
SHAPES=$arg16,$arg48,f32:sum:rows:16x4194304 \
CAPPED=bf16:argmax:rows:64x128256,bf16:argmax:rows:16x4194304,bf16:argmax:rows:32x200000 \
SPLITS=1,2,4,8,16 TESTS=all scripts/against_ptx.sh "$OUT"
