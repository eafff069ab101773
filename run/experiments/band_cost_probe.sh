#!/usr/bin/env bash
# run/experiments/band_cost_probe.sh [BUILD_DIR] - where the time-dispersion correction's
# cost goes in a full-plane run (issue 35), on the GPU machine: `rtm3d model` of
# run/examples/bench_512.ini (iso 512^3, constant 2000 m/s, 2000 steps, cuda) with a
# receiver at every cell of the plane (222784), written to tmpfs, ROUNDS (default 3) rounds
# of VARIANTS (default: none streamed, full streamed through the warp's band, full with
# windows of 400 samples, full written after the run; full_wN: windows of N samples; a
# variant NAME_passive runs NAME with OMP_WAIT_POLICY=PASSIVE); each run's wall and report
# phases.
# With BASE=DIR (an earlier source tree, `git archive` of it) both trees are built and run
# in turn, round by round (an A/B in one call), and `ctest -L gpu` runs on the tree's build.
# Then ncu's GPU time of the band and pack kernels (KERNELS, "" for none) summed over a
# run's launches. Short
# table last; logs under $OUT (or run/out/band_cost_probe).
set -uo pipefail
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/../tools/device_env.sh" run/out/band_cost_probe || exit 1
device_summary
if [ -n "${BASE:-}" ]; then
  device_build_pair "$BASE" || exit 1
  device_gpu_tests build-new || failed=1
  builds=(build-new "$BASE/build-base")
else
  builds=("${1:-build-cost}")
  device_build_once "${builds[0]}" || exit 1
fi
runs=/dev/shm/rtm3d_band_probe
rm -rf "$runs" && mkdir -p "$runs"
deck=(run/examples/bench_512.ini --set backend.name=cuda --set model.file= --set model.vp=2000
  --set time.steps=2000 --set receivers.x_step=10 --set receivers.y_step=10
  --set output.dir="$runs" --force)
# cuFFT's kernels compiled and cached before anything is timed
"${builds[0]}/app/rtm3d" model "${deck[@]}" --set output.name=warm > "$out/warm.log" 2>&1 || failed=1
for round in $(seq "${ROUNDS:-3}"); do
  for build in "${builds[@]}"; do
    tag=new
    [ "$build" = "${BASE:-}/build-base" ] && tag=base
    [ ${#builds[@]} -eq 1 ] && tag=run
    for variant in ${VARIANTS:-none full full_w400 full_off}; do
      wait_policy=${OMP_WAIT_POLICY:-}
      case $variant in
        *_passive) wait_policy=PASSIVE ;;
      esac
      case ${variant%_passive} in
        none) extra=(--set time.dispersion_correction=none) ;;
        full) extra=(--set time.dispersion_correction=full) ;;
        full_w*) extra=(--set time.dispersion_correction=full --set output.stream_window="${variant#full_w}") ;;
        full_off) extra=(--set time.dispersion_correction=full --set output.stream_traces=off) ;;
      esac
      name="${tag}_${variant}_$round"
      sync
      env ${wait_policy:+OMP_WAIT_POLICY=$wait_policy} /usr/bin/time -f "%e" -o "$out/$name.time" \
        "$build/app/rtm3d" model "${deck[@]}" \
        "${extra[@]}" --set output.name="$name" > "$out/$name.log" 2>&1 ||
        { failed=1; tail -3 "$out/$name.log"; }
      echo "$name wall=$(cat "$out/$name.time") $(run/tools/report_timings.py "$runs/$name.json" \
        setup propagate write dispersion_correction written_behind writer_waits setup_load \
        setup_propagator setup_output)" | tee -a "$out/runs.txt"
      rm -f "$runs/$name".*
    done
  done
done
for kernel in ${KERNELS-band_trace_window pack_trace_window}; do
  mode=full
  [ $kernel = pack_trace_window ] && mode=none
  for build in "${builds[@]}"; do
    log="$out/ncu_${kernel}_$(basename "$build").log"
    ncu --clock-control none -k regex:$kernel --metrics gpu__time_duration.sum \
      "$build/app/rtm3d" model "${deck[@]}" --set time.dispersion_correction=$mode \
      --set output.name=ncu > "$log" 2>&1 || failed=1
    row "$kernel GPU time, $build" "$(awk '/gpu__time_duration.sum/ {
      t += ($2 == "ms" ? $3 * 1000 : ($2 == "us" || $2 == "usecond" ? $3 : $3 / 1000)); n++ }
      END { printf "%.2f ms over %d launches", t / 1000, n }' "$log")"
  done
done
rm -rf "$runs"
python3 - "$out/runs.txt" >> "$summary" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    name, *fields = line.split()
    variant = name.rsplit("_", 1)[0]
    rows.setdefault(variant, []).append(dict(f.split("=") for f in fields))
print("medians over the rounds (s):")
for variant, runs in rows.items():
    keys = runs[0].keys()
    print(f"{variant:14s} " + " ".join(
        f"{k}={statistics.median(float(r[k]) for r in runs):.3f}" for k in keys))
PY
(cd "$out" && tar czf logs.tar.gz --remove-files $(ls ./*.log ./*.time 2>/dev/null))
echo
cat "$summary"
exit "$failed"
