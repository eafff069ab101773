/* config_schema.c - the one table of configuration keys, and lookups in it.
 *
 * Rows of one section stay together: the echo and `help-config` print a section header
 * whenever the section changes. A lower bound of POSITIVE means "> 0" exactly, because
 * DBL_TRUE_MIN is the smallest double above zero. */
#include <ctype.h>
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "config_impl.h"

#define FIELD(member) offsetof(rtm_config_t, member), sizeof(((rtm_config_t *)0)->member)
#define POSITIVE DBL_TRUE_MIN
#define ANY -HUGE_VAL, HUGE_VAL
#define TEXT(value) #value
#define TEXT_OF(macro) TEXT(macro)
#define ABOVE_ZERO POSITIVE, HUGE_VAL

/* One row per line reads as a table. */
/* clang-format off */
const rtm_cfg_entry_t rtm_config_schema[] = {
    {"grid", "nx", RTM_CFG_INT, FIELD(grid.n[0]), "100", 1, 100000, NULL, "interior cells along x"},
    {"grid", "ny", RTM_CFG_INT, FIELD(grid.n[1]), "100", 1, 100000, NULL, "interior cells along y"},
    {"grid", "nz", RTM_CFG_INT, FIELD(grid.n[2]), "100", 1, 100000, NULL, "interior cells along z (depth)"},
    {"grid", "dx", RTM_CFG_DOUBLE, FIELD(grid.spacing_m[0]), "10", ABOVE_ZERO, NULL, "cell spacing along x, metres"},
    {"grid", "dy", RTM_CFG_DOUBLE, FIELD(grid.spacing_m[1]), "10", ABOVE_ZERO, NULL, "cell spacing along y, metres"},
    {"grid", "dz", RTM_CFG_DOUBLE, FIELD(grid.spacing_m[2]), "10", ABOVE_ZERO, NULL, "cell spacing along z, metres"},
    {"grid", "ox", RTM_CFG_DOUBLE, FIELD(grid.origin_m[0]), "0", ANY, NULL, "x of cell (0,0,0), metres"},
    {"grid", "oy", RTM_CFG_DOUBLE, FIELD(grid.origin_m[1]), "0", ANY, NULL, "y of cell (0,0,0), metres"},
    {"grid", "oz", RTM_CFG_DOUBLE, FIELD(grid.origin_m[2]), "0", ANY, NULL, "z of cell (0,0,0), metres"},

    {"time", "steps", RTM_CFG_INT, FIELD(time.steps), "500", 1, HUGE_VAL, NULL, "time steps; traces hold steps + 1 samples (a 32-bit count: steps < 2^31 - 1)"},
    {"time", "dt", RTM_CFG_DOUBLE_AUTO, FIELD(time.dt_s), "auto", ABOVE_ZERO, NULL, "time step, seconds; auto = cfl * h_min / v_max"},
    {"time", "cfl", RTM_CFG_DOUBLE, FIELD(time.cfl), "0.4", 0.01, 1, NULL, "Courant number for dt = auto; the solver checks it against the stability limit"},
    {"time", "dispersion_correction", RTM_CFG_ENUM, FIELD(time.dispersion_correction), "full", ANY, "none|traces|full", "the leapfrog's time dispersion (high frequencies run early at large Courant numbers) removed by frequency warps: full warps the source wavelet before the run and the recorded traces after it (Koene et al. 2018), traces the recorded traces alone (the wavelet's own dispersion stays), none neither; snapshots are not corrected, and with full they show the warped wavelet"},

    {"model", "file", RTM_CFG_STRING, FIELD(model.file), "", ANY, NULL, "HDF5 model (/vp, /epsilon, ...); empty = the constants below"},
    {"model", "description", RTM_CFG_STRING, FIELD(model.description), "", ANY, NULL, "rtm3d makemodel: a text file of background, layer, box, diffractor and anomaly lines, built into model.file on this grid (rtm3d makemodel --help)"},
    {"model", "vp", RTM_CFG_DOUBLE, FIELD(model.vp_m_s), "2000", POSITIVE, 20000, NULL, "constant P velocity (vertical for VTI/TTI), m/s"},
    {"model", "epsilon", RTM_CFG_DOUBLE, FIELD(model.epsilon), "0", -0.49, 2, NULL, "constant Thomsen epsilon"},
    {"model", "delta", RTM_CFG_DOUBLE, FIELD(model.delta), "0", -0.49, 2, NULL, "constant Thomsen delta"},
    {"model", "theta", RTM_CFG_DOUBLE, FIELD(model.theta_deg), "0", -180, 180, NULL, "constant tilt of the symmetry axis, degrees"},
    {"model", "phi", RTM_CFG_DOUBLE, FIELD(model.phi_deg), "0", -360, 360, NULL, "constant azimuth of the symmetry axis, degrees"},
    {"model", "interface_z", RTM_CFG_DOUBLE_AUTO, FIELD(model.interface_z_m), "auto", ANY, NULL, "constant model: depth of a plane interface at the volume's centre in x, metres; below it vp is model.vp_below; auto = none"},
    {"model", "interface_dip", RTM_CFG_DOUBLE, FIELD(model.interface_dip_deg), "0", -60, 60, NULL, "dip of model.interface_z along x, degrees (depth grows with x)"},
    {"model", "vp_below", RTM_CFG_DOUBLE_AUTO, FIELD(model.vp_below_m_s), "auto", POSITIVE, 20000, NULL, "P velocity below model.interface_z, m/s; auto = model.vp"},

    {"physics", "equation", RTM_CFG_ENUM, FIELD(physics.equation), "iso", ANY, "iso|vti|tti", "wave equation: isotropic, VTI or TTI pseudo-acoustic"},
    {"physics", "sigma", RTM_CFG_DOUBLE, FIELD(physics.sigma), "0.75", POSITIVE, 100, NULL, "VTI/TTI shear term: vsz^2 = vpz^2 (epsilon - delta) / sigma"},
    {"physics", "smooth_angles", RTM_CFG_INT, FIELD(physics.smooth_angles_cells), "1", 0, 50, NULL, "TTI: average the symmetry axis over a box of 2N+1 cells per side (tames tilt that changes from cell to cell); 0 = off"},

    {"source", "x", RTM_CFG_DOUBLE_AUTO, FIELD(source.position_m[0]), "auto", ANY, NULL, "source x, metres; auto = centre of the volume"},
    {"source", "y", RTM_CFG_DOUBLE_AUTO, FIELD(source.position_m[1]), "auto", ANY, NULL, "source y, metres; auto = centre of the volume"},
    {"source", "z", RTM_CFG_DOUBLE_AUTO, FIELD(source.position_m[2]), "auto", ANY, NULL, "source z, metres; auto = centre of the volume"},
    {"source", "frequency", RTM_CFG_DOUBLE, FIELD(source.frequency_hz), "15", ABOVE_ZERO, NULL, "Ricker peak frequency, Hz"},
    {"source", "delay", RTM_CFG_DOUBLE_AUTO, FIELD(source.delay_s), "auto", ANY, NULL, "Ricker centre time t0, seconds; auto = 1.2 / frequency"},
    {"source", "amplitude", RTM_CFG_DOUBLE, FIELD(source.amplitude), "1", ANY, NULL, "wavelet amplitude"},

    {"shots", "layout", RTM_CFG_ENUM, FIELD(shots.layout), "single", ANY, "single|grid|file", "single: one shot at source.x/y/z; grid: x_count x y_count shots; file: one \"x y z\" per line of shots.file"},
    {"shots", "file", RTM_CFG_STRING, FIELD(shots.file), "", ANY, NULL, "layout = file: text file, one \"x y z\" in metres per line"},
    {"shots", "x_first", RTM_CFG_DOUBLE_AUTO, FIELD(shots.x_first_m), "auto", ANY, NULL, "layout = grid: first shot x, metres; auto = the shots centred on the non-absorbing interior"},
    {"shots", "x_step", RTM_CFG_DOUBLE_AUTO, FIELD(shots.x_step_m), "auto", ABOVE_ZERO, NULL, "layout = grid: shot spacing along x, metres; auto = the non-absorbing interior's width / x_count"},
    {"shots", "x_count", RTM_CFG_INT, FIELD(shots.x_count), "1", 1, 100000, NULL, "layout = grid: shots along x"},
    {"shots", "y_first", RTM_CFG_DOUBLE_AUTO, FIELD(shots.y_first_m), "auto", ANY, NULL, "layout = grid: first shot y, metres; auto = the shots centred on the non-absorbing interior"},
    {"shots", "y_step", RTM_CFG_DOUBLE_AUTO, FIELD(shots.y_step_m), "auto", ABOVE_ZERO, NULL, "layout = grid: shot spacing along y, metres; auto = the non-absorbing interior's width / y_count"},
    {"shots", "y_count", RTM_CFG_INT, FIELD(shots.y_count), "1", 1, 100000, NULL, "layout = grid: shots along y"},
    {"shots", "z", RTM_CFG_DOUBLE_AUTO, FIELD(shots.z_m), "auto", ANY, NULL, "layout = grid: shot depth, metres; auto = source.z"},

    {"receivers", "layout", RTM_CFG_ENUM, FIELD(receivers.layout), "plane", ANY, "none|plane|file|patch", "none, a regular plane, a list in receivers.file, or a patch moving with each shot (x_first, y_first: offsets from the shot)"},
    {"receivers", "file", RTM_CFG_STRING, FIELD(receivers.file), "", ANY, NULL, "layout = file: text file, one \"x y z\" in metres per line"},
    {"receivers", "z", RTM_CFG_DOUBLE_AUTO, FIELD(receivers.z_m), "auto", ANY, NULL, "plane or patch depth, metres; auto = the shot's depth"},
    {"receivers", "x_first", RTM_CFG_DOUBLE_AUTO, FIELD(receivers.x_first_m), "auto", ANY, NULL, "plane: first receiver x, metres; auto = the first cell past the absorbing layer (cell boundary.width from the edge); patch: offset from the shot, auto = the patch centred on it"},
    {"receivers", "x_step", RTM_CFG_DOUBLE_AUTO, FIELD(receivers.x_step_m), "auto", ABOVE_ZERO, NULL, "receiver spacing along x, metres; auto = dx"},
    {"receivers", "x_count", RTM_CFG_INT, FIELD(receivers.x_count), "0", 0, HUGE_VAL, NULL, "receivers along x; 0 = fill the non-absorbing interior (patch: as many as a plane there holds)"},
    {"receivers", "y_first", RTM_CFG_DOUBLE_AUTO, FIELD(receivers.y_first_m), "auto", ANY, NULL, "plane: first receiver y, metres; auto = the first cell past the absorbing layer (cell boundary.width from the edge); patch: offset from the shot, auto = the patch centred on it"},
    {"receivers", "y_step", RTM_CFG_DOUBLE_AUTO, FIELD(receivers.y_step_m), "auto", ABOVE_ZERO, NULL, "receiver spacing along y, metres; auto = dy"},
    {"receivers", "y_count", RTM_CFG_INT, FIELD(receivers.y_count), "0", 0, HUGE_VAL, NULL, "receivers along y; 0 = fill the non-absorbing interior (patch: as many as a plane there holds)"},
    {"receivers", "fields", RTM_CFG_STRING, FIELD(receivers.fields), "p", ANY, "p|q|p,q", "fields to record, each written as /traces/<field>: p, q (vti/tti only) or both"},

    {"points", "interpolation", RTM_CFG_ENUM, FIELD(points.interpolation), "sinc", ANY, "trilinear|sinc", "how sources and receivers between grid nodes meet the grid: the 8 cells around them (second-order), or Kaiser-windowed sincs over 2 radius cells an axis (Hicks 2002)"},
    {"points", "radius", RTM_CFG_INT, FIELD(points.radius), "4", 1, 4, NULL, "sinc: half-width in cells of the operator along each axis"},

    {"boundary", "type", RTM_CFG_ENUM, FIELD(boundary.kind), "sponge", ANY, "sponge", "absorbing boundary"},
    {"boundary", "width", RTM_CFG_INT, FIELD(boundary.width_cells), "20", 0, 1000, NULL, "absorbing layer width in cells, inside the volume on every face"},
    {"boundary", "reflection", RTM_CFG_DOUBLE, FIELD(boundary.reflection), "1e-2", 1e-8, 0.5, NULL, "target amplitude reflection; sets the damping strength (a stronger one reflects more off its own gradient: 1e-2 echoes least at width 20, docs/modelling.md)"},

    {"snapshots", "every", RTM_CFG_INT, FIELD(snapshots.every_steps), "0", 0, HUGE_VAL, NULL, "write the wavefield every N steps; 0 = never"},
    {"snapshots", "fields", RTM_CFG_STRING, FIELD(snapshots.fields), "p", ANY, "p|q|p,q", "fields to write: p, q (vti/tti only) or both"},

    {"output", "dir", RTM_CFG_STRING, FIELD(output.dir), "out", ANY, NULL, "directory for the run's HDF5 file and report"},
    {"output", "name", RTM_CFG_STRING, FIELD(output.name), "rtm3d", ANY, NULL, "file name stem (no '/')"},
    {"output", "overwrite", RTM_CFG_BOOL, FIELD(output.overwrite), "false", ANY, NULL, "replace an existing dir/name.h5 (the command line's --force); false: a run refuses it before any work"},
    {"output", "segy", RTM_CFG_BOOL, FIELD(output.segy), "false", ANY, NULL, "also write the gathers as dir/name.sgy (SEG-Y rev 1, IEEE floats; rtm3d export --help lists the header bytes); the interval must be whole microseconds: set output.trace_dt"},
    {"output", "trace_dt", RTM_CFG_DOUBLE_AUTO, FIELD(output.trace_dt_s), "auto", ABOVE_ZERO, NULL, "sample interval of written traces, seconds; auto = modelling dt"},
    {"output", "stream_traces", RTM_CFG_ENUM, FIELD(output.stream_traces), "auto", ANY, "auto|off", "model: auto = the gathers go to the file in windows while the steps run, when the backend can copy them out (cuda), one rank records one shot, unresampled and without a time-dispersion warp; off = written after the run (the same file, bit for bit)"},
    {"output", "stream_window", RTM_CFG_INT, FIELD(output.stream_window), "0", 0, HUGE_VAL, NULL, "samples of each trace a streamed window holds; 0 = auto (about 64 MB of the gathers, at least 32 samples; 32 where the gathers, corrected for time dispersion, fill more than one such window)"},

    {"backend", "name", RTM_CFG_STRING, FIELD(backend.name), "auto", ANY, "auto|cpu|cuda", "compute backend; auto = cuda when a GPU is present"},
    {"backend", "device", RTM_CFG_INT, FIELD(backend.device), "0", 0, 63, NULL, "GPU index"},

    {"kernel", "halo", RTM_CFG_STRING, FIELD(kernel.halo), "auto", ANY, "auto|sync|ldgsts|tma", "shared-memory halo loads: plain, cp.async, or Hopper TMA; auto = the measured winner for the GPU and the equation (docs/gpu.md: Choosing the kernel)"},
    {"kernel", "stages", RTM_CFG_INT_AUTO, FIELD(kernel.stages), "auto", 2, 4, NULL, "shared-memory pipeline stages: 2 or 3 for ldgsts and the vti/tti kernels, 2 to 4 for the iso tma kernel; auto = the measured winner"},
    {"kernel", "zblock", RTM_CFG_INT_AUTO, FIELD(kernel.zblock), "auto", 0, 100000, NULL, "z planes per thread block; 0 = the whole local nz; auto = the measured winner"},
    {"kernel", "block_x", RTM_CFG_INT_AUTO, FIELD(kernel.block[0]), "auto", 1, 1024, NULL, "thread-block tile width along x, in cells; auto = the measured winner"},
    {"kernel", "block_y", RTM_CFG_INT_AUTO, FIELD(kernel.block[1]), "auto", 1, 1024, NULL, "thread-block tile height along y, in cells; auto = the measured winner"},

    {"memory", "strategy", RTM_CFG_STRING, FIELD(memory.strategy), "auto", ANY, NULL, "default allocation strategy: host, device, vmm, vmm-compressed, managed or pinned (rtm3d info lists those this build and machine have); auto = device for cuda, host for cpu"},
    {"memory", "wavefield", RTM_CFG_STRING, FIELD(memory.wavefield), "", ANY, NULL, "strategy for wavefields; empty = memory.strategy"},
    {"memory", "model", RTM_CFG_STRING, FIELD(memory.model), "", ANY, NULL, "strategy for model parameters; empty = memory.strategy"},
    {"memory", "imaging", RTM_CFG_STRING, FIELD(memory.imaging), "", ANY, NULL, "strategy for imaging buffers; empty = memory.strategy"},
    {"memory", "model_precision", RTM_CFG_ENUM, FIELD(memory.model_precision), "fp32", ANY, "fp32|fp16", "vti/tti: store the per-cell coefficient volumes (v^2 dt^2, tilt axis) as IEEE half (2 B a cell instead of 4; 11 significant bits, while v dt lies in [7.8 mm, 255.9 m]: lengths in m and times in s), computing in fp32; ignored for iso"},
    {"memory", "limit_gb", RTM_CFG_DOUBLE, FIELD(memory.limit_gb), "0", 0, HUGE_VAL, NULL, "the most a run (a rank, under mpirun) counts as free in one memory (the device, or host memory), for a GPU or node shared with other jobs: the propagator's preflight, migrate's preflight, rtm.reconstruction = auto and rtm.checkpoints = 0 plan within it; 0 = all that is free"},
    {"memory", "require_compression", RTM_CFG_BOOL, FIELD(memory.require_compression), "false", ANY, NULL, "fail when vmm-compressed is not granted compression"},

    {"rtm", "observed", RTM_CFG_STRING, FIELD(rtm.observed), "", ANY, NULL, "migrate: the observed gathers, an HDF5 file in the layout rtm3d model writes (/shots/<k>/...), or a SEG-Y file (.sgy or .segy: one field record a shot, as rtm3d export writes)"},
    {"rtm", "reconstruction", RTM_CFG_ENUM, FIELD(rtm.reconstruction), "auto", ANY, "snapshots|boundary|checkpoint|auto", "how the source wavefield comes back in the backward pass: auto = the fastest that fits with the propagators, in this order: snapshots = stored every imaging_step steps (memory.imaging strategy) in rtm.snapshot_precision, and where those do not fit in fp16 or in zfp at rtm.snapshot_rate (and, at its default, at 4 and 3 bits a value where the higher rates do not fit; lossy: the run logs the round trip's error), whichever is faster (on a GPU zfp), where their packing (zfp: rtm.snapshot_codec_steps a snapshot) and a store's crossings of PCIe leave them faster than boundary or checkpoint; boundary = the outer 4 planes of the undamped interior stored every step (memory.imaging, fp32) and the wavefield rebuilt backwards inside them (3 propagations); checkpoint = recomputed from rtm.checkpoints full states on the optimal (revolve) schedule"},
    {"rtm", "imaging_step", RTM_CFG_INT, FIELD(rtm.imaging_step), "0", 0, 100000, NULL, "steps between applications of the imaging condition; 0 = auto (4 per period at 2.5 x source.frequency)"},
    {"rtm", "snapshot_precision", RTM_CFG_ENUM, FIELD(rtm.snapshot_precision), "fp32", ANY, "fp32|fp16|zfp", "stored source snapshots as float, IEEE half (each snapshot scaled by a power of two into half's range, so any source.amplitude keeps 11 bits) or zfp (a lossy codec in ZFP's style: blocks of 4 x 4 x 4 values, rtm.snapshot_rate bits a value on average, 32 / rate times smaller than float; the run logs a snapshot's round-trip error)"},
    {"rtm", "snapshot_rate", RTM_CFG_INT, FIELD(rtm.snapshot_rate), TEXT_OF(RTM_SNAPSHOT_RATE_DEFAULT), 1, 32, NULL, "rtm.snapshot_precision = zfp: bits a value on average (1 .. 32; 6: 5.3 x smaller than fp32; each slab of 4 planes spends its bits where the wavefield is: the image some 0.02 to 0.05% from fp32 snapshots' at 6 bits, 0.1 to 0.25% at 4; the run logs a snapshot's round trip); at the default, rtm.reconstruction = auto tries zfp at 4 and then 3 bits too before boundary"},
    {"rtm", "snapshot_codec_steps", RTM_CFG_DOUBLE_AUTO, FIELD(rtm.snapshot_codec_steps), "auto", 0, HUGE_VAL, NULL, "rtm.reconstruction = auto: what compressing and decompressing one zfp snapshot costs, in steps of the propagation, by which auto weighs zfp snapshots (2 propagations a shot and this much a snapshot) against boundary (3) and checkpoint (2 and its recomputation) where more than one fits; auto = the figure measured for the backend and the equation (docs/migration.md: on an H200 iso 1.8, vti 0.5, tti 0.3; on two CPU cores iso 20, vti 5.4, tti 2.3)"},
    {"rtm", "checkpoints", RTM_CFG_INT, FIELD(rtm.checkpoints), "0", 0, 1000000, NULL, "reconstruction = checkpoint: source states kept (both time levels of p, and q for vti/tti; fp32, memory.imaging strategy); fewer recompute more; 0 = as many as fit in 90% of the memory free"},
    {"rtm", "illumination", RTM_CFG_BOOL, FIELD(rtm.illumination), "true", ANY, NULL, "divide the image by the source illumination sum S^2 + eps"},
    {"rtm", "illumination_eps", RTM_CFG_DOUBLE, FIELD(rtm.illumination_eps), "1e-3", 0, 1, NULL, "eps of the illumination division, relative to the largest illumination"},
    {"rtm", "laplacian", RTM_CFG_BOOL, FIELD(rtm.laplacian), "true", ANY, NULL, "Laplacian filter of the image (suppresses the low-wavenumber backscatter)"},
    {"rtm", "mute", RTM_CFG_BOOL, FIELD(rtm.mute), "true", ANY, NULL, "mute the direct arrival in the observed gathers before back-propagation"},
    {"rtm", "phase_correction", RTM_CFG_BOOL, FIELD(rtm.phase_correction), "true", ANY, NULL, "apply -d/dt to the observed gathers, which makes the 3D image of a reflector zero phase (peak at the interface, positive where the velocity increases downward); false: the raw cross-correlation"},
    {"rtm", "mute_velocity", RTM_CFG_DOUBLE_AUTO, FIELD(rtm.mute_velocity_m_s), "auto", ABOVE_ZERO, NULL, "velocity of the mute line t = offset / v + delay, m/s; auto = vp at the source"},
    {"rtm", "mute_taper", RTM_CFG_DOUBLE_AUTO, FIELD(rtm.mute_taper_s), "auto", 0, HUGE_VAL, NULL, "length of the mute's cosine taper after the direct arrival, seconds; auto = 1.5 / source.frequency"},
    {"rtm", "end_taper", RTM_CFG_DOUBLE_AUTO, FIELD(rtm.end_taper_s), "auto", 0, HUGE_VAL, NULL, "length of the cosine taper over the observed gathers' last seconds (the record the run uses, time.steps x dt), before the dispersion warp: a record cut while reflections arrive starts the back-propagation with a step whose broadband energy aliases into the image at the imaging step (docs/migration.md, \"The imaging step and the record's end\"); auto = 0.5 / source.frequency, at most half the record; 0 = off"},
    {"rtm", "shot_images", RTM_CFG_BOOL, FIELD(rtm.shot_images), "false", ANY, NULL, "also write each shot's image as /shots/<k>/image"},
    {"rtm", "resume_every", RTM_CFG_DOUBLE, FIELD(rtm.resume_every_s), "600", 0, HUGE_VAL, NULL, "migrate: wall seconds between saves of the sums so far to OUTPUT.resume.h5, from which a stopped run resumes (a save follows the first shot that ends this long after the run's start or the last save; --max-shots always saves, the last shot never does): a run killed loses at most this much work and a shot (one rank saves the shots ended at SIGINT or SIGTERM), each save costs a read and a write of the image and the illumination; 0 = after every shot. Not part of the config a resumed state must match"},
    {"rtm", "offset_lags", RTM_CFG_INT, FIELD(rtm.offset_lags), "0", 0, 1000, NULL, "migrate: subsurface-offset common-image gathers I(x, h) = sum S(x - h) R(x + h) for horizontal lags h = (hx, hy), |hx|, |hy| <= offset_lags cells, at the CIP lines of rtm.cip_x_step and rtm.cip_y_step, written as /gathers/offset [ncip][nhy][nhx][nz]; the lags must fit across the non-absorbing interior (2 offset_lags + 1 cells); on a GPU they are summed in its memory; their sums are kept in the resume state; 0 = none (e.g. 16)"},
    {"rtm", "cip_x_step", RTM_CFG_INT, FIELD(rtm.cip_x_step), "16", 1, 1000000, NULL, "migrate, offset_lags > 0: cells between the gathers' common-image-point lines along x, centred in the non-absorbing interior (at least one line)"},
    {"rtm", "cip_y_step", RTM_CFG_INT, FIELD(rtm.cip_y_step), "16", 1, 1000000, NULL, "migrate, offset_lags > 0: cells between the gathers' common-image-point lines along y, centred in the non-absorbing interior (at least one line)"},
    {"rtm", "angles", RTM_CFG_INT, FIELD(rtm.angles), "31", 2, 1000, NULL, "migrate, offset_lags > 0: incidence angles of the angle gathers /gathers/angle [ncip][angles][nz], evenly from 0 to rtm.angle_max, made from each CIP's offset gather at hy = 0 through the (kz, kh) domain and divided by the illumination as the image is"},
    {"rtm", "angle_max", RTM_CFG_DOUBLE, FIELD(rtm.angle_max_deg), "60", 1, 89, NULL, "migrate, offset_lags > 0: the angle gathers' largest incidence angle, degrees (1 .. 89)"},

    {"bench", "warmup", RTM_CFG_INT, FIELD(bench.warmup_steps), "10", 0, HUGE_VAL, NULL, "untimed steps before measuring"},
    {"bench", "steps", RTM_CFG_INT, FIELD(bench.steps), "50", 1, HUGE_VAL, NULL, "timed steps"},

    {"traces", "pipeline", RTM_CFG_STRING, FIELD(traces.pipeline), "graph", ANY, "graph|streams", "trace processing: CUDA graph replay or plain stream launches"},

    {"mpi", "exchange", RTM_CFG_ENUM, FIELD(mpi.exchange), "overlap", ANY, "overlap|blocking|off", "z-slabs under mpirun: the ghost planes exchanged while the interior is computed (overlap) or after the whole step (blocking); off is refused (wrong results: rtm3d bench under mpirun measures what the exchange costs)"},
    {"mpi", "shot_groups", RTM_CFG_INT, FIELD(mpi.shot_groups), "1", 1, 100000, NULL, "under mpirun with several shots: the ranks split into this many groups of consecutive ranks (it must divide the rank count), each modelling or migrating every shot_groups-th shot across its own z-slabs; the gathers written and the images summed as one run's"},
    {"mpi", "timeout_s", RTM_CFG_DOUBLE, FIELD(mpi.timeout_s), "600", 0, HUGE_VAL, NULL, "under mpirun: the longest a rank waits for another (a halo exchange, a reduction, a gather; time the rank itself is stopped not counted) before it ends the job naming the rank that did not answer (stopped, hung or lost), instead of the job waiting for ever; raise it where one rank legitimately keeps the others waiting longer; 0 = wait for ever"},
    {"mpi", "transport", RTM_CFG_ENUM, FIELD(mpi.transport), "auto", ANY, "auto|shared|staged|nccl|cuda-aware", "z-slabs of a GPU's fields: how the planes travel between neighbours; nccl: GPU to GPU through NCCL on the stream of the edge planes (every rank needs a GPU of its own); cuda-aware: GPU to GPU as MPI messages of device memory, for an MPI that says it takes them (MPIX_Query_cuda_support); shared: through pinned host buffers in an MPI shared-memory window of the node, so that the planes cross host memory once (a neighbour on another node is sent messages); staged: pinned host buffers sent as MPI messages; auto: nccl when the build has it and every rank has its own GPU, else shared. With mpi.shot_groups the groups' sums meet through a shared-memory window of the node too, unless staged (then as messages)"},

    {NULL, NULL, RTM_CFG_INT, 0, 0, NULL, 0, 0, NULL, NULL},
};
/* the terminating row beside them: rtm_config_t.deck_line holds a line for every key */
_Static_assert(sizeof rtm_config_schema / sizeof rtm_config_schema[0] <= RTM_CONFIG_KEYS_MAX + 1,
               "raise RTM_CONFIG_KEYS_MAX: the schema has more rows than deck_line holds");
/* clang-format on */

size_t rtm_cfg_row_count(void) {
  size_t n = 0;
  while (rtm_config_schema[n].section)
    ++n;
  return n;
}

static int same_text(const char *a, const char *b) {
  for (; *a && *b; ++a, ++b)
    if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return 0;
  return *a == *b;
}

const rtm_cfg_entry_t *rtm_cfg_find(const char *section, const char *key) {
  for (const rtm_cfg_entry_t *row = rtm_config_schema; row->section; ++row)
    if (strcmp(row->section, section) == 0 && strcmp(row->key, key) == 0) return row;
  return NULL;
}

int rtm_cfg_section_known(const char *section) {
  for (const rtm_cfg_entry_t *row = rtm_config_schema; row->section; ++row)
    if (strcmp(row->section, section) == 0) return 1;
  return 0;
}

/* Optimal string alignment distance (Levenshtein plus adjacent transpositions), ignoring
 * case: "nxx", "NX" and "xn" are all one edit from "nx". */
static int edit_distance(const char *a, const char *b) {
  enum { LONGEST = 63 };
  size_t la = strlen(a), lb = strlen(b);
  if (la > LONGEST || lb > LONGEST) return LONGEST + 1;
  int d[LONGEST + 1][LONGEST + 1];
  for (size_t i = 0; i <= la; ++i)
    d[i][0] = (int)i;
  for (size_t j = 0; j <= lb; ++j)
    d[0][j] = (int)j;
  for (size_t i = 1; i <= la; ++i) {
    for (size_t j = 1; j <= lb; ++j) {
      int ca = tolower((unsigned char)a[i - 1]), cb = tolower((unsigned char)b[j - 1]);
      int best = d[i - 1][j - 1] + (ca != cb);
      if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
      if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
          tolower((unsigned char)a[i - 2]) == cb && d[i - 2][j - 2] + 1 < best)
        best = d[i - 2][j - 2] + 1;
      d[i][j] = best;
    }
  }
  return d[la][lb];
}

/* A one-edit typo wins; next a key that exists verbatim in another section (the right key
 * in the wrong place); then anything within two edits. */
void rtm_cfg_suggest_key(const char *section, const char *key, char *buf, size_t size) {
  char given[160], known[160];
  const rtm_cfg_entry_t *closest = NULL;
  int closest_distance = 3;
  buf[0] = '\0';
  snprintf(given, sizeof given, "%s.%s", section, key);
  for (const rtm_cfg_entry_t *row = rtm_config_schema; row->section; ++row) {
    snprintf(known, sizeof known, "%s.%s", row->section, row->key);
    int distance = edit_distance(given, known);
    if (distance < closest_distance) {
      closest_distance = distance;
      closest = row;
    }
  }
  if (closest && closest_distance <= 1) {
    snprintf(buf, size, " (did you mean %s.%s?)", closest->section, closest->key);
    return;
  }
  size_t used = 0;
  int matches = 0;
  for (const rtm_cfg_entry_t *row = rtm_config_schema; row->section && used < size; ++row) {
    if (!same_text(row->key, key)) continue;
    int n = snprintf(buf + used, size - used, "%s%s.%s", matches ? " or " : " (did you mean ",
                     row->section, row->key);
    if (n < 0) break;
    used += (size_t)n;
    ++matches;
  }
  if (matches) {
    if (used < size) snprintf(buf + used, size - used, "?)");
    return;
  }
  if (closest) snprintf(buf, size, " (did you mean %s.%s?)", closest->section, closest->key);
}

void rtm_cfg_suggest_section(const char *section, char *buf, size_t size) {
  const char *closest = NULL;
  int closest_distance = 3;
  for (const rtm_cfg_entry_t *row = rtm_config_schema; row->section; ++row) {
    int distance = edit_distance(section, row->section);
    if (distance < closest_distance) {
      closest_distance = distance;
      closest = row->section;
    }
  }
  if (closest) {
    snprintf(buf, size, " (did you mean [%s]?)", closest);
    return;
  }
  size_t used = 0;
  const char *previous = NULL;
  buf[0] = '\0';
  for (const rtm_cfg_entry_t *row = rtm_config_schema; row->section && used < size; ++row) {
    if (previous && strcmp(previous, row->section) == 0) continue;
    int n =
        snprintf(buf + used, size - used, "%s%s", previous ? ", " : " (sections: ", row->section);
    if (n < 0) break;
    used += (size_t)n;
    previous = row->section;
  }
  if (used < size) snprintf(buf + used, size - used, ")");
}
