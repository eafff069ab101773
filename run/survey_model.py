#!/usr/bin/env python3
"""run/survey_model.py - a model on paper of an rtm3d migrate survey past one node.

N independent shots on G GPUs, arranged as S z-slabs x G/S shot groups: each group migrates
its share of the shots, and the only global step is the sum of the groups' image and
illumination at the end (and at a resume save). From measured single-GPU figures (one NVIDIA
H200: run/results/end_to_end.md, rtm.md, mpi.md and issue 34's four-H200 runs) the model
predicts the wall time, the efficiency against perfect scaling, and what each limit costs:
the slabs' halo exchange, the load imbalance, the set-up and the model read, the observed
gathers' reads, the resume saves, the end-of-run reduction and the final write. It is a
model, not a measurement: every formula below states its assumption.

Usage:
  python3 run/survey_model.py [options]              tables for G = 8 ... 512, 512^3 and 1000^3
  python3 run/survey_model.py --report RUN.json      the per-shot costs of a real migrate run
  python3 run/survey_model.py --csv A.csv [--label L] the rows for rtm3d plot --scaling
  python3 run/survey_model.py --plot A.csv [B.csv ...] --svg FIG.svg   the figure
  python3 run/survey_model.py --check                 self-checks of the formulas
Standard library only (no numpy, no matplotlib)."""
import argparse
import csv
import json
import math
import statistics
import sys

GB = 1e9
# bytes a cell: the image and the illumination written (two floats), and their sums over the
# shots as float pairs (rtm_sums_add), which the groups' meeting and a resume state move
IMAGE_BYTES = 8
SUMS_BYTES = 16


def parse_grid(text):
    """'512' -> (512, 512, 512); '800x800x600' -> (800, 800, 600)."""
    parts = [int(p) for p in text.lower().split("x")]
    if len(parts) == 1:
        parts *= 3
    if len(parts) != 3 or min(parts) < 1:
        raise argparse.ArgumentTypeError(f"grid '{text}': N or NXxNYxNZ")
    return tuple(parts)


def options(argv):
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    a = p.add_argument
    # the survey
    a("--shots", type=int, default=1000, help="shots in the survey")
    a("--gpus", default="8,16,32,64,128,256,512", help="GPU counts, comma-separated")
    a("--grids", default="512,1000", help="grid sizes, N or NXxNYxNZ, comma-separated")
    a("--steps", type=int, default=None, help="time steps a shot (default: the reference's)")
    a("--slabs", type=int, default=0, help="force S slabs (0: the fastest that fits)")
    # measured on one H200 (end_to_end.md, 2026-12-01: 8 shots of 512^3 iso, 1000 steps,
    # forward 5.45 s, backward 6.08 s with the imaging condition in its step, imaging 0.20 s:
    # the illumination's pass)
    a("--forward-s", type=float, default=5.45 / 8, help="forward pass a shot, reference grid")
    a("--backward-s", type=float, default=6.08 / 8, help="backward pass a shot")
    a("--imaging-s", type=float, default=0.20 / 8, help="imaging condition a shot")
    a("--shot-extra-s", type=float, default=0.0,
      help="other seconds a shot at the reference grid (today's hold_sums: 1.63 / 7 = 0.233)")
    a("--ref-grid", type=parse_grid, default=(512, 512, 512), help="grid of the measured shot")
    a("--ref-steps", type=int, default=1000, help="steps of the measured shot")
    a("--setup-s", type=float, default=2.34,
      help="set-up of a run, model read aside: the launch to the first shot on four H200s, "
      "shot groups (end_to_end.md's stamps, 2026-11-30: mpirun 1.04 s, MPI_Init 0.33 s, "
      "the model and CUDA's context 0.88 s)")
    a("--slab-efficiency", type=float, default=0.95,
      help="measured strong-scaling efficiency of z-slabs (four H200s, 1024^3: issue 34)")
    a("--slab-efficiency-at", default="4,1024", help="its slabs and nz")
    a("--bytes-per-cell", type=float, default=236.0,
      help="device bytes a cell of a migration (512^3 iso, 100 fp16 snapshots: rtm.md's "
      "28.45 GB store + image, and two propagators of 12 B a cell)")
    a("--gpu-memory-gb", type=float, default=150.0, help="usable device memory (H200: mpi.md)")
    a("--write-gbs", type=float, default=0.67,
      help="one writer's HDF5 write speed of slabs (rtm.md: 16.8 GB in 25.2 s through rank 0)")
    a("--write-one-gbs", type=float, default=1.4,
      help="the final write where the first group is one rank (its I/O thread, beside the "
      "filter), on the disk before its commit: end_to_end.md, the end's 1.07 GB take the disk "
      "0.7-0.8 s at 1.3-1.5 GB/s (2.89 GB/s into the page cache before e7963e8)")
    a("--save-one-gbs", type=float, default=1.13,
      help="a resume state written behind the shots by that rank's I/O thread (end_to_end.md: "
      "2.15 GB in 1.9 s, the disk's rate once the page cache is full of them)")
    a("--host-copy-gbs", type=float, default=4.6,
      help="device-to-host copy of the sums (end_to_end.md: 7 x 1.07 GB in 1.63 s)")
    # assumed: a cluster of H200 nodes
    a("--gpus-per-node", type=int, default=8)
    a("--nvlink-gbs", type=float, default=450.0, help="NVLink, one direction, a GPU")
    a("--network-gbs", type=float, default=25.0, help="inter-node bandwidth a node (NDR: 25-50)")
    a("--network-latency-us", type=float, default=5.0)
    a("--nvlink-latency-us", type=float, default=2.0)
    a("--reduction", choices=("chain", "serial", "ring", "tree"), default="chain",
      help="chain: rtm3d's (rtm_mpi_groups_combine: with three groups or more each chunk of "
      "float pairs leaves the first group's rank of the slab, passes through the other groups' "
      "ranks in group order, each adding its own, and comes back; two groups: serial); "
      "serial: each group's pairs in turn to the first group's rank, which adds them; ring, "
      "tree: what those collectives would take instead")
    a("--combine-gbs", type=float, default=6.9,
      help="one rank taking in and adding another group's float pairs on its node "
      "(end_to_end.md: the two groups' meeting, 2.15 GB in 0.31 s on an H200 host)")
    a("--fs-gbs", type=float, default=10.0, help="shared file system, all nodes together")
    a("--node-fs-gbs", type=float, default=5.0, help="one node's link to the file system")
    a("--collective-write", action="store_true",
      help="each slab's rank writes its slab (parallel HDF5) instead of one writer")
    a("--model-bytes-per-cell", type=float, default=4.0,
      help="model file bytes a cell (iso: vp in fp32; 0: a constant model, no read)")
    a("--model-reads", choices=("node", "rank"), default="node",
      help="node: one copy a node from the file system (its page cache serves its ranks); "
      "rank: every rank reads its slab from the file system")
    a("--receivers", type=int, default=0,
      help="receivers a shot (0: 3481, a plane every 80 m of 512^3, scaled to the grid's plane)")
    a("--no-read-ahead", action="store_true", help="each shot's gather read while the GPU waits")
    a("--resume-every", type=float, default=600.0, help="rtm.resume_every, seconds (0: every shot)")
    # a real run's costs instead of the defaults above
    a("--report", help="a migrate run report (OUTPUT.json): per-shot costs, grid, steps, set-up")
    a("--report-slabs", type=int, default=1, help="the z-slabs of the --report run")
    # outputs
    a("--csv", help="write the rows (mode, run, ranks, efficiency, ...) for rtm3d plot --scaling")
    a("--label", default="", help="appended to each grid's name in --csv")
    a("--plot", nargs="+", metavar="CSV", help="draw these CSVs into --svg, no model run")
    a("--svg", help="the figure: efficiency against GPUs, a line a grid and CSV")
    a("--sweep", action="store_true",
      help="one line a variant of the options (VARIANTS): where each falls below 0.9 and why")
    a("--check", action="store_true", help="self-checks; prints 'survey_model: check passed'")
    return p.parse_args(argv)


def take_report(o):
    """Per-shot costs, grid, steps, set-up and device bytes a cell from a migrate report."""
    r = json.load(open(o.report))
    if r.get("command") != "migrate" or "shots" not in r:
        sys.exit(f"survey_model.py: {o.report} is not a migrate run report")
    shots = r["shots"]
    # the median shot: the first shot of a run pays warm-ups a survey pays once
    o.forward_s = statistics.median(shots["forward_s"])
    o.backward_s = statistics.median(shots["backward_s"])
    o.imaging_s = statistics.median(shots["imaging_s"])
    t = r["timings_s"]
    o.shot_extra_s = t.get("hold_sums", 0.0) / max(shots["count"], 1)
    o.setup_s = t.get("setup", o.setup_s)
    o.ref_grid = tuple(r["grid"]["n"])
    o.ref_steps = r["steps"]
    cells = o.ref_grid[0] * o.ref_grid[1] * o.ref_grid[2]
    if r.get("memory_total_bytes"):
        o.bytes_per_cell = r["memory_total_bytes"] / cells * o.report_slabs
    if o.report_slabs > 1:  # the report's shot ran on S slabs: back to one GPU's time
        scale = o.report_slabs * slab_efficiency(o, o.report_slabs, o.ref_grid)
        o.forward_s, o.backward_s, o.imaging_s = (x * scale for x in
                                                  (o.forward_s, o.backward_s, o.imaging_s))
    return f"{o.report} ({r.get('device', '?')}, {r.get('git_revision', '?')})"


def slab_efficiency(o, slabs, grid):
    """z-slabs: a step takes t1 / S + c (the exposed halo exchange c does not shrink with S:
    each slab swaps the same two x-y faces), so e(S) = 1 / (1 + S c / t1); c / t1 goes as
    face / cells = 1 / nz, calibrated on the measured e at (S_m, nz_m)."""
    if slabs == 1:
        return 1.0
    s_m, nz_m = (int(x) for x in o.slab_efficiency_at.split(","))
    k_m = (1.0 / o.slab_efficiency - 1.0) / s_m  # c / t1 at nz_m
    return 1.0 / (1.0 + slabs * k_m * nz_m / grid[2])


def reduce_s(o, gpus, slabs, nbytes):
    """The sum of the groups' image and illumination (nbytes, the float pairs) across the
    groups: each slab's groups reduce their slab (nbytes / S) among themselves.
    chain (rtm3d, three groups or more): a slab's pairs cross in chunks (rtm3d's chain_chunk:
    8 Mi floats an array, fewer so that there are 4 a group, at least 1 Mi), each passing
    from group to group in order and back to the first: K + G - 1 turns of a chunk for K
    chunks, two arrays of pairs (image, illumination) one after the other; a turn moves a
    chunk at --combine-gbs on a node, and where the chain crosses nodes at the node's link
    shared by its S slabs' chains, plus a latency.
    serial (rtm3d with two groups; three or more before the chain): the first group's rank
    of a slab takes in the other groups' slabs one after another and adds them, those on its
    node at --combine-gbs, those of other nodes over the network, where the node's S
    receiving ranks share its link.
    ring: inside the node over NVLink, then between nodes, 2 (p - 1) / p of the bytes and
    2 (p - 1) latencies a stage; tree: log2 p rounds of the whole message."""
    per_node = min(gpus, o.gpus_per_node)
    inside = per_node // slabs  # groups of one slab in a node
    nodes = math.ceil(gpus / o.gpus_per_node)
    groups = gpus // slabs
    slab_bytes = nbytes / slabs
    if o.reduction == "chain" and groups > 2:
        cells = slab_bytes / SUMS_BYTES  # a slab's cells: two arrays of pairs of floats each
        chunk = min(8 << 20, max(1 << 20, math.ceil(cells / (4 * groups))), math.ceil(cells))
        turns = math.ceil(cells / chunk) + groups - 1
        gbs, latency_us = o.combine_gbs, o.nvlink_latency_us
        if nodes > 1:
            gbs, latency_us = min(o.combine_gbs, o.network_gbs / slabs), o.network_latency_us
        return 2 * turns * (8 * chunk / (gbs * GB) + latency_us * 1e-6)
    if o.reduction in ("serial", "chain"):
        near, far = inside - 1, groups - inside  # the groups besides the first one's node's
        far_gbs = min(o.network_gbs / slabs, o.combine_gbs)
        return (near * slab_bytes / (o.combine_gbs * GB) + far * slab_bytes / (far_gbs * GB)
                + near * o.nvlink_latency_us * 1e-6 + far * o.network_latency_us * 1e-6)

    def stage(p, message, gbs, latency_us):
        if p <= 1:
            return 0.0
        if o.reduction == "ring":
            return 2 * (p - 1) / p * message / (gbs * GB) + 2 * (p - 1) * latency_us * 1e-6
        return math.ceil(math.log2(p)) * (latency_us * 1e-6 + message / (gbs * GB))

    return (stage(inside, slab_bytes, o.nvlink_gbs, o.nvlink_latency_us) +
            stage(nodes, slab_bytes * slabs, o.network_gbs, o.network_latency_us))


def fs_read_s(o, nodes, nbytes):
    """nbytes read at once from the shared file system: the whole system's bandwidth, or the
    nodes' links when fewer nodes cannot draw it."""
    return nbytes / (min(o.fs_gbs, nodes * o.node_fs_gbs) * GB)


def one_run(o, grid, gpus, slabs):
    """The survey on `gpus` GPUs as `slabs` slabs x gpus / slabs groups: its wall time as the
    ideal (perfect scaling of one GPU's shots) plus each loss, in seconds."""
    cells = grid[0] * grid[1] * grid[2]
    ref_cells = o.ref_grid[0] * o.ref_grid[1] * o.ref_grid[2]
    steps = o.steps or o.ref_steps
    # a shot on one GPU (were it to fit): the measured passes scaled by cells x steps (the
    # kernels are memory bound: time a cell-step is the same at any size)
    work = cells / ref_cells * steps / o.ref_steps
    shot_1 = (o.forward_s + o.backward_s + o.imaging_s + o.shot_extra_s) * work
    groups = gpus // slabs
    nodes = math.ceil(gpus / o.gpus_per_node)
    shot_s = shot_1 / (slabs * slab_efficiency(o, slabs, grid))  # a shot on a group
    most = math.ceil(o.shots / groups)  # the busiest group's shots
    loss = {}
    ideal = o.shots * shot_1 / gpus
    loss["halo"] = o.shots / groups * shot_s - ideal
    # groups with one shot fewer wait for the busiest at the final sum
    loss["imbalance"] = (most - o.shots / groups) * shot_s
    # set-up runs on every rank at once; its measured seconds do not grow with G (MPI and
    # NCCL start-up across many nodes is not modelled)
    loss["setup"] = o.setup_s
    model_bytes = cells * o.model_bytes_per_cell
    copies = nodes if o.model_reads == "node" else groups  # each rank reads its own slab
    loss["model read"] = fs_read_s(o, nodes, copies * model_bytes)
    # the observed gathers: receivers x steps x 4 bytes a shot, every group reading its next
    # shot at the same time; read ahead, a read waits only where it outlasts the shot before
    receivers = o.receivers or round(3481 * grid[0] * grid[1] / (512 * 512))
    read = fs_read_s(o, nodes, groups * receivers * steps * 4)
    hidden = 0 if o.no_read_ahead else 1
    loss["gathers"] = read + (most - 1) * max(0.0, read - hidden * shot_s)
    # the sums over the shots are float pairs on the host (since 16ef727), each slab rank
    # holding its slab; the groups' meet at the end, and the image written is rounded from them
    sums = SUMS_BYTES * cells
    image = IMAGE_BYTES * cells
    copy = image / slabs / (o.host_copy_gbs * GB)  # the last shot's slabs to host memory
    # one slab: the first group's one rank writes on its I/O thread (rtm_migrate_write_image),
    # collective or not; slabs: through rank 0, or each slab's rank at once (a node's slabs
    # share its link)
    link_gbs = min(o.fs_gbs, o.node_fs_gbs)
    writers_gbs = (min(o.write_one_gbs, link_gbs) if slabs == 1
                   else min(slabs * o.write_gbs, link_gbs) if o.collective_write
                   else min(o.write_gbs, link_gbs))
    write = image / (writers_gbs * GB)
    loss["reduce"] = reduce_s(o, gpus, slabs, sums)
    loss["write"] = copy + write
    # resume saves every resume_every seconds of the run (0: after every shot), the state the
    # float pairs (rtm_migrate_save): the groups' sums meet while every GPU waits; a first
    # group of one rank (one slab) has its I/O thread write the state behind the next shot,
    # waited on where it outlasts that shot; on slabs every GPU waits for the collective
    # write
    run_s = most * shot_s
    saves = math.floor(run_s / o.resume_every) if o.resume_every > 0 else most - 1
    saving_gbs = writers_gbs if slabs > 1 else min(o.save_one_gbs, link_gbs)
    state = sums / (saving_gbs * GB)  # waited for at the next shot's end (one slab)
    loss["saves"] = saves * (loss["reduce"] + (state if slabs > 1 else max(0.0, state - shot_s)))
    wall = ideal + sum(loss.values())
    return {"grid": grid, "gpus": gpus, "slabs": slabs, "groups": groups, "nodes": nodes,
            "most": most, "shot_s": shot_s, "ideal": ideal, "loss": loss, "wall": wall,
            "efficiency": ideal / wall, "saves": saves}


def min_slabs(o, grid):
    """The fewest slabs (a power of 2) whose share of the migration fits a GPU's memory."""
    cells = grid[0] * grid[1] * grid[2]
    s = 1
    while cells / s * o.bytes_per_cell > o.gpu_memory_gb * GB:
        s *= 2
    return s


def best_run(o, grid, gpus):
    """The fastest arrangement: S a power of 2 from the fewest that fit to a node's GPUs (a
    slab's halo stays on NVLink), dividing G; None where no arrangement fits."""
    fewest = min_slabs(o, grid)
    choices = [o.slabs] if o.slabs else [s for s in (1, 2, 4, 8, 16, 32, 64)
                                          if fewest <= s <= min(gpus, o.gpus_per_node)]
    runs = [one_run(o, grid, gpus, s) for s in choices if gpus % s == 0 and s >= fewest]
    return min(runs, key=lambda r: r["wall"]) if runs else None


def grid_name(grid):
    return f"{grid[0]}^3" if grid[0] == grid[1] == grid[2] else "x".join(map(str, grid))


LOSSES = ("halo", "imbalance", "setup", "model read", "gathers", "saves", "reduce", "write")


def first_limit(rows):
    """The first G whose efficiency is below 0.9, and its largest loss."""
    for r in rows:
        if r["efficiency"] < 0.9:
            name = max(LOSSES, key=lambda k: r["loss"][k])
            return r, name
    return None, None


def print_table(o, grid, rows):
    cells = grid[0] * grid[1] * grid[2]
    shot_1 = rows[0]["ideal"] * rows[0]["gpus"] / o.shots
    print(f"\n### {grid_name(grid)}: {o.shots} shots of {shot_1:.2f} s on one GPU (were it to "
          f"fit), {min_slabs(o, grid)} slab(s) at least ({cells * o.bytes_per_cell / GB:.0f} GB "
          f"a shot), image + illumination {IMAGE_BYTES * cells / GB:.2f} GB (their sums and a "
          f"resume state {SUMS_BYTES * cells / GB:.2f} GB)\n")
    print("| GPUs | nodes | slabs x groups | shots a group | wall s | efficiency | "
          + " | ".join(LOSSES) + " | reduce s | I/O s |")
    print("| ---: " * 6 + "| ---: " * len(LOSSES) + "| ---: | ---: |")
    for r in rows:
        shares = " | ".join(f"{100 * r['loss'][k] / r['wall']:.1f}%" for k in LOSSES)
        io = sum(r["loss"][k] for k in ("model read", "gathers", "write"))
        print(f"| {r['gpus']} | {r['nodes']} | {r['slabs']} x {r['groups']} | {r['most']} | "
              f"{r['wall']:.1f} | {r['efficiency']:.3f} | {shares} | {r['loss']['reduce']:.3f} "
              f"| {io:.2f} |")
    r, name = first_limit(rows)
    if r:
        print(f"\n{grid_name(grid)}: efficiency below 0.90 from {r['gpus']} GPUs "
              f"({r['efficiency']:.3f}); the largest loss there: {name} "
              f"({r['loss'][name]:.2f} s, {100 * r['loss'][name] / r['wall']:.1f}% of the wall)")
    else:
        print(f"\n{grid_name(grid)}: efficiency 0.90 or more up to {rows[-1]['gpus']} GPUs")


def model(o):
    grids = [parse_grid(g) for g in o.grids.split(",")]
    gpus = [int(g) for g in o.gpus.split(",")]
    table = {}
    for grid in grids:
        rows = [r for r in (best_run(o, grid, g) for g in gpus) if r]
        if not rows:
            print(f"{grid_name(grid)}: does not fit on {max(gpus)} GPUs")
            continue
        table[grid] = rows
    return table


def write_csv(o, table, path):
    with open(path, "w", newline="") as out:
        w = csv.writer(out, lineterminator="\n")
        w.writerow(["mode", "run", "ranks", "efficiency", "wall_s", "slabs", "groups"]
                   + [k.replace(" ", "_") + "_s" for k in LOSSES])
        for grid, rows in table.items():
            name = grid_name(grid) + (f" {o.label}" if o.label else "")
            for r in rows:  # a fixed survey on more GPUs: strong scaling
                w.writerow(["strong", name, r["gpus"], f"{r['efficiency']:.4f}",
                            f"{r['wall']:.3f}", r["slabs"], r["groups"]]
                           + [f"{r['loss'][k]:.4f}" for k in LOSSES])


def svg(paths, out_path):
    """Efficiency against GPUs (log2 axis), a line a run of the CSVs, 0.9 dashed."""
    lines = {}
    for path in paths:
        for row in csv.DictReader(open(path)):
            lines.setdefault(row["run"], []).append((int(row["ranks"]), float(row["efficiency"])))
    xs = [x for pts in lines.values() for x, _ in pts]
    lo, hi = math.log2(min(xs)), math.log2(max(xs))
    width, height, left, right, top, bottom = 720, 480, 60, 20, 58, 50

    def px(g):
        return left + (math.log2(g) - lo) / max(hi - lo, 1) * (width - left - right)

    def py(e):
        return height - bottom - e / 1.05 * (height - top - bottom)

    colours = ["#1f5ac8", "#c82828", "#1f5ac8", "#c82828", "#289640", "#9650b4"]
    dashes = ["", "", "7,4", "7,4", "2,3", "2,3"]
    s = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
         f'font-family="sans-serif" font-size="13">',
         f'<rect width="{width}" height="{height}" fill="white"/>',
         f'<text x="{left}" y="22" font-size="15">A survey\'s efficiency against its GPUs '
         f'(perfect scaling = 1)</text>',
         f'<text x="{left}" y="42" fill="#555555">a model from measured single-GPU costs, '
         f'not a measurement (run/survey_model.py)</text>']
    for k in range(0, 11, 2):  # efficiency grid every 0.2
        y = py(k / 10)
        s.append(f'<line x1="{left}" y1="{y:.1f}" x2="{width - right}" y2="{y:.1f}" '
                 f'stroke="#dddddd"/><text x="{left - 8}" y="{y + 4:.1f}" '
                 f'text-anchor="end">{k / 10:.1f}</text>')
    for g in sorted(set(xs)):
        x = px(g)
        s.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{height - bottom}" '
                 f'stroke="#dddddd"/><text x="{x:.1f}" y="{height - bottom + 18}" '
                 f'text-anchor="middle">{g}</text>')
    s.append(f'<line x1="{left}" y1="{py(0.9):.1f}" x2="{width - right}" y2="{py(0.9):.1f}" '
             f'stroke="#888888" stroke-dasharray="3,3"/>')
    s.append(f'<rect x="{left}" y="{top}" width="{width - left - right}" '
             f'height="{height - top - bottom}" fill="none" stroke="black"/>')
    s.append(f'<text x="{(left + width - right) / 2:.0f}" y="{height - 12}" '
             f'text-anchor="middle">GPUs (8 a node; log scale)</text>')
    s.append(f'<text transform="translate(16,{(top + height - bottom) / 2:.0f}) rotate(-90)" '
             f'text-anchor="middle">efficiency</text>')
    for i, (name, pts) in enumerate(lines.items()):
        colour, dash = colours[i % len(colours)], dashes[i % len(dashes)]
        stroke = f'stroke="{colour}" stroke-width="2"' + (f' stroke-dasharray="{dash}"'
                                                           if dash else "")
        path = " ".join(f"{px(g):.1f},{py(e):.1f}" for g, e in sorted(pts))
        s.append(f'<polyline points="{path}" fill="none" {stroke}/>')
        s.extend(f'<circle cx="{px(g):.1f}" cy="{py(e):.1f}" r="3.5" fill="{colour}"/>'
                 for g, e in pts)
        y = height - bottom - 16 - 20 * (len(lines) - 1 - i)  # the legend, bottom left
        s.append(f'<line x1="{left + 14}" y1="{y}" x2="{left + 44}" y2="{y}" {stroke}/>'
                 f'<text x="{left + 52}" y="{y + 4}">{name.replace("^3", "³")}</text>')
    s.append("</svg>\n")
    with open(out_path, "w") as out:
        out.write("\n".join(s))


# What moves the answer: each variant's options added to the command line's.
VARIANTS = (
    ("as given", []),
    ("model read by every rank", ["--model-reads", "rank"]),
    ("file system 100 GB/s (25 a node)", ["--fs-gbs", "100", "--node-fs-gbs", "25"]),
    ("collective write, 2 GB/s a writer", ["--collective-write", "--write-gbs", "2"]),
    ("set-up 0.52 s (one GPU's)", ["--setup-s", "0.52"]),
    ("the groups' sums one after another", ["--reduction", "serial"]),
    ("the groups' sums in a ring", ["--reduction", "ring"]),
    ("network 50 GB/s, tree reduction", ["--network-gbs", "50", "--reduction", "tree"]),
    ("a resume save after every shot", ["--resume-every", "0"]),
    ("no read-ahead of the gathers", ["--no-read-ahead"]),
    ("10000 shots", ["--shots", "10000"]),
    ("100 GB/s, collective write, set-up 0.52 s", ["--fs-gbs", "100", "--node-fs-gbs", "25",
                                    "--collective-write", "--write-gbs", "2", "--setup-s", "0.52"]),
)


def sweep(argv):
    print("| variant | grid | efficiency < 0.9 from | largest loss there | at the most GPUs |")
    print("| --- | --- | --- | --- | --- |")
    for name, extra in VARIANTS:
        o = options(argv + extra)
        if o.report:
            take_report(o)
        for grid, rows in model(o).items():
            r, loss = first_limit(rows)
            last = rows[-1]
            where = (f"{r['gpus']} GPUs ({r['efficiency']:.3f})", f"{loss} "
                     f"{100 * r['loss'][loss] / r['wall']:.0f}%") if r else ("-", "-")
            print(f"| {name} | {grid_name(grid)} | {where[0]} | {where[1]} | "
                  f"{last['gpus']}: {last['efficiency']:.2f}, {last['wall']:.1f} s |")


def check(o):
    """The formulas against hand computations, and the tables' invariants."""
    def near(a, b, what):
        assert abs(a - b) <= 1e-9 * max(1.0, abs(b)), f"{what}: {a} != {b}"
    # e(S) reproduces its calibration point, and is 1 on one slab
    near(slab_efficiency(o, 4, (1024, 1024, 1024)), o.slab_efficiency, "e(4) at 1024")
    near(slab_efficiency(o, 1, (512, 512, 512)), 1.0, "e(1)")
    # a ring of 2 nodes moves half the message each way twice: M / B plus 2 latencies
    asked = o.reduction  # the tables' invariants below under the reduction asked for
    o.reduction = "ring"
    near(reduce_s(o, 16, 1, 25e9), 2 * 7 / 8 * 25e9 / (o.nvlink_gbs * GB)
         + 14 * o.nvlink_latency_us * 1e-6 + 25e9 / (o.network_gbs * GB)
         + 2 * o.network_latency_us * 1e-6, "ring reduce, 2 nodes")
    # rtm3d's: on 8 nodes as 4 slabs x 16 groups, a slab's first group takes in the one other
    # group of its node at the combine rate and the 14 of other nodes over a quarter of the
    # node's link (6.25 GB/s, below the combine rate)
    # the chain on one node, 4 groups of one slab, 512^3: 16 chunks of 8 Mi floats, 19 turns
    # an array of pairs, each 64 MiB at the combine rate
    o.reduction = "chain"
    near(reduce_s(o, 4, 1, SUMS_BYTES * 512 ** 3), 2 * 19 * (8 * 2 ** 23 / (o.combine_gbs * GB)
                                                             + o.nvlink_latency_us * 1e-6),
         "chain reduce, 4 groups on a node")
    o.reduction = "serial"
    quarter = 25e9 / 4
    near(reduce_s(o, 64, 4, 25e9), quarter / (o.combine_gbs * GB) + 14 * quarter
         / (o.network_gbs / 4 * GB) + o.nvlink_latency_us * 1e-6
         + 14 * o.network_latency_us * 1e-6, "serial reduce, 8 nodes of 4 slabs")
    o.reduction = asked
    # the reference grid on 8 GPUs of one slab each: the ideal is N / 8 measured shots, no halo
    r = one_run(o, o.ref_grid, 8, 1)
    near(r["ideal"], o.shots / 8 * (o.forward_s + o.backward_s + o.imaging_s + o.shot_extra_s),
         "ideal")
    near(r["loss"]["halo"], 0.0, "halo on one slab")
    # a save after every shot on 8 GPUs: each of the busiest group's first most - 1 shots is
    # followed by the groups' float pairs met (16 B a cell) while the GPUs wait; one slab: the
    # write behind the next shot, waited on for what outlasts it; two: all of it
    every = options(["--resume-every", "0"])
    cells = math.prod(o.ref_grid)
    for slabs in (1, 2):
        r = one_run(every, o.ref_grid, 8, slabs)
        write = SUMS_BYTES * cells / ((every.save_one_gbs if slabs == 1 else every.write_gbs) * GB)
        waited = max(0.0, write - r["shot_s"]) if slabs == 1 else write
        near(r["loss"]["saves"], (r["most"] - 1) * (reduce_s(every, 8, slabs, SUMS_BYTES * cells)
                                                     + waited), f"saves on {slabs} slab(s)")
    for rows in model(o).values():
        for r in rows:
            assert 0.0 < r["efficiency"] <= 1.0, f"efficiency {r['efficiency']}"
            assert all(v >= 0.0 for v in r["loss"].values()), f"a negative loss: {r['loss']}"
            near(r["ideal"] + sum(r["loss"].values()), r["wall"], "wall = ideal + losses")
            assert r["most"] * r["groups"] >= o.shots, "every shot migrated"
        for a, b in zip(rows, rows[1:]):  # more GPUs never take more GPU-seconds of shots
            assert b["ideal"] < a["ideal"], "ideal time not falling with G"
    print("survey_model: check passed")


def main(argv):
    o = options(argv)
    if o.plot:
        if not o.svg:
            sys.exit("survey_model.py: --plot needs --svg FILE")
        svg(o.plot, o.svg)
        print(f"wrote {o.svg}")
        return
    source = take_report(o) if o.report else "run/results/end_to_end.md (one H200, 2026-12-01)"
    if o.check:
        check(o)
        return
    if o.sweep:
        sweep([a for a in argv if a != "--sweep"])
        return
    grid = o.ref_grid
    print(f"# A {o.shots}-shot survey on {o.gpus} GPUs: a model, not a measurement\n")
    print(f"Per-shot costs from {source}: {grid_name(grid)}, {o.ref_steps} steps, forward "
          f"{o.forward_s:.3f} s, backward {o.backward_s:.3f} s, imaging {o.imaging_s:.3f} s, "
          f"other {o.shot_extra_s:.3f} s; set-up {o.setup_s:.2f} s. Network {o.network_gbs:g} "
          f"GB/s a node, NVLink {o.nvlink_gbs:g} GB/s, {o.reduction} reduction; file system "
          f"{o.fs_gbs:g} GB/s ({o.node_fs_gbs:g} a node), final write "
          f"{'collective' if o.collective_write else 'one writer'} at {o.write_gbs:g} GB/s "
          f"(one slab: its rank's I/O thread at {o.write_one_gbs:g}, saves at "
          f"{o.save_one_gbs:g}); model read once a {o.model_reads}; resume saves every "
          f"{o.resume_every:g} s.")
    table = model(o)
    for grid, rows in table.items():
        print_table(o, grid, rows)
    if o.csv:
        write_csv(o, table, o.csv)
        print(f"\nwrote {o.csv}")
    if o.svg:
        if not o.csv:
            sys.exit("survey_model.py: --svg draws the --csv rows (or --plot CSV ...)")
        svg([o.csv], o.svg)
        print(f"wrote {o.svg}")


if __name__ == "__main__":
    main(sys.argv[1:])
