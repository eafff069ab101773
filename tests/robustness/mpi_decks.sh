#!/usr/bin/env bash
# Ranks started with different decks (issue 32, M1: mpirun's MPMD ':' syntax, or node-local
# copies of one deck, one edited): a key that differs on rank 1 mixed the two decks into an
# image or gathers that were neither's, with exit 0 and rank 0's deck in the file. Now every
# rank's deck and --set options are checked against rank 0's before any work: exit 2, the
# rank and its first key that differs named, nothing written; a --set given to one rank
# alone is refused alike; the same deck on every rank runs.
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh" "$@"
[ -n "$mpiexec" ] || rob_skip "no MPI launcher"
tiny_deck "$work/tiny.ini"
sed 's/^frequency = 15$/frequency = 14/' "$work/tiny.ini" > "$work/edited.ini"
grep -q "^frequency = 14$" "$work/edited.ini" || rob_fail "the edited deck was not edited"
# ranks A_ARGS -- B_ARGS: one rank of each, rtm3d run with each's arguments
ranks() {
  local a=() b=()
  while [ "$1" != "--" ]; do a+=("$1"); shift; done
  shift
  b=("$@")
  "$mpiexec" --oversubscribe -np 1 "$rtm3d" "${a[@]}" : -np 1 "$rtm3d" "${b[@]}"
}
for command in model migrate; do
  expect 2 "rank 1's deck differs from rank 0's at source.frequency = 14" \
    ranks "$command" "$work/tiny.ini" --set output.name="$command" -- \
    "$command" "$work/edited.ini" --set output.name="$command"
  expect_no_output "$work/out" "$command"
done
expect 2 "rank 1's deck differs from rank 0's at model.vp_below = 2500" \
  ranks migrate "$work/tiny.ini" "${survey[@]}" --set mpi.shot_groups=2 --set output.name=groups -- \
  migrate "$work/tiny.ini" "${survey[@]}" --set mpi.shot_groups=2 --set output.name=groups \
  --set model.vp_below=2500
expect_no_output "$work/out" groups
expect 2 "rank 1's deck differs from rank 0's at output.overwrite = true" \
  ranks model "$work/tiny.ini" --set output.name=force -- model "$work/tiny.ini" \
  --set output.name=force --force
expect_no_output "$work/out" force
# a combination of keys refused under mpirun is a configuration error, exit 2 (probe W, W4:
# rtm.shot_images with shot groups exited 1)
expect 0 "" "$rtm3d" model "$work/tiny.ini" "${survey[@]}" --set output.name=observed --quiet
expect 2 "rtm\.shot_images with mpi\.shot_groups = 2 is not implemented" \
  "$mpiexec" --oversubscribe -np 2 "$rtm3d" migrate "$work/tiny.ini" "${survey[@]}" \
  --set mpi.shot_groups=2 --set rtm.shot_images=true --set rtm.observed="$work/out/observed.h5" \
  --set output.name=shot_images
expect_no_output "$work/out" shot_images
expect 0 "" "$mpiexec" --oversubscribe -np 2 "$rtm3d" model "$work/tiny.ini" --set output.name=same
[ -s "$work/out/same.h5" ] && rob_pass "the same deck on both ranks ran" ||
  rob_fail "the same deck on both ranks left no same.h5"
rob_finish
