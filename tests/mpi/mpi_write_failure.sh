#!/usr/bin/env bash
# With a parallel HDF5: a rank whose part of the collective write fails (as a full disk
# makes it fail on one rank) ends the whole job with exit status 1 and a message naming the
# write, instead of leaving the others waiting in the collective close for ever (the job
# hung so before f290a5b); no complete output file is left. fail_collective_write.c
# (LD_PRELOAD) fails the chosen rank's collective writes: rank 1, then rank 0, of 2 ranks
# writing snapshots (the iso deck of mpi_setup.sh), and rank 1 of migrate's resume state.
# Then rank 1's fdatasync fails (RTM3D_TEST_FAIL_SYNC_RANK): every rank puts its node's pages
# of a collectively written file on the disk before rank 0 commits it, so a model run, a
# migration's image and its resume state each end with exit 1, naming the file, and leave
# no complete one (before, only rank 0's pages were synced and the runs ended with exit 0).
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
unsynced() { # NAME FILE COMMAND ARGS...: rank 1's sync fails: exit 1 naming FILE, no FILE
  local name="$1" file="$2" code=0
  shift 2
  timeout 120 "$mpiexec" --oversubscribe -np 2 -x LD_PRELOAD="$interposer" \
    -x RTM3D_TEST_FAIL_SYNC_RANK=1 "$rtm3d" "$@" --set output.dir="$work" \
    --set output.name="$name" > "$work/$name.out" 2>&1 || code=$?
  [ "$code" -eq 1 ] ||
    { echo "FAIL: $name: exit $code, not 1 (0: rank 1's pages not synced)"; cat "$work/$name.out"
      exit 1; }
  grep -q "$work/$file: a rank's planes of it did not reach the disk" "$work/$name.out" ||
    { echo "FAIL: $name does not name $file:"; cat "$work/$name.out"; exit 1; }
  [ ! -e "$work/$file" ] || { echo "FAIL: $name left a complete $file"; exit 1; }
  echo "$name: rank 1's sync of $file failed: exit 1"
}
unsynced model_sync1 model_sync1.h5 model "$deck" "${iso[@]}"
unsynced migrate_sync1 migrate_sync1.h5 migrate "$small" "${mig[@]}" \
  --set model.interface_z=auto --set rtm.observed="$work/observed.h5"
unsynced state_sync1 state_sync1.resume.h5 migrate "$small" "${mig[@]}" \
  --set model.interface_z=auto --set rtm.observed="$work/observed.h5" --set rtm.resume_every=0
