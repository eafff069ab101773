#!/usr/bin/env python3
"""run/tools/ncu_kernels.py NCU_LOG [LABEL] [--top N] - each kernel's GPU time in the output
of `ncu --metrics gpu__time_duration.sum ...`: a line a kernel (its signature up to its launch
shape, 64 characters), the kernels by their total time, most first (the N first with --top):
LABEL, launches, total ms; least, median, most and mean us a launch. The device scripts'
profiles (run/experiments/step_gap_probe.sh, backward_kernels_probe.sh) print through it."""
import argparse
import collections
import re
import statistics
import sys

SCALE = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3, "ms": 1e3}


def kernel_times(path):
    """{kernel: [us, ...]} in launch order, from an ncu log."""
    times, name = collections.defaultdict(list), None
    for line in open(path, errors="replace"):
        if "Context" in line and "Stream" in line:  # a launch's header line
            name = line.strip().split(" (")[0]
        m = re.search(r"gpu__time_duration.sum\s+(\S+)\s+([\d.,]+)", line)
        if m and name:
            times[name].append(float(m.group(2).replace(",", "")) * SCALE.get(m.group(1), 1.0))
    return times


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("log", help="the output of ncu --metrics gpu__time_duration.sum")
    p.add_argument("label", nargs="?", default="ncu", help="the lines' first column")
    p.add_argument("--top", type=int, default=None, help="the N kernels of most total time")
    o = p.parse_args(argv)
    times = kernel_times(o.log)
    for k in sorted(times, key=lambda k: sum(times[k]), reverse=True)[:o.top]:
        t = sorted(times[k])
        print(f"{o.label:13s} {k[:64]:64s} {len(t):4d} launches, {sum(t) / 1e3:7.2f} ms; least "
              f"{t[0]:7.1f}, median {statistics.median(t):7.1f}, most {t[-1]:7.1f}, mean "
              f"{sum(t) / len(t):7.1f} us")


if __name__ == "__main__":
    main(sys.argv[1:])
