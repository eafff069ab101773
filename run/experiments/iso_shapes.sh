#!/usr/bin/env bash
# run/experiments/iso_shapes.sh - `rtm3d bench` of iso 512^3 (run/examples/bench_512.ini, a
# constant model) at each tma shape of SHAPES on the GPU machine, ROUNDS times alternated
# (default 2), for issue 34's item 5 (the iso kernel at the H200's bandwidth). A shape is
# STAGES:BLOCK_X:BLOCK_Y:ZBLOCK; the default list is the table's shape (3:128:8:32) beside
# deeper pipelines and other tiles. The product's tma kernel takes 2 to 4 stages:
# iso_stages.patch (beside this script) adds an instance of 5, and the script builds a copy
# of the tree with it applied (device_build_stamped: COPY/build). SETS="key=value ...": more
# keys for every bench (another grid: SETS="grid.nx=256 grid.ny=256 grid.nz=256"). Logs
# under $OUT (or run/out/iso_shapes; the benches' output in bench.log), a row a bench last.
set -uo pipefail
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/../tools/device_env.sh" run/out/iso_shapes || exit 1
device_summary
copy="$(mktemp -d)" work="$(mktemp)"
trap 'rm -rf "$copy" "$work"' EXIT
STAMPS=run/experiments/iso_stages.patch device_build_stamped . "$copy" "$out/build.log" ||
  { row build FAILED; exit 1; }
sets=()
for kv in ${SETS:-}; do sets+=(--set "$kv"); done
shapes="${SHAPES:-3:128:8:32 4:128:8:32 5:128:8:32 4:128:4:32 5:128:4:32 4:64:8:32 5:64:8:32
  4:64:16:32 3:128:8:48 4:128:8:48 4:128:8:64}"
for round in $(seq "${ROUNDS:-2}"); do
  for shape in $shapes; do
    IFS=: read -r stages bx by zblock <<<"$shape"
    echo "== $shape #$round" >>"$out/bench.log"
    "$copy/build/app/rtm3d" bench run/examples/bench_512.ini --set model.file= \
      --set kernel.halo=tma --set kernel.stages="$stages" --set kernel.block_x="$bx" \
      --set kernel.block_y="$by" --set kernel.zblock="$zblock" "${sets[@]}" >"$work" 2>&1
    cat "$work" >>"$out/bench.log"
    row "$shape #$round" "$(grep -E "MCells/s|copy" "$work" | tail -2 | tr '\n' ' ')"
  done
done
step summary
cat "$summary"
