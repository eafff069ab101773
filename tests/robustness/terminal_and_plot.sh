# tests/robustness/terminal_and_plot.sh - text from a file never reaches the
# terminal raw, the JSON report stays JSON whatever output.name holds, and plot refuses what
# would draw as a blank figure with exit 0.
#  - dataset names holding an ESC sequence, an OSC title, C1 bytes (raw and UTF-8) and invalid
#    UTF-8, in validate's table, plot's list of datasets and plot's "wrote" line: printed \xNN;
#    a clean UTF-8 name (café) as it is
#  - output.name = $'\xff\xfe' refused (exit 2, escaped); output.dir = $'\xff\xfe' and a deck
#    path with \x01 and U+009B: a report python's JSON reader accepts, with neither raw
#  - plot of datasets of no samples (gathers [0][nt] and [nrec][0], a volume, a series),
#    exit 2 "holds no samples"; of all-NaN snapshots and an all-NaN/Inf gather, exit 2 "holds
#    no finite value" (figure and --raw); of a model with 1 NaN in the slice, a warning that
#    counts it, exit 0. No figure is left by a refusal.
#  - a command whose standard output cannot be written (a full disk: /dev/full) exits 1 and
#    says so on stderr: its table or verdict is its result (probe V, V1)
# The HDF5 files come from hostile_h5 (this folder's CMakeLists.txt), found in the working
# folder ctest runs the script in, or at $HOSTILE_H5.
source "$(dirname "$0")/lib.sh" "$@"

command -v python3 >/dev/null || rob_skip "python3 checks the bytes and the JSON"
hostile_h5="${HOSTILE_H5:-$PWD/hostile_h5}"

# terminal_safe WHAT: $rob_output is well-formed UTF-8 with no control character but newline
# and tab, and no C1 control (U+0080-U+009F): nothing a terminal would act on.
terminal_safe() {
  local why
  why="$(printf '%s' "$rob_output" | python3 -c '
import sys
data = sys.stdin.buffer.read()
try:
    text = data.decode("utf-8")
except UnicodeDecodeError as e:
    sys.exit("invalid UTF-8 at byte %d: %r" % (e.start, data[max(0, e.start - 12):e.start + 4]))
bad = [c for c in text if (ord(c) < 0x20 and c not in "\n\t") or 0x7f <= ord(c) <= 0x9f]
if bad:
    sys.exit("raw control characters %r" % sorted(set(bad)))
' 2>&1)"
  if [ -n "$why" ]; then
    rob_fail "$1 reaches the terminal raw: $why"
  else
    rob_pass "$1 holds nothing a terminal acts on"
  fi
}

# contains WHAT FIXED-STRING: $rob_output holds the string as it is.
contains() {
  if grep -Fq -- "$2" <<<"$rob_output"; then
    rob_pass "$1 shows $2"
  else
    rob_fail "$1 does not show $2"
  fi
}

# no_file PATH: a refusal left no figure.
no_file() {
  if [ -e "$1" ]; then rob_fail "a refused plot left $1"; else rob_pass "no $1 left"; fi
}

names="$work/names.h5" empty="$work/empty.h5" nan="$work/nan.h5"
for kind in names empty nan partial gzip gzip_partial; do
  "$hostile_h5" "$kind" "$work/$kind.h5" || {
    rob_fail "$hostile_h5 $kind could not write $work/$kind.h5"
    rob_finish
  }
done

# --- names from a file ---
expect 0 'comparisons pass: PASS' "$rtm3d" validate "$names" "$names"
terminal_safe "validate's table"
contains "validate's table" '/\x1b[31mred\x1b[0m'
contains "validate's table" '/bad\xff\xfeutf8'
contains "validate's table" '/c1\x9b31mcsi'
contains "validate's table" '/utf8c1\xc2\x9b31m'
contains "validate's table" "/café"

expect 2 'has no dataset /missing' "$rtm3d" plot "$names" /missing
terminal_safe "plot's list of datasets"
contains "plot's list of datasets" '/\x1b]0;owned\x07title'
contains "plot's list of datasets" '/traces/\x1b[2Jclear'

# the default figure's name is made of the dataset's: the file may hold the bytes, the
# "wrote" line not
mkdir -p "$work/figures"
cp "$names" "$work/figures/names.h5"
expect 0 'wrote' "$rtm3d" plot "$work/figures/names.h5" $'/\x1b[31mred\x1b[0m' --raw
terminal_safe "plot's wrote line"
contains "plot's wrote line" 'names.\x1b[31mred\x1b[0m.png'
# a figure's title holds the dataset's name: PLplot printed one that is not UTF-8 raw to the
# terminal and dropped it (probe M, M2)
if has_feature PLplot; then
  for dataset in $'/bad\xff\xfeutf8' $'/utf8c1\xc2\x9b31m' $'/\x1b]0;owned\x07title'; do
    expect 0 'wrote' "$rtm3d" plot "$work/figures/names.h5" "$dataset" -o "$work/figures/t.png"
    terminal_safe "plot's figure of $(printf '%q' "$dataset")"
    ! grep -q "malformed" <<<"$rob_output" && rob_pass "PLplot took the title" ||
      rob_fail "PLplot refused the title: $(grep malformed <<<"$rob_output" | cat -v)"
  done
fi

# --- the JSON report of paths that are not UTF-8 ---
# output.name names files the XDMF sidecar quotes, so it must be printable UTF-8 (exit 2);
# output.dir and the deck's path may hold any bytes, and the report stays JSON
deck="$work/"$'deck\x01\xc2\x9b.ini'
tiny_deck "$deck"
expect 2 'output\.name = "\\xff\\xfe" holds control characters or bytes that are not UTF-8' \
  "$rtm3d" model "$deck" --set output.name=$'\xff\xfe' --quiet
terminal_safe "the refusal of output.name"
odd_dir="$work/"$'\xff\xfe'
expect 0 '' "$rtm3d" model "$deck" --set output.dir="$odd_dir" --quiet
report="$odd_dir/tiny.json"
if [ ! -f "$report" ]; then
  rob_fail "model wrote no report $report"
elif ! why="$(python3 -m json.tool "$report" 2>&1 >/dev/null)"; then
  rob_fail "the report of output.dir=\\xff\\xfe is not JSON: $why"
else
  rob_pass "the report of output.dir=\\xff\\xfe is JSON"
  rob_output="$(cat "$report")"
  terminal_safe "the report"
  contains "the report" '"output_path": "'"$work/"'\ufffd\ufffd/tiny.h5"'
  contains "the report" 'deck\u0001\u009b.ini'
fi

# --- plots of nothing ---
for dataset in /traces/p /traces/q /vp /snapshots/p; do
  expect 2 "plot: $dataset in $empty holds no samples" \
    "$rtm3d" plot "$empty" "$dataset" -o "$work/empty.png"
  no_file "$work/empty.png"
done
for raw in "" --raw; do
  for dataset in /snapshots/p /traces/p; do
    expect 2 "plot: $dataset.* in $nan holds no finite value" \
      "$rtm3d" plot "$nan" "$dataset" $raw -o "$work/nan.png"
    no_file "$work/nan.png"
  done
  expect 0 "warning: plot: 1 of 16 samples shown of /vp, z index 2 in $nan are NaN or Inf" \
    "$rtm3d" plot "$nan" /vp $raw -o "$work/vp.png"
done
if "$rtm3d" info | grep -q 'figures on'; then
  expect 2 "plot: /snapshots/p\[1\] \(the slices through x=2, y=2, z=2\) in $nan holds no finite" \
    "$rtm3d" plot "$nan" /snapshots/p --panel -o "$work/nan.png"
  no_file "$work/nan.png"
  expect 0 "warning: plot: 3 of 48 samples shown of /vp \(the slices" \
    "$rtm3d" plot "$nan" /vp --panel -o "$work/vp.png"
fi

# --- a newline in a value cannot forge a line of its own ---
expect 2 'output\.name=a\\x0artm3d: error: forged' "$rtm3d" model "$deck" \
  --set $'output.name=a\nrtm3d: error: forged'
if grep -q '^rtm3d: error: forged' <<<"$rob_output"; then
  rob_fail "a value's newline started a line of its own"
else
  rob_pass "a value's newline is shown as \\x0a"
fi

# --- plot -o the file it plots (probe E11: the figure replaced its own HDF5 input, exit 0)
cp "$nan" "$work/in.png"
in_sum="$(cksum <"$work/in.png")"
expect 2 "plot: -o .*in\.png is the file plotted" "$rtm3d" plot "$work/in.png" /vp -o "$work/in.png"
# through a folder not made yet (probe U, U4: DIR/new/../in.png replaced it, exit 0)
expect 2 "plot: -o .*new/\.\./in\.png is the file plotted" "$rtm3d" plot "$work/in.png" /vp \
  -o "$work/new/../in.png"
expect_file_unchanged "$work/in.png" "$in_sum"

# --- plot --size past int's range (a probe: 4294967496x300 wrapped to 200 x 300, exit 0), and
# what is not WxH of decimal digits
for size in 4294967496x300 800x4294967446 1000000000x600 800x600x 800X600 " 800x600" -800x600; do
  expect 2 "plot: --size needs WxH pixels, 200x150 to 8000x8000 \(got '$size'\)" "$rtm3d" plot \
    "$work/in.png" /vp --size "$size" -o "$work/size.png"
done
[ ! -e "$work/size.png" ] && rob_pass "no figure for a refused --size" || rob_fail "size.png written"

# --- a model file whose /vp was never written whole (probe D10: the run went on a constant
# 2000 m/s, the dataset's fill value): refused, naming the dataset
partial="$work/partial.h5"
tiny_deck "$work/tiny.ini"
expect 2 "model file .*partial\.h5: dataset /vp was not written whole \(1 of its 27 chunks written" \
  "$rtm3d" model "$work/tiny.ini" --set model.file="$partial" --set output.dir="$work/out" --quiet
# compressed: every chunk written runs (probe M, M3: refused as "not written whole", its
# compressed storage being smaller than the values); one chunk alone is refused alike
expect 0 "" "$rtm3d" model "$work/tiny.ini" --set model.file="$work/gzip.h5" \
  --set output.dir="$work/out" --set output.name=gzip --quiet
expect 2 "model file .*gzip_partial\.h5: dataset /vp was not written whole \(1 of its 27 chunks written" \
  "$rtm3d" model "$work/tiny.ini" --set model.file="$work/gzip_partial.h5" \
  --set output.dir="$work/out" --set output.name=gzip_partial --quiet

# --- the standard output on a full disk: what a command prints there is its result, and a
# lost one is a failure, said on stderr (probe V, V1: exit 0 with nothing written)
if [ -w /dev/full ]; then
  full_stdout() { "$@" >/dev/full; }
  for command in "info" "help-config" "--version" "--help"; do
    expect 1 "cannot write to the standard output.*what the command printed there is lost" \
      full_stdout "$rtm3d" $command
  done
  expect 1 "cannot write to the standard output" full_stdout "$rtm3d" validate "$work/gzip.h5" \
    "$work/gzip.h5" --rtol 0
  expect 0 "" "$rtm3d" info
else
  echo "skip: no writable /dev/full: the full standard output case"
fi

rob_finish
