#!/usr/bin/env bash
# SIGINT, SIGTERM and SIGHUP during a run: rtm3d model stops before its next step, says so,
# leaves no output (neither NAME.h5 nor NAME.h5.partial nor the report) and exits 128 + the
# signal (130, 143, 129; under nohup SIGHUP stays ignored); a closed pipe on stdout does not
# end it; a later run of the same name replaces a stale NAME.h5.partial; an interrupted
# migrate saves the sums of the shots ended (on one rank, between rtm.resume_every's saves
# too), says how many, and the same command resumes to the uninterrupted image.
# Usage: cli_interrupt.sh RTM3D SOURCE_DIR
set -eu
# shellcheck source=SCRIPTDIR/cli_setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/cli_setup.sh" "$@"
long=(--quiet --set backend.name=cpu --set grid.nx=48 --set grid.ny=48 --set grid.nz=48
      --set boundary.width=8 --set time.steps=1000000 --set snapshots.every=0
      --set source.x=auto --set source.y=auto --set source.z=auto --set receivers.layout=none
      --set output.dir="$work")

stop() { # SIGNAL CODE NAME: a run interrupted once it writes, its exit status and leftovers
  local signal="$1" want="$2" name="$3" code=0
  "$rtm3d" model "$deck" "${long[@]}" --set output.name="$name" > "$work/$name.out" 2>&1 &
  local pid=$!
  # the partial file exists once the set-up is done and the handler installed
  for _ in $(seq 100); do [ -e "$work/$name.h5.partial" ] && break; sleep 0.1; done
  [ -e "$work/$name.h5.partial" ] || { echo "FAIL: $name never started writing"; kill -9 "$pid"; exit 1; }
  sleep 0.3
  kill "-$signal" "$pid"
  wait "$pid" || code=$?
  if [ "$code" -ne "$want" ] || ! grep -q "error: stopped by SIG$signal before step" "$work/$name.out"; then
    echo "FAIL: SIG$signal: exit $code (want $want), output:"; cat "$work/$name.out"; exit 1
  fi
  for leftover in "$name.h5" "$name.h5.partial" "$name.json"; do
    [ ! -e "$work/$leftover" ] || { echo "FAIL: SIG$signal left $leftover"; exit 1; }
  done
  echo "SIG$signal: exit $code, $(grep -o 'stopped by .*' "$work/$name.out")"
}
stop INT 130 interrupted
stop TERM 143 terminated
stop HUP 129 hung_up # a closed terminal or ssh session: the same clean stop
stop USR1 138 warned # a batch system's warning before it kills the job
# under nohup (SIGHUP ignored from the start) a hang-up leaves the run going
nohup "$rtm3d" model "$deck" "${long[@]}" --set output.name=nohup > "$work/nohup.out" 2>&1 &
pid=$!
for _ in $(seq 100); do [ -e "$work/nohup.h5.partial" ] && break; sleep 0.1; done
kill -HUP "$pid"
sleep 1
kill -0 "$pid" 2> /dev/null || { echo "FAIL: SIGHUP stopped a run under nohup"; exit 1; }
kill -TERM "$pid"
wait "$pid" || true

# stdout a pipe its reader closed (rtm3d ... | head): the run goes on to its outputs (the
# prints fail) instead of dying of SIGPIPE (exit 141) with its partial files left
"$rtm3d" model "$deck" "${long[@]:1}" --set time.steps=40 --set output.name=piped 2>&1 |
  head -c 1 > /dev/null
code="${PIPESTATUS[0]}"
[ "$code" -eq 0 ] && [ -e "$work/piped.h5" ] && [ ! -e "$work/piped.h5.partial" ] ||
  { echo "FAIL: a run writing into a closed pipe: exit $code"; ls "$work"; exit 1; }

# a stale partial file of the same name (a run killed with -9) is replaced by the next run
echo "not an HDF5 file" > "$work/stale.h5.partial"
"$rtm3d" model "$deck" "${long[@]}" --set time.steps=5 --set output.name=stale
[ -e "$work/stale.h5" ] && [ ! -e "$work/stale.h5.partial" ] ||
  { echo "FAIL: the stale partial file was not replaced"; ls -l "$work"; exit 1; }
# migrate keeps the sums of the shots done (OUTPUT.resume.h5) and says the same command
# resumes there; it does
small="$src/run/examples/migrate_small.ini"
"$rtm3d" model "$small" --quiet --set backend.name=cpu --set time.steps=200 \
  --set output.dir="$work" --set output.name=observed
mig=(migrate "$small" --set backend.name=cpu --set time.steps=200 --set model.interface_z=auto
     --set rtm.observed="$work/observed.h5" --set output.dir="$work" --set output.name=image)
# the uninterrupted image
"$rtm3d" "${mig[@]}" --quiet --set output.name=whole
# at the default cadence (rtm.resume_every = 600 s) nothing is saved after a shot, but on
# one rank the sums of the shots ended are held on the host and SIGINT saves them (not the
# shot under way): the next run resumes there to the uninterrupted image, bit for bit
held=("${mig[@]}" --set output.name=held)
"$rtm3d" "${held[@]}" > "$work/mig0.out" 2>&1 &
pid=$!
for _ in $(seq 2400); do grep -q "shot 1/4 in" "$work/mig0.out" && break; sleep 0.05; done
kill -INT "$pid"
code=0
wait "$pid" || code=$?
if [ "$code" -ne 130 ] ||
  ! grep -q "the sums of the first [1-3] of 4 shots are kept in .*held.resume.h5: the same command resumes there" "$work/mig0.out"; then
  echo "FAIL: migrate on SIGINT at the default cadence: exit $code, output:"; cat "$work/mig0.out"; exit 1
fi
"$rtm3d" "${held[@]}" > "$work/mig0b.out" 2>&1 && grep -q "resuming after shot [1-3] of 4" "$work/mig0b.out" ||
  { echo "FAIL: the migration stopped at the default cadence did not resume:"; cat "$work/mig0b.out"; exit 1; }
"$rtm3d" validate "$work/held.h5" "$work/whole.h5" --rtol 0 --atol 0 > "$work/mig0.validate" ||
  { echo "FAIL: the resumed image differs from the uninterrupted one:"; cat "$work/mig0.validate"; exit 1; }
echo "migrate: SIGINT saved the $(grep -o 'first [0-9] of 4' "$work/mig0.out") shots held, resumed bit for bit"
# after every shot (rtm.resume_every = 0)
mig+=(--set rtm.resume_every=0)
"$rtm3d" "${mig[@]}" > "$work/mig.out" 2>&1 &
pid=$!
# the first shot's state (two minutes at most: a loaded machine, or the sanitizer build, runs
# a shot in tens of seconds)
for _ in $(seq 2400); do [ -e "$work/image.resume.h5" ] && break; sleep 0.05; done
kill -INT "$pid"
code=0
wait "$pid" || code=$?
if [ "$code" -ne 130 ] || ! grep -q "the sums of the first [1-4] of 4 shots are kept in .*image.resume.h5: the same command resumes there" "$work/mig.out"; then
  echo "FAIL: migrate on SIGINT: exit $code, output:"; cat "$work/mig.out"; exit 1
fi
"$rtm3d" "${mig[@]}" > "$work/mig2.out" 2>&1 ||
  { echo "FAIL: the resumed migration:"; cat "$work/mig2.out"; exit 1; }
grep -q "resuming after shot" "$work/mig2.out" && [ -e "$work/image.h5" ] ||
  { echo "FAIL: the migration did not resume:"; cat "$work/mig2.out"; exit 1; }
echo "migrate: SIGINT kept the shots done, and the next run resumed"
echo "cli_interrupt: ok"
