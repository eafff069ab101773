#!/usr/bin/env bash
# run/tools/end_to_end.sh [BUILD_DIR] - the end-to-end wall time on the GPU machine, one call: build,
# ctest -L gpu (SKIP_TESTS=1 leaves it out), the disk's own write speed (dd of 2 GiB, with
# and without fdatasync), then `rtm3d model` of run/examples/bench_512.ini (iso 512^3,
# constant 2000 m/s, STEPS steps, default 2000, cuda, kernel.* auto) with a receiver plane
# every 80 m (59 x 59) and every 10 m (472 x 472: a full plane inside the absorbing layer),
# the gathers streamed to the file during the run (the default), the latter also written
# after the run (output.stream_traces = off, "10a"; first a streamed quickstart against one
# written after the run, bit for bit): the run report's phases, setup's parts and the share
# of the run's wall time spent propagating. Short table last; logs under $OUT (or
# run/out/end_to_end).
set -uo pipefail
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/device_env.sh" run/out/end_to_end || exit 1
build="${1:-build-e2e}"
steps="${STEPS:-2000}"
device_summary
device_build "$build" "$out/build.log" || exit 1
[ "${SKIP_TESTS:-0}" = 1 ] || device_gpu_tests "$build" || failed=1
runs=/tmp/rtm3d_e2e
mkdir -p "$runs"
# gathers streamed in windows while the steps run (windows of 7 samples on the quickstart)
# against the same run written after it: the same file contents, bit for bit
for how in stream after; do
  "$build/app/rtm3d" model run/examples/quickstart.ini --set backend.name=cuda --quiet \
    --set "$([ "$how" = stream ] && echo output.stream_window=7 || echo output.stream_traces=off)" \
    --set output.dir="$runs" --set output.name="q_$how" --force > "$out/q_$how.log" 2>&1 || failed=1
done
"$build/app/rtm3d" validate "$runs/q_stream.h5" "$runs/q_after.h5" --rtol 0 --atol 0 \
  > "$out/stream_validate.log" 2>&1 || failed=1
row "streamed gathers = written after" "$(tail -1 "$out/stream_validate.log")"
for sync in fdatasync none; do
  flag=()
  [ "$sync" = fdatasync ] && flag=(conv=fdatasync)
  speed=$(dd if=/dev/zero of="$runs/dd" bs=16M count=128 "${flag[@]}" 2>&1 | tail -1 | sed 's/.*, //')
  rm -f "$runs/dd"
  row "disk write 2 GiB ($sync)" "$speed"
done
for case in 80 10 10a; do # 10a: the full plane written after the run
  name="e2e_${case}"
  spacing="${case%a}"
  stream=()
  [ "$case" = 10a ] && stream=(--set output.stream_traces=off)
  /usr/bin/time -f "%e" -o "$out/$name.time" "$build/app/rtm3d" model run/examples/bench_512.ini \
    "${stream[@]}" --set backend.name=cuda --set model.file= --set model.vp=2000 --set time.steps="$steps" \
    --set receivers.x_step="$spacing" --set receivers.y_step="$spacing" \
    --set output.dir="$runs" --set output.name="$name" --force > "$out/$name.log" 2>&1 ||
    { failed=1; tail -3 "$out/$name.log"; continue; }
  cp "$runs/$name.json" "$out/"
  python3 - "$runs/$name.json" "$(cat "$out/$name.time")" "$case" >> "$summary" <<'PY'
import sys
sys.path.insert(0, "run/tools")
from report_timings import timings
t = timings(sys.argv[1])
get = lambda k: t.get(k, 0.0)
phases = ["setup", "propagate", "snapshots", "write", "dispersion_correction"]
parts = ["setup_load", "setup_propagator", "setup_output"]
inside = sum(get(k) for k in phases)
process = float(sys.argv[2])
print(f"receivers every {sys.argv[3]} m: " + ", ".join(f"{k} {get(k):.3f} s" for k in phases))
print("  setup: " + ", ".join(f"{k[6:]} {get(k):.3f} s" for k in parts))
print(f"  propagating: {100 * get('propagate') / inside:.1f}% of the run's phases ({inside:.2f} s), "
      f"{100 * get('propagate') / process:.1f}% of the process's wall time ({process:.2f} s)")
PY
  tail -2 "$summary"
done
rm -rf "$runs"
(cd "$out" && tar czf logs.tar.gz --remove-files $(ls ./*.log ./*.time 2>/dev/null))
echo
cat "$summary"
exit "$failed"
