#!/usr/bin/env bash
# run/session_check.sh [smoke|matrix] - one device call each (the device tool's 10-minute
# limit): `smoke` runs run/device_smoke.sh (build, every ctest label, quickstart cuda vs
# cpu) and profiles one 512^3 tti step with ncu; `matrix` runs the iso `rtm3d bench
# --matrix` (halo x strategy, tile x zblock, compression study) on the 512^3 deck with the
# build `smoke` left behind (call it while the machine is still warm).
#
#   source run/deps.sh env && run/session_check.sh smoke     (device tool: carry .deps)
#
# Files under $OUT (the device tool brings back 8): smoke: summary.txt, ctest.log,
# info.txt, ncu_tti.txt; matrix: matrix.{log,csv,json}. Short tables last.
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-run/out/session}"
mkdir -p "$out"
build=build-smoke
rtm3d="$build/app/rtm3d"
tti=(--set physics.equation=tti --set model.file= --set model.epsilon=0.2 --set model.delta=0.1
  --set model.theta=30 --set model.phi=20 --set kernel.halo=sync --set kernel.block_x=32
  --set kernel.block_y=8 --set kernel.zblock=32)

case "${1:-smoke}" in
smoke)
  smoke=/tmp/rtm3d_smoke
  OUT="$smoke" run/device_smoke.sh > /dev/null 2>&1
  cp "$smoke"/{summary.txt,ctest.log,info.txt} "$out"/ 2>/dev/null
  timeout 200 ncu --clock-control none -k regex:tti_zmarch --launch-skip 3 --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy \
    --section WarpStateStats --section LaunchStats --section ComputeWorkloadAnalysis \
    --section InstructionStats --section SchedulerStats \
    "$rtm3d" bench run/examples/bench_512.ini --quiet --set bench.warmup=3 --set bench.steps=1 \
    "${tti[@]}" > "$out/ncu_tti.txt" 2>&1
  grep -E "^ +(Duration|DRAM Throughput|L2 Cache Throughput|L1/TEX Cache Throughput|Compute \(SM\) Throughput|Achieved Occupancy|Registers Per Thread|Warp Cycles Per Issued|Issue Slots Busy|Executed Ipc Active|No Eligible)" \
    "$out/ncu_tti.txt" | head -14
  echo
  cat "$smoke/validate.txt" "$out/summary.txt"
  ;;
matrix)
  run/bench_model.sh iso
  timeout "${MATRIX_TIMEOUT:-420}" "$rtm3d" bench run/examples/bench_512.ini --matrix --quiet \
    --csv "$out/matrix.csv" --json "$out/matrix.json" > "$out/matrix.log" 2>&1
  echo "matrix: exit $?"
  grep -E "^(device|copy)" "$out/matrix.log" | head -3
  grep -E "compression|best" "$out/matrix.log" | tail -16
  ;;
*) echo "usage: run/session_check.sh [smoke|matrix]" >&2; exit 2 ;;
esac
