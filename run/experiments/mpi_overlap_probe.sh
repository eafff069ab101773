#!/usr/bin/env bash
# run/experiments/mpi_overlap_probe.sh [BUILD_DIR] - where the staged halo exchange of two
# ranks sharing one GPU spends its time (the aim: 90% hidden): the host MPI leg alone at the
# exchange's message size (mpi_sendrecv.c) under Open MPI's shared-memory transport with its
# single-copy mechanisms, the 512^3 iso bench (1 rank, 2 ranks off / blocking / overlap) with
# each, and an nsys timeline of the overlapped run when nsys is there. Logs under $OUT.
set -uo pipefail
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/../tools/device_env.sh" run/out/mpi_probe || exit 1
build="${1:-build-mpi}"
steps="${STEPS:-400}"
summary="$out/summary.txt"
: > "$summary"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
device_info >> "$summary"
device_build "$build" "$out/build.log" || exit 1
mpicc -O2 run/experiments/mpi_sendrecv.c -o "$out/mpi_sendrecv" || exit 1
# 4 planes of (512 + 2 x 16) x (512 + 8) floats: the 512^3 deck's message
bytes=$((4 * 544 * 520 * 4))
for mech in default cma none; do
  mca=()
  [ "$mech" != default ] && mca=(--mca btl_vader_single_copy_mechanism "$mech")
  row "sendrecv $mech" "$(mpirun --oversubscribe -np 2 "${mca[@]}" "$out/mpi_sendrecv" "$bytes" 200 2>&1 | tail -1)"
done
ompi_info --parsable 2>/dev/null | grep -E "single_copy|cuda_support" | head -5 >> "$out/ompi_info.txt"
rtm3d="$build/app/rtm3d"
bench() { # MECH: rtm3d bench on 2 ranks, its table
  local mca=()
  [ "$1" != default ] && mca=(--mca btl_vader_single_copy_mechanism "$1")
  mpirun --oversubscribe -np 2 "${mca[@]}" "$rtm3d" bench run/examples/bench_512.ini \
    --set backend.name=cuda --set model.file= --set model.vp=2000 --set bench.steps="$steps" \
    --set receivers.layout=none --set output.dir="$out" --set output.name="bench_$1" \
    > "$out/bench_$1.log" 2>&1
  grep -E "^bench:|^  " "$out/bench_$1.log" | sed "s/^/[$1] /" | tee -a "$summary"
}
bench default
bench cma
nsys_bin="$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -1)"
if [ -n "$nsys_bin" ]; then
  mpirun --oversubscribe -np 2 "$nsys_bin" profile -t cuda,mpi,osrt --force-overwrite true \
    -o "$out/overlap_rank%q{OMPI_COMM_WORLD_RANK}" "$rtm3d" model run/examples/bench_512.ini \
    --quiet --set backend.name=cuda --set model.file= --set model.vp=2000 --set time.steps=30 \
    --set snapshots.every=0 --set receivers.layout=none --set output.dir="$out" \
    --set output.name=nsys > "$out/nsys.log" 2>&1
  for r in 0 1; do
    "$nsys_bin" stats -q --report cuda_gpu_trace --format csv \
      -o "$out/trace_rank$r" "$out/overlap_rank$r.nsys-rep" >> "$out/nsys.log" 2>&1
  done
  row "nsys" "$(ls "$out" | grep -c csv) trace csv files ($nsys_bin)"
else
  row "nsys" "not found"
fi
echo
cat "$summary"
