#!/usr/bin/env python3
"""run/tools/sass_stalls_top.py SASS_STALLS_CSV [N] - where a profiled kernel's warps wait.
run/tools/sass_stalls_top.py --issued SASS_STALLS_CSV CELLS [N] - where its issue slots go.

Reads the per-instruction page that tti_profile.sh writes (ncu --page source --csv
--print-source sass: sass_stalls.csv) and prints the stall reasons' shares of all warp stall
samples, then the N instructions (default 30) with the most samples, in program order: index,
share, the instruction, and its three largest reasons (samples). A TRYWAIT's loop branch
(`@!P BRA` right after a SYNCS.PHASECHK) waiting on long_sb is a warp waiting for an mbarrier.
With --issued: the warp instructions executed (ncu's "Instructions Executed"), in all and a
cell of the CELLS the launch updated, their shares by opcode, by 512-byte block of the code
(a loop or a branch's body lies in one or two) and the N instructions executed most, in
program order with their offsets. A YIELD, SYNCS.PHASECHK...TRYWAIT, @!P BRA trio that
executes often is a thread spinning on an mbarrier."""
import csv
import sys


def read_page(path, column):
    """The header and the instruction rows of ncu's source page, which must hold `column`."""
    try:
        rows = [r for r in csv.reader(open(path)) if len(r) > 5]
    except OSError as e:
        sys.exit("sass_stalls_top.py: %s" % e)
    first = next((i for i, r in enumerate(rows) if "Source" in r), None)
    if first is None:
        sys.exit("sass_stalls_top.py: %s has no Source column (not ncu's source page)" % path)
    head, rows = rows[first], rows[first + 1:]
    if column not in head:
        sys.exit("sass_stalls_top.py: %s has no %s (profiled without --section "
                 "SourceCounters?)" % (path, column))
    return head, rows


def issued(path, cells, n):
    head, rows = read_page(path, "Instructions Executed")
    source, executed, address = (head.index(k) for k in ("Source", "Instructions Executed", "Address"))
    count = [int(r[executed] or 0) for r in rows]
    total = sum(count) or 1
    offset = [int(r[address], 16) - int(rows[0][address], 16) for r in rows]
    print("warp instructions executed %d, %.2f a cell" % (total, total / cells))
    by_opcode, by_block = {}, {}
    for r, c, o in zip(rows, count, offset):
        words = r[source].split()
        if words:
            op = (words[1] if words[0].startswith("@") and len(words) > 1 else words[0]).split(".")[0]
            by_opcode[op] = by_opcode.get(op, 0) + c
        by_block[o // 512] = by_block.get(o // 512, 0) + c
    print("by opcode: " + " ".join("%s %.1f%%" % (k, 100 * v / total) for k, v in
                                   sorted(by_opcode.items(), key=lambda kv: -kv[1])[:20]))
    print("by 512-byte block: " + " ".join("0x%x %.1f%%" % (512 * k, 100 * v / total)
                                          for k, v in sorted(by_block.items()) if v / total >= 0.005))
    for i in sorted(sorted(range(len(rows)), key=lambda i: -count[i])[:n]):
        print("0x%05x %5.2f%%  %s" % (offset[i], 100 * count[i] / total, rows[i][source].strip()[:70]))


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "--issued":
        return issued(sys.argv[2], float(sys.argv[3]), int(sys.argv[4]) if len(sys.argv) > 4 else 30)
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: sass_stalls_top.py SASS_STALLS_CSV [N] | --issued SASS_STALLS_CSV CELLS [N]")
    head, rows = read_page(sys.argv[1], "Warp Stall Sampling (All Samples)")
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
