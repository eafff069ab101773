#!/usr/bin/env bash
# run/experiments/tti_duration_probe.sh [BUILD_DIR] - why `model`'s tti propagation at 512^3
# runs 95.8% of `bench`'s kernel (issue 34, item 4; run/results/end_to_end.md): is the late,
# slower part of a run the data (a developed wavefield) or the time (the GPU's power or
# clock over seconds of a heavy kernel)? On the GPU machine, with nvidia-smi sampling the SM
# clock, the power draw and the clock event reasons every 100 ms:
#   bench20     `rtm3d bench` as it is: a random field, 5 steps, 3 windows of 20 (0.2 s)
#   bench330    the same random field, 3 windows of 330 steps (some 3 s, as long as model's)
#   model100    `rtm3d model`, a constant model, no receivers, 100 steps (an early field)
#   model1000   the same, 1000 steps (a developed field)
#   compression `rtm3d bench --compression`: 20-step windows at 1/8, 1/2 and the end of a
#               1000-step propagation of the deck's source (the field's rate as it develops)
# If bench330 keeps bench20's rate, the slowing is the data; if it falls with model1000's,
# it is the time. Logs under $OUT (or run/out/tti_duration_probe), the short table last.
set -uo pipefail
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/../tools/device_env.sh" run/out/tti_duration_probe || exit 1
build="${1:-build-probe}"
device_summary
device_build_once "$build" || exit 1
runs=/dev/shm/rtm3d_duration
rm -rf "$runs" && mkdir -p "$runs"
deck=(run/examples/bench_tti_512.ini --set backend.name=cuda --set model.file=
  --set output.dir="$runs" --force)
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active \
  --format=csv,noheader,nounits -lms 100 > "$out/smi.csv" 2>&1 &
smi=$!
run_case() {
  local name="$1"
  shift
  sleep 3 # the GPU idle between cases
  echo "start $name $(date +%s.%N)" >> "$out/marks.txt"
  "$@" > "$out/$name.log" 2>&1 || failed=1
  echo "end $name $(date +%s.%N)" >> "$out/marks.txt"
}
rtm3d="$build/app/rtm3d"
run_case bench20 "$rtm3d" bench "${deck[@]}" --set bench.warmup=5 --set bench.steps=20
run_case bench330 "$rtm3d" bench "${deck[@]}" --set bench.warmup=5 --set bench.steps=330
for steps in 100 1000; do
  run_case "model$steps" "$rtm3d" model "${deck[@]}" --set receivers.layout=none \
    --set time.steps="$steps" --set output.name="model$steps"
done
run_case compression "$rtm3d" bench "${deck[@]}" --compression --set time.steps=1000 \
  --set bench.steps=20
sleep 1
kill "$smi" 2>/dev/null
python3 - "$out" "$runs" <<'PY' | tee -a "$summary"
import datetime, json, os, re, sys
out, runs = sys.argv[1], sys.argv[2]
marks = {}
for line in open(os.path.join(out, "marks.txt")):
    kind, name, t = line.split()
    marks.setdefault(name, {})[kind] = float(t)
samples = []
for line in open(os.path.join(out, "smi.csv")):
    f = [x.strip() for x in line.split(",")]
    try:
        t = datetime.datetime.strptime(f[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()
        samples.append((t, float(f[1]), float(f[3]), float(f[4]), f[5]))
    except (ValueError, IndexError):
        pass
def rate(name):
    log = open(os.path.join(out, name + ".log")).read()
    if name.startswith("model"):
        report = json.load(open(os.path.join(runs, name + ".json")))
        steps = int(name[5:])
        return "%.1f GCells/s" % (512 ** 3 * steps / report["timings_s"]["propagate"] / 1e9)
    found = re.findall(r"([0-9][0-9 ]*[0-9]) MCells/s", log)
    return ", ".join(x.replace(" ", "") for x in found[:6]) + " MCells/s" if found else "?"
print("%-12s %-34s %8s %8s %8s %6s  %s" % ("case", "rate", "W mean", "W max", "SM min", "T max", "event reasons"))
for name, m in marks.items():
    inside = [s for s in samples if m["start"] <= s[0] <= m.get("end", 1e30)]
    if not inside:
        print("%-12s %-34s (no samples)" % (name, rate(name)))
        continue
    watts = [s[2] for s in inside]
    reasons = sorted(set(s[4] for s in inside))
    print("%-12s %-34s %8.0f %8.0f %8.0f %6.0f  %s" % (name, rate(name), sum(watts) / len(watts),
          max(watts), min(s[1] for s in inside), max(s[3] for s in inside), " ".join(reasons)))
PY
exit "$failed"
