#!/usr/bin/env bash
# Usage and configuration errors: exit 2 with a message naming the file, line and key;
# help and version exit 0. Usage: cli_basics.sh RTM3D SOURCE_DIR
set -u
rtm3d="$1"
src="$2"
failures=0
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# expect STATUS PATTERN COMMAND...: the command exits STATUS and its stderr+stdout match
# the extended regex PATTERN.
expect() {
  local want="$1" pattern="$2"
  shift 2
  local output status
  output="$("$@" 2>&1)"
  status=$?
  if [ "$status" -ne "$want" ] || ! grep -Eq -- "$pattern" <<<"$output"; then
    echo "FAIL: '$*' exited $status (want $want), output:"
    sed 's/^/    /' <<<"$output"
    echo "    expected to match: $pattern"
    failures=$((failures + 1))
  else
    echo "ok:   $*"
  fi
}

expect 0 "rtm3d [0-9]+\.[0-9]+" "$rtm3d" --version
expect 0 "usage: rtm3d" "$rtm3d" --help
expect 2 "unknown command" "$rtm3d" frobnicate
expect 2 "usage: rtm3d" "$rtm3d"
for cmd in info model migrate bench tune validate plot accuracy makemodel export; do
  expect 0 "usage: rtm3d $cmd" "$rtm3d" "$cmd" --help
done
expect 0 "\[grid\]" "$rtm3d" help-config
expect 0 "cfl " "$rtm3d" --help-config
# help-config: at 80 columns when not a terminal, at $COLUMNS when set, the room used; one
# section on request; an unknown one exits 2 naming them all; --help prints its usage
widest() { awk '{ if (length > m) m = length } END { print m + 0 }'; }
width="$(env -u COLUMNS "$rtm3d" help-config | widest)"
if [ "$width" -gt 80 ] || [ "$width" -lt 78 ]; then
  echo "FAIL: help-config piped is $width columns wide, want 80"; failures=$((failures + 1))
fi
width="$(COLUMNS=100 "$rtm3d" help-config | widest)"
if [ "$width" -gt 100 ] || [ "$width" -le 80 ]; then
  echo "FAIL: help-config at COLUMNS=100 is $width columns wide"; failures=$((failures + 1))
fi
headers="$(env -u COLUMNS "$rtm3d" help-config rtm | grep '^\[' | tr '\n' ' ')"
if [ "$headers" != "[rtm] " ]; then
  echo "FAIL: help-config rtm printed the sections $headers"; failures=$((failures + 1))
fi
expect 2 "no section \[nope\]; the sections are grid, time, model, .*, rtm, bench, traces, mpi" \
  "$rtm3d" help-config nope
expect 0 "usage: rtm3d help-config \[SECTION" "$rtm3d" help-config --help
expect 0 "x_first .*auto = the first cell past the absorbing layer" \
  env COLUMNS=1000 "$rtm3d" help-config receivers
expect 0 "strategy .*host, device, vmm, vmm-compressed, managed or pinned" \
  env COLUMNS=1000 "$rtm3d" help-config memory
expect 0 "observed .*HDF5 file .*, or a SEG-Y file" env COLUMNS=1000 "$rtm3d" help-config rtm
expect 0 "backends:" "$rtm3d" info
# info says each fact once: memory strategies unavailable for one reason share a line
repeated="$("$rtm3d" info 2>&1 | grep -o '(unavailable: .*)' | sort | uniq -d)"
if [ -n "$repeated" ]; then
  echo "FAIL: rtm3d info repeats: $repeated"; failures=$((failures + 1))
fi

expect 2 "no config file" "$rtm3d" model
expect 2 "missing\.ini" "$rtm3d" model "$work/missing.ini"

# Every bad deck in tests/data/config names its own line: its first line reads
# '# expect: TEXT' with TEXT a fixed string the error must contain.
for deck in "$src"/tests/data/config/bad_*.ini; do
  [ -e "$deck" ] || continue
  want="$(sed -n '1s/^# expect: //p' "$deck")"
  expect 2 "$(printf '%s' "$want" | sed 's/[][\.*^$+?(){}|/]/\\&/g')" "$rtm3d" model "$deck"
done

cat >"$work/ok.ini" <<'DECK'
[grid]
nx = 24
ny = 24
nz = 24
[time]
steps = 4
[output]
dir = out
DECK
expect 2 "time\.dt = 0\.01 s .*stability limit.*: lower it, or set time\.dt = auto \(0\.002 s here" \
  "$rtm3d" model "$work/ok.ini" --set time.dt=0.01 --set output.dir="$work/o1"
expect 2 "--set.*nope" "$rtm3d" model "$work/ok.ini" --set grid.nope=3
expect 2 "grid\.nx" "$rtm3d" model "$work/ok.ini" --set grid.nx=-5
# known before the first step (the hardening probe's cases): a wavelet the grid cannot carry,
# a memory strategy nobody knows, a run that ends before the wavelet's peak (a warning)
expect 2 "source\.frequency = 1e\+300 Hz leaves .* points per shortest wavelength.*below 2" \
  "$rtm3d" model "$work/ok.ini" --set source.frequency=1e300 --set output.dir="$work/o1"
# snapshots that would fill tens of terabytes: refused before the first step (statvfs), and
# nothing is created
expect 1 "the outputs need about 4e\+04 GB in .*/o1, where .* GB are free: raise snapshots\.every" \
  "$rtm3d" model "$work/ok.ini" --set grid.nx=100 --set grid.ny=100 --set grid.nz=100 \
  --set time.steps=10000000 --set snapshots.every=1 --set receivers.layout=none \
  --set output.dir="$work/o1"
# a volume larger than the memory allowed: refused before the model is read or made (the file
# named does not exist, and the refusal is the memory's), naming the need; a 1500^3 tti run
# had been killed by the kernel filling its 67 GB of parameters on a 24 GB machine
expect 1 "the model's parameters \(5 volumes, 0\.000276 GB\) and the propagator \(0\.00144 GB\) need 0\.00172 GB of host memory for 24 x 24 x 24 cells, where 0\.0001 GB are allowed \(memory\.limit_gb\)" \
  "$rtm3d" model "$work/ok.ini" --set backend.name=cpu --set physics.equation=tti \
  --set model.file="$work/missing.h5" --set memory.limit_gb=0.0001 --set output.dir="$work/o1"
# a trace interval that would need terabytes for the gathers: refused before the run
expect 2 "output\.trace_dt = 1e-12 s makes 8e\+10 samples a trace .* raise output\.trace_dt" \
  "$rtm3d" model "$work/ok.ini" --set time.steps=40 --set output.trace_dt=1e-12 \
  --set output.dir="$work/o1"
expect 2 "memory\.strategy = 'bogus' is unknown \(known: auto, " \
  "$rtm3d" model "$work/ok.ini" --set memory.strategy=bogus --set output.dir="$work/o1"
expect 0 "warning: memory\.strategy = device is for the cuda backend" \
  "$rtm3d" model "$work/ok.ini" --set backend.name=cpu --set memory.strategy=device \
  --set output.dir="$work/o2"
expect 0 "warning: time\.steps x dt = 4 x 0\.0001 s = 0\.0004 s ends before the source wavelet" \
  "$rtm3d" model "$work/ok.ini" --set backend.name=cpu --set time.dt=1e-4 --force \
  --set output.dir="$work/o2"
# tune: its own options checked before any device work (a build with the cuda backend)
if "$rtm3d" info | grep -q "^build: *CUDA on"; then
  expect 2 "tune: --halo 'bogus' is unknown \(sync, ldgsts, tma\)" \
    "$rtm3d" tune "$work/ok.ini" --halo bogus
  expect 2 "tune: --time-limit 'soon' is not a positive number of seconds" \
    "$rtm3d" tune "$work/ok.ini" --time-limit soon
  expect 2 "tune: backend\.name = cpu; tune times the cuda kernels" \
    "$rtm3d" tune "$work/ok.ini" --set backend.name=cpu
fi
# makemodel: a described model into model.file, which a run then reads; refused when the
# file exists (without --force) and for a bad description, naming file:line and key
cat >"$work/layers.model" <<'MODEL'
background vp=1800 gradient=0.5   # m/s, 1/s
layer depth=120 dip=10 vp=2600 epsilon=0.1 delta=0.05 theta=20
diffractor x=120 y=120 z=60 radius=15 vp=3500
MODEL
mm=(--set model.file="$work/layers.h5" --set model.description="$work/layers.model")
expect 0 "makemodel: wrote .*layers\.h5 \(24 x 24 x 24 cells\)" "$rtm3d" makemodel "$work/ok.ini" "${mm[@]}"
expect 0 "" "$rtm3d" model "$work/ok.ini" "${mm[@]}" --set backend.name=cpu --set physics.equation=tti \
  --set output.dir="$work/o7" --quiet
expect 2 "layers\.h5 exists" "$rtm3d" makemodel "$work/ok.ini" "${mm[@]}"
printf 'background vp=2000\nlayer depth=100 vp=2500 dipp=3\n' >"$work/bad.model"
expect 2 "bad\.model:2: layer has no key 'dipp'" "$rtm3d" makemodel "$work/ok.ini" "${mm[@]}" \
  --set model.description="$work/bad.model" --force
# --name=value and --name value alike, for every command's options
expect 0 "" "$rtm3d" model "$work/ok.ini" --set=backend.name=cpu --set=snapshots.every=2 \
  --force --quiet --set=output.dir="$work/o6" --set output.name=eq
expect 0 "wrote .*eq\.png" "$rtm3d" plot "$work/o6/eq.h5" /snapshots/p --index=1 --slice=z=12 \
  --clip=98 --output="$work/o6/eq.png"
expect 0 "PASS" "$rtm3d" validate "$work/o6/eq.h5" "$work/o6/eq.h5" --rtol=0 --atol 0
expect 2 "plot: --index -1 must be >= 0" "$rtm3d" plot "$work/o6/eq.h5" /snapshots/p --index=-1
# --quiet prints errors alone: nothing for a run that warns (the wavelet's peak after its
# end); an error still prints
quiet_out="$("$rtm3d" model "$work/ok.ini" --set backend.name=cpu --quiet --force \
  --set output.dir="$work/o4" 2>&1)"
if [ -n "$quiet_out" ]; then
  echo "FAIL: model --quiet printed:"; sed 's/^/    /' <<<"$quiet_out"; failures=$((failures + 1))
fi
expect 2 "error: --set grid\.nx=0: out of range" "$rtm3d" model "$work/ok.ini" --quiet --set grid.nx=0
# a deck of control bytes: the message shows them escaped, never raw
printf '[grid]\nnx = \001\002\033[31mred\n' >"$work/garbage.ini"
expect 2 'grid\.nx = "\\x01\\x02\\x1b\[31mred": not an integer' "$rtm3d" model "$work/garbage.ini"
if "$rtm3d" model "$work/garbage.ini" 2>&1 | grep -q $'\033'; then
  echo "FAIL: a raw escape byte reached the terminal"; failures=$((failures + 1))
fi
# the quickstart's 15 Hz, dt and 400 steps with the correction turned off: the leapfrog's
# time dispersion leaves the last arrivals about 24% off; the warning says so and names the
# default that removes it, and is gone with the default (full) or full set
dispersive=(model "$work/ok.ini" --set backend.name=cpu --set source.frequency=15
  --set time.steps=400 --set receivers.layout=none --set snapshots.every=0 --force
  --set output.dir="$work/o3" --set time.dispersion_correction=none)
expect 0 "warning: time dispersion: with time\.dispersion_correction = none an arrival after the run's 0\.8 s .* is off by about 24% .*leave the correction at full" \
  "$rtm3d" "${dispersive[@]}"
# test_dispersion's trial (20 Hz, its farthest arrival near 0.26 s): the estimate quoted in
# solver/physics/stability.c
expect 0 "time dispersion: with time\.dispersion_correction = none an arrival after the run's 0\.26 s .* is off by about 19% " \
  "$rtm3d" "${dispersive[@]}" --set source.frequency=20 --set time.steps=130
if "$rtm3d" "${dispersive[@]}" --set time.dispersion_correction=full 2>&1 | grep -q "time dispersion"; then
  echo "FAIL: the time-dispersion warning with time.dispersion_correction = full"
  failures=$((failures + 1))
fi
if "$rtm3d" "${dispersive[@]:0:${#dispersive[@]}-2}" 2>&1 | grep -q "time dispersion"; then
  echo "FAIL: the time-dispersion warning with the default correction"
  failures=$((failures + 1))
fi
# a warning is said once a run: bench --traces on cpu builds its FFTW reference and the timed
# pipeline, each meeting the same Nyquist check
nyquist=$("$rtm3d" bench --traces --backend cpu --replays 3 --warmup 1 2>&1 |
  grep -c "warning: traces: .* Nyquist frequency")
if [ "$nyquist" -ne 1 ]; then
  echo "FAIL: bench --traces said its Nyquist warning $nyquist time(s), want once"
  failures=$((failures + 1))
fi
# on cpu one path serves every --pipeline: --pipeline streams timed it and checked it against
# FFTW (a probe: an empty table, exit 0)
if ! "$rtm3d" bench --traces --backend cpu --replays 3 --warmup 1 --pipeline streams 2>/dev/null |
  grep -q "^check cpu against FFTW: .*PASS"; then
  echo "FAIL: bench --traces --pipeline streams on cpu timed or checked nothing"
  failures=$((failures + 1))
fi
if ls "$work"/o1 2>/dev/null | grep -q .; then
  echo "FAIL: a run refused at setup left files in $work/o1:"; ls -l "$work/o1"; failures=$((failures + 1))
fi
# a second run into o2's file is refused before any work, the file left as it was; --force
# (or output.overwrite = true) replaces it
before="$(cksum < "$work/o2/rtm3d.h5")"
expect 2 "o2/rtm3d\.h5 exists: a run does not replace an earlier one's output; pass --force" \
  "$rtm3d" model "$work/ok.ini" --set backend.name=cpu --set output.dir="$work/o2"
if [ "$(cksum < "$work/o2/rtm3d.h5")" != "$before" ]; then
  echo "FAIL: a refused run changed $work/o2/rtm3d.h5"; failures=$((failures + 1))
fi
expect 0 "" "$rtm3d" model "$work/ok.ini" --set backend.name=cpu --set output.overwrite=true \
  --set output.dir="$work/o2"
# (a migration into the file it reads is refused as such, --force or not)
expect 2 "rtm\.observed = .*o2/rtm3d\.h5 is also an output of this run" "$rtm3d" migrate \
  "$work/ok.ini" --set rtm.observed="$work/o2/rtm3d.h5" --set output.dir="$work/o2"
# a deck's own errors come before an existing output's refusal (the output is claimed once
# the deck is checked, still before any work): an unstable dt (with the constant model's
# fastest layer), shots from a missing file, a migration without its gathers
deck_error_first() {
  local pattern="$1"
  shift
  expect 2 "$pattern" "$@"
  if "$@" 2>&1 | grep -q "exists"; then
    echo "FAIL: '$*' refused the existing output before the deck's error"
    failures=$((failures + 1))
  fi
}
deck_error_first "time\.dt = 0\.01 s is outside .*or set time\.dt = auto" \
  "$rtm3d" model "$work/ok.ini" --set time.dt=0.01 --set output.dir="$work/o2"
deck_error_first "time\.dt = 0\.0021 s is outside \(0, 0\.00150952 s\], the stability limit for v_max = 3000" \
  "$rtm3d" migrate "$work/ok.ini" --set rtm.observed="$work/o2/rtm3d.h5" --set time.dt=0.0021 \
  --set model.interface_z=100 --set model.vp_below=3000 --set output.dir="$work/o2"
deck_error_first "nowhere\.txt" "$rtm3d" model "$work/ok.ini" --set shots.layout=file \
  --set shots.file="$work/nowhere.txt" --set output.dir="$work/o2"
deck_error_first "migrate needs rtm\.observed" "$rtm3d" migrate "$work/ok.ini" \
  --set output.dir="$work/o2"

echo "cli_basics: $failures failure(s)"
[ "$failures" -eq 0 ]
