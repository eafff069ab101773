#!/usr/bin/env bash
# run/tools/tune_check.sh [sweep|defaults] [BUILD_DIR] - kernel.* = auto on the GPU machine
# one device call each:
#   sweep     build, ctest -L gpu (both phases; SKIP_TESTS=1 leaves it out), then `rtm3d tune` (every candidate; its own cache in a
#             temporary folder) for iso fp32, tti fp32 and tti fp16 (CASES: any of
#             EQUATION_PRECISION_N, vti too) on the bench decks at 512^3 and 256^3 (constant models): each tune's wall time, winner and the table
#             row it prints; CSVs tune_<case>.csv under $OUT (a winner that moves past the
#             noise goes into solver/tuning/kernel_table.csv, its figures into
#             run/results/kernels.md).
#   defaults  rtm3d bench of the same six with no kernel.* key and an empty tune cache (the
#             committed table alone) against the best of a sweep's CSVs
#             ($SWEEPS/tune_<case>.csv: the folder the sweep call brought back, carried
#             along); then rtm3d info's lines for auto.
# Short table last; logs under $OUT (or run/out/tune).
set -uo pipefail
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/device_env.sh" run/out/tune || exit 1
phase="${1:-sweep}"
build="${2:-build-tune}"
device_summary
device_build "$build" "$out/build.log" || exit 1
rtm3d="$build/app/rtm3d"
iso=(run/examples/bench_512.ini --set model.file= --set model.vp=2000)
tti=(run/examples/bench_tti_512.ini --set model.file= --set model.epsilon=0.2 --set model.delta=0.1
  --set model.theta=30 --set model.phi=20)
cases="${CASES:-iso_fp32_512 tti_fp32_512 tti_fp16_512 iso_fp32_256 tti_fp32_256 tti_fp16_256}"
skip_tests="${SKIP_TESTS:-0}" # 1: no ctest (a second call of the sweep)
deck() { # case -> the deck and its overrides in $args
  local eq prec n
  IFS=_ read -r eq prec n <<< "$1"
  if [ "$eq" = iso ]; then args=("${iso[@]}"); else args=("${tti[@]}"); fi
  args+=(--set "grid.nx=$n" --set "grid.ny=$n" --set "grid.nz=$n")
  [ "$prec" = fp16 ] && args+=(--set memory.model_precision=fp16)
  [ "$eq" = vti ] && args+=(--set physics.equation=vti)
}

[ "$skip_tests" = 1 ] || device_gpu_tests "$build" || failed=1
case "$phase" in
sweep)
  export RTM3D_CACHE_DIR="$out/cache"
  for c in $cases; do
    deck "$c"
    start=$SECONDS
    "$rtm3d" tune "${args[@]}" --time-limit "${TIME_LIMIT:-170}" --csv "$out/tune_$c.csv" > "$out/tune_$c.log" 2>&1 ||
      { failed=1; tail -3 "$out/tune_$c.log"; }
    wall=$((SECONDS - start))
    row "tune $c" "${wall} s wall; $(grep -E '^swept' "$out/tune_$c.log")"
    grep -E "^(1 |was auto|table row)" "$out/tune_$c.log" | tee -a "$summary"
  done
  # the cache is used: bench of the last case names it
  deck iso_fp32_256
  "$rtm3d" bench "${args[@]}" > "$out/bench_cached.log" 2>&1 || failed=1
  row "bench with the cache" "$(grep -o 'kernel.\* auto: [a-z ]*' "$out/bench_cached.log" | head -1)"
  ;;
defaults)
  export RTM3D_CACHE_DIR="$out/empty_cache"
  sweeps="${SWEEPS:?SWEEPS=the folder holding tune_CASE.csv from a sweep call}"
  for c in $cases; do
    deck "$c"
    "$rtm3d" bench "${args[@]}" > "$out/bench_$c.log" 2>&1 || { failed=1; tail -3 "$out/bench_$c.log"; }
    got=$(awk '/^best:/ {print $(NF-6)}' "$out/bench_$c.log")
    best=$(awk -F, 'NR > 1 && $10 == "yes" { m = $11 > $12 ? $11 : $12; if (m > b) { b = m; s = $5 " " $6 " " $7 "x" $8 " " $9 } }
      END { printf "%.0f %s", b, s }' "$sweeps/tune_$c.csv")
    row "bench $c (auto, table)" "$got MCells/s against the sweep's best $best: $(echo "$best" |
      awk -v g="$got" '{ printf "%.1f%%", 100 * g / $1 }')"
    grep -o 'kernel.\* auto: .*' "$out/bench_$c.log" | head -1 >> "$summary"
  done
  "$rtm3d" info > "$out/info.txt" 2>&1
  grep -A5 "kernel.\* = auto" "$out/info.txt" | tee -a "$summary"
  ;;
*) echo "usage: run/tools/tune_check.sh [sweep|defaults] [BUILD_DIR]" >&2; exit 2 ;;
esac
# the device tool brings back 8 files: the logs travel packed
(cd "$out" && tar czf logs.tar.gz --remove-files $(ls -d ./*.log cache 2>/dev/null))
echo
cat "$summary"
exit "$failed"
