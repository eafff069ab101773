#!/usr/bin/env bash
# run/experiments/backward_kernels_probe.sh [BUILD_DIR] - what each kernel of a migration's
# steps costs on the GPU machine: for iso (bench_512) and tti (bench_tti_512) at 512^3, a
# constant model and 3481 receivers (a plane every 80 m), `rtm3d model` of 60 steps writes
# the gathers, then ncu times every kernel of `rtm3d migrate` of them (snapshots: the
# forward pass's steps, the ones that take a snapshot, the backward pass's steps, the
# imaging ones, the receivers' injection, the shot's illumination pass), each kernel's
# launches, total, least, median and most. Short table last; logs under $OUT (or
# run/out/backward_kernels).
#
#   run/experiments/backward_kernels_probe.sh      (device tool: carry .deps)
set -uo pipefail
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/../tools/device_env.sh" run/out/backward_kernels || exit 1
build="${1:-build-cost}"
device_summary
device_build_once "$build" || exit 1
runs=/dev/shm/rtm3d_backward_kernels
rm -rf "$runs" && mkdir -p "$runs"
trap 'rm -rf "$runs"' EXIT
for example in ${EXAMPLES:-bench_512 bench_tti_512}; do
  deck=("run/examples/$example.ini" --set backend.name=cuda --set model.file=
    --set output.dir="$runs" --force --set time.steps=60 --set receivers.x_step=80
    --set receivers.y_step=80)
  "$build/app/rtm3d" model "${deck[@]}" --set output.name="observed_$example" \
    > "$out/model_$example.log" 2>&1 || { row "model $example" FAILED; failed=1; continue; }
  ncu --clock-control none --metrics gpu__time_duration.sum "$build/app/rtm3d" migrate \
    "${deck[@]}" --set rtm.observed="$runs/observed_$example.h5" \
    --set output.name="image_$example" > "$out/ncu_$example.log" 2>&1 ||
    { row "ncu migrate $example" FAILED; failed=1; continue; }
  python3 run/tools/ncu_kernels.py "$out/ncu_$example.log" "$example" --top 10 >> "$summary"
done
echo
cat "$summary"
exit "$failed"
