# mpi_setup.sh BACKEND - sourced by mpi_slabs.sh and mpi_slabs_gpu.sh after cli_setup.sh
# and with `mpiexec` set: the same decks and checks for the cpu and the cuda backend.
#   run NP NAME SETTINGS...      rtm3d model on NP ranks into $work/NAME.h5
#   same RUN REFERENCE           every dataset of the two files equal (validate --rtol 0
#                                --atol 0), or the script fails
#   refused CODE MESSAGE NP ARGS...  rtm3d ARGS on NP ranks exits CODE saying MESSAGE and
#                                leaves no output file, or the script fails
#   migrate NP NAME SETTINGS...  rtm3d migrate of the small example's survey ($work/
#                                observed.h5, from model_observed) into $work/NAME.h5
#   iso, vti, mig                the decks (arrays of settings) on BACKEND:
#     iso  40 x 36 x 37 (uneven slabs), snapshots and traces, the source at z = 18.3 cells
#          and the receivers at 18.1 (taps on planes 18 and 19, across the 2-rank cut), a
#          velocity step below 250 m;
#     vti  36 x 32 x 33, two shots of the grid layout, p and q recorded;
#     mig  the small migration (4 shots over a dipping reflector, 80 x 80 x 64), 200 steps.
# shellcheck shell=bash disable=SC2034  # the arrays are for the scripts that source this
backend="$1"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
run() {
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
iso=(--quiet --set backend.name="$backend" --set grid.nx=40 --set grid.ny=36 --set grid.nz=37
     --set boundary.width=8 --set time.steps=120 --set snapshots.every=40
     --set source.x=auto --set source.y=auto --set source.z=183
     --set receivers.x_first=auto --set receivers.y_first=auto --set receivers.z=181
     --set model.interface_z=250 --set model.vp_below=2600)
vti=(--quiet --set backend.name="$backend" --set grid.nx=36 --set grid.ny=32 --set grid.nz=33
     --set boundary.width=8 --set time.steps=90 --set snapshots.every=0
     --set physics.equation=vti --set model.epsilon=0.2 --set model.delta=0.1
     --set source.x=auto --set source.y=auto --set source.z=auto
     --set shots.layout=grid --set shots.x_count=2 --set shots.z=155
     --set receivers.x_first=auto --set receivers.y_first=auto --set receivers.z=161
     --set receivers.fields=p,q)
small="$src/run/examples/migrate_small.ini"
mig=(--quiet --set backend.name="$backend" --set time.steps=200)
model_observed() {
  "$rtm3d" model "$small" "${mig[@]}" --set output.dir="$work" --set output.name=observed
}
migrate() {
  local np="$1" name="$2"
  shift 2
  "$mpiexec" --oversubscribe -np "$np" "$rtm3d" migrate "$small" "${mig[@]}" \
    --set model.interface_z=auto --set rtm.observed="$work/observed.h5" \
    --set output.dir="$work" --set output.name="$name" "$@"
}

refused() { # CODE MESSAGE NP ARGS...: exit CODE with MESSAGE, no output file
  local expected="$1" message="$2" np="$3"
  shift 3
  local code=0
  "$mpiexec" --oversubscribe -np "$np" "$rtm3d" "$@" --set output.dir="$work" \
    --set output.name=bad > "$work/bad.out" 2>&1 || code=$?
  if [ "$code" -ne "$expected" ] || ! grep -q "$message" "$work/bad.out"; then
    echo "FAIL: expected exit $expected with \"$message\", got exit $code:"
    cat "$work/bad.out"
    exit 1
  fi
  if [ -e "$work/bad.h5" ] || [ -e "$work/bad.h5.partial" ]; then
    echo "FAIL: a refused run left $work/bad.h5"
    exit 1
  fi
  echo "refused on $np ranks: $message"
}
