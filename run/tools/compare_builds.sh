#!/usr/bin/env bash
# run/tools/compare_builds.sh OLD_RTM3D NEW_RTM3D [BACKEND]: runs the same small decks with two
# builds and requires every output bit for bit equal: iso, vti and tti modelling (snapshots,
# gathers, sinc points), resampled and dispersion-corrected gathers with their SEG-Y copy
# (where both builds have segyio), a survey of four shots, its migration with each
# reconstruction, and the same under mpirun on 2 ranks as z-slabs and as 2 shot groups. For
# refactors that must not change behaviour. BACKEND is cpu (default) or cuda. Exit 0 when
# every comparison is exact; the failing ones are listed. Needs mpirun for the 2-rank cases
# (skipped without it).
set -uo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 OLD_RTM3D NEW_RTM3D [cpu|cuda]" >&2
  exit 2
fi
old="$(realpath "$1")" new="$(realpath "$2")" backend="${3:-cpu}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/run"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS="${OMP_NUM_THREADS:-2}"

cat >"$work/deck.ini" <<DECK
[grid]
nx = 40
ny = 36
nz = 44
dx = 10
dy = 10
dz = 10
[time]
steps = 240
dt = 0.0014
[model]
vp = 2000
interface_z = 300
interface_dip = 10
vp_below = 2600
[source]
x = 183
y = 171
z = 95
frequency = 18
[receivers]
layout = plane
z = 60
x_step = 20
y_step = 30
[boundary]
width = 8
[backend]
name = $backend
[output]
name = run
DECK

failed=0 compared=0
# same NAME COMMAND-ARGS...: runs both builds in turn in one folder (the outputs name their
# paths, in the SEG-Y header for one), keeps each one's outputs, and compares them
same() {
  local name="$1"
  shift
  local side
  for side in old new; do
    local binary="$old"
    [ "$side" = new ] && binary="$new"
    mkdir -p "$work/$side"
    cp "$work/$side/observed.h5" "$work/run/observed.h5" 2>/dev/null
    (cd "$work/run" && "${@/#@RTM3D@/$binary}" --set output.dir="$work/run/out" \
      --set output.name="$name" --quiet >"$work/$side/$name.log" 2>&1) || {
      echo "FAIL $name: the $side build exited non-zero:"
      sed 's/^/    /' "$work/$side/$name.log" | tail -5
      failed=$((failed + 1))
      rm -rf "$work/run/out"
      return
    }
    mv "$work/run/out" "$work/$side/$name"
  done
  compared=$((compared + 1))
  local file verdict=ok
  [ "$(ls "$work/old/$name")" = "$(ls "$work/new/$name")" ] ||
    verdict="the file lists differ: $(ls "$work/old/$name" | tr '\n' ' ')/ $(ls "$work/new/$name" | tr '\n' ' ')"
  for file in "$work/old/$name"/*; do
    local base="${file##*/}" other="$work/new/$name/${file##*/}"
    case "$base" in
    *.json | *.lock) continue ;; # the report carries timings
    *.h5)
      "$new" validate "$other" "$file" --rtol 0 --atol 0 >"$work/validate.log" 2>&1 ||
        { verdict="$base differs"; sed 's/^/    /' "$work/validate.log" | grep -v " 0 " | head -5; } ;;
    *) cmp -s "$file" "$other" || verdict="$base differs" ;;
    esac
  done
  if [ "$verdict" = ok ]; then
    echo "same $name"
  else
    echo "FAIL $name: $verdict"
    failed=$((failed + 1))
  fi
}

deck="$work/deck.ini"
survey=(--set shots.layout=grid --set shots.x_count=2 --set shots.y_count=2 --set shots.z=60)
same iso @RTM3D@ model "$deck" --set snapshots.every=40
same vti @RTM3D@ model "$deck" --set physics.equation=vti --set model.epsilon=0.2 \
  --set model.delta=0.1 --set snapshots.every=60
same tti @RTM3D@ model "$deck" --set physics.equation=tti --set model.epsilon=0.2 \
  --set model.delta=0.1 --set model.theta=30 --set model.phi=20 --set snapshots.every=60
segy=() # the SEG-Y copy where both builds have segyio
if "$old" info 2>&1 | grep -q "SEG-Y on" && "$new" info 2>&1 | grep -q "SEG-Y on"; then
  segy=(--set output.segy=true)
fi
same resampled @RTM3D@ model "$deck" --set output.trace_dt=0.004 "${segy[@]}" \
  --set time.dispersion_correction=full --set points.interpolation=trilinear
same traces_warped @RTM3D@ model "$deck" --set time.dispersion_correction=traces
same survey @RTM3D@ model "$deck" "${survey[@]}"
for side in old new; do cp "$work/$side/survey/survey.h5" "$work/$side/observed.h5"; done
migrate=(--set rtm.observed=observed.h5 --set model.interface_z=auto)
for how in snapshots boundary checkpoint; do
  same "migrate_$how" @RTM3D@ migrate "$deck" "${survey[@]}" "${migrate[@]}" \
    --set rtm.reconstruction=$how
done
same migrate_full @RTM3D@ migrate "$deck" "${survey[@]}" "${migrate[@]}" \
  --set time.dispersion_correction=full --set rtm.shot_images=true
if command -v mpirun >/dev/null; then
  mpi=(mpirun --oversubscribe -np 2)
  same mpi_slabs "${mpi[@]}" @RTM3D@ model "$deck" --set snapshots.every=80
  same mpi_survey "${mpi[@]}" @RTM3D@ model "$deck" "${survey[@]}"
  same mpi_groups "${mpi[@]}" @RTM3D@ model "$deck" "${survey[@]}" --set mpi.shot_groups=2
  same mpi_migrate "${mpi[@]}" @RTM3D@ migrate "$deck" "${survey[@]}" "${migrate[@]}" \
    --set rtm.reconstruction=checkpoint
  same mpi_migrate_groups "${mpi[@]}" @RTM3D@ migrate "$deck" "${survey[@]}" "${migrate[@]}" \
    --set mpi.shot_groups=2
else
  echo "(no mpirun: the 2-rank cases skipped)"
fi
echo "compare_builds: $compared compared, $failed failed ($backend backend)"
[ "$failed" -eq 0 ]
