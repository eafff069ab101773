#!/usr/bin/env bash
# run/experiments/codec_steps.sh - what a zfp snapshot's compression and decompression cost,
# and an fp16 snapshot's packing and unpacking, in steps of the propagation: the figures
# rtm.reconstruction = auto weighs them with against fp32 snapshots, boundary and checkpoint
# (rtm.snapshot_codec_steps = auto reads zfp's from the table in
# solver/rtm/reconstruction_snapshots.c, fp16's from the table beside it). For each equation
# of EQUATIONS (default "iso vti tti"): `model` writes one shot's gathers, then `migrate` runs
# it with fp32 snapshots and with those of PRECISIONS (default "fp16 zfp"; zfp at RATE,
# default 6, bits a value), imaged every IMAGING_STEP steps (default 5; fp32's snapshots must
# fit); a format's cost is its shot passes (forward, backward, imaging) less fp32's, over the
# snapshots (STEPS / IMAGING_STEP), in steps of `model`'s
# propagation of the same shot (its report's propagate over STEPS: fp32's forward pass, on
# the cpu backend, also faults in the snapshots' pages). Constant models: iso from
# run/examples/bench_512.ini, vti and tti from bench_tti_512.ini with epsilon 0.2, delta 0.1
# (tti: theta 30, phi 20).
#   on the GPU machine (carry .deps):  run/experiments/codec_steps.sh            # N=512
#   on the cpu backend, here:          BACKEND=cpu N=160 STEPS=300 RTM3D=build/app/rtm3d \
#                                        run/experiments/codec_steps.sh
# GPU_TESTS=1 runs ctest -L gpu first. Logs under $OUT (or run/out/codec_steps); the table
# last: each equation's passes and its steps a snapshot.
set -uo pipefail
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/../tools/device_env.sh" run/out/codec_steps || exit 1
device_summary
backend="${BACKEND:-cuda}"
rtm3d="${RTM3D:-}"
if [ -z "$rtm3d" ]; then
  device_build_once build-new || exit 1
  rtm3d=build-new/app/rtm3d
fi
device_gpu_tests_asked build-new
n="${N:-512}" steps="${STEPS:-1000}" every="${IMAGING_STEP:-5}" rate="${RATE:-6}"
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
keys=(--set backend.name="$backend" --set memory.strategy=auto --set model.file=
  --set time.steps="$steps"
  --set grid.nx="$n" --set grid.ny="$n" --set grid.nz="$n" --set shots.layout=grid
  --set shots.x_count=1 --set shots.y_count=1 --set shots.z=200 --set rtm.imaging_step="$every")
read -r -a equations <<<"${EQUATIONS:-iso vti tti}"
for eq in "${equations[@]}"; do
  deck=run/examples/bench_tti_512.ini
  media=(--set physics.equation="$eq" --set model.epsilon=0.2 --set model.delta=0.1)
  [ "$eq" = tti ] && media+=(--set model.theta=30 --set model.phi=20)
  [ "$eq" = iso ] && { deck=run/examples/bench_512.ini; media=(); }
  step "$eq $n^3: model"
  "$rtm3d" model $deck "${keys[@]}" "${media[@]}" --quiet --force --set output.dir="$w" \
    --set output.name="obs_$eq" >>"$out/runs.log" 2>&1 ||
    { row "$eq model" FAILED; failed=1; continue; }
  cp "$w/obs_$eq.json" "$out/"
  read -r -a formats <<<"fp32 ${PRECISIONS:-fp16 zfp}"
  for precision in "${formats[@]}"; do
    step "$eq $n^3: migrate, $precision"
    "$rtm3d" migrate $deck "${keys[@]}" "${media[@]}" --set rtm.observed="$w/obs_$eq.h5" \
      --set rtm.reconstruction=snapshots --set rtm.snapshot_precision=$precision \
      --set rtm.snapshot_rate="$rate" --force --quiet --set output.dir="$w" \
      --set output.name="${eq}_$precision" >>"$out/runs.log" 2>&1 ||
      { row "$eq $precision" FAILED; failed=1; continue 2; }
    cp "$w/${eq}_$precision.json" "$out/"
  done
  row "$eq ($backend, $n^3, every $every of $steps, rate $rate)" "$(python3 - "$w/obs_$eq.json" \
    "$steps" "$every" "$w/$eq" "${formats[@]}" <<'EOF'
import sys
sys.path.insert(0, "run/tools")
from report_timings import timings
model, steps, every, stem = timings(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
runs = {f: timings("%s_%s.json" % (stem, f)) for f in sys.argv[5:]}
passes = ("forward", "backward", "imaging")
shot = lambda t: sum(t.get(k, 0.0) for k in passes)
step = model["propagate"] / steps
text = ["a step %.3f ms" % (1e3 * step)]
for name, t in runs.items():
    cost = (shot(t) - shot(runs["fp32"])) / (steps // every)
    per = "" if name == "fp32" else ": %.3f ms a snapshot, %.2f steps" % (1e3 * cost, cost / step)
    text.append("%s %s%s" % (name, " ".join("%.2f" % t.get(k, 0.0) for k in passes), per))
print("; ".join(text))
EOF
)"
  rm -f "$w"/*.h5
done
echo
cat "$summary"
exit "$failed"
