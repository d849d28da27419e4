#!/usr/bin/env bash
# This checkout's kernels against another PTX (main's, say) in one binary, on a GPU machine,
# from binaries built elsewhere (the GPU machines have no Rust). Build them where Rust is:
#
#   cargo build --release -p host --bins --examples
#   cargo test --release -p host --test gpu --no-run            # the GPU test binary
#   scripts/pack_bins.sh     # strips and xz-compresses them into .device/bin/
#   mkdir -p .device/other && git show main:reduce/kernels/kernels_gpu.ptx | xz > .device/other/kernels_gpu.ptx.xz
#
# then, from the repository root on the GPU machine:
#
#   [SHAPES=…] [SPLITS=…] [CAPPED=…] [TESTS=…] scripts/against_ptx.sh [OUT]
#
# SHAPES: the bench's cases (`bench --shapes`), timed with the other PTX (`--ptx-dir`) and with
# this checkout's, two rounds each, in one process each; SPLITS and CAPPED: the cases CAPPED
# again with `--splits SPLITS` (this checkout's kernels; `CAPPED=` for none); TESTS: the GPU
# tests' filter (`all` for every case, `none` for none). Defaults: the reproducible mode's
# cases. Everything goes into one OUT/against.tar.xz (a device run brings back at most 8
# files), and the timings of both, side by side, are printed. A device command stops at 10
# minutes: the full GPU tests take 3–6 of them, so with TESTS=all keep SHAPES short.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-${OUT:-against-out}}
whole=f32:sum:whole:2^14,f32:sum:whole:2^16,f32:sum:whole:2^18,f32:sum:whole:2^20,f32:sum:whole:2^22,f32:sum:whole:2^24,f32:sum:whole:2^26,f32:sum:whole:2^28,f64:sum:whole:2^24,bf16:sum:whole:2^24
SHAPES=${SHAPES:-$whole,f32:sum:rows:65536x512,f32:sum:rows:8192x8192,f32:sum:rows:16x4194304,f32:sum:segments:100000x300,f32:sum:columns:4096x4096,f32:sum:columns:1048576x8}
CAPPED=${CAPPED-$whole}
SPLITS=${SPLITS:-1,2,4,8,16,32,64,128,256}
TESTS=${TESTS:-repro}
work=$(mktemp -d)/against
mkdir -p "$work" "$OUT"
[ -s .device/other/kernels_gpu.ptx.xz ] || { echo "no .device/other/kernels_gpu.ptx.xz: the other PTX (see above)"; exit 2; }
# Packed again after every stage: a run cut off by the device's time limit still brings back
# what it finished.
pack() { tar -C "$(dirname "$work")" -cJf "$OUT/against.tar.xz" against; }
. scripts/unpack_bins.sh
R=$BIN/reduce-rs
other=/tmp/other-ptx
mkdir -p "$other" && cp reduce/kernels/kernels_gpu.source-hash "$other/"
xz -dc .device/other/kernels_gpu.ptx.xz > "$other/kernels_gpu.sm_90.ptx"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$work/gpu.txt"

case "$TESTS" in
none) ;;
all) echo "== the GPU tests"; timeout 400 "$BIN/gpu" -q > "$work/gpu_tests.log" 2>&1; tail -2 "$work/gpu_tests.log" ;;
*) echo "== the GPU tests matching $TESTS"; timeout 400 "$BIN/gpu" -q "$TESTS" > "$work/gpu_tests.log" 2>&1; tail -2 "$work/gpu_tests.log" ;;
esac
pack
if [ -x "$BIN/repro_bits" ]; then
  echo "== repro_bits"
  timeout 120 "$BIN/repro_bits" > "$work/repro_bits.txt" 2>&1; tail -2 "$work/repro_bits.txt"
fi

for round in 1 2; do
  timeout 200 "$R" bench --no-cub --no-torch --shapes "$SHAPES" --ptx-dir "$other" --out /tmp/against-other > "$work/other_r$round.log" 2>&1
  timeout 200 "$R" bench --no-cub --no-torch --shapes "$SHAPES" --out /tmp/against-this > "$work/this_r$round.log" 2>&1
  pack
done
if [ -n "$CAPPED" ]; then
  timeout 200 "$R" bench --no-cub --no-torch --shapes "$CAPPED" --splits "$SPLITS" --out /tmp/against-caps > "$work/caps.log" 2>&1
fi
pack

echo "== µs: the other PTX and this checkout's, rounds 1 and 2"
python3 - "$work" <<'PY'
import re, sys
def load(path):
    times = {}
    for line in open(path):
        m = re.match(r'(\S+ \S+ \S+ \S+)\s+(?:reduce-rs|read-only)\s+(\S+)( \*)?\s+([\d.]+)', line)
        if m:
            times[(m.group(1), m.group(2) + (m.group(3) or ''))] = float(m.group(4))
    return times
work = sys.argv[1]
o1, t1, o2, t2 = (load(f'{work}/{name}.log') for name in ('other_r1', 'this_r1', 'other_r2', 'this_r2'))
print(f"{'case':30} {'kernel':40} {'other':>8} {'this':>8} {'other':>8} {'this':>8}  this/other (r2)")
for key, other in o1.items():
    if key in t2 and key in o2:
        print(f"{key[0]:30} {key[1]:40} {other:8.2f} {t1.get(key, 0):8.2f} {o2[key]:8.2f} {t2[key]:8.2f}  {t2[key] / o2[key]:.3f}")
PY
