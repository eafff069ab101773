#!/usr/bin/env bash
# run/tools/mpi_check.sh [BUILD_DIR] - the z-slab decomposition on a GPU machine, one call:
# build, ctest -L mpi (cpu ranks, and cuda ranks sharing the one GPU, each to the bit
# against one rank), then `rtm3d model` of run/examples/bench_512.ini (iso, 512^3, STEPS
# steps, default 1000, no snapshots, no receivers) on 1 cuda rank and on 2 sharing the GPU
# with mpi.exchange = off, blocking and overlap: the propagation times, and the share of
# the exchange's cost (blocking - off) that overlapping hides. Two ranks on one GPU share
# its bandwidth: this measures the exchange, not a speed-up. Short table last; logs under
# $OUT (or run/out/mpi).
set -uo pipefail
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/device_env.sh" run/out/mpi || exit 1
build="${1:-build-mpi}"
steps="${STEPS:-1000}"
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
# name NP EXCHANGE: one model run, its report kept as $out/name.json
bench() {
  mpirun --oversubscribe -np "$2" "$rtm3d" model run/examples/bench_512.ini --quiet \
    --set backend.name=cuda --set model.file= --set model.vp=2000 --set time.steps="$steps" \
    --set snapshots.every=0 --set receivers.layout=none --set mpi.exchange="$3" \
    --set output.dir=/tmp/rtm3d_mpi --set output.name="$1" > "$out/$1.log" 2>&1 &&
    cp "/tmp/rtm3d_mpi/$1.json" "$out/" || { failed=1; row "$1" "FAILED"; }
}
bench np1 1 overlap
for exchange in off blocking overlap; do bench "np2_$exchange" 2 "$exchange"; done
python3 - "$out" "$steps" <<'PY' | tee -a "$summary"
import json, os, sys
out, steps = sys.argv[1], sys.argv[2]
t = {}
for name in ("np1", "np2_off", "np2_blocking", "np2_overlap"):
    path = os.path.join(out, name + ".json")
    if not os.path.exists(path): continue
    r = json.load(open(path))
    t[name] = r["timings_s"]["propagate"]
    print(f"512^3 iso, {steps} steps, {name}: propagate {t[name]:.3f} s, {r['mcells_per_s']:.0f} MCells/s")
if len(t) == 4:
    cost = t["np2_blocking"] - t["np2_off"]
    left = t["np2_overlap"] - t["np2_off"]
    print(f"exchange on 2 ranks sharing the GPU: {cost:.3f} s blocking, {left:.3f} s left when "
          f"overlapped: {100 * (1 - left / cost):.0f}% hidden")
PY
echo
cat "$summary"
exit "$failed"
