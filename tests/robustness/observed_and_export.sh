#!/usr/bin/env bash
# Observed gathers and SEG-Y export (non-finite samples refused, export written aside, SEG-Y's exit status).
#   - one NaN, or a 3e38, in /shots/1/traces/p of rtm.observed (HDF5, SEG-Y, one rank or two)
#     is refused when migrate reads the shot (shot 1's samples while shot 0 propagates: the
#     check before the first step reads every shot's headers and shot 0's samples), exit 2,
#     naming the file, shot, receiver and sample, and no image is left, nor a resume state
#     saved after shot 0 (rtm.resume_every = 0);
#   - a damaged SEG-Y file (empty, cut mid-trace) exits 2 as a damaged HDF5 file does;
#   - a sample interval that is wrong (NaN, 0, negative, one the resampling cannot reach,
#     SEG-Y headers that disagree) exits 2 naming the value(s);
#   - export --force that fails (a shot missing from the run file, a NaN in it, a full disk)
#     leaves the earlier .sgy as it was and no partial file; a device given as the target
#     is refused and stays; another run's partial file is neither replaced nor a block;
#   - export --per-shot --force removes an earlier, larger set's OUT_shot<k> files and no
#     other name; without --force such a file is refused.
# The HDF5 files are damaged with h5edit (lib.sh); without python3 those cases are skipped,
# the SEG-Y ones still run.
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh" "$@"

h5_ok=0
have_h5edit && h5_ok=1
segy_ok=0
has_feature "SEG-Y on" && segy_ok=1
[ "$h5_ok" = 1 ] || [ "$segy_ok" = 1 ] || rob_skip "neither python3 with libhdf5 nor SEG-Y"
[ "$h5_ok" = 1 ] || echo "skip: no python3 or libhdf5 for the HDF5 cases"
[ "$segy_ok" = 1 ] || echo "skip: this build has no SEG-Y"

small="$work/small"
trap 'umount "$small" 2>/dev/null; rm -rf "$work"' EXIT

# three shots on a line at 60 m depth, 60 steps: the gathers the cases damage
deck="$work/deck.ini"
tiny_deck "$deck"
survey=(--set shots.layout=grid --set shots.x_count=3 --set shots.y_count=1 --set shots.z=60
  --set time.steps=60 --set source.frequency=25 --quiet)
obs="$work/obs.h5"
"$rtm3d" model "$deck" "${survey[@]}" --set output.dir="$work" --set output.name=obs ||
  rob_fail "the model run for the observed gathers exited $?"
[ -s "$obs" ] || { rob_fail "no $obs"; rob_finish; }

# a record 3x coarser than the run (Nyquist 167 Hz against 500 Hz): resampled with a
# warning that names the file and the shot (probe D8: the trace pipeline's warning named
# neither)
loud=()
for word in "${survey[@]}"; do [ "$word" = --quiet ] || loud+=("$word"); done
"$rtm3d" model "$deck" "${survey[@]}" --set time.dt=0.001 --set output.trace_dt=0.003 \
  --set output.dir="$work" --set output.name=coarse || rob_fail "the coarse record exited $?"
expect 0 "coarse\.h5: shot 0 is sampled every 0\.003 s, 3x the modelling dt = 0\.001 s" \
  "$rtm3d" migrate "$deck" "${loud[@]}" --set rtm.mute=false --set time.dt=0.001 \
  --set rtm.observed="$work/coarse.h5" --set output.dir="$work/out" --set output.name=coarse
# model's output.segy in a migration: said to be ignored (a probe: no .sgy, not a word)
expect 0 "output\.segy = true is ignored: it writes a model run's gathers" "$rtm3d" migrate \
  "$deck" "${loud[@]}" --set rtm.mute=false --set time.dt=0.001 --set output.segy=true \
  --set rtm.observed="$work/coarse.h5" --set output.dir="$work/out" --set output.name=segy_flag
[ ! -e "$work/out/segy_flag.sgy" ] && rob_pass "no .sgy from migrate" || rob_fail "migrate wrote a .sgy"

# an image of zeros (a mute that removes every sample) under --quiet: exit 0, no line on
# the terminal, but the report says it (probe C8: nothing said anywhere)
expect 0 "" "$rtm3d" migrate "$deck" "${survey[@]}" --set rtm.mute_velocity=1e-300 \
  --set rtm.observed="$obs" --set output.dir="$work/out" --set output.name=zeros
grep -q '"warnings": \[.*the image is zero everywhere' "$work/out/zeros.json" &&
  grep -q '"warnings_count": [1-9]' "$work/out/zeros.json" &&
  rob_pass "the report holds the all-zero image's warning" ||
  rob_fail "no warning in $work/out/zeros.json: $(grep warnings "$work/out/zeros.json")"

# migrate DATA NAME: rtm3d migrate of the survey from DATA into $work/out/NAME (a name a case,
# so that no case meets another's resume state). No mute: on a record this short it zeroes
# every sample, a 3e38 with them, where a record of real length keeps what it poisons.
imaging=(--set rtm.mute=false)
# shellcheck disable=SC2317 # called through expect
migrate() {
  "$rtm3d" migrate "$deck" "${survey[@]}" "${imaging[@]}" --set rtm.observed="$1" \
    --set output.name="$2"
}

# no_image NAME: nothing of migrate's run NAME in $work/out, its resume state included (a run
# refused before its first shot has none). The .lock is expect_no_output's: under mpirun a
# refusal ends the job with MPI_Abort, and a killed run's lock stays (not held: taken over).
no_image() {
  local left
  left="$(cd "$work/out" 2>/dev/null &&
    ls -1 -- "$1.h5" "$1.xmf" "$1.json" "$1.resume.h5" "$1"_*.png *.partial 2>/dev/null)"
  if [ -n "$left" ]; then rob_fail "$work/out holds $(tr '\n' ' ' <<<"$left")"; else rob_pass "no image of $1 left"; fi
}

# refused DATA NAME PATTERN: migrate from DATA into NAME exits 2 saying PATTERN, and leaves
# nothing; refused_on_two_ranks: the same under mpiexec -np 2 (where the build has MPI)
refused() {
  expect 2 "$3" migrate "$1" "$2"
  expect_no_output "$work/out" "$2"
  no_image "$2"
}
refused_on_two_ranks() {
  [ -n "$mpiexec" ] || return 0
  expect 2 "$3" "$mpiexec" --oversubscribe -np 2 "$rtm3d" migrate "$deck" "${survey[@]}" \
    "${imaging[@]}" --set rtm.observed="$1" --set output.name="$2"
  no_image "$2"
}

# no_partial DIR: no *.partial left in DIR
no_partial() {
  local left
  left="$(cd "$1" && ls -1 -- *.partial *.partial.* 2>/dev/null)"
  if [ -n "$left" ]; then rob_fail "$1 holds $(tr '\n' ' ' <<<"$left")"; else rob_pass "no partial file in $1"; fi
}

# ---- item 1: observed samples that are not finite, or absurd ----
# receiver 3, sample 45 of shot 1: a run that took either would make a non-finite image.
# VALUE:PRINTED (as %g writes it, a regex)
bad_values=("nan:nan" "3e38:3e\+38")
if [ "$h5_ok" = 1 ]; then
  for pair in "${bad_values[@]}"; do
    value="${pair%%:*}" printed="${pair#*:}"
    cp "$obs" "$work/obs_$value.h5"
    h5edit "$work/obs_$value.h5" set /shots/1/traces/p "$value" 3 45
    refused "$work/obs_$value.h5" "h5_$value" \
      "obs_$value\.h5: shot 1 \(/shots/1/traces/p\), receiver 3, sample 45 \(from 0\) is $printed"
  done
  # a state saved after shot 0 (rtm.resume_every = 0), then shot 1's NaN refused as read: the
  # state, which no repaired file would resume, goes with the rest
  expect 2 "obs_nan\.h5: shot 1 \(/shots/1/traces/p\), receiver 3, sample 45 \(from 0\) is nan" \
    "$rtm3d" migrate "$deck" "${survey[@]}" "${imaging[@]}" --set rtm.observed="$work/obs_nan.h5" \
    --set output.name=h5_nan_saved --set rtm.resume_every=0
  expect_no_output "$work/out" h5_nan_saved
  no_image h5_nan_saved
  refused_on_two_ranks "$work/obs_nan.h5" mpi_h5 \
    "obs_nan\.h5: shot 1 \(/shots/1/traces/p\), receiver 3, sample 45 \(from 0\) is nan"
  # a position that is not a number compares false with any tolerance: refused all the same
  cp "$obs" "$work/obs_nan_source.h5"
  h5edit "$work/obs_nan_source.h5" set /shots/0/source nan 1
  refused "$work/obs_nan_source.h5" h5_nan_source "shot 0 was recorded from \(.*, nan, .*\) m"
  cp "$obs" "$work/obs_nan_receiver.h5"
  h5edit "$work/obs_nan_receiver.h5" set /shots/1/receivers nan 2 0
  refused "$work/obs_nan_receiver.h5" h5_nan_receiver "receiver 2 of shot 1 lies at x = nan m"
  # export names the run file and the shot, not the SEG-Y it would write (probe X, X6)
  if [ "$segy_ok" = 1 ]; then
    expect 2 "obs_nan_source\.h5: shot 0: its source is at \(.*nan.*\) m: a position must be finite" \
      "$rtm3d" export "$work/obs_nan_source.h5" --segy "$work/nan_source.sgy"
    expect 2 "obs_nan_receiver\.h5: shot 1: receiver 2 is at \(nan, .*\) m" \
      "$rtm3d" export "$work/obs_nan_receiver.h5" --segy "$work/nan_receiver.sgy"
  fi
  # a sample interval that is there but wrong is named with its value (it was "has no
  # attribute dt > 0"); one a hair off the modelling dt (0.002 s) cannot be resampled: an
  # input defect, exit 2, naming the shot and the value (it was exit 1 from the resampler)
  for dt in nan 0 -0.002; do
    cp "$obs" "$work/obs_dt_$dt.h5"
    h5edit "$work/obs_dt_$dt.h5" setattr /shots/0/traces/p dt "$dt"
    refused "$work/obs_dt_$dt.h5" "h5_dt_$dt" \
      "obs_dt_$dt\.h5: dataset /shots/0/traces/p has attribute dt = $dt: its sample interval must be a finite number of seconds > 0"
  done
  cp "$obs" "$work/obs_dt_off.h5"
  h5edit "$work/obs_dt_off.h5" setattr /shots/1/traces/p dt 0.00200001
  refused "$work/obs_dt_off.h5" h5_dt_off \
    "rtm\.observed = .*obs_dt_off\.h5: shot 1's traces are sampled at dt = 0\.00200001 s .* cannot be resampled to the modelling dt = 0\.002 s"
fi

# the same in SEG-Y (IEEE big-endian samples at byte 3600 + trace x (240 + 4 ns) + 240 + 4 s),
# and damaged SEG-Y files: input errors, exit 2, as the same defects in HDF5
if [ "$segy_ok" = 1 ]; then
  "$rtm3d" export "$obs" --segy "$work/obs.sgy" --quiet || rob_fail "export of $obs exited $?"
  # samples a trace (bytes 3221-3222) and traces a shot (3213-3214) from the binary header
  read -r s_hi s_lo < <(od -An -tu1 -j3220 -N2 "$work/obs.sgy")
  read -r t_hi t_lo < <(od -An -tu1 -j3212 -N2 "$work/obs.sgy")
  samples=$((s_hi * 256 + s_lo)) per_shot=$((t_hi * 256 + t_lo))
  trace=$((per_shot + 3)) # shot 1, receiver 3
  offset=$((3600 + trace * (240 + 4 * samples) + 240 + 4 * 45))
  for pair in 'nan:nan:\x7f\xc0\x00\x00' '3e38:3e\+38:\x7f\x61\xb1\xe6'; do
    IFS=: read -r value printed bytes <<<"$pair"
    cp "$work/obs.sgy" "$work/obs_$value.sgy"
    printf '%b' "$bytes" | dd of="$work/obs_$value.sgy" bs=1 seek="$offset" conv=notrunc status=none
    refused "$work/obs_$value.sgy" "sgy_$value" \
      "obs_$value\.sgy: shot 1 \(field record 2\), receiver 3, sample 45 \(from 0; trace $trace of the file\) is $printed"
  done
  refused_on_two_ranks "$work/obs_nan.sgy" mpi_sgy \
    "obs_nan\.sgy: shot 1 \(field record 2\), receiver 3, sample 45 \(from 0; trace $trace of the file\) is nan"
  : >"$work/empty.sgy"
  refused "$work/empty.sgy" empty "empty\.sgy: binary header: read failed"
  # an HDF5 file named .sgy (a probe: read as SEG-Y, "sample format 0")
  cp "$obs" "$work/h5.sgy"
  refused "$work/h5.sgy" h5_sgy "h5\.sgy is an HDF5 file, not SEG-Y, though its name ends in \.sgy"
  # a little-endian file (its format code's two bytes swapped, bytes 3225-3226: 5 reads as
  # 1280): said as such, not as an unknown sample format
  cp "$work/obs.sgy" "$work/le.sgy"
  printf '\x05\x00' | dd of="$work/le.sgy" bs=1 seek=3224 conv=notrunc status=none
  refused "$work/le.sgy" le "le\.sgy: sample format 1280 .* is 5 with its bytes swapped: the file is little-endian"
  # SEG-Y under a name without .sgy is read as HDF5: the refusal says what the file looks
  # like and the names SEG-Y is read under (a probe: "not an HDF5 file" alone)
  cp "$work/obs.sgy" "$work/obs_noext"
  refused "$work/obs_noext" noext "obs_noext looks like a SEG-Y file \(its text and binary headers\), not HDF5: rtm3d reads SEG-Y gathers under a name ending in \.sgy or \.segy"
  refused "$work/absent.sgy" absent "absent\.sgy: cannot open the SEG-Y file: No such file or directory"
  # a name files are written aside under is a run's, never export's (makemodel refused it
  # already; the two now share one rule)
  expect 2 "x\.partial\.ab\.sgy is a name of an rtm3d run" \
    "$rtm3d" export "$obs" --segy "$work/x.partial.ab.sgy"
  # an option given twice is refused, not the last taken
  expect 2 "export: --segy is given twice" "$rtm3d" export "$obs" --segy "$work/t1.sgy" --segy "$work/t2.sgy"
  [ ! -e "$work/t1.sgy" ] && [ ! -e "$work/t2.sgy" ] && rob_pass "nothing exported" ||
    rob_fail "export with --segy twice wrote a file"
  head -c $(($(stat -c %s "$work/obs.sgy") - 100)) "$work/obs.sgy" >"$work/cut.sgy"
  refused "$work/cut.sgy" cut "cut\.sgy: counting traces: the file's size is not a whole number of traces"
  # a binary header interval (bytes 3217-3218) of 2800 us beside the traces' 2000 us: the
  # two values named (it was "no sample interval")
  cp "$work/obs.sgy" "$work/two_dt.sgy"
  printf '\x0a\xf0' | dd of="$work/two_dt.sgy" bs=1 seek=3216 conv=notrunc status=none
  refused "$work/two_dt.sgy" two_dt \
    "two_dt\.sgy: the sample intervals disagree: 2800 us in the binary header \(byte 3217\), 2000 us in trace 0's header \(byte 117\)"
  # a field that is no field: a usage error (exit 2), before any file (probe D8: exit 1)
  expect 2 "export: --field \.\./\.\./x: a run records p, and q for vti/tti" \
    "$rtm3d" export "$obs" --segy "$work/field.sgy" --field ../../x
  [ ! -e "$work/field.sgy" ] && rob_pass "no file for a bad field" || rob_fail "a file for a bad field"
  # a later trace whose own header (bytes 115 and 117) says another count or interval than
  # the file's: named, not read as the file's (probe D8: only trace 0 was checked)
  header=$((3600 + trace * (240 + 4 * samples)))
  cp "$work/obs.sgy" "$work/trace_ns.sgy"
  printf '\x00\x64' | dd of="$work/trace_ns.sgy" bs=1 seek=$((header + 114)) conv=notrunc status=none
  refused "$work/trace_ns.sgy" trace_ns "trace_ns\.sgy: trace $trace holds 100 samples \(byte 115\)"
  cp "$work/obs.sgy" "$work/trace_dt.sgy"
  printf '\x02\xbc' | dd of="$work/trace_dt.sgy" bs=1 seek=$((header + 116)) conv=notrunc status=none
  refused "$work/trace_dt.sgy" trace_dt "trace_dt\.sgy: trace $trace's sample interval is 700 us \(byte 117\)"
  # a trace whose first sample is not at the shot (lag times A and B, bytes 105 and 107; the
  # delay recording time, 109): refused, not migrated as if it were (probe R, R5: a 14 ms
  # delay read as none gave an image 101% off, exit 0)
  # a trace marked dead (trace identification code 2, bytes 29-30) records nothing: read as
  # silent, as the same trace with zero samples (probe S, S3: migrated as a live trace, exit 0)
  cp "$work/obs.sgy" "$work/dead.sgy"
  printf '\000\002' | dd of="$work/dead.sgy" bs=1 seek=$((header + 28)) conv=notrunc status=none
  cp "$work/obs.sgy" "$work/zeroed.sgy"
  head -c $((4 * samples)) /dev/zero |
    dd of="$work/zeroed.sgy" bs=1 seek=$((header + 240)) conv=notrunc status=none
  for name in dead zeroed obs; do
    expect 0 "" migrate "$work/$name.sgy" "img_$name"
  done
  expect 0 "1 of its [0-9]+ traces are marked dead or dummy" "$rtm3d" migrate "$deck" "${loud[@]}" \
    "${imaging[@]}" --set rtm.observed="$work/dead.sgy" --set output.name=img_dead2
  expect 0 "" "$rtm3d" validate "$work/out/img_dead.h5" "$work/out/img_zeroed.h5" --rtol 0 --atol 0 \
    --datasets /image
  expect 1 "" "$rtm3d" validate "$work/out/img_dead.h5" "$work/out/img_obs.h5" --rtol 1e-9 \
    --datasets /image
  for field in "105:lag time A:14" "107:lag time B:-3" "109:delay recording time:14"; do
    IFS=: read -r byte name value <<<"$field"
    cp "$work/obs.sgy" "$work/time_$byte.sgy"
    word=$((value & 0xffff)) # two bytes, big-endian, two's complement
    # shellcheck disable=SC2059
    printf "$(printf '\\%03o\\%03o' $((word >> 8)) $((word & 255)))" |
      dd of="$work/time_$byte.sgy" bs=1 seek=$((header + byte - 1)) conv=notrunc status=none
    refused "$work/time_$byte.sgy" "time_$byte" \
      "time_$byte\.sgy: trace $trace: $name $value ms \(byte $byte\); rtm3d reads traces whose first sample is at the shot"
  done
fi

# ---- item 3: export --force writes aside and renames ----
if [ "$segy_ok" = 1 ]; then
  good="$work/good.sgy"
  cp "$work/obs.sgy" "$good"
  sum="$(cksum <"$good")"
  if [ "$h5_ok" = 1 ]; then
    # a failure after the first shot is written: shot 1's gather is missing
    cp "$obs" "$work/no_shot1.h5"
    h5edit "$work/no_shot1.h5" unlink /shots/1/traces/p
    expect 2 "no_shot1\.h5 has no dataset /shots/1/traces/p" \
      "$rtm3d" export "$work/no_shot1.h5" --segy "$good" --force
    expect_file_unchanged "$good" "$sum"
    no_partial "$work"
    # a shot count that disagrees with the gathers stored (probe W, W3: 0 wrote a 0-byte
    # SEG-Y, 2 of 3 exported the first two, both with exit 0): refused, nothing written
    for count in 0 2; do
      cp "$obs" "$work/count_$count.h5"
      h5edit "$work/count_$count.h5" setattr / shot_count "$count"
      expect 2 "count_$count\.h5: root attribute shot_count = $count" \
        "$rtm3d" export "$work/count_$count.h5" --segy "$work/count_$count.sgy"
      [ ! -e "$work/count_$count.sgy" ] && rob_pass "no count_$count.sgy" ||
        rob_fail "export left count_$count.sgy ($(stat -c %s "$work/count_$count.sgy") bytes)"
    done
    # validate fails a count short or long of the gathers stored (probe X, X1)
    cp "$obs" "$work/count_4.h5"
    h5edit "$work/count_4.h5" setattr / shot_count 4
    expect 1 "shots .*the shots of the run cannot be counted" \
      "$rtm3d" validate "$work/count_4.h5" "$obs"
    expect 1 "shots .*the shots of the reference cannot be counted" \
      "$rtm3d" validate "$obs" "$work/count_2.h5"
    # a NaN in the run file is refused, as migrate refuses it
    expect 2 "obs_nan\.h5: shot 1 \(/shots/1/traces/p\), receiver 3, sample 45" \
      "$rtm3d" export "$work/obs_nan.h5" --segy "$good" --force
    expect_file_unchanged "$good" "$sum"
    no_partial "$work"
    # ... and a large sample within the bound is data: --force replaces the file with it,
    # the same bytes an export to a new name writes
    cp "$obs" "$work/loud.h5"
    h5edit "$work/loud.h5" set /shots/1/traces/p -1e19 3 45
    "$rtm3d" export "$work/loud.h5" --segy "$work/loud.sgy" --quiet || rob_fail "export of loud.h5 exited $?"
    cp "$good" "$work/replaced.sgy"
    expect 0 "" "$rtm3d" export "$work/loud.h5" --segy "$work/replaced.sgy" --force --quiet
    if cmp -s "$work/replaced.sgy" "$work/loud.sgy"; then
      rob_pass "export --force replaced the file with the new export"
    else
      rob_fail "export --force left $work/replaced.sgy unlike a fresh export"
    fi
    # a full disk (a 24 KiB tmpfs: the earlier file and its replacement do not fit together)
    mkdir -p "$small"
    if mount -t tmpfs -o size=24k tmpfs "$small" 2>/dev/null; then
      cp "$good" "$small/good.sgy"
      # named as asked (not its .partial), and said to be kept
      expect 1 "small/good\.sgy: .*No space left on device" \
        "$rtm3d" export "$work/loud.h5" --segy "$small/good.sgy" --force
      grep -q "export: nothing exported; the files there before stay as they were" <<<"$rob_output" &&
        rob_pass "the export said the earlier file stays" || rob_fail "no word on the earlier file"
      expect_file_unchanged "$small/good.sgy" "$sum"
      no_partial "$small"
      umount "$small"
    else
      echo "skip: no tmpfs mount here (not root?): the full-disk case"
    fi
  fi
  # a device as the target is refused, and stays (as root the old export unlinked it)
  if mknod "$work/full_device" c 1 7 2>/dev/null; then
    expect 2 "full_device is not a regular file" \
      "$rtm3d" export "$obs" --segy "$work/full_device" --force
    if [ -c "$work/full_device" ]; then rob_pass "the device is still there"; else rob_fail "the device was removed"; fi
  else
    echo "skip: mknod not permitted: the device case"
  fi
  mkdir -p "$work/folder.sgy"
  expect 2 "folder\.sgy is not a regular file" "$rtm3d" export "$obs" --segy "$work/folder.sgy" --force
  # a link at the name leads to the file export replaces, with --force, the link kept (as
  # plot's figures and bench's --csv); a link to nothing is refused, nothing made at its end
  printf 'mine\n' >"$work/linked.sgy"
  ln -s "$work/linked.sgy" "$work/link.sgy"
  expect 2 "linked\.sgy exists; --force replaces it" "$rtm3d" export "$obs" --segy "$work/link.sgy"
  expect 0 "" "$rtm3d" export "$obs" --segy "$work/link.sgy" --force --quiet
  [ -L "$work/link.sgy" ] && cmp -s "$work/linked.sgy" "$work/obs.sgy" &&
    rob_pass "export through a link: its file replaced by the export, the link kept" ||
    rob_fail "export through a link: $(ls -l "$work/link.sgy" "$work/linked.sgy" | tr '\n' ' ')"
  # two shots' names linked to one file: shot 0 would be lost under shot 1, exit 0 (a review):
  # refused, exit 2, the file as it was
  mkdir -p "$work/shared"
  printf 'mine\n' >"$work/shared/F.sgy"
  ln -s F.sgy "$work/shared/e_shot0.sgy"
  ln -s F.sgy "$work/shared/e_shot1.sgy"
  expect 2 "e_shot0\.sgy leads to .*F\.sgy, the file of shot 1's name as well" \
    "$rtm3d" export "$obs" --segy "$work/shared/e.sgy" --per-shot --force
  [ "$(cat "$work/shared/F.sgy")" = mine ] && [ ! -e "$work/shared/e_shot2.sgy" ] &&
    rob_pass "the shared file kept, nothing exported" ||
    rob_fail "after the refused export: $(ls "$work/shared" | tr '\n' ' ')"
  ln -s "$work/nowhere/x.sgy" "$work/dangling.sgy"
  expect 2 "dangling\.sgy: a symbolic link to nothing" \
    "$rtm3d" export "$obs" --segy "$work/dangling.sgy" --force
  [ ! -e "$work/nowhere" ] && rob_pass "nothing made at the dangling link's end" ||
    rob_fail "the dangling link's end was made"
  # another run's partial files (a model run's OUT.partial, a killed export's
  # OUT.partial.XXXXXX.sgy) are neither written nor removed, and block no export: each
  # export writes aside under a new name of its own (a fixed OUT.partial refused every
  # rerun after a kill, --force included: issue 32, D7)
  echo "another run's" >"$good.partial"
  echo "a killed export's" >"$good.partial.AbC123.sgy"
  partial_sum="$(cksum <"$good.partial")"
  killed_sum="$(cksum <"$good.partial.AbC123.sgy")"
  expect 0 "" "$rtm3d" export "$obs" --segy "$good" --force
  expect_file_unchanged "$good.partial" "$partial_sum"
  expect_file_unchanged "$good.partial.AbC123.sgy" "$killed_sum"
  expect_file_unchanged "$good" "$sum"
  rm -f "$good.partial" "$good.partial.AbC123.sgy"

  # --per-shot --force: an earlier, larger set's files go, and no other name
  set_dir="$work/set"
  mkdir -p "$set_dir/e_shot6.sgy"
  echo kept >"$work/kept.txt"
  for name in e_shot03.sgy e_shot3.sgy.bak e_shot3.SGY e_shot3 other_shot3.sgy e_shot3x.sgy; do
    echo old >"$set_dir/$name"
  done
  # the earlier set's shots 3 and 4: SEG-Y files rtm3d exported; e_shot7.sgy, a name of the
  # set but a user's text, is no export and stays (the third probe's case)
  mkdir -p "$work/earlier"
  expect 0 "" "$rtm3d" export "$obs" --segy "$work/earlier/e.sgy" --per-shot --quiet
  for name in e_shot3.sgy e_shot4.sgy; do cp "$work/earlier/e_shot0.sgy" "$set_dir/$name"; done
  echo mine >"$set_dir/e_shot7.sgy"
  ln -s "$work/kept.txt" "$set_dir/e_shot5.sgy"
  expect 2 "e_shot[34]\.sgy exists \(of a set of more shots\); --force replaces the set" \
    "$rtm3d" export "$obs" --segy "$set_dir/e.sgy" --per-shot
  if [ -e "$set_dir/e_shot0.sgy" ]; then
    rob_fail "the refused export wrote $set_dir/e_shot0.sgy"
  else
    rob_pass "the refused export wrote nothing"
  fi
  expect 0 "" "$rtm3d" export "$obs" --segy "$set_dir/e.sgy" --per-shot --force --quiet
  for k in 0 1 2; do
    if [ ! -f "$set_dir/e_shot$k.sgy" ] || [ ! -s "$set_dir/e_shot$k.sgy" ]; then
      rob_fail "no $set_dir/e_shot$k.sgy after export --per-shot --force"
    fi
  done
  left=""
  for name in e_shot3.sgy e_shot4.sgy; do [ -e "$set_dir/$name" ] && left="$left $name"; done
  if [ -z "$left" ]; then
    rob_pass "the earlier set's e_shot3.sgy, e_shot4.sgy are gone"
  else
    rob_fail "export --per-shot --force left the earlier set's$left"
  fi
  gone=""
  for name in e_shot03.sgy e_shot3.sgy.bak e_shot3.SGY e_shot3 other_shot3.sgy e_shot3x.sgy \
    e_shot5.sgy e_shot6.sgy e_shot7.sgy; do
    [ -e "$set_dir/$name" ] || gone="$gone $name"
  done
  if [ -z "$gone" ] && [ "$(cat "$work/kept.txt")" = kept ]; then
    rob_pass "names outside the set, the link, the folder and a non-export are kept"
  else
    rob_fail "export --per-shot --force removed$gone (or the link's file)"
  fi
  no_partial "$set_dir"
fi

rob_finish
