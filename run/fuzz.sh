#!/usr/bin/env bash
# run/fuzz.sh [SECONDS] - the libFuzzer targets of tests/fuzz, each run for SECONDS (default
# 600): fuzz_deck (the deck parser and validation) and fuzz_model (the HDF5 model reader).
# Builds them in build-fuzz with clang (libFuzzer), AddressSanitizer and
# UndefinedBehaviorSanitizer, without CUDA and MPI. Seeds: tests/fuzz/corpus/deck (the
# example decks, the config tests' decks, hostile ones) and tests/fuzz/corpus/model (a valid
# 6 x 5 x 4 tti model written by make_model_seed). What the fuzzer adds goes to
# build-fuzz/corpus/<target>, a crash to build-fuzz/crash-*; the log of each run is
# build-fuzz/fuzz_<target>.log. Prints the executions and the finding (or none) of each.
# Not part of CI (the issue's bar: 10 minutes a target, no finding).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-600}"
command -v clang > /dev/null || { echo "fuzz.sh: needs clang (apt-get install clang)" >&2; exit 2; }
CC=clang cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DRTM3D_ENABLE_CUDA=OFF -DRTM3D_ENABLE_MPI=OFF -DRTM3D_BUILD_TESTS=OFF -DRTM3D_FUZZ=ON \
  -DRTM3D_SANITIZE=address,undefined > build-fuzz.configure.log 2>&1 ||
  { cat build-fuzz.configure.log; exit 1; }
rm -f build-fuzz.configure.log
cmake --build build-fuzz --target fuzz_deck fuzz_model make_model_seed
[ -s tests/fuzz/corpus/model/seed.h5 ] ||
  build-fuzz/tests/fuzz/make_model_seed tests/fuzz/corpus/model/seed.h5
failed=0
# HDF5's own leaks on corrupt files are not ours (tests/fuzz/lsan.supp says which; to see
# a leak's whole stack through the library, rerun its input with
# ASAN_OPTIONS=fast_unwind_on_malloc=0)
export LSAN_OPTIONS="suppressions=$PWD/tests/fuzz/lsan.supp"
for target in deck model; do
  mkdir -p "build-fuzz/corpus/$target"
  status=0
  # -close_fd_mask=3: the targets' own messages (refusals) are not printed
  "build-fuzz/tests/fuzz/fuzz_$target" -max_total_time="$seconds" -close_fd_mask=3 \
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
