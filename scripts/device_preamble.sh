# Sourced by a GPU-machine run script (`.device/callNN.sh`, archived under docs/runs/) with
# RUN set to the run's name: unpacks the binaries (BIN), makes the log folder L=/tmp/$RUN, writes
# the GPU's name, driver and clock into $L/gpu.txt (and shows them), and defines
#   pack        tar $L into $OUT/$RUN.tar.xz (call it after each step: a step cut off by the
#               time limit still leaves the logs of those before it)
#   summ LOG    the rows of $L/LOG.log where reduce-rs is starred (fastest), reproducible left out
#   wheel       install the abi3 wheel of .device/wheels into SITE=/tmp/site
. scripts/unpack_bins.sh
L=/tmp/${RUN:?set RUN to the run name before sourcing}
rm -rf "$L" && mkdir -p "$L"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$L/gpu.txt"
pack() { tar -C /tmp -cJf "$OUT/$RUN.tar.xz" "$RUN"; }
summ() { grep -E '^\S+ \S+ \S+ \S+ +reduce-rs .*\*' "$L/$1.log" | grep -v reproducible | awk '{print $1,$2,$3,$4,$6,$7,$8}'; }
wheel() {
  SITE=/tmp/site
  rm -rf "$SITE" && python3 -m pip install -q --no-index --no-deps --target "$SITE" .device/wheels/reduce_rs-*.whl
}
