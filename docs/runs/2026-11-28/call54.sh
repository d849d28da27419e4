#!/usr/bin/env bash
# call 54: f32's arg operators by each group's best key (`--cfg reduce_exp_f32_search`: the first
# group searched at once by bits, later winners after the walk), as .device/other, against the
# shipped tree, two rounds, every kernel of each shape.
SHAPES=f32:argmax:rows:32768x4096,f32:argmax:rows:16384x4096,f32:argmax:rows:8192x8192,f32:argmax:rows:64x100000,f32:argmax:rows:8x128256,f32:argmin:rows:65536x512,f32:argmax:rows:65536x100,f32:argmax:segments:100000x300,f32:argmax:whole:2^26,f32:argmax:columns:4096x4096 \
CAPPED= TESTS=none scripts/against_ptx.sh $OUT
