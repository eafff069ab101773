#!/usr/bin/env bash
# run/experiments/step_gap_probe.sh [BUILD_DIR] - where `model`'s propagation loses to
# `bench`'s kernel (issue 34, item 4: 0.81 against 0.70 ms a step at 512^3), on the GPU
# machine: for EXAMPLES (default bench_512, iso at a constant 2000 m/s, and bench_tti_512),
# `rtm3d bench` and `rtm3d model` of the deck, 1000 steps, without receivers and with 3481,
# the gathers written to tmpfs, and `rtm3d migrate` of those gathers (its forward pass
# against model's propagation); then ncu's GPU time of every kernel of 30 steps in the middle of a
# 400-step model run (the stencil, the source's injection, the receivers' record), so that
# a step's kernels can be set against its wall time. GPU_TESTS=1 runs `ctest -L gpu`
# first. Short table last; logs under $OUT (or
# run/out/step_gap_probe).
set -uo pipefail
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/../tools/device_env.sh" run/out/step_gap_probe || exit 1
build="${1:-build-cost}"
device_summary
device_build_once "$build" || exit 1
if [ "${GPU_TESTS:-0}" = 1 ]; then device_gpu_tests "$build" || failed=1; fi
runs=/dev/shm/rtm3d_step_gap
rm -rf "$runs" && mkdir -p "$runs"
deck=(run/examples/bench_512.ini --set backend.name=cuda --set model.file= --set model.vp=2000
  --set output.dir="$runs" --force)
for example in ${EXAMPLES:-bench_512 bench_tti_512}; do
  deck=("run/examples/$example.ini" --set backend.name=cuda --set model.file=
    --set output.dir="$runs" --force)
  [ "$example" = bench_512 ] && deck+=(--set model.vp=2000)
  "$build/app/rtm3d" bench "${deck[@]}" --set time.steps=1000 > "$out/bench_$example.log" 2>&1 ||
    failed=1
  row "$example: bench" "$(grep -E "^best" "$out/bench_$example.log")"
  for case in "none 0" "3481 80"; do
    read -r name step <<<"$case"
    receivers=(--set receivers.x_step=80 --set receivers.y_step=80)
    [ "$step" = 0 ] && receivers=(--set receivers.layout=none)
    for round in 1 2; do
      "$build/app/rtm3d" model "${deck[@]}" --set time.steps=1000 "${receivers[@]}" \
        --set output.name="gap_$name" > "$out/model_${example}_${name}_$round.log" 2>&1 || failed=1
      row "$example: model, receivers $name, round $round" "$(run/tools/report_timings.py \
        "$runs/gap_$name.json" propagate) $(grep -o 'propagation [^,]*, [0-9.]* MCells/s' \
        "$out/model_${example}_${name}_$round.log")"
    done
  done
  # migrate of the 3481 receivers' gathers: its forward pass against model's propagation
  "$build/app/rtm3d" migrate "${deck[@]}" --set time.steps=1000 --set receivers.x_step=80 \
    --set receivers.y_step=80 --set rtm.observed="$runs/gap_3481.h5" --set output.name=gap_rtm \
    > "$out/migrate_$example.log" 2>&1 || failed=1
  row "$example: migrate" "$(run/tools/report_timings.py "$runs/gap_rtm.json" forward backward \
    imaging) $(grep -o 'reconstruction[^;,]*' "$out/migrate_$example.log" | head -1)"
  rm -f "$runs"/gap_*
done
deck=(run/examples/bench_512.ini --set backend.name=cuda --set model.file= --set model.vp=2000
  --set output.dir="$runs" --force)
ncu --clock-control none -s 600 -c 90 --metrics gpu__time_duration.sum \
  "$build/app/rtm3d" model "${deck[@]}" --set time.steps=400 --set receivers.x_step=80 \
  --set receivers.y_step=80 --set output.name=ncu > "$out/ncu.log" 2>&1 || failed=1
python3 run/tools/ncu_kernels.py "$out/ncu.log" >> "$summary"
rm -rf "$runs"
(cd "$out" && tar czf logs.tar.gz --remove-files $(ls ./*.log 2>/dev/null))
echo
cat "$summary"
exit "$failed"
