#!/usr/bin/env bash
# Text files a careless user gives where a deck or a points file (receivers.file,
# shots.file) is expected: devices, FIFOs, directories, binary data, NUL bytes, endless
# lines, thousands of errors, terminal escapes. Each is refused quickly, naming the key or
# file:line, with a bounded message; CRLF, a byte-order mark and UTF-8 text keep working.
# Every run is bounded (20 s, 256 KiB of output), so a regression fails and never hangs.
source "$(dirname "$0")/lib.sh" "$@"

# bounded COMMAND...: COMMAND's stdout+stderr, cut at 256 KiB, and its status; 124 after
# 20 s (a read that never ends, a FIFO waited on), SIGKILL 5 s later if SIGTERM is only
# noted (rtm3d stops at its next step, and a set-up that never ends has none).
bounded() {
  set -o pipefail
  timeout -k 5 20 "$@" 2>&1 | head -c 262144
}

# at_most N WHAT: the last expect's output has at most N lines.
at_most() {
  local lines
  lines="$(wc -l <<<"$rob_output")"
  if [ "$lines" -le "$1" ]; then
    rob_pass "$2: $lines lines of output"
  else
    rob_fail "$2: $lines lines of output, at most $1 expected"
  fi
}

tiny_deck "$work/tiny.ini"
run=(bounded "$rtm3d" model "$work/tiny.ini" --force)
receivers=(--set receivers.layout=file --set receivers.file)
shots=(--set shots.layout=file --set shots.file)
mkfifo "$work/fifo"
mkdir -p "$work/out" "$work/folder"

# ---- points files ----
# /dev/zero read as endless blank lines; a FIFO with no writer waited on for ever
expect 2 "receivers\.file = '/dev/zero': a character device, not a text file" \
  "${run[@]}" "${receivers[@]}=/dev/zero"
expect 2 "shots\.file = '/dev/zero': a character device, not a text file" \
  "${run[@]}" "${shots[@]}=/dev/zero"
expect 2 "shots\.file = '.*/fifo': a FIFO \(a pipe\), not a text file" \
  "${run[@]}" "${shots[@]}=$work/fifo"
expect 2 "receivers\.file = '.*/folder': a directory, not a text file" \
  "${run[@]}" "${receivers[@]}=$work/folder"
# a file that is not there: named with where its key came from (a probe: the path alone)
expect 2 "tiny\.ini with --set receivers\.file: receivers\.file = '.*/absent\.txt': No such file" \
  "${run[@]}" "${receivers[@]}=$work/absent.txt"
expect 2 "tiny\.ini with --set model\.file: cannot open model file .*/absent\.h5 \(model\.file\): No such file" \
  "${run[@]}" --set model.file="$work/absent.h5"
expect_no_output "$work/out" tiny

# a line of 2000 bytes: read in 1023-byte pieces, it was two receivers
{
  printf '120 120 60%1980s' ''
  printf '120 140 60\n'
} >"$work/long.txt"
expect 2 "long\.txt:1: a line longer than 1023 bytes" "${run[@]}" "${receivers[@]}=$work/long.txt"
# a NUL at the start of a line: read as a blank line, its receiver was dropped
printf '120 120 60\n\000140 120 60\n' >"$work/nul.txt"
expect 2 "nul\.txt:2: a NUL byte at column 1" "${run[@]}" "${receivers[@]}=$work/nul.txt"
# a number cut inside its exponent: scanf read "5e" as 5 (probe X, X7); the deck refuses it too
printf '120 120 60\n140 120 6e\n' >"$work/cut.txt"
expect 2 "cut\.txt:2: expected three numbers 'x y z' in metres: z = '6e' is not a number" \
  "${run[@]}" "${receivers[@]}=$work/cut.txt"
# Windows line ends still read
printf '120 120 60\r\n140 120 60\r\n' >"$work/crlf.txt"
expect 0 "" "${run[@]}" "${receivers[@]}=$work/crlf.txt" --set output.dir="$work/ok"

# ---- decks ----
expect 2 "/dev/urandom: cannot open config file: a character device, not a text file" \
  bounded "$rtm3d" model /dev/urandom
at_most 2 "/dev/urandom as the deck"
expect 2 "fifo: cannot open config file: a FIFO \(a pipe\), not a text file" \
  bounded "$rtm3d" model "$work/fifo"
head -c 49000000 /dev/urandom >"$work/binary.ini"
expect 2 "binary\.ini: cannot read config file: 49000000 bytes \(46\.7 MiB\), more than a deck may hold \(1 MiB\)" \
  bounded "$rtm3d" model "$work/binary.ini"
at_most 2 "a 49 MB binary deck"
rm -f "$work/binary.ini"
# a CSV given as the deck: 5000 malformed lines, 20 reported
seq 5000 | sed 's/.*/&,&,&/' >"$work/table.csv"
expect 2 "table\.csv: 20 errors by line 20; stopped reading there" \
  bounded "$rtm3d" model "$work/table.csv"
at_most 22 "a CSV as the deck"
# NUL bytes: "[gr\0id]" read as "[gr"; "steps = 2\0" "0" read as 2 steps and run
printf '[gr\000id]\nnx = 24\n' >"$work/nul_header.ini"
expect 2 "nul_header\.ini:1: a NUL byte at column 4: binary data \(or UTF-16\), not text" \
  bounded "$rtm3d" model "$work/nul_header.ini"
at_most 2 "a NUL in a [grid] header"
sed 's/^steps = 20$/steps = 2\x000/' "$work/tiny.ini" >"$work/nul_value.ini"
expect 2 "nul_value\.ini:9: a NUL byte at column 10" bounded "$rtm3d" model "$work/nul_value.ini"
expect_no_output "$work/out" tiny
# a byte-order mark and CRLF (a Windows editor's deck) still read
{
  printf '\357\273\277'
  sed 's/$/\r/' "$work/tiny.ini"
} >"$work/windows.ini"
expect 0 "" bounded "$rtm3d" model "$work/windows.ini" --force --set output.dir="$work/ok"

# ---- what reaches the terminal ----
# C1 controls (raw 0x9b and UTF-8 U+009B are both CSI) and bytes that are not UTF-8 come out
# as \xNN; UTF-8 text (e acute) as it is
printf '[grid]\nnx = a\302\23331m \23331m \377\342\202 caf\303\251\n' >"$work/c1.ini"
expect 2 'grid\.nx = "a\\xc2\\x9b31m \\x9b31m \\xff\\xe2\\x82 café": not an integer' \
  bounded "$rtm3d" model "$work/c1.ini"
output="$("$rtm3d" model "$work/c1.ini" 2>&1)"
if LC_ALL=C grep -q $'\x9b' <<<"$output"; then
  rob_fail "a raw C1 byte (0x9b) reached the terminal"
elif ! iconv -f UTF-8 -t UTF-8 <<<"$output" >/dev/null 2>&1; then
  rob_fail "the message is not valid UTF-8: $(od -c <<<"$output" | head -5)"
else
  rob_pass "C1 bytes and bad UTF-8 escaped, the message valid UTF-8"
fi

rob_finish
