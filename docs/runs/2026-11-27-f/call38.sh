#!/usr/bin/env bash
# call 38: the padded last group, loads predicated (new), against head's PTX and against
# rows_split with eight loads in flight (s8, --cfg reduce_exp_split8), two rounds each; then
# the vocabulary argmax by splits with new and s8.
set -uo pipefail
. scripts/unpack_bins.sh
W=/tmp/c38; rm -rf $W; mkdir -p $W
pack() { tar -C /tmp -cJf $OUT/c38.tar.xz c38; }
for v in head s8; do D=/tmp/ptx-$v; mkdir -p $D; for f in .device/$v/*.xz; do xz -dc $f > $D/$(basename $f .xz); done; cp .device/$v/kernels_gpu.source-hash $D/; done
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $W/gpu.txt
S=bf16:argmax:rows:1x128256,bf16:argmax:rows:8x128256,bf16:argmax:rows:64x128256,bf16:argmax:rows:4x200000,f32:argmax:rows:64x100000,f32:sum:segments:100000x300,f32:sum:whole:2^14,f32:sum:whole:2^16,f32:sum:whole:2^18,f32:sum:whole:2^20,f32:sum:whole:2^22,f32:sum:whole:2^28,bf16:argmax:whole:2^20,bf16:argmax:whole:2^28,f32:sum:rows:64x512,f32:sum:rows:16x16384,f32:sum:rows:128x16384,f32:sum:rows:16x4194304,f32:sum:rows:65536x512,f32:sum:rows:8192x8192,f32:max:rows:32768x4096,bf16:argmax:rows:32768x4096
for r in 1 2; do
  for v in head s8 new; do
    if [ $v = new ]; then P=; else P="--ptx-dir /tmp/ptx-$v"; fi
    timeout 90 $BIN/reduce-rs bench --no-cub --no-torch --shapes "$S" $P --out /tmp/o > $W/${v}_r$r.log 2>&1; echo "$v r$r rc=$?"
  done
  pack
done
V=bf16:argmax:rows:1x128256,bf16:argmax:rows:8x128256,bf16:argmax:rows:64x128256,f32:argmax:rows:64x100000
for v in new s8; do
  if [ $v = new ]; then P=; else P="--ptx-dir /tmp/ptx-$v"; fi
  timeout 100 $BIN/reduce-rs bench --no-cub --no-torch --shapes "$V" $P --splits 1,2,3,4,6,8,16,32,64 --out /tmp/o > $W/splits_$v.log 2>&1; echo "splits $v rc=$?"
done
pack
for f in head_r1 s8_r1 new_r1 head_r2 s8_r2 new_r2; do grep -E '^\S+ \S+ \S+ \S+ +(reduce-rs .*\*|read-only)' $W/$f.log | sed 's/ \* / /' | awk -v f=$f '{print f,$1,$2,$3,$4,$5,$7}' ; done > $W/ab.txt
awk '{k=$2" "$3" "$4" "$5" "$6; v[k]=v[k]" "$1"="$7} END{for(k in v) print k, v[k]}' $W/ab.txt | sort
for v in new s8; do grep -E 'reduce-rs' $W/splits_$v.log | sed 's/ \* / split=planned /' | grep split | awk -v v=$v '{print v,$1,$2,$3,$4,$7,$8}'; done
