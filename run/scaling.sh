#!/usr/bin/env bash
# run/scaling.sh [options] DECK [--set section.key=value ...] - strong and weak scaling of
# `rtm3d model` across MPI ranks (z-slabs), into a CSV and a PNG of the parallel efficiency.
#
#   strong  the deck's volume on each rank count N: efficiency = t(1) / (N t(N))
#   weak    grid.nz = the deck's grid.nz times N on N ranks (the same slab a rank):
#           efficiency = t(1) / t(N)
# t is the run report's propagation time (timings_s.propagate: the time loop, without
# set-up and output); each run writes no snapshots and records no traces.
#
# Options:
#   --ranks "1 2 4 8"   rank counts (default "1 2 4"); the first is the reference
#   --mode M            strong, weak or both (default both)
#   --launcher "CMD"    how to start N ranks, {n} standing for N
#                       (default "mpirun -np {n}"; on Slurm "srun -n {n}", with
#                       --ntasks-per-node and --gpus-per-node set by the job)
#   --out DIR           where the runs, scaling.csv and scaling.png go (default out/scaling)
#   RTM3D=PATH          the binary (default ./build/app/rtm3d)
#
# On one machine `run/scaling.sh run/examples/quickstart.ini` runs unchanged (add
# --launcher "mpirun --oversubscribe -np {n}" when the ranks outnumber the cores; without
# OMP_NUM_THREADS each rank takes its share of the node's cores, a value set is kept). The
# cuda backend binds each rank to a GPU by its rank on the node (docs/mpi.md, "The
# exchange"; "Scaling studies").
set -euo pipefail
cd "$(dirname "$0")/.."
ranks="1 2 4"
mode=both
launcher="mpirun -np {n}"
out=out/scaling
rtm3d="${RTM3D:-./build/app/rtm3d}"
while [ $# -gt 0 ]; do
  case "$1" in
    --ranks) ranks="$2"; shift 2 ;;
    --mode) mode="$2"; shift 2 ;;
    --launcher) launcher="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] || { echo "usage: run/scaling.sh [options] DECK [--set k=v ...] (--help)" >&2; exit 2; }
deck="$1"
shift
case "$mode" in strong|weak|both) ;; *) echo "scaling.sh: --mode $mode: strong, weak or both" >&2; exit 2 ;; esac
[ -x "$rtm3d" ] || { echo "scaling.sh: no $rtm3d (build first, or set RTM3D)" >&2; exit 2; }
[ -r "$deck" ] || { echo "scaling.sh: cannot read $deck" >&2; exit 2; }
for n in $ranks; do
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "scaling.sh: --ranks: '$n' is not a rank count" >&2; exit 2; }
done
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT="${OMPI_ALLOW_RUN_AS_ROOT:-1}" OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM:-1}"

# the deck's grid.nz as the run resolves it (the --set list may change it)
"$rtm3d" model "$deck" "$@" --quiet --force --set time.steps=1 --set snapshots.every=0 \
  --set receivers.layout=none --set output.dir="$out" --set output.name=probe > "$out/probe.log" 2>&1 ||
  { echo "scaling.sh: the deck does not run:"; cat "$out/probe.log"; exit 1; } >&2
nz=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['grid']['n'][2])" "$out/probe.json")

csv="$out/scaling.csv"
echo "mode,ranks,nz,propagate_s,mcells_per_s,efficiency" > "$csv"
run() { # MODE N NZ SETTINGS...: one run, its line in the CSV
  local m="$1" n="$2" z="$3" name="$1_$2"
  shift 3
  local command="${launcher//\{n\}/$n}"
  echo "scaling.sh: $m, $n rank(s), grid.nz = $z" >&2
  # shellcheck disable=SC2086  # the launcher is words
  $command "$rtm3d" model "$deck" "$@" --quiet --force --set grid.nz="$z" --set snapshots.every=0 \
    --set receivers.layout=none --set output.dir="$out" --set output.name="$name" \
    > "$out/$name.log" 2>&1 || { echo "scaling.sh: $name failed:"; tail -5 "$out/$name.log"; exit 1; } >&2
  python3 - "$out/$name.json" "$m" "$n" "$z" >> "$csv" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"{sys.argv[2]},{sys.argv[3]},{sys.argv[4]},{r['timings_s']['propagate']:.6f},{r['mcells_per_s']:.1f},")
PY
}
for m in strong weak; do
  [ "$mode" = both ] || [ "$mode" = "$m" ] || continue
  for n in $ranks; do
    if [ "$m" = strong ]; then run "$m" "$n" "$nz" "$@"; else run "$m" "$n" $((nz * n)) "$@"; fi
  done
done
# efficiency against each mode's first rank count
python3 - "$csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
first = {}
for r in rows:
    first.setdefault(r["mode"], r)
for r in rows:
    ref = first[r["mode"]]
    t, t1 = float(r["propagate_s"]), float(ref["propagate_s"])
    n, n1 = int(r["ranks"]), int(ref["ranks"])
    r["efficiency"] = f"{(t1 * n1) / (t * n) if r['mode'] == 'strong' else t1 / t:.4f}"
with open(sys.argv[1], "w", newline="") as out:
    w = csv.DictWriter(out, fieldnames=list(rows[0].keys()), lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
PY
# the plot: rtm3d's own figure (PLplot) when the build has it, else the standard-library one
if "$rtm3d" info 2>/dev/null | grep -q "figures on"; then
  "$rtm3d" plot --scaling "$csv" -o "$out/scaling.png" > /dev/null
else
  python3 run/tools/plot_scaling.py "$csv" "$out/scaling.png"
fi
column -t -s, "$csv" 2>/dev/null || cat "$csv"
echo "scaling.sh: wrote $csv and $out/scaling.png"
