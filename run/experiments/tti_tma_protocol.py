#!/usr/bin/env python3
# run/experiments/tti_tma_protocol.py [RUNS] - a model of the mbarrier protocol of
# tti_zmarch_tma (solver/cuda/tti_cuda.cu), run under random interleavings of T threads and the
# copy engine: thread 0 produces the ring of p/q planes and thread 1 (the kernel's thread
# 32, another warp) the cell slots, every thread consumes and hands the D_y buffers over;
# the slot and parity formulas are the kernel's. It checks
# that every read sees the plane, output or D_y entries it expects (never a slot refilled
# too early) and that nothing deadlocks. A model, not the kernel: keep the two in step.
# Both slacks the kernel builds (2, and 1: the fewest slots that cannot deadlock) are run.
# Mutations that it catches: a parity off by one phase, too few ring slots (slack 0), a ring slot
# released one iteration early, a double arrival. The D_y handover modelled here is the
# generic width's; at widths 32 and 64 each warp keeps its own D_y buffers, ordered by one
# __syncwarp per iteration (the kernel's comment there; compute-sanitizer racecheck).
import random, sys
R = 4
class Bar:
    def __init__(s, count): s.count = count; s.pending = count; s.ph = 0; s.tx = 0
    def arrive(s):
        s.pending -= 1; s._check()
    def expect(s, n): s.tx += n; s.pending -= 1; s._check()
    def complete_tx(s, n): s.tx -= n; s._check()
    def _check(s):
        assert s.pending >= 0
        if s.pending == 0 and s.tx == 0: s.ph += 1; s.pending = s.count
    def done(s, parity): return (s.ph & 1) != parity

def run(T, nplanes, LEAD, DYB, seed, SLACK=2):
    rnd = random.Random(seed)
    S = R + SLACK + LEAD; CS = LEAD + SLACK  # ring_slots, cell_slots
    full = [Bar(1) for _ in range(S)]; empty = [Bar(T) for _ in range(S)]
    cfull = [Bar(1) for _ in range(CS)]; cempty = [Bar(T) for _ in range(CS)]
    dfull = [Bar(T) for _ in range(DYB)]; dempty = [Bar(T) for _ in range(DYB)]
    ring = [None] * S; cells = [None] * CS; dy = [[None] * T for _ in range(DYB)]
    inflight = []  # (kind, slot, value, bar)
    nout = nplanes - 2 * R
    def thread(t):
        def wait(bar, parity):
            while not bar.done(parity): yield
        ring_producer, cell_producer = t == 0, t == (1 if T > 1 else 0)
        def produce(j):
            if j >= nplanes: return
            if ring_producer:
                s = j % S
                if j >= S: yield from wait(empty[s], (j // S - 1) & 1)
                full[s].expect(1); inflight.append(('ring', s, j, full[s]))
            o = j - 2 * R
            if not cell_producer or o < 0: return
            s2 = o % CS
            if o >= CS: yield from wait(cempty[s2], (o // CS - 1) & 1)
            cfull[s2].expect(1); inflight.append(('cell', s2, o, cfull[s2]))
        if ring_producer or cell_producer:
            for j in range(LEAD): yield from produce(j)
        for i in range(nplanes):
            if ring_producer or cell_producer: yield from produce(i + LEAD)
            o = i - 2 * R
            yield from wait(full[i % S], (i // S) & 1)
            assert ring[i % S] == i, ('front', t, i, ring[i % S]); yield
            if i >= 2 * R - 1:
                k = o + 1; b = k % DYB
                if k >= DYB: yield from wait(dempty[b], (k // DYB - 1) & 1)
                assert ring[(i - R + 1) % S] == i - R + 1, ('next', t, i)
                dy[b][t] = k; yield
                dfull[b].arrive()
            if o >= 0:
                s2 = o % CS
                yield from wait(cfull[s2], (o // CS) & 1)
                assert cells[s2] == o, ('cell', t, o, cells[s2]); yield
                cempty[s2].arrive()
                b = o % DYB
                yield from wait(dfull[b], (o // DYB) & 1)
                assert all(v == o for v in dy[b]), ('dy', t, o, dy[b]); yield
                dempty[b].arrive()
                assert ring[(i - R) % S] == i - R, ('out', t, i); yield
            if i >= R: empty[(i - R) % S].arrive()
    threads = [thread(t) for t in range(T)]
    alive = list(range(T)); stuck = 0
    while alive:
        if inflight and rnd.random() < 0.3:
            kind, s, v, bar = inflight.pop(rnd.randrange(len(inflight)))
            (ring if kind == 'ring' else cells)[s] = v; bar.complete_tx(1); stuck = 0; continue
        t = rnd.choice(alive)
        for _ in range(rnd.randint(1, 6)):
            try: next(threads[t])
            except StopIteration: alive.remove(t); break
        stuck += 1
        if stuck > 200000: raise RuntimeError('deadlock %r' % ((T, nplanes, LEAD, DYB, seed, SLACK),))
    return True

n = 0
for seed in range(int(sys.argv[1]) if len(sys.argv) > 1 else 300):
    r = random.Random(seed)
    T = r.choice([1, 2, 3, 4, 8]); LEAD = r.choice([1, 2]); nplanes = 2 * R + r.choice([1, 2, 3, 5, 8, 13, 20])
    run(T, nplanes, LEAD, 3, seed, r.choice([1, 2])); n += 1
print("ok", n, "runs")
