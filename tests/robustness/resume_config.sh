#!/usr/bin/env bash
# migrate's resume compares the config as it bears on the sums, resolved, not as spelled: a
# state resumes when only keys that cannot change the sums differ (memory.limit_gb,
# rtm.snapshot_codec_steps, the filters applied at the end: rtm.laplacian,
# rtm.illumination_eps; mpi.shot_groups), when
# auto is written where the state's run resolved it (backend.name, rtm.reconstruction), and
# when a path names the same file another way (output.dir through a link, rtm.observed as
# ./x, x or /abs/x). Each ends at the image an uninterrupted run with the same keys gives, bit
# for bit (within float rounding across shot-group counts, said in a line). A key that
# changes the sums is still refused, naming it; a state without the resolved record (an
# earlier build's) is compared as that build compared it; a zfp state of a build before the
# codec's format changed is refused; a state without rtm.end_taper (a build before it, or
# the taper off) resumes with the taper off and is refused, saying so, with it on.
source "$(dirname "$0")/lib.sh" "$@"
# backend.name = auto resolves to cpu in the case below on a machine with a GPU too
export CUDA_VISIBLE_DEVICES=""
tiny_deck "$work/tiny.ini"
out="$work/out"
shots=("${survey[@]}")
migrate=(migrate "$work/tiny.ini" --force "${shots[@]}" --set rtm.observed="$out/observed.h5")
expect 0 "" "$rtm3d" model "$work/tiny.ini" --quiet "${shots[@]}" --set output.name=observed
ln -s "$out" "$work/outlink"

# stop_then_resume NAME 'SAVED ARGS' 'RESUMED ARGS' [PATTERN]: a migration of NAME stopped
# after one shot of three under SAVED ARGS, resumed under RESUMED ARGS (exit 0, PATTERN)
stop_then_resume() {
  local name="$1" saved="$2" resumed="$3" pattern="${4:-resuming after shot 1 of 3}"
  local -a saved_args resumed_args
  read -r -a saved_args <<<"$saved"
  read -r -a resumed_args <<<"$resumed"
  rm -f "$out/$name".* "$out/$name"_*
  expect 0 "" "$rtm3d" "${migrate[@]}" --quiet --set output.name="$name" "${saved_args[@]}" --max-shots=1
  [ -e "$out/$name.resume.h5" ] || rob_fail "$name: no state after --max-shots=1"
  expect 0 "$pattern" "$rtm3d" "${migrate[@]}" --set output.name="$name" "${resumed_args[@]}"
}

# same_image NAME REFERENCE: bit for bit
same_image() {
  expect 0 "" "$rtm3d" validate "$out/$1.h5" "$out/$2.h5" --rtol 0 --atol 0 --datasets /image
}

expect 0 "" "$rtm3d" "${migrate[@]}" --quiet --set output.name=fresh

# ---- keys that cannot change the sums
stop_then_resume limit "" "--set memory.limit_gb=8"
same_image limit fresh
stop_then_resume codec_cost "--set rtm.snapshot_codec_steps=0.5" ""
same_image codec_cost fresh
stop_then_resume auto "--set backend.name=auto --set rtm.reconstruction=auto" \
  "--set backend.name=cpu --set rtm.reconstruction=snapshots"
same_image auto fresh
stop_then_resume link "" "--set output.dir=$work/outlink"
same_image link fresh
# from $work: the observed file and output.dir by relative paths
cd "$work" || exit 1
stop_then_resume spelled "--set rtm.observed=$out/observed.h5" "--set rtm.observed=./out/observed.h5"
stop_then_resume relative "--set rtm.observed=out/observed.h5 --set output.dir=out" \
  "--set rtm.observed=$out/../out/observed.h5 --set output.dir=./outlink/"
cd - >/dev/null || exit 1
same_image spelled fresh
same_image relative fresh
# the Laplacian filters the summed image at the end, never the sums: the state resumes, to
# the image of an uninterrupted run without the filter
expect 0 "" "$rtm3d" "${migrate[@]}" --quiet --set output.name=plain --set rtm.laplacian=false
stop_then_resume filter "" "--set rtm.laplacian=false"
same_image filter plain

# ---- the record's end taper at 0, as the builds before it: its state holds no
# rtm.end_taper, as theirs; resumed with the taper on it is refused as such, with 0 it
# resumes to the untapered run's image
expect 0 "" "$rtm3d" "${migrate[@]}" --quiet --set output.name=untapered --set rtm.end_taper=0
rm -f "$out"/before_taper.* "$out"/before_taper_*
expect 0 "" "$rtm3d" "${migrate[@]}" --quiet --set output.name=before_taper --set rtm.end_taper=0 \
  --max-shots=1
expect 2 "another config \(rtm\.end_taper is auto now and not in the state's record: a build before the key wrote it, or this one with the key at 0.*resume with --set rtm\.end_taper=0\)" \
  "$rtm3d" "${migrate[@]}" --set output.name=before_taper
expect 0 "resuming after shot 1 of 3" "$rtm3d" "${migrate[@]}" --set output.name=before_taper \
  --set rtm.end_taper=0
same_image before_taper untapered
# tapered, the key is in the state: another length is refused naming it
rm -f "$out"/refused.* "$out"/refused_*
expect 0 "" "$rtm3d" "${migrate[@]}" --set output.name=refused --max-shots=1
expect 2 "another config \(rtm\.end_taper was auto there and is 0\.01 now\)" "$rtm3d" \
  "${migrate[@]}" --set output.name=refused --set rtm.end_taper=0.01

# ---- keys that change the sums: refused, naming the key, resolved values shown
for change in "rtm.reconstruction=boundary|rtm.reconstruction was snapshots there and is boundary now" \
  "rtm.imaging_step=3|rtm.imaging_step was 0 there and is 3 now" \
  "source.frequency=14|source.frequency was 15 there and is 14 now" \
  "model.vp_below=3100|model.vp_below was 3000 there and is 3100 now"; do
  rm -f "$out"/refused.* "$out"/refused_*
  expect 0 "" "$rtm3d" "${migrate[@]}" --set output.name=refused --max-shots=1
  expect 2 "another config \(${change#*|}\)" "$rtm3d" "${migrate[@]}" --set output.name=refused \
    --set "${change%%|*}"
  [ ! -e "$out/refused.h5" ] && [ -e "$out/refused.resume.h5" ] &&
    rob_pass "${change%%|*}: no image, the state kept" ||
    rob_fail "${change%%|*}: after the refusal: $(ls "$out" | tr '\n' ' ')"
done

# ---- a state without the resolved record (an earlier build's): compared as echoed, less
# the pacing keys, as that build did
if have_h5edit; then
  rm -f "$out"/old.* "$out"/old_*
  expect 0 "" "$rtm3d" "${migrate[@]}" --set output.name=old --max-shots=1
  h5edit "$out/old.resume.h5" unattr resume_config || rob_fail "h5edit unattr resume_config"
  expect 2 "another config \(memory\.limit_gb was 0 there and is 8 now\)" "$rtm3d" "${migrate[@]}" \
    --set output.name=old --set memory.limit_gb=8
  expect 0 "" "$rtm3d" "${migrate[@]}" --set output.name=old
  same_image old fresh
fi

# ---- zfp snapshots: a state resumes to the uninterrupted image; one whose record lacks the
# codec's format line (a build before 2026-11-30, whose codec coded each block to a fixed
# number of bits) is refused, not resumed into another codec's image
zfp=(--set rtm.reconstruction=snapshots --set rtm.snapshot_precision=zfp)
expect 0 "" "$rtm3d" "${migrate[@]}" --quiet --set output.name=fresh_zfp "${zfp[@]}"
stop_then_resume zfp "${zfp[*]}" "${zfp[*]}"
same_image zfp fresh_zfp
if have_h5edit; then
  rm -f "$out"/zfp_old.* "$out"/zfp_old_*
  expect 0 "" "$rtm3d" "${migrate[@]}" --set output.name=zfp_old "${zfp[@]}" --max-shots=1
  h5edit "$out/zfp_old.resume.h5" gettext resume_config | grep -v -e '^\[codec\]$' \
    -e '^format = slabs coded' > "$work/old_config.txt" || rob_fail "h5edit gettext"
  h5edit "$out/zfp_old.resume.h5" settext resume_config "$work/old_config.txt" ||
    rob_fail "h5edit settext"
  expect 2 "another config \(.*codec" "$rtm3d" "${migrate[@]}" --set output.name=zfp_old "${zfp[@]}"
fi

# ---- another shot-group count: a state of 2 groups on 2 ranks resumes on one rank, and one
# of one rank under 2 groups, said in a line; the image is the uninterrupted one within the
# float pairs' rounding (the shots summed in another order; summed in float it was 1e-6
# relative L2 here, 1e-8 allowed)
if [ -n "$mpiexec" ]; then
  for case in "2 1" "1 2"; do
    read -r saved resumed <<<"$case"
    rm -f "$out"/groups.* "$out"/groups_*
    saved_launch=("$rtm3d") resumed_launch=("$rtm3d")
    [ "$saved" = 2 ] && saved_launch=("$mpiexec" --oversubscribe -np 2 "$rtm3d")
    [ "$resumed" = 2 ] && resumed_launch=("$mpiexec" --oversubscribe -np 2 "$rtm3d")
    OMP_NUM_THREADS=1 expect 0 "stopped after shot 2 of 3" "${saved_launch[@]}" "${migrate[@]}" \
      --set output.name=groups --set mpi.shot_groups="$saved" --max-shots=2
    OMP_NUM_THREADS=1 expect 0 "saved under mpi\.shot_groups = $saved and resumes under $resumed: the shots are summed in another order, as float pairs" \
      "${resumed_launch[@]}" "${migrate[@]}" --set output.name=groups --set mpi.shot_groups="$resumed"
    expect 0 "" "$rtm3d" validate "$out/groups.h5" "$out/fresh.h5" --rtol 1e-8 --datasets /image
  done
fi
rob_finish
