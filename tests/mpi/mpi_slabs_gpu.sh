#!/usr/bin/env bash
# `rtm3d model` across z-slabs on the cuda backend (planes staged through pinned host
# memory, on a copy stream while the interior is computed; on 2 ranks also blocking): 2 and
# 3 ranks sharing the one GPU give the snapshots and traces of one cuda rank to the bit
# (validate --rtol 0 --atol 0), iso with the source and receivers straddling the
# 2-rank cut and vti with two shots recording p and q; and the small migration's image on
# 2 cuda ranks equals one cuda rank's. Exits 77 (skipped) without a GPU.
# Usage: mpi_slabs_gpu.sh RTM3D SOURCE_DIR MPIEXEC
set -eu
# shellcheck source=SCRIPTDIR/../app/cli_setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/../app/cli_setup.sh" "$1" "$2"
mpiexec="$3"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if ! "$rtm3d" model "$deck" --quiet --set backend.name=cuda --set grid.nx=16 --set grid.ny=16 \
  --set grid.nz=16 --set boundary.width=2 --set time.steps=2 --set source.x=auto \
  --set source.y=auto --set source.z=auto --set receivers.layout=none --set snapshots.every=0 \
  --set output.dir="$work" --set output.name=probe > /dev/null 2>&1; then
  echo "mpi_slabs_gpu: no usable GPU, skipped"
  exit 77
fi
run() { # NP OUTPUT_NAME SETTINGS...
  local np="$1" name="$2"
  shift 2
  "$mpiexec" --oversubscribe -np "$np" "$rtm3d" model "$deck" "$@" --set output.dir="$work" \
    --set output.name="$name"
}
same() {
  "$rtm3d" validate "$work/$1.h5" "$work/$2.h5" --rtol 0 --atol 0 > "$work/$1.validate" ||
    { echo "FAIL: $1 differs from $2:"; cat "$work/$1.validate"; exit 1; }
  echo "$1 = $2: $(tail -1 "$work/$1.validate")"
}
iso=(--quiet --set backend.name=cuda --set grid.nx=40 --set grid.ny=36 --set grid.nz=37
     --set boundary.width=8 --set time.steps=120 --set snapshots.every=40
     --set source.x=auto --set source.y=auto --set source.z=183
     --set receivers.x_first=auto --set receivers.y_first=auto --set receivers.z=181
     --set model.interface_z=250 --set model.vp_below=2600)
run 1 iso1 "${iso[@]}"
for np in 2 3; do
  run "$np" "iso$np" "${iso[@]}"
  same "iso$np" iso1
done
run 2 iso2b "${iso[@]}" --set mpi.exchange=blocking
same iso2b iso1
vti=(--quiet --set backend.name=cuda --set grid.nx=36 --set grid.ny=32 --set grid.nz=33
     --set boundary.width=8 --set time.steps=90 --set snapshots.every=0
     --set physics.equation=vti --set model.epsilon=0.2 --set model.delta=0.1
     --set source.x=auto --set source.y=auto --set source.z=auto
     --set shots.layout=grid --set shots.x_count=2 --set shots.z=155
     --set receivers.x_first=auto --set receivers.y_first=auto --set receivers.z=161
     --set receivers.fields=p,q)
run 1 vti1 "${vti[@]}"
run 2 vti2 "${vti[@]}"
same vti2 vti1
# the staging holds, for each of p and q, R = 4 planes out and in on each side: 4 x 2 x 4
# padded planes of 64 x 40 floats (36 + 8 cells rounded to 64, 32 + 8 rows) = 327680 bytes
grep -q '"label": "halo staging", "strategy": "pinned", "bytes": 327680,' "$work/vti2.json" ||
  { echo "FAIL: vti2.json: the halo staging is not 2 fields' worth:"; grep staging "$work/vti2.json"; exit 1; }
# migrate: the small example's survey on 2 cuda ranks against one
small="$src/run/examples/migrate_small.ini"
mig=(--quiet --set backend.name=cuda --set time.steps=200)
"$rtm3d" model "$small" "${mig[@]}" --set output.dir="$work" --set output.name=observed
for np in 1 2; do
  "$mpiexec" --oversubscribe -np "$np" "$rtm3d" migrate "$small" "${mig[@]}" \
    --set model.interface_z=auto --set rtm.observed="$work/observed.h5" \
    --set output.dir="$work" --set output.name="image$np"
done
same image2 image1
echo "mpi_slabs_gpu: all passed"
