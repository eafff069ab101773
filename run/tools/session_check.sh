#!/usr/bin/env bash
# run/tools/session_check.sh [smoke|matrix] - one device call each (the device tool's 10-minute
# limit): `smoke` runs run/tools/device_smoke.sh (build, every ctest label, quickstart cuda vs
# cpu); `matrix` runs the iso `rtm3d bench
# --matrix` (halo x strategy, tile x zblock, compression study) on the 512^3 deck with the
# build `smoke` left behind (call it while the machine is still warm).
#
#   run/tools/session_check.sh smoke     (device tool: carry .deps)
#
# Files under $OUT (the device tool brings back 8): smoke: summary.txt, ctest.log,
# info.txt; matrix: matrix.{log,csv,json}. Short tables last. (A profile of the tti
# kernel: run/tools/tti_profile.sh.)
set -uo pipefail
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/device_env.sh" run/out/session || exit 1 # repo root, $out, .deps, nvcc
build=build-smoke
rtm3d="$build/app/rtm3d"

case "${1:-smoke}" in
smoke)
  smoke=/tmp/rtm3d_smoke
  OUT="$smoke" run/tools/device_smoke.sh > /dev/null 2>&1
  cp "$smoke"/{summary.txt,ctest.log,info.txt} "$out"/ 2>/dev/null
  echo
  cat "$smoke/validate.txt" "$out/summary.txt"
  ;;
matrix)
  run/tools/bench_model.sh iso "$rtm3d"
  timeout "${MATRIX_TIMEOUT:-420}" "$rtm3d" bench run/examples/bench_512.ini --matrix --quiet \
    --csv "$out/matrix.csv" --json "$out/matrix.json" > "$out/matrix.log" 2>&1
  echo "matrix: exit $?"
  grep -E "^(device|copy)" "$out/matrix.log" | head -3
  grep -E "compression|best" "$out/matrix.log" | tail -16
  ;;
*) echo "usage: run/tools/session_check.sh [smoke|matrix]" >&2; exit 2 ;;
esac
