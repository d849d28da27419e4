#!/usr/bin/env bash
# Sourced: bench the shapes $1 with each named PTX (f7 = f7a7b29, tip = 1c24278, exp = built in:
# the prefetch in rows_split and rows_block too), two rounds interleaved, logs into $OUT/$2_<ptx>_r<round>.log.
# usage: abc SHAPES TAG PTX...
abc() {
  local shapes=$1 tag=$2; shift 2
  for round in 1 2; do
    for p in "$@"; do
      if [ "$p" = exp ]; then dir=(); else
        mkdir -p /tmp/ptx-$p && cp .device/exp.source-hash /tmp/ptx-$p/kernels_gpu.source-hash
        [ -s /tmp/ptx-$p/kernels_gpu.sm_90.ptx ] || xz -dc .device/$p/kernels_gpu.ptx.xz > /tmp/ptx-$p/kernels_gpu.sm_90.ptx
        dir=(--ptx-dir /tmp/ptx-$p)
      fi
      local t0=$SECONDS
      timeout 280 $BIN/reduce-rs bench --no-cub --no-torch --shapes "$shapes" "${dir[@]}" --out /tmp/o > "$OUT/${tag}_${p}_r$round.log" 2>&1
      echo "$tag $p r$round rc=$? $((SECONDS-t0))s"
    done
  done
}
