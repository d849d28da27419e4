#!/usr/bin/env bash
# call 62 (H100): prefetch (other PTX) against the shipped loop on the other types' arg
# operators and on max and sums, for the rule of where to prefetch.
set -uo pipefail
SHAPES=f32:argmax:whole:2^28,f64:argmin:whole:2^27,i32:argmax:whole:2^28,f32:argmax:rows:32768x4096,f32:argmax:rows:65536x2048,bf16:max:rows:32768x4096,bf16:sum:whole:2^28,f32:sum:rows:8192x8192,bf16:argmax:whole:2^24 \
CAPPED= TESTS=none scripts/against_ptx.sh $OUT
