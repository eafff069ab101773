#!/usr/bin/env bash
# Subsurface-offset gathers (rtm.offset_lags, cpu backend) of the small example's 4 shots,
# 6 lags each way at CIP lines every 16 cells:
#   2 ranks (z-slabs) write one rank's /gathers/offset, cip_x_m, cip_y_m and image to the
#       bit (validate --rtol 0 --atol 0: the lags are horizontal, each rank takes its own
#       planes, and they cross to rank 0 as they are);
#   4 ranks in 2 shot groups within 1e-8 relative L2 of one rank (the groups' sums, float
#       pairs as the image's, meet at the end in another order than one rank's);
#   stopped by --max-shots and resumed: on 1 rank, on 2 (z-slabs), a state of 2 ranks
#       resumed on 1 and one of 1 on 2 (each rank reads its depths), to one rank's
#       uninterrupted gathers and image bit for bit (the state keeps the gathers' float-pair
#       sums, every rank's planes, their bits unchanged); 4 ranks in 2 shot groups within
#       1e-8 as above;
#   refused, exit 2 and no output: a resume state left by a run without gathers, under
#       gathers (another config).
# Usage: mpi_gathers.sh RTM3D SOURCE_DIR MPIEXEC
set -eu
# shellcheck source=SCRIPTDIR/../app/cli_setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/../app/cli_setup.sh" "$1" "$2"
mpiexec="$3"
export OMP_NUM_THREADS=1
# shellcheck source=SCRIPTDIR/mpi_setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/mpi_setup.sh" cpu
gathers=(--set rtm.offset_lags=6 --set rtm.cip_x_step=16 --set rtm.cip_y_step=16)

model_observed
migrate 1 gathers1 "${gathers[@]}"
# the report times both the accumulation and the angle gathers
for key in gathers angle_gathers; do
  grep -q "\"$key\": " "$work/gathers1.json" ||
    { echo "FAIL: the report has no $key timing"; exit 1; }
done
migrate 2 gathers2 "${gathers[@]}"
same gathers2 gathers1
grep -q "/gathers/offset" "$work/gathers2.validate" ||
  { echo "FAIL: validate compared no /gathers/offset:"; cat "$work/gathers2.validate"; exit 1; }
migrate 4 gathers4g2 "${gathers[@]}" --set mpi.shot_groups=2
"$rtm3d" validate "$work/gathers4g2.h5" "$work/gathers1.h5" --rtol 1e-8 \
  > "$work/gathers4g2.validate" ||
  { echo "FAIL: the grouped gathers differ:"; cat "$work/gathers4g2.validate"; exit 1; }
echo "gathers4g2 ~ gathers1: $(grep /gathers/offset "$work/gathers4g2.validate")"

# stopped after some shots, then resumed: NP ranks stop, RESUME ranks go on
stop_and_resume() { # NP RESUME SHOTS NAME
  rm -f "$work/$4.h5" "$work/$4.resume.h5"
  migrate "$1" "$4" "${gathers[@]}" --max-shots="$3"
  [ -e "$work/$4.resume.h5" ] && [ ! -e "$work/$4.h5" ] ||
    { echo "FAIL: $4: --max-shots=$3 left no state, or an image"; ls "$work"; exit 1; }
  # as migrate does, but saying what it resumed ("${mig[@]:1}": without --quiet)
  "$mpiexec" --oversubscribe -np "$2" "$rtm3d" migrate "$small" "${mig[@]:1}" \
    --set model.interface_z=auto --set rtm.observed="$work/observed.h5" \
    --set output.dir="$work" --set output.name="$4" "${gathers[@]}" > "$work/$4.log" 2>&1 ||
    { echo "FAIL: $4's resumption failed:"; cat "$work/$4.log"; exit 1; }
  grep -q "resuming after shot $3 of 4" "$work/$4.log" ||
    { echo "FAIL: $4 did not resume:"; cat "$work/$4.log"; exit 1; }
}
stop_and_resume 1 1 1 resumed1
same resumed1 gathers1
stop_and_resume 2 2 2 resumed2
same resumed2 gathers1
stop_and_resume 2 1 3 resumed21
same resumed21 gathers1
stop_and_resume 1 2 2 resumed12
same resumed12 gathers1
rm -f "$work/resumed4g2.h5" "$work/resumed4g2.resume.h5"
migrate 4 resumed4g2 "${gathers[@]}" --set mpi.shot_groups=2 --max-shots=2
migrate 4 resumed4g2 "${gathers[@]}" --set mpi.shot_groups=2
"$rtm3d" validate "$work/resumed4g2.h5" "$work/gathers1.h5" --rtol 1e-8 \
  > "$work/resumed4g2.validate" ||
  { echo "FAIL: the grouped run resumed differs:"; cat "$work/resumed4g2.validate"; exit 1; }
echo "resumed4g2 ~ gathers1: $(grep /gathers/offset "$work/resumed4g2.validate")"

migrate 1 bad --max-shots=1 # a state without gathers, bad.resume.h5
rm -f "$work/bad.h5" # none: the run stopped
refused 2 "was written by a run with another config" 1 migrate "$small" "${mig[@]}" \
  --set model.interface_z=auto --set rtm.observed="$work/observed.h5" "${gathers[@]}"
echo "mpi_gathers: all passed"
