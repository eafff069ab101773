#!/usr/bin/env bash
# run/migrate_example.sh - the small migration of run/examples/migrate_small.ini with the
# build the quickstart left (./run/quickstart.sh first): models the 4 shots' gathers, migrates
# them in the background velocity, and draws a vertical section of the image through the
# middle of the volume. Writes out/migrate_small_observed.h5, out/migrate_small.h5 (/image,
# /illumination), out/migrate_small.json and out/migrate_small_image.png.
set -euo pipefail
cd "$(dirname "$0")/.."
rtm3d=./build/app/rtm3d
[ -x "$rtm3d" ] || { echo "run ./run/quickstart.sh first (it builds $rtm3d)" >&2; exit 1; }
deck=run/examples/migrate_small.ini
# --force: a second run of the example replaces the first's files
"$rtm3d" model "$deck" --force --set output.name=migrate_small_observed "$@"
"$rtm3d" migrate "$deck" --force --set model.interface_z=auto "$@"
"$rtm3d" plot out/migrate_small.h5 /image --slice y=40 -o out/migrate_small_image.png
echo "migrate_example: wrote out/migrate_small.h5, out/migrate_small.json, out/migrate_small_image.png"
