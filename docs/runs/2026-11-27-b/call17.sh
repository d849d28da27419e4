#!/usr/bin/env bash
# call 17 (H100): the f32 arg operators with a group's best key found by max.f32 — three ways —
# against the previous PTX ("old", b2ff299: a key per lane, a tree), in one binary, two rounds:
# new (embedded): a group that wins is pending, searched once after the walk (a reload);
# tree: arg operators keep the tree (max and min by max.f32 only);
# atonce: a group that wins is searched at once (its vectors still in registers), no reload.
set -uo pipefail
. scripts/unpack_bins.sh
W=/tmp/c17; rm -rf $W; mkdir -p $W
pack() { tar -C /tmp -cJf $OUT/c17.tar.xz c17; }
for v in old tree atonce; do d=/tmp/ptx-$v; mkdir -p $d; cp reduce/kernels/kernels_gpu.source-hash $d/; xz -dc .device/exp/$v.ptx.xz > $d/kernels_gpu.sm_90.ptx; done
for v in old tree atonce; do timeout 200 $BIN/reduce-rs bench --no-cub --no-torch --repeat 1 --warmup 0 --shapes f32:max:rows:64x512 --ptx-dir /tmp/ptx-$v --out /tmp/w$v > $W/warm_$v.log 2>&1 & done
timeout 200 $BIN/reduce-rs bench --no-cub --no-torch --repeat 1 --warmup 0 --shapes f32:max:rows:64x512 --out /tmp/wn > $W/warm_new.log 2>&1 &
wait
S=f32:argmax:rows:32768x2048,f32:argmax:whole:2^28,f32:argmax:whole:2^22,f32:argmax:rows:64x128256,f32:argmax:rows:8x128256,f32:argmin:segments:100000x300,f32:argmin:rows:65536x512,f32:argmax:rows:16384x4096,f32:max:rows:32768x4096
for round in 1 2; do
  for v in old tree atonce; do timeout 100 $BIN/reduce-rs bench --no-cub --no-torch --shapes "$S" --ptx-dir /tmp/ptx-$v --out /tmp/o > $W/${v}_r$round.log 2>&1; done
  timeout 100 $BIN/reduce-rs bench --no-cub --no-torch --shapes "$S" --out /tmp/o > $W/new_r$round.log 2>&1
  pack
done
for v in old tree atonce new; do echo "== $v"; grep -h 'reduce-rs.*\*' $W/${v}_r1.log $W/${v}_r2.log | awk '{print $1,$2,$3,$4,$8}' | sort | awk '{k=$1" "$2" "$3" "$4; a[k]=a[k]" "$5} END{for(k in a) print k, a[k]}' | sort; done
