#!/usr/bin/env bash
# Runs every version and element type under compute-sanitizer's four tools, each with
# --error-exitcode 1, and fails on any error, hazard or warning.
#
#   cargo build --release -p host && scripts/sanitize.sh
#   scripts/sanitize.sh path/to/reduce-rs   # another build of the program
#
# Sizes: one element, a block-size-unaligned size and a prime past a million.
set -uo pipefail
HOST=${1:-target/release/reduce-rs}
SIZES=${SIZES:-"1 4097 1000003"}
LOG_DIR=${LOG_DIR:-sanitize-logs}
mkdir -p "$LOG_DIR"

tools=(
  "memcheck --leak-check full --padding 64"
  "racecheck --racecheck-report all"
  "synccheck"
  "initcheck"
)
failures=0
runs=0
for tool in "${tools[@]}"; do
  name=${tool%% *}
  for dtype in f32 f64 i32 u32; do
    for n in $SIZES; do
      # Every operator at the largest size, the sum elsewhere.
      ops="sum"; [ "$n" = "${SIZES##* }" ] && ops="sum min max"
      for op in $ops; do
        log="$LOG_DIR/$name-$dtype-$op-$n.log"
        runs=$((runs + 1))
        compute-sanitizer --tool $tool --error-exitcode 1 \
          "$HOST" all --backend gpu --dtype "$dtype" --op "$op" --n "$n" --warmup 0 --repeat 1 >"$log" 2>&1
        status=$?
        summary=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY" "$log" | tr '\n' ' ')
        # racecheck reports warp-level hazards as warnings, which do not change the exit code:
        # count the hazards in its summary and any warning line outside the summaries.
        hazards=$(grep -oE "RACECHECK SUMMARY: [0-9]+ hazard" "$log" | grep -oE "[0-9]+" || echo 0)
        warnings=$(grep -v "SUMMARY" "$log" | grep -ci "warning" || true)
        if [ "$status" -ne 0 ] || [ "${hazards:-0}" -ne 0 ] || [ "$warnings" -ne 0 ] || ! grep -q "PASS" "$log" || grep -q "FAIL\|ERROR:" "$log"; then
          failures=$((failures + 1))
          echo "FAIL  $name $dtype $op n=$n (exit $status, ${hazards:-0} hazards, $warnings warning lines): $summary  → $log"
        else
          echo "ok    $name $dtype $op n=$n: $summary"
        fi
      done
    done
  done
done
echo "sanitizer: $((runs - failures)) passed, $failures failed"
[ "$failures" -eq 0 ]
