#!/usr/bin/env bash
# run/survey_model.py, the model of a survey past one node: its self-checks pass; its tables
# for the default survey give efficiencies in (0, 1] that never rise as GPUs are added (a
# resume save that drops out aside); it reads a real migrate run's report (a small migration made here) and names it; its CSV
# draws as an SVG and, with PLplot, through rtm3d plot --scaling. Skipped without python3.
# Usage: survey_model_script.sh RTM3D SOURCE_DIR
set -eu
# shellcheck source=SCRIPTDIR/cli_setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/cli_setup.sh" "$1" "$2"
command -v python3 > /dev/null || { echo "survey_model_script: no python3, skipped"; exit 77; }
model="$src/run/survey_model.py"

python3 "$model" --check | grep -q "check passed" || fail "--check"

python3 "$model" --csv "$work/survey.csv" > "$work/tables.txt" || fail "the default tables"
grep -q "efficiency below 0.90 from" "$work/tables.txt" || fail "no first limit named"
python3 - "$work/survey.csv" <<'PY' || fail "the CSV's rows"
import csv, sys
runs = {}
for row in csv.DictReader(open(sys.argv[1])):
    runs.setdefault(row["run"], []).append((int(row["ranks"]), float(row["efficiency"]),
                                            float(row["wall_s"]), float(row["saves_s"])))
assert sorted(runs) == ["1000^3", "512^3"], f"the grids: {sorted(runs)}"
for name, rows in runs.items():
    assert [r[0] for r in rows] == [8, 16, 32, 64, 128, 256, 512], f"{name}: GPUs {rows}"
    assert all(0.0 < r[1] <= 1.0 for r in rows), f"{name}: efficiency out of (0, 1]: {rows}"
    # the wall may rise again where the groups' serial meeting outgrows the shots; the
    # efficiency never rises with the GPUs but where a resume save drops out (saves come
    # every rtm.resume_every seconds of the run): the ideal over the wall less the saves
    effs = [e * wall / (wall - saves) for _, e, wall, saves in rows]
    assert effs == sorted(effs, reverse=True), f"{name}: efficiency rising with GPUs: {effs}"
PY

# a real report: two shots of a small migration on the cpu backend
set_list=(--set grid.nx=32 --set grid.ny=32 --set grid.nz=32 --set time.steps=60
  --set boundary.width=6 --set shots.x_count=2 --set shots.y_count=1 --set shots.z=60
  --set receivers.z=60 --set model.interface_z=200 --set output.dir="$work" --quiet --force)
if ! "$rtm3d" model "$src/run/examples/migrate_small.ini" "${set_list[@]}" \
  --set output.name=observed; then
  fail "the small model run"
elif ! "$rtm3d" migrate "$src/run/examples/migrate_small.ini" "${set_list[@]}" \
  --set model.interface_z=auto --set rtm.observed="$work/observed.h5" --set output.name=image; then
  fail "the small migration"
elif ! python3 "$model" --report "$work/image.json" --grids 64 --gpus 1,2,4 > "$work/report.txt"; then
  fail "--report"
elif ! grep -qF "Per-shot costs from $work/image.json (" "$work/report.txt" ||
  ! grep -q "^| 4 | 1 | 1 x 4 | 250 |" "$work/report.txt"; then
  cat "$work/report.txt"
  fail "--report: the run not named, or not 1000 shots on 4 groups"
fi

if ! python3 "$model" --plot "$work/survey.csv" --svg "$work/survey.svg" > /dev/null ||
  [ "$(head -c 4 "$work/survey.svg")" != "<svg" ]; then
  fail "--plot --svg"
fi
if "$rtm3d" info 2>/dev/null | grep -q "figures on"; then
  "$rtm3d" plot --scaling "$work/survey.csv" -o "$work/survey.png" > /dev/null ||
    fail "rtm3d plot --scaling of the CSV"
fi
[ "$failures" -eq 0 ] || exit 1
echo "survey_model_script: passed"
