#!/usr/bin/env bash
# run/tools/kernel_ab.sh BASE_TREE - the kernels of this tree against another source tree
# (BASE_TREE: `git archive COMMIT | tar -x -C .probe/base-src`, carried by the device tool)
# on one GPU, in one call: both built in parallel, ctest -L gpu of this tree (TESTS=0 skips
# it; TESTS=patch runs the patched build's instead), then `rtm3d bench` of each case, base
# and tree alternated ROUNDS times (default 2), so that clock drift hits both. A case is
# "name|deck|key=value ..." (";"-separated in CASES); the default: iso 512^3
# (run/examples/bench_512.ini) and tti 512^3 with the anisotropic constants of
# run/results/kernels.md, both on constant models with kernel.* auto. PATCH="FILE ..."
# (absolute paths): a third side, this tree with the patches applied in turn (experiments:
# run/experiments/*.patch), built beside the others and benched after them. Logs under $OUT
# (or run/out/kernel_ab); a row a bench (MCells/s, % of the copy measured by that bench)
# last.
set -uo pipefail
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/device_env.sh" run/out/kernel_ab || exit 1
base_src="$(realpath "${1:?usage: run/tools/kernel_ab.sh BASE_TREE}")"
device_summary
sides=(base new)
if [ -n "${PATCH:-}" ]; then
  patched="$(mktemp -d)"
  trap 'rm -rf "$patched"' EXIT
  tar --exclude='./build*' --exclude=./.probe --exclude=./.git -cf - . | tar -xf - -C "$patched"
  for file in $PATCH; do # several: applied in their order
    (cd "$patched" && patch -s -p1 <"$file") || { row patch "$file not applied"; exit 1; }
  done
  (cd "$patched" && device_build build-patch "$out/build_patch.log") &
  patch_build=$!
  sides+=(patch)
fi
device_build_pair "$base_src" || exit 1
if [ -n "${PATCH:-}" ]; then
  wait "$patch_build" || { row "build (patch)" FAILED; exit 1; }
fi
case "${TESTS:-new}" in # new (or 1): this tree's build; patch: the patched build's; 0: none
  new | 1) step "ctest -L gpu" && { device_gpu_tests build-new || failed=1; } ;;
  patch) step "ctest -L gpu (patch)" && { device_gpu_tests "$patched/build-patch" || failed=1; } ;;
esac
default_cases="iso|run/examples/bench_512.ini|model.file=;tti|run/examples/bench_tti_512.ini|model.file= model.epsilon=0.2 model.delta=0.1 model.theta=30 model.phi=20"
IFS=';' read -r -a cases <<<"${CASES:-$default_cases}"
for round in $(seq "${ROUNDS:-2}"); do
  for c in "${cases[@]}"; do
    IFS='|' read -r name deck keys <<<"$c"
    sets=()
    for kv in $keys; do sets+=(--set "$kv"); done
    for side in "${sides[@]}"; do
      exe=build-new/app/rtm3d
      [ "$side" = base ] && exe="$base_src/build-base/app/rtm3d"
      [ "$side" = patch ] && exe="$patched/build-patch/app/rtm3d"
      "$exe" bench "$deck" "${sets[@]}" >"$out/bench_one.log" 2>&1
      status=$?
      { echo "== $name $side #$round (exit $status)"; cat "$out/bench_one.log"; } >>"$out/bench.log"
      rate=$(grep -E "^best:" "$out/bench_one.log" | tail -1 |
        sed -E 's/.*: ([0-9]+) MCells\/s = ([0-9.]+%).*/\1 \2/')
      row "$name $side #$round" "${rate:-failed (exit $status)}"
      [ "$status" = 0 ] || failed=1
    done
  done
done
echo
cat "$summary"
exit "${failed:-0}"
