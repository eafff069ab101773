#!/usr/bin/env bash
# Ranks x OpenMP threads beyond a node's cores (issue 32, D9: 3 ranks of 2 threads on 2
# cores made a tiny migrate 70 times slower, without a word): the cpu backend warns once,
# at the start, naming OMP_NUM_THREADS; with one thread a rank and cores enough, nothing;
# without OMP_NUM_THREADS each rank takes its share of the cores, so nothing either.
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh" "$@"
[ -n "$mpiexec" ] || rob_skip "no MPI launcher"
tiny_deck "$work/tiny.ini"
cores="$(getconf _NPROCESSORS_ONLN)"
ranks=2
over=$((cores / ranks + 1)) # threads a rank: ranks x over > cores
expect 0 "warning: $ranks ranks on this node x $over OpenMP threads each = $((ranks * over)) threads on $cores cores: .*set OMP_NUM_THREADS=" \
  env OMP_NUM_THREADS="$over" "$mpiexec" --oversubscribe -np "$ranks" \
  "$rtm3d" model "$work/tiny.ini" --set output.name=over
[ "$(grep -c "OpenMP threads each" <<<"$rob_output")" = 1 ] && rob_pass "said once" ||
  rob_fail "the warning came $(grep -c "OpenMP threads each" <<<"$rob_output") times"
if [ "$cores" -ge "$ranks" ]; then
  expect 0 "" env OMP_NUM_THREADS=1 "$mpiexec" --oversubscribe -np "$ranks" \
    "$rtm3d" model "$work/tiny.ini" --set output.name=fits
  ! grep -q "OpenMP threads each" <<<"$rob_output" && rob_pass "no warning when the threads fit" ||
    rob_fail "a warning with $ranks ranks of 1 thread on $cores cores"
fi
# OMP_NUM_THREADS unset, the ranks unbound: OpenMP's default (every core a rank) would
# oversubscribe them (a core a rank at least: with fewer, one thread each still would)
if [ "$(nproc)" -ge "$ranks" ]; then
  expect 0 "" env -u OMP_NUM_THREADS "$mpiexec" --oversubscribe --bind-to none -np "$ranks" \
    "$rtm3d" model "$work/tiny.ini" --set output.name=shared
  ! grep -q "OpenMP threads each" <<<"$rob_output" && rob_pass "unset: each rank takes its share" ||
    rob_fail "a warning with OMP_NUM_THREADS unset: $(grep "OpenMP threads each" <<<"$rob_output")"
fi
rob_finish
