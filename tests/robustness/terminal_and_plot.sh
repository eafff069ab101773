# tests/robustness/terminal_and_plot.sh - issue 32: the JSON report stays JSON whatever
# output.name holds.
#  - output.name = $'\xff\xfe' and a deck path with \x01 and U+009B: a report python's JSON
#    reader accepts, with neither raw
source "$(dirname "$0")/lib.sh" "$@"

command -v python3 >/dev/null || rob_skip "python3 checks the bytes and the JSON"

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

# --- the JSON report of a name that is not UTF-8 ---
deck="$work/"$'deck\x01\xc2\x9b.ini'
tiny_deck "$deck"
expect 0 '' "$rtm3d" model "$deck" --set output.name=$'\xff\xfe' --quiet
report="$work/out/"$'\xff\xfe'.json
if [ ! -f "$report" ]; then
  rob_fail "model wrote no report $report"
elif ! why="$(python3 -m json.tool "$report" 2>&1 >/dev/null)"; then
  rob_fail "the report of output.name=\\xff\\xfe is not JSON: $why"
else
  rob_pass "the report of output.name=\\xff\\xfe is JSON"
  rob_output="$(cat "$report")"
  terminal_safe "the report"
  contains "the report" '"output_path": "'"$work/out/"'\ufffd\ufffd.h5"'
  contains "the report" 'deck\u0001\u009b.ini'
fi

rob_finish
