#!/usr/bin/env bash
# run/experiments/correction_timeline.sh [BUILD_DIR] - where the full receiver plane's
# correction cost goes (issue 35), on the GPU machine, one call: build (BUILD=0 keeps
# BUILD_DIR's rtm3d), the quickstart's first runs (cuFFT's kernels compiled and cached, as
# run/tools/correction_cost.sh does), then ROUNDS (default 4) rounds of `rtm3d model` of
# run/examples/bench_512.ini (iso 512^3, constant 2000 m/s, STEPS steps, default 2000) with
# a full receiver plane (every 10 m: 222784) into RUNS (default /dev/shm/rtm3d_timeline),
# time.dispersion_correction none and full in turn, each line of their stderr stamped with
# the seconds since the launch (correction_timeline.py). Short table last: per mode, the
# medians of the stamps (the first line after set-up, the last step's progress line, "done",
# "wrote", the exit, and any line marked "STAMP TEXT" by a probe's patch such as
# teardown_stamps.patch) and of the report's set-up parts, phases and writer seconds; logs
# under $OUT (or run/out/correction_timeline).
set -uo pipefail
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/../tools/device_env.sh" run/out/correction_timeline || exit 1
build="${1:-build-timeline}"
steps="${STEPS:-2000}"
rounds="${ROUNDS:-4}"
runs="${RUNS:-/dev/shm/rtm3d_timeline}"
device_summary
device_build_once "$build" || exit 1
rm -rf "$runs"
mkdir -p "$runs"
for mode in full none; do # cuFFT's kernels for this trace length compiled and cached
  "$build/app/rtm3d" model run/examples/quickstart.ini --set backend.name=cuda \
    --set time.dispersion_correction=$mode --set time.steps="$steps" \
    --set output.stream_window=64 --set snapshots.every=0 --set output.dir="$runs" \
    --set output.name="first_$mode" --force > "$out/first_$mode.log" 2>&1 || failed=1
done
for round in $(seq "$rounds"); do
  for mode in none full; do
    name="plane_${mode}_$round"
    sync
    run/experiments/correction_timeline.py "$out/$name.log" "$build/app/rtm3d" model \
      run/examples/bench_512.ini --set backend.name=cuda --set model.file= \
      --set model.vp=2000 --set time.steps="$steps" --set time.dispersion_correction=$mode \
      --set receivers.x_step=10 --set receivers.y_step=10 \
      --set output.dir="$runs" --set output.name="$name" --force || failed=1
    echo "$name $(run/tools/report_timings.py "$runs/$name.json" setup setup_load \
      setup_propagator setup_output propagate write dispersion_correction written_behind \
      writer_waits)" >> "$out/phases.txt"
    rm -f "$runs/$name".*
  done
done
rm -rf "$runs"
python3 - "$out" "$rounds" >> "$summary" <<'PY'
import glob, os, re, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
marks = (("first line", r"model: "), ("last step", r"step \d+/\d+ +100%"),
         ("done", r"done in"), ("wrote", r"wrote "), ("exit", r"^exit "))
stamps, phases = {}, {}
for path in sorted(glob.glob(os.path.join(out, "plane_*.log"))):
    mode = os.path.basename(path).split("_")[1]
    for line in open(path, encoding="utf-8"):
        seconds, text = (line.split(None, 1) + [""])[:2]
        for label, pattern in marks:
            if re.search(pattern, text.strip()):
                stamps.setdefault((mode, label), []).append(float(seconds))
        stamp = re.search(r"STAMP (.*)", text)
        if stamp:  # a probe's own marks (teardown_stamps.patch)
            stamps.setdefault((mode, stamp.group(1).strip()), []).append(float(seconds))
        if "made in" in text:
            stamps.setdefault((mode, "band made (s)"), []).append(
                float(re.search(r"made in ([0-9.]+) s", text).group(1)))
for line in open(os.path.join(out, "phases.txt"), encoding="utf-8"):
    name, *fields = line.split()
    mode = name.split("_")[1]
    for field in fields:
        key, value = field.split("=")
        phases.setdefault((mode, key), []).append(float(value))
print(f"full receiver plane, 512^3 x 2000, {rounds} rounds, medians (s): none | full | full - none")
for table in (stamps, phases):
    for key in dict.fromkeys(k for _, k in table):
        none, full = table.get(("none", key)), table.get(("full", key))
        n = statistics.median(none) if none else float("nan")
        f = statistics.median(full) if full else float("nan")
        print(f"  {key:24s} {n:8.3f} | {f:8.3f} | {f - n:+8.3f}")
PY
(cd "$out" && tar czf logs.tar.gz --remove-files $(ls ./*.log 2>/dev/null))
echo
cat "$summary"
exit "$failed"
