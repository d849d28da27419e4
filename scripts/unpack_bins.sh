# Sourced by the GPU-machine scripts: unpacks `.device/bin/*.xz` (binaries built where Rust is,
# xz-compressed: each embeds the 20 MB of PTX) into /tmp/reduce-bin once, and sets BIN to it.
BIN=/tmp/reduce-bin
mkdir -p "$BIN"
for f in .device/bin/*.xz; do
  name=$(basename "$f" .xz)
  [ -x "$BIN/$name" ] || { xz -dc "$f" >"$BIN/$name" && chmod +x "$BIN/$name"; }
done
