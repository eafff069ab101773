#!/usr/bin/env bash
# run/tools/sinc_cost.sh [BUILD_DIR] - what recording through sinc points costs a step on the
# GPU, one call: build, ctest -L gpu (SKIP_TESTS=1 leaves it out), then `rtm3d
# model` of run/examples/bench_512.ini (iso 512^3, constant 2000 m/s, STEPS steps, default
# 500, kernel.* auto) with a receiver plane at z = 203 m (off the nodes) every 80 m (3481)
# and every 10 m (222784), points.interpolation trilinear and sinc: the report's propagate
# seconds per step. MIGRATE=1 also migrates each (one shot, rtm.reconstruction = boundary,
# the same steps): the backward pass injects every receiver's trace each step, so its
# seconds per step against the forward pass's show what the injection costs. Short table
# last; logs under $OUT (or run/out/sinc_cost).
set -uo pipefail
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/device_env.sh" run/out/sinc_cost || exit 1
build="${1:-build-sinc}"
steps="${STEPS:-500}"
device_summary
device_build "$build" "$out/build.log" || exit 1
[ "${SKIP_TESTS:-0}" = 1 ] || device_gpu_tests "$build" || failed=1
runs=/tmp/rtm3d_sinc_cost
mkdir -p "$runs"
for spacing in 80 10; do
  for points in trilinear sinc; do
    "$build/app/rtm3d" model run/examples/bench_512.ini --set backend.name=cuda --set model.file= \
      --set model.vp=2000 --set time.steps="$steps" --set receivers.x_step="$spacing" \
      --set receivers.y_step="$spacing" --set receivers.z=203 --set source.z=1003 \
      --set points.interpolation="$points" --set output.dir="$runs" --set output.name=r --force \
      --quiet > "$out/model_${spacing}_$points.log" 2>&1 || { failed=1; tail -3 "$out/model_${spacing}_$points.log"; continue; }
    row "receivers every $spacing m, $points" "$(python3 -c "import json; t = json.load(open('$runs/r.json'))['timings_s']; print('%.3f ms a step (propagate %.3f s / $steps)' % (1e3 * t['propagate'] / $steps, t['propagate']))")"
    [ "${MIGRATE:-0}" = 1 ] || continue
    migrate=(--set backend.name=cuda --set model.file= --set model.vp=2000 --set time.steps="$steps"
      --set receivers.x_step="$spacing" --set receivers.y_step="$spacing" --set receivers.z=203
      --set source.z=1003 --set points.interpolation="$points" --set shots.layout=grid
      --set rtm.observed="$runs/o.h5" --set rtm.reconstruction=boundary --set output.dir="$runs"
      --force --quiet)
    "$build/app/rtm3d" model run/examples/bench_512.ini "${migrate[@]}" --set output.name=o \
      > "$out/observed_${spacing}_$points.log" 2>&1 &&
      "$build/app/rtm3d" migrate run/examples/bench_512.ini "${migrate[@]}" --set output.name=m \
        > "$out/migrate_${spacing}_$points.log" 2>&1 ||
      { failed=1; tail -3 "$out/migrate_${spacing}_$points.log"; continue; }
    row "  migrate, boundary" "$(python3 -c "import json; t = json.load(open('$runs/m.json'))['timings_s']; print('forward %.3f, backward %.3f ms a step' % (1e3 * t['forward'] / $steps, 1e3 * t['backward'] / $steps))")"
  done
done
rm -rf "$runs"
(cd "$out" && tar czf logs.tar.gz --remove-files $(ls ./*.log 2>/dev/null))
echo
cat "$summary"
exit "$failed"
