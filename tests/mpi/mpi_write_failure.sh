#!/usr/bin/env bash
# With a parallel HDF5: a rank whose part of the collective write fails (as a full disk
# makes it fail on one rank) ends the whole job with exit status 1 and a message naming the
# write, instead of leaving the others waiting in the collective close for ever (the job
# hung so before f290a5b); no complete output file is left. fail_collective_write.c
# (LD_PRELOAD) fails the chosen rank's collective writes: rank 1, then rank 0, of 2 ranks
# writing snapshots (the iso deck of mpi_setup.sh), and rank 1 of migrate's resume state.
# Usage: mpi_write_failure.sh RTM3D SOURCE_DIR MPIEXEC INTERPOSER
set -eu
# shellcheck source=SCRIPTDIR/../app/cli_setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/../app/cli_setup.sh" "$1" "$2"
mpiexec="$3"
interposer="$4"
export OMP_NUM_THREADS=1
# shellcheck source=SCRIPTDIR/mpi_setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/mpi_setup.sh" cpu
failing() { # RANK NAME WRITE COMMAND ARGS...: exit 1 within the timeout, naming WRITE
  local rank="$1" name="$2" write="$3" code=0
  shift 3
  timeout 120 "$mpiexec" --oversubscribe -np 2 -x LD_PRELOAD="$interposer" \
    -x RTM3D_TEST_FAIL_RANK="$rank" "$rtm3d" "$@" --set output.dir="$work" \
    --set output.name="$name" > "$work/$name.out" 2>&1 || code=$?
  [ "$code" -eq 1 ] ||
    { echo "FAIL: $name: exit $code, not 1 (124: the job hung)"; cat "$work/$name.out"; exit 1; }
  grep -qE "writing planes [0-9]+ to [0-9]+ of $write collectively failed" "$work/$name.out" ||
    { echo "FAIL: $name does not name the failed write of $write:"; cat "$work/$name.out"; exit 1; }
  [ ! -e "$work/$name.h5" ] || { echo "FAIL: $name left a complete $name.h5"; exit 1; }
  echo "$name: rank $rank's collective write of $write failed: exit 1"
}
failing 1 model_rank1 /snapshots/p model "$deck" "${iso[@]}"
failing 0 model_rank0 /snapshots/p model "$deck" "${iso[@]}"
model_observed
failing 1 migrate_rank1 /image migrate "$small" "${mig[@]}" --set model.interface_z=auto \
  --set rtm.observed="$work/observed.h5" --set rtm.resume_every=0
