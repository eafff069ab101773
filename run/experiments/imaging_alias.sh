#!/usr/bin/env bash
# run/experiments/imaging_alias.sh [BUILD_DIR] - the imaging step against the record's end
# (docs/migration.md "The imaging step and the record's end"): the image of
# run/examples/migrate_small.ini (cpu) at imaging steps K against the same run's at every
# step (K = 1), relative L2 of /image (rtm3d validate), with the record's last T seconds
# tapered (rtm.end_taper = T; 0: not). Last, each taper's K = 1 image against the untapered
# one and against a record twice as long (840 steps), and its auto-step image (K as auto
# takes it) against that long record. FREQ (source.frequency, default 15), TAPERS (default
# "0 auto 0.067 0.1") and STEPS (K = 1 first) change the table. Scratch in
# /tmp/rtm3d_imaging_alias; some 3 minutes on two cores.
set -euo pipefail
rtm3d="$(realpath "${1:-build}/app/rtm3d")" # BUILD_DIR from where the script is called
cd "$(dirname "$0")/../.."
[ -x "$rtm3d" ] || { echo "imaging_alias.sh: no $rtm3d (build it first)" >&2; exit 2; }
work=/tmp/rtm3d_imaging_alias
rm -rf "$work" && mkdir -p "$work"
deck=run/examples/migrate_small.ini
common=(--set backend.name=cpu --set source.frequency="${FREQ:-15}" --force --quiet)
rel() { # rel L2 of /image, run against reference
  "$rtm3d" validate "$1" "$2" --datasets /image 2>&1 | awk '$1 == "/image" {print $3}'
}
"$rtm3d" model "$deck" "${common[@]}" --set output.dir="$work/obs" --set output.name=o
"$rtm3d" model "$deck" "${common[@]}" --set time.steps=840 --set output.dir="$work/obs_long" \
  --set output.name=o
"$rtm3d" migrate "$deck" "${common[@]}" --set time.steps=840 --set rtm.end_taper=0 \
  --set rtm.observed="$work/obs_long/o.h5" --set rtm.imaging_step=1 --set output.dir="$work/long"
read -r -a tapers <<<"${TAPERS:-0 auto 0.067 0.1}"
read -r -a steps <<<"${STEPS:-1 2 3 4 5 6 8}" # 1 first: the others against it
printf "%-10s" "taper \\ K"
printf "%12s" "${steps[@]:1}"
printf "%14s%14s%14s\n" "K=1 vs T=0" "K=1 vs long" "auto vs long"
for taper in "${tapers[@]}"; do
  for k in "${steps[@]}" 0; do # 0: auto's step
    "$rtm3d" migrate "$deck" "${common[@]}" --set rtm.end_taper="$taper" \
      --set rtm.observed="$work/obs/o.h5" --set rtm.imaging_step="$k" \
      --set output.dir="$work/t${taper}_k$k"
  done
  printf "%-10s" "$taper s"
  for k in "${steps[@]:1}"; do
    printf "%12s" "$(rel "$work/t${taper}_k$k/migrate_small.h5" "$work/t${taper}_k1/migrate_small.h5")"
  done
  printf "%14s%14s%14s\n" "$(rel "$work/t${taper}_k1/migrate_small.h5" "$work/t0_k1/migrate_small.h5")" \
    "$(rel "$work/t${taper}_k1/migrate_small.h5" "$work/long/migrate_small.h5")" \
    "$(rel "$work/t${taper}_k0/migrate_small.h5" "$work/long/migrate_small.h5")"
done
