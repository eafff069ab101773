#!/usr/bin/env bash
# run/tools/tti_ab.sh BASE_TREE - the tti/vti kernel of this tree against another source tree
# (BASE_TREE: a checkout of the commit before, e.g. `git archive HEAD | tar -x -C .base`,
# carried along by the device tool) on one GPU, in one call: both built (rtm3d only, in
# parallel), then `rtm3d bench` of run/examples/bench_tti_512.ini with the constant
# anisotropic model, kernel.* auto unless VARIANTS names settings, base and new interleaved
# ROUNDS times (default 2) so that clock drift hits both. VARIANTS: ";"-separated lists of
# --set arguments, default "fp32;fp16" (memory.model_precision). Logs under $OUT; a table
# of MCells/s last.
set -uo pipefail
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/device_env.sh" run/out/tti_ab || exit 1
base="$(cd "${1:?usage: run/tools/tti_ab.sh BASE_TREE}" && pwd)"
device_summary
[ -d "$base/.deps" ] || { [ -d .deps ] && cp -r .deps "$base/"; }
(cd "$base" && device_build build-base "$out/build_base.log") &
device_build build-new "$out/build_new.log" || exit 1
wait $! || exit 1
model=(--set model.file= --set model.epsilon=0.2 --set model.delta=0.1 --set model.theta=30
  --set model.phi=20)
IFS=';' read -r -a variants <<< "${VARIANTS:-memory.model_precision=fp32;memory.model_precision=fp16}"
for round in $(seq "${ROUNDS:-2}"); do
  for v in "${variants[@]}"; do
    sets=()
    for kv in $v; do sets+=(--set "$kv"); done
    for which in base new; do
      exe="build-new/app/rtm3d"
      [ "$which" = base ] && exe="$base/build-base/app/rtm3d"
      log="$out/bench_${which}.log"
      echo "== round $round $which $v" >> "$log"
      "$exe" bench run/examples/bench_tti_512.ini "${model[@]}" "${sets[@]}" >> "$log" 2>&1
      rate=$(grep -E "^best:" "$log" | tail -1 | sed -E 's/.*device: ([0-9]+) MCells.*= ([0-9.]+%).*/\1 \2/')
      row "$which $v (round $round)" "$rate"
    done
  done
done
echo
cat "$summary"
