#!/usr/bin/env bash
# Shot groups (mpi.shot_groups, cpu backend): the ranks split into groups of consecutive
# ranks, each modelling or migrating every G-th shot across its own z-slabs.
#   model, vti with three shots, p and q recorded: 4 ranks in 2 groups (2 slabs each) and 3
#       ranks in 3 groups (a whole volume each) write the gathers of one rank to the bit
#       (validate --rtol 0 --atol 0); the report names each rank's group; each group's
#       first rank prints its shots' lines;
#   migrate, the small example's 4 shots: 4 ranks in 2 groups give the one-rank image and
#       illumination within 1e-8 relative L2: each group sums its own shots and the groups'
#       sums are added at the end, in another order than one rank's, but as float pairs
#       (rtm_sums_add), so the order moves only cells whose sum cancels to far below its
#       terms, by an ulp (measured 7.4e-10 for the image, the illumination bit for bit;
#       summed in float: 9e-7 and 1e-7); a grouped run stopped after its first round
#       (--max-shots=2) resumes to the same image; the groups' sums sent as messages
#       (mpi.transport = staged) give the image of the window's path, bit for bit; 2 ranks
#       in 2 groups save behind the shots (the first group's I/O thread), after every round
#       or stopped and resumed, to the same image.
# Refused before any step on every rank, no output left (exit 2): a group count that does
# not divide the ranks, more groups than shots, groups with one shot (shots.layout =
# single).
# Usage: mpi_shot_groups.sh RTM3D SOURCE_DIR MPIEXEC
set -eu
# shellcheck source=SCRIPTDIR/../app/cli_setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/../app/cli_setup.sh" "$1" "$2"
mpiexec="$3"
export OMP_NUM_THREADS=1
# shellcheck source=SCRIPTDIR/mpi_setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/mpi_setup.sh" cpu
vti3=("${vti[@]}" --set shots.x_count=3)

run 1 vti1 "${vti3[@]}"
loud=() # the deck without --quiet: the groups' shot lines
for setting in "${vti3[@]}"; do [ "$setting" = --quiet ] || loud+=("$setting"); done
run 4 vti4g2 "${loud[@]}" --set mpi.shot_groups=2 2> "$work/vti4g2.err"
same vti4g2 vti1
run 3 vti3g3 "${vti3[@]}" --set mpi.shot_groups=3
same vti3g3 vti1
grep -q '"rank 3: .*group 1, planes 17\.\.32' "$work/vti4g2.json" ||
  { echo "FAIL: vti4g2.json does not name rank 3's group and planes"; exit 1; }
grep -q "group 1: shot 2/3 at" "$work/vti4g2.err" ||
  { echo "FAIL: group 1's first rank did not report its shot:"; cat "$work/vti4g2.err"; exit 1; }

model_observed
migrate 1 image1
migrate 4 image4g2 --set mpi.shot_groups=2
"$rtm3d" validate "$work/image4g2.h5" "$work/image1.h5" --rtol 1e-8 \
  > "$work/image4g2.validate" ||
  { echo "FAIL: the grouped image differs:"; cat "$work/image4g2.validate"; exit 1; }
echo "image4g2 ~ image1: $(tail -1 "$work/image4g2.validate")"
# the groups' sums as messages (mpi.transport = staged) rather than through the node's window:
# the same sums, added in the same order
migrate 4 image4g2staged --set mpi.shot_groups=2 --set mpi.transport=staged
"$rtm3d" validate "$work/image4g2staged.h5" "$work/image4g2.h5" --rtol 0 --atol 0 \
  > "$work/image4g2staged.validate" ||
  { echo "FAIL: the groups' sums sent as messages differ:"; cat "$work/image4g2staged.validate"; exit 1; }
migrate 4 resumed --set mpi.shot_groups=2 --max-shots=2
test -e "$work/resumed.resume.h5" && test ! -e "$work/resumed.h5" ||
  { echo "FAIL: --max-shots=2 in 2 groups left no resume state, or an image"; exit 1; }
migrate 4 resumed --set mpi.shot_groups=2
"$rtm3d" validate "$work/resumed.h5" "$work/image1.h5" --rtol 1e-8 \
  > "$work/resumed.validate" ||
  { echo "FAIL: the resumed grouped image differs:"; cat "$work/resumed.validate"; exit 1; }
echo "resumed ~ image1: $(tail -1 "$work/resumed.validate")"
# groups of one rank each: the first group's I/O thread writes the state behind the next
# round (written_behind in the report), as one rank does; saving after every round, and
# stopped after the first round and resumed, the image is the uninterrupted one's
migrate 2 saved2g2 --set mpi.shot_groups=2 --set rtm.resume_every=0
python3 -c 'import json, sys; t = json.load(open(sys.argv[1]))["timings_s"]
sys.exit(0 if t["written_behind"] > 0 else 1)' "$work/saved2g2.json" ||
  { echo "FAIL: 2 groups of one rank: the state was not written behind the shots"; exit 1; }
migrate 2 resumed2g2 --set mpi.shot_groups=2 --max-shots=2
test -e "$work/resumed2g2.resume.h5" && test ! -e "$work/resumed2g2.h5" ||
  { echo "FAIL: --max-shots=2 in 2 groups of one rank left no resume state, or an image"; exit 1; }
migrate 2 resumed2g2 --set mpi.shot_groups=2
for name in saved2g2 resumed2g2; do
  "$rtm3d" validate "$work/$name.h5" "$work/image1.h5" --rtol 1e-8 > "$work/$name.validate" ||
    { echo "FAIL: $name differs:"; cat "$work/$name.validate"; exit 1; }
  echo "$name ~ image1: $(tail -1 "$work/$name.validate")"
done

refused 2 "with --set mpi.shot_groups: mpi.shot_groups = 3 does not divide the 4 ranks" 4 model "$deck" "${vti3[@]}" \
  --set mpi.shot_groups=3
refused 2 "mpi.shot_groups = 4 for 3 shots would leave groups idle" 4 model "$deck" \
  "${vti3[@]}" --set mpi.shot_groups=4
refused 2 "shots.layout = single has one" 2 model "$deck" "${iso[@]}" --set mpi.shot_groups=2
echo "mpi_shot_groups: all passed"
