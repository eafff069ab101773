#!/usr/bin/env bash
# run/experiments/survey_phases.sh - where a survey's time goes beyond its floor, on the GPU
# machine in one call: builds the tree, runs run/survey.sh on the 8-shot 512^3 iso survey of
# run/results/end_to_end.md (and the tti one with TTI=1) on one GPU and on every GPU of the
# host in shot groups, keeps each run's JSON report under $OUT, then runs the one-GPU
# migration again without --quiet, each log line stamped with the seconds since the
# process started (the start and the exit are what the phases do not count), and on every
# GPU in shot groups under mpirun alike (on a host of two or more). Logs under
# $OUT (or run/out/survey_phases), a short table last.
set -uo pipefail
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/../tools/device_env.sh" run/out/survey_phases || exit 1
device_summary
device_ranks
device_build build "$out/build.log" || exit 1
survey_decks
work="$(mktemp -d /dev/shm/survey.XXXXXX)"
trap 'rm -rf "$work"' EXIT
counts="1 $gpus"
[ "$gpus" -gt 1 ] || counts=1 # one GPU: no shot groups to time
for deck in "${decks[@]}"; do
  kind="$(basename "$deck" .ini)"
  step "survey $kind, NP=\"$counts\""
  OUT="$work/$kind" RTM3D=build/app/rtm3d NP="$counts" run/survey.sh "$deck" "${survey[@]}" \
    >"$out/survey_$kind.log" 2>&1 || failed=1
  cp "$work/$kind"/*.json "$out/" 2>/dev/null
  for f in "$work/$kind"/*.json; do cp "$f" "$out/${kind}_$(basename "$f")"; done
  grep -E '^(survey|migrate phases|image against)' "$out/survey_$kind.log" | tee -a "$summary"
  step "one GPU, stamped ($kind)"
  { build/app/rtm3d migrate "$deck" "${survey[@]}" --force --set output.dir="$work/$kind" \
    --set output.name=stamped --set rtm.observed="$work/$kind/survey_observed.h5" 2>&1; echo "exit $?"; } |
    stamp >"$out/stamped_$kind.log"
  tail -4 "$out/stamped_$kind.log" | tee -a "$summary"
  [ "$gpus" -gt 1 ] || continue
  step "$gpus GPUs in shot groups, stamped ($kind)"
  { mpirun_np "$gpus" build/app/rtm3d migrate "$deck" "${survey[@]}" --force \
    --set mpi.shot_groups="$gpus" --set output.dir="$work/$kind" --set output.name=stamped_np \
    --set rtm.observed="$work/$kind/survey_observed.h5" 2>&1; echo "exit $?"; } |
    stamp >"$out/stamped_np_$kind.log"
  tail -4 "$out/stamped_np_$kind.log" | tee -a "$summary"
done
step "summary"
cat "$summary"
exit "$failed"
