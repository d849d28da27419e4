# Sourced by the GPU-machine scripts: unpacks `.device/bin/*.xz` (binaries built where Rust is,
# xz-compressed: each embeds the 20 MB of PTX) into /tmp/reduce-bin, and sets BIN to it.
BIN=/tmp/reduce-bin
mkdir -p "$BIN"
for f in .device/bin/*.xz; do
  name=$(basename "$f" .xz)
  # Again where the packed binary changed since (a warm machine keeps /tmp between calls).
  sum=$(cksum <"$f")
  if [ ! -x "$BIN/$name" ] || [ "$(cat "$BIN/$name.cksum" 2>/dev/null)" != "$sum" ]; then
    xz -dc "$f" >"$BIN/$name" && chmod +x "$BIN/$name" && echo "$sum" >"$BIN/$name.cksum"
  fi
done
