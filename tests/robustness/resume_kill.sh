#!/usr/bin/env bash
# A migration killed with SIGKILL in the middle of saving its resume state (held at a
# chosen write of a chosen save by stall_write_preload.c, then killed: no race decides
# where) leaves at most a complete earlier state, never a torn one: OUTPUT.resume.h5 is
# absent when the first save was killed, and equals bit for bit the state a --max-shots run
# saves after the shots before the killed save otherwise. The same command run again
# starts over or resumes after those shots, and ends with the uninterrupted run's /image
# and /illumination bit for bit. On one rank (with and without subsurface-offset gathers,
# whose sums the state keeps too), and on two (shot groups, z-slabs) where the build has MPI.
source "$(dirname "$0")/lib.sh" "$@"
preload="$PWD/librtm3d_stall_write_preload.so"
[ -e "$preload" ] || rob_skip "no $preload (build the target rtm3d_stall_write_preload)"
tiny_deck "$work/tiny.ini"
out="$work/out"
# the interface gives an image that is not zero, so that bit for bit says something
common=(--set shots.layout=grid --set shots.y_count=2 --set shots.z=60 --set receivers.z=60
  --set receivers.y_count=24 --set receivers.y_first=0 --set receivers.y_step=10
  --set receivers.x_step=10 --set time.steps=150 --set model.interface_z=150
  --set model.vp_below=3000)

# same_sums RUN REFERENCE WHAT [RTOL]: RUN's /image and /illumination (and the datasets of
# `also`, when set) are REFERENCE's, bit for bit (or within the relative L2 error RTOL)
also=""
same_sums() {
  local tolerance=(--rtol 0 --atol 0)
  [ -n "${4:-}" ] && tolerance=(--rtol "$4")
  if "$rtm3d" validate "$1" "$2" "${tolerance[@]}" --datasets "/image,/illumination$also" \
    >"$work/validate.log" 2>&1; then
    rob_pass "$3: ${4:+within $4, not }bit for bit"
  else
    rob_fail "$3: $(basename "$1") differs from $(basename "$2"):"
    sed 's/^/    /' "$work/validate.log" | head -20
  fi
}

# kill_mid_save LAUNCHER SAVE AFTER ARGS...: rtm3d ARGS, started by LAUNCHER (an array's
# name: what goes before rtm3d), runs with the preload until its SAVE-th resume state file
# has taken AFTER writes and the next is held; then every process of it (the ranks under
# mpirun) is killed with SIGKILL at once. Fails when no write was held within 120 s.
kill_mid_save() {
  local -n launcher="$1"
  local save="$2" after="$3" pids="$work/pids" marker="$work/held" tries=12000
  shift 3
  rm -rf "$pids" "$marker" && mkdir "$pids"
  "${launcher[@]}" env LD_PRELOAD="$preload" RTM3D_TEST_STALL_WRITE=.resume.h5 \
    RTM3D_TEST_STALL_VERSION="$save" RTM3D_TEST_STALL_AFTER_WRITES="$after" \
    RTM3D_TEST_STALL_MARKER="$marker" RTM3D_TEST_STALL_PIDS="$pids" "$rtm3d" "$@" \
    >"$work/killed.log" 2>&1 &
  local run=$!
  while [ ! -e "$marker" ] && [ "$tries" -gt 0 ] && kill -0 "$run" 2>/dev/null; do
    sleep 0.01
    tries=$((tries - 1))
  done
  # shellcheck disable=SC2046 # one pid per file name
  [ -n "$(ls "$pids")" ] && kill -KILL $(ls "$pids") 2>/dev/null
  local status=0
  { wait "$run"; } 2>/dev/null || status=$? # no "Killed" from bash
  if [ -e "$marker" ] && [ "$status" -ne 0 ]; then
    rob_pass "killed in save $save after $after write(s) (exit $status)"
  else
    rob_fail "save $save was never held after $after write(s) (exit $status), log:"
    sed 's/^/    /' "$work/killed.log" | head -20
  fi
}

# kill_and_resume LAUNCHER SHOTS SAVE AFTER RESUMED [RTOL]: with LAUNCHER (an array's name:
# the command before rtm3d) and SHOTS shots (x_count, y_count = 2), kills save SAVE after
# AFTER writes, checks what is on disk, reruns and compares (bit for bit, or within RTOL).
# RESUMED: the shots of the complete state left (0: none is left).
kill_and_resume() {
  local -n launch="$1"
  local shots="$2" save="$3" after="$4" resumed="$5" rtol="${6:-}" name="$1_$2"
  local migrate=(migrate "$work/tiny.ini" "${common[@]}" --set shots.x_count=$((shots / 2))
    --set rtm.observed="$work/observed_$shots.h5" --set rtm.resume_every=0)
  [ "$1" = slabs ] && migrate+=(--set mpi.shot_groups=1)
  [ "$1" = groups ] && migrate+=(--set mpi.shot_groups=2)
  [ "$1" = gathers ] && migrate+=(--set rtm.offset_lags=3 --set rtm.cip_x_step=8
    --set rtm.cip_y_step=8)
  # references, once per launcher and survey: the uninterrupted run, and the state a run
  # stopped by --max-shots after the shots before the killed save leaves
  if [ ! -e "$work/$name.h5" ]; then
    expect 0 "" "${launch[@]}" "$rtm3d" "${migrate[@]}" --quiet --set output.name="$name"
    mv "$out/$name.h5" "$work/$name.h5"
  fi
  if [ "$resumed" -gt 0 ] && [ ! -e "$work/${name}_$resumed.h5" ]; then
    expect 0 "" "${launch[@]}" "$rtm3d" "${migrate[@]}" --quiet --max-shots="$resumed" \
      --set output.name="${name}_$resumed"
    mv "$out/${name}_$resumed.resume.h5" "$work/${name}_$resumed.h5"
  fi
  local what="$1, $shots shots, save $save killed after $after write(s)"
  rm -rf "$out"
  kill_mid_save "$1" "$save" "$after" "${migrate[@]}" --quiet
  [ ! -e "$out/tiny.h5" ] && rob_pass "$what: no image yet" || rob_fail "$what: an image was written"
  if [ "$resumed" -eq 0 ]; then
    [ ! -e "$out/tiny.resume.h5" ] && rob_pass "$what: no state" ||
      rob_fail "$what: a state before any save was complete"
    expect 0 "" "${launch[@]}" "$rtm3d" "${migrate[@]}"
    grep -q "resuming" <<<"$rob_output" && rob_fail "$what: the rerun resumed: $rob_output" ||
      rob_pass "$what: the rerun started over"
  else
    if [ -e "$out/tiny.resume.h5" ]; then
      [ "$1" = gathers ] && also=",/gather_sums,/gather_sums_lo"
      same_sums "$out/tiny.resume.h5" "$work/${name}_$resumed.h5" "$what: the state left"
    else
      rob_fail "$what: the complete state of an earlier save is gone"
    fi
    expect 0 "resuming after shot $resumed of $shots" "${launch[@]}" "$rtm3d" "${migrate[@]}"
  fi
  [ "$1" = gathers ] && also=",/gathers/offset,/gathers/angle"
  same_sums "$out/tiny.h5" "$work/$name.h5" "$what: the rerun's image" "$rtol"
  also=""
  local left
  left="$(ls "$out" | grep -E 'resume|partial|lock')"
  [ -z "$left" ] && rob_pass "$what: nothing of the killed run left" ||
    rob_fail "$what: left after the rerun: $(tr '\n' ' ' <<<"$left")"
}

for shots in 4 6; do
  expect 0 "" "$rtm3d" model "$work/tiny.ini" --quiet "${common[@]}" \
    --set shots.x_count=$((shots / 2)) --set output.dir="$work" --set output.name=observed_$shots
done

# one rank, 4 shots (saves after shots 1 to 3): the first save killed after one write (with
# HDF5's sec2 driver, the superblock), the third after three (the superblock and both
# volumes, not the metadata that makes a file of them), the second before its first byte
one=()
kill_and_resume one 4 1 1 0
kill_and_resume one 4 3 3 2
kill_and_resume one 4 2 0 1
# with gathers, the second save (after shot 2) killed after five writes: past the
# superblock and the four volumes, before the gathers' sums that follow them are whole
gathers=()
kill_and_resume gathers 4 2 5 1

# two ranks, 6 shots, rank 0 writing the file (or the ranks together, with a parallel
# HDF5): z-slabs, the third save (after shot 3) killed; shot groups of one rank each, a
# save after each pair of shots, the second (after shot 4) killed. The shots are summed as
# float pairs (rtm_sums_add), so the grouped run resumed gives the uninterrupted run's image
# although its shots meet in another order (the saved sums go into group 0's): bit for bit
# here; in general a cell whose sum cancels far below its terms may move by an ulp.
if [ -n "$mpiexec" ]; then
  slabs=("$mpiexec" --oversubscribe -np 2) # env, after it, gives the ranks the preload
  groups=("${slabs[@]}")
  kill_and_resume slabs 6 3 3 2
  kill_and_resume groups 6 2 3 2
fi
rob_finish
