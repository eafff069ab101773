#!/usr/bin/env bash
# run/tools/groups_check.sh BASE_SRC - the GPU machine's A/B of a survey on one GPU and on
# NP GPUs in shot groups (default NP="1 2"), in one call: builds the tree and an earlier
# tree (BASE_SRC, a source folder such as `git archive COMMIT | tar -x -C base-src` made
# before the call), runs ctest -L gpu of the tree, models the 8-shot 512^3 iso survey of
# run/results/end_to_end.md once with the tree, then migrates its gathers with each build
# in turn (run/survey.sh with OBSERVED: each rank count's wall against the floor, and the
# grouped image against the one-GPU image), ROUNDS times (default 2); last the tree's
# one-GPU image against the earlier tree's, and each grouped image against the earlier
# tree's of the same count. For changes that move the image within float
# rounding (refactors that must not: run/tools/survey_check.sh). Logs under $OUT (or
# run/out/), a short table last.
# Environment: NP, ROUNDS; DECK the survey's deck (default run/examples/bench_512.ini, iso;
# run/examples/bench_tti_512.ini for tti); RTOL the one-GPU images' bar, tree against base
# (default 1e-6; 0: bit for bit); GPU_TESTS=0 skips ctest -L gpu (a second call on the
# same builds); SETS="key=value ..." more keys for the migrations alone (for example
# SETS=rtm.resume_every=0: a save after every round).
set -uo pipefail
base_src="$(realpath "${1:?usage: run/tools/groups_check.sh BASE_SRC}")"
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/device_env.sh" run/out || exit 1
device_summary
device_ranks
np="${NP:-1 $gpus}" # one GPU first: the grouped images are compared with its
device_build_pair "$base_src" || exit 1
if [ "${GPU_TESTS:-1}" != 0 ]; then
  step "ctest -L gpu"
  device_gpu_tests build-new || failed=1
fi
survey=("${DECK:-run/examples/bench_512.ini}" --set model.file= --set time.steps=1000 --set shots.layout=grid
  --set shots.x_count=4 --set shots.y_count=2 --set shots.z=200)
migrate_sets=()
for kv in ${SETS:-}; do migrate_sets+=(--set "$kv"); done
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
step "model the survey (tree)"
OUT="$work/model" RTM3D=build-new/app/rtm3d OBSERVED= NP=1 run/survey.sh "${survey[@]}" \
  >"$out/survey.log" 2>&1 || { tail -5 "$out/survey.log"; row survey FAILED; exit 1; }
for round in $(seq "${ROUNDS:-2}"); do
  for side in base new; do
    binary=build-new/app/rtm3d
    [ "$side" = base ] && binary="$base_src/build-base/app/rtm3d"
    step "migrate $side #$round"
    OUT="$work/$side" RTM3D="$binary" OBSERVED="$work/model/survey_observed.h5" NP="$np" \
      run/survey.sh "${survey[@]}" "${migrate_sets[@]}" >"$out/survey_${side}_$round.log" 2>&1 ||
      failed=1
    cat "$out/survey_${side}_$round.log" >>"$out/survey.log"
    grep '^survey:' "$out/survey_${side}_$round.log" | sed 's/^survey: //' |
      while read -r line; do row "$side #$round" "$line"; done
    grep '^image against' "$out/survey_${side}_$round.log" | tee -a "$summary"
  done
done
rtol="${RTOL:-1e-6}"
exact=()
[ "$rtol" = 0 ] && exact=(--atol 0)
build-new/app/rtm3d validate "$work/new/survey_image.h5" "$work/base/survey_image.h5" \
  --rtol "$rtol" "${exact[@]}" --datasets /image,/illumination >"$out/validate.log" 2>&1 || failed=1
row "first count's image: tree against base" "$(grep -E '^/(image|illumination)' "$out/validate.log" |
  awk '{printf "%s %s; ", $1, $3}')"
for ranks in ${np#* }; do # the grouped images too: the groups' meeting is the tree's or the base's
  [ "$ranks" = "${np%% *}" ] && continue
  build-new/app/rtm3d validate "$work/new/survey_image_np$ranks.h5" \
    "$work/base/survey_image_np$ranks.h5" --rtol "$rtol" "${exact[@]}" \
    --datasets /image,/illumination >"$out/validate_np$ranks.log" 2>&1 || failed=1
  row "$ranks groups' image: tree against base" "$(grep -E '^/(image|illumination)' \
    "$out/validate_np$ranks.log" | awk '{printf "%s %s; ", $1, $3}')"
done
echo
cat "$summary"
exit "$failed"
