#!/usr/bin/env bash
# run/fuzz.sh [SECONDS [TARGET...]] - the libFuzzer targets of tests/fuzz, each run for
# SECONDS (default 600); TARGETs (deck, model, points, segy) run those alone. fuzz_deck:
# the deck parser and validation; fuzz_model: the HDF5 model reader; fuzz_points: the
# points-file reader of shots.file and receivers.file; fuzz_segy, when the build has
# segyio: the SEG-Y reader of rtm.observed. Builds them in build-fuzz with clang
# (libFuzzer), AddressSanitizer and UndefinedBehaviorSanitizer, without CUDA and MPI.
# Seeds, tests/fuzz/corpus/<target>: deck (the example decks, the config tests' decks,
# hostile ones), model (a valid 6 x 5 x 4 tti model written by make_model_seed), points
# (valid files of "x y z" lines) and segy (two shots of two receivers, 17 samples, from
# rtm3d model on tests/fuzz/segy_seed.ini, in IEEE and in IBM floats). What the fuzzer adds
# goes to build-fuzz/corpus/<target>, a crash, leak or hang (an input over 25 s) to
# build-fuzz/crash-*, leak-*, timeout-*; the log of each run is build-fuzz/fuzz_<target>.log.
# Prints the executions and the finding (or none) of each; run/results/fuzz.md holds the
# last measured run. Not part of CI (the issue's bar: 10 minutes a target, no finding).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-600}"
shift $(($# > 0 ? 1 : 0))
command -v clang > /dev/null || { echo "fuzz.sh: needs clang (apt-get install clang)" >&2; exit 2; }
CC=clang cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DRTM3D_ENABLE_CUDA=OFF -DRTM3D_ENABLE_MPI=OFF -DRTM3D_BUILD_TESTS=OFF -DRTM3D_FUZZ=ON \
  -DRTM3D_SANITIZE=address,undefined > build-fuzz.configure.log 2>&1 ||
  { cat build-fuzz.configure.log; exit 1; }
rm -f build-fuzz.configure.log
# tests/fuzz/all: fuzz_segy is there only when the build has segyio
cmake --build build-fuzz --target tests/fuzz/all
[ -s tests/fuzz/corpus/model/seed.h5 ] ||
  build-fuzz/tests/fuzz/make_model_seed tests/fuzz/corpus/model/seed.h5
failed=0
targets="${*:-deck model points segy}"
if [[ " $targets " == *" segy "* ]] &&
  ! ninja -C build-fuzz -t targets all | grep "^fuzz_segy:" > /dev/null; then
  targets="${targets/segy/}"
  echo "fuzz_segy: not built (this build has no segyio: libsegyio-dev)"
fi
for target in $targets; do
  [ -x "build-fuzz/tests/fuzz/fuzz_$target" ] ||
    { echo "fuzz.sh: no target fuzz_$target (deck, model, points, segy)" >&2; exit 2; }
done
# HDF5's own leaks on corrupt files are not ours (tests/fuzz/lsan.supp says which; to see
# a leak's whole stack through the library, rerun its input with
# ASAN_OPTIONS=fast_unwind_on_malloc=0)
export LSAN_OPTIONS="suppressions=$PWD/tests/fuzz/lsan.supp"
for target in $targets; do
  mkdir -p "build-fuzz/corpus/$target"
  status=0
  # -close_fd_mask=3: the targets' own messages (refusals) are not printed; -timeout: an
  # input that takes 25 s is a hang (libFuzzer's default waits 1200 s, past most runs' end)
  "build-fuzz/tests/fuzz/fuzz_$target" -max_total_time="$seconds" -timeout=25 -close_fd_mask=3 \
    -print_final_stats=1 -artifact_prefix=build-fuzz/ "build-fuzz/corpus/$target" \
    "tests/fuzz/corpus/$target" > "build-fuzz/fuzz_$target.log" 2>&1 || status=$?
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "build-fuzz/fuzz_$target.log" |
    grep -o '[0-9]*$' || echo "?")
  if [ "$status" -eq 0 ]; then
    echo "fuzz_$target: $runs executions in ${seconds} s, no finding"
  else
    failed=1
    echo "fuzz_$target: a finding after $runs executions (exit $status):"
    grep -E "ERROR|SUMMARY|#[0-9]+ 0x" "build-fuzz/fuzz_$target.log" | head -15
  fi
done
exit "$failed"
