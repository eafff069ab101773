#!/usr/bin/env bash
# FIFOs given as inputs, and plot's edges (a black-box probe's findings):
#   - a FIFO named as an HDF5 input (model.file, rtm.observed, validate, plot, export) is
#     refused at once, exit 2, naming it, instead of waiting for ever for a writer;
#   - plot --scaling reads its CSV with bounds: a FIFO, a NUL byte and an over-long line are
#     refused, exit 2, naming the file (and line);
#   - a gather's dt of 1e-11 s gives plot --gain agc a window clamped to the trace, not a
#     signed overflow and a crash; a dt of 0, a negative, NaN or Inf is refused, exit 2,
#     naming the file and the dataset;
#   - plot --raw writes a PNG: an output named .svg is refused, exit 2, and not written;
#   - plot of a file that does not open (missing, not HDF5, a device) says so once;
#   - a volume whose file gives a spacing of 0 or NaN, or a NaN origin, is refused, exit 2,
#     naming the attributes, no figure (probe W, W5: a blank figure, exit 0).
# Every run is bounded (timeout -k 5 20), so that a hang fails rather than blocks.
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh" "$@"

bounded=(timeout -k 5 20)
deck="$work/deck.ini"
tiny_deck "$deck"
fifo="$work/ff"
mkfifo "$fifo" "$fifo.h5" || rob_skip "mkfifo failed here"
refusal="is not a regular file \(a FIFO, a device or a folder\)"

# ---- a FIFO as an HDF5 input: refused, never opened
expect 2 "$fifo $refusal" "${bounded[@]}" "$rtm3d" model "$deck" --set model.file="$fifo" --quiet
expect_no_output "$work/out" tiny
expect 2 "$fifo.h5 $refusal" "${bounded[@]}" "$rtm3d" migrate "$deck" \
  --set rtm.observed="$fifo.h5" --set output.name=mig --quiet
expect_no_output "$work/out" mig
expect 2 "$fifo $refusal" "${bounded[@]}" "$rtm3d" validate "$fifo" "$work/x.h5"
expect 2 "$fifo $refusal" "${bounded[@]}" "$rtm3d" plot "$fifo" /vp
if has_feature "SEG-Y on"; then
  # a FIFO named .sgy as the observed gathers: refused, not opened (the probe's run hung)
  mkfifo "$fifo.sgy" || rob_fail "mkfifo $fifo.sgy"
  expect 2 "$fifo.sgy $refusal" "${bounded[@]}" "$rtm3d" migrate "$deck" \
    --set rtm.observed="$fifo.sgy" --set output.name=migs --quiet
  expect_no_output "$work/out" migs
  expect 2 "$fifo $refusal" "${bounded[@]}" "$rtm3d" export "$fifo" --segy "$work/o.sgy"
  if [ -e "$work/o.sgy" ]; then rob_fail "export of a FIFO left $work/o.sgy"; else rob_pass "no o.sgy"; fi
else
  echo "skip: this build has no SEG-Y (export of a FIFO)"
fi

# ---- plot --scaling: the CSV read with bounds
if has_feature "figures on"; then
  expect 2 "$fifo.*FIFO" "${bounded[@]}" "$rtm3d" plot --scaling "$fifo" -o "$work/s.png"
  header="run,mode,ranks,nz,propagate_s,mcells_per_s,efficiency"
  printf '%s\na,strong,1,64,1.0,10,1.0\0junk\n' "$header" >"$work/nul.csv"
  expect 2 "nul.csv:2: a NUL byte" "${bounded[@]}" "$rtm3d" plot --scaling "$work/nul.csv" \
    -o "$work/s.png"
  {
    echo "$header"
    echo "a,strong,1,64,1.0,10,1.0"
    printf 'a,strong,2,64,0.5,20,%s\n' "$(printf '0%.0s' {1..2000})"
  } >"$work/long.csv"
  expect 2 "long.csv:3: a line longer than" "${bounded[@]}" "$rtm3d" plot --scaling \
    "$work/long.csv" -o "$work/s.png"
else
  echo "skip: this build has no PLplot (plot --scaling)"
fi

# ---- a gather's dt: tiny, zero, negative, NaN, Inf
run="$work/out/tiny.h5"
"${bounded[@]}" "$rtm3d" model "$deck" --set snapshots.every=0 --quiet ||
  rob_fail "the model run for the gather exited $?"
if [ ! -s "$run" ]; then
  rob_fail "no $run"
elif ! have_h5edit; then
  echo "skip: no python3 or libhdf5 (the dt cases)"
else
  h5edit "$run" setattr /traces/p dt 1e-11 || rob_fail "h5edit setattr dt 1e-11"
  expect 0 "wrote $work/agc.png" "${bounded[@]}" "$rtm3d" plot "$run" /traces/p --gain agc \
    -o "$work/agc.png"
  expect 0 "wrote $work/agc_raw.png" "${bounded[@]}" "$rtm3d" plot "$run" /traces/p --gain agc \
    --raw -o "$work/agc_raw.png"
  for dt in 0 -0.001 nan inf; do
    h5edit "$run" setattr /traces/p dt "$dt" || rob_fail "h5edit setattr dt $dt"
    expect 2 "$run: dataset /traces/p: attribute dt is" "${bounded[@]}" "$rtm3d" plot "$run" \
      /traces/p --gain agc -o "$work/dt.png"
  done
  if [ -e "$work/dt.png" ]; then rob_fail "a plot with a bad dt left $work/dt.png"; else rob_pass "no dt.png"; fi
  h5edit "$run" setattr /traces/p dt 0.001 || rob_fail "h5edit setattr dt 0.001"
fi

# ---- plot --raw writes a PNG, so only to a .png
if [ -s "$run" ]; then
  expect 2 "--raw writes a PNG: the output $work/r.svg must end in .png" "${bounded[@]}" \
    "$rtm3d" plot "$run" /traces/p --raw -o "$work/r.svg"
  if [ -e "$work/r.svg" ]; then rob_fail "$work/r.svg written"; else rob_pass "no r.svg"; fi
  expect 0 "wrote $work/r.PNG" "${bounded[@]}" "$rtm3d" plot "$run" /traces/p --raw \
    -o "$work/r.PNG"
fi

# ---- plot of a file that does not open says so once (it was said twice: the dataset hint
# opened the file again)
echo "not hdf5" >"$work/text.h5"
for input in "$work/missing.h5" "$work/text.h5" /dev/null; do
  expect 2 "$input" "${bounded[@]}" "$rtm3d" plot "$input" /image
  if [ "$(grep -c "$input" <<<"$rob_output")" = 1 ]; then
    rob_pass "plot $input: one error line"
  else
    rob_fail "plot $input: the error printed more than once: $rob_output"
  fi
done

# ---- a damaged grid: spacing 0 or NaN, origin NaN
if have_h5edit; then
  expect 0 "" "${bounded[@]}" "$rtm3d" model "$deck" --quiet --set output.dir="$work/grid" \
    --set output.name=grid --set snapshots.every=10
  for edit in "spacing 0,0,0" "spacing nan,nan,nan" "origin nan,0,0" "origin 1e300,0,0"; do
    set -- $edit
    cp "$work/grid/grid.h5" "$work/grid/damaged.h5"
    h5edit "$work/grid/damaged.h5" setattr / "$1" "$2" || rob_fail "h5edit setattr $1 $2"
    expect 2 "damaged\.h5: attributes spacing .* the spacing must be finite and > 0, the origin finite" \
      "${bounded[@]}" "$rtm3d" plot "$work/grid/damaged.h5" /snapshots/p -o "$work/grid/d.png"
    [ ! -e "$work/grid/d.png" ] && rob_pass "no figure of a grid with $1 $2" ||
      rob_fail "a figure of a grid with $1 $2"
  done
  # a snapshot's time NaN: refused, not titled "t = nan s" (probe X, X2); validate fails the
  # edited times against the run's own
  cp "$work/grid/grid.h5" "$work/grid/times.h5"
  h5edit "$work/grid/times.h5" setattr /snapshots/p times nan,nan || rob_fail "h5edit times"
  expect 2 "times\.h5: dataset /snapshots/p: attribute times\[[0-9]\] is nan" \
    "${bounded[@]}" "$rtm3d" plot "$work/grid/times.h5" /snapshots/p -o "$work/grid/t.png"
  expect 1 "/snapshots/p \(attributes\).*times differs" \
    "$rtm3d" validate "$work/grid/times.h5" "$work/grid/grid.h5"
  # a grid without its origin on one side (probe X, X5)
  cp "$work/grid/grid.h5" "$work/grid/no_origin.h5"
  h5edit "$work/grid/no_origin.h5" unattr origin || rob_fail "h5edit unattr origin"
  expect 1 "grid \(where\).*an origin \(attribute\) in the reference only" \
    "$rtm3d" validate "$work/grid/no_origin.h5" "$work/grid/grid.h5"
fi

# ---- a shot's receiver positions ([n][3] metres) are no gather: refused, no figure (the
# third probe's plot drew them as "amplitude")
expect 0 "" "$rtm3d" model "$deck" --quiet --set shots.layout=grid --set shots.x_count=2 \
  --set shots.y_count=1 --set output.dir="$work/pos" --set output.name=pos
expect 2 "holds positions \(\[[0-9]+\]\[3\]: x, y, z in metres\), not a gather" \
  "$rtm3d" plot "$work/pos/pos.h5" /shots/0/receivers -o "$work/pos/r.png"
[ ! -e "$work/pos/r.png" ] && rob_pass "no figure of positions" || rob_fail "r.png written"

rob_finish
