#!/usr/bin/env bash
# run/survey.sh DECK [--set section.key=value ...] - the time to image of a survey against its
# floor: models the deck's shots (recording the gathers), then migrates them on each rank
# count of NP, one shot group a rank, and prints each migration's wall time beside its floor,
# two propagations a shot of the busiest shot group (twice the model run's `propagate`
# seconds, times ceil(shots / groups) / shots), with the migration's phases, its speed-up over
# the first count, and how far its image lies from the first count's (rtm3d validate; bar:
# 1e-6 relative L2; past it, or a failed run, the script exits 1).
#
# Environment:
#   RTM3D     the binary (default build/app/rtm3d)
#   OUT       the folder for the runs' files (default out/survey)
#   NP        rank counts for the migrations, each once, e.g. "1 2 4" (default 1; mpirun
#             when > 1)
#   OBSERVED  an earlier model run's file: skip the modelling and take its gathers and its
#             propagate seconds (for an A/B of two builds on the same gathers)
# The deck sets the shots (shots.layout = grid ...); --set arguments go to every run.
# Example, the 8-shot 512^3 survey of run/results/end_to_end.md, on one and two GPUs:
#   NP="1 2" run/survey.sh run/examples/bench_512.ini --set model.file= --set time.steps=1000 \
#     --set shots.layout=grid --set shots.x_count=4 --set shots.y_count=2 --set shots.z=200
set -euo pipefail
if [ $# -lt 1 ] || [ "$1" = --help ] || [ "$1" = -h ]; then
  sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'
  [ $# -ge 1 ] && exit 0 || exit 2
fi
deck="$1"
shift
rtm3d="${RTM3D:-build/app/rtm3d}"
out="${OUT:-out/survey}"
np="${NP:-1}"
export NCCL_NVLS_ENABLE="${NCCL_NVLS_ENABLE:-0}" # NVLink multicast off on shared hosts
[ -x "$rtm3d" ] || { echo "survey.sh: no rtm3d at $rtm3d (set RTM3D)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "survey.sh: needs python3 (reads the run reports)" >&2; exit 2; }
# NP: rank counts, each a positive integer and each once (every count's image is compared
# with the first count's, under its own name)
[ -n "${np// /}" ] || { echo "survey.sh: NP is empty: give rank counts, e.g. NP=\"1 2\"" >&2; exit 2; }
seen=" "
for ranks in $np; do
  [[ "$ranks" =~ ^[1-9][0-9]*$ ]] ||
    { echo "survey.sh: NP=\"$np\": '$ranks' is not a rank count (a positive integer)" >&2; exit 2; }
  [[ "$seen" == *" $ranks "* ]] &&
    { echo "survey.sh: NP=\"$np\": $ranks is given twice; give each count once" >&2; exit 2; }
  seen+="$ranks "
done
observed="${OBSERVED:-}"
if [ -n "$observed" ]; then
  [ -f "$observed" ] || { echo "survey.sh: OBSERVED=$observed: no such file" >&2; exit 2; }
  [ -f "${observed%.h5}.json" ] || {
    echo "survey.sh: OBSERVED=$observed: no run report ${observed%.h5}.json beside it (the" \
      "floor is its model run's propagate seconds)" >&2
    exit 2
  }
fi
mkdir -p "$out"

if [ -z "$observed" ]; then
  "$rtm3d" model "$deck" "$@" --quiet --force --set output.dir="$out" \
    --set output.name=survey_observed
  observed="$out/survey_observed.h5"
fi
# the model run's propagate seconds and shot count (a one-shot run's report has no "shots")
read -r propagate shot_count < <(python3 -c "import json, sys; r = json.load(open(sys.argv[1]))
print(r['timings_s']['propagate'], r.get('shots', {}).get('count', 1))" "${observed%.h5}.json")
failed=0

first_wall=""
for ranks in $np; do
  launch=("$rtm3d")
  groups=()
  if [ "$ranks" -gt 1 ]; then
    launch=(mpirun --oversubscribe --bind-to none -x NCCL_NVLS_ENABLE -np "$ranks" "$rtm3d")
    groups=(--set mpi.shot_groups="$ranks")
  fi
  name="survey_image_np$ranks"
  [ "$ranks" = "${np%% *}" ] && name=survey_image # the first count's, as before
  begin=$(date +%s.%N)
  "${launch[@]}" migrate "$deck" "$@" "${groups[@]}" --quiet --force --set output.dir="$out" \
    --set output.name="$name" --set rtm.observed="$observed"
  end=$(date +%s.%N)
  python3 - "$out/$name.json" "$propagate" "$begin" "$end" "$ranks" "$shot_count" \
    "$first_wall" <<'PY'
import json, math, sys
report, propagate, begin, end = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
ranks, shots = int(sys.argv[5]), int(sys.argv[6])
t = json.load(open(report))["timings_s"]
wall = end - begin
# two propagations a shot of the busiest group's shots (ceil(shots / groups) of them)
floor = 2 * propagate * math.ceil(shots / ranks) / shots
speed_up = f"; {float(sys.argv[7]) / wall:.2f}x the first count's" if sys.argv[7] else ""
print(f"survey: {ranks} shot group(s); model propagate {propagate:.2f} s; floor {floor:.2f} s "
      f"(two propagations a shot); migrate wall {wall:.2f} s = {wall / floor:.2f} x floor{speed_up}")
print("migrate phases: " + ", ".join(f"{k} {v:.2f} s" for k, v in t.items()
                                    if not k.endswith(("_min", "_mean", "_max"))))
PY
  wall="$(python3 -c "print($end - $begin)")"
  if [ -z "$first_wall" ]; then
    first_wall="$wall"
  else
    check=0
    said="$("$rtm3d" validate "$out/$name.h5" "$out/survey_image.h5" --rtol 1e-6 \
      --datasets /image 2>&1)" || check=$?
    echo "image against the first count's: $(grep -m1 -i "/image" <<<"$said" || echo "$said")"
    [ "$check" = 0 ] || failed=1 # apart by more than the bar, or not compared
  fi
done
exit "$failed"
