#!/usr/bin/env bash
# The SEG-Y file test_segy wrote, read by a second implementation: segyio's Python module
# (python3-segyio) checks its headers and samples against segy_formula.h's formulas. Exit 77
# (skipped) without a Python that has segyio. Usage: segy_second_reader.sh FILE.sgy
set -u
for python in python3 /usr/bin/python3; do
  if "$python" -c "import segyio, numpy" 2>/dev/null; then
    exec "$python" "$(dirname "$0")/segy_second_reader.py" "$1"
  fi
done
echo "segy_second_reader: no Python with segyio and numpy (python3-segyio), skipped"
exit 77
