#!/usr/bin/env bash
# run/experiments/groups_meeting.sh BASE_SRC - the shot groups' end-of-run meeting, the tree
# against an earlier tree (BASE_SRC, a source folder: git archive COMMIT | tar -x -C it), on
# the GPU machine in one call: builds both with setup_stamps.patch applied (each build in a
# copy under /tmp), models the 8-shot 512^3 iso survey of run/results/end_to_end.md once,
# then migrates it with each build in turn on each rank count of COUNTS (default "4 8"), one
# shot group a rank, ROUNDS times (default 2); more ranks than GPUs share them (two a GPU at
# 8 on four) and take rtm.reconstruction = boundary, so that two ranks' stores fit a GPU.
# Each row: the meeting, from the last group's shots done to rank 0's sums met (the
# patch's STAMP lines), and the launcher's wall; last, each count's image and illumination,
# tree against base, to the bit. Logs under $OUT (or run/out/groups_meeting), a short table
# last. Device tool: carry .deps and BASE_SRC.
set -uo pipefail
base_src="$(realpath "${1:?usage: run/experiments/groups_meeting.sh BASE_SRC}")"
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/../tools/device_env.sh" run/out/groups_meeting || exit 1
device_summary
device_ranks
survey_decks
work=""
trap 'rm -rf "$work" /tmp/groups_meeting_base /tmp/groups_meeting_new' EXIT
for side in base new; do
  from=.
  [ "$side" = base ] && from="$base_src"
  step "build $side (stamped: the tree's patch on both)"
  device_build_stamped "$from" "/tmp/groups_meeting_$side" "$out/build_$side.log" ||
    { row "build $side" FAILED; exit 1; }
done
work="$(mktemp -d /dev/shm/meeting.XXXXXX)"
step "model the survey"
/tmp/groups_meeting_new/build/app/rtm3d model "${decks[0]}" "${survey[@]}" --quiet --force \
  --set output.dir="$work" --set output.name=observed >"$out/model.log" 2>&1 ||
  { row model FAILED; exit 1; }
for n in ${COUNTS:-4 8}; do
  sets=(--set mpi.shot_groups="$n")
  [ "$n" -gt "$gpus" ] && sets+=(--set rtm.reconstruction=boundary)
  for round in $(seq "${ROUNDS:-2}"); do
    for side in base new; do
      log="$out/${side}_${n}_$round.log"
      step "migrate $side on $n ranks, round $round"
      { mpirun_np "$n" "/tmp/groups_meeting_$side/build/app/rtm3d" migrate "${decks[0]}" \
        "${survey[@]}" "${sets[@]}" --force --set output.dir="$work" \
        --set output.name="image_${side}_$n" --set rtm.observed="$work/observed.h5" 2>&1
        echo "exit $?"; } | stamp >"$log"
      done_s=$(grep 'STAMP shots done' "$log" | awk '{print $1}' | sort -n | tail -1)
      met_s=$(grep "rank 0 of $n\] STAMP sums finished" "$log" | awk '{print $1}')
      row "$n groups, $side, round $round" "$(python3 -c "import sys
print(f'meeting {float(sys.argv[1]) - float(sys.argv[2]):.3f} s; wall {sys.argv[3]} s')" \
        "${met_s:-nan}" "${done_s:-nan}" "$(tail -1 "$log" | awk '{print $1}')")"
      tail -1 "$log" | grep -q ' exit 0$' ||
        { row "$n groups, $side" "$(tail -1 "$log")"; failed=1; }
    done
  done
  /tmp/groups_meeting_new/build/app/rtm3d validate "$work/image_new_$n.h5" \
    "$work/image_base_$n.h5" --rtol 0 --atol 0 --datasets /image,/illumination \
    >"$out/validate_$n.log" 2>&1 || failed=1
  row "$n groups: tree against base" "$(grep -E '^/(image|illumination)' "$out/validate_$n.log" |
    awk '{printf "%s %s; ", $1, $3}')"
done
step "summary"
cat "$summary"
exit "$failed"
