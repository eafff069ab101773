#!/usr/bin/env bash
# Values in range but absurd : each refused with exit 2 naming its key, before
# anything large is allocated (every run is bounded by `timeout`, so a late refusal fails
# rather than hangs), and nothing left in the output folder; keys a run ignores are named
# in a warning; a signal during the set-up is heard at once.
source "$(dirname "$0")/lib.sh" "$@"

deck="$work/tiny.ini"
tiny_deck "$deck"
# the positions auto (the volume's centre, the plane inside the absorbing layer), so that
# only the key under test can be at fault
autos=(--set source.x=auto --set source.y=auto --set source.z=auto --set receivers.z=auto
  --set receivers.y_first=auto)

# refused KEY=VALUE PATTERN [MORE --set ...]: `model` exits 2 within 20 s naming the key,
# and leaves nothing in its own output folder
case_count=0
refused() {
  local setting="$1" pattern="$2"
  shift 2
  case_count=$((case_count + 1))
  expect 2 "$pattern" timeout 20 "$rtm3d" model "$deck" "${autos[@]}" --set "$setting" "$@" \
    --set output.dir="$work/out$case_count"
  expect_no_output "$work/out$case_count" tiny
}

# a step in which the float32 fields cannot see a 15 Hz wave move (2 pi f dt < 3.5e-4 rad)
refused time.dt=1e-300 "time\.dt = 1e-300 s is too short for source\.frequency = 15 Hz"
refused time.dt=1e-300 "time\.dt = 1e-300 s is too short" --set source.delay=0
# traces hold steps + 1 samples, an int count
refused time.steps=2147483647 "time\.steps = 2147483647: .*32-bit count"
# 2e9 samples of a wavelet and of 8 receivers' traces (80 GB) weighed before they are made
# (memory.limit_gb: the same verdict on a machine of any size)
refused time.steps=2000000000 \
  "time\.steps = 2000000000: the source wavelet and the traces of [0-9]+ receivers.* lower time\.steps" \
  --set memory.limit_gb=1 --set time.dispersion_correction=none
refused source.amplitude=1e308 "source\.amplitude = 1e\+308: .*float32"
refused source.delay=1e308 "source\.delay = 1e\+308 s .*never fire"
refused source.frequency=1e-320 "source\.frequency = [0-9.e+-]+ Hz is too low"
# with time.dt given: the frequency named, not time.dt ("time.dt >= inf s lets it", probe E12)
refused source.frequency=1e-320 "source\.frequency = [0-9.e+-]+ Hz is too low for any stable time\.dt" \
  --set time.dt=1e-3
grep -q "time\.dt >=" <<<"$rob_output" && rob_fail "1e-320 Hz blamed on time.dt" ||
  rob_pass "1e-320 Hz not blamed on time.dt"
# coordinates a double cannot tell 10 m apart at (16 receivers would fall on 4 taps)
refused grid.ox=1e308 "grid\.ox = 1e\+308 m: .*collapse"
refused grid.ox=1e17 "grid\.ox = 1e\+17 m: .*collapse"
# a spacing whose 1/dx^2 overflows float32: named, not blamed on time.cfl
refused grid.dx=1e-320 "grid\.dx = [0-9.e+-]+ m: .*1/dx\^2"
# an amplitude of 0 (all-zero outputs, once written without a word) and a spacing so fine
# that the Laplacian overflows (once blamed on source.amplitude = 1)
refused source.amplitude=0 "source\.amplitude = 0: every trace, snapshot and image would be zero"
# amplitudes so small that the far wavefield falls among float32's subnormals (probe N, N1:
# 1e-42 gave gathers of zeros, 1e-38 traces 0.25% off, with exit 0); migrate's squares
# (1e-30: an illumination underflowed to zero, the image 1e65 off; 1e-20 here, which model
# takes)
refused source.amplitude=1e-42 "source\.amplitude = 1e-42: the wavefield across the volume.*subnormal|source\.amplitude = 1e-42: the wavefield across the volume.*loses precision"
refused source.amplitude=-1e-38 "source\.amplitude = -1e-38: .*\|source\.amplitude\| >= "
expect 2 "source\.amplitude = 1e-20: migrate sums the source wavefield squared.*>= " \
  timeout 20 "$rtm3d" migrate "$deck" "${autos[@]}" --set source.amplitude=1e-20 \
  --set rtm.observed="$work/none.h5" --set output.dir="$work/tiny_migrate"
expect_no_output "$work/tiny_migrate" tiny
# the least amplitude model takes still gives gathers that scale with it
expect 0 "" timeout 60 "$rtm3d" model "$deck" "${autos[@]}" --set source.amplitude=1e-20 \
  --set output.dir="$work/small" --quiet
expect 0 "" "$rtm3d" model "$deck" "${autos[@]}" --set output.dir="$work/unit" --quiet
# a spacing so coarse that the Laplacian of the far wavefield underflows float32 (probe O, O1:
# 1e14 m gave gathers 7% to 360% off with exit 0)
refused grid.dx=1e14 "grid spacing h_max = 1e\+14 m: the Laplacian of the wavefield"
# at a usual spacing the same underflow comes of a tiny amplitude, and is said of it (once
# blamed on the grid spacing, 10 m)
refused source.amplitude=1e-27 "source\.amplitude = 1e-27: the Laplacian of the wavefield.*\|source\.amplitude\| >= "
# gathers so small that the image's products S R underflow (probe O, O2: a record scaled by
# 1e-38 gave an image 64% off; with source.amplitude 1e-11 a record of 1e-30 an image of
# zeros): migrate refuses them naming the shot, and images the same record with amplitude 1
expect 2 "small/tiny\.h5: shot 0's largest sample is [0-9.e-]+: the image sums" \
  timeout 60 "$rtm3d" migrate "$deck" "${autos[@]}" --set source.amplitude=1e-11 \
  --set rtm.observed="$work/small/tiny.h5" --set output.dir="$work/small_migrate" --quiet
expect_no_output "$work/small_migrate" tiny
# ... and a large source amplitude over it: the image divided by the illumination, about R / S,
# underflows (probe P, P3: 1e19 over a record of 1e-30 gave an image of zeros with exit 0)
expect 2 "small/tiny\.h5: shot 0's largest sample is [0-9.e-]+: the image divided by the illumination" \
  timeout 60 "$rtm3d" migrate "$deck" "${autos[@]}" --set source.amplitude=1e19 \
  --set rtm.observed="$work/small/tiny.h5" --set output.dir="$work/small_migrate" --quiet
expect_no_output "$work/small_migrate" tiny
expect 0 "" timeout 60 "$rtm3d" migrate "$deck" "${autos[@]}" \
  --set rtm.observed="$work/small/tiny.h5" --set output.dir="$work/small_migrate" --quiet
# an imaging step coarser than auto's four samples a period aliases the image (probe O, O3:
# tens of percent, without a word): a warning names the most that does not
expect 0 "warning: rtm\.imaging_step = 10 is coarser than [0-9]+, four samples a period" \
  timeout 60 "$rtm3d" migrate "$deck" "${autos[@]}" --set rtm.imaging_step=10 \
  --set rtm.observed="$work/small/tiny.h5" --set output.dir="$work/coarse_imaging"
# plot --raw says its clip, the 99th percentile of |value|: 1e-20 times the unit run's
clips=()
for run in small unit; do
  clips+=("$("$rtm3d" plot "$work/$run/tiny.h5" /traces/p --raw -o "$work/$run.png" |
    sed -n 's/.*clip [^0-9]*\([0-9.e+-]*\) at.*/\1/p')")
done
awk -v a="${clips[0]}" -v b="${clips[1]}" 'BEGIN { r = a / b / 1e-20; exit !(b > 0 && r > 0.999 && r < 1.001) }' &&
  rob_pass "1e-20's gathers are 1e-20 times the unit ones (clips ${clips[*]})" ||
  rob_fail "1e-20's gathers do not scale: clips ${clips[*]}"
refused grid.dx=1e-19 "grid spacing h_min = 1e-19 m: .*grid\.dx, grid\.dy and grid\.dz must be far larger"
# a velocity float32 holds as 0 (once "model vp = 0 m/s at cell (ix 0, iy 0, iz 0)")
refused model.vp=1e-300 "model\.vp = 1e-300 m/s: the model holds velocities as float32, where this is 0"
refused model.vp_below=1e-40 "model\.vp_below = 1e-40 m/s: .*denormal" --set model.interface_z=120
# a receiver step far finer than the cells: run, with a warning that says what it costs
expect 0 "warning: receivers\.x_step = 1 m is 10 times finer than grid\.dx = 10 m" timeout 60 \
  "$rtm3d" model "$deck" "${autos[@]}" --set receivers.x_step=1 --set output.dir="$work/dense"
# a run too long for the time-dispersion warps (the default correction): refused at once,
# naming both keys (it was found in the set-up, after seconds of work, without a key)
refused time.steps=300000000 "time\.steps = 300000000 with time\.dispersion_correction = full"
# a name ending in .resume would be another run's resume state (NAME.resume.h5), under
# another lock
refused output.name=cy.resume "output\.name = \"cy\.resume\": a name ending in \.resume is a migration's resume state"
# the exchange off: every slab computes on stale ghost planes (the probe's run under mpirun
# wrote a wrong image with exit 0); refused on any rank count, bench measures it
refused mpi.exchange=off "mpi\.exchange = off leaves the z-slabs' ghost planes stale"
# a receiver every millimetre: the tap tables of millions of sinc points are weighed before
# they are made (the probe's run was killed by the kernel's OOM killer)
refused receivers.x_step=1e-3 "[0-9]+ receivers: their tap tables \(sinc points\) and gathers take .*record fewer receivers" \
  --set memory.limit_gb=0.5
if grep -q "time\.cfl" <<<"$rob_output"; then
  rob_fail "grid.dx = 1e-320 blamed on time.cfl: $rob_output"
else
  rob_pass "grid.dx = 1e-320 not blamed on time.cfl"
fi

# accuracy: dt = 1e-300 refused, never a table of -nan%
expect 2 "time\.dt = 1e-300 s is too short" timeout 20 "$rtm3d" accuracy "$deck" \
  --set time.dt=1e-300
if grep -qi "nan" <<<"$rob_output"; then
  rob_fail "accuracy printed a NaN: $rob_output"
else
  rob_pass "accuracy printed no NaN"
fi

# keys a run ignores, each named: the constant model beside model.file, kernel.* on cpu
echo "background vp=2000" >"$work/layers.model"
expect 0 "wrote" "$rtm3d" makemodel "$deck" --set model.description="$work/layers.model" \
  --set model.file="$work/model.h5"
expect 0 "warning: .*model\.vp = 3000 is ignored: model\.file" timeout 60 "$rtm3d" model "$deck" \
  --set model.file="$work/model.h5" --set model.vp=3000 --set output.dir="$work/ignored1"
expect 0 "warning: kernel\.halo = tma is ignored by the cpu backend" timeout 60 "$rtm3d" model \
  "$deck" --set kernel.halo=tma --set output.dir="$work/ignored2"
expect 0 "warning: kernel\.block_x = 32 is ignored by the cpu backend" timeout 60 "$rtm3d" model \
  "$deck" --set kernel.block_x=32 --set output.dir="$work/ignored3"

# a model file whose origin attribute is NaN (a NaN compares false: it passed 'differs'),
# written through the libhdf5 rtm3d runs with (as h5edit does for datasets)
if have_h5edit; then
  expect 0 "wrote" "$rtm3d" makemodel "$deck" --set model.description="$work/layers.model" \
    --set model.file="$work/origin_nan.h5"
  python3 - "$rob_libhdf5" "$work/origin_nan.h5" <<'PY'
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
hid = ctypes.c_int64
lib.H5Fopen.restype = lib.H5Aopen.restype = hid
lib.H5open()
f = lib.H5Fopen(sys.argv[2].encode(), 1, hid(0))  # H5F_ACC_RDWR, H5P_DEFAULT
assert f >= 0, "cannot open the file"
a = lib.H5Aopen(hid(f), b"origin", hid(0))
assert a >= 0, "no root attribute origin"
origin = (ctypes.c_double * 3)(float("nan"), 0.0, 0.0)
assert lib.H5Awrite(hid(a), hid.in_dll(lib, "H5T_NATIVE_DOUBLE_g"), origin) >= 0
assert lib.H5Aclose(hid(a)) >= 0 and lib.H5Fclose(hid(f)) >= 0
PY
  expect 2 "model file .*origin_nan\.h5: attribute origin = \(nan, 0, 0\) m is not finite" \
    timeout 20 "$rtm3d" model "$deck" --set model.file="$work/origin_nan.h5" \
    --set output.dir="$work/out_origin"
  expect_no_output "$work/out_origin" tiny
else
  echo "$rob_name: the NaN origin case needs python3 and rtm3d's libhdf5: not run"
fi

# SIGINT during the set-up: 3e8 wavelet samples take seconds to make; the signal is heard
# within them (the run exits 130 at once), not after them. The signal goes to rtm3d alone
# (timeout(1) would send it a second one, which ends a run at once); a run still there 30 s
# after it is killed.
# (time.dispersion_correction = none: the warps refuse so long a trace, below)
"$rtm3d" model "$deck" --set time.steps=300000000 --set receivers.layout=none \
  --set time.dispersion_correction=none --set output.dir="$work/out_signal" \
  >"$work/signal.log" 2>&1 &
pid=$!
sleep 1
signalled=$(date +%s%N)
kill -INT "$pid"
for _ in $(seq 300); do
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
kill -KILL "$pid" 2>/dev/null
wait "$pid"
status=$?
waited_ms=$((($(date +%s%N) - signalled) / 1000000))
if [ "$status" -eq 130 ] && [ "$waited_ms" -lt 3000 ] &&
  grep -Eq "stopped by SIGINT (while|after)" "$work/signal.log"; then
  rob_pass "SIGINT during the set-up: exit 130 after $waited_ms ms"
else
  rob_fail "SIGINT during the set-up: exit $status after $waited_ms ms (want 130 within 3 s)"
  sed 's/^/    /' "$work/signal.log" | head -5
fi
expect_no_output "$work/out_signal" tiny

rob_finish
