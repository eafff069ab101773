#!/usr/bin/env bash
# SEG-Y as a user meets it: rtm3d model with output.segy = true writes NAME.sgy beside
# NAME.h5; rtm3d migrate from that SEG-Y file gives the image it gives from the HDF5 one,
# bit for bit; an interval SEG-Y cannot hold is refused before the first step (naming
# output.trace_dt, no file left); rtm3d export refuses to replace a file without --force.
# Exit 77 when the build has no segyio. Usage: cli_segy.sh RTM3D SOURCE_DIR
set -u
# shellcheck source=SCRIPTDIR/cli_setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/cli_setup.sh" "$@"
require "SEG-Y on" "this build has no segyio"
# two shots over a reflector at 300 m on a small grid (test_cli_migrate's survey)
set_args=(--set backend.name=cpu --set grid.nx=48 --set grid.ny=40 --set grid.nz=44
  --set model.vp=2000 --set model.interface_z=300 --set model.vp_below=3000
  --set boundary.width=8 --set source.frequency=20 --set source.x=auto --set source.y=auto
  --set source.z=auto --set shots.layout=grid --set shots.x_count=2 --set shots.z=100
  --set receivers.layout=plane --set receivers.z=100 --set receivers.x_first=auto
  --set receivers.y_first=auto --set receivers.y_count=0 --set receivers.x_step=20
  --set receivers.y_step=20 --set snapshots.every=0 --set time.steps=260 --set time.dt=0.0014
  --set output.dir="$work" --quiet)

"$rtm3d" model "$deck" "${set_args[@]}" --set output.name=shots --set output.segy=true ||
  fail "model with output.segy = true exited $?"
[ -s "$work/shots.sgy" ] && [ -s "$work/shots.h5" ] || fail "no shots.sgy beside shots.h5"
# the migration with the reflector's velocity above it, from each file
migrate_args=("${set_args[@]}" --set model.interface_z=auto --set model.vp_below=auto)
"$rtm3d" migrate "$deck" "${migrate_args[@]}" --set rtm.observed="$work/shots.h5" \
  --set output.name=from_h5 || fail "migrate from HDF5 exited $?"
"$rtm3d" migrate "$deck" "${migrate_args[@]}" --set rtm.observed="$work/shots.sgy" \
  --set output.name=from_segy || fail "migrate from SEG-Y exited $?"
"$rtm3d" validate "$work/from_segy.h5" "$work/from_h5.h5" --rtol 0 --atol 0 > "$work/v.txt" 2>&1 ||
  fail "the image from SEG-Y differs from the image from HDF5: $(cat "$work/v.txt")"
grep -q "^/image .*PASS" "$work/v.txt" || fail "validate compared no /image: $(cat "$work/v.txt")"
echo "ok:   migrate from shots.sgy = migrate from shots.h5, bit for bit"

# 1430.5 us is not whole microseconds: refused before any step, nothing written
out="$("$rtm3d" model "$deck" "${set_args[@]}" --set output.name=odd --set output.segy=true \
  --set time.dt=0.0014305 2>&1)"
status=$?
[ "$status" -eq 2 ] || fail "output.segy with dt 1430.5 us exited $status (want 2)"
grep -q "output.segy = true needs the gathers' interval in whole microseconds.*set output.trace_dt = 0.00143" <<<"$out" ||
  fail "the refusal does not name output.trace_dt: $out"
[ ! -e "$work/odd.h5" ] && [ ! -e "$work/odd.sgy" ] || fail "the refused run left a file"
# ... and the same deck with output.trace_dt = 0.002 is accepted (resampled gathers)
"$rtm3d" model "$deck" "${set_args[@]}" --set output.name=odd --set output.segy=true \
  --set time.dt=0.0014305 --set output.trace_dt=0.002 || fail "output.trace_dt = 0.002 refused"
[ -s "$work/odd.sgy" ] || fail "no odd.sgy with output.trace_dt = 0.002"
echo "ok:   an interval SEG-Y cannot hold is refused first; output.trace_dt makes one"

# export: a file that exists is kept without --force
"$rtm3d" export "$work/shots.h5" --segy "$work/again.sgy" --quiet 2>/dev/null ||
  fail "export exited $?"
cmp -s <(tail -c +3201 "$work/again.sgy") <(tail -c +3201 "$work/shots.sgy") ||
  fail "export and output.segy differ past the text header"
# the text headers (EBCDIC) name the run file by its final name, and their writer (probe N,
# N2: model's named its NAME.h5.partial and said "rtm3d export")
text_of() { dd if="$1" bs=3200 count=1 conv=ascii status=none | fold -w 80; }
text_of "$work/shots.sgy" | grep -q "^C 1 rtm3d gathers of .*shots\.h5 *$" &&
  text_of "$work/shots.sgy" | grep -q "^C 7 written by rtm3d model" ||
  fail "output.segy's text header: $(text_of "$work/shots.sgy" | sed -n '1p;7p')"
text_of "$work/again.sgy" | grep -q "^C 7 written by rtm3d export" ||
  fail "export's text header: $(text_of "$work/again.sgy" | sed -n '1p;7p')"
out="$("$rtm3d" export "$work/shots.h5" --segy "$work/again.sgy" 2>&1)"
[ $? -eq 2 ] && grep -q "again.sgy exists; --force replaces it" <<<"$out" ||
  fail "export over an existing file: $out"
"$rtm3d" export "$work/shots.h5" --segy "$work/again.sgy" --force 2>/dev/null ||
  fail "export --force exited $?"
# one file a shot: refused as a set when one of them exists, in a folder with a dot
mkdir -p "$work/v1.2"
"$rtm3d" export "$work/shots.h5" --segy "$work/v1.2/each" --per-shot --quiet ||
  fail "export --per-shot exited $?"
[ -s "$work/v1.2/each_shot0" ] && [ -s "$work/v1.2/each_shot1" ] ||
  fail "no each_shot0, each_shot1 in v1.2: $(ls "$work/v1.2")"
out="$("$rtm3d" export "$work/shots.h5" --segy "$work/v1.2/each" --per-shot 2>&1)"
[ $? -eq 2 ] && grep -q "each_shot0 exists; --force replaces it" <<<"$out" ||
  fail "export --per-shot over existing files: $out"
echo "ok:   export equals output.segy; --force; --per-shot"

echo "cli_segy: $failures failure(s)"
[ "$failures" -eq 0 ]
