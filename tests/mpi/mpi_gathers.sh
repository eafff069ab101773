#!/usr/bin/env bash
# Subsurface-offset gathers (rtm.offset_lags, cpu backend) of the small example's 4 shots,
# 6 lags each way at CIP lines every 16 cells:
#   2 ranks (z-slabs) write one rank's /gathers/offset, cip_x_m, cip_y_m and image to the
#       bit (validate --rtol 0 --atol 0: the lags are horizontal, each rank takes its own
#       planes, and rank 0 gathers them into zeros, exactly);
#   4 ranks in 2 shot groups within 1e-8 relative L2 of one rank (the groups' sums, float
#       pairs as the image's, meet at the end in another order than one rank's);
#   refused, exit 2 and no output: --max-shots with gathers (no state keeps them yet), and
#       a resume state (left by a --max-shots run without gathers) under gathers.
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

refused 2 "rtm.offset_lags = 6 saves no resume state" 1 migrate "$small" "${mig[@]}" \
  --set model.interface_z=auto --set rtm.observed="$work/observed.h5" "${gathers[@]}" \
  --max-shots=1
migrate 1 bad --max-shots=1 # a state without gathers, bad.resume.h5
rm -f "$work/bad.h5" # none: the run stopped
refused 2 "does not resume (the gathers are not kept" 1 migrate "$small" "${mig[@]}" \
  --set model.interface_z=auto --set rtm.observed="$work/observed.h5" "${gathers[@]}"
echo "mpi_gathers: all passed"
