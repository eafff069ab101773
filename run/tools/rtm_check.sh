#!/usr/bin/env bash
# run/tools/rtm_check.sh [BUILD_DIR] - reverse-time migration on a GPU machine, one call:
# build, every gpu test (the imaging pieces, cuda migrations against cpu, the cuda
# propagator moved between shots, the boundary reconstruction), compute-sanitizer memcheck
# of a short cuda migration and of the boundary rebuild, and the migrate / model time per
# shot on 512^3 (iso and tti, one shot, STEPS steps, default 1000): model the shot's gather,
# migrate it with snapshots and with boundary, and read the reports. Short table
# last; logs under $OUT (or run/out/rtm).
set -uo pipefail
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/device_env.sh" run/out/rtm || exit 1
build="${1:-build-rtm}"
steps="${STEPS:-1000}"
summary="$out/summary.txt"
: > "$summary"
failed=0
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
row() { printf '%-46s %s\n' "$1" "$2" | tee -a "$summary"; }
device_info >> "$summary"

device_configure "$build" > "$out/build.log" 2>&1 && ninja -C "$build" >> "$out/build.log" 2>&1 ||
  { grep -E "error|FAILED" "$out/build.log" | head -20; exit 1; }
row "build" "ok ($(grep -c -i warning "$out/build.log") warning lines)"

ctest --test-dir "$build" -L gpu --output-on-failure > "$out/ctest_gpu.log" 2>&1 || failed=1
row "ctest -L gpu" "$(grep -E 'tests passed' "$out/ctest_gpu.log")"
grep -E "^\s+[0-9]+ - .*(Failed|Timeout)" "$out/ctest_gpu.log" | tee -a "$summary"
grep -E "relative L2: image|worst relative L2" "$out/ctest_gpu.log" | tee -a "$summary"

RTM3D_TEST_FILTER=test_iso timeout 400 compute-sanitizer --tool memcheck --error-exitcode 3 \
  "$build/tests/rtm/test_migration_gpu" > "$out/memcheck_migration.log" 2>&1
row "memcheck, cuda migration (iso)" "exit $?: $(grep 'ERROR SUMMARY' "$out/memcheck_migration.log" | tail -1)"
RTM3D_TEST_FILTER=test_rebuilt_tti timeout 400 compute-sanitizer --tool memcheck --error-exitcode 3 \
  "$build/tests/rtm/test_reconstruction_gpu" > "$out/memcheck_boundary.log" 2>&1
row "memcheck, boundary rebuild (tti, device+pinned)" "exit $?: $(grep 'ERROR SUMMARY' "$out/memcheck_boundary.log" | tail -1)"

rtm3d="$build/app/rtm3d"
deck=run/examples/bench_512.ini
work=/tmp/rtm3d_rtm_check
mkdir -p "$work"
for equation in iso tti; do
  common=(--quiet --set backend.name=cuda --set model.file= --set model.vp=2000
    --set physics.equation=$equation --set time.steps=$steps --set source.frequency=12
    --set shots.layout=grid --set shots.z=300 --set receivers.z=300
    --set rtm.observed=$work/observed_$equation.h5 --set rtm.imaging_step=10
    --set rtm.snapshot_precision=fp16 --set output.dir=$work)
  [ "$equation" = tti ] && common+=(--set model.epsilon=0.2 --set model.delta=0.1
    --set model.theta=30 --set model.phi=20 --set kernel.block_x=64 --set kernel.block_y=4
    --set kernel.zblock=64)
  "$rtm3d" model "$deck" "${common[@]}" --set output.name=observed_$equation > "$out/model_$equation.log" 2>&1 ||
    { row "model $equation" "FAILED"; failed=1; continue; }
  "$rtm3d" migrate "$deck" "${common[@]}" --set output.name=image_$equation > "$out/migrate_$equation.log" 2>&1 ||
    { row "migrate $equation" "FAILED: $(grep -m1 error "$out/migrate_$equation.log")"; failed=1; continue; }
  # rtm.reconstruction = boundary: iso with the shell in device memory, tti in pinned host memory
  store=device
  [ "$equation" = tti ] && store=pinned
  "$rtm3d" migrate "$deck" "${common[@]}" --set rtm.reconstruction=boundary \
    --set memory.imaging=$store --set output.name=boundary_$equation > "$out/boundary_$equation.log" 2>&1 ||
    { row "migrate boundary $equation" "FAILED: $(grep -m1 error "$out/boundary_$equation.log")"; failed=1; }
  cp "$work/observed_$equation.json" "$out/" 2>/dev/null
  cp "$work/image_$equation.json" "$out/" 2>/dev/null
  cp "$work/boundary_$equation.json" "$out/" 2>/dev/null
  python3 - "$work/observed_$equation.json" "$equation" "$work/image_$equation.json" \
    "$work/boundary_$equation.json" <<'PY' | tee -a "$summary"
import json, os, sys
model = json.load(open(sys.argv[1]))
shots = model.get("shots", {})
propagate = sum(shots["propagate_s"]) if shots else model["timings_s"]["propagate"]
for path in sys.argv[3:]:
    if not os.path.exists(path): continue
    image = json.load(open(path))
    t = image["timings_s"]
    migrate = t["forward"] + t["backward"] + t["imaging"]
    way = "boundary" if "boundary_" in os.path.basename(path) else "snapshots"
    print(f"512^3 {sys.argv[2]} {way}, {model['steps']} steps: model {propagate:.3f} s, migrate {migrate:.3f} s "
          f"(forward {t['forward']:.3f}, backward {t['backward']:.3f}, imaging {t['imaging']:.3f}): "
          f"{migrate / propagate:.2f} propagations; store+image "
          f"{sum(m['bytes'] for m in image['memory'] if m['label'].startswith(('snapshots', 'boundary', 'image', 'illumination'))) / 1e9:.2f} GB")
PY
done
echo
cat "$summary"
exit "$failed"
