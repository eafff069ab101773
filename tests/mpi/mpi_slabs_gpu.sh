#!/usr/bin/env bash
# `rtm3d model` across z-slabs on the cuda backend (planes staged through pinned host
# memory, on a copy stream while the interior is computed; on 2 ranks also blocking): 2 and
# 3 ranks (sharing the GPUs when there are fewer) give the snapshots and traces of one cuda
# rank to the bit (validate --rtol 0 --atol 0), iso with the source and receivers straddling
# the 2-rank cut and vti with two shots recording p and q (through the node's shared window,
# as MPI messages, mpi.transport = staged, with the report's halo line checked, and in 2 shot
# groups of one rank each). With 2 GPUs or more the default is NCCL, GPU to GPU (checked, and
# blocking too); ranks sharing a GPU refuse mpi.transport = nccl; cuda-aware runs where the
# MPI takes device memory and is refused, saying why, where it does not;
# and the small migration's image on 2 cuda ranks equals one cuda rank's, with snapshots and
# with the boundary reconstruction (device and pinned stores; 6 ranks, two of them storing
# no shell cell). Exits 77 (skipped) without a GPU.
# Usage: mpi_slabs_gpu.sh RTM3D SOURCE_DIR MPIEXEC
set -eu
# shellcheck source=SCRIPTDIR/../app/cli_setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/../app/cli_setup.sh" "$1" "$2"
mpiexec="$3"
# shellcheck source=SCRIPTDIR/mpi_setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/mpi_setup.sh" cuda
if ! "$rtm3d" model "$deck" --quiet --set backend.name=cuda --set grid.nx=16 --set grid.ny=16 \
  --set grid.nz=16 --set boundary.width=2 --set time.steps=2 --set source.x=auto \
  --set source.y=auto --set source.z=auto --set receivers.layout=none --set snapshots.every=0 \
  --set output.dir="$work" --set output.name=probe > /dev/null 2>&1; then
  echo "mpi_slabs_gpu: no usable GPU, skipped"
  exit 77
fi
run 1 iso1 "${iso[@]}"
for np in 2 3; do
  run "$np" "iso$np" "${iso[@]}"
  same "iso$np" iso1
done
run 2 iso2b "${iso[@]}" --set mpi.exchange=blocking
same iso2b iso1
run 1 vti1 "${vti[@]}"
run 2 vti2 "${vti[@]}"
same vti2 vti1
halo_lines() { # RUN BELOW ABOVE BYTES: the report's line of ranks 0 and 1
  for want in "rank 0: .*halo below none, above $2, buffers $4 bytes" \
    "rank 1: .*halo below $3, above none, buffers $4 bytes"; do
    grep -q "$want" "$work/$1.json" ||
      { echo "FAIL: $1.json: no '$want':"; grep "rank " "$work/$1.json"; exit 1; }
  done
}
gpus=$("$rtm3d" info | grep -c '^GPU [0-9]*:' || true)
nccl=$("$rtm3d" info | grep -c '^NCCL: *NCCL [0-9]' || true)
# a rank's halo buffers hold, for each of p and q, R = 4 planes of 36 x 32 interior cells a
# side, 6 sides' worth (incoming: two sets of two sides; outgoing: two sides):
# 6 x 2 x 4 x 1152 floats = 221184 bytes; on one node through the shared window, the
# default where ranks share a GPU; with a GPU each (and NCCL built) GPU to GPU, no buffers
if [ "$gpus" -ge 2 ] && [ "$nccl" -ge 1 ]; then
  halo_lines vti2 nccl nccl 0
  run 2 vti2n "${vti[@]}" --set mpi.transport=nccl --set mpi.exchange=blocking
  same vti2n vti1
  run 2 iso2n "${iso[@]}" --set mpi.transport=nccl
  same iso2n iso1
  run 2 vti2w "${vti[@]}" --set mpi.transport=shared
  same vti2w vti1
  halo_lines vti2w shared shared 221184
else
  halo_lines vti2 shared shared 221184
fi
if [ "$nccl" -ge 1 ]; then # one rank more than the GPUs: two share one
  refused 1 "mpi.transport = nccl: ranks [0-9]* and [0-9]* share one GPU" $((gpus + 1)) model \
    "$deck" "${iso[@]}" --set mpi.transport=nccl
fi
# device memory as MPI messages where the MPI says it takes them, else refused saying why
if "$rtm3d" info | grep -q '^CUDA-aware: *yes'; then
  run 2 iso2c "${iso[@]}" --set mpi.transport=cuda-aware
  same iso2c iso1
  run 2 vti2c "${vti[@]}" --set mpi.transport=cuda-aware --set mpi.exchange=blocking
  same vti2c vti1
else
  refused 1 "mpi.transport = cuda-aware: does this MPI take device memory? no" 2 model "$deck" \
    "${iso[@]}" --set mpi.transport=cuda-aware
fi
run 2 vti2s "${vti[@]}" --set mpi.transport=staged
same vti2s vti1
grep -q "rank 0: .*halo below none, above staged" "$work/vti2s.json" ||
  { echo "FAIL: vti2s.json: mpi.transport = staged is not what ran"; exit 1; }
# shot groups: 2 ranks in 2 groups, each a whole volume on the shared GPU, one shot each
run 2 vti2g "${vti[@]}" --set mpi.shot_groups=2
same vti2g vti1
# sinc points (8^3 taps) on cuda against the cpu reference, the source and receivers off the
# nodes (validate's default 1e-5 relative L2)
"$rtm3d" model "$deck" "${iso[@]}" --set backend.name=cpu --set points.interpolation=sinc \
  --set output.dir="$work" --set output.name=sinc_cpu
run 1 sinc_cuda "${iso[@]}" --set points.interpolation=sinc
"$rtm3d" validate "$work/sinc_cuda.h5" "$work/sinc_cpu.h5" > "$work/sinc.validate" ||
  { echo "FAIL: sinc points on cuda differ from the cpu's:"; cat "$work/sinc.validate"; exit 1; }
echo "sinc_cuda ~ sinc_cpu: $(tail -1 "$work/sinc.validate")"
# and across the 2-rank cut (the receivers recorded in parts), to the bit against one rank
run 2 sinc_cuda2 "${iso[@]}" --set points.interpolation=sinc
same sinc_cuda2 sinc_cuda
# migrate: the small example's survey on 2 cuda ranks against one
model_observed
migrate 1 image1
migrate 2 image2
same image2 image1
# rtm.reconstruction = boundary on cuda ranks: each stores its part of the shell (device
# memory, and pinned host memory through the ring of device buffers), the rebuilt level's
# planes sent after the restore
migrate 1 boundary1 --set rtm.reconstruction=boundary
for imaging in device pinned; do
  migrate 2 "boundary2_$imaging" --set rtm.reconstruction=boundary --set memory.imaging="$imaging"
  same "boundary2_$imaging" boundary1
done
# 6 ranks: the first and last slabs lie in the layer and store no shell cell (a pinned store
# with no cells had no ring of device buffers, and its copies were called on NULL: SIGSEGV)
migrate 6 boundary6_pinned --set rtm.reconstruction=boundary --set memory.imaging=pinned
same boundary6_pinned boundary1
echo "mpi_slabs_gpu: all passed"
