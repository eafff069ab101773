#!/usr/bin/env bash
# run/experiments/iso_sass_profile.sh [BUILD_DIR] - where the iso kernel's issue slots go
# (issue 34, item 5), on the GPU machine in one call: ncu (--clock-control none) of one step
# of `rtm3d bench run/examples/bench_512.ini` (512^3, a constant model, the table's shape)
# with the source counters, printed a SASS instruction a line (its executed warp
# instructions and its stall samples) as CSV. Files under $OUT (or run/out/iso_sass_profile):
# sass.csv (the kernel's instructions), ncu.txt (the run), issued.txt (where the issue slots
# go: run/tools/sass_stalls_top.py --issued, printed last).
set -uo pipefail
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/../tools/device_env.sh" run/out/iso_sass_profile || exit 1
device_summary
build="${1:-build-new}"
device_build_once "$build" || exit 1
report="$(mktemp -d)/iso"
timeout 240 ncu --clock-control none -k regex:iso_zmarch --launch-skip 3 --launch-count 1 \
  --section SourceCounters --section WarpStateStats --import-source no -o "$report" \
  "$build/app/rtm3d" bench run/examples/bench_512.ini --quiet --set model.file= \
  --set bench.warmup=3 --set bench.steps=1 > "$out/ncu.txt" 2>&1
echo "ncu exit $?"
ncu -i "$report.ncu-rep" --page source --csv --print-source sass > "$out/sass.csv" 2>>"$out/ncu.txt"
echo "source page exit $? ($(wc -l < "$out/sass.csv") lines)"
# the issue slots: in all and a cell (512^3), by opcode, by block of the code, the top 30
run/tools/sass_stalls_top.py --issued "$out/sass.csv" $((512 * 512 * 512)) 30 | tee "$out/issued.txt"
