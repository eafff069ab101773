#!/usr/bin/env bash
# Names one command shares with another, and writers past a limit (issue 32, probe D):
#   - plot past ulimit -f, with SIGXFSZ at its default (not inherited as ignored): the write
#     fails, exit 1, no partial file left (D4).
#   - a run under a de_DE.UTF-8 locale exits 0 (D11: the sanitizer build's LeakSanitizer
#     reported p11-kit's 34 bytes from its constructor, exit 1).
#   - bench under mpirun claims OUTPUT.json as a model run claims its name (D1): a finished
#     run's report or a user's NAME.json is refused without --force and kept; the deck or
#     receivers.file named NAME.json is refused, --force or not; a name another run holds
#     (NAME.lock) is refused; --force replaces the report; no lock is left.
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh" "$@"

tiny_deck "$work/tiny.ini"
deck="$work/tiny.ini"
out="$work/out"
mkdir -p "$out"

# ---- plot past ulimit -f, SIGXFSZ at its default (D4)
if env --default-signal=XFSZ true 2>/dev/null; then
  default_xfsz=(env --default-signal=XFSZ)
else
  default_xfsz=() # an older env: the signal as inherited
fi
size_limited() {
  (ulimit -f "$1" && shift && exec "${default_xfsz[@]}" "$@")
}
expect 0 "" "$rtm3d" model "$deck" --quiet --set output.name=traces
expect 1 "p\.png: the figure could not be written whole" \
  size_limited 20 "$rtm3d" plot "$out/traces.h5" /traces/p --size 3000x3000 -o "$out/p.png"
left="$(cd "$out" && ls -1 -- p.png* 2>/dev/null)"
[ -z "$left" ] && rob_pass "plot past ulimit -f left nothing" || rob_fail "plot left $(tr '\n' ' ' <<<"$left")"

# ---- a de_DE.UTF-8 locale (D11), built here where the system has its source
if command -v localedef >/dev/null && [ -e /usr/share/i18n/locales/de_DE ] &&
  mkdir -p "$work/locales" && localedef -i de_DE -f UTF-8 "$work/locales/de_DE.UTF-8" >/dev/null 2>&1; then
  expect 0 "" env LOCPATH="$work/locales" LC_ALL=de_DE.UTF-8 "$rtm3d" model "$deck" --quiet \
    --set output.name=locale
else
  echo "skip: no de_DE locale can be built here"
fi

# no_temp DIR NAME: nothing of NAME's partial files or lock is left in DIR
no_temp() {
  local left
  left="$(cd "$1" && ls -1 -- "$2".lock "$2"*.partial "$2"*.partial.* 2>/dev/null)"
  [ -z "$left" ] && rob_pass "no partial file or lock of $2 left" ||
    rob_fail "left in $1: $(tr '\n' ' ' <<<"$left")"
}

# ---- bench's report (D1): claimed as a run's output
if [ -n "$mpiexec" ]; then
  bench=("$mpiexec" --oversubscribe -np 2 "$rtm3d" bench "$deck" --quiet
    --set receivers.layout=none --set bench.steps=2 --set bench.warmup=1)
  expect 0 "" "$rtm3d" model "$deck" --quiet --set output.name=done
  report="$(cksum <"$out/done.json")"
  expect 2 "out/done\.(h5|json) exists: a run does not replace an earlier one's output" \
    "${bench[@]}" --set output.name=done
  expect_file_unchanged "$out/done.json" "$report"
  echo '{"precious": 1}' >"$out/user.json"
  user="$(cksum <"$out/user.json")"
  expect 2 "out/user\.json exists: .*pass --force" "${bench[@]}" --set output.name=user
  expect_file_unchanged "$out/user.json" "$user"
  no_temp "$out" user
  expect 0 "" "${bench[@]}" --set output.name=user --force
  grep -q '"command": "bench"' "$out/user.json" && rob_pass "--force replaced user.json with the report" ||
    rob_fail "--force: user.json is not bench's report"
  no_temp "$out" user
  # the deck and receivers.file named NAME.json: inputs, --force or not
  cp "$deck" "$out/deck.json"
  deck_sum="$(cksum <"$out/deck.json")"
  expect 2 "the deck = .*out/deck\.json is also an output of this run" \
    "$mpiexec" --oversubscribe -np 2 "$rtm3d" bench "$out/deck.json" --quiet --force \
    --set receivers.layout=none --set output.name=deck
  expect_file_unchanged "$out/deck.json" "$deck_sum"
  printf '120 120 60\n' >"$out/points.json"
  points_sum="$(cksum <"$out/points.json")"
  expect 2 "receivers\.file = .*out/points\.json is also an output of this run" \
    "${bench[@]}" --force --set receivers.layout=file --set receivers.file="$out/points.json" \
    --set output.name=points
  expect_file_unchanged "$out/points.json" "$points_sum"
  # a name a live run holds (its lock, held here by this shell as rtm3d holds it: flock)
  if command -v flock >/dev/null; then
    exec {live}>"$out/live.lock"
    flock -n "$live"
    expect 2 "another run is writing output\.name 'live'" "${bench[@]}" --force --set output.name=live
    [ ! -e "$out/live.json" ] && rob_pass "no live.json written beside the live run" ||
      rob_fail "bench wrote live.json while another run held the name"
    exec {live}>&-
  fi
else
  echo "skip: no MPI launcher: bench's report (bench runs on the cpu under mpirun only)"
fi

rob_finish
