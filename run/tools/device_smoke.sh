#!/usr/bin/env bash
# run/tools/device_smoke.sh - the whole project on a GPU machine in one call: build (kernels for
# sm_90), every ctest label (gpu included), `rtm3d info`, and the quickstart run on the
# cuda backend validated against the same run on the cpu reference.
#
#   run/tools/device_smoke.sh      (device tool: carry .deps)
#
# Logs go to $OUT (or run/out/smoke); a short table is printed last.
set -uo pipefail
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/device_env.sh" run/out/smoke || exit 1 # repo root, $out, .deps, nvcc
build=build-smoke
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

row() { printf '%-34s %s\n' "$1" "$2" >> "$out/summary.txt"; }
: > "$out/summary.txt"
row "device" "$(device_info | sed -n 2p)" # the first GPU's csv row (the file limit: no device.txt)

if ! device_configure "$build" > "$out/cmake.log" 2>&1; then
  tail -30 "$out/cmake.log"; exit 1
fi
if ! ninja -C "$build" > "$out/build.log" 2>&1; then
  grep -E "error|FAILED" -A4 "$out/build.log" | head -60; exit 1
fi
row "build" "ok ($(grep -c warning "$out/build.log") warning lines)"

OMP_NUM_THREADS=8 ctest --test-dir "$build" --output-on-failure -j 2 > "$out/ctest.log" 2>&1
row "ctest (all labels)" "$(grep -E 'tests passed' "$out/ctest.log")"
grep -E "^\s+[0-9]+ - .*(Failed|Not Run|Timeout|Skipped)" "$out/ctest.log" | sed 's/^/    /' >> "$out/summary.txt"

"$build/app/rtm3d" info > "$out/info.txt" 2>&1
row "rtm3d info" "$(grep -E '^GPU 0' "$out/info.txt")"

work="$(mktemp -d)"
deck=run/examples/quickstart.ini
"$build/app/rtm3d" model "$deck" --set output.dir="$work" --set output.name=gpu --quiet \
  > "$out/quickstart.log" 2>&1
row "quickstart, backend auto" "exit $? ($(grep -o '"backend": "[a-z]*"' "$work/gpu.json" 2>/dev/null), $(grep -o '"mcells_per_s": [0-9.]*' "$work/gpu.json" 2>/dev/null))"
OMP_NUM_THREADS=16 "$build/app/rtm3d" model "$deck" --set output.dir="$work" \
  --set output.name=cpu --set backend.name=cpu --quiet >> "$out/quickstart.log" 2>&1
row "quickstart, backend cpu" "exit $? ($(grep -o '"mcells_per_s": [0-9.]*' "$work/cpu.json" 2>/dev/null))"
"$build/app/rtm3d" validate "$work/gpu.h5" "$work/cpu.h5" --rtol 1e-5 > "$out/validate.txt" 2>&1
row "validate gpu vs cpu (rtol 1e-5)" "exit $? (0 = every dataset within tolerance)"
cp "$work/gpu.json" "$out/quickstart_gpu.json" 2>/dev/null
rm -rf "$work"

echo
cat "$out/validate.txt"
echo
cat "$out/summary.txt"
