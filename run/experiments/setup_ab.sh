#!/usr/bin/env bash
# run/experiments/setup_ab.sh SRC - a set-up change against the build before it (issue 34:
# `model` of 8 shots <= 1.05 x its propagation): builds the tree (build-new) and the source
# tree SRC (SRC/build-base), runs the GPU tests of the tree with GPU_TESTS=1, compares the
# two builds' outputs on the cuda backend with COMPARE=1, then `rtm3d model` of the 8-shot
# 512^3 survey of run/results/end_to_end.md (iso and tti, 1000 steps; STEPS=1 for the set-up
# alone), base and tree alternated ROUNDS times (default 2, each build first in turn): the
# process's wall against its report's propagate, and the set-up's phases. Logs under $OUT
# (or run/out/setup_ab), the short table last. The outputs go to /dev/shm (tmpfs), or under
# WORK_DIR (for example /tmp: on the disk, which their sync before the commit waits for).
#
#   rm -rf .probe/base-src && mkdir -p .probe/base-src &&
#     git archive BASE | tar -x -C .probe/base-src
#   GPU_TESTS=1 run/experiments/setup_ab.sh .probe/base-src    (device tool: carry .deps and
#                                                                .probe/base-src)
set -uo pipefail
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/../tools/device_env.sh" run/out/setup_ab || exit 1
src="${1:?usage: setup_ab.sh SRC (an earlier source tree)}"
device_prepare_pair "$src" || exit 1
[ "${COMPARE:-0}" = 1 ] && { device_compare_builds "$src" || failed=1; }
w=$(mktemp -d "${WORK_DIR:-/dev/shm}/setup_ab.XXXXXX") # WORK_DIR=/tmp: the outputs on the disk
trap 'rm -rf "$w"' EXIT
survey=(--set model.file= --set time.steps="${STEPS:-1000}" --set shots.layout=grid
  --set shots.x_count=4 --set shots.y_count=2 --set shots.z=200 --quiet --force
  --set output.dir="$w")
for round in $(seq "${ROUNDS:-2}"); do
  for eq in tti iso; do
    deck=run/examples/bench_512.ini
    [ "$eq" = tti ] && deck=run/examples/bench_tti_512.ini
    order="base new"
    [ $((round % 2)) = 0 ] && order="new base" # each first in turn
    for which in $order; do
      rtm3d=build-new/app/rtm3d
      [ "$which" = base ] && rtm3d="$src/build-base/app/rtm3d"
      name="${eq}_${which}_$round"
      t0=$(date +%s.%N)
      "$rtm3d" model "$deck" "${survey[@]}" --set output.name="$name" >>"$out/runs.log" 2>&1 ||
        { row "$name" FAILED; failed=1; continue; }
      t1=$(date +%s.%N)
      row "model $eq, $which, round $round" "$(run/tools/report_timings.py "$w/$name.json" \
        --wall "$t0" "$t1" setup_load setup_propagator)"
    done
  done
done
echo
cat "$summary"
exit "$failed"
