#!/usr/bin/env bash
# run/experiments/tma_promotion.sh - does the tensor maps' L2 promotion hold the iso and tti
# kernels on the GPU machine (issue 34, item 5: the iso kernel reads 13.1 B a cell from the
# DRAM where its streams need 12)? tma_promotion.patch takes the halo maps' promotion from
# RTM3D_TMA_PROMOTION and the cell maps' from RTM3D_TMA_PROMOTION_CELLS (0, 64, 128 or 256
# bytes; 128 the product's since 2026-12-01, 256 before). `rtm3d bench` of iso 512^3
# (run/examples/bench_512.ini, a constant model) at the defaults and at each shape of SHAPES
# (STAGES:BLOCK_X:BLOCK_Y:ZBLOCK, default 3:128:8:32), and of tti 512^3 (epsilon 0.2, delta
# 0.1, theta 30, phi 20) at the defaults (TTI=0: not), for each HALO[:CELLS] of PROMOTIONS
# (default "256 128 64 0") in turn, ROUNDS times (default 2); SETS: more --set arguments for
# every bench (a grid size, say). Logs under $OUT (or run/out/tma_promotion); a row a bench.
set -uo pipefail
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/../tools/device_env.sh" run/out/tma_promotion || exit 1
device_summary
copy="$(mktemp -d)"
trap 'rm -rf "$copy"' EXIT
STAMPS=run/experiments/tma_promotion.patch device_build_stamped . "$copy" "$out/build.log" ||
  { row build FAILED; exit 1; }
row build ok
read -r -a extra <<<"${SETS:-}"
sets_of() { # the --set arguments of a case: iso (the defaults), tti, or a shape S:BX:BY:Z
  local stages bx by zblock
  case "$1" in
  iso) ;;
  tti) echo --set physics.equation=tti --set model.epsilon=0.2 --set model.delta=0.1 \
    --set model.theta=30 --set model.phi=20 ;;
  *) IFS=: read -r stages bx by zblock <<<"$1"
    echo --set kernel.halo=tma --set kernel.stages="$stages" --set kernel.block_x="$bx" \
      --set kernel.block_y="$by" --set kernel.zblock="$zblock" ;;
  esac
}
cases="iso ${SHAPES:-3:128:8:32}"
[ "${TTI:-1}" = 1 ] && cases+=" tti"
for round in $(seq "${ROUNDS:-2}"); do
  for promotion in ${PROMOTIONS:-256 128 64 0}; do
    IFS=: read -r halo cells <<<"$promotion"
    for case in $cases; do
      read -r -a sets <<<"$(sets_of "$case")"
      device_bench "$case promotion $promotion #$round" env RTM3D_TMA_PROMOTION="$halo" \
        RTM3D_TMA_PROMOTION_CELLS="${cells:-$halo}" timeout 120 "$copy/build/app/rtm3d" bench \
        run/examples/bench_512.ini --set model.file= "${sets[@]}" "${extra[@]}"
      row "$case, promotion $promotion, #$round" "$bench_figure"
    done
  done
done
step summary
cat "$summary"
