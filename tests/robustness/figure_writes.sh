#!/usr/bin/env bash
# Figures cut short by a full disk or a file size limit (ulimit -f, its SIGXFSZ ignored so
# that writes fail with EFBIG as on a full disk; no mount needed): PLplot reports no failed
# write, so each figure is checked whole before it is renamed into place. `plot` (PNG, SVG,
# PDF, --raw, --scaling) exits 1 naming the file and the likely cause and leaves the earlier
# file as it was; `migrate` whose figures are cut short exits 1, leaves none of its outputs
# and keeps its resume state, from which the same command then completes.
source "$(dirname "$0")/lib.sh" "$@"
tiny_deck "$work/tiny.ini"
out="$work/out"
figures=0
has_feature "figures on" && figures=1

# limited BLOCKS COMMAND...: COMMAND with files capped at BLOCKS KiB, writes past the cap
# failing (EFBIG) rather than killing it
limited() {
  local blocks="$1"
  shift
  (
    trap '' XFSZ
    ulimit -f "$blocks"
    exec "$@"
  )
}

# no_partial DIR: no file written aside (NAME.partial.XXXXXX.EXT) is left in DIR
no_partial() {
  local left
  left="$(ls -1 "$1" | grep -F .partial)"
  [ -z "$left" ] && rob_pass "nothing written aside is left in $1" ||
    rob_fail "left in $1: $(tr '\n' ' ' <<<"$left")"
}

# cut_short TARGET BLOCKS PATTERN COMMAND...: COMMAND, which writes TARGET (a good one there
# already), fails under a cap of BLOCKS KiB saying PATTERN; TARGET is as it was
cut_short() {
  local target="$1" blocks="$2" pattern="$3" before
  shift 3
  before="$(cksum <"$target")"
  expect 1 "$pattern" limited "$blocks" "$@"
  expect_file_unchanged "$target" "$before"
  no_partial "$(dirname "$target")"
}

"$rtm3d" model "$work/tiny.ini" --quiet --set snapshots.every=5 --set output.name=run ||
  rob_fail "the model run for the plots failed"
"$rtm3d" model "$work/tiny.ini" --quiet --set grid.nx=96 --set grid.ny=96 --set time.steps=60 \
  --set snapshots.every=60 --set output.name=wide || rob_fail "the model run for --raw failed"
mkdir -p "$work/plots"

# ---- too few file descriptors (ulimit -n 10): PLplot could not load its driver and would
# ask for a device on stdin (a hang on a terminal); refused, exit 1, nothing left
if [ "$figures" -eq 1 ]; then
  expect 1 "too few file descriptors are left to draw a figure \(ulimit -n\)" \
    bash -c 'ulimit -n 10; exec "$@" < /dev/null' - timeout 20 "$rtm3d" plot "$out/run.h5" \
    /traces/p -o "$work/plots/few.png"
  [ ! -e "$work/plots/few.png" ] && rob_pass "no figure left" || rob_fail "few.png left"
fi

# ---- plot: a PNG, an SVG and a PDF cut short (each tens of KB, the cap 8 KiB)
if [ "$figures" -eq 1 ]; then
  for ext in png svg pdf; do
    target="$work/plots/keep.$ext"
    expect 0 "wrote" "$rtm3d" plot "$out/run.h5" /traces/p -o "$target"
    cut_short "$target" 8 "keep\.$ext: the figure could not be written whole .*disk full.*ulimit -f" \
      "$rtm3d" plot "$out/run.h5" /traces/p -o "$target"
  done
  # run/scaling.sh's CSV as a line plot (io/figure.c's other page)
  printf 'run,mode,ranks,nz,propagate_s,mcells_per_s,efficiency\na,strong,1,64,1.0,10,1.0000
a,strong,2,64,0.55,18,0.9091\nb,weak,1,64,1.0,10,1.0000\nb,weak,2,128,1.05,19,0.9524\n' \
    >"$work/scaling.csv"
  expect 0 "wrote" "$rtm3d" plot --scaling "$work/scaling.csv" -o "$work/plots/scaling.png"
  cut_short "$work/plots/scaling.png" 8 "scaling\.png: the figure could not be written whole" \
    "$rtm3d" plot --scaling "$work/scaling.csv" -o "$work/plots/scaling.png"
  # a negative rank count is a number, and the message says what is wrong with it (probe D8)
  printf 'run,mode,ranks,nz,propagate_s,mcells_per_s,efficiency\na,strong,-2,64,1.0,10,0.5\n' \
    >"$work/negative.csv"
  expect 2 "negative\.csv:2: ranks '-2' must be a positive count" \
    "$rtm3d" plot --scaling "$work/negative.csv" -o "$work/plots/negative.png"
fi

# ---- plot --raw (libpng, every build): one pixel a cell, 96 x 96 (about 2 KB), cap 1 KiB
target="$work/plots/raw.png"
expect 0 "wrote" "$rtm3d" plot "$out/wide.h5" /snapshots/p --raw -o "$target"
cut_short "$target" 1 "cannot write .*raw\.png: File too large \(a file size limit: ulimit -f\)" \
  "$rtm3d" plot "$out/wide.h5" /snapshots/p --raw -o "$target"

# ---- the folders plot makes for its figure go again when it fails (those left empty); a
# folder that was there stays
limited 1 "$rtm3d" plot "$out/wide.h5" /snapshots/p --raw -o "$work/plots/new/deep/raw.png" \
  >/dev/null 2>&1
[ ! -e "$work/plots/new" ] && rob_pass "a failed figure's new folders removed" ||
  rob_fail "a failed figure left: $(find "$work/plots/new" | tr '\n' ' ')"
mkdir -p "$work/plots/held"
limited 1 "$rtm3d" plot "$out/wide.h5" /snapshots/p --raw -o "$work/plots/held/new/raw.png" \
  >/dev/null 2>&1
[ -d "$work/plots/held" ] && [ ! -e "$work/plots/held/new" ] &&
  rob_pass "the folder made removed, the one found kept" ||
  rob_fail "after a failed figure under held/: $(find "$work/plots/held" | tr '\n' ' ')"
# ---- a link at the figure's name leads to the file replaced (the link kept), as bench's
# --csv; a link to nothing is refused, exit 2, and nothing is made at its end
printf 'mine\n' >"$work/linked.png"
ln -s "$work/linked.png" "$work/plots/link.png"
expect 0 "wrote .*linked\.png" "$rtm3d" plot "$out/wide.h5" /snapshots/p --raw -o "$work/plots/link.png"
[ -L "$work/plots/link.png" ] && [ "$(head -c 4 "$work/linked.png" | tail -c 3)" = "PNG" ] &&
  rob_pass "the link kept, its file now the figure" ||
  rob_fail "link.png: $(ls -l "$work/plots/link.png" "$work/linked.png" | tr '\n' ' ')"
# the format follows the name: a link fig.svg -> a .png drew a PNG into it (a review)
ln -s "$work/linked.png" "$work/plots/link.svg"
expect 2 "link\.svg is a link to .*linked\.png: a figure's format follows its file's extension" \
  "$rtm3d" plot "$out/wide.h5" /snapshots/p -o "$work/plots/link.svg"
ln -s "$work/nowhere/x.png" "$work/plots/dangling.png"
expect 2 "dangling\.png: a symbolic link to nothing" \
  "$rtm3d" plot "$out/wide.h5" /snapshots/p --raw -o "$work/plots/dangling.png"
[ ! -e "$work/nowhere" ] && [ -L "$work/plots/dangling.png" ] &&
  rob_pass "nothing made at the dangling link's end" || rob_fail "the dangling link's end was made"
no_partial "$work/plots"

# ---- migrate: two shots on 14^3 cells, the first migrated and saved (--max-shots 1); the
# second under a cap the image file (about 29 KB) fits and the figures (about 40 KB each) do
# not: exit 1, nothing of the run left, its resume state kept; the same command completes
if [ "$figures" -eq 1 ]; then
  small=(--set grid.nx=14 --set grid.ny=14 --set grid.nz=14 --set shots.layout=grid
    --set shots.x_count=2 --set shots.y_count=1 --set shots.z=60 --set receivers.z=60
    --set receivers.y_count=14 --set receivers.y_first=0 --set receivers.y_step=10
    --set receivers.x_step=10)
  "$rtm3d" model "$work/tiny.ini" --quiet "${small[@]}" --set output.dir="$work/observed" \
    --set output.name=shots || rob_fail "the model run for migrate failed"
  migrate=("$rtm3d" migrate "$work/tiny.ini" "${small[@]}"
    --set rtm.observed="$work/observed/shots.h5")
  expect 0 "" "${migrate[@]}" --quiet --max-shots 1
  state="$(cksum <"$out/tiny.resume.h5")"
  expect 1 "tiny_image_x\.png could not be written: the run removes its outputs.*resumes from .*tiny\.resume\.h5" \
    limited 34 "${migrate[@]}" --quiet
  grep -q "tiny_image_x\.png\.partial: the figure could not be written whole" <<<"$rob_output" &&
    rob_pass "the figure cut short is named" || rob_fail "no figure named in: $rob_output"
  expect_no_output "$out" tiny
  expect_file_unchanged "$out/tiny.resume.h5" "$state"
  expect 0 "" "${migrate[@]}"
  grep -q "resuming after shot 1 of 2" <<<"$rob_output" && rob_pass "the same command resumed" ||
    rob_fail "the rerun did not resume: $rob_output"
  # PLplot's temporary folder unusable (probe T, T2: PLplot ended the process itself, "No
  # device drivers found", the run's partial files left): a migration is refused before its
  # first shot (it failed at its figures, after all of them: a later probe), its state kept;
  # plot draws nothing and leaves nothing
  rm -f "$out"/tiny.* "$out"/tiny_image_*
  expect 0 "" "${migrate[@]}" --quiet --max-shots 1
  state="$(cksum <"$out/tiny.resume.h5")"
  expect 1 "tiny_image_\{x,y,z\}\.png: not drawn: .*temporary folder $work/none, where a file cannot be written \(No such file or directory\).*nothing is run" \
    env TMPDIR="$work/none" "${migrate[@]}" --quiet
  expect_no_output "$out" tiny
  expect_file_unchanged "$out/tiny.resume.h5" "$state"
  expect 0 "resuming after shot 1 of 2" "${migrate[@]}"
  mkdir -p "$work/tmpplots"
  expect 1 "tmp\.png: not drawn: .* \(File too large\): raise the file size limit \(ulimit -f\)" \
    limited 0 "$rtm3d" plot "$out/tiny.h5" /image -o "$work/tmpplots/tmp.png"
  [ -z "$(ls "$work/tmpplots")" ] && rob_pass "no figure or temp of the plot left" ||
    rob_fail "left: $(ls "$work/tmpplots" | tr '\n' ' ')"
  # "%n" in a name (probe R, R1): PLplot read it in a file name as a family member's number,
  # wrote elsewhere, and the figures failed as "cut short" at the end of every attempt; the
  # figures now take the names as they are, in a folder of such a name too
  expect 0 "" "${migrate[@]}" --quiet --set output.name=a%n --set output.dir="$work/d%n"
  [ -e "$work/d%n/a%n_image_x.png" ] && [ -e "$work/d%n/a%n.h5" ] &&
    [ -z "$(ls "$work/d%n" "$work" | grep -F .partial)" ] &&
    rob_pass "a name with %n: its figures under that name, nothing aside left" ||
    rob_fail "a name with %n: $(ls "$work/d%n" "$work" | tr '\n' ' ')"
  for format in png svg pdf; do
    expect 0 "wrote .*fig%n\.$format" "$rtm3d" plot "$work/d%n/a%n.h5" /image -o "$work/fig%n.$format"
  done
  ls "$out"/tiny_image_{x,y,z}.png "$out"/tiny.h5 "$out"/tiny.json >/dev/null 2>&1 &&
    [ ! -e "$out/tiny.resume.h5" ] && rob_pass "the resumed migration left its outputs" ||
    rob_fail "after the resumed migration: $(ls "$out" | tr '\n' ' ')"
  # under an address-space limit (ulimit -v) too small for PLplot, cairo and pango, which
  # abort the process there rather than fail: the figures skipped with a warning naming the
  # limit, the image written (the sanitizer build, which cannot start under it, skips this)
  if bash -c 'ulimit -v 100000 && exec "$0" info' "$rtm3d" >/dev/null 2>&1; then
    rm -rf "$out"
    expect 0 "figures .*tiny_image_\{x,y,z\}\.png are not drawn: under the address-space limit \(ulimit -v" \
      bash -c 'ulimit -v 100000 && exec "$@"' limited "${migrate[@]}"
    [ -e "$out/tiny.h5" ] && [ -e "$out/tiny.json" ] && [ -z "$(ls "$out" | grep -E 'png|partial|lock')" ] &&
      rob_pass "the image without figures, nothing else left" ||
      rob_fail "under ulimit -v: $(ls "$out" | tr '\n' ' ')"
    # plot alike (probe E5: pango aborted it, exit 133 or 139, a temp left): refused, exit 1
    mkdir -p "$work/vplots"
    expect 1 "vplot\.png is not drawn: under the address-space limit \(ulimit -v\)" \
      bash -c 'ulimit -v 100000 && exec "$@"' limited "$rtm3d" plot "$out/tiny.h5" /image \
      -o "$work/vplots/vplot.png"
    [ -z "$(ls "$work/vplots")" ] && rob_pass "no figure or temp of the refused plot" ||
      rob_fail "left: $(ls "$work/vplots" | tr '\n' ' ')"
  fi
fi

rob_finish
