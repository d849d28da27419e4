#!/usr/bin/env bash
# call 53: every 16-byte global load with L1::evict_first (as Triton's reductions load), a sed of
# e7d44fa's PTX (.device/other), against e7d44fa's own, in one binary.
SHAPES=f32:sum:columns:4096x4096,f32:sum:columns:8192x8192,f32:sum:columns:16384x1024,f32:sum:rows:8192x8192,f32:sum:rows:65536x512,f32:max:rows:32768x4096,f32:sum:rows:16x4194304,f32:sum:whole:2^28,f32:argmax:rows:32768x4096,bf16:argmax:rows:64x128256,bf16:sum:columns:8192x8192 \
CAPPED= TESTS=none scripts/against_ptx.sh $OUT
