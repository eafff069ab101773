#!/usr/bin/env bash
# run/experiments/boundary_echo.sh [BUILD_DIR] - what the absorbing layer leaves at the
# quickstart (docs/modelling.md "The absorbing layer"): 20 receivers 100 m above the source
# (x 405 to 1165 m, inside a 40-cell layer too), traces of boundary.width W and
# boundary.reflection R against a run with the walls 100 cells farther away on every face
# (the same nodes: the origin moved by whole cells), relative L2 (rtm3d validate's rel_l2_err
# of /traces/p), on the cpu, at 8, 15 and 25 Hz. Scratch in /tmp/rtm3d_boundary_echo.
set -euo pipefail
cd "$(dirname "$0")/../.."
rtm3d="${1:-build}/app/rtm3d"
work=/tmp/rtm3d_boundary_echo
rm -rf "$work" && mkdir -p "$work"
for i in $(seq 0 19); do echo "$((405 + 40 * i)) 795 500"; done >"$work/receivers.txt"
deck=run/examples/quickstart.ini
common=(--set backend.name=cpu --set receivers.layout=file --set receivers.file="$work/receivers.txt"
  --set snapshots.every=0 --set output.dir="$work" --force --quiet)
for f in 8 15 25; do
  "$rtm3d" model "$deck" "${common[@]}" --set source.frequency=$f --set grid.nx=360 \
    --set grid.ny=360 --set grid.nz=320 --set grid.ox=-1000 --set grid.oy=-1000 \
    --set grid.oz=-1000 --set output.name="ref$f"
  for case in "20 1e-3" "20 1e-2" "20 2e-2" "30 1e-2" "40 1e-2"; do
    read -r width reflection <<<"$case"
    name="f${f}_w${width}_r${reflection}"
    "$rtm3d" model "$deck" "${common[@]}" --set source.frequency=$f \
      --set boundary.width="$width" --set boundary.reflection="$reflection" --set output.name="$name"
    echo "$f Hz, width $width, reflection $reflection: $("$rtm3d" validate "$work/$name.h5" \
      "$work/ref$f.h5" --datasets /traces/p 2>&1 | awk '$1 == "/traces/p" {print $3}')"
  done
done
