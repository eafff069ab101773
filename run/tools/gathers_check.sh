#!/usr/bin/env bash
# run/tools/gathers_check.sh [BUILD_DIR] - the subsurface-offset and angle gathers on the GPU
# against the cpu backend (issue 38), one call on the GPU machine: build (BUILD=0 keeps
# BUILD_DIR's rtm3d), the gathers' GPU unit tests (test_imaging_gpu: the device kernel
# against the host loop, bit for bit) and test_offset_gathers, then a small survey of
# run/examples/quickstart.ini (96 x 96 x 80 cells, an interface at 400 m, 2 x 2 shots,
# 500 steps) modelled on the cpu and migrated with rtm.offset_lags = 6 on the cpu and on
# cuda: /gathers/offset, /gathers/angle and /image compared (rtol 1e-5, the issue's bar),
# and each migration's wall time; with COST=1 a 512^3 migration without and with gathers
# (below; SURVEY=1: 8 shots).
# Short table last; logs under $OUT (or run/out/gathers_check).
set -uo pipefail
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/device_env.sh" run/out/gathers_check || exit 1
build="${1:-build-cost}"
device_summary
device_build_once "$build" || exit 1
step "gathers' GPU tests"
(cd "$build" && OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
  ctest -R "test_imaging_gpu|test_offset_gathers|test_angle_gathers" --output-on-failure) \
  > "$out/ctest.log" 2>&1 || failed=1
row "ctest gathers" "$(grep -E "tests passed" "$out/ctest.log")"
grep -h "gathers:" "$out/ctest.log" | head -2 | tee -a "$summary"
runs=/dev/shm/rtm3d_gathers_check
rm -rf "$runs" && mkdir -p "$runs"
deck=(run/examples/quickstart.ini --set grid.nx=96 --set grid.ny=96 --set grid.nz=80
  --set boundary.width=12 --set model.interface_z=400 --set model.vp_below=2600
  --set shots.layout=grid --set shots.x_count=2 --set shots.y_count=2 --set shots.z=150
  --set receivers.z=150 --set receivers.x_step=20 --set receivers.y_step=20
  --set receivers.y_first=auto --set receivers.y_count=0 --set time.steps=500
  --set snapshots.every=0 --set output.dir="$runs" --force --quiet)
"$build/app/rtm3d" model "${deck[@]}" --set backend.name=cpu --set output.name=observed \
  > "$out/model.log" 2>&1 || { failed=1; tail -3 "$out/model.log"; }
for backend in cpu cuda; do
  start=$(date +%s.%N)
  "$build/app/rtm3d" migrate "${deck[@]}" --set backend.name=$backend \
    --set rtm.observed="$runs/observed.h5" --set rtm.offset_lags=6 --set rtm.cip_x_step=16 \
    --set rtm.cip_y_step=16 --set output.name=rtm_$backend > "$out/migrate_$backend.log" 2>&1 ||
    { failed=1; tail -3 "$out/migrate_$backend.log"; }
  row "migrate with gathers, $backend" "$(awk -v a="$start" -v b="$(date +%s.%N)" \
    'BEGIN { printf "%.2f s", b - a }')"
done
"$build/app/rtm3d" validate "$runs/rtm_cuda.h5" "$runs/rtm_cpu.h5" --rtol 1e-5 \
  --datasets /gathers/offset,/gathers/angle,/image > "$out/validate.log" 2>&1 || failed=1
grep -E "gathers|image|PASS|FAIL" "$out/validate.log" | tee -a "$summary"
# COST=1: what the gathers add to a 512^3 migration (the issue's bar: +/-16 lags at every
# 16th line, <= 50%): run/examples/bench_512.ini, a constant model, one shot (SURVEY=1: the
# 8 shots of run/results/end_to_end.md's survey, 4 x 2 at z = 200 m), STEPS steps (default
# 1000), receivers every 80 m, migrated on cuda without and with them
if [ "${COST:-0}" = 1 ]; then
  big=(run/examples/bench_512.ini --set backend.name=cuda --set model.file= --set model.vp=2000
    --set model.interface_z=2600 --set model.vp_below=2600 --set time.steps="${STEPS:-1000}"
    --set output.dir="$runs" --force --quiet)
  [ "${SURVEY:-0}" = 1 ] && big+=(--set shots.layout=grid --set shots.x_count=4
    --set shots.y_count=2 --set shots.z=200)
  "$build/app/rtm3d" model "${big[@]}" --set output.name=big_observed > "$out/big_model.log" 2>&1 ||
    { failed=1; tail -3 "$out/big_model.log"; }
  for lags in 0 16; do
    "$build/app/rtm3d" migrate "${big[@]}" --set rtm.observed="$runs/big_observed.h5" \
      --set rtm.offset_lags=$lags --set output.name=big_$lags > "$out/big_migrate_$lags.log" 2>&1 ||
      { failed=1; tail -3 "$out/big_migrate_$lags.log"; }
    row "512^3 migrate, offset_lags $lags" "$(run/tools/report_timings.py "$runs/big_$lags.json" \
      setup forward backward imaging gathers write)"
  done
fi
rm -rf "$runs"
echo
cat "$summary"
exit "$failed"
