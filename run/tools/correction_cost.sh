#!/usr/bin/env bash
# run/tools/correction_cost.sh [BUILD_DIR] - what time.dispersion_correction = full (the
# default) costs a whole run against none, on the GPU machine, one call (issue 35): build
# (BUILD=0 keeps BUILD_DIR's rtm3d), then `rtm3d model` of run/examples/bench_512.ini (iso
# 512^3, constant 2000 m/s, STEPS steps, default 2000, cuda, kernel.* auto) with receivers
# every 80 m (59 x 59 = 3481) and every 10 m (472 x 472: a full plane, its gathers streamed
# and corrected by the warp's band), each with the correction none and full, ROUNDS times
# (default 2) in turn; first the quickstart at the same step count, corrected and not, so
# that cuFFT's kernels for the warps are compiled and cached before anything is timed (its
# wall time against an uncorrected one is the first run's extra cost on a fresh machine).
# RUNS (default /tmp/rtm3d_cost) is where the runs write: RUNS=/dev/shm/rtm3d_cost keeps the
# disk's write-back (1.78 GB of gathers a full-plane run) out of the timings; every run
# starts after a sync, so that none waits on the one before's dirty pages. LAYOUTS (default
# "80 10") picks the receiver spacings. The cost is given two ways: the difference of the
# median walls, and the median of the rounds' paired differences (full - none of one round).
# Prints each run's process wall time and report phases (the writer's written_behind and
# writer_waits among them: a full plane's gathers, 1.78 GB, can set the run's pace), a dd of
# the full plane's gathers' size into RUNS beside them, then per layout the median walls and
# the cost (full - none) / none. GPU_TESTS=1 runs `ctest -L gpu` of the build first. Short
# table last; logs under $OUT (or run/out/correction_cost).
set -uo pipefail
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/device_env.sh" run/out/correction_cost || exit 1
build="${1:-build-cost}"
steps="${STEPS:-2000}"
rounds="${ROUNDS:-2}"
device_summary
device_build_once "$build" || exit 1
if [ "${GPU_TESTS:-0}" = 1 ]; then device_gpu_tests "$build" || failed=1; fi
runs="${RUNS:-/tmp/rtm3d_cost}"
row "runs written to" "$runs ($(df -h --output=fstype "$(dirname "$runs")" | tail -1))"
rm -rf "$runs" "${CUDA_CACHE_PATH:-$HOME/.nv/ComputeCache}"
mkdir -p "$runs"
# what the disk takes: the full plane's gathers (472 x 472 traces of 2001 floats) in 25
# writes of 71 MB, as the stream writes them
row "dd of 1.78 GB to $runs" "$(dd if=/dev/zero of="$runs/dd" bs=71M count=25 2>&1 | tail -1)"
rm -f "$runs/dd"
# the first corrected run of a trace length on this machine compiles cuFFT's kernels for it:
# the quickstart at the same step count, its gathers streamed (the warp's band, padded 16x)
# and written after the run (the whole-trace warp, padded 8x, which the 3481 receivers take:
# their gathers fit one window)
for mode in full none; do
  for traces in auto off; do
    name="first_${mode}_$traces"
    /usr/bin/time -f "%e" -o "$out/$name.time" "$build/app/rtm3d" model \
      run/examples/quickstart.ini --set backend.name=cuda --set time.dispersion_correction=$mode \
      --set time.steps="$steps" --set output.stream_traces=$traces --set output.stream_window=64 \
      --set snapshots.every=0 --set output.dir="$runs" --set output.name="$name" --force \
      > "$out/$name.log" 2>&1 || failed=1
    row "quickstart x $steps steps, first run, $mode, stream $traces" "$(cat "$out/$name.time") s"
  done
done
for round in $(seq "$rounds"); do
  for spacing in ${LAYOUTS:-80 10}; do
    for mode in none full; do
      name="cost_${spacing}_${mode}_${round}"
      sync
      /usr/bin/time -f "%e" -o "$out/$name.time" "$build/app/rtm3d" model \
        run/examples/bench_512.ini --set backend.name=cuda --set model.file= \
        --set model.vp=2000 --set time.steps="$steps" --set time.dispersion_correction=$mode \
        --set receivers.x_step="$spacing" --set receivers.y_step="$spacing" \
        --set output.dir="$runs" --set output.name="$name" --force > "$out/$name.log" 2>&1 ||
        { failed=1; tail -3 "$out/$name.log"; continue; }
      echo "$name $(cat "$out/$name.time") $(run/tools/report_timings.py "$runs/$name.json" \
        setup propagate write dispersion_correction written_behind writer_waits)" \
        >> "$out/runs.txt"
      tail -1 "$out/runs.txt"
      rm -f "$runs/$name".*
    done
  done
done
python3 - "$out/runs.txt" >> "$summary" <<'PY'
import statistics, sys
walls, phases = {}, {}
for line in open(sys.argv[1]):
    name, wall, *fields = line.split()
    _, spacing, mode, round_ = name.split("_")
    walls.setdefault((spacing, mode), {})[round_] = float(wall)
    for field in fields:
        key, value = field.split("=")
        phases.setdefault((spacing, mode, key), []).append(float(value))
for spacing, label in (("80", "3481 receivers"), ("10", "full plane, 222784")):
    none, full = walls.get((spacing, "none"), {}), walls.get((spacing, "full"), {})
    rounds = sorted(set(none) & set(full))
    if not rounds:
        continue
    median_none = statistics.median(none[r] for r in rounds)
    median_full = statistics.median(full[r] for r in rounds)
    paired = statistics.median(full[r] - none[r] for r in rounds)
    print(f"512^3 x 2000, {label}, {len(rounds)} rounds: none {median_none:.2f} s, "
          f"full {median_full:.2f} s, cost {100 * (median_full - median_none) / median_none:+.1f}% "
          f"(medians), {100 * paired / median_none:+.1f}% (paired)")
    for mode in ("none", "full"):
        print(f"  {mode} phases (medians, s): " + " ".join(
            f"{key}={statistics.median(values):.3f}"
            for (s, m, key), values in phases.items() if s == spacing and m == mode))
PY
tail -6 "$summary"
rm -rf "$runs"
(cd "$out" && tar czf logs.tar.gz --remove-files $(ls ./*.log ./*.time 2>/dev/null))
echo
cat "$summary"
exit "$failed"
