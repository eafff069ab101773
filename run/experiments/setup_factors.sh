#!/usr/bin/env bash
# run/experiments/setup_factors.sh [BUILD_DIR] - what tti's longer set-up is made of (issue
# 34: a one-GPU tti survey's set-up 1.1-1.3 s against iso's 0.5 s): `rtm3d model` of one step
# of the 512^3 bench decks with a constant model, no receivers, twice each (the second with
# the page cache and the driver warm), for iso, vti, tti, tti with binary16 coefficients and
# tti with physics.smooth_angles = 0 (ONLY: a regular expression of those names, e.g.
# ONLY='tti|tti_fp16'); the run report's set-up phases. With perf on the machine, a profile
# of the tti set-up's host work too (perf.txt). Logs under $OUT (or run/out/setup_factors),
# the short table last.
set -uo pipefail
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/../tools/device_env.sh" run/out/setup_factors || exit 1
build="${1:-build-probe}"
device_summary
device_build_once "$build" || exit 1
runs=/dev/shm/rtm3d_setup
rm -rf "$runs" && mkdir -p "$runs"
rtm3d="$build/app/rtm3d"
common=(--set backend.name=cuda --set model.file= --set receivers.layout=none --set time.steps=1
  --set output.dir="$runs" --force --quiet)
cases=("iso run/examples/bench_512.ini"
  "vti run/examples/bench_tti_512.ini --set physics.equation=vti"
  "tti run/examples/bench_tti_512.ini"
  "tti_fp16 run/examples/bench_tti_512.ini --set memory.model_precision=fp16"
  "tti_nosmooth run/examples/bench_tti_512.ini --set physics.smooth_angles=0")
for c in "${cases[@]}"; do
  read -r name deck extra <<<"$c"
  [[ "$name" =~ ^(${ONLY:-.*})$ ]] || continue
  for round in 1 2; do
    # shellcheck disable=SC2086
    /usr/bin/time -f "%e s wall, %U s user, %S s sys" "$rtm3d" model "$deck" "${common[@]}" $extra \
      --set output.name="${name}_$round" > "$out/${name}_$round.log" 2>&1 || failed=1
    row "$name #$round" "$(run/tools/report_timings.py "$runs/${name}_$round.json" setup_load \
      setup_propagator setup_output propagate write) | $(tail -1 "$out/${name}_$round.log")"
  done
done
if command -v perf > /dev/null; then
  perf record -g -o "$out/perf.data" "$rtm3d" model run/examples/bench_tti_512.ini "${common[@]}" \
    --set output.name=tti_perf > /dev/null 2>&1
  perf report -i "$out/perf.data" --no-children --stdio -n --sort symbol 2>/dev/null |
    grep -E '^ +[0-9]' | head -40 > "$out/perf.txt"
  rm -f "$out/perf.data"
  row perf "$(head -8 "$out/perf.txt" | awk '{printf "%s %s; ", $1, $4}')"
else
  row perf "not on this machine"
fi
echo
cat "$summary"
exit "$failed"
