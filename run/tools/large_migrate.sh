#!/usr/bin/env bash
# run/tools/large_migrate.sh [BUILD_DIR] - a reverse-time migration larger than one GPU,
# across the GPUs of one machine (one rank a GPU): N^3 cells of tti in fp32 (N default
# 1280: two propagators of 92 GB each, more than an H200's 141 GB), one shot.
#
#   1. build (unless BUILD_DIR has rtm3d and BUILD=0)
#   2. `rtm3d model` on NP ranks (default: every GPU): the observed gather of a reflector at
#      700 m (2000 over 3000 m/s, tilt 30/20 degrees, epsilon 0.2, delta 0.1), STEPS steps
#      (default 600) of 1.1 ms (the reflection is back by 0.52 s), the shot and receivers
#      (every 40 cells) at 300 m
#   3. `rtm3d migrate` on one rank: refused (exit 1 expected), naming what it needs
#   4. `rtm3d migrate` on NP ranks with the reflector left out of the model
#      (model.interface_z = auto): the report's reconstruction, lines per rank, timings; the
#      image's PNGs come back
#
# Every run has NCCL_NVLS_ENABLE=0 and mpirun --bind-to none. Short table last; under $OUT
# (or run/out/large_migrate) summary.txt, logs, reports and PNGs.
set -uo pipefail
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/device_env.sh" run/out/large_migrate || exit 1
build="${1:-build-large}"
n="${N:-1280}"
steps="${STEPS:-600}"
device_summary
device_ranks
device_build_once "$build" || exit 1
rtm3d="$build/app/rtm3d"
deck=(run/examples/bench_tti_512.ini --set backend.name=cuda --set model.file=
  --set model.vp=2000 --set model.vp_below=3000 --set model.epsilon=0.2 --set model.delta=0.1
  --set model.theta=30 --set model.phi=20 --set grid.nx="$n" --set grid.ny="$n"
  --set grid.nz="$n" --set time.steps="$steps" --set time.dt=0.0011 --set source.z=300
  --set receivers.z=300
  --set receivers.x_step=40 --set receivers.y_step=40 --set output.dir="$out" --force)

step "model on $np ranks"
mpirun_np "$np" "$rtm3d" model "${deck[@]}" --set model.interface_z=700 \
  --set output.name=observed > "$out/model.log" 2>&1 || failed=1
row "model, ${n}^3 tti, $np ranks" "$(grep -m1 -o 'done in .*' "$out/model.log")"

step "migrate on one rank: refused"
code=0
mpirun_np 1 "$rtm3d" migrate "${deck[@]}" --set rtm.observed="$out/observed.h5" \
  --set output.name=one > "$out/one.log" 2>&1 || code=$?
row "migrate, 1 rank" "exit $code: $(grep -m1 -o 'error: .*' "$out/one.log")"
[ "$code" = 1 ] || failed=1

step "migrate on $np ranks"
mpirun_np "$np" "$rtm3d" migrate "${deck[@]}" --set rtm.observed="$out/observed.h5" \
  --set output.name=image > "$out/migrate.log" 2>&1 || failed=1
tail -3 "$out/migrate.log" | tee -a "$summary"
python3 - "$out/image.json" "$np" <<'EOF' | tee -a "$summary"
import json, sys
try:
    report = json.load(open(sys.argv[1]))
except (OSError, ValueError) as error:
    sys.exit(f"no report: {error}")
t = report["timings_s"]
r = report.get("reconstruction", {})
print(f"migrate on {sys.argv[2]} ranks: grid {report['grid']['n']}, {report['steps']} steps,"
      f" reconstruction {r.get('name')} (estimated {r.get('estimate_bytes', 0) / 1e9:.2f} GB,"
      f" measured {r.get('measured_bytes', 0) / 1e9:.2f} GB in {r.get('measured_in')})")
for line in report.get("ranks", []):
    print("  " + line)
print("  " + ", ".join(f"{k} {v:.2f} s" for k, v in t.items() if not k[-4:] in ("_min", "_max")))
print(f"  {report['mcells_per_s'] / 1e3:.1f} GCells/s over both propagations")
EOF
rm -f "$out"/*.h5
echo
cat "$summary"
exit "$failed"
