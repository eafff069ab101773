#!/usr/bin/env python3
"""run/tools/report_timings.py REPORT.json [--wall T0 T1] [KEY ...] - a run report's
timings_s, wherever it sits in the report: printed as KEY=SECONDS (all of them when no KEY is
named, 0.000 for a key the report lacks). With --wall, the process's wall from T0 to T1
(`date +%s.%N` before and after it) against the report's propagate comes first: "process W s,
propagate P s: W/P x;". The device scripts import timings() from here."""
import json
import sys


def find(node, key):
    """The first value of key in a nested JSON object, depth first; None when absent."""
    if isinstance(node, dict):
        if key in node:
            return node[key]
        for value in node.values():
            found = find(value, key)
            if found is not None:
                return found
    return None


def timings(path):
    """The report's timings_s as {phase: seconds} ({} when it has none)."""
    with open(path, encoding="utf-8") as report:
        found = find(json.load(report), "timings_s") or {}
    return {key: float(value or 0) for key, value in found.items()}


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: report_timings.py REPORT.json [KEY ...]")
    t = timings(sys.argv[1])
    keys = sys.argv[2:]
    head = ""
    if keys[:1] == ["--wall"]:
        wall = float(keys[2]) - float(keys[1])
        propagate = t.get("propagate", 0.0)
        ratio = wall / propagate if propagate > 0 else float("nan")
        head = f"process {wall:.2f} s, propagate {propagate:.2f} s: {ratio:.3f} x; "
        keys = keys[3:]
    print(head + " ".join(f"{k}={t.get(k, 0.0):.3f}" for k in (keys or sorted(t))))
