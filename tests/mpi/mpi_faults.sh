#!/usr/bin/env bash
# Faults under mpirun, on 2 ranks of a run that lasts about 15 s (48^3 cells,
# 40000 steps, no output but the file), each fault dealt once its first progress line is out:
#  - a rank stopped with SIGSTOP (as a hung rank or a lost node would be): with
#    mpi.timeout_s = 5 the other rank ends the job (exit 1) naming the stopped rank and the
#    key, where the job used to wait for ever; rank 1, then rank 0; with rank 1 stopped,
#    rank 0 leaves neither its partial file nor the name's lock;
#  - every rank stopped (a job paused, as Ctrl-Z does through mpirun) for longer than
#    mpi.timeout_s runs on once continued: a rank's own time stopped is not time waited;
#  - SIGTERM or SIGINT to one rank (a batch system's, a user's kill): exit 143 or 130, the
#    rank saying so, and no NAME.h5, NAME.h5.partial, NAME.json or NAME.xmf left (rank 0
#    used to abort the job before removing its partial file);
#  - SIGTERM or SIGINT to mpirun (Ctrl-C): the job ends, and leaves none of them either.
#    Open MPI's mpirun sends its ranks SIGTERM (for either signal), SIGKILL a second later,
#    and exits 1 whatever they return; another launcher must pass on 128 + the signal.
# Every job must end within 120 s, or the test fails (and kills what is left).
# Usage: mpi_faults.sh RTM3D SOURCE_DIR MPIEXEC
set -eu
# shellcheck source=SCRIPTDIR/../app/cli_setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/../app/cli_setup.sh" "$1" "$2"
mpiexec="$3"
export OMP_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
long=(--set backend.name=cpu --set grid.nx=48 --set grid.ny=48 --set grid.nz=48
      --set boundary.width=8 --set time.steps=40000 --set snapshots.every=0
      --set source.x=auto --set source.y=auto --set source.z=auto --set receivers.layout=none
      --set output.dir="$work")
job=""
mine() { # the pids of the job started last, mpirun's and its ranks'
  pgrep -f "output.dir=$work .*output.name=$name( |\$)"
}
leftovers() { # the job's processes still there, killed (a stopped rank would stay for ever)
  [ -z "$job" ] && return 0
  local pids
  pids="$(mine || true)"
  # shellcheck disable=SC2086  # a list of pids
  [ -z "$pids" ] || kill -KILL $pids 2> /dev/null || true
  job=""
}
trap 'leftovers; rm -rf "$work"' EXIT

start() { # NAME SETTINGS...: the run on 2 ranks in the background ($job: mpirun's pid)
  name="$1"
  shift
  "$mpiexec" --oversubscribe -np 2 "$rtm3d" model "$deck" "${long[@]}" \
    --set output.name="$name" "$@" > "$work/$name.out" 2>&1 &
  job=$!
  for _ in $(seq 600); do
    grep -qs "step [0-9]*/[0-9]*  " "$work/$name.out" && return 0
    kill -0 "$job" 2> /dev/null || break
    sleep 0.1
  done
  fail "$name: no progress line within 60 s, or the job ended first:"
  cat "$work/$name.out"
  leftovers
  return 1
}

rank_pid() { # RANK: the pid of that rank of the job started last
  local pid
  for pid in $(mine); do
    if tr '\0' '\n' < "/proc/$pid/environ" 2> /dev/null |
      grep -qxE "(OMPI_COMM_WORLD_RANK|PMI_RANK)=$1"; then
      echo "$pid"
      return 0
    fi
  done
  echo "FAIL: $name: no process of rank $1 found" >&2
  return 1
}

finish() { # the job's exit status in $code (124: still running after 120 s, then killed) and
  # its seconds in $seconds
  local begin=$SECONDS
  code=0
  for _ in $(seq 1200); do kill -0 "$job" 2> /dev/null || break; sleep 0.1; done
  if kill -0 "$job" 2> /dev/null; then
    leftovers
    wait "$job" 2> /dev/null || true
    code=124
  else
    wait "$job" 2> /dev/null || code=$?
    sleep 1 # mpirun is gone; its ranks must be too
    if mine > /dev/null; then
      fail "$name: ranks left behind after the job"
      leftovers
    fi
  fi
  seconds=$((SECONDS - begin))
  job=""
}

nothing_left() { # no output of the run $name
  local file
  for file in "$name.h5" "$name.h5.partial" "$name.json" "$name.xmf"; do
    [ ! -e "$work/$file" ] || fail "$name left $file"
  done
}

stalled() { # RANK: that rank stopped; the other ends the job within mpi.timeout_s, naming it
  local rank="$1" pid
  start "stopped$rank" --set mpi.timeout_s=5 || return 0
  pid="$(rank_pid "$rank")" || { fail "stopped$rank: rank $rank not found"; leftovers; return 0; }
  kill -STOP "$pid"
  finish
  if [ "$code" -eq 124 ]; then
    fail "stopped$rank: the job still waited for rank $rank after 120 s"
  elif [ "$code" -eq 0 ] ||
    ! grep -qE "waited [0-9]+ s in .* for rank $rank, which did not answer" "$work/$name.out" ||
    ! grep -q "mpi.timeout_s" "$work/$name.out"; then
    fail "stopped$rank: exit $code, output:"
    cat "$work/$name.out"
  elif [ "$seconds" -lt 5 ]; then
    fail "stopped$rank: the job ended after $seconds s, before mpi.timeout_s = 5"
  else
    echo "rank $rank stopped: exit $code after $seconds s, $(grep -o "waited [0-9]* s in .* which did not answer" "$work/$name.out")"
  fi
  # rank 0, which made the run's files, ended the job: it removed them before the abort
  # (rank 0 stopped cannot; the next run of the name replaces what it left)
  if [ "$rank" -eq 1 ]; then
    nothing_left
    [ ! -e "$work/$name.lock" ] || fail "$name left $name.lock"
  fi
}

paused() { # every rank stopped for twice mpi.timeout_s (rank 1 first, so that rank 0 is
  # kept waiting; rank 0 continued first): the job runs on to its end
  local r0 r1
  start paused --set mpi.timeout_s=4 --set time.steps=4000 || return 0
  if ! r0="$(rank_pid 0)" || ! r1="$(rank_pid 1)"; then
    fail "paused: ranks not found"
    leftovers
    return 0
  fi
  kill -STOP "$r1"
  sleep 1
  kill -STOP "$r0"
  sleep 8
  kill -CONT "$r0"
  sleep 1
  kill -CONT "$r1"
  finish
  if [ "$code" -ne 0 ] || [ ! -e "$work/paused.h5" ]; then
    fail "paused: a job stopped for 8 s with mpi.timeout_s = 4 ended with exit $code:"
    cat "$work/$name.out"
  else
    echo "job stopped for 8 s (mpi.timeout_s = 4): ran on to exit 0"
  fi
}

rank_signalled() { # SIGNAL RANK: that rank alone signalled: exit 128 + the signal, no output
  local signal="$1" rank="$2" want pid
  want=$(($(kill -l "$signal") + 128))
  start "rank${rank}_$signal" || return 0
  pid="$(rank_pid "$rank")" || { fail "$name: rank $rank not found"; leftovers; return 0; }
  kill "-$signal" "$pid"
  finish
  if [ "$code" -ne "$want" ] ||
    ! grep -q "\[rank $rank of 2\] stopped by SIG$signal" "$work/$name.out"; then
    fail "$name: exit $code (want $want, 124: a hang), output:"
    cat "$work/$name.out"
  fi
  nothing_left
  echo "SIG$signal to rank $rank: exit $code after $seconds s"
}

launcher_signalled() { # SIGNAL: mpirun signalled: the job ends, no output
  local signal="$1" want
  want=$(($(kill -l "$signal") + 128))
  # Open MPI's mpirun exits 1 after its own SIGINT or SIGTERM, whatever its ranks return
  "$mpiexec" --version 2>&1 | grep -qE "Open MPI|OpenRTE" && want=1
  start "mpirun_$signal" || return 0
  kill "-$signal" "$job"
  finish
  if [ "$code" -ne "$want" ]; then
    fail "$name: exit $code (want $want, 124: a hang), output:"
    cat "$work/$name.out"
  fi
  nothing_left
  echo "SIG$signal to mpirun: exit $code after $seconds s"
}

stalled 1
stalled 0
paused
rank_signalled TERM 0
rank_signalled INT 1
rank_signalled TERM 1
launcher_signalled INT
launcher_signalled TERM
[ "$failures" -eq 0 ] || { echo "mpi_faults: $failures failures"; exit 1; }
echo "mpi_faults: ok"
