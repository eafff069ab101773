#!/usr/bin/env bash
# run/experiments/tti_sustained_shapes.sh [BUILD_DIR] - whether the tti shape the choice
# table takes (chosen from `bench`'s 0.2 s windows) is still the fastest over seconds, when
# the H200 holds the kernel at its power cap (run/results/end_to_end.md, "The time loop
# against the kernel"): `rtm3d bench` of run/examples/bench_tti_512.ini (a constant model) for
# each of SHAPES (';'-separated: halo stages block_x block_y zblock model_precision) in 3 windows of 20
# steps and in 3 windows of 330, the shapes alternated, ROUNDS rounds (default 2). Logs
# under $OUT (or run/out/tti_sustained_shapes), the short table last.
set -uo pipefail
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/../tools/device_env.sh" run/out/tti_sustained_shapes || exit 1
build="${1:-build-probe}"
device_summary
device_build_once "$build" || exit 1
IFS=';' read -ra shapes <<<"${SHAPES:-tma 2 64 4 64 fp32;tma 3 64 4 64 fp32;tma 2 32 8 64 fp32;tma 2 64 4 128 fp32;ldgsts 2 64 4 64 fp32;tma 2 64 4 64 fp16}"
for round in $(seq "${ROUNDS:-2}"); do
  for shape in "${shapes[@]}"; do
    read -r halo stages bx by zblock precision <<<"$shape"
    for steps in 20 330; do
      log="$out/${halo}_${stages}_${bx}x${by}_${zblock}_${precision}_${steps}_$round.log"
      "$build/app/rtm3d" bench run/examples/bench_tti_512.ini --set model.file= \
        --set kernel.halo="$halo" --set kernel.stages="$stages" --set kernel.block_x="$bx" \
        --set kernel.block_y="$by" --set kernel.zblock="$zblock" \
        --set memory.model_precision="$precision" --set bench.warmup=5 \
        --set bench.steps="$steps" > "$log" 2>&1 || failed=1
      row "#$round $shape, windows of $steps" "$(grep -E '^best' "$log" | sed 's/^best: //')"
    done
  done
done
echo
cat "$summary"
exit "$failed"
