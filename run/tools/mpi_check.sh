#!/usr/bin/env bash
# run/tools/mpi_check.sh [BUILD_DIR] - the z-slab decomposition on a GPU machine, one call:
# build, ctest -L mpi (cpu ranks, and cuda ranks sharing the one GPU, each to the bit
# against one rank), then `rtm3d model` of run/examples/bench_512.ini (iso, 512^3, STEPS
# steps, default 200, no snapshots, no receivers) on 1 and 2 cuda ranks sharing the GPU:
# the propagation time and MCells/s of each (the exchange is blocking and staged through
# pinned host memory; 2 ranks on one GPU share its bandwidth, so this measures the cost of
# the exchange, not a speed-up). Short table last; logs under $OUT (or run/out/mpi).
set -uo pipefail
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/device_env.sh" run/out/mpi || exit 1
build="${1:-build-mpi}"
steps="${STEPS:-200}"
summary="$out/summary.txt"
: > "$summary"
failed=0
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
row() { printf '%-40s %s\n' "$1" "$2" | tee -a "$summary"; }
device_info >> "$summary"

device_configure "$build" > "$out/build.log" 2>&1 && ninja -C "$build" >> "$out/build.log" 2>&1 ||
  { grep -E "error|FAILED" "$out/build.log" | head -20; exit 1; }
row "build" "ok ($(grep -c -i warning "$out/build.log") warning lines)"
ctest --test-dir "$build" -L mpi -V > "$out/ctest_mpi.log" 2>&1 || failed=1
row "ctest -L mpi" "$(grep -E 'tests passed' "$out/ctest_mpi.log")"
grep -E "= .*(iso|vti)1: |skipped|FAIL" "$out/ctest_mpi.log" | sed 's/^[0-9]*: //' | tee -a "$summary"

rtm3d="$build/app/rtm3d"
for np in 1 2; do
  mpirun --oversubscribe -np "$np" "$rtm3d" model run/examples/bench_512.ini --quiet \
    --set backend.name=cuda --set model.file= --set model.vp=2000 --set time.steps="$steps" \
    --set snapshots.every=0 --set receivers.layout=none --set output.dir=/tmp/rtm3d_mpi \
    --set output.name="np$np" > "$out/bench_np$np.log" 2>&1 || { failed=1; row "np $np" "FAILED"; continue; }
  cp /tmp/rtm3d_mpi/np$np.json "$out/"
  python3 - "$out/np$np.json" "$np" <<'PY' | tee -a "$summary"
import json, sys
r = json.load(open(sys.argv[1]))
t = r["timings_s"]["propagate"]
print(f"512^3 iso, {r['steps']} steps, {sys.argv[2]} cuda rank(s) on one GPU: propagate {t:.3f} s, {r['mcells_per_s']:.0f} MCells/s")
PY
done
echo
cat "$summary"
exit "$failed"
