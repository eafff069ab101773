#!/usr/bin/env bash
# run/tools/gathers_check.sh [BUILD_DIR] - the subsurface-offset and angle gathers on the GPU
# against the cpu backend (issue 38), one call on the GPU machine: build (BUILD=0 keeps
# BUILD_DIR's rtm3d), the gathers' GPU unit tests (test_imaging_gpu: the device kernel
# against the host loop, bit for bit) and test_offset_gathers, then a small survey of
# run/examples/quickstart.ini (96 x 96 x 80 cells, an interface at 400 m, 2 x 2 shots,
# 500 steps) modelled on the cpu and migrated with rtm.offset_lags = 6 on the cpu and on
# cuda: /gathers/offset and /gathers/angle compared at rtol 1e-5 (the issue's bar), /image
# at 1e-4 (test_migration_gpu's bar for a cuda image against the cpu's), and the image
# unfiltered (rtm.laplacian and rtm.illumination off, a second migration on each backend)
# at 1e-5, and each migration's wall time; with COST=1 a 512^3 migration without and with gathers
# (below; SURVEY=1: 8 shots; BASE=SRC, a source folder of an earlier tree made before the
# call: its build's migration with gathers too, on the same gathers, alternated with the
# tree's, and the two /gathers/offset compared bit for bit; SAVES=1: the tree's with gathers
# again at rtm.resume_every = 0, a state saved after every shot, its wall and gathers against
# the default cadence's). On the small survey the cuda migration with gathers is also stopped
# after 2 shots (--max-shots) and resumed: its gathers, angle gathers and image against the
# uninterrupted cuda run's, bit for bit. GPU_TESTS=1: ctest -L gpu first.
# Short table last; logs under $OUT (or run/out/gathers_check).
set -uo pipefail
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/device_env.sh" run/out/gathers_check || exit 1
build="${1:-build-cost}"
device_prepare "$build" || exit 1
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
for backend in cpu cuda; do
  "$build/app/rtm3d" migrate "${deck[@]}" --set backend.name=$backend \
    --set rtm.observed="$runs/observed.h5" --set rtm.laplacian=false \
    --set rtm.illumination=false --set output.name=raw_$backend >"$out/raw_$backend.log" 2>&1 ||
    { failed=1; tail -3 "$out/raw_$backend.log"; }
done
# stopped after 2 shots of 4 and resumed: the uninterrupted run's to the bit
resumed=("$build/app/rtm3d" migrate "${deck[@]}" --set backend.name=cuda
  --set rtm.observed="$runs/observed.h5" --set rtm.offset_lags=6 --set rtm.cip_x_step=16
  --set rtm.cip_y_step=16 --set output.name=resumed_cuda)
"${resumed[@]}" --max-shots=2 > "$out/resumed_cuda.log" 2>&1 || failed=1
"${resumed[@]}" >> "$out/resumed_cuda.log" 2>&1 || failed=1
"$build/app/rtm3d" validate "$runs/resumed_cuda.h5" "$runs/rtm_cuda.h5" --rtol 0 --atol 0 \
  --datasets /image,/gathers/offset,/gathers/angle > "$out/validate_resumed.log" 2>&1 || failed=1
row "cuda, stopped after 2 shots and resumed" "$(tail -1 "$out/validate_resumed.log")"
for check in "1e-5 rtm /gathers/offset,/gathers/angle" "1e-4 rtm /image" "1e-5 raw /image"; do
  read -r rtol name datasets <<<"$check"
  "$build/app/rtm3d" validate "$runs/${name}_cuda.h5" "$runs/${name}_cpu.h5" --rtol "$rtol" \
    --datasets "$datasets" >"$out/validate_${name}_$rtol.log" 2>&1 || failed=1
  grep -E "^/" "$out/validate_${name}_$rtol.log" | sed "s|^|$name, rtol $rtol: |" | tee -a "$summary"
done
# COST=1: what the gathers add to a 512^3 migration (the issue's bar: +/-16 lags at every
# 16th line, <= 50%): run/examples/bench_512.ini, a constant model, one shot (SURVEY=1: the
# 8 shots of run/results/end_to_end.md's survey, 4 x 2 at z = 200 m), STEPS steps (default
# 1000), receivers every 80 m, migrated on cuda without and with them; each run's phases
# summed (setup, forward, backward, imaging with the gathers' share in it, read, filters,
# figures, write) and its wall against the run without gathers
if [ "${COST:-0}" = 1 ]; then
  big=(run/examples/bench_512.ini --set backend.name=cuda --set model.file= --set model.vp=2000
    --set model.interface_z=2600 --set model.vp_below=2600 --set time.steps="${STEPS:-1000}"
    --set output.dir="$runs" --force --quiet)
  [ "${SURVEY:-0}" = 1 ] && big+=(--set shots.layout=grid --set shots.x_count=4
    --set shots.y_count=2 --set shots.z=200)
  "$build/app/rtm3d" model "${big[@]}" --set output.name=big_observed > "$out/big_model.log" 2>&1 ||
    { failed=1; tail -3 "$out/big_model.log"; }
  runs_of=("tree 0:$build/app/rtm3d" "tree 16:$build/app/rtm3d")
  if [ -n "${BASE:-}" ]; then
    base_src="$(realpath "$BASE")"
    (cd "$base_src" && device_build build-base "$out/build_base.log") ||
      { row "build (base)" FAILED; exit 1; }
    runs_of+=("base 16:$base_src/build-base/app/rtm3d" "tree 16:$build/app/rtm3d")
  fi
  for run in "${runs_of[@]}"; do
    name="${run%%:*}" binary="${run#*:}"
    lags="${name#* }" tag="${name// /_}"
    start=$(date +%s.%N)
    "$binary" migrate "${big[@]}" --set rtm.observed="$runs/big_observed.h5" \
      --set rtm.offset_lags="$lags" --set output.name="big_$tag" >>"$out/big_migrate_$tag.log" 2>&1 ||
      { failed=1; tail -3 "$out/big_migrate_$tag.log"; }
    wall=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
    row "512^3 migrate, $name, offset_lags $lags" "wall $wall s, $(run/tools/report_timings.py \
      "$runs/big_$tag.json" setup forward backward imaging gathers angle_gathers filters figures write \
      hold_sums summed_behind)"
    phases="$(python3 -c "import sys; sys.path.insert(0, 'run/tools')
from report_timings import timings
t = timings(sys.argv[1])
print('%.3f' % sum(t.get(k, 0.0) for k in ('setup', 'forward', 'backward', 'imaging', 'read',
                                         'filters', 'figures', 'write')))" "$runs/big_$tag.json")"
    [ "$lags" = 0 ] && without="$phases" without_wall="$wall"
    row "  its phases' sum" "$phases s$([ "$lags" != 0 ] && [ -n "${without:-}" ] &&
      python3 -c "import sys; a, b, c, d = map(float, sys.argv[1:]); print(', %+.1f%% against no gathers (the wall %+.1f%%)' % (100 * (a / b - 1), 100 * (c / d - 1)))" "$phases" "$without" "$wall" "$without_wall")"
  done
  if [ "${SAVES:-0}" = 1 ]; then # a state after every shot, written behind the next
    start=$(date +%s.%N)
    "$build/app/rtm3d" migrate "${big[@]}" --set rtm.observed="$runs/big_observed.h5" \
      --set rtm.offset_lags=16 --set rtm.resume_every=0 --set output.name=big_saves \
      >> "$out/big_migrate_saves.log" 2>&1 || { failed=1; tail -3 "$out/big_migrate_saves.log"; }
    row "512^3, offset_lags 16, resume_every 0" "$(awk -v a="$start" -v b="$(date +%s.%N)" \
      'BEGIN { printf "wall %.2f s", b - a }'), $(run/tools/report_timings.py \
      "$runs/big_saves.json" imaging write written_behind)"
    row "  the same at the default cadence" "$(run/tools/report_timings.py \
      "$runs/big_tree_16.json" imaging write written_behind)"
    "$build/app/rtm3d" validate "$runs/big_saves.h5" "$runs/big_tree_16.h5" --rtol 0 --atol 0 \
      --datasets /gathers/offset,/image > "$out/validate_saves.log" 2>&1 || failed=1
    row "  saves against none" "$(tail -1 "$out/validate_saves.log")"
  fi
  if [ -n "${BASE:-}" ]; then
    "$build/app/rtm3d" validate "$runs/big_tree_16.h5" "$runs/big_base_16.h5" --rtol 0 --atol 0 \
      --datasets /gathers/offset,/image > "$out/validate_base.log" 2>&1 || failed=1
    grep -E "^/" "$out/validate_base.log" | sed 's/^/tree against base: /' | tee -a "$summary"
  fi
fi
rm -rf "$runs"
echo
cat "$summary"
exit "$failed"
