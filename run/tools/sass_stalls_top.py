#!/usr/bin/env python3
"""run/tools/sass_stalls_top.py SASS_STALLS_CSV [N] - where a profiled kernel's warps wait.

Reads the per-instruction page that tti_profile.sh writes (ncu --page source --csv
--print-source sass: sass_stalls.csv) and prints the stall reasons' shares of all warp stall
samples, then the N instructions (default 30) with the most samples, in program order: index,
share, the instruction, and its three largest reasons (samples). A TRYWAIT's loop branch
(`@!P BRA` right after a SYNCS.PHASECHK) waiting on long_sb is a warp waiting for an mbarrier."""
import csv
import sys


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: sass_stalls_top.py SASS_STALLS_CSV [N]")
    try:
        rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 5]
    except OSError as e:
        sys.exit("sass_stalls_top.py: %s" % e)
    first = next((i for i, r in enumerate(rows) if "Source" in r), None)
    if first is None:
        sys.exit("sass_stalls_top.py: %s has no Source column (not ncu's source page)" % sys.argv[1])
    head, rows = rows[first], rows[first + 1:]
    if "Warp Stall Sampling (All Samples)" not in head:
        sys.exit("sass_stalls_top.py: %s has no warp stall samples (profiled without "
                 "--section SourceCounters?)" % sys.argv[1])
    source, samples = head.index("Source"), head.index("Warp Stall Sampling (All Samples)")
    reasons = [h for h in head if h.startswith("stall_") and "Not Issued" not in h]
    column = {k: head.index(k) for k in reasons}
    count = lambda r, k: int(r[column[k]] or 0)
    total = sum(int(r[samples] or 0) for r in rows) or 1
    shares = sorted(((sum(count(r, k) for r in rows), k) for k in reasons), reverse=True)
    print("stall samples %d: %s" % (total, " ".join(
        "%s %.1f%%" % (k[len("stall_"):], 100 * n / total) for n, k in shares if n)))
    top = sorted(range(len(rows)), key=lambda i: -int(rows[i][samples] or 0))
    for i in sorted(top[:int(sys.argv[2]) if len(sys.argv) > 2 else 30]):
        r = rows[i]
        most = sorted(((count(r, k), k[len("stall_"):]) for k in reasons), reverse=True)[:3]
        print("%5d %5.1f%%  %-58s %s" % (i, 100 * int(r[samples] or 0) / total, r[source].strip()[:58],
                                         " ".join("%s:%d" % (k, n) for n, k in most if n)))


if __name__ == "__main__":
    main()
