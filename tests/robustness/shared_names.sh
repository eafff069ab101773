#!/usr/bin/env bash
# Names one command shares with another, and writers past a limit (issue 32, probe D):
#   - plot past ulimit -f, with SIGXFSZ at its default (not inherited as ignored): the write
#     fails, exit 1, no partial file left (D4).
#   - a run under a de_DE.UTF-8 locale exits 0 (D11: the sanitizer build's LeakSanitizer
#     reported p11-kit's 34 bytes from its constructor, exit 1).
#   - bench under mpirun claims OUTPUT.json as a model run claims its name (D1): a finished
#     run's report or a user's NAME.json is refused without --force and kept; the deck or
#     receivers.file named NAME.json is refused, --force or not; a name another run holds
#     (NAME.lock) is refused; --force replaces the report; no lock is left; --force over a
#     model or migrate run's name is refused, its files kept (E7); a killed bench's report
#     temp is removed by the next (E12).
#   - a file another process holds locked (a live run's partial): validate and plot say so
#     (probe N, N3), not "corrupt?".
#   - export writes aside under a new name of its own (D7, D3a): an export killed with
#     SIGKILL blocks no rerun, and a model run of output.segy on the same NAME.sgy while an
#     export writes neither takes over the export's partial file nor fails it.
#   - makemodel refuses a model.file named as a run's own file (NAME.resume.h5, a partial
#     file, a lock) before writing anything (D3b).
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
if has_feature "figures on"; then # a plain PNG, one pixel a sample, fits under the cap
  expect 1 "p\.png: the figure could not be written whole" \
    size_limited 20 "$rtm3d" plot "$out/traces.h5" /traces/p --size 3000x3000 -o "$out/p.png"
  left="$(cd "$out" && ls -1 -- p.png* 2>/dev/null)"
  [ -z "$left" ] && rob_pass "plot past ulimit -f left nothing" || rob_fail "plot left $(tr '\n' ' ' <<<"$left")"
fi

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
  # a file put at NAME.json while bench runs (once its lock is taken: the name claimed),
  # without --force (probe E3: replaced, exit 0): it stays, and the report is not written
  rm -f "$out/appear.json" "$out/appear.lock"
  "${bench[@]}" --set output.name=appear --set grid.nx=64 --set grid.ny=64 --set grid.nz=64 \
    --set bench.steps=60 >"$work/appear.log" 2>&1 &
  bench_pid=$!
  for _ in $(seq 600); do [ -e "$out/appear.lock" ] && break; sleep 0.05; done
  cp "$out/user.json" "$out/appear.json"
  wait "$bench_pid"
  bench_status=$?
  rob_output="$(cat "$work/appear.log")"
  rob_judge 1 "appear\.json appeared while this run ran.*left as it is" "$bench_status" \
    "bench, a file put at its report's name meanwhile"
  cmp -s "$out/user.json" "$out/appear.json" && rob_pass "the file put there stays" ||
    rob_fail "appear.json was replaced"
  no_temp "$out" appear
  # bench --force over a migration's or model run's name (probe E7): refused, the run's
  # files kept (the report alone replaced, they would read as of one run with it)
  expect 0 "" "$rtm3d" model "$deck" --quiet --set output.name=r --set snapshots.every=10
  r_sum="$(cat "$out"/r.* | cksum)"
  expect 2 "output\.name 'r': rtm3d wrote .*out/r\.h5, .*out/r\.xmf for a model or migrate run" \
    "${bench[@]}" --set output.name=r --force
  [ "$(cat "$out"/r.* | cksum)" = "$r_sum" ] && rob_pass "the run's files kept" ||
    rob_fail "bench --force changed the run's files: $(ls "$out" | tr '\n' ' ')"
  no_temp "$out" r
  # a bench killed (SIGKILL) as it renames its report from its temp (probe E12: the temp
  # NAME.json.partial.XXXXXX.json stayed for ever): the next bench of the name removes it
  if [ -e "$PWD/librtm3d_full_disk_preload.so" ]; then
    use_preload full_disk
    env RTM3D_TEST_KILL_RENAME=/kb.json LD_PRELOAD="$preload" "${bench[@]}" --set output.name=kb \
      >"$work/kb.log" 2>&1 </dev/null
    ls "$out" | grep -Eq '^kb\.json\.partial\.......\.json$' &&
      rob_pass "the killed bench left its report's temp" || rob_fail "no temp left: $(ls "$out" | tr '\n' ' ')"
    expect 0 "removed .*kb\.json\.partial\.......\.json" "${bench[@]/--quiet/--set=bench.steps=2}" \
      --set output.name=kb --force
    no_temp "$out" kb
  fi
else
  echo "skip: no MPI launcher: bench's report (bench runs on the cpu under mpirun only)"
fi

# ---- export's partial files (D7, D3a)
if has_feature "SEG-Y on" && [ -e "$PWD/librtm3d_stall_write_preload.so" ]; then
  use_preload stall_write
  expect 0 "" "$rtm3d" model "$deck" --quiet --set output.name=run
  # held_export NAME OPEN: an export of run.h5 to out/NAME.sgy in the background, held at
  # its first open of a path holding OPEN; $held_pid
  held_export() {
    rm -f "$work/held" "$work/release"
    env LD_PRELOAD="$preload" RTM3D_TEST_STALL_OPEN="$2" RTM3D_TEST_STALL_MARKER="$work/held" \
      RTM3D_TEST_STALL_RELEASE="$work/release" RTM3D_TEST_STALL_SECONDS=120 \
      "$rtm3d" export "$out/run.h5" --segy "$out/$1.sgy" --force >"$work/held.log" 2>&1 </dev/null &
    held_pid=$!
    for _ in $(seq 1200); do
      [ -e "$work/held" ] || ! kill -0 "$held_pid" 2>/dev/null && break
      sleep 0.05
    done
    [ -e "$work/held" ] || rob_fail "the export to $1.sgy was never held at an open of $2"
  }
  # killed with SIGKILL while writing: the rerun, --force or not, is not blocked
  held_export killed killed.sgy.partial
  kill -KILL "$held_pid"
  wait "$held_pid" 2>/dev/null
  expect 0 "" "$rtm3d" export "$out/run.h5" --segy "$out/killed.sgy" --quiet
  expect 0 "" "$rtm3d" export "$out/run.h5" --segy "$out/killed.sgy" --quiet --force
  # a model run of output.name 'shared' with output.segy while an export writes shared.sgy:
  # both end well (the model took the export's fixed-name partial over, and the export
  # failed at its rename)
  held_export shared shared.sgy.partial
  expect 0 "" "$rtm3d" model "$deck" --quiet --set output.name=shared --set output.segy=true
  touch "$work/release"
  wait "$held_pid"
  held_status=$?
  rob_output="$(cat "$work/held.log")"
  rob_judge 0 "" "$held_status" "export to shared.sgy while a model run wrote its shared.sgy"
  [ -s "$out/shared.sgy" ] && rob_pass "shared.sgy is there" || rob_fail "no shared.sgy"
  no_temp "$out" shared
  rm -f "$out"/killed.sgy.partial* # the killed export's leftover: a name of its own
else
  echo "skip: no SEG-Y or no stall preload: export's partial files"
fi

# ---- makemodel of a run's own file name (D3b)
printf 'background vp=2000\n' >"$work/plain.model"
makemodel=("$rtm3d" makemodel "$deck" --set model.description="$work/plain.model")
for name in g.resume.h5 g.h5.partial g.lock g.h5.partial.AbC123.h5; do
  expect 2 "model\.file = .*out/$name: rtm3d's runs write a file of that name for themselves" \
    "${makemodel[@]}" --set model.file="$out/$name"
  [ ! -e "$out/$name" ] && rob_pass "no $name written" || rob_fail "makemodel wrote $name"
done
no_temp "$out" g
expect 0 "" "${makemodel[@]}" --set model.file="$out/g_model.h5"

# a file another process holds locked, as HDF5 holds a live run's NAME.h5.partial: validate
# and plot say so (probe N, N3: "cannot open file ... (corrupt?)", errno 11)
if command -v flock >/dev/null; then
  flock -x "$out/g_model.h5" sleep 30 &
  holder=$!
  sleep 0.5
  expect 2 "g_model\.h5: another process holds it" "$rtm3d" validate "$out/g_model.h5" \
    "$out/g_model.h5"
  expect 2 "g_model\.h5: another process holds it" "$rtm3d" plot "$out/g_model.h5" /vp \
    -o "$out/held.png"
  grep -q "corrupt" <<<"$rob_output" && rob_fail "a held file called corrupt" ||
    rob_pass "a held file not called corrupt"
  kill "$holder" 2>/dev/null
  wait "$holder" 2>/dev/null
fi

rob_finish
