#!/usr/bin/env bash
# run/tools/arch_check.sh STEP[,STEP...] - the architecture issue's evidence on a GPU
# machine: this tree against a baseline tree (a `git archive` tarball carried in
# .baseline/, default .baseline/e21e7dd.tar.gz, BASELINE= to choose), built the same way,
# measured in the same call.
#
#   build      configure + build both trees (Release, sm_90; offline deps from .deps/)
#   decks      the quickstart, an iso, a vti and a tti deck (constant anisotropic media,
#              off-grid source, p and q, resampled gathers) on the cpu backend, the cuda
#              backend's defaults and its tma kernel, with each build: every dataset of
#              this tree's output against the baseline's, `rtm3d validate --rtol 0 --atol 0`
#   gputests   ctest -L gpu of this tree (test_cuda_backend, test_cuda_tti, test_traces_gpu)
#   gates      the iso and tti gates (run/examples/bench_512.ini, bench_tti_512.ini, on a
#              constant model: the GPU machine has no h5py for the layered ones), baseline
#              and this tree alternately, REPEATS times (default 2)
#   ncu        instructions executed per cell (ncu smsp__inst_executed.sum, one 512^3 step)
#              of iso_zmarch (ldgsts), iso_zmarch_tma, tti_zmarch (ldgsts), tti_zmarch_tma,
#              each build
#   sanitizer  compute-sanitizer memcheck (50 steps) and racecheck (20 steps, tti halo
#              variants) over this tree's GPU tests, one memory strategy per variant
#
# Logs under $OUT (or run/out/arch); the tables of each step are appended to summary.txt
# and printed last. Exit status non-zero when a build, a comparison or a test failed.
#   device tool: run/tools/arch_check.sh build,decks,gputests   (carry .deps and .baseline)
set -uo pipefail
steps="${1:-build,decks,gputests}"
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/device_env.sh" run/out/arch || exit 1
baseline_tar="${BASELINE:-.baseline/e21e7dd.tar.gz}"
base_src=/tmp/rtm3d_baseline
base_build="$base_src/build"
new_build=build-arch
summary="$out/summary.txt"
failed=0

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
row() { printf '%-44s %s\n' "$1" "$2" | tee -a "$summary"; }
has_step() { [[ ",$steps," == *",$1,"* ]]; }

build_tree() { # source dir, build dir, log name
  (cd "$1" && device_configure "$2") > "$out/$3.log" 2>&1 && ninja -C "$2" >> "$out/$3.log" 2>&1
}

if has_step build; then
  device_info >> "$summary"
  rm -rf "$base_src" && mkdir -p "$base_src" && tar -xzf "$baseline_tar" -C "$base_src" ||
    { echo "cannot unpack $baseline_tar"; exit 1; }
  t0=$SECONDS
  build_tree "$base_src" "$base_build" build_baseline || { tail -20 "$out/build_baseline.log"; exit 1; }
  build_tree "$PWD" "$PWD/$new_build" build_new || { grep -E "error|FAILED" "$out/build_new.log" | head -20; exit 1; }
  row "build both trees" "ok in $((SECONDS - t0)) s ($(grep -c -i warning "$out/build_new.log") warning lines here)"
fi

# Decks: name and --set overrides on run/examples/quickstart.ini.
aniso=(--set model.epsilon=0.2 --set model.delta=0.1 --set snapshots.fields=p,q
  --set receivers.fields=p,q)
declare -A deck
deck[quickstart]=""
deck[iso]="--set source.x=803.7 --set source.y=781.2 --set source.z=611.9 --set output.trace_dt=0.004"
deck[vti]="--set physics.equation=vti ${aniso[*]} --set source.x=803.7 --set source.z=611.9"
deck[tti]="--set physics.equation=tti ${aniso[*]} --set model.theta=30 --set model.phi=20 --set source.y=781.2"
backends=(cpu cuda cuda-tma)
backend_set() { # backend -> --set options
  case "$1" in
  cpu) echo "--set backend.name=cpu" ;;
  cuda) echo "--set backend.name=cuda" ;;
  cuda-tma) echo "--set backend.name=cuda --set kernel.halo=tma --set kernel.stages=3 --set kernel.block_x=32 --set kernel.block_y=8 --set kernel.zblock=32" ;;
  esac
}

if has_step decks; then
  work=/tmp/rtm3d_arch_decks
  rm -rf "$work" && mkdir -p "$work"
  : > "$out/decks.log"
  for name in quickstart iso vti tti; do
    for backend in "${backends[@]}"; do
      for tree in baseline new; do
        bin="$new_build/app/rtm3d"
        [ "$tree" = baseline ] && bin="$base_build/app/rtm3d"
        # shellcheck disable=SC2086,SC2046
        OMP_NUM_THREADS=16 "$bin" model run/examples/quickstart.ini --quiet ${deck[$name]} \
          $(backend_set "$backend") --set output.dir="$work" \
          --set output.name="${name}_${backend}_$tree" >> "$out/decks.log" 2>&1 ||
          { row "$name $backend $tree" "RUN FAILED"; failed=1; }
      done
      "$new_build/app/rtm3d" validate "$work/${name}_${backend}_new.h5" \
        "$work/${name}_${backend}_baseline.h5" --rtol 0 --atol 0 > "$work/v.txt" 2>&1
      rc=$?
      cat "$work/v.txt" >> "$out/decks.log"
      [ $rc -eq 0 ] || failed=1
      row "bitwise $name $backend (new vs baseline)" \
        "exit $rc: $(grep -E '^validate:' "$work/v.txt")"
    done
  done
fi

if has_step gputests; then
  t0=$SECONDS
  ctest --test-dir "$new_build" -L gpu --output-on-failure > "$out/ctest_gpu.log" 2>&1 || failed=1
  row "ctest -L gpu (this tree)" "$(grep -E 'tests passed' "$out/ctest_gpu.log") in $((SECONDS - t0)) s"
  grep -E "^\s+[0-9]+ - .*(Failed|Timeout|Skipped)" "$out/ctest_gpu.log" | tee -a "$summary"
fi

constant_iso=(--set model.file=)
constant_tti=(--set model.file= --set model.epsilon=0.2 --set model.delta=0.1
  --set model.theta=30 --set model.phi=20)
if has_step gates; then
  : > "$out/gates.log"
  for repeat in $(seq "${REPEATS:-2}"); do
    for tree in baseline new; do
      bin="$new_build/app/rtm3d"
      [ "$tree" = baseline ] && bin="$base_build/app/rtm3d"
      for gate in iso tti; do
        deck_file=run/examples/bench_512.ini
        model=("${constant_iso[@]}")
        if [ "$gate" = tti ]; then deck_file=run/examples/bench_tti_512.ini; model=("${constant_tti[@]}"); fi
        line="$(timeout 150 "$bin" bench "$deck_file" --quiet "${model[@]}" 2>&1 |
          tee -a "$out/gates.log" | grep -E '^best|error' | head -1)"
        row "gate $gate $tree (run $repeat)" "${line#best: }"
      done
    done
  done
fi

if has_step ncu; then
  : > "$out/ncu.log"
  # kernel regex, deck, --set options
  profile() {
    local label="$1" kernel="$2" deck_file="$3"
    shift 3
    for tree in baseline new; do
      bin="$new_build/app/rtm3d"
      [ "$tree" = baseline ] && bin="$base_build/app/rtm3d"
      timeout 200 ncu --clock-control none -k "regex:$kernel" --launch-skip 3 --launch-count 1 \
        --metrics smsp__inst_executed.sum,gpu__time_duration.sum "$bin" bench "$deck_file" \
        --quiet --set bench.warmup=3 --set bench.steps=1 "$@" > "$out/ncu_one.txt" 2>&1
      { echo "#### $label $tree"; cat "$out/ncu_one.txt"; } >> "$out/ncu.log"
      local inst
      inst="$(awk '/smsp__inst_executed.sum/ { v = $NF; gsub(",", "", v); print v }' "$out/ncu_one.txt" | head -1)"
      # warp instructions per cell: 512^3 interior cells
      row "ncu $label $tree" "$(awk -v i="${inst:-0}" 'BEGIN { printf "%.2f warp instructions per cell (%s)", i / 512^3, i }')"
    done
  }
  # every shape named in full: the bench decks no longer set kernel.* (auto decides there)
  profile "iso_zmarch ldgsts 128x8 z32 s2" "iso_zmarch" run/examples/bench_512.ini "${constant_iso[@]}" \
    --set kernel.halo=ldgsts --set kernel.stages=2 --set kernel.block_x=128 --set kernel.block_y=8 \
    --set kernel.zblock=32
  profile "iso_zmarch_tma 128x8 z32 s3" "iso_zmarch_tma" run/examples/bench_512.ini "${constant_iso[@]}" \
    --set kernel.halo=tma --set kernel.stages=3 --set kernel.block_x=128 --set kernel.block_y=8 \
    --set kernel.zblock=32
  profile "tti_zmarch ldgsts 32x8 z32 s3" "tti_zmarch" run/examples/bench_tti_512.ini "${constant_tti[@]}" \
    --set kernel.halo=ldgsts --set kernel.stages=3 --set kernel.block_x=32 --set kernel.block_y=8 \
    --set kernel.zblock=32
  profile "tti_zmarch_tma 64x4 z64 s3" "tti_zmarch_tma" run/examples/bench_tti_512.ini "${constant_tti[@]}" \
    --set kernel.halo=tma --set kernel.stages=3 --set kernel.block_x=64 --set kernel.block_y=4 \
    --set kernel.zblock=64
  rm -f "$out/ncu_one.txt"
fi

if has_step sanitizer; then
  for tool in memcheck racecheck; do
    steps_n=50 filter=""
    if [ "$tool" = racecheck ]; then steps_n=20; filter="test_tti_every_variant"; fi
    for test in test_cuda_backend test_cuda_tti; do
      [ "$tool" = racecheck ] && [ "$test" = test_cuda_backend ] && filter=""
      [ "$tool" = racecheck ] && [ "$test" = test_cuda_tti ] && filter="test_tti_every_variant"
      RTM3D_TEST_STEPS=$steps_n RTM3D_TEST_FEW=1 RTM3D_TEST_FILTER="$filter" \
        timeout "${SANITIZER_TIMEOUT:-240}" compute-sanitizer --tool "$tool" --error-exitcode 3 \
        "$new_build/tests/gpu/$test" > "$out/sanitizer_${tool}_$test.log" 2>&1
      rc=$?
      [ $rc -eq 0 ] || failed=1
      row "compute-sanitizer $tool $test" "exit $rc: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/sanitizer_${tool}_$test.log" | tail -1)"
    done
  done
fi

echo
cat "$summary"
exit "$failed"
