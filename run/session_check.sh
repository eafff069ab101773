#!/usr/bin/env bash
# run/session_check.sh - one device call: the whole-project smoke check (run/device_smoke.sh:
# build, every ctest label, quickstart cuda vs cpu) and then the iso `rtm3d bench --matrix`
# (halo x strategy, tile x zblock, compression study) on the 512^3 deck.
#
#   source run/deps.sh env && run/session_check.sh        (device tool: carry .deps)
#
# Files under $OUT (6: the device tool brings back 8): summary.txt, ctest.log, info.txt of
# the smoke check; matrix.{log,csv,json}. Short tables last.
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-run/out/session}"
mkdir -p "$out"
smoke=/tmp/rtm3d_smoke
OUT="$smoke" run/device_smoke.sh > /dev/null 2>&1
cp "$smoke"/{summary.txt,ctest.log,info.txt} "$out"/ 2>/dev/null
run/bench_model.sh
timeout "${MATRIX_TIMEOUT:-330}" build-smoke/app/rtm3d bench run/examples/bench_512.ini --matrix \
  --quiet --csv "$out/matrix.csv" --json "$out/matrix.json" > "$out/matrix.log" 2>&1
echo "matrix: exit $?"
grep -E "^(device|copy)" "$out/matrix.log" | head -3
grep -E "compression|best" "$out/matrix.log" | tail -16
echo
cat "$smoke/validate.txt" "$out/summary.txt"
