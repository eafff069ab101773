#!/usr/bin/env bash
# run/tools/traces_check.sh - the trace pipeline on a GPU machine in one call: build, the traces
# tests (unit and gpu), the benchmark (the reference talk's case at several stream counts,
# and a batched case), compute-sanitizer over the gpu test, and a short table last.
#
#   run/tools/traces_check.sh        (device tool: carry .deps)
#
# Logs go to $OUT (or run/out/traces); the table is also written to $OUT/summary.txt.
set -uo pipefail
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/device_env.sh" run/out/traces || exit 1 # repo root, $out, .deps, nvcc
build=build-traces-dev
device_info "$out/device.txt"
if ! device_configure "$build" > "$out/cmake.log" 2>&1; then
  tail -30 "$out/cmake.log"
  exit 1
fi
if ! ninja -C "$build" test_traces_cpu test_traces_gpu rtm3d > "$out/build.log" 2>&1; then
  grep -E "error|FAILED" -A4 "$out/build.log" | head -80
  exit 1
fi
grep -E "warning" "$out/build.log" | grep -i traces | head -20
rtm3d="$build/app/rtm3d" # the benchmark: rtm3d bench --traces

(cd "$build" && ctest -R traces --output-on-failure) > "$out/ctest.log" 2>&1
tests_rc=$?
grep -E "Test +#|tests passed|graph nodes|worst output" "$out/ctest.log"
"$build/tests/traces/test_traces_gpu" 2>/dev/null | grep -E "graph nodes|worst output" >> "$out/ctest.log"

: > "$out/bench.log"
summary="$out/summary.txt"
printf "%-34s %12s %12s %9s %13s\n" "case" "graph_us" "streams_us" "speed-up" "inputs/s(g)" > "$summary"
run_case() { # name, arguments
  local name="$1"
  shift
  echo "=== $name: $*" >> "$out/bench.log"
  "$rtm3d" bench --traces "$@" >> "$out/bench.log" 2>&1
  local rc=$?
  local g s r t
  g=$(tail -n 14 "$out/bench.log" | awk '$1 == "graph" && $2 ~ /^[0-9.]+$/ {print $2}')
  s=$(tail -n 14 "$out/bench.log" | awk '$1 == "streams" && $2 ~ /^[0-9.]+$/ {print $2}')
  t=$(tail -n 14 "$out/bench.log" | awk '$1 == "graph" && $2 ~ /^[0-9.]+$/ {print $5}')
  r=$(tail -n 14 "$out/bench.log" | awk '/speed-up/ {print $5}')
  [ $rc -eq 0 ] || r="FAIL($rc)"
  printf "%-34s %12s %12s %9s %13s\n" "$name" "${g:--}" "${s:--}" "${r:--}" "${t:--}" >> "$summary"
}
run_case "1x1024 -> 100 (128..8192) s=16" # the default: 16 worker streams
run_case "1x1024 -> 100 (128..8192) s=16 again"
run_case "1x1024 -> 100 (128..8192) s=1" --streams 1
run_case "1x1024 -> 100 (128..8192) s=4" --streams 4
run_case "1x1024 -> 100 (128..8192) s=8" --streams 8
run_case "1x1024 -> 100 (128..8192) s=32" --streams 32
run_case "1000x1024 -> 8 (128..8192)" --inputs 1000 --outputs 8 --replays 200 --warmup 20
run_case "100x1024 -> 8 (128..8192)" --inputs 100 --outputs 8 --replays 500
grep -E "graph nodes|check|GB/s" "$out/bench.log" | sort | uniq -c | head -30

if command -v compute-sanitizer >/dev/null; then
  timeout 240 compute-sanitizer --tool memcheck --error-exitcode 3 \
    "$build/tests/traces/test_traces_gpu" > "$out/sanitizer.log" 2>&1
  echo "compute-sanitizer memcheck on test_traces_gpu: rc $? ($(grep -c 'ERROR SUMMARY: 0' "$out/sanitizer.log") clean summaries)"
  tail -3 "$out/sanitizer.log"
fi

echo
echo "traces tests: rc $tests_rc ($(grep -E 'tests passed' "$out/ctest.log"))"
cat "$summary"
exit $tests_rc
