#!/usr/bin/env bash
# Where Rust is: strips and xz-compresses the release binaries that the GPU-machine scripts
# unpack (`scripts/unpack_bins.sh`) into `.device/bin/` (git-ignored; a device run carries it).
# Build them first:
#
#   cargo build --release -p host --bins --examples
#   cargo test --release -p host --test gpu --no-run      # the GPU test binary
#   scripts/pack_bins.sh
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .device/bin
rm -f .device/bin/*
# The newest GPU test binary (cargo names it gpu-<hash>; the .d beside it is not one).
gpu=$(ls -t target/release/deps/gpu-* | grep -v '\.d$' | head -1)
strip -o .device/bin/gpu "$gpu"
strip -o .device/bin/reduce-rs target/release/reduce-rs
for example in repro_bits overhead; do
  if [ -f "target/release/examples/$example" ]; then
    strip -o ".device/bin/$example" "target/release/examples/$example"
  fi
done
xz -T0 -6 .device/bin/*
ls -la .device/bin
