#!/usr/bin/env bash
# run/tools/multi_gpu_check.sh [BUILD_DIR] - the z-slab decomposition on a machine with 2 or
# more GPUs (one rank a GPU, bound by its rank on the node), in one or two calls:
#
#   PHASE=check    build; nvidia-smi topo -m; ctest -L LABELS (default gpu: the cuda ranks
#                  on GPUs of their own, each output to the bit against one rank); `rtm3d bench`
#                  of the iso and tti 512^3 decks on NP ranks (default: every GPU) for each
#                  transport in TRANSPORTS (default "shared staged"): the one-rank time, the
#                  ranks' time with the exchange overlapped, blocking and off, the strong-scaling
#                  efficiency and the share of the exchange hidden
#   PHASE=scaling  run/scaling.sh, unchanged, for iso and tti: strong scaling of 768^3
#                  (STRONG_N), weak scaling of 512^3 a GPU, ranks 1..NP, SCALING_STEPS
#                  steps (default 500), each transport in SCALING_TRANSPORTS (default shared)
#   PHASE=all      both (the default)
#
# Every run has NCCL_NVLS_ENABLE=0 in its environment (NVLink multicast stays off on shared
# hosts). Short table last; under $OUT (or run/out/multi_gpu) summary.txt, the scaling PNGs
# and logs.tar.gz (every log, JSON and CSV: the device tool returns at most 8 files).
set -uo pipefail
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/device_env.sh" run/out/multi_gpu || exit 1
build="${1:-build-mgpu}"
phase="${PHASE:-all}"
steps="${STEPS:-1000}"
summary="$out/summary.txt"
: >> "$summary"
failed=0
device_ranks
device_info >> "$summary"
row "GPUs" "$gpus; topology in topo.txt"

if [ ! -x "$build/app/rtm3d" ] || [ "$phase" != scaling ]; then
  device_build "$build" "$out/build.log" || exit 1
  row "build" "ok ($(grep -c -i warning "$out/build.log") warning lines)"
fi
rtm3d="$build/app/rtm3d"

if [ "$phase" = check ] || [ "$phase" = all ]; then
  ctest --test-dir "$build" -L "${LABELS:-gpu}" > "$out/ctest.log" 2>&1 || failed=1
  row "ctest -L '${LABELS:-gpu}'" "$(grep -E 'tests passed' "$out/ctest.log")"
  grep -E "Failed|\*\*\*" "$out/ctest.log" | tee -a "$summary"
  for deck in bench_512 bench_tti_512; do
    for transport in ${TRANSPORTS:-shared staged}; do
      name="${deck}_${transport}"
      mpirun_np "$np" "$rtm3d" bench "run/examples/$deck.ini" --set backend.name=cuda \
        --set model.file= --set model.vp=2000 --set bench.steps="$steps" \
        --set receivers.layout=none --set mpi.transport="$transport" --set output.dir="$out" \
        --set output.name="$name" > "$out/$name.log" 2>&1 || failed=1
      grep -E "^bench:|^  " "$out/$name.log" | sed "s/^/[$deck $transport] /" | tee -a "$summary"
    done
  done
fi

if [ "$phase" = scaling ] || [ "$phase" = all ]; then
  ranks=$(seq -s ' ' 1 "$np")
  for deck in bench_512 bench_tti_512; do
    for transport in ${SCALING_TRANSPORTS:-shared}; do
      for mode in strong weak; do
        nz=512
        [ "$mode" = strong ] && nz="${STRONG_N:-768}"
        dir="$out/scaling_${deck}_${transport}_$mode"
        RTM3D="$rtm3d" run/scaling.sh --ranks "$ranks" --mode "$mode" --out "$dir" \
          --launcher "mpirun --oversubscribe --bind-to none -x NCCL_NVLS_ENABLE -np {n}" \
          "run/examples/$deck.ini" --set backend.name=cuda --set model.file= --set model.vp=2000 \
          --set grid.nx="$nz" --set grid.ny="$nz" --set grid.nz="$nz" \
          --set time.steps="${SCALING_STEPS:-500}" --set mpi.transport="$transport" \
          > "$dir.log" 2>&1 || failed=1
        tail -n +2 "$dir/scaling.csv" 2>/dev/null | sed "s/^/[$deck $transport] /" | tee -a "$summary"
      done
    done
  done
fi
# everything but the summary and the plots in one archive
tar czf /tmp/multi_gpu_logs.tar.gz -C "$out" --exclude='*.h5' . &&
  find "$out" -mindepth 1 ! -name summary.txt ! -name '*.png' ! -type d -delete &&
  find "$out" -name '*.png' -path '*/scaling_*' -exec sh -c 'mv "$1" "$2/$(basename "$(dirname "$1")").png"' _ {} "$out" \; &&
  find "$out" -mindepth 1 -type d -empty -delete && mv /tmp/multi_gpu_logs.tar.gz "$out/logs.tar.gz"
echo
cat "$summary"
exit "$failed"
