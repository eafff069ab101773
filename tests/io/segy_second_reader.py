"""segyio's Python reader on the SEG-Y file test_segy wrote (test_segy.d/formula.sgy): the
binary and trace headers and every sample against the formulas of segy_formula.h.
Usage: segy_second_reader.py FILE.sgy; exit 0 when everything agrees."""
import math
import sys

import numpy as np
import segyio

SHOTS, SAMPLES, DT_US = 2, 51, 2000


def receivers(shot):
    return 3 + shot


def source(shot):
    return (100.25 + 50.0 * shot, 200.5, 30.125)


def receiver(shot, r):
    return (10.5 * r + shot, 20.25 + r, 5.0 + 0.5 * r)


def sample(shot, r, s):
    return np.float32((shot + 1) * 0.5 - r * 0.25 + s * 1e-3)


def scaled(value, scalar):
    return value * scalar if scalar > 0 else value / -scalar if scalar < 0 else value


def main(path):
    failures = []

    def check(what, got, want):
        if got != want:
            failures.append(f"{what}: {got!r}, expected {want!r}")

    with segyio.open(path, ignore_geometry=True) as f:
        tf, bf = segyio.TraceField, segyio.BinField
        check("trace count", f.tracecount, sum(receivers(k) for k in range(SHOTS)))
        check("samples", len(f.samples), SAMPLES)
        check("binary interval", f.bin[bf.Interval], DT_US)
        check("binary samples", f.bin[bf.Samples], SAMPLES)
        check("format (IEEE float)", f.bin[bf.Format], 5)
        check("revision", f.bin[bf.SEGYRevision], 0x0100)
        t = 0
        for k in range(SHOTS):
            sx, sy, sz = source(k)
            for r in range(receivers(k)):
                h = f.header[t]
                gx, gy, gz = receiver(k, r)
                xy, el = h[tf.SourceGroupScalar], h[tf.ElevationScalar]
                check(f"trace {t} shot", h[tf.FieldRecord], k + 1)
                check(f"trace {t} receiver", h[tf.TraceNumber], r + 1)
                check(f"trace {t} source x", scaled(h[tf.SourceX], xy), sx)
                check(f"trace {t} source y", scaled(h[tf.SourceY], xy), sy)
                check(f"trace {t} source depth", scaled(h[tf.SourceDepth], el), sz)
                check(f"trace {t} receiver x", scaled(h[tf.GroupX], xy), gx)
                check(f"trace {t} receiver y", scaled(h[tf.GroupY], xy), gy)
                check(f"trace {t} receiver elevation", scaled(h[tf.ReceiverGroupElevation], el), -gz)
                check(f"trace {t} offset", h[tf.offset], round(math.hypot(gx - sx, gy - sy)))
                check(f"trace {t} interval", h[tf.TRACE_SAMPLE_INTERVAL], DT_US)
                check(f"trace {t} count", h[tf.TRACE_SAMPLE_COUNT], SAMPLES)
                want = np.array([sample(k, r, s) for s in range(SAMPLES)], dtype=np.float32)
                if not np.array_equal(f.trace[t], want):
                    failures.append(f"trace {t}: samples differ (max {np.abs(f.trace[t] - want).max()})")
                t += 1
    for line in failures[:20]:
        print("FAIL:", line)
    print(f"segy_second_reader: {path}: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
