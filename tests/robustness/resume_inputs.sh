#!/usr/bin/env bash
# migrate's resume state holds sums made from the input files as they were: a state saved
# before rtm.observed was regenerated at the same path is refused, naming the file, rather
# than resumed into an image that mixes the old gathers with the new. Removing the state
# starts over; a state whose inputs are untouched resumes as before, and so does one saved
# at another rtm.resume_every.
source "$(dirname "$0")/lib.sh" "$@"
tiny_deck "$work/tiny.ini"
out="$work/out"
shots=("${survey[@]}")
model=(model "$work/tiny.ini" --quiet "${shots[@]}" --set output.name=observed)
migrate=(migrate "$work/tiny.ini" --force "${shots[@]}" --set rtm.observed="$out/observed.h5")

# ---- the observed gathers regenerated (another amplitude) after one shot of three
expect 0 "" "$rtm3d" "${model[@]}"
expect 0 "stopped after shot 1 of 3" "$rtm3d" "${migrate[@]}" --max-shots=1
[ -e "$out/tiny.resume.h5" ] && rob_pass "one shot of three left its resume state" ||
  rob_fail "no resume state after --max-shots=1: $(ls "$out" | tr '\n' ' ')"
expect 0 "" "$rtm3d" "${model[@]}" --force --set source.amplitude=3
expect 2 "out/observed\.h5 changed since .*out/tiny\.resume\.h5 was saved \(its [a-z, ]*inode differ\): the saved sums came from the file as it was, .* remove the state to start over$" \
  "$rtm3d" "${migrate[@]}"
grep -q "resuming" <<<"$rob_output" && rob_fail "the refused run still said it resumed" ||
  rob_pass "the changed input was not resumed"
[ ! -e "$out/tiny.h5" ] && [ -e "$out/tiny.resume.h5" ] &&
  rob_pass "the refusal wrote no image and kept the state" ||
  rob_fail "after the refusal: $(ls "$out" | tr '\n' ' ')"

# ---- the gathers regenerated while a run reads them (probe Q, Q2: one rank reopens the file
# for each shot, and its later shots were migrated from the new gathers, exit 0): the run is
# held in its first state save, after shot 1, while shot 3's gather waits behind that save
# on the I/O thread; the gathers are made again meanwhile, and the read of shot 3 sees it
if [ -e "$PWD/librtm3d_stall_write_preload.so" ]; then
  use_preload stall_write
  rm -f "$out/tiny.resume.h5"
  held_at_open ".resume.h5" '"$rtm3d" "${model[@]}" --force --set source.amplitude=2' \
    "$rtm3d" "${migrate[@]}" --set rtm.resume_every=0
  [ "$held_status" = 1 ] && grep -q "rtm\.observed = .*out/observed\.h5 changed while the migration read it" <<<"$rob_output" &&
    rob_pass "gathers regenerated during the run: stopped, naming the file" ||
    rob_fail "gathers regenerated during the run: exit $held_status: $rob_output"
  [ ! -e "$out/tiny.h5" ] && rob_pass "no image of two data sets" ||
    rob_fail "an image was written from two data sets"
  # the state saved after shot 1 holds the old gathers' sums: not resumed with the new
  expect 2 "out/observed\.h5 changed since .*out/tiny\.resume\.h5 was saved" "$rtm3d" "${migrate[@]}"
  expect 0 "" "$rtm3d" "${model[@]}" --force --set source.amplitude=3 # as the cases below expect
fi

# ---- the state removed, the migration starts over from the new gathers
rm -f "$out/tiny.resume.h5"
expect 0 "" "$rtm3d" "${migrate[@]}" --quiet
[ -e "$out/tiny.h5" ] && [ ! -e "$out/tiny.resume.h5" ] &&
  rob_pass "started over: the image, no state" || rob_fail "after starting over: $(ls "$out" | tr '\n' ' ')"

# ---- the gathers rewritten in place, their size, inode and mtime put back (probe D6: the
# image mixed two records, exit 0): the change time gives it away
# (the same command line as the gathers' own but for a letter of the name and the amplitude,
# so that the file has their size; the image of the run before kept aside meanwhile)
mv "$out/tiny.h5" "$work/kept.h5"
expect 0 "" "$rtm3d" model "$work/tiny.ini" --quiet "${shots[@]}" --set output.name=observex \
  --force --set source.amplitude=5
expect 0 "stopped after shot 1 of 3" "$rtm3d" "${migrate[@]}" --max-shots=1
[ "$(stat -c %s "$out/observed.h5")" = "$(stat -c %s "$out/observex.h5")" ] ||
  rob_fail "the two gathers differ in size: the case tests nothing"
touch -r "$out/observed.h5" "$work/stamp"
cat "$out/observex.h5" > "$out/observed.h5"
touch -r "$work/stamp" "$out/observed.h5"
expect 2 "out/observed\.h5 changed since .*out/tiny\.resume\.h5 was saved" "$rtm3d" "${migrate[@]}"
[ ! -e "$out/tiny.h5" ] && rob_pass "the rewrite in place was not resumed" ||
  rob_fail "an image was written from a rewritten input"
# and the state's record of its inputs forged to match the rewritten file (taken from a
# state saved after the rewrite): the sums' digest covers the record
if have_h5edit; then
  expect 0 "stopped after shot 1 of 3" "$rtm3d" "${migrate[@]}" --max-shots=1 \
    --set output.name=forged
  h5edit "$out/forged.resume.h5" gettext inputs > "$work/inputs.txt" || rob_fail "h5edit gettext"
  h5edit "$out/tiny.resume.h5" settext inputs "$work/inputs.txt" || rob_fail "h5edit settext"
  expect 2 "out/tiny\.resume\.h5: its sums or shot count do not match the digest saved with them" \
    "$rtm3d" "${migrate[@]}"
  [ ! -e "$out/tiny.h5" ] && rob_pass "a forged record of the inputs was not resumed" ||
    rob_fail "an image was written from a forged record"
  rm -f "$out"/forged.*
fi
rm -f "$out/tiny.resume.h5" "$out"/observex.*
expect 0 "" "$rtm3d" "${model[@]}" --force --set source.amplitude=3
mv "$work/kept.h5" "$out/tiny.h5"

# ---- inputs untouched: the state resumes, and ends where an uninterrupted run does
mv "$out/tiny.h5" "$work/fresh.h5"
expect 0 "stopped after shot 1 of 3" "$rtm3d" "${migrate[@]}" --max-shots=1
expect 0 "resuming after shot 1 of 3" "$rtm3d" "${migrate[@]}"
[ -e "$out/tiny.h5" ] && [ ! -e "$out/tiny.resume.h5" ] &&
  rob_pass "the resumed migration completed and dropped its state" ||
  rob_fail "after the resumed migration: $(ls "$out" | tr '\n' ' ')"
# its report's rate is of the two shots it migrated, in its own seconds (probe T, T3: all
# three shots' cells over two shots' seconds): 24^3 cells, 150 steps, two propagations a shot
shots_in_rate=$(grep -o '"\(mcells_per_s\|forward\|backward\)": [0-9.e+-]*' "$out/tiny.json" |
  awk -F': ' '/mcells/ {r = $2} /forward/ {f = $2} /backward/ {b = $2}
    END { printf "%.2f", r * (f + b) / (2 * 24 * 24 * 24 * 150 * 1e-6) }')
[ "$shots_in_rate" = 2.00 ] && rob_pass "the resumed run's MCells/s counts its own shots" ||
  rob_fail "the resumed run's MCells/s counts $shots_in_rate shots, not 2"
# bit for bit, as migrate promises: no tolerance (the interface gives an image that is not
# all zero, so that the comparison says something)
expect 0 "" "$rtm3d" validate "$out/tiny.h5" "$work/fresh.h5" --rtol 0 --atol 0 --datasets /image
grep -q "all zero" <<<"$rob_output" && rob_fail "the reference image is all zero: the deck images nothing" ||
  rob_pass "the images compared are not all zero"

# ---- an amplitude whose squares would overflow the illumination: refused before any shot
# (the probe's run saved a state of inf and failed at its end, blaming the gathers)
expect 2 "source\.amplitude = 1e\+21: migrate sums the source wavefield squared" \
  "$rtm3d" "${migrate[@]}" --set source.amplitude=1e21
[ ! -e "$out/tiny.resume.h5" ] && rob_pass "no state saved" || rob_fail "a state was saved"

# ---- a state edited by hand or damaged (a finite value changed, the shot count rewritten) is
# refused against the digest saved with its sums, rather than resumed into a wrong image
if have_h5edit; then
  for edit in "setattr / completed_shots 2" "set /image 0.5 3 4 5" "set /illumination 1e-3 2 2 2" \
    "unattr sums_digest"; do
    rm -f "$out/tiny.h5" "$out/tiny.resume.h5"
    expect 0 "stopped after shot 1 of 3" "$rtm3d" "${migrate[@]}" --max-shots=1
    read -r -a words <<<"$edit"
    h5edit "$out/tiny.resume.h5" "${words[@]}" || rob_fail "h5edit $edit"
    expect 2 "out/tiny\.resume\.h5: its sums or shot count do not match the digest saved with them" \
      "$rtm3d" "${migrate[@]}"
    [ ! -e "$out/tiny.h5" ] && [ -e "$out/tiny.resume.h5" ] &&
      rob_pass "$edit: refused, no image, the state kept" ||
      rob_fail "$edit: after the refusal: $(ls "$out" | tr '\n' ' ')"
  done
  # a digest that is not a digest is a damaged one (probe M, M4: it was called an earlier
  # rtm3d's state of float sums); a whole digest of those sums is said to be one
  for digest in "garbage|do not match the digest saved with them" \
    "completed_shots=1 image=1,2 illumination=3,4 inputs=00000000000000ff|holds the sums of an earlier rtm3d"; do
    rm -f "$out/tiny.h5" "$out/tiny.resume.h5"
    expect 0 "stopped after shot 1 of 3" "$rtm3d" "${migrate[@]}" --max-shots=1
    printf '%s' "${digest%%|*}" > "$work/digest.txt"
    h5edit "$out/tiny.resume.h5" settext sums_digest "$work/digest.txt" || rob_fail "h5edit settext"
    expect 2 "${digest#*|}" "$rtm3d" "${migrate[@]}"
  done
  # the record of the inputs removed: refused, not resumed unchecked
  rm -f "$out/tiny.h5" "$out/tiny.resume.h5"
  expect 0 "stopped after shot 1 of 3" "$rtm3d" "${migrate[@]}" --max-shots=1
  h5edit "$out/tiny.resume.h5" unattr inputs || rob_fail "h5edit unattr inputs"
  expect 2 "has no record of its input files" "$rtm3d" "${migrate[@]}"
  # a count that is not whole, a format this build does not read: said as such
  for edit in "completed_shots 1.5|is not a whole number" \
    "format_version 99|is not a state this rtm3d can resume from"; do
    rm -f "$out/tiny.h5" "$out/tiny.resume.h5"
    expect 0 "stopped after shot 1 of 3" "$rtm3d" "${migrate[@]}" --max-shots=1
    read -r name value <<<"${edit%%|*}"
    h5edit "$out/tiny.resume.h5" setattr / "$name" "$value" || rob_fail "h5edit $name"
    expect 2 "${edit#*|}" "$rtm3d" "${migrate[@]}"
  done
  rm -f "$out/tiny.resume.h5"
  # with gathers (rtm.offset_lags) their sums are in the digest too: a value changed or the
  # dataset removed is refused; untouched, the state resumes to the uninterrupted run's
  # gathers bit for bit
  gathers=(--set rtm.offset_lags=3 --set rtm.cip_x_step=8 --set rtm.cip_y_step=8)
  rm -f "$out/tiny.h5"
  expect 0 "" "$rtm3d" "${migrate[@]}" "${gathers[@]}" --set output.name=gathers_fresh
  for edit in "set /gather_sums 0.5 0 3 3 12|do not match the digest saved with them" \
    "set /gather_sums_lo 1e-9 1 2 4 10|do not match the digest saved with them" \
    "set /gather_sums nan 0 3 3 12|dataset /gather_sums holds nan at \\[0\\]\\[3\\]\\[3\\]\\[12\\]" \
    "unlink /gather_sums|/gather_sums" ""; do
    rm -f "$out/tiny.h5" "$out/tiny.resume.h5"
    expect 0 "stopped after shot 1 of 3" "$rtm3d" "${migrate[@]}" "${gathers[@]}" --max-shots=1
    if [ -z "$edit" ]; then
      expect 0 "resuming after shot 1 of 3" "$rtm3d" "${migrate[@]}" "${gathers[@]}"
      expect 0 "" "$rtm3d" validate "$out/tiny.h5" "$out/gathers_fresh.h5" --rtol 0 --atol 0 \
        --datasets /image,/gathers/offset,/gathers/angle
      continue
    fi
    read -r -a words <<<"${edit%%|*}"
    h5edit "$out/tiny.resume.h5" "${words[@]}" || rob_fail "h5edit ${edit%%|*}"
    expect 2 "${edit#*|}" "$rtm3d" "${migrate[@]}" "${gathers[@]}"
    [ ! -e "$out/tiny.h5" ] && [ -e "$out/tiny.resume.h5" ] &&
      rob_pass "${edit%%|*}: refused, no image, the state kept" ||
      rob_fail "${edit%%|*}: after the refusal: $(ls "$out" | tr '\n' ' ')"
  done
  # the angle gathers are made from the summed gathers at the end: rtm.angles and
  # rtm.angle_max may change across a resume (the review's probe: refused as another config)
  rm -f "$out/tiny.h5" "$out/tiny.resume.h5"
  expect 0 "stopped after shot 1 of 3" "$rtm3d" "${migrate[@]}" "${gathers[@]}" --max-shots=1
  expect 0 "resuming after shot 1 of 3" "$rtm3d" "${migrate[@]}" "${gathers[@]}" \
    --set rtm.angles=21 --set rtm.angle_max=45
  expect 0 "" "$rtm3d" validate "$out/tiny.h5" "$out/gathers_fresh.h5" --rtol 0 --atol 0 \
    --datasets /image,/gathers/offset
  rm -f "$out/tiny.resume.h5" "$out"/gathers_fresh*
fi

# ---- a run stopped without --force resumes with it (--force sets output.overwrite, which
# changes nothing the sums are made of; the probe's resume was refused as another config)
rm -f "$out"/tiny.* "$out"/tiny_*
expect 0 "stopped after shot 1 of 3" "$rtm3d" migrate "$work/tiny.ini" "${shots[@]}" \
  --set rtm.observed="$out/observed.h5" --max-shots=1
expect 0 "resuming after shot 1 of 3" "$rtm3d" "${migrate[@]}"

# ---- a cadence (rtm.resume_every): a run of 2 shots of 3 saves its state after each at 0 s,
# only when --max-shots stops it at 10^6 s (after shot 1 the sums are only taken to the host
# and added there, for a signal to save; the saves write the sums after their shot); either state
# resumes, under another cadence, to the uninterrupted image bit for bit
for case in "0 2 2" "1e6 1 2"; do
  read -r every saves holds <<<"$case"
  rm -f "$out/tiny.h5"
  expect 0 "stopped after shot 2 of 3 \(--max-shots; $saves state saves?, [^;]*; the shots. sums taken to the host $holds time" \
    "$rtm3d" "${migrate[@]}" --max-shots=2 --set rtm.resume_every="$every"
  expect 0 "resuming after shot 2 of 3" "$rtm3d" "${migrate[@]}"
  expect 0 "" "$rtm3d" validate "$out/tiny.h5" "$work/fresh.h5" --rtol 0 --atol 0 --datasets /image
done
# ---- a state whose metadata fails its checksum (a bit flipped on the disk, near its root
# attributes): refused, exit 2, and said as a damaged file to remove (a probe: only HDF5's
# words about the attribute being read were said); the state stays
rm -f "$out/tiny.resume.h5" "$out/tiny.h5"
expect 0 "" "$rtm3d" "${migrate[@]}" --quiet --max-shots=1
python3 -c 'import sys
path = sys.argv[1]
data = bytearray(open(path, "rb").read())
at = data.find(b"format_version")
assert at > 4, "no format_version in the state"
data[at - 4] ^= 0x10
open(path, "wb").write(data)' "$out/tiny.resume.h5"
expect 2 "tiny\.resume\.h5 could not be read whole \(a damaged file\?\): remove it to start over" \
  "$rtm3d" "${migrate[@]}" --quiet
[ -e "$out/tiny.resume.h5" ] && [ ! -e "$out/tiny.h5" ] && rob_pass "the damaged state kept, no image" ||
  rob_fail "after the damaged state: $(ls "$out" | tr '\n' ' ')"
rm -f "$out/tiny.resume.h5"

# ---- model.file renamed over while a run reads it (a probe: makemodel --force during a
# two-rank run's set-up gave traces of both models, exit 0): the run is held at its open of
# the file, a model of another speed renamed over it, and the run refused, exit 1, naming
# model.file, with no output; on two ranks too (each rank reads its slab by an open of its
# own), when the build has MPI
if [ -e "$PWD/librtm3d_stall_write_preload.so" ]; then
  use_preload stall_write
  printf 'background vp=2000\n' >"$work/a.model"
  printf 'background vp=2100\n' >"$work/b.model"
  for name in a b; do
    "$rtm3d" makemodel "$work/tiny.ini" --quiet --set model.description="$work/$name.model" \
      --set model.file="$work/v$name.h5" || rob_fail "makemodel of $name.model exited $?"
  done
  swap='cp "$work/vb.h5" "$work/vm.h5.new" && mv "$work/vm.h5.new" "$work/vm.h5"'
  launchers=("")
  [ -n "$mpiexec" ] && launchers+=("$mpiexec --oversubscribe -np 2")
  for launcher in "${launchers[@]}"; do
    cp "$work/va.h5" "$work/vm.h5"
    # shellcheck disable=SC2086 # the launcher's words
    held_at_open "vm.h5" "$swap" $launcher "$rtm3d" model "$work/tiny.ini" --quiet \
      --set model.file="$work/vm.h5" --set output.name=swapped
    [ "$held_status" != 0 ] &&
      grep -q "model\.file = .*vm\.h5 changed while the run read it" <<<"$rob_output" &&
      rob_pass "model.file swapped while read${launcher:+ on two ranks}: refused, naming it" ||
      rob_fail "model.file swapped while read${launcher:+ on two ranks}: exit $held_status: $rob_output"
    expect_no_output "$out" swapped
  done
fi

rob_finish
