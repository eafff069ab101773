#!/usr/bin/env bash
# run/tools/survey_check.sh BASE_SRC - the GPU machine's A/B of a survey's time to image, in
# one call: builds the tree and an earlier tree (BASE_SRC, as for refactor_check.sh), models
# the 8-shot 512^3 iso survey of run/results/end_to_end.md once with the tree, then migrates
# its gathers with each build in turn (run/survey.sh with OBSERVED), twice, and compares the
# two images bit for bit (rtm3d validate --rtol 0 --atol 0); then run/tools/compare_builds.sh
# on the cuda backend. Logs under $OUT (or run/out/), a short table last.
set -uo pipefail
base_src="$(realpath "${1:?usage: run/tools/survey_check.sh BASE_SRC}")"
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/device_env.sh" run/out || exit 1
device_summary
device_build_pair "$base_src" || exit 1
survey=(run/examples/bench_512.ini --set model.file= --set time.steps=1000 --set shots.layout=grid
  --set shots.x_count=4 --set shots.y_count=2 --set shots.z=200)
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
step "model the survey (tree)"
OUT="$work/model" RTM3D=build-new/app/rtm3d OBSERVED= run/survey.sh "${survey[@]}" \
  >"$out/survey.log" 2>&1 || { tail -5 "$out/survey.log"; row survey FAILED; exit 1; }
row "model + migrate (tree)" "$(grep '^survey:' "$out/survey.log" | tail -1)"
for round in 1 2; do
  for side in base new; do
    binary=build-new/app/rtm3d
    [ "$side" = base ] && binary="$base_src/build-base/app/rtm3d"
    OUT="$work/$side" RTM3D="$binary" OBSERVED="$work/model/survey_observed.h5" \
      run/survey.sh "${survey[@]}" >>"$out/survey.log" 2>&1 || failed=1
    row "migrate $side #$round" "$(grep '^survey:' "$out/survey.log" | tail -1 | sed 's/.*migrate wall/wall/')"
    grep '^migrate phases' "$out/survey.log" | tail -1 | tee -a "$summary"
  done
done
build-new/app/rtm3d validate "$work/new/survey_image.h5" "$work/base/survey_image.h5" --rtol 0 \
  --atol 0 >"$out/validate.log" 2>&1 && row "images new = base" "bit for bit" ||
  { row "images new = base" "DIFFER"; failed=1; }
device_compare_builds "$base_src" || failed=1
echo
cat "$summary"
exit "$failed"
