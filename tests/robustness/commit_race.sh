#!/usr/bin/env bash
# A run's output names taken while it runs (issue 32, probe D, D2 and D5):
#   - without --force, a file that appears at one of a run's names after its claim (a user's,
#     an export's NAME.sgy, a plot's NAME_image_x.png) is never replaced: the commit stops
#     before any rename, exit 1 naming the file, none of the run's outputs in place, its
#     complete partials kept with the commands that put them in place (which work); a file
#     put there between the commit's look and its renames (planted as the rename comes,
#     librtm3d_full_disk_preload.so) stops it alike, the renames made undone; the next run
#     of the name, finishing the commit of such a run killed among its renames, makes none
#     of them while a file put at one of its names blocks it (named, the journal kept);
#   - with --force such a file is replaced, as before;
#   - --force across commands: a migration over a model run of the name removes the model
#     run's NAME.sgy (rtm3d's, from NAME.h5), a model run over a migration its
#     NAME_image_{x,y,z}.png (rtm3d's figures, PLplot's or plain PNGs: their "Software: rtm3d"
#     mark), each said; a user's file at those names stays.
# The file appears at a chosen point: stall_write_preload.c holds the run in the open of its
# NAME.h5.partial (after the claim) until the test has put the file there.
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh" "$@"
use_preload stall_write
deck="$work/deck.ini"
tiny_deck "$deck"
out="$work/out"
mkdir -p "$out"
quick=(--quiet --set snapshots.every=0 --set time.steps=10)

# held NAME ACTION COMMAND...: COMMAND held at the open of NAME.h5.partial while ACTION runs
held() {
  local name="$1"
  shift
  held_at_open "$name.h5.partial" "$@"
}

# absent PATH...: none of them exists
absent() {
  local p
  for p in "$@"; do
    [ -e "$p" ] && rob_fail "$p exists" || rob_pass "no $p"
  done
}

# ---- D2: a user's file at NAME.json during a model run ----
echo "USER DATA precious" >"$work/precious"
sum="$(cksum <"$work/precious")"
held c5 'cp "$work/precious" "$out/c5.json"' "$rtm3d" model "$deck" "${quick[@]}" \
  --set output.name=c5
rob_judge 1 "c5\.json appeared while the run ran.*none of the run's outputs was put in place" \
  "$held_status" "model, a file put at c5.json meanwhile"
expect_file_unchanged "$out/c5.json" "$sum"
absent "$out/c5.h5" "$out/c5.xmf" "$out/c5.lock"
[ -f "$out/c5.h5.partial" ] && [ -f "$out/c5.json.partial" ] &&
  rob_pass "the run's complete partials are kept" || rob_fail "partials gone: $(ls "$out")"
# the message's way to keep them works
moves="$(grep -o 'put them in place with: [^(]*' <<<"$rob_output" | sed 's/^put them in place with: //; s/\. *$//')"
mv "$out/c5.json" "$work/c5.user.json"
(eval "$moves") && [ -f "$out/c5.h5" ] && [ -f "$out/c5.json" ] && ! ls "$out"/c5*.partial 2>/dev/null &&
  rob_pass "the message's commands put the outputs in place" || rob_fail "the commands '$moves' failed"
expect 0 "" "$rtm3d" plot "$out/c5.h5" /traces/p -o "$work/c5.png"

# with --force the file is replaced, as before
held c6 'cp "$work/precious" "$out/c6.json"' "$rtm3d" model "$deck" "${quick[@]}" \
  --set output.name=c6 --force
rob_judge 0 "" "$held_status" "model --force, a file put at c6.json meanwhile"
grep -q '"command"' "$out/c6.json" && rob_pass "c6.json is the run's report" ||
  rob_fail "c6.json is not the run's report"

# ---- D2: a file put at NAME.json between the commit's look and its renames (planted by
# librtm3d_full_disk_preload.so just before the rename): the renames made are undone
plant=(env LD_PRELOAD="$PWD/librtm3d_full_disk_preload.so")
if [ -e "$PWD/librtm3d_full_disk_preload.so" ]; then
  expect 1 "r7\.json appeared while the run ran" "${plant[@]}" RTM3D_TEST_PLANT_RENAME=/r7.json \
    "$rtm3d" model "$deck" "${quick[@]}" --set output.name=r7
  [ "$(cat "$out/r7.json")" = planted ] && rob_pass "the planted r7.json stays" ||
    rob_fail "r7.json was replaced"
  absent "$out/r7.h5" "$out/r7.xmf"
  [ -f "$out/r7.h5.partial" ] && [ -f "$out/r7.json.partial" ] &&
    rob_pass "r7's renames undone, its partials kept" || rob_fail "r7 partials: $(ls "$out")"
  # a run without --force killed between its renames, a file put at its json meanwhile: the
  # next run makes none of the renames left, naming that file, and keeps it, the dead run's
  # partial and the journal (probe E9: it made the others and called them all finished)
  expect 137 "" "${plant[@]}" RTM3D_TEST_KILL_RENAME=/r8.json "$rtm3d" model "$deck" \
    "${quick[@]}" --set output.name=r8
  cp "$work/precious" "$out/r8.json"
  expect 2 "r8\.json is not the file that run saw there" "$rtm3d" model "$deck" "${quick[@]:1}" \
    --set output.name=r8
  expect_file_unchanged "$out/r8.json" "$sum"
  [ -f "$out/r8.json.partial" ] && [ -e "$out/r8.commit" ] &&
    rob_pass "r8's partial and journal kept" || rob_fail "r8: $(ls "$out")"
fi

# ---- D2: an export finishing at NAME.sgy during a model run with output.segy ----
if has_feature "SEG-Y on"; then
  held c4 '"$rtm3d" export "$out/c5.h5" --segy "$out/c4.sgy" --quiet' "$rtm3d" model "$deck" \
    "${quick[@]}" --set output.name=c4 --set output.segy=true
  rob_judge 1 "c4\.sgy appeared while the run ran" "$held_status" "model, an export to c4.sgy meanwhile"
  "$rtm3d" export "$out/c5.h5" --segy "$work/c5.sgy" --quiet
  cmp -s "$out/c4.sgy" "$work/c5.sgy" && rob_pass "c4.sgy is still the export's" ||
    rob_fail "c4.sgy was replaced"
  absent "$out/c4.h5" "$out/c4.json"
else
  echo "skip: no SEG-Y in this build: the export case"
fi

# ---- a FIFO put at an output's partial name once the run has made it (held at HDF5's open of
# the file, which goes on writing to the file it opened): the writeback hints pass it by, and
# the sync before the journal refuses it (no regular file), neither waiting for a writer ----
held_at_open "f1.h5.partial" 'rm -f "$out/f1.h5.partial"; mkfifo "$out/f1.h5.partial"' \
  timeout 60 "$rtm3d" model "$deck" "${quick[@]}" --set output.name=f1 # a hang fails, exit 124
rob_judge 1 "cannot open .*f1\.h5\.partial to put its data on the disk: it is not a regular file" \
  "$held_status" "model, a FIFO put at f1.h5.partial before the commit"
absent "$out/f1.h5" "$out/f1.json" "$out/f1.lock"
rm -f "$out"/f1.*

# ---- D2: a plot to NAME_image_x.png during a migrate; D5: --force across commands ----
small=(--set shots.layout=grid --set shots.x_count=1 --set shots.y_count=1 --set shots.z=60
  --set receivers.z=60 --set receivers.y_count=24 --set receivers.y_first=0
  --set receivers.y_step=10 --set receivers.x_step=10 --set time.steps=40)
expect 0 "" "$rtm3d" model "$deck" "${small[@]}" --set output.name=obs --quiet
migrate=("$rtm3d" migrate "$deck" "${small[@]}" --set rtm.observed="$out/obs.h5")
held g '"$rtm3d" plot "$out/c5.h5" /traces/p -o "$out/g_image_x.png" >/dev/null' "${migrate[@]}" \
  --set output.name=g --quiet
plot_sum="$(cksum <"$out/g_image_x.png")"
rob_judge 1 "g_image_x\.png appeared while the run ran" "$held_status" \
  "migrate, a plot to g_image_x.png meanwhile"
expect_file_unchanged "$out/g_image_x.png" "$plot_sum"
absent "$out/g.h5" "$out/g_image_y.png" "$out/g.json"
# the same with a state saved after the first of two shots: the message names it, which the
# outputs put in place by hand would leave beside them
expect 0 "" "$rtm3d" model "$deck" "${small[@]}" --set shots.x_count=2 --set output.name=obs2 \
  --quiet
held g2 'cp "$work/precious" "$out/g2.json"' "${migrate[@]}" --set output.name=g2 --quiet \
  --set shots.x_count=2 --set rtm.observed="$out/obs2.h5" --set rtm.resume_every=0
rob_judge 1 "g2\.json appeared while the run ran.*Then remove .*g2\.resume\.h5, the state" \
  "$held_status" "migrate of two shots, a state saved, a file put at g2.json meanwhile"
[ -f "$out/g2.resume.h5" ] && [ -f "$out/g2.h5.partial" ] &&
  rob_pass "the state and the complete partials are kept" || rob_fail "gone: $(ls "$out")"

# D5: a migration --force over a model run of the name with output.segy: its NAME.sgy goes
if has_feature "SEG-Y on"; then
  expect 0 "" "$rtm3d" model "$deck" "${small[@]}" --set output.name=mx --set output.segy=true --quiet
  expect 0 "removes .*mx\.sgy.*rtm3d wrote" "${migrate[@]}" --set output.name=mx --force
  absent "$out/mx.sgy"
fi
# D5: a model run --force over a migration: its figures go; a user's file at one stays
expect 0 "" "${migrate[@]}" --set output.name=b --quiet
[ -f "$out/b_image_y.png" ] || rob_fail "the migration wrote no b_image_y.png"
# the plain PNG writer's mark too (a build without PLplot writes its figures so)
rm "$out/b_image_y.png"
expect 0 "" "$rtm3d" plot "$out/b.h5" /image --raw -o "$out/b_image_y.png"
cp "$work/precious" "$out/b_image_z.png"
expect 0 "removes .*b_image_x\.png.*b_image_y\.png" "$rtm3d" model "$deck" "${quick[@]:1}" \
  --set output.name=b --force
grep -q "b_image_z\.png stays" <<<"$rob_output" && rob_pass "the user's b_image_z.png is said to stay" ||
  rob_fail "no word on b_image_z.png"
absent "$out/b_image_x.png" "$out/b_image_y.png"
expect_file_unchanged "$out/b_image_z.png" "$sum"
# ---- the commands the message gives, pasted into a shell, with an output.dir that a shell
# would split and run (probe E10: "q;touch PWNED;" ran touch): quoted, they only move
odd="$work/q;touch PWNED; x"
mkdir -p "$odd"
held_at_open "o1.h5.partial" 'cp "$work/precious" "$odd/o1.json"' "$rtm3d" model "$deck" \
  "${quick[@]}" --set output.dir="$odd" --set output.name=o1
rob_judge 1 "o1\.json appeared while the run ran" "$held_status" "model, an odd output.dir"
moves="$(grep -o 'put them in place with: [^(]*' <<<"$rob_output" | sed 's/^put them in place with: //; s/\. *$//')"
mv "$odd/o1.json" "$work/o1.user.json"
(cd "$work" && eval "$moves") && [ -f "$odd/o1.h5" ] && [ ! -e "$work/PWNED" ] &&
  rob_pass "the quoted commands only move the outputs" ||
  rob_fail "the commands '$moves' ran something else or failed"
# a relative output.dir that begins with - (probe: mv read '-dash/...' as its options)
mkdir -p "$work/-dash"
here="$PWD"
cd "$work" || exit 1
held_at_open "o2.h5.partial" 'cp "$work/precious" "$work/-dash/o2.json"' "$rtm3d" model "$deck" \
  "${quick[@]}" --set output.dir=-dash --set output.name=o2
cd "$here" || exit 1
rob_judge 1 "o2\.json appeared while the run ran" "$held_status" "model, output.dir -dash"
moves="$(grep -o 'put them in place with: [^(]*' <<<"$rob_output" | sed 's/^put them in place with: //; s/\. *$//')"
mv "$work/-dash/o2.json" "$work/o2.user.json"
(cd "$work" && eval "$moves") && [ -f "$work/-dash/o2.h5" ] &&
  rob_pass "the commands move outputs under a folder named -dash" ||
  rob_fail "the commands '$moves' failed under a folder named -dash"

# ---- makemodel: a file put at model.file while the model is written, without --force
# (probe E2: replaced, exit 0): it stays, exit 1, the model written removed
printf 'background vp=2000\n' >"$work/plain.model"
held_at_open "mm.h5.partial" 'cp "$work/precious" "$out/mm.h5"' "$rtm3d" makemodel "$deck" \
  --quiet --set model.file="$out/mm.h5" --set model.description="$work/plain.model"
rob_judge 1 "mm\.h5 appeared while the model was written.*left as it is" "$held_status" \
  "makemodel, a file put at model.file meanwhile"
expect_file_unchanged "$out/mm.h5" "$sum"
absent "$out/mm.h5.partial" "$out/mm.lock"

# ---- a FIFO at NAME.commit (no journal rtm3d wrote): refused at once (probe E4: the open
# waited for a writer for ever)
mkfifo "$out/ff.commit"
expect 2 "ff\.commit" timeout 60 "$rtm3d" model "$deck" "${quick[@]}" --set output.name=ff
rm -f "$out/ff.commit"

# ---- export: a file put at its target while it writes, without --force (probe E: the
# export renamed over it, exit 0), and two exports to one target: the later stops, exit 1,
# the file left as it is and nothing of the export's left
if has_feature "SEG-Y on"; then
  expect 0 "" "$rtm3d" model "$deck" "${quick[@]}" --set output.name=ex
  held_at_open ".partial." 'cp "$work/precious" "$work/ex.sgy"' \
    "$rtm3d" export "$out/ex.h5" --segy "$work/ex.sgy" --quiet
  rob_judge 1 "ex\.sgy appeared while this export ran.*left as it is" "$held_status" \
    "export, a file put at its target meanwhile"
  expect_file_unchanged "$work/ex.sgy" "$sum"
  left="$(cd "$work" && ls -- ex*.partial* 2>/dev/null)"
  [ -z "$left" ] && rob_pass "nothing of the export left" || rob_fail "left: $left"
  rm -f "$work/ex.sgy"
  held_at_open ".partial." '"$rtm3d" export "$out/ex.h5" --segy "$work/ex.sgy" --quiet' \
    "$rtm3d" export "$out/ex.h5" --segy "$work/ex.sgy" --quiet
  rob_judge 1 "ex\.sgy appeared while this export ran" "$held_status" \
    "two exports to one target: the later one stops"
  [ -s "$work/ex.sgy" ] && rob_pass "the first export's file stays" || rob_fail "no ex.sgy"
  # the run file renamed over while it is exported, as model --force does at its end (probe
  # S, S1: the SEG-Y held the old run's first shots and the new run's others, exit 0)
  cp "$out/ex.h5" "$work/ex_copy.h5"
  "$rtm3d" model "$deck" "${quick[@]}" --set output.dir="$work/other" --set output.name=ex \
    --set source.amplitude=3 || rob_fail "the second run for export failed"
  held_at_open ".partial." 'mv "$work/other/ex.h5" "$work/ex_copy.h5"' \
    "$rtm3d" export "$work/ex_copy.h5" --segy "$work/mixed.sgy" --quiet
  rob_judge 1 "ex_copy\.h5 changed while it was exported .*nothing is written" "$held_status" \
    "export, its input replaced meanwhile"
  [ -z "$(cd "$work" && ls -- mixed* 2>/dev/null)" ] && rob_pass "no SEG-Y of two runs" ||
    rob_fail "left: $(cd "$work" && ls -- mixed*)"
fi

# ---- U3: a migrate --force whose new output.dir is replaced by a link to the folder of its
# rtm.observed during its set-up: the outputs would be put in place over the observed gathers
# (probe U, U3). Held at the lock's first open, the folder swapped there: the run takes its
# lock anew through the link, and sees its output NAME.h5 is then its rtm.observed (exit 2).
cp "$out/obs.h5" "$out/u3.h5"
u3_sum="$(cksum <"$out/u3.h5")"
u3=("$rtm3d" migrate "$deck" "${small[@]}" --set rtm.observed="$out/u3.h5" --set output.name=u3
  --quiet --force)
held_at_open "u3.lock" 'rm -rf "$out/new"; ln -s . "$out/new"' "${u3[@]}" --set output.dir="$out/new"
rob_judge 2 "rtm\.observed = .*u3\.h5 is also an output of this run" "$held_status" \
  "migrate, output.dir swapped for a link to the observed file's folder before the lock"
expect_file_unchanged "$out/u3.h5" "$u3_sum"
rm -f "$out/new"
# swapped once the run writes its outputs (held at its first write of u3.h5.partial): the lock is no longer at its name, nothing is put
# in place (the names lead to the observed file's folder), the observed file stays
held_at_write "u3.h5.partial" 'mv "$out/new" "$out/old"; ln -s . "$out/new"' "${u3[@]}" \
  --set output.dir="$out/new"
rob_judge 1 "u3\.lock is no longer the lock this run holds: its folder was moved, removed or replaced" \
  "$held_status" "migrate, output.dir swapped for a link once its outputs were open"
expect_file_unchanged "$out/u3.h5" "$u3_sum"
[ -f "$out/old/u3.h5.partial" ] && rob_pass "the moved folder keeps the run's partial" ||
  rob_fail "the moved folder holds: $(ls "$out/old" | tr '\n' ' ')"
[ -f "$out/old/u3.lock" ] && [ ! -e "$out/u3.lock" ] &&
  rob_pass "the lock stays in the moved folder, and the linked folder's name is not removed" ||
  rob_fail "locks: $(ls "$out"/u3.lock "$out/old/u3.lock" 2>&1 | tr '\n' ' ')"
rm -rf "$out/new" "$out/old" "$out"/u3*.partial

# ---- output.dir renamed while a run writes into it (probe R, R3: "the run's outputs were
# removed" though its complete NAME.h5.partial went with the folder): said as it is
# (held at its first write of the file: the folder moves once the file is made)
mkdir -p "$work/moving"
held_at_write ".h5.partial" 'mv "$work/moving" "$work/moved"' "$rtm3d" model "$deck" "${quick[@]}" \
  --set output.dir="$work/moving" --set output.name=mv1
rob_judge 1 "mv1\.lock is no longer the lock this run holds: its folder was moved.* they stay as \.partial files in the folder they were written into" \
  "$held_status" "a folder moved during the run"
[ -e "$work/moved/mv1.h5.partial" ] && rob_pass "the moved folder keeps the run's partial" ||
  rob_fail "the moved folder holds: $(ls "$work/moved" | tr '\n' ' ')"
rob_finish
