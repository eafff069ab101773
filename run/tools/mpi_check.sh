#!/usr/bin/env bash
# run/tools/mpi_check.sh [BUILD_DIR] - the z-slab decomposition on a GPU machine, one call:
# build, ctest -L mpi (cpu ranks, and cuda ranks sharing the one GPU, each to the bit
# against one rank), then `rtm3d model` of run/examples/bench_512.ini (iso, 512^3, STEPS
# steps, default 1000) by `rtm3d bench` under mpirun -np 2: rank 0 alone on the whole
# volume, then 2 ranks sharing the GPU with mpi.exchange = overlap, blocking and off: the
# times, the parallel efficiency and the share of the exchange's cost (blocking - off) that
# overlapping hides; with mpi.transport = shared (the default on one node) and staged. Two ranks on one GPU share its bandwidth: this measures the exchange,
# not a speed-up. Short table last; logs under $OUT (or run/out/mpi).
set -uo pipefail
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/device_env.sh" run/out/mpi || exit 1
build="${1:-build-mpi}"
steps="${STEPS:-1000}"
summary="$out/summary.txt"
: > "$summary"
failed=0
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
device_info >> "$summary"

device_build "$build" "$out/build.log" || exit 1
row "build" "ok ($(grep -c -i warning "$out/build.log") warning lines)"
ctest --test-dir "$build" -L mpi -V > "$out/ctest_mpi.log" 2>&1 || failed=1
row "ctest -L mpi" "$(grep -E 'tests passed' "$out/ctest_mpi.log")"
grep -E "= .*(iso|vti)1: |skipped|FAIL" "$out/ctest_mpi.log" | sed 's/^[0-9]*: //' | tee -a "$summary"

rtm3d="$build/app/rtm3d"
# rtm3d bench on 2 ranks: rank 0 alone on the whole volume, then the slabs with the
# exchange overlapped, blocking and off (its table, and $out/bench_TRANSPORT.json), with
# the planes through the node's shared window (the default) and as MPI messages
for transport in ${TRANSPORTS:-shared staged}; do
  mpirun --oversubscribe -np 2 "$rtm3d" bench run/examples/bench_512.ini \
    --set backend.name=cuda --set model.file= --set model.vp=2000 --set bench.steps="$steps" \
    --set receivers.layout=none --set mpi.transport="$transport" --set output.dir="$out" \
    --set output.name="bench_$transport" > "$out/bench_$transport.log" 2>&1 || failed=1
  grep -E "^bench:|^  " "$out/bench_$transport.log" | tee -a "$summary"
done
# MPS=1: the shared-window bench again with the two ranks' kernels in one MPS server (the
# way several ranks share a GPU in production), the daemon this script's own and stopped
if [ "${MPS:-0}" = 1 ] && command -v nvidia-cuda-mps-control > /dev/null; then
  export CUDA_MPS_PIPE_DIRECTORY="$out/mps_pipe" CUDA_MPS_LOG_DIRECTORY="$out/mps_log"
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  if nvidia-cuda-mps-control -d; then
    mpirun --oversubscribe -np 2 -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY \
      "$rtm3d" bench run/examples/bench_512.ini --set backend.name=cuda --set model.file= \
      --set model.vp=2000 --set bench.steps="$steps" --set receivers.layout=none \
      --set output.dir="$out" --set output.name=bench_mps > "$out/bench_mps.log" 2>&1 || failed=1
    echo quit | nvidia-cuda-mps-control
    grep -E "^bench:|^  " "$out/bench_mps.log" | sed 's/^/[MPS] /' | tee -a "$summary"
  else
    row "MPS" "the daemon did not start"
  fi
  unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
fi
echo
cat "$summary"
exit "$failed"
