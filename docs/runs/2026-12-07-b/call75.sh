#!/usr/bin/env bash
# call 75: bench --shapes table with PyTorch, CUB and the CUDA twins beside, on whichever GPU
# came (the sources of 46eeddc). An H200 then times `--shapes others`; an H100 the measurements
# stop 42 left: the 16-bit warp/block line at rows of 32 KiB by row count, rows of 16-32 KiB
# between a quarter of the resident warps and all of them, v8's 16-bit argmax by block size.
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/unpack_bins.sh
L=/tmp/call75; rm -rf $L; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$L/gpu.txt"
cp "$L/gpu.txt" "$OUT/"
pack() { tar -C /tmp -cJf "$OUT/call75.tar.xz" call75; }
t0=$SECONDS; timeout 420 $BIN/reduce-rs bench --shapes table --peers-dir bench --out $L/table > $L/table.log 2>&1; echo "table rc=$? $((SECONDS-t0))s"; pack
grep -E '^\S+ \S+ \S+ \S+ +(reduce-rs .*\*|read-only|torch|cub|cuda) ' $L/table.log | sed 's/(fastest peer)//; s/ \* / /' | awk '{print $1,$2,$3,$4,$5,$6,$7}'
case "$(cat $L/gpu.txt)" in
*H200*)
  t0=$SECONDS; timeout $((560-SECONDS)) $BIN/reduce-rs bench --shapes others --peers-dir bench --out $L/others > $L/others.log 2>&1; echo "others rc=$? $((SECONDS-t0))s"; pack ;;
*)
  LINE=bf16:argmax:rows:3584x16384,bf16:argmax:rows:4096x16384,bf16:argmax:rows:4608x16384,bf16:argmax:rows:5120x16384,f16:argmin:rows:5120x16384,bf16:argmax:rows:2048x12288,bf16:argmax:rows:4096x12288,bf16:argmax:rows:2048x8192,bf16:argmax:rows:4096x8192,bf16:argmax:rows:3000x10000
  for r in 1 2; do t0=$SECONDS; timeout 60 $BIN/reduce-rs bench --no-cub --no-torch --shapes "$LINE" --out /tmp/o > $L/line_r$r.log 2>&1; echo "line r$r rc=$? $((SECONDS-t0))s"; done; pack
  xz -dc .device/occ/reduce-rs.xz > /tmp/occ-rs; chmod +x /tmp/occ-rs
  V8=bf16:argmax:whole:2^13,bf16:argmax:whole:2^14,bf16:argmax:whole:2^15,bf16:argmax:whole:2^16,bf16:argmax:whole:2^20,bf16:argmax:whole:2^22,bf16:argmax:whole:2^23,bf16:argmax:whole:2^24,f16:argmin:whole:2^22,f32:argmax:whole:2^22,f64:argmin:whole:2^22,i64:sum:whole:2^22,u64:argmax:whole:2^22,f32:sum:whole:2^22,f64:sum:whole:2^24
  for r in 1 2; do for b in tip occ; do
    [ $SECONDS -gt 540 ] && break 2
    bin=$BIN/reduce-rs; [ $b = occ ] && bin=/tmp/occ-rs
    t0=$SECONDS; timeout 60 $bin bench --no-cub --no-torch --shapes "$V8" --out /tmp/o > $L/v8_${b}_r$r.log 2>&1; echo "v8 $b r$r rc=$? $((SECONDS-t0))s"
  done; done; pack ;;
esac
