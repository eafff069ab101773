#!/usr/bin/env bash
# run/survey.sh end to end on a small deck of 3 shots, 1 and 2 ranks in shot groups: a line
# a count with its wall against the floor (two propagations of the busiest group's shots:
# 2 of 3 on two ranks, so the floor is 4/3 of one propagation, not half of two), the grouped
# image against the one-rank image within the bar; then the refusals, exit 2 and naming what
# is wrong: NP empty, not a count, a count twice, an OBSERVED that is missing or has no run
# report beside it.
# Usage: survey_script.sh RTM3D SOURCE_DIR
set -eu
# shellcheck source=SCRIPTDIR/../app/cli_setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/../app/cli_setup.sh" "$1" "$2"
export OMP_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
survey=("$deck" --set backend.name=cpu --set grid.nx=48 --set grid.ny=48 --set grid.nz=40
  --set boundary.width=8 --set snapshots.every=0 --set time.steps=120 --set source.z=200
  --set receivers.z=100 --set receivers.y_first=235 --set shots.layout=grid
  --set shots.x_count=3 --set shots.y_count=1 --set shots.z=200 --set shots.x_first=150
  --set shots.y_first=150 --set shots.x_step=100 --set rtm.mute=false)
OUT="$work/survey" RTM3D="$rtm3d" NP="1 2" "$src/run/survey.sh" "${survey[@]}" \
  > "$work/out.txt" 2>&1 || { echo "FAIL: survey.sh failed:"; cat "$work/out.txt"; exit 1; }
cat "$work/out.txt"
python3 - "$work/out.txt" <<'PY'
import re, sys
lines = [l for l in open(sys.argv[1]) if l.startswith("survey: ")]
assert len(lines) == 2, f"a line a count: {lines}"
for groups, line in zip((1, 2), lines):
    m = re.search(r"(\d+) shot group\(s\); model propagate ([\d.]+) s; floor ([\d.]+) s", line)
    assert m and int(m.group(1)) == groups, line
    propagate, floor = float(m.group(2)), float(m.group(3))
    want = 2 * propagate * (1 if groups == 1 else 2 / 3)
    assert abs(floor - want) <= 0.011, f"{line}: floor {floor}, want {want:.2f}"
PY
grep -q "^image against the first count's: /image .* PASS" "$work/out.txt" ||
  { echo "FAIL: the grouped image against the one-rank image"; exit 1; }
observed="$work/survey/survey_observed.h5"
cp "$observed" "$work/lonely.h5"
refused() { # NP OBSERVED SAID: exit 2 and SAID on stderr
  local code=0
  OUT="$work/refused" RTM3D="$rtm3d" NP="$1" OBSERVED="$2" "$src/run/survey.sh" "${survey[@]}" \
    > "$work/refused.txt" 2>&1 || code=$?
  [ "$code" = 2 ] && grep -qF "$3" "$work/refused.txt" ||
    { echo "FAIL: NP='$1' OBSERVED='$2': exit $code, not 2 with '$3':"; cat "$work/refused.txt"; exit 1; }
}
refused " " "$observed" "NP is empty"
refused "1 -2" "$observed" "'-2' is not a rank count"
refused "1 1" "$observed" "1 is given twice"
refused "1" "$work/none.h5" "OBSERVED=$work/none.h5: no such file"
refused "1" "$work/lonely.h5" "no run report $work/lonely.json beside it"
echo "survey_script: passed"
