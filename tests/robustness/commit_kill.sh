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

# ---- a forged or damaged journal (probe E8): a drop of a name no run drops (NAME.h5), of a
# name it renames, or a journal without a rename is refused, exit 2, naming the journal's
# line, and nothing is removed; a drop of a figure that is no PNG rtm3d wrote keeps it
h5_sum="$(cksum <"$out/tiny.h5")"
forged() { # forged PATTERN LINES...: the journal of those lines refused, tiny.h5 kept
  local pattern="$1"
  shift
  printf 'rtm3d commit journal 1\n' >"$out/tiny.commit"
  printf '%s\n' "$@" >>"$out/tiny.commit"
  expect 2 "$pattern" "$rtm3d" model "$work/tiny.ini" --quiet --force --set snapshots.every=0
  expect_file_unchanged "$out/tiny.h5" "$h5_sum"
  [ -e "$out/tiny.commit" ] && rob_pass "the journal is left as it is" || rob_fail "the journal went"
}
forged "tiny\.commit:3: .*drops \.h5, a name no run drops" "put .json" "drop .h5"
forged "tiny\.commit:2: .*drops \.json, a name no run drops" "drop .json" "put .h5"
forged "tiny\.commit:3: .*drops \.xmf, which line 2 renames" "put .xmf" "drop .xmf"
forged "tiny\.commit:2: .*no put line" "drop .sgy"
forged "tiny\.commit:3: .*keeps \.json\.replaced aside, the earlier file of no name it renames" \
  "put .h5" "aside .json.replaced"
echo "user text" >"$out/tiny_image_x.png"
mv "$out/tiny.json" "$out/tiny.json.partial"
printf 'rtm3d commit journal 1\nput .json\ndrop _image_x.png\n' >"$out/tiny.commit"
expect 0 "tiny_image_x\.png stays: the journal drops it, but it is no file rtm3d wrote" \
  "$rtm3d" model "$work/tiny.ini" --force --set snapshots.every=0
[ "$(cat "$out/tiny_image_x.png")" = "user text" ] && rob_pass "a user's figure-named file kept" ||
  rob_fail "the journal's drop removed a user's file"
rm -f "$out/tiny_image_x.png"

# ---- a kill mid-commit, then a file of the user's at a name not yet renamed (probe E9):
# the next run renames nothing (the journal and partials kept), says which file blocks, and
# once it is moved away finishes the commit, listing only the renames it made
rm -rf "$out"
killed_at "/tiny.json" --set snapshots.every=10
left="$(cd "$out" && ls -1 tiny.*.partial | head -1)"
if [ -n "$left" ]; then
  blocker="${left%.partial}"
  echo USER >"$out/$blocker"
  expect 2 "tiny\.commit: .*out/$blocker is not the file that run saw there.*none of its renames was made" \
    "$rtm3d" model "$work/tiny.ini" --set snapshots.every=10
  [ "$(cat "$out/$blocker")" = USER ] && [ -e "$out/$left" ] && [ -e "$out/tiny.commit" ] &&
    rob_pass "the user's $blocker, the dead run's $left and the journal kept" ||
    rob_fail "after a blocked recovery: $(ls "$out" | tr '\n' ' ')"
  rm "$out/$blocker"
  expect 2 "renamed now: [^)]*out/$blocker" "$rtm3d" model "$work/tiny.ini" --set snapshots.every=10
  expect_left_none "$out" 'partial|replaced|commit|lock'
else
  rob_fail "the kill at tiny.json left no partial to rename: $(ls "$out" | tr '\n' ' ')"
fi

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

# ---- a migration killed mid-commit: the next run of the name finishes the commit and
# removes the dead run's resume state, which that run removed next (probe F5: left for ever,
# and read later as a state beside a finished set)
expect 137 "" env RTM3D_TEST_KILL_RENAME=/st.h5 LD_PRELOAD="$preload" "$rtm3d" "${mig[@]}" \
  --set output.name=st --set rtm.resume_every=0
[ -e "$out/st.resume.h5" ] && [ -e "$out/st.commit" ] &&
  rob_pass "the kill left st.commit and st.resume.h5 (the case holds)" ||
  rob_fail "after the kill at st.h5: $(ls "$out" | tr '\n' ' ')"
expect 0 "removed .*st\.resume\.h5, the resume state of the migration whose commit was finished" \
  "$rtm3d" "${mig[@]/--quiet/--set=rtm.mute=false}" --set output.name=st --set source.amplitude=2 \
  --force
expect_left_none "$out" '^st\.(resume|commit)|^st.*partial'

# ---- a stopped migration's state is no file of a finished set (probe F2): migrate --force
# under another config refuses it, with a model run's st2.h5 beside it or not, and model
# refuses the name, --force or not
expect 0 "" "$rtm3d" "${mig[@]}" --set output.name=st2 --max-shots=1
expect 2 "st2\.resume\.h5 is the resume state of a stopped migration" "$rtm3d" model \
  "$work/tiny.ini" --quiet --force --set output.name=st2
expect 2 "st2\.resume\.h5 was written by a run with another config" "$rtm3d" "${mig[@]}" \
  --set output.name=st2 --set source.amplitude=2 --force
echo "a file of the user's" >"$out/st2.h5"
expect 2 "st2\.resume\.h5 was written by a run with another config" "$rtm3d" "${mig[@]}" \
  --set output.name=st2 --set source.amplitude=2 --force
[ -e "$out/st2.resume.h5" ] && rob_pass "a stopped run's state kept" || rob_fail "st2.resume.h5 went"
rm -f "$out/st2.h5"

# ---- export never writes over a run's names or files (probe F3), --force or not (a build
# without segyio has no export to try)
for target in st2.resume.h5 st2.lock st2.commit st2.h5.partial whole.h5 whole.h5.replaced \
  whole_image_x.png whole.xmf; do
  has_feature "SEG-Y on" || break
  [ -e "$out/$target" ] && before="$(cksum <"$out/$target")" || before=absent
  expect 2 "is a (name|file) of an rtm3d run" "$rtm3d" export "$out/obs.h5" --segy "$out/$target" \
    --force
  [ -e "$out/$target" ] && after="$(cksum <"$out/$target")" || after=absent
  [ "$before" = "$after" ] && rob_pass "$target untouched by export" || rob_fail "export changed $target"
done

# ---- a --force commit killed after linking the earlier file aside; a user's file put at
# the name since is not the earlier file: the recovery renames nothing and says so (probe F1)
expect 0 "" "$rtm3d" "${mig[@]}" --set output.name=f1
expect 137 "" env RTM3D_TEST_KILL_RENAME=/f1.h5 LD_PRELOAD="$preload" "$rtm3d" "${mig[@]}" \
  --set output.name=f1 --set source.amplitude=2 --force
[ -e "$out/f1.h5.replaced" ] && rob_pass "the kill left f1.h5.replaced (the case holds)" ||
  rob_fail "no f1.h5.replaced after the kill: $(ls "$out" | tr '\n' ' ')"
rm -f "$out/f1.h5" && echo "my own results" >"$out/f1.h5"
expect 2 "f1\.h5 is not the file that run saw there" "$rtm3d" "${mig[@]}" --set output.name=f1 \
  --force
[ "$(cat "$out/f1.h5")" = "my own results" ] && rob_pass "the user's f1.h5 kept" ||
  rob_fail "the user's f1.h5 was replaced"

# ---- files of the user's at a temp's or a link aside's name, with no run killed, stay
# (probe F4: removed with a warning that a killed run left them)
echo USER >"$out/q.resume.h5.replaced"
echo USER >"$out/q.json.partial.partial.abcdef.partial"
expect 0 "" "$rtm3d" "${mig[@]}" --set output.name=q
[ -e "$out/q.resume.h5.replaced" ] && [ -e "$out/q.json.partial.partial.abcdef.partial" ] &&
  rob_pass "the user's files at run-temp names kept" || rob_fail "a user's file at a temp name went"

# ---- a --force commit killed while it links the earlier files aside (probe G1: the names
# not linked yet hold the earlier files the run saw, which the journal records by inode):
# the next run finishes the commit in one go, and no .replaced link stays
expect 0 "" "$rtm3d" "${mig[@]}" --set output.name=g1 --set source.amplitude=2
expect 0 "" "$rtm3d" "${mig[@]}" --set output.name=g1ref
expect 137 "" env RTM3D_TEST_KILL_LINK=/g1.json.replaced LD_PRELOAD="$preload" "$rtm3d" \
  "${mig[@]}" --set output.name=g1 --force
[ -e "$out/g1.commit" ] && rob_pass "the kill left g1.commit (the case holds)" ||
  rob_fail "no g1.commit after the kill: $(ls "$out" | tr '\n' ' ')"
expect 2 "killed while it renamed its outputs.*its commit is finished" "$rtm3d" "${mig[@]/--quiet/--set=rtm.mute=false}" \
  --set output.name=g1
expect 0 "" "$rtm3d" validate "$out/g1.h5" "$out/g1ref.h5" --rtol 0 --atol 0 --datasets /image
expect_left_none "$out" '^g1\..*(replaced|partial|commit)'

# ---- a --force commit killed at its last rename: the links aside of the files it had
# renamed are the recorded earlier files, removed (probe G3: g3.xmf.replaced stayed)
expect 0 "" "$rtm3d" "${mig[@]}" --set output.name=g3 --set source.amplitude=2
expect 137 "" env RTM3D_TEST_KILL_RENAME=/g3.json LD_PRELOAD="$preload" "$rtm3d" "${mig[@]}" \
  --set output.name=g3 --force
expect 2 "killed while it renamed its outputs.*its commit is finished" "$rtm3d" "${mig[@]/--quiet/--set=rtm.mute=false}" \
  --set output.name=g3
expect_left_none "$out" '^g3\..*(replaced|partial|commit)'

# ---- a migration killed as it removes its resume state after its renames (probe G4: the
# state stayed for ever, read later as a stopped migration's): the journal still stands,
# and the next run removes the state as it finishes the commit
expect 137 "" env RTM3D_TEST_KILL_UNLINK=/g4.resume.h5 LD_PRELOAD="$preload" "$rtm3d" \
  "${mig[@]}" --set output.name=g4
[ -e "$out/g4.commit" ] && [ -e "$out/g4.resume.h5" ] &&
  rob_pass "the kill left g4.commit and g4.resume.h5 (the case holds)" ||
  rob_fail "after the kill at g4.resume.h5: $(ls "$out" | tr '\n' ' ')"
expect 2 "removed .*g4\.resume\.h5" "$rtm3d" "${mig[@]/--quiet/--set=rtm.mute=false}" \
  --set output.name=g4
expect_left_none "$out" '^g4\.(resume|commit)'

# ---- export never replaces a run's report, nor the SEG-Y a run wrote from its own run
# file with another file's gathers (probe G2); a re-export of that run file still does
if has_feature "SEG-Y on"; then
  "$rtm3d" model "$work/tiny.ini" --quiet "${survey[@]}" --set output.name=g2 --set output.segy=true ||
    rob_fail "model g2 exited $?"
  for target in whole.json g2.sgy; do
    before="$(cksum <"$out/$target")"
    expect 2 "is a (name|file) of an rtm3d run" "$rtm3d" export "$out/obs.h5" --segy "$out/$target" \
      --force
    [ "$before" = "$(cksum <"$out/$target")" ] && rob_pass "$target untouched by export" ||
      rob_fail "export changed $target"
  done
  expect 0 "" "$rtm3d" export "$out/g2.h5" --segy "$out/g2.sgy" --force
fi

# ---- a --force commit killed before linking h1.h5 aside; the user removes h1.h5 and writes
# a file of their own there, which may get the freed inode again (probe H1): the journal
# knows the earlier file by size and modification time, so the recovery renames nothing
expect 0 "" "$rtm3d" "${mig[@]}" --set output.name=h1
expect 137 "" env RTM3D_TEST_KILL_LINK=/h1.h5.replaced LD_PRELOAD="$preload" "$rtm3d" \
  "${mig[@]}" --set output.name=h1 --set source.amplitude=2 --force
rm -f "$out/h1.h5" && echo "my own results" >"$out/h1.h5"
expect 2 "h1\.h5 is not the file that run saw there" "$rtm3d" "${mig[@]}" --set output.name=h1
[ "$(cat "$out/h1.h5")" = "my own results" ] && rob_pass "the user's h1.h5 kept" ||
  rob_fail "the user's h1.h5 was replaced"
# ---- the folder of a killed --force commit copied (cp -r: new inodes and times; probes H2,
# I3): the journal knows the earlier files by their content, and the copy's next run
# finishes the commit
expect 0 "" "$rtm3d" "${mig[@]}" --set output.name=h2r --set source.amplitude=2
expect 0 "" "$rtm3d" "${mig[@]}" --set output.name=h2
expect 137 "" env RTM3D_TEST_KILL_LINK=/h2.json.replaced LD_PRELOAD="$preload" "$rtm3d" \
  "${mig[@]}" --set output.name=h2 --set source.amplitude=2 --force
mkdir -p "$work/copy" && cp -r "$out"/h2.* "$out"/h2_* "$work/copy/"
expect 2 "killed while it renamed its outputs.*its commit is finished" "$rtm3d" \
  "${mig[@]/--quiet/--set=rtm.mute=false}" --set output.name=h2 --set output.dir="$work/copy"
expect 0 "" "$rtm3d" validate "$work/copy/h2.h5" "$out/h2r.h5" --rtol 0 --atol 0 --datasets /image
expect_left_none "$work/copy" '(replaced|partial|commit)'

# ---- a file of the same size and modification time as the earlier one but another content
# at the name (another run's, on a file system of coarse times; probe I1) is not the earlier
# file: the recovery renames nothing
expect 0 "" "$rtm3d" "${mig[@]}" --set output.name=i1
expect 137 "" env RTM3D_TEST_KILL_LINK=/i1.h5.replaced LD_PRELOAD="$preload" "$rtm3d" \
  "${mig[@]}" --set output.name=i1 --set source.amplitude=2 --force
python3 - "$out/i1.h5" <<'PY'
import sys
data = bytearray(open(sys.argv[1], "rb").read())
data[len(data) // 2] ^= 0xFF  # the same size, another content
open(sys.argv[1] + ".other", "wb").write(data)
PY
touch -r "$out/i1.h5" "$out/i1.h5.other" && mv "$out/i1.h5.other" "$out/i1.h5"
before="$(cksum <"$out/i1.h5")"
expect 2 "i1\.h5 is not the file that run saw there" "$rtm3d" "${mig[@]}" --set output.name=i1
[ "$before" = "$(cksum <"$out/i1.h5")" ] && rob_pass "the look-alike i1.h5 kept" ||
  rob_fail "the look-alike i1.h5 was replaced"

# ---- a --force commit killed before its first link aside, then a partial removed by hand
# (probe J1: reported finished, a mixed set, the killed run's state removed): refused, nothing
# renamed, the state kept; with every partial removed, refused alike
for removed in 'j1.h5.partial' '*.partial'; do
  rm -f "$out"/j1*
  expect 0 "" "$rtm3d" "${mig[@]}" --set output.name=j1 --set source.amplitude=2
  earlier="$(cksum <"$out/j1.h5")"
  expect 137 "" env RTM3D_TEST_KILL_LINK=/j1_image_x.png.replaced LD_PRELOAD="$preload" \
    "$rtm3d" "${mig[@]}" --set output.name=j1 --force
  [ -e "$out/j1.resume.h5" ] && [ ! -e "$out/j1_image_x.png.replaced" ] &&
    rob_pass "the kill came before the links, the state there (the case holds)" ||
    rob_fail "after the kill at the first link: $(ls "$out" | grep j1 | tr '\n' ' ')"
  (cd "$out" && rm -f $removed)
  expect 2 "j1\.commit: .*commit cannot be finished" "$rtm3d" "${mig[@]}" --set output.name=j1
  [ "$earlier" = "$(cksum <"$out/j1.h5")" ] && [ -e "$out/j1.resume.h5" ] && [ -e "$out/j1.commit" ] &&
    rob_pass "removed $removed: the earlier j1.h5, the state and the journal kept" ||
    rob_fail "removed $removed: $(ls "$out" | grep j1 | tr '\n' ' ')"
done

# ---- the recovery itself killed after its first rename (probe K1: the next run found a
# renamed name without its link aside and refused for ever): the recovery links each
# earlier file aside before renaming over it, as the killed run would have, so the next run
# finishes the commit
expect 0 "" "$rtm3d" "${mig[@]}" --set output.name=k1 --set source.amplitude=2
expect 137 "" env RTM3D_TEST_KILL_LINK=/k1_image_x.png.replaced LD_PRELOAD="$preload" \
  "$rtm3d" "${mig[@]}" --set output.name=k1 --force
expect 137 "" env RTM3D_TEST_KILL_RENAME=/k1_image_y.png LD_PRELOAD="$preload" "$rtm3d" \
  "${mig[@]}" --set output.name=k1
expect 2 "killed while it renamed its outputs.*its commit is finished" "$rtm3d" \
  "${mig[@]/--quiet/--set=rtm.mute=false}" --set output.name=k1
expect 0 "" "$rtm3d" validate "$out/k1.h5" "$out/g1ref.h5" --rtol 0 --atol 0 --datasets /image
expect_left_none "$out" '^k1.*(replaced|partial|commit|resume)'

rob_finish
