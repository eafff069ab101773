#!/usr/bin/env bash
# makemodel and export stopped by SIGINT or SIGTERM mid-run: the exit status is 128 + the
# signal (130, 143), the run says it stopped, the earlier output it was replacing (--force)
# is intact, and no PATH.partial or lock is left, so that the same command runs again at
# once; the same signal sent twice at once is one stop, another signal after it ends the run
# at once; the folders a stopped run made for its outputs are gone, one it found stays. The
# signal lands at a chosen point, not where a race puts it: stall_write_preload.c holds the
# run in a chosen open (RTM3D_TEST_STALL_OPEN) until the test, having sent the signal,
# creates the release file.
#   makemodel: held in the open of MODEL.lock, before the build; the run stops after the
#     build, before MODEL.h5 is written. Held in the open of MODEL.h5.partial instead (the
#     write begun), the write finishes, whole, and the run says so (exit 0).
#   model, migrate: held in the open of their report, after the last step: the outputs are
#     finished, whole, and the run says so (exit 0).
#   export: held in the open of OUT.sgy.partial, before the first shot, or (--per-shot) of
#     OUT_shot1.sgy.partial, shot 0 written aside: the export stops before its next shot.
source "$(dirname "$0")/lib.sh" "$@"
preload="$PWD/librtm3d_stall_write_preload.so"
[ -e "$preload" ] || rob_skip "no $preload (build the target rtm3d_stall_write_preload)"
# the sanitizer build's rtm3d wants its runtime first; the preload library is plain C
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
deck="$work/deck.ini"
tiny_deck "$deck"
out="$work/out"
mkdir -p "$out"

# stopped SIGNAL OPEN COMMAND...: COMMAND run with its first open of a path holding OPEN
# held; SIGNAL sent once it is, then released. Its exit status into $stop_status, its
# stdout+stderr into $rob_output.
stopped() {
  local signal="$1" open="$2"
  shift 2
  # the sleep: the handler has run, the signal pending on a process asleep in the hold
  held_at_open "$open" "kill -s $signal \"\$held_pid\"; sleep 0.2" "$@"
  stop_status=$held_status
}

# expect_stopped WANT PATTERN SIGNAL OPEN COMMAND...
expect_stopped() {
  local want="$1" pattern="$2" signal="$3" open="$4"
  shift 4
  stopped "$signal" "$open" "$@"
  rob_judge "$want" "$pattern" "$stop_status" "SIG$signal at the open of $open: $*"
}

# expect_clean DIR: no .partial, no .lock in DIR
expect_clean() {
  local left
  left="$(ls -1 "$1" | grep -E '\.partial|\.lock$')"
  [ -z "$left" ] && rob_pass "nothing left in $1" || rob_fail "left in $1: $(tr '\n' ' ' <<<"$left")"
}

# ---- makemodel
printf 'background vp=2000\n' >"$work/plain.model"
printf 'background vp=2500\n' >"$work/other.model"
makemodel=("$rtm3d" makemodel "$deck" --set model.file="$out/m.h5")
expect 0 "" "${makemodel[@]}" --set model.description="$work/plain.model"
before="$(cksum <"$out/m.h5")"
for signal in INT TERM; do
  status=130
  [ "$signal" = TERM ] && status=143
  expect_stopped "$status" "makemodel: stopped by SIG$signal before .*out/m\.h5 was written" \
    "$signal" m.lock "${makemodel[@]}" --force --set model.description="$work/other.model"
  expect_file_unchanged "$out/m.h5" "$before"
  expect_clean "$out"
done
# the same signal twice within a second (GNU timeout sends it to the process, then to its
# group; the sleep lets the first be handled, not merged with the second): one stop, clean;
# another signal after it ends the run at once (its lock is the next run's)
held_at_open m.lock 'kill -s INT "$held_pid"; sleep 0.1; kill -s INT "$held_pid"; sleep 0.2' \
  "${makemodel[@]}" --force --set model.description="$work/other.model"
rob_judge 130 "makemodel: stopped by SIGINT before .*out/m\.h5 was written" "$held_status" \
  "SIGINT sent twice at the open of m.lock"
expect_file_unchanged "$out/m.h5" "$before"
expect_clean "$out"
held_at_open m.lock 'kill -s INT "$held_pid"; kill -s TERM "$held_pid"; sleep 0.2' \
  "${makemodel[@]}" --force --set model.description="$work/other.model"
rob_judge 143 "" "$held_status" "SIGINT then SIGTERM at the open of m.lock: ended at once"
expect_file_unchanged "$out/m.h5" "$before"
rm -f "$out/m.lock"
# the signal within the write: it finishes, whole, said as such
expect_stopped 0 "makemodel: SIGTERM came while the model was written; it is whole" TERM \
  m.h5.partial "${makemodel[@]}" --force --set model.description="$work/other.model"
expect_clean "$out"
expect 0 "" "${makemodel[@]}" --force --set model.description="$work/other.model" \
  --set model.file="$out/m2.h5"
expect 0 "" "$rtm3d" validate "$out/m.h5" "$out/m2.h5" --rtol 0 --atol 0
# the same command runs again at once
expect 0 "" "${makemodel[@]}" --force --set model.description="$work/plain.model"

# ---- migrate with rtm.shot_images keeps no state and says so (probe Y, Y2: it kept one the
# same command then refused, and said that command resumes there)
expect 0 "" "$rtm3d" model "$deck" --quiet "${survey[@]}" --set output.name=obs_si
expect_stopped 130 "a run with rtm\.shot_images keeps no state .*the same command starts over" \
  INT obs_si.h5 "$rtm3d" migrate "$deck" "${survey[@]}" --set rtm.shot_images=true \
  --set rtm.observed="$out/obs_si.h5" --set output.name=si
[ ! -e "$out/si.resume.h5" ] && rob_pass "no si.resume.h5" || rob_fail "si.resume.h5 was kept"
expect_clean "$out"

# ---- model and migrate: a signal once the steps are done (held at the open of the report,
# written last) lets the outputs finish, whole, and the run says so
expect_stopped 0 "model: SIGTERM came while the outputs were written; they are whole" TERM \
  sg.json.partial "$rtm3d" model "$deck" "${survey[@]}" --set output.name=sg
expect_clean "$out"
[ -f "$out/sg.h5" ] && [ -f "$out/sg.json" ] && rob_pass "the model run's outputs are there" ||
  rob_fail "no sg.h5 or sg.json: $(ls "$out" | tr '\n' ' ')"
expect_stopped 0 "migrate: SIGINT came while the outputs were written; they are whole" INT \
  sgm.json.partial "$rtm3d" migrate "$deck" "${survey[@]}" --set rtm.observed="$out/sg.h5" \
  --set output.name=sgm
expect_clean "$out"
[ -f "$out/sgm.h5" ] && [ -f "$out/sgm.json" ] && rob_pass "the migration's outputs are there" ||
  rob_fail "no sgm.h5 or sgm.json: $(ls "$out" | tr '\n' ' ')"

# ---- a stopped run removes the folders it made for its outputs, where they are empty (a
# probe: output.dir's new folders were left behind); a folder that was there stays
mkdir -p "$work/kept"
printf 'mine\n' >"$work/kept/notes.txt"
expect_stopped 130 "stopped by SIGINT while making the model" INT fresh.lock "$rtm3d" model \
  "$deck" "${survey[@]}" --set output.dir="$work/kept/made/fresh" --set output.name=fresh
[ ! -e "$work/kept/made" ] && [ -f "$work/kept/notes.txt" ] &&
  rob_pass "the folders the stopped run made are gone, the one it found stays" ||
  rob_fail "after the stopped run: $(find "$work/kept" | tr '\n' ' ')"
# an empty folder found there stays too: only the folders below it were made (a review: with
# notes.txt in it, rmdir kept it whatever the count said)
mkdir -p "$work/found_empty"
expect_stopped 130 "stopped by SIGINT while making the model" INT fresh.lock "$rtm3d" model \
  "$deck" "${survey[@]}" --set output.dir="$work/found_empty/made/fresh" --set output.name=fresh
[ -d "$work/found_empty" ] && [ ! -e "$work/found_empty/made" ] &&
  rob_pass "the empty folder the run found stays, the ones it made are gone" ||
  rob_fail "after the stopped run: $(find "$work" -path '*found_empty*' | tr '\n' ' ')"
expect_stopped 143 "makemodel: stopped by SIGTERM" TERM m.lock "$rtm3d" makemodel "$deck" \
  --set model.file="$work/made_model/m.h5" --set model.description="$work/plain.model"
[ ! -e "$work/made_model" ] && rob_pass "makemodel's folder for its model.file is gone" ||
  rob_fail "makemodel's folder stays: $(find "$work/made_model" | tr '\n' ' ')"

# ---- export
if has_feature "SEG-Y on"; then
  expect 0 "" "$rtm3d" model "$deck" --quiet "${survey[@]}" --set time.steps=40 \
    --set output.trace_dt=0.002 --set output.name=run
  export=("$rtm3d" export "$out/run.h5" --segy "$out/g.sgy")
  expect 0 "" "${export[@]}"
  expect 0 "" "${export[@]}" --per-shot
  one="$(cksum <"$out/g.sgy")"
  shot1="$(cksum <"$out/g_shot1.sgy")"
  for signal in INT TERM; do
    status=130
    [ "$signal" = TERM ] && status=143
    expect_stopped "$status" "export: stopped by SIG$signal before shot 0 of .*out/run\.h5" \
      "$signal" g.sgy.partial "${export[@]}" --force
    expect_file_unchanged "$out/g.sgy" "$one"
    expect_clean "$out"
    expect_stopped "$status" "export: stopped by SIG$signal before shot 1 of .*out/run\.h5" \
      "$signal" g_shot1.sgy.partial "${export[@]}" --force --per-shot
    expect_file_unchanged "$out/g_shot1.sgy" "$shot1"
    expect_clean "$out"
  done
  expect 0 "" "${export[@]}" --force --per-shot
fi
rob_finish
