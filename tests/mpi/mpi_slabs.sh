#!/usr/bin/env bash
# `rtm3d model` across z-slabs under mpirun (cpu backend): the snapshots and the traces of
# 2, 3 and 4 ranks equal one rank's to the bit (validate --rtol 0 --atol 0), with the
# exchange overlapped (the default: edge planes first) and, on 3 ranks, blocking:
#   iso, one shot, 37 planes (uneven: 19/18, 13/12/12, 10/9/9/9), the source at z = 18.3
#       cells and the receivers at 18.1, so that their taps (planes 18 and 19) straddle the
#       cut of 2 ranks, and a velocity step below 250 m (vp_max on the lower ranks only);
#   vti, two shots of the grid layout, p and q recorded, 4 ranks across 33 planes;
#   iso with sinc points (taps over 8 planes: receivers cut by 2 and 4 ranks).
# `rtm3d migrate` of the small example: image and illumination of 2, 3 (and 6, boundary)
# ranks equal one rank's with every reconstruction (zfp snapshots too: a migration's slabs
# are cut in units of 4 planes), the PNGs byte for byte, shot images, a stopped run resumed
# (the comments below say how each is cut). The slabs reach the file
# collectively with a parallel HDF5, else through rank 0 (the report says which).
# Refused before any step, on every rank, no output left: slabs thinner than 4 planes (37
# planes on 10 ranks, naming grid.nz; exit 2), a volume whose model and propagator do not fit
# one rank's memory.limit_gb, which two ranks run (exit 1), plot under 2 ranks (exit 2),
# mpi.transport = nccl or cuda-aware on the cpu backend (exit 2). The cuda
# backend on slabs: mpi_slabs_gpu.sh; tti with a varying tilt: test_mpi_tti.c.
# Usage: mpi_slabs.sh RTM3D SOURCE_DIR MPIEXEC
set -eu
# shellcheck source=SCRIPTDIR/../app/cli_setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/../app/cli_setup.sh" "$1" "$2"
mpiexec="$3"
# one OpenMP thread a rank: several ranks share the few cores of a CI machine
export OMP_NUM_THREADS=1
# shellcheck source=SCRIPTDIR/mpi_setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/mpi_setup.sh" cpu

run 1 iso1 "${iso[@]}"
for np in 2 3 4; do
  run "$np" "iso$np" "${iso[@]}"
  same "iso$np" iso1
done
# the report names each rank's host, device, planes and memory (taken, and the preflight's
# estimate), and the exchange times
m=', memory 0\.00[0-9] GB (preflight estimate 0\.00[0-9] GB)'
grep -q "\"ranks\": \\[\"rank 0: .*planes 0\\.\\.12$m\", \"rank 1: .*planes 13\\.\\.24$m\", \"rank 2: .*planes 25\\.\\.36$m\"\\]" \
  "$work/iso3.json" || { echo "FAIL: iso3.json lacks the ranks:"; cat "$work/iso3.json"; exit 1; }
grep -q '"halo_exchange_max"' "$work/iso3.json" ||
  { echo "FAIL: iso3.json lacks the exchange times"; exit 1; }
# the slabs reached the file the way the build says (rtm3d info): collectively through a
# parallel HDF5, else through rank 0; the snapshots above are the same bytes either way
if "$rtm3d" info | grep -q "HDF5 .*(parallel: the ranks write their slabs collectively)"; then
  writes="collective (parallel HDF5)"
else
  writes="rank 0, in rank order"
fi
slab_writes() { # REPORT: it says the slabs were written as the build writes them
  grep -q "\"slab_writes\": \"$writes\"" "$work/$1.json" ||
    { echo "FAIL: $1.json does not say the slabs were written $writes:"; cat "$work/$1.json"; exit 1; }
  echo "$1: slabs written $writes"
}
slab_writes iso3
run 3 iso3b "${iso[@]}" --set mpi.exchange=blocking # after the whole step, not overlapped
same iso3b iso1

run 1 vti1 "${vti[@]}"
run 4 vti4 "${vti[@]}"
same vti4 vti1

# migrate: /image and /illumination on 2 and 3 ranks equal one rank's, with
# rtm.reconstruction = auto (snapshots here) and with 3 checkpoints (which recompute, their
# steps exchanging planes like the others); each rank filters its own slab (the Laplacian
# takes the neighbours' planes across the cuts, at 32 and at 24 and 44 inside its box) and
# rank 0 writes the slabs as they come, and draws the PNGs from the slices' rows the ranks
# send: the figures `rtm3d plot` draws of the file's planes through the middle (80 x 80 x
# 64: index 40, 40, 32), pixel for pixel (their titles name the file, so they are compared
# with plot's of the same file, not with one rank's); rtm.shot_images on 3 ranks writes one
# rank's shot images; a 2-rank
# run stopped after its first shot (--max-shots=1) resumes, each rank reading its planes of
# the saved sums, to the uninterrupted image, and so do runs saving at rtm.resume_every.
model_observed
migrate 1 image1
for np in 2 3; do
  migrate "$np" "image$np"
  same "image$np" image1
  slab_writes "image$np"
  for slice in x=40 y=40 z=32; do
    axis="${slice%%=*}"
    "$rtm3d" plot "$work/image$np.h5" /image --slice "$slice" -o "$work/plotted.png" > /dev/null
    cmp -s "$work/image${np}_image_$axis.png" "$work/plotted.png" ||
      { echo "FAIL: image${np}_image_$axis.png is not plot's figure of the same plane"; exit 1; }
  done
done
migrate 1 shots1 --set rtm.shot_images=true
migrate 3 shots3 --set rtm.shot_images=true
same shots3 shots1
"$rtm3d" validate "$work/shots3.h5" "$work/shots1.h5" --rtol 0 --atol 0 \
  --datasets /shots/0/image,/shots/3/image > "$work/shots3.validate" ||
  { echo "FAIL: shots3's shot images differ from one rank's:"; cat "$work/shots3.validate"; exit 1; }
# rtm.reconstruction = boundary: each rank stores its planes' part of the shell (the box is
# planes 12..51; a migration's slabs are cut in units of 4 planes: on 3 ranks, planes 0..23,
# 24..43 and 44..63, the first holds the 4 lowest whole planes and rings, the second rings
# alone, the third rings and the 4 highest; on 6 ranks the first and last slabs, planes
# 0..11 and 56..63, lie in the layer and store nothing) and sends the rebuilt level after
# the restore
migrate 1 boundary1 --set rtm.reconstruction=boundary
for np in 3 6; do
  migrate "$np" "boundary$np" --set rtm.reconstruction=boundary
  same "boundary$np" boundary1
done
migrate 1 checkpoint1 --set rtm.reconstruction=checkpoint --set rtm.checkpoints=3
migrate 3 checkpoint3 --set rtm.reconstruction=checkpoint --set rtm.checkpoints=3
same checkpoint3 checkpoint1
# rtm.snapshot_precision = zfp: a rank compresses its own planes in blocks of 4 from its
# first, and a migration's slabs start on multiples of 4 planes, so every rank's blocks are
# one rank's: the image to the bit on 2 ranks and on 3 (planes 0..23, 24..43, 44..63; cut
# by rtm_mpi_slab, 22, 21 and 21 planes, the image lay 2.5e-3 from one rank's)
migrate 1 zfp1 --set rtm.reconstruction=snapshots --set rtm.snapshot_precision=zfp
for np in 2 3; do
  migrate "$np" "zfp$np" --set rtm.reconstruction=snapshots --set rtm.snapshot_precision=zfp
  same "zfp$np" zfp1
done
migrate 2 resumed --max-shots=1
test -e "$work/resumed.resume.h5" && test ! -e "$work/resumed.h5" ||
  { echo "FAIL: --max-shots=1 on 2 ranks left no resume state, or an image"; exit 1; }
migrate 2 resumed
same resumed image1
test ! -e "$work/resumed.resume.h5" && test ! -e "$work/resumed.resume.xmf" ||
  { echo "FAIL: the completed run left its resume state or that state's XDMF sidecar"; exit 1; }
# rtm.resume_every on 2 ranks: world rank 0's clock decides for both (a rank that saved
# alone would leave the other waiting in the collective write): at 1e-9 s the 3 shots of a
# --max-shots=3 run each save, at 10^6 s only the stop does; both resume to the image
loud=()
for setting in "${mig[@]}"; do [ "$setting" = --quiet ] || loud+=("$setting"); done
for case in "1e-9 3" "1e6 1"; do
  read -r every saves <<<"$case"
  "$mpiexec" --oversubscribe -np 2 "$rtm3d" migrate "$small" "${loud[@]}" \
    --set model.interface_z=auto --set rtm.observed="$work/observed.h5" --set output.dir="$work" \
    --set output.name="cadence$saves" --max-shots=3 --set rtm.resume_every="$every" \
    > "$work/cadence$saves.out" 2>&1 || { echo "FAIL: cadence $every:"; cat "$work/cadence$saves.out"; exit 1; }
  grep -q "stopped after shot 3 of 4 (--max-shots; $saves state saves\?," "$work/cadence$saves.out" ||
    { echo "FAIL: rtm.resume_every = $every: not $saves saves:"; cat "$work/cadence$saves.out"; exit 1; }
  test -e "$work/cadence$saves.resume.h5" ||
    { echo "FAIL: rtm.resume_every = $every: --max-shots=3 left no resume state"; exit 1; }
  "$mpiexec" --oversubscribe -np 2 "$rtm3d" migrate "$small" "${loud[@]}" \
    --set model.interface_z=auto --set rtm.observed="$work/observed.h5" --set output.dir="$work" \
    --set output.name="cadence$saves" > "$work/cadence$saves.resumed" 2>&1 ||
    { echo "FAIL: resuming cadence $every:"; cat "$work/cadence$saves.resumed"; exit 1; }
  grep -q "resuming after shot 3 of 4" "$work/cadence$saves.resumed" &&
    test ! -e "$work/cadence$saves.resume.h5" ||
    { echo "FAIL: rtm.resume_every = $every: the run did not resume after shot 3, or kept"
      echo "its state:"; cat "$work/cadence$saves.resumed"; exit 1; }
  same "cadence$saves" image1
done

# bench on 2 ranks: the one-rank reference, the three exchanges, the report's "mpi" object
"$mpiexec" --oversubscribe -np 2 "$rtm3d" bench "$deck" "${iso[@]}" --set receivers.layout=none \
  --set bench.steps=10 --set bench.warmup=2 --set output.dir="$work" --set output.name=bench \
  > "$work/bench.out" 2>&1 || { echo "FAIL: bench on 2 ranks:"; cat "$work/bench.out"; exit 1; }
grep -q "parallel efficiency (overlap against one rank)" "$work/bench.out" &&
  grep -q '"mpi": {"ranks": 2, "parallel_efficiency": [0-9.e+-]*, "exchange_hidden": ' \
    "$work/bench.json" || { echo "FAIL: bench's figures:"; cat "$work/bench.out"; exit 1; }

refused 2 "grid.nz = 37 over 10 ranks leaves slabs of 3 planes" 10 model "$deck" "${iso[@]}"
# memory per rank: the iso propagator of 40 x 36 x 37 cells holds 1.52 MB (2816 floats a
# padded plane, 45 planes, 3 volumes) and its vp 0.21 MB, of a 19-plane slab 0.91 + 0.11 MB:
# with 1.2 MB allowed one rank is refused before the model is made, naming the need, and
# two run (to the one-rank result)
refused 1 "the model's parameters (1 volume, 0.000213 GB) and the propagator (0.00152 GB) need 0.00173 GB of host memory for 40 x 36 x 37 cells, where 0.0012 GB are allowed" 1 \
  model "$deck" "${iso[@]}" --set memory.limit_gb=0.0012
run 2 iso2m "${iso[@]}" --set memory.limit_gb=0.0012
same iso2m iso1
refused 2 "only 'rtm3d model', 'migrate' and 'bench' run across ranks" 2 plot "$work/iso1.h5" /snapshots/p
# sinc points (8 planes of taps): the receivers at 18.1 cells (taps on planes 15..22) cut by
# 2 ranks (at 19) and 4 (at 19 again, and the source's taps too), whole in one of 3 ranks'
# slabs: recorded in parts a plane where they are cut, the traces one rank's to the bit
run 1 sinc1 "${iso[@]}" --set points.interpolation=sinc
for np in 2 3 4; do
  run "$np" "sinc$np" "${iso[@]}" --set points.interpolation=sinc
  same "sinc$np" sinc1
done
# the parts were taken where the receivers are cut (2 and 4 ranks), not where they are whole
for np in 2 4; do
  grep -q "rank 0: .*, [1-9][0-9]* receivers recorded in parts" "$work/sinc$np.json" ||
    { echo "FAIL: sinc$np.json: no receivers recorded in parts"; grep "rank " "$work/sinc$np.json"; exit 1; }
done
! grep -q "recorded in parts" "$work/sinc3.json" ||
  { echo "FAIL: sinc3.json: parts where no receiver is cut"; exit 1; }
for transport in nccl cuda-aware; do
  refused 2 "mpi.transport = $transport moves a GPU's planes; backend cpu keeps its fields in host" \
    2 model "$deck" "${iso[@]}" --set mpi.transport="$transport"
done
echo "mpi_slabs: all passed"
