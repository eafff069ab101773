#!/usr/bin/env bash
# run/experiments/setup_stamps.sh - where a survey's fixed time goes (set-up, the end, the
# process's start and exit), on one GPU and on every GPU of the host in shot groups, on the
# GPU machine in one call: copies the tree, applies setup_stamps.patch to the copy, builds
# it, models the 8-shot 512^3 survey of run/results/end_to_end.md (iso; and tti with TTI=1),
# then migrates it on 1 GPU and on all GPUs (mpi.shot_groups = GPUs), each log line stamped
# with the seconds since the launch. Logs under $OUT (or run/out/setup_stamps): summary.txt
# and stamps_KIND_NP.log, the STAMP lines of each; the short table last.
#
#   TTI=1 run/experiments/setup_stamps.sh        (device tool: carry .deps)
#   COUNTS=1 run/experiments/setup_stamps.sh     (one GPU only)
#   REPEAT=2 run/experiments/setup_stamps.sh     (each migration twice, the second on a warm
#                                                  machine: CUDA's and cuFFT's caches filled)
set -uo pipefail
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/../tools/device_env.sh" run/out/setup_stamps || exit 1
device_summary
device_ranks
survey_decks
copy=/tmp/rtm3d_stamps
step "build (stamped)"
# EXTRA_PATCH=FILE (an absolute path): more marks of one's own, applied after these
device_build_stamped . "$copy" "$out/build.log" || { row "build (stamped)" FAILED; exit 1; }
rtm3d="$copy/build/app/rtm3d"
work="$(mktemp -d /dev/shm/stamps.XXXXXX)"
trap 'rm -rf "$work"' EXIT
for deck in "${decks[@]}"; do
  kind="$(basename "$deck" .ini)"
  step "model $kind"
  "$rtm3d" model "$deck" "${survey[@]}" --quiet --force --set output.dir="$work" \
    --set output.name="observed_$kind" > "$out/model_$kind.log" 2>&1 || { row "model $kind" FAILED; failed=1; continue; }
  row "model $kind: propagate (s)" "$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['timings_s']['propagate'])" "$work/observed_$kind.json")"
  for n in ${COUNTS:-1 $([ "$gpus" -gt 1 ] && echo "$gpus")}; do
    for r in $(seq "${REPEAT:-1}"); do # REPEAT=2: again, on the machine the first run warmed
      name="${kind}_$n$([ "$r" -gt 1 ] && echo "_run$r")"
      step "migrate $kind on $n GPU(s), stamped, run $r"
      launch=("$rtm3d")
      [ "$n" -gt 1 ] && launch=(mpirun_np "$n" "$rtm3d")
      { "${launch[@]}" migrate "$deck" "${survey[@]}" --force --set mpi.shot_groups="$n" \
        --set output.dir="$work" --set output.name="image_${kind}_$n" \
        --set rtm.observed="$work/observed_$kind.h5" 2>&1; echo "exit $?"; } |
        stamp > "$out/stamps_$name.log"
      grep -E "STAMP|done in|exit|shot [0-9]+/[0-9]+ in" "$out/stamps_$name.log" > "$out/stamps_$name.txt"
      rm "$out/stamps_$name.log"
      row "migrate $kind, $n GPU(s), run $r" "$(tail -1 "$out/stamps_$name.txt")"
      tail -1 "$out/stamps_$name.txt" | grep -q ' exit 0$' || failed=1
    done
  done
done
step "summary"
cat "$summary"
exit "$failed"
