#!/usr/bin/env python3
"""run/experiments/correction_timeline.py LOG CMD... - runs CMD with its stderr read line by
line (progress lines end in a carriage return) and each line stamped with the seconds since
the launch, written to LOG, then a last line "exit SECONDS STATUS": where a run's wall time
goes between the lines it prints (issue 35: the full receiver plane's correction cost)."""
import subprocess
import sys
import time

start = time.monotonic()
with open(sys.argv[1], "w", encoding="utf-8") as log:
    child = subprocess.Popen(sys.argv[2:], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
    line = b""
    while True:
        byte = child.stderr.read(1)
        if not byte:
            break
        if byte in (b"\n", b"\r"):
            if line:
                log.write(f"{time.monotonic() - start:8.4f} {line.decode(errors='replace')}\n")
            line = b""
        else:
            line += byte
    status = child.wait()
    log.write(f"{time.monotonic() - start:8.4f} exit {status}\n")
sys.exit(status)
