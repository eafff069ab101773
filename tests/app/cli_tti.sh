#!/usr/bin/env bash
# VTI/TTI end to end on the cpu backend: a tti run writes /snapshots/p and /snapshots/q when
# snapshots.fields = p,q, and /traces/q beside /traces/p when receivers.fields = p,q (only p
# by default), which validate compares; q for iso is a config error (exit 2) for both keys;
# delta > epsilon is repaired with a warning (errors in model files: test_anisotropy);
# memory.model_precision = fp16 is in the run report, ignored with a warning for iso, and an
# error naming the coefficient when a value exceeds binary16 (test_model_precision).
# Usage: cli_tti.sh RTM3D SOURCE_DIR
set -eu
# shellcheck source=SCRIPTDIR/cli_setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/cli_setup.sh" "$@"
# --force: the runs below write into the same files in turn
small=(--force --set grid.nx=40 --set grid.ny=36 --set grid.nz=32 --set source.x=195
       --set source.y=175 --set source.z=155 --set receivers.z=100 --set receivers.y_first=175
       --set boundary.width=8 --set time.steps=60 --set snapshots.every=30
       --set backend.name=cpu --set physics.equation=tti --set model.epsilon=0.2
       --set model.delta=0.1 --set model.theta=35 --set model.phi=70)
loud=("${small[@]}")      # the runs whose warnings are checked
small+=(--quiet)

"$rtm3d" model "$deck" "${small[@]}" --set output.dir="$work" --set output.name=pq \
  --set snapshots.fields=p,q --set receivers.fields=p,q
"$rtm3d" plot "$work/pq.h5" /snapshots/q --index 1 --slice y=17 -o "$work/q.png"
"$rtm3d" plot "$work/pq.h5" /snapshots/p --index 1 --slice y=17 -o "$work/p.png"
"$rtm3d" plot "$work/pq.h5" /traces/q -o "$work/q_gather.png"
test -s "$work/q.png" && test -s "$work/p.png" && test -s "$work/q_gather.png"
"$rtm3d" validate "$work/pq.h5" "$work/pq.h5" > "$work/validate.txt"
grep -q "/traces/q" "$work/validate.txt" ||
  { echo "FAIL: validate did not compare /traces/q:"; cat "$work/validate.txt"; exit 1; }

"$rtm3d" model "$deck" "${small[@]}" --set output.dir="$work" --set output.name=p
if "$rtm3d" plot "$work/p.h5" /snapshots/q -o "$work/none.png" 2>/dev/null; then
  echo "FAIL: /snapshots/q written without snapshots.fields asking for it"
  exit 1
fi
if "$rtm3d" plot "$work/p.h5" /traces/q -o "$work/none.png" 2>/dev/null; then
  echo "FAIL: /traces/q written without receivers.fields asking for it"
  exit 1
fi
# the p gather does not depend on whether q is recorded beside it
"$rtm3d" validate "$work/p.h5" "$work/pq.h5" --rtol 0 --datasets /traces/p > /dev/null ||
  { echo "FAIL: /traces/p differs when q is recorded too"; exit 1; }

expect_exit() { # WANT MESSAGE-PART COMMAND...
  local want="$1" part="$2" status=0
  shift 2
  "$@" > "$work/out.txt" 2>&1 || status=$?
  if [ "$status" -ne "$want" ] || ! grep -q -- "$part" "$work/out.txt"; then
    echo "FAIL: '$*' exited $status (want $want) with:"
    cat "$work/out.txt"
    exit 1
  fi
}
expect_exit 2 "physics.equation = iso has no field q" "$rtm3d" model "$deck" "${small[@]}" \
  --set output.dir="$work" --set physics.equation=iso --set snapshots.fields=q
expect_exit 2 "receivers.fields = p,q: physics.equation = iso has no field q" \
  "$rtm3d" model "$deck" "${small[@]}" --set output.dir="$work" --set physics.equation=iso \
  --set receivers.fields=p,q
expect_exit 0 "delta is set to epsilon" "$rtm3d" model "$deck" "${loud[@]}" \
  --set output.dir="$work" --set model.delta=0.3 --set time.steps=5

"$rtm3d" model "$deck" "${small[@]}" --set output.dir="$work" --set output.name=half \
  --set memory.model_precision=fp16 --set time.steps=20
grep -q '"model_precision": "fp16"' "$work/half.json" ||
  { echo "FAIL: half.json does not say model_precision fp16"; exit 1; }
grep -q '"model_precision": "fp32"' "$work/p.json" ||
  { echo "FAIL: p.json does not say model_precision fp32"; exit 1; }
expect_exit 0 "memory.model_precision = fp16 is ignored by physics.equation = iso" \
  "$rtm3d" model "$deck" "${loud[@]}" --set output.dir="$work" --set physics.equation=iso \
  --set memory.model_precision=fp16 --set time.steps=5
# 1 km cells: vpx dt = 0.4 x 1000 m at dt = auto, vpx^2 dt^2 = 1.6e5 m^2 > 65504 (a 0.3 Hz
# wavelet, which such cells carry)
expect_exit 2 "vpx^2 dt^2 (vpx2dt2) = 160000 at \[z=0\]\[y=0\]\[x=0\] is beyond binary16" \
  "$rtm3d" model "$deck" "${small[@]}" --set output.dir="$work" --set memory.model_precision=fp16 \
  --set grid.dx=1000 --set grid.dy=1000 --set grid.dz=1000 --set time.steps=5 \
  --set source.frequency=0.3
echo "cli_tti: ok"
