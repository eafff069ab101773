#!/usr/bin/env bash
# run/experiments/window_write.sh [DIR] - builds window_write.c and runs it into DIR
# (default /dev/shm) three times each with HDF5's chunks filled before their first write
# (its default) and not (NOFILL, as rtm3d's /traces): how fast a full receiver plane's
# streamed gathers can reach a file, fwrite against HDF5 chunks, and what the finiteness
# pass costs (issue 34).
set -euo pipefail
cd "$(dirname "$0")"
exe="${TMPDIR:-/tmp}/window_write"
# shellcheck disable=SC2046
cc -O2 -fopenmp window_write.c -o "$exe" $(pkg-config --cflags --libs hdf5 2>/dev/null ||
  echo "-I/usr/include/hdf5/serial -L/usr/lib/x86_64-linux-gnu/hdf5/serial -lhdf5")
for fill in filled nofill; do
  for _ in 1 2 3; do
    echo "$fill: $(if [ $fill = nofill ]; then NOFILL=1 "$exe" "${1:-/dev/shm}"; else "$exe" "${1:-/dev/shm}"; fi)"
  done
done
