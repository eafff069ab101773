#!/usr/bin/env bash
# run/experiments/visible_devices_probe.sh - whether a rank that sees only its own GPU
# (CUDA_VISIBLE_DEVICES set to its local rank) starts faster than one that sees every GPU of
# the host (issue 34: on four ranks the set-up before the first shot took 0.82-0.95 s against
# 0.41 s on two). On the GPU machine, one call, carry .deps: builds the tree (BUILD=0 reuses
# build-new), models the 8-shot 512^3 iso survey of run/results/end_to_end.md once, then
# migrates it on every GPU in shot groups of one rank, each rank seeing all GPUs and seeing
# its own alone, alternated ROUNDS times (default 2): the launcher's wall, the run's set-up
# phase and its wall; the two images compared. Logs under $OUT (or run/out/visible_devices),
# the short table last.
set -uo pipefail
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/../tools/device_env.sh" run/out/visible_devices || exit 1
device_summary
device_ranks
device_build_once build-new || exit 1
survey_decks
w=$(mktemp -d /dev/shm/visible.XXXXXX)
trap 'rm -rf "$w"' EXIT
rtm3d="$(pwd)/build-new/app/rtm3d"
"$rtm3d" model "${decks[0]}" "${survey[@]}" --quiet --force --set output.dir="$w" \
  --set output.name=observed > "$out/model.log" 2>&1 || { row model FAILED; exit 1; }
# own: each rank's CUDA_VISIBLE_DEVICES its local rank (Open MPI's variable), set in a shell
# shellcheck disable=SC2016 # expanded by that shell, on each rank
own=(sh -c 'CUDA_VISIBLE_DEVICES=$OMPI_COMM_WORLD_LOCAL_RANK exec "$0" "$@"' "$rtm3d")
for round in $(seq "${ROUNDS:-2}"); do
  order="all own"
  [ $((round % 2)) = 0 ] && order="own all"
  for way in $order; do
    launch=("$rtm3d")
    [ "$way" = own ] && launch=("${own[@]}")
    name="image_${way}_$round"
    t0=$(date +%s.%N)
    mpirun_np "$np" "${launch[@]}" migrate "${decks[0]}" "${survey[@]}" --quiet --force \
      --set mpi.shot_groups="$np" --set rtm.observed="$w/observed.h5" --set output.dir="$w" \
      --set output.name="$name" >> "$out/runs.log" 2>&1 ||
      { row "$name" FAILED; failed=1; continue; }
    t1=$(date +%s.%N)
    row "$np ranks, $way GPU(s) visible, round $round" "launcher $(python3 -c \
      "print('%.2f' % ($t1 - $t0))") s | $(run/tools/report_timings.py "$w/$name.json" setup \
      forward backward write)"
  done
done
"$rtm3d" validate "$w/image_own_1.h5" "$w/image_all_1.h5" --rtol 0 \
  --datasets /image,/illumination > "$out/validate.log" 2>&1 || failed=1
row "image, own against all" "$(grep -E '^/(image|illumination)' "$out/validate.log" | tr '\n' ' ')"
echo
cat "$summary"
exit "$failed"
