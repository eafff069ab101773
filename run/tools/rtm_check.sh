#!/usr/bin/env bash
# run/tools/rtm_check.sh [BUILD_DIR] - reverse-time migration on a GPU machine, one call per
# PHASE (default all):
#   tests  build, every gpu test (the imaging pieces, cuda migrations against cpu with every
#          reconstruction, the cuda propagator moved between shots, boundary and checkpoint
#          on cuda; ctest -V, so the figures they print are in ctest_gpu.log),
#          compute-sanitizer memcheck of short cuda migrations (the three reconstructions)
#          and of the boundary rebuild (device and pinned stores);
#   bench  (BUILD_DIR built) migrate / model time per shot on 512^3 (iso and tti, one shot,
#          STEPS steps, default 1000): model the shot's gather, migrate it with snapshots
#          (fp16, every 10 steps), boundary (the shell in device memory) and checkpoint
#          (CHECKPOINTS states, default 10), and read the reports: the ratio, the recomputed
#          steps, the store and image as the preflight estimated them and as they took.
# Short table last; logs under $OUT (or run/out/rtm).
set -uo pipefail
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/device_env.sh" run/out/rtm || exit 1
build="${1:-build-rtm}"
steps="${STEPS:-1000}"
checkpoints="${CHECKPOINTS:-10}"
phase="${PHASE:-all}"
summary="$out/summary_$phase.txt"
: > "$summary"
failed=0
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
device_info >> "$summary"

device_build "$build" "$out/build.log" || exit 1
row "build" "ok ($(grep -c -i warning "$out/build.log") warning lines)"

if [ "$phase" != bench ]; then
  ctest --test-dir "$build" -L gpu -V > "$out/ctest_gpu.log" 2>&1 || failed=1
  row "ctest -L gpu" "$(grep -E 'tests passed' "$out/ctest_gpu.log")"
  grep -E "^\s+[0-9]+ - .*(Failed|Timeout)" "$out/ctest_gpu.log" | tee -a "$summary"
  grep -E "relative L2: image|worst relative L2" "$out/ctest_gpu.log" | sed 's/^[0-9]*: //' | tee -a "$summary"

  RTM3D_TEST_FILTER=test_iso timeout 400 compute-sanitizer --tool memcheck --error-exitcode 3 \
    "$build/tests/rtm/test_migration_gpu" > "$out/memcheck_migration.log" 2>&1
  row "memcheck, cuda migration (iso, 3 ways)" "exit $?: $(grep 'ERROR SUMMARY' "$out/memcheck_migration.log" | tail -1)"
  RTM3D_TEST_FILTER=test_rebuilt_tti timeout 400 compute-sanitizer --tool memcheck --error-exitcode 3 \
    "$build/tests/rtm/test_reconstruction_gpu" > "$out/memcheck_boundary.log" 2>&1
  row "memcheck, boundary rebuild (tti, device+pinned)" "exit $?: $(grep 'ERROR SUMMARY' "$out/memcheck_boundary.log" | tail -1)"
fi
if [ "$phase" = tests ]; then
  echo
  cat "$summary"
  exit "$failed"
fi

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
  for way in snapshots boundary checkpoint; do
    extra=()
    [ "$way" = checkpoint ] && extra=(--set rtm.checkpoints=$checkpoints)
    "$rtm3d" migrate "$deck" "${common[@]}" --set rtm.reconstruction=$way "${extra[@]}" \
      --set output.name=${way}_$equation > "$out/${way}_$equation.log" 2>&1 ||
      { row "migrate $way $equation" "FAILED: $(grep -m1 error "$out/${way}_$equation.log")"; failed=1; }
    cp "$work/${way}_$equation.json" "$out/" 2>/dev/null
    rm -f "$work/${way}_$equation.h5"
  done
  cp "$work/observed_$equation.json" "$out/" 2>/dev/null
  python3 - "$out/observed_$equation.json" "$equation" "$out/snapshots_$equation.json" \
    "$out/boundary_$equation.json" "$out/checkpoint_$equation.json" <<'PY' | tee -a "$summary"
import json, os, sys
model = json.load(open(sys.argv[1]))
shots = model.get("shots", {})
propagate = sum(shots["propagate_s"]) if shots else model["timings_s"]["propagate"]
floor = {"snapshots": 2.0, "boundary": 3.0, "checkpoint": None}
for path in sys.argv[3:]:
    if not os.path.exists(path): continue
    image = json.load(open(path))
    t = image["timings_s"]
    migrate = t["forward"] + t["backward"] + t["imaging"]
    r = image["reconstruction"]
    recomputed = sum(image["shots"]["recomputed_steps"])
    ratio = migrate / propagate
    bar = floor[r["name"]]
    verdict = f"<= {1.15 * bar:.2f}: {'yes' if ratio <= 1.15 * bar else 'NO'}" if bar else f"{recomputed} steps recomputed"
    print(f"512^3 {sys.argv[2]} {r['name']}, {model['steps']} steps: model {propagate:.2f} s, migrate {migrate:.2f} s "
          f"(fwd {t['forward']:.2f}, bwd {t['backward']:.2f}, img {t['imaging']:.2f}) = {ratio:.2f} propagations ({verdict}); "
          f"store+image estimated {r['estimate_bytes'] / 1e9:.2f} GB, took {r['measured_bytes'] / 1e9:.2f} GB "
          f"({r['measured_in']}, {100 * (r['measured_bytes'] / r['estimate_bytes'] - 1):+.1f}%)")
PY
done
echo
cat "$summary"
exit "$failed"
