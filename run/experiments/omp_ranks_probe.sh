#!/usr/bin/env bash
# run/experiments/omp_ranks_probe.sh - do two ranks of one host, each with OpenMP's default
# of every core, slow a shot-group survey's host work (set-up, the sums' adds, filters)?
# On the GPU machine in one call: builds the tree, models the 8-shot 512^3 survey of
# run/results/end_to_end.md (iso, and tti with TTI=1), then migrates it on every GPU of the
# host in shot groups with OMP_NUM_THREADS unset and set to cores / ranks, ROUNDS times
# (default 2), each run's phases printed. Logs under $OUT (or run/out/omp_ranks), a short
# table last. NP: the shot groups (default every GPU); THREADS: the second arm's
# OMP_NUM_THREADS (default cores / NP). NP=1 THREADS=15 on a 16-core host: does a core left
# to the stepping thread (the I/O thread's adds take the others) speed a shot?
set -uo pipefail
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/../tools/device_env.sh" run/out/omp_ranks || exit 1
device_summary
device_ranks
device_build build "$out/build.log" || exit 1
cores="$(nproc)"
ranks="${NP:-$gpus}"
threads_set="${THREADS:-$((cores / ranks))}"
survey_decks
work="$(mktemp -d /dev/shm/omp.XXXXXX)"
trap 'rm -rf "$work"' EXIT
for deck in "${decks[@]}"; do
  kind="$(basename "$deck" .ini)"
  OUT="$work/$kind" RTM3D=build/app/rtm3d NP=1 run/survey.sh "$deck" "${survey[@]}" \
    >"$out/model_$kind.log" 2>&1 || { tail -3 "$out/model_$kind.log"; failed=1; continue; }
  for round in $(seq "${ROUNDS:-2}"); do
    for threads in default "$threads_set"; do
      step "$kind, $ranks groups, OMP_NUM_THREADS=$threads, round $round"
      log="$out/${kind}_${threads}_$round.log"
      if [ "$threads" = default ]; then
        (unset OMP_NUM_THREADS; OUT="$work/$kind" RTM3D=build/app/rtm3d NP="$ranks" \
          OBSERVED="$work/$kind/survey_observed.h5" run/survey.sh "$deck" "${survey[@]}") >"$log" 2>&1
      else
        OMP_NUM_THREADS="$threads" OUT="$work/$kind" RTM3D=build/app/rtm3d NP="$ranks" \
          OBSERVED="$work/$kind/survey_observed.h5" run/survey.sh "$deck" "${survey[@]}" >"$log" 2>&1
      fi || failed=1
      row "$kind omp=$threads #$round" "$(grep '^survey:' "$log" | tail -1 | sed 's/.*migrate wall/wall/')"
      grep '^migrate phases' "$log" | tail -1 | tee -a "$summary"
    done
  done
done
step "summary"
cat "$summary"
exit "$failed"
