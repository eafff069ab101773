#!/usr/bin/env bash
# The imaging step against the record's end, as a user meets it (docs/migration.md, "The
# imaging step and the record's end"): run/examples/migrate_small.ini on the cpu backend, 15
# Hz, 588 ms recorded while reflections still arrive. At the defaults (auto's imaging step,
# 4 here, and the record's last 0.5 / source.frequency tapered) the image lies within 1% of
# the same run's imaged at every step (measured 2e-3); with rtm.end_taper = 0 the step at
# the record's end folds into the image at auto's step (measured 9.8e-2 from its every-step
# image; the test wants more than 3e-2, so that it sees what the taper removes). The run's
# line says the taper; a taper longer than the record is refused (exit 2, the key named, no
# output). Usage: cli_end_taper.sh RTM3D SOURCE_DIR
set -u
# shellcheck source=SCRIPTDIR/cli_setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/cli_setup.sh" "$@"
deck="$src/run/examples/migrate_small.ini"
args=(--set backend.name=cpu --set output.dir="$work")
rel() { # relative L2 of /image, $1 against $2
  "$rtm3d" validate "$work/$1.h5" "$work/$2.h5" --datasets /image 2>&1 |
    awk '$1 == "/image" {print $3}'
}
below() { awk -v a="$1" -v b="$2" 'BEGIN {exit !(a != "" && a + 0 < b + 0)}'; }

"$rtm3d" model "$deck" "${args[@]}" --quiet --set output.name=observed ||
  { echo "FAIL: model exited $?"; exit 1; }
migrate() { # NAME SETTINGS...: migrates the observed gathers into NAME.h5, its log in NAME.log
  local name="$1"
  shift
  "$rtm3d" migrate "$deck" "${args[@]}" --set rtm.observed="$work/observed.h5" \
    --set output.name="$name" "$@" > "$work/$name.log" 2>&1 ||
    fail "migrate $name exited $?: $(tail -3 "$work/$name.log")"
}
migrate auto
migrate every --set rtm.imaging_step=1
migrate untapered --set rtm.end_taper=0
migrate untapered_every --set rtm.end_taper=0 --set rtm.imaging_step=1

grep -q "imaging every 4 steps, the record's last 33.3 ms tapered" "$work/auto.log" ||
  fail "the run's line does not say the step and the taper: $(grep "imaging every" "$work/auto.log")"
grep -q "imaging every 4 steps, the record's end not tapered" "$work/untapered.log" ||
  fail "the run's line does not say the taper is off: $(grep "imaging every" "$work/untapered.log")"
tapered="$(rel auto every)"
untapered="$(rel untapered untapered_every)"
echo "auto's imaging step against every step: $tapered with the end taper, $untapered without"
below "$tapered" 1e-2 || fail "with the end taper auto's image is $tapered from every step's (want < 1e-2)"
below 3e-2 "$untapered" ||
  fail "without the end taper auto's image is $untapered from every step's: the case no longer aliases (want > 3e-2)"

out="$("$rtm3d" migrate "$deck" "${args[@]}" --set rtm.observed="$work/observed.h5" \
  --set output.name=long_taper --set rtm.end_taper=1 2>&1)"
status=$?
[ "$status" -eq 2 ] || fail "rtm.end_taper = 1 s of a 0.588 s record exited $status (want 2)"
grep -q "rtm.end_taper = 1 s is longer than the record the migration uses, time.steps x dt = 420 x 0.0014 s = 0.588 s" <<<"$out" ||
  fail "rtm.end_taper = 1 s was not refused by name: $out"
[ ! -e "$work/long_taper.h5" ] || fail "a refused run left long_taper.h5"

[ "$failures" -eq 0 ] || exit 1
echo "cli_end_taper: all passed"
