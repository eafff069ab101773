#!/usr/bin/env bash
# A run killed (SIGKILL) in the middle of putting its outputs in place, between two of the
# renames of its commit (its files complete, some renamed, some not). The next run of the
# name finishes the dead run's commit (its journal, NAME.commit), so that the set is never
# part new and part old, and nothing of the dead run (.replaced links, the journal) stays.
# A run killed as it renames its report or a figure from the temp it wrote it in: the next
# run of the name removes the temp, and no file of another name.
source "$(dirname "$0")/lib.sh" "$@"
use_preload full_disk
tiny_deck "$work/tiny.ini"
out="$work/out"

# killed_at TARGET ARGS...: a model run killed as it renames a file to a name ending with
# TARGET (exit 137)
killed_at() {
  local target="$1"
  shift
  expect 137 "" env RTM3D_TEST_KILL_RENAME="$target" LD_PRELOAD="$preload" "$rtm3d" model \
    "$work/tiny.ini" --quiet "$@"
}

# expect_left_none DIR PATTERN: no file of DIR matches the extended regex PATTERN
expect_left_none() {
  local found
  found="$(ls -a "$1" | grep -E -- "$2")"
  [ -z "$found" ] && rob_pass "nothing matching $2 left in $1" ||
    rob_fail "left in $1: $(tr '\n' ' ' <<<"$found")"
}

# ---- a kill between the renames of the commit: the next run finishes it
for at in tiny.h5 tiny.xmf tiny.json; do
  rm -rf "$out"
  expect 0 "" "$rtm3d" model "$work/tiny.ini" --quiet --set snapshots.every=0
  old_h5="$(cksum <"$out/tiny.h5")" old_json="$(cksum <"$out/tiny.json")"
  # the killed run's files differ from the first's (a snapshot more, another amplitude)
  killed_at "/$at" --force --set snapshots.every=10 --set source.amplitude=2
  [ -e "$out/tiny.json.partial" ] && new_json="$(cksum <"$out/tiny.json.partial")" ||
    new_json="$(cksum <"$out/tiny.json")"
  # a run without --force: the dead run's commit finished, then refused (its outputs exist)
  expect 2 "killed while it renamed its outputs.*finished|exists: a run does not replace" \
    "$rtm3d" model "$work/tiny.ini" --set snapshots.every=0
  grep -q "killed while it renamed its outputs" <<<"$rob_output" &&
    rob_pass "the finished commit is said (killed at $at)" ||
    rob_fail "no word of the dead run's commit (killed at $at)"
  [ "$(cksum <"$out/tiny.h5")" != "$old_h5" ] && rob_pass "tiny.h5 is the killed run's" ||
    rob_fail "tiny.h5 is still the earlier run's after a kill at $at"
  expect_file_unchanged "$out/tiny.json" "$new_json"
  [ -e "$out/tiny.xmf" ] && rob_pass "tiny.xmf in place" || rob_fail "tiny.xmf missing"
  expect_left_none "$out" 'partial|replaced|commit|lock'
done

# ---- the journal names only the run's own files: a journal that names another is refused
rm -rf "$out"
expect 0 "" "$rtm3d" model "$work/tiny.ini" --quiet --set snapshots.every=0
echo keep >"$work/precious"
printf 'rtm3d commit journal 1\nput /../precious\n' >"$out/tiny.commit"
expect 2 "tiny\.commit.*not a journal" "$rtm3d" model "$work/tiny.ini" --quiet --force \
  --set snapshots.every=0
[ "$(cat "$work/precious")" = keep ] && rob_pass "a file outside the name untouched" ||
  rob_fail "a journal's foreign name was acted on"
rm -f "$out/tiny.commit"

# ---- a kill as the report's or a figure's temp is renamed: the next run removes the temp
rm -rf "$out"
killed_at "/tiny.json.partial" --set snapshots.every=0
ls "$out" | grep -Eq '^tiny\.json\.partial\.partial\.......\.partial$' &&
  rob_pass "the killed run left its report's temp" || rob_fail "no temp left: $(ls "$out")"
expect 0 "removed .*tiny\.json\.partial\.partial\.......\.partial" "$rtm3d" model "$work/tiny.ini" \
  --set snapshots.every=0
expect_left_none "$out" 'partial|replaced|commit|lock'
# a file of that shape but another name (another output.name) is not this run's
touch "$out/other.json.partial.partial.abcdef.partial" "$out/tiny.json.partial.partial.abc.partial"
expect 0 "" "$rtm3d" model "$work/tiny.ini" --quiet --force --set snapshots.every=0
[ -e "$out/other.json.partial.partial.abcdef.partial" ] && [ -e "$out/tiny.json.partial.partial.abc.partial" ] &&
  rob_pass "temps of other names kept" || rob_fail "a file not of the run's pattern was removed"

# ---- a migration killed within a resume save, after linking its earlier state aside as
# NAME.resume.h5.replaced (probe E6: left for ever, a full state): the next run of the name
# removes it, and still resumes to the uninterrupted image bit for bit
rm -rf "$out"
survey=(--set shots.layout=grid --set shots.x_count=3 --set shots.y_count=1 --set shots.z=60
  --set receivers.z=60 --set time.steps=60)
"$rtm3d" model "$work/tiny.ini" --quiet "${survey[@]}" --set output.name=obs ||
  rob_fail "the observed gathers exited $?"
mig=(migrate "$work/tiny.ini" --quiet "${survey[@]}" --set rtm.observed="$out/obs.h5"
  --set rtm.mute=false --set rtm.resume_every=0)
expect 0 "" "$rtm3d" "${mig[@]}" --set output.name=whole
expect 0 "" "$rtm3d" "${mig[@]}" --set output.name=k --max-shots=1
expect 137 "" env RTM3D_TEST_KILL_RENAME=/k.resume.h5 LD_PRELOAD="$preload" "$rtm3d" "${mig[@]}" \
  --set output.name=k
[ -e "$out/k.resume.h5.replaced" ] && rob_pass "the kill left k.resume.h5.replaced (the case holds)" ||
  rob_fail "no k.resume.h5.replaced after the kill: $(ls "$out" | tr '\n' ' ')"
expect 0 "" "$rtm3d" "${mig[@]}" --set output.name=k
expect_left_none "$out" '^k\.resume'
expect 0 "" "$rtm3d" validate "$out/k.h5" "$out/whole.h5" --rtol 0 --atol 0 --datasets /image

rob_finish
