#!/usr/bin/env bash
# run/tools/large_volume.sh [BUILD_DIR] - a TTI volume larger than one GPU's memory, across
# the GPUs of one machine (one rank a GPU): N^3 cells in fp32 (N default 1500: 154 GB of
# fields and coefficients, more than an H200's 141 GB).
#
#   1. build (unless BUILD_DIR has rtm3d and BUILD=0); with GPU_TESTS=1 (default) ctest -L gpu
#   2. one rank: refused before the model is made, naming what it needs (exit 1 expected)
#   3. NP ranks (default: every GPU): `rtm3d model`, STEPS steps (default 200) of the constant
#      tti model (model.vp=2000, epsilon 0.2, delta 0.1, tilt 30/20 degrees), receivers every
#      80 cells of the plane z = 200 m; the report's line per rank (memory taken against the
#      preflight estimate), set-up parts, propagation, MCells/s; nvidia-smi's memory.used of
#      each GPU sampled every second during the run (the peak in the table)
#
# Every run has NCCL_NVLS_ENABLE=0 in its environment. Short table last; under $OUT (or
# run/out/large_volume) summary.txt, the logs and the run's JSON.
set -uo pipefail
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/device_env.sh" run/out/large_volume || exit 1
build="${1:-build-large}"
n="${N:-1500}"
steps="${STEPS:-200}"
device_summary
device_ranks
device_build_once "$build" || exit 1
rtm3d="$build/app/rtm3d"
if [ "${GPU_TESTS:-1}" = 1 ]; then
  step "ctest -L gpu"
  device_gpu_tests "$build" || failed=1
fi

deck=(run/examples/bench_tti_512.ini --set backend.name=cuda --set model.file=
  --set model.vp=2000 --set model.epsilon=0.2 --set model.delta=0.1 --set model.theta=30
  --set model.phi=20 --set grid.nx="$n" --set grid.ny="$n" --set grid.nz="$n"
  --set time.steps="$steps" --set output.dir="$out" --force)

step "one rank: refused"
code=0
mpirun_np 1 "$rtm3d" model "${deck[@]}" --set output.name=one > "$out/one.log" 2>&1 || code=$?
row "1 rank, ${n}^3 tti fp32" "exit $code: $(grep -m1 -o 'error: .*' "$out/one.log")"
[ "$code" = 1 ] || failed=1

step "$np ranks"
nvidia-smi --query-gpu=index,memory.used --format=csv,noheader,nounits -l 1 > "$out/memory.csv" &
sampler=$!
mpirun_np "$np" "$rtm3d" model "${deck[@]}" --set output.name=large > "$out/large.log" 2>&1 ||
  failed=1
kill "$sampler" 2>/dev/null
wait "$sampler" 2>/dev/null
tail -3 "$out/large.log" | tee -a "$summary"
python3 - "$out/large.json" "$out/memory.csv" "$np" <<'EOF' | tee -a "$summary"
import collections, json, sys
try:
    report = json.load(open(sys.argv[1]))
except (OSError, ValueError) as error:
    sys.exit(f"no report: {error}")
t = report["timings_s"]
print(f"{sys.argv[3]} ranks: grid {report['grid']}, {report['steps']} steps")
for line in report.get("ranks", []):
    print("  " + line)
print("  set-up %.1f s (load %.1f, propagator %.1f, output %.1f), propagate %.2f s, %.1f GCells/s"
      % (t["setup"], t["setup_load"], t["setup_propagator"], t["setup_output"], t["propagate"],
         report["mcells_per_s"] / 1e3))
peak = collections.defaultdict(int)
for row in open(sys.argv[2]):
    index, used = (int(v) for v in row.split(","))
    peak[index] = max(peak[index], used)
print("  peak memory.used (nvidia-smi): " +
      ", ".join(f"GPU {i} {peak[i] / 1024:.1f} GiB" for i in sorted(peak)))
EOF
echo
cat "$summary"
exit "$failed"
