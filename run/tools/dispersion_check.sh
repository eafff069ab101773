#!/usr/bin/env bash
# run/tools/dispersion_check.sh [BUILD_DIR] - time.dispersion_correction on the GPU machine,
# one call: build, ctest -L gpu (every cuda test; the trace pipeline's leapfrog warps on
# cuFFT against FFTW among them), then what the correction costs: rtm3d model of
# run/examples/bench_512.ini (iso 512^3 of 10 m, constant 2000 m/s, STEPS steps, default
# 2000, cuda) with a receiver plane every 80 m (59 x 59) and every 10 m (the whole plane
# inside the absorbing layer, 472 x 472), each with the correction none and full: the run
# report's propagate, write and dispersion_correction seconds (COST=0 skips them); and
# rtm3d accuracy on the cuda backend. Short table last; logs under $OUT (or
# run/out/dispersion).
set -uo pipefail
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/device_env.sh" run/out/dispersion || exit 1
build="${1:-build-mpi}"
steps="${STEPS:-2000}"
device_summary
device_build "$build" "$out/build.log" || exit 1
row "build" "ok ($(grep -c -i warning "$out/build.log") warning lines)"
# CTEST_ARGS picks the tests (default -L gpu)
# shellcheck disable=SC2086
ctest --test-dir "$build" ${CTEST_ARGS:--L gpu} -j 4 --output-on-failure > "$out/ctest_gpu.log" 2>&1 ||
  failed=1
row "ctest ${CTEST_ARGS:--L gpu}" "$(grep -E 'tests passed' "$out/ctest_gpu.log")"
grep -E "Failed|\*\*\*" "$out/ctest_gpu.log" | head -10 | tee -a "$summary"
# rtm3d accuracy on the GPU (cuda backend): 10 m, 20 Hz, 2000 m/s, the default cfl
"$build/app/rtm3d" accuracy run/examples/quickstart.ini --set backend.name=cuda --set model.file= \
  --set model.vp=2000 --set grid.dx=10 --set grid.dy=10 --set grid.dz=10 \
  --set source.frequency=20 --set time.cfl=0.4 > "$out/accuracy.txt" 2> "$out/accuracy.err" ||
  { failed=1; tail -3 "$out/accuracy.err"; }
tee -a "$summary" < "$out/accuracy.txt"
# COST=0 skips the cost runs
for spacing in $([ "${COST:-1}" = 0 ] || echo 80 10); do
  for mode in none full; do
    name="cost_${spacing}m_$mode"
    "$build/app/rtm3d" model run/examples/bench_512.ini --quiet --set backend.name=cuda \
      --set model.file= --set model.vp=2000 --set time.steps="$steps" \
      --set receivers.x_step="$spacing" --set receivers.y_step="$spacing" \
      --set time.dispersion_correction="$mode" --set output.dir="$out" --set output.name="$name" \
      > "$out/$name.log" 2>&1 || { failed=1; tail -3 "$out/$name.log"; }
    python3 - "$out/$name.json" "$name" << 'PY' | tee -a "$summary"
import json, sys
r = json.load(open(sys.argv[1]))
t = r["timings_s"]
share = 100.0 * t["dispersion_correction"] / t["propagate"] if t["propagate"] else float("nan")
run = sum(t[k] for k in ("setup", "propagate", "snapshots", "write"))
print(f"{sys.argv[2]:<22} propagate {t['propagate']:.3f} s  write {t['write']:.3f} s  "
      f"correction {t['dispersion_correction']:.3f} s ({share:.1f}% of propagate, "
      f"{100.0 * t['dispersion_correction'] / run:.1f}% of the run's {run:.2f} s)")
PY
    rm -f "$out/$name.h5"
  done
done
echo
cat "$summary"
exit "$failed"
