#!/usr/bin/env bash
# Names one command shares with another, and writers past a limit (issue 32, probe D):
#   - plot past ulimit -f, with SIGXFSZ at its default (not inherited as ignored): the write
#     fails, exit 1, no partial file left (D4).
#   - a run under a de_DE.UTF-8 locale exits 0 (D11: the sanitizer build's LeakSanitizer
#     reported p11-kit's 34 bytes from its constructor, exit 1).
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

rob_finish
