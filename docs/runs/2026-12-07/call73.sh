#!/usr/bin/env bash
# call 73 (on the machine call 72 left warm): call 72's v8, rows_warp and warp/block-line
# benches again, into one tarball (a device run brings back at most 8 files: call 72's v8 and
# rows_warp logs did not come back).
cd "$(dirname "$0")/.."; . scripts/unpack_bins.sh; . .device/abc.sh; W=$OUT; mkdir -p /tmp/l; OUT=/tmp/l
V8=bf16:argmax:whole:2^12,bf16:argmax:whole:2^13,bf16:argmax:whole:2^14,bf16:argmax:whole:2^15,bf16:argmax:whole:2^16,bf16:argmax:whole:2^20,bf16:argmax:whole:2^22,bf16:argmax:whole:2^23,bf16:argmax:whole:2^24,f16:argmin:whole:2^22
abc "$V8" v8 f7 exp cap
WW=f32:argmax:segments:100000x300,f32:argmax:rows:65536x100,f32:argmax:rows:65536x512,f32:argmax:rows:32768x1024,f32:argmax:rows:16384x2048,f32:argmin:rows:8192x3000,f64:argmin:rows:16384x1024,i32:argmax:rows:65536x256,u64:argmax:segments:100000x300,i64:argmin:rows:32768x512
abc "$WW" warp tip exp
LINE=bf16:argmax:rows:16384x8192,bf16:argmax:rows:8192x12288,bf16:argmax:rows:8192x16384,bf16:argmax:rows:2048x16384,bf16:argmax:rows:1024x16384,bf16:argmax:rows:4096x24576,bf16:argmax:rows:4096x32768,bf16:argmax:rows:1024x32768,bf16:argmax:rows:2048x32768,f16:argmin:rows:8192x16384,f16:argmin:rows:2048x32768,bf16:argmax:segments:20000x20000
abc "$LINE" line tip exp
tar -C /tmp -cJf $W/logs.tar.xz l
