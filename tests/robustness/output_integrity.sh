#!/usr/bin/env bash
# A run's outputs appear together or not at all, and a run removes only what it created:
# two runs given the same output name (the second is refused, the first completes), a disk
# that fills as the report, a figure, the SEG-Y copy or a shot's gathers (written behind the
# next shot) is written (nothing of the run left), and migrate's resume state kept until the
# complete image is in place.
source "$(dirname "$0")/lib.sh" "$@"
use_preload full_disk
tiny_deck "$work/tiny.ini"
out="$work/out"

# wait_for PATH SECONDS: PATH exists within SECONDS
wait_for() {
  local tries=$(($2 * 20))
  while [ ! -e "$1" ] && [ "$tries" -gt 0 ]; do
    sleep 0.05
    tries=$((tries - 1))
  done
  [ -e "$1" ]
}

# wait_for_line FILE PATTERN SECONDS: until FILE holds a line matching the extended regex
wait_for_line() {
  local tries=$(($3 * 100))
  while ! grep -Eq "$2" "$1" 2>/dev/null && [ "$tries" -gt 0 ]; do
    sleep 0.01
    tries=$((tries - 1))
  done
  grep -Eq "$2" "$1" 2>/dev/null
}

# ---- two runs, one name: the first is held (SIGSTOP) once its file exists, the second
# starts then; the second is refused naming the first, the first completes untouched
# (the migrate among the second runs is given real gathers: a deck's own errors, such as a
# missing rtm.observed file, are said before the name is claimed)
"$rtm3d" model "$work/tiny.ini" --quiet --set output.dir="$work/observed" --set output.name=shot
long=(--set grid.nx=64 --set grid.ny=64 --set grid.nz=64 --set time.steps=400
  --set snapshots.every=100 --set source.x=320 --set source.y=320 --set source.z=320)
"$rtm3d" model "$work/tiny.ini" "${long[@]}" --quiet >"$work/first.log" 2>&1 &
first=$!
if wait_for "$out/tiny.h5.partial" 60; then
  kill -STOP "$first"
  expect 2 "another run is writing output\.name 'tiny' in .*out \(pid $first on .* holds .*tiny\.lock\)" \
    "$rtm3d" model "$work/tiny.ini" --quiet
  expect 2 "another run is writing output\.name 'tiny'" \
    "$rtm3d" model "$work/tiny.ini" --quiet --force
  expect 2 "another run is writing output\.name 'tiny'" \
    "$rtm3d" migrate "$work/tiny.ini" --quiet --force --set rtm.observed="$work/observed/shot.h5"
  [ -e "$out/tiny.h5.partial" ] && rob_pass "the first run's partial file is still there" ||
    rob_fail "a refused run removed the first run's tiny.h5.partial"
  kill -CONT "$first"
else
  rob_fail "the first run never created $out/tiny.h5.partial"
  cat "$work/first.log"
fi
wait "$first"
status=$?
[ "$status" -eq 0 ] && [ -e "$out/tiny.h5" ] && rob_pass "the first run completed (exit 0, tiny.h5)" ||
  { rob_fail "the first run ended with $status:"; sed 's/^/    /' "$work/first.log"; }
[ ! -e "$out/tiny.lock" ] && rob_pass "the lock is gone with its run" ||
  rob_fail "$out/tiny.lock left by a completed run"
rm -rf "$out"

# what a run killed with SIGKILL leaves (its lock, not held, and its partial files) is
# taken over by the next run of that name
mkdir -p "$out"
echo "pid 1 on nowhere since then" >"$out/tiny.lock"
segy=() partials=(tiny.h5.partial tiny.json.partial)
has_feature "SEG-Y on" && segy=(--set output.segy=true) partials+=(tiny.sgy.partial)
for partial in "${partials[@]}"; do echo junk >"$out/$partial"; done
expect 0 "" "$rtm3d" model "$work/tiny.ini" --quiet "${segy[@]}"
[ -z "$(ls "$out" | grep -E 'partial|lock')" ] && rob_pass "the killed run's leftovers were taken over" ||
  rob_fail "left in $out: $(ls "$out" | tr '\n' ' ')"
rm -rf "$out"

# ---- links planted at a run's own names are never written through: at the lock the run is
# refused; at a partial name the link is replaced by the run's file; the file it pointed at
# is untouched either way
echo "a user's notes" >"$work/victim.txt"
victim="$(cksum <"$work/victim.txt")"
mkdir -p "$out"
ln -s "$work/victim.txt" "$out/tiny.lock"
expect 2 "tiny\.lock is a symbolic link" "$rtm3d" model "$work/tiny.ini" --quiet
rm "$out/tiny.lock"
# nor into a hard link of another file there (probe U, U5: the holder's line was written in)
ln "$work/victim.txt" "$out/tiny.lock"
expect 2 "tiny\.lock has other names \(a hard link of another file\)" "$rtm3d" model "$work/tiny.ini" --quiet
expect_file_unchanged "$work/victim.txt" "$victim"
rm "$out/tiny.lock"
for partial in tiny.h5.partial tiny.xmf.partial tiny.json.partial tiny.json.partial.partial; do
  ln -s "$work/victim.txt" "$out/$partial"
done
expect 0 "" "$rtm3d" model "$work/tiny.ini" --quiet --set snapshots.every=10
expect_file_unchanged "$work/victim.txt" "$victim"
[ -f "$out/tiny.h5" ] && [ ! -L "$out/tiny.h5" ] && [ ! -L "$out/tiny.xmf" ] &&
  rob_pass "the outputs are the run's own files, not links" || rob_fail "an output is a link: $(ls -l "$out")"
rm -rf "$out"

# ---- an output name taken by something that is no file stops the run before any work
# (exit 2: it used to be found at the final rename, after the whole run), and the earlier
# run's files stay; the run's other files of an earlier run (NAME.json without NAME.h5) are
# not replaced without --force
expect 0 "" "$rtm3d" model "$work/tiny.ini" --quiet --set snapshots.every=0
before_h5="$(cksum <"$out/tiny.h5")" before_json="$(cksum <"$out/tiny.json")"
mkdir "$out/tiny.xmf"
expect 2 "tiny\.xmf exists and is not a regular file" "$rtm3d" model "$work/tiny.ini" --quiet --force \
  --set snapshots.every=10
expect_file_unchanged "$out/tiny.h5" "$before_h5"
expect_file_unchanged "$out/tiny.json" "$before_json"
rmdir "$out/tiny.xmf"
# a rename that fails half-way through the commit (tiny.h5 already replaced, tiny.xmf not):
# the earlier run's files are put back, nothing partial or replaced is left
expect 0 "" "$rtm3d" model "$work/tiny.ini" --quiet --force --set snapshots.every=10
before_h5="$(cksum <"$out/tiny.h5")" before_json="$(cksum <"$out/tiny.json")"
before_xmf="$(cksum <"$out/tiny.xmf")"
expect 1 "cannot rename .*tiny\.xmf\.partial to .*tiny\.xmf" env RTM3D_TEST_FAIL_RENAME=tiny.xmf \
  LD_PRELOAD="$preload" "$rtm3d" model "$work/tiny.ini" --quiet --force --set snapshots.every=5
expect_file_unchanged "$out/tiny.h5" "$before_h5"
expect_file_unchanged "$out/tiny.xmf" "$before_xmf"
expect_file_unchanged "$out/tiny.json" "$before_json"
[ -z "$(ls "$out" | grep -E 'partial|replaced|lock')" ] && rob_pass "nothing partial or replaced left" ||
  rob_fail "left in $out: $(ls "$out" | tr '\n' ' ')"
rm "$out/tiny.h5"
expect 2 "tiny\.json exists: a run does not replace" "$rtm3d" model "$work/tiny.ini" --quiet
expect_file_unchanged "$out/tiny.json" "$before_json"
rm -rf "$out"
if has_feature "SEG-Y on"; then # a --force run without SEG-Y leaves no earlier run's NAME.sgy
  expect 0 "" "$rtm3d" model "$work/tiny.ini" --quiet --set output.segy=true
  expect 0 "" "$rtm3d" model "$work/tiny.ini" --quiet --force
  [ ! -e "$out/tiny.sgy" ] && rob_pass "the earlier run's tiny.sgy is gone with it" ||
    rob_fail "an earlier run's tiny.sgy sits beside the new tiny.h5"
  rm -rf "$out"
fi

# ---- the disk fills as one of the outputs is written: the run fails and leaves none of them
full_disk() { # TEXT COMMAND...: files whose path holds TEXT on a full disk
  local suffix="$1"
  shift
  RTM3D_TEST_FULL_DISK="$suffix" LD_PRELOAD="$preload" "$@"
}
expect 1 "tiny\.json\.partial" full_disk .json.partial "$rtm3d" model "$work/tiny.ini" --quiet \
  --set snapshots.every=10
expect_no_output "$out" tiny
expect 1 "tiny\.xmf\.partial" full_disk .xmf.partial "$rtm3d" model "$work/tiny.ini" --quiet \
  --set snapshots.every=10
expect_no_output "$out" tiny
# the same, the run's tiny.h5.partial not removable (a folder made read-only meanwhile): named
# as left, not said to be gone
expect 1 "cannot remove .*tiny\.h5\.partial, this run's unfinished output: Permission denied; it is left" \
  env RTM3D_TEST_FAIL_UNLINK=tiny.h5.partial RTM3D_TEST_FULL_DISK=.json.partial \
  LD_PRELOAD="$preload" "$rtm3d" model "$work/tiny.ini" --quiet --set snapshots.every=10
[ -f "$out/tiny.h5.partial" ] && rob_pass "the partial said to be left is there" ||
  rob_fail "no tiny.h5.partial, though the run said it was left"
rm -f "$out/tiny.h5.partial"
expect_no_output "$out" tiny
# the disk fails a write after the page cache took it: the sync before the journal finds it,
# and no output is put in place
expect 1 "cannot put .*tiny\.h5\.partial on the disk \(fdatasync\): Input/output error" \
  env RTM3D_TEST_FAIL_SYNC=tiny.h5.partial LD_PRELOAD="$preload" "$rtm3d" model \
  "$work/tiny.ini" --quiet --set snapshots.every=10
expect_no_output "$out" tiny
# a figure that plot -o puts at its name itself is synced first (written aside as
# p.png.partial.XXXXXX.png), and left nowhere when that fails
expect 0 "" "$rtm3d" model "$work/tiny.ini" --quiet --set snapshots.every=10
expect 1 "cannot put .*p\.png\.partial\.[^ ]*\.png on the disk \(fdatasync\)" \
  env RTM3D_TEST_FAIL_SYNC=.png LD_PRELOAD="$preload" "$rtm3d" plot "$out/tiny.h5" /traces/p \
  -o "$work/p.png"
left=("$work"/p.*)
[ ! -e "${left[0]}" ] && rob_pass "no p.png, nothing of it aside" ||
  rob_fail "left in $work: ${left[*]}"
rm -rf "$out"
if has_feature "SEG-Y on"; then
  expect 1 "" full_disk .sgy.partial "$rtm3d" model "$work/tiny.ini" --quiet --set output.segy=true
  expect_no_output "$out" tiny
  # export's messages name the file asked for, not the PATH.partial it writes aside
  expect 0 "" "$rtm3d" model "$work/tiny.ini" --quiet --set output.name=to_export \
    --set output.trace_dt=0.002
  expect 1 "error: $out/exported\.sgy: .*No space left on device" full_disk .sgy.partial \
    "$rtm3d" export "$out/to_export.h5" --segy "$out/exported.sgy"
  grep -q "exported\.sgy\.partial" <<<"$rob_output" && rob_fail "export named its .partial" ||
    rob_pass "export named exported.sgy"
  [ -z "$(ls "$out" | grep exported)" ] && rob_pass "export left nothing" ||
    rob_fail "export left: $(ls "$out" | grep exported | tr '\n' ' ')"
  rm -f "$out"/to_export.*
fi
# an earlier complete run replaced (--force) by one that fails: the earlier files stay whole
expect 0 "" "$rtm3d" model "$work/tiny.ini" --quiet --set snapshots.every=10
before="$(cksum <"$out/tiny.h5")"
expect 1 "tiny\.json\.partial" full_disk .json.partial "$rtm3d" model "$work/tiny.ini" --quiet \
  --force --set snapshots.every=5
expect_file_unchanged "$out/tiny.h5" "$before"
[ -z "$(ls "$out" | grep -E 'partial|lock')" ] && rob_pass "no partial or lock file left" ||
  rob_fail "left in $out: $(ls "$out" | tr '\n' ' ')"
rm -rf "$out"

# ---- migrate: two shots modelled, migrated with the disk filling at the report or a figure;
# the resume state of the first shot stays, and the same command resumes there
shots=(--set shots.layout=grid --set shots.x_count=2 --set shots.y_count=1 --set shots.z=60
  --set receivers.z=60 --set receivers.y_count=24 --set receivers.y_first=0
  --set receivers.y_step=10 --set receivers.x_step=10)
expect 0 "" "$rtm3d" model "$work/tiny.ini" --quiet "${shots[@]}" --set output.name=observed
migrate=(migrate "$work/tiny.ini" --quiet "${shots[@]}" --set rtm.observed="$out/observed.h5"
  --set rtm.resume_every=0)
for suffix in .json.partial _image_y.png.partial; do
  expect 1 "" full_disk "$suffix" "$rtm3d" "${migrate[@]}"
  expect_no_output "$out" tiny
  [ -e "$out/tiny.resume.h5" ] && rob_pass "the resume state is kept when $suffix fails" ||
    rob_fail "the resume state was removed although the image was never completed ($suffix)"
done
# a resume state whose sums hold a NaN (a damaged file) is refused, naming it, not resumed
# into an image of NaN
if have_h5edit; then
  cp "$out/tiny.resume.h5" "$work/state.h5"
  h5edit "$out/tiny.resume.h5" set /illumination nan 5 6 7
  expect 2 "tiny\.resume\.h5: dataset /illumination holds nan at \[5\]\[6\]\[7\]" \
    "$rtm3d" "${migrate[@]}"
  grep -q "tiny\.resume\.h5 cannot be resumed: remove it to start the migration over" \
    <<<"$rob_output" && rob_pass "the refusal says what to do" || rob_fail "no advice in: $rob_output"
  expect_no_output "$out" tiny
  cp "$work/state.h5" "$out/tiny.resume.h5"
fi
expect 0 "" "$rtm3d" "${migrate[@]}"
[ -e "$out/tiny.h5" ] && [ -e "$out/tiny.json" ] && [ ! -e "$out/tiny.resume.h5" ] &&
  rob_pass "the resumed migration completed and dropped its state" ||
  rob_fail "after the resumed migration: $(ls "$out" | tr '\n' ' ')"
cp "$out/observed.h5" "$work/observed_copy.h5"

# ---- an image of zeros is said to be one (a mute velocity given in km/s mutes everything),
# and an image that is not, is not
unmuted=(migrate "$work/tiny.ini" "${shots[@]}" --set rtm.observed="$work/observed_copy.h5"
  --set rtm.mute=false --set output.name=unmuted)
expect 0 "" "$rtm3d" "${unmuted[@]}"
grep -q "image is zero everywhere" <<<"$rob_output" && rob_fail "a zero-image warning on an image" ||
  rob_pass "no zero-image warning on an image"
expect 0 "warning: the image is zero everywhere: the observed gathers may be zero, rtm\.mute may" \
  "$rtm3d" "${unmuted[@]}" --set rtm.mute=true --set rtm.mute_velocity=2 --set output.name=muted
# one imaging time is named first among the causes (probe P, P2: imaging_step = steps was
# warned of as the mute alone)
steps=$(sed -n 's/^steps *= *\([0-9]*\).*/\1/p' "$work/tiny.ini")
expect 0 "zero everywhere: rtm\.imaging_step = $steps applies the imaging condition only 1 time in time\.steps = $steps \(leave it 0, auto\); or the observed" \
  "$rtm3d" "${unmuted[@]}" --set rtm.mute=true --set rtm.mute_velocity=2 \
  --set rtm.imaging_step="$steps" --set output.name=once
rm -rf "$out"

# ---- plot's figures are written aside too: a device given as the output is refused and
# kept (as root, the old plot removed it when the write failed), and a figure that cannot be
# written leaves the earlier one as it was
expect 0 "" "$rtm3d" model "$work/tiny.ini" --quiet --set snapshots.every=10 --set output.name=plotted
if mknod "$work/device.png" c 1 7 2>/dev/null; then # a second /dev/full
  for raw in "" --raw; do
    expect 2 "device\.png is not a regular file" "$rtm3d" plot "$out/plotted.h5" /snapshots/p \
      --index 1 -o "$work/device.png" $raw
    [ -c "$work/device.png" ] && rob_pass "the device node is still there" ||
      rob_fail "plot removed the device node"
  done
else
  echo "(mknod not permitted here: the device-node cases skipped)"
fi
expect 0 "" "$rtm3d" plot "$out/plotted.h5" /snapshots/p --index 1 -o "$work/first.png" --raw
mode="$(umask 022 && "$rtm3d" plot "$out/plotted.h5" /snapshots/p -o "$work/mode.png" >/dev/null 2>&1 &&
  stat -c %a "$work/mode.png")"
[ "$mode" = 644 ] && rob_pass "a figure's mode follows the umask" || rob_fail "a figure's mode is $mode under umask 022"
if small_disk 64k tight; then
  for raw in "" --raw; do
    cp "$work/first.png" "$tight/keep.png"
    before="$(cksum <"$tight/keep.png")"
    head -c $((64 * 1024 - 4096)) /dev/zero >"$tight/filler" 2>/dev/null
    expect 1 "keep\.png" "$rtm3d" plot "$out/plotted.h5" /snapshots/p --index 1 -o "$tight/keep.png" $raw
    expect_file_unchanged "$tight/keep.png" "$before"
    [ -z "$(ls "$tight" | grep partial)" ] && rob_pass "no partial figure left" ||
      rob_fail "left in $tight: $(ls "$tight" | tr '\n' ' ')"
    rm -f "$tight/filler"
  done
fi
rm -rf "$out"

# ---- a disk that fills in the middle of a run (a tmpfs, filled while the run is held): the
# first snapshot that cannot be written stops it, nothing is left; migrate weighs its
# outputs (image, illumination, resume state) against the disk before the first shot
# fill_while_running LOG PATTERN COMMAND...: runs COMMAND (output to LOG), holds it once LOG
# has a line matching PATTERN, fills $disk, lets it go on; its exit status in $status
fill_while_running() {
  local log="$1" pattern="$2" run
  shift 2
  "$@" >"$log" 2>&1 &
  run=$!
  if wait_for_line "$log" "$pattern" 60; then
    kill -STOP "$run"
    dd if=/dev/zero of="$disk/filler" bs=64k 2>/dev/null
    kill -CONT "$run"
  fi
  wait "$run"
  status=$?
}

# check_full_disk LOG PASS_TEXT GREP_PATTERN...: exit 1, LOG matching every pattern (one
# starting with ! must not match), then nothing of the run left and the disk emptied
check_full_disk() {
  local log="$1" text="$2" pattern ok=1
  shift 2
  [ "$status" -eq 1 ] || ok=0
  for pattern in "$@"; do
    if [ "${pattern:0:1}" = "!" ]; then
      grep -q -- "${pattern:1}" "$log" && ok=0
    else
      grep -q -- "$pattern" "$log" || ok=0
    fi
  done
  if [ "$ok" -eq 1 ]; then
    rob_pass "$text"
  else
    rob_fail "$text: exit $status, log:"
    sed 's/^/    /' "$log" | cut -c1-200
  fi
  expect_no_output "$disk" tiny
  rm -f "$disk/filler"
}

if small_disk 8m disk; then
  # held once its first progress line is out: its file is created and its time loop runs
  # (holding it as soon as the file appears could catch HDF5 writing the file's header)
  held=(--set grid.nx=48 --set grid.ny=48 --set grid.nz=48 --set time.steps=10000
    --set snapshots.every=1000 --set receivers.layout=none --set source.x=240 --set source.y=240
    --set source.z=240 --set output.dir="$disk")
  fill_while_running "$work/full.log" "step [0-9]+/10000" "$rtm3d" model "$work/tiny.ini" "${held[@]}"
  check_full_disk "$work/full.log" "a disk filled mid-run stopped the run at the next snapshot" \
    "writing /snapshots/p\[[0-8]\]: .*the disk is full" "!step 10000/10000"
  # many shots: each shot's gathers are written by the I/O thread while the next shot runs;
  # the disk filled within the second shot fails that thread's write, and the run with it
  shots3=(--set shots.layout=grid --set shots.x_count=3 --set shots.y_count=1 --set shots.z=60
    --set grid.nx=40 --set grid.ny=40 --set grid.nz=40 --set time.steps=600
    --set receivers.y_count=20 --set receivers.y_first=0 --set receivers.y_step=10
    --set receivers.x_step=10 --set output.dir="$disk")
  fill_while_running "$work/full_shots.log" "shot 2/3: step" "$rtm3d" model "$work/tiny.ini" "${shots3[@]}"
  check_full_disk "$work/full_shots.log" \
    "a disk filled while the gathers are written behind the shots failed the run" \
    "writing /shots/[0-2]/[a-z/]*: .*the disk is full" "!HDF5-DIAG"
  expect 0 "" "$rtm3d" model "$work/tiny.ini" --quiet "${shots[@]}" --set output.dir="$disk" \
    --set output.name=observed --set grid.nx=72 --set grid.ny=72 --set grid.nz=72
  # 72^3: 10 volumes of 1.49 MB (the image, the illumination, a resume state of four twice)
  # and 1 MB, against 8 MB less the gathers
  expect 1 "the outputs need about 0\.0159 GB in .*, where 0\.00[0-9]+ GB are free" \
    "$rtm3d" migrate "$work/tiny.ini" --quiet "${shots[@]}" --set rtm.observed="$disk/observed.h5" \
    --set output.dir="$disk" --set grid.nx=72 --set grid.ny=72 --set grid.nz=72
  expect_no_output "$disk" tiny
else
  echo "(no tmpfs can be mounted here: the mid-run disk cases skipped)"
fi

# ---- a file past the size limit (ulimit -f): rtm3d ignores SIGXFSZ, so the write fails
# (EFBIG) and the run says so and removes what it made, as on a full disk (killed by the
# signal it left NAME.h5.partial and its lock); a migration's state, saved behind the next
# shot, fails there, and the run's last line says that it stopped (not the next shot's line)
size_limited() {
  (ulimit -f "$1" && shift && exec "$@")
}
expect 1 "out/fsize\.h5\.partial: .*File too large \(errno 27\)" \
  size_limited 4 "$rtm3d" model "$work/tiny.ini" --quiet --set output.name=fsize
expect_no_output "$out" fsize
expect 0 "" "$rtm3d" model "$work/tiny.ini" --quiet "${survey[@]}" --set output.name=fsize_observed
expect 1 "" size_limited 100 "$rtm3d" migrate "$work/tiny.ini" "${survey[@]}" --set output.name=fsize \
  --set rtm.observed="$out/fsize_observed.h5" --set rtm.resume_every=0
tail -n 1 <<<"$rob_output" | grep -q "error: migrate: stopped: the sums after shot 1 could not be saved to .*out/fsize\.resume\.h5 (the error above)" &&
  rob_pass "the failed save is the run's last line" ||
  rob_fail "the run's last line after a failed save: $(tail -n 1 <<<"$rob_output")"
expect_no_output "$out" fsize
[ ! -e "$out/fsize.resume.h5" ] && rob_pass "no state" || rob_fail "a state was left"

# ---- started with the standard descriptors closed (`>&- 2>&-`, `2>&-`): an output opened
# as descriptor 2 took the progress lines into its data (a probe: 100 shots' gathers
# damaged, exit 0), or the lock took them as its holder's name. The same gathers as a run
# with them open, to the bit, and stdout's loss still said.
many=(--set shots.layout=grid --set shots.x_count=10 --set shots.y_count=10 --set shots.z=60)
"$rtm3d" model "$work/tiny.ini" --quiet "${many[@]}" --set output.name=open_fds
for closed in both stderr; do
  if [ "$closed" = both ]; then
    "$rtm3d" model "$work/tiny.ini" "${many[@]}" --set output.name="closed_$closed" >&- 2>&-
  else
    "$rtm3d" model "$work/tiny.ini" "${many[@]}" --set output.name="closed_$closed" 2>&-
  fi
  status=$?
  expect 0 "100 of 100 comparisons pass: PASS" \
    "$rtm3d" validate "$out/closed_$closed.h5" "$out/open_fds.h5" --rtol 0
  [ "$status" -eq 0 ] && rob_pass "closed $closed: exit 0" || rob_fail "closed $closed: exit $status"
done
expect 1 "cannot write to the standard output" sh -c "\"\$0\" info >&-" "$rtm3d"

rob_finish
