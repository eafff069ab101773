#!/usr/bin/env bash
# run/experiments/filter_ab.sh [REV] [BUILD] - the image's Laplacian of the tree (linked from
# BUILD, default build: a cpu or cuda build of this tree, made first) against revision REV's
# (default c09cd15, before the filter was vectorised), on this machine: filter_ab.c's cell
# counts (non-zero exit when a cell differs) and 256^3 timings. The harness 7daafba's and
# d4ce7e1's messages quote.
set -euo pipefail
cd "$(dirname "$0")/../.."
rev="${1:-c09cd15}" build="${2:-build}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
git show "$rev:solver/rtm/filters.c" |
  sed 's/rtm_image_laplacian(/old_laplacian(/; s/int rtm_image_compensate(/int old_compensate(/' \
    >"$work/old_filters.c"
includes=()
for d in solver solver/grid solver/tuning "$build/solver/tuning" solver/mpi solver/physics \
  solver/points solver/traces solver/backend solver/cpu solver/rtm config config/status memory \
  "$build/generated"; do
  includes+=(-I"$d")
done
mpi=() mpi_libs=() # a build with MPI: its flags, from Open MPI's wrapper
if grep -q 'RTM3D_HAVE_MPI=1' "$build/build.ninja" 2>/dev/null; then
  read -ra mpi <<<"-DRTM3D_HAVE_MPI=1 $(mpicc --showme:compile)"
  read -ra mpi_libs <<<"$(mpicc --showme:link)"
fi
# the old filter reaches the tree's rtm_mpi_exchange_dense_planes and rtm_fd2_coeff
cc -O3 -DNDEBUG -ffp-contract=off -fopenmp -std=c11 "${mpi[@]}" "${includes[@]}" \
  run/experiments/filter_ab.c "$work/old_filters.c" -o "$work/filter_ab" \
  "$build/solver/librtm3d_solver.a" "$build/memory/librtm3d_memory.a" \
  "$build/config/librtm3d_config.a" "$build/config/librtm3d_status.a" "${mpi_libs[@]}" -lm
"$work/filter_ab"
