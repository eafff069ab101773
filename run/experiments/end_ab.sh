#!/usr/bin/env bash
# run/experiments/end_ab.sh SRC - the end of a migration (the sums' rounding, the image's
# filters, the figures, the synced write of image and illumination) of the tree against an
# earlier source tree SRC: builds both (build-new, SRC/build-base), runs the GPU tests of the
# tree with GPU_TESTS=1, models one 512^3 iso shot of 1000 steps (the survey deck of
# run/results/end_to_end.md with one shot: the end is the survey's, its shots fewer), then
# migrates it with each build alternated ROUNDS times (default 3, each first in turn) with
# the outputs on the disk (/tmp) and on tmpfs (/dev/shm): the process's wall and the end's
# phases from each report, and each pair's images compared bit for bit. Logs under $OUT (or
# run/out/end_ab), the short table last.
#
#   rm -rf .probe/base-src && mkdir -p .probe/base-src &&
#     git archive BASE | tar -x -C .probe/base-src
#   GPU_TESTS=1 run/experiments/end_ab.sh .probe/base-src    (device tool: carry .deps and
#                                                              .probe/base-src)
set -uo pipefail
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/../tools/device_env.sh" run/out/end_ab || exit 1
src="${1:?usage: end_ab.sh SRC (an earlier source tree)}"
device_prepare_pair "$src" || exit 1
deck=(run/examples/bench_512.ini --set model.file= --set time.steps=1000 --set shots.layout=grid
  --set shots.x_count=1 --set shots.y_count=1 --set shots.z=200 --quiet --force)
shm=$(mktemp -d /dev/shm/end_ab.XXXXXX)
disk=$(mktemp -d /tmp/end_ab.XXXXXX)
trap 'rm -rf "$shm" "$disk"' EXIT
build-new/app/rtm3d model "${deck[@]}" --set output.dir="$shm" --set output.name=observed \
  >"$out/model.log" 2>&1 || { row model FAILED; exit 1; }
for round in $(seq "${ROUNDS:-3}"); do
  order="base new"
  [ $((round % 2)) = 0 ] && order="new base" # each first in turn
  for place in disk shm; do
    dir="$disk"
    [ "$place" = shm ] && dir="$shm"
    for which in $order; do
      rtm3d=build-new/app/rtm3d
      [ "$which" = base ] && rtm3d="$src/build-base/app/rtm3d"
      name="${place}_${which}_$round"
      t0=$(date +%s.%N)
      "$rtm3d" migrate "${deck[@]}" --set output.dir="$dir" --set output.name="$name" \
        --set rtm.observed="$shm/observed.h5" >>"$out/runs.log" 2>&1 ||
        { row "$name" FAILED; failed=1; continue; }
      t1=$(date +%s.%N)
      row "$name" "$(python3 - "$dir/$name.json" "$t0" "$t1" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["timings_s"]
wall = float(sys.argv[3]) - float(sys.argv[2])
end = t["filters"] + t["figures"] + t["write"]
print(f"wall {wall:.2f} s; end {end:.2f} s (filters {t['filters']:.2f}, "
      f"figures {t['figures']:.2f}, write {t['write']:.2f})")
PY
)"
    done
    build-new/app/rtm3d validate "$dir/${place}_new_$round.h5" "$dir/${place}_base_$round.h5" \
      --rtol 0 --atol 0 --datasets /image,/illumination >"$out/validate.log" 2>&1 || failed=1
    row "$place #$round: tree against base" "$(grep -E '^/(image|illumination)' \
      "$out/validate.log" | awk '{printf "%s %s; ", $1, $3}')"
    rm -f "$dir/${place}_"*"_$round"*
  done
done
exit "$failed"
