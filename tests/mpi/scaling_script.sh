#!/usr/bin/env bash
# run/scaling.sh end to end on a small deck, 1 and 2 ranks, both modes: a CSV with the four
# runs (strong at grid.nz 24 twice, weak at 24 and 48), each first count's efficiency 1, and
# a PNG of the plot's size; a bad --mode is refused (exit 2).
# Usage: scaling_script.sh RTM3D SOURCE_DIR
set -eu
# shellcheck source=SCRIPTDIR/../app/cli_setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/../app/cli_setup.sh" "$1" "$2"
export OMP_NUM_THREADS=1
RTM3D="$rtm3d" "$src/run/scaling.sh" --ranks "1 2" --launcher "mpirun --oversubscribe -np {n}" \
  --out "$work/scaling" "$deck" --set backend.name=cpu --set grid.nx=32 --set grid.ny=32 \
  --set grid.nz=24 --set time.steps=20 --set boundary.width=4 --set source.x=auto \
  --set source.y=auto --set source.z=auto > "$work/out.txt" 2>&1 ||
  { echo "FAIL: scaling.sh failed:"; cat "$work/out.txt"; exit 1; }
csv="$work/scaling/scaling.csv"
cat "$csv"
[ "$(wc -l < "$csv")" -eq 5 ] || { echo "FAIL: expected a header and 4 rows"; exit 1; }
grep -q '^strong,1,24,.*,1.0000$' "$csv" && grep -q '^strong,2,24,' "$csv" &&
  grep -q '^weak,1,24,.*,1.0000$' "$csv" && grep -q '^weak,2,48,' "$csv" ||
  { echo "FAIL: the rows are not the runs asked for"; exit 1; }
# the plot: rtm3d's figure (800 x 560) when the build has PLplot, else the script's (640 x 420)
size="640 420"
"$rtm3d" info 2>/dev/null | grep -q "figures on" && size="800 560"
python3 - "$work/scaling/scaling.png" $size <<'PY'
import struct, sys
head = open(sys.argv[1], "rb").read(24)
assert head[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
size = struct.unpack(">II", head[16:24])
assert size == (int(sys.argv[2]), int(sys.argv[3])), f"not the plot's size: {size}"
PY
if RTM3D="$rtm3d" "$src/run/scaling.sh" --mode sideways "$deck" > /dev/null 2>&1; then
  echo "FAIL: --mode sideways was accepted"
  exit 1
else
  code=$?
  [ "$code" -eq 2 ] || { echo "FAIL: --mode sideways exited $code, not 2"; exit 1; }
fi
echo "scaling_script: passed"
