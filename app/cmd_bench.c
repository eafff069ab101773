/* rtm3d bench CONFIG: propagator throughput beside the device's copy bandwidth
 * (docs/design.md "Measuring").
 *
 * Figures: MCells/s = cells x steps / time (CUDA events around `bench.steps` steps after
 * `bench.warmup` untimed ones, median of three windows); effective GB/s = bytes per cell (iso 16:
 * read p[n], p[n-1], v^2 dt^2, write p[n+1]) x MCells/s; fraction = that over the copy
 * bandwidth measured in the same process (a large device-to-device cudaMemcpy, bytes read
 * plus bytes written). Matrix variants start from random wavefields (never zeros: they
 * compress and hide unwritten cells). The compression study instead propagates the
 * config's source through its model and times vmm against vmm-compressed at an early, a
 * middle and a late window, since compressibility falls as the wavefield fills the volume.
 * CSV and JSON files are written only when the whole run succeeded.
 *
 * This file drives the command: the variants and their order, one propagator each. The
 * measuring (copy bandwidth, bytes per cell, timed windows) is solver/cuda/bench_cuda.c's,
 * the table bench_report.c's; under mpirun cmd_bench_mpi.c runs instead, with --traces
 * cmd_bench_traces.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "bench.h"
#include "rtm_io.h"
#include "rtm_kernel_choice.h"
#include "rtm_mpi.h"
#include "rtm_propagator.h"
#include "rtm_status.h"
#include "solver_io.h"

static void usage(FILE *out) {
  fprintf(
      out,
      "usage: rtm3d bench CONFIG [--set section.key=value ...] [--matrix | --compression]\n"
      "                   [--csv FILE] [--json FILE] [--quiet]\n"
      "       rtm3d bench --traces ...   (the trace pipeline; see rtm3d bench --traces --help)\n\n"
      "Measures the device copy bandwidth, then times the configured cuda propagator\n"
      "(kernel.*, memory.*) for bench.warmup + bench.steps steps and prints MCells/s,\n"
      "bytes per cell (16 iso, 40 vti, 52 tti; 32 vti and 38 tti with\n"
      "memory.model_precision = fp16), effective GB/s and the fraction of the copy bandwidth.\n\n"
      "  --matrix    sweep halo x stages x memory strategy, then tile shapes x zblock for the\n"
      "              fastest halo, then vmm against vmm-compressed at an early, a middle and\n"
      "              a late window of a time.steps-step propagation of the config's source\n"
      "              through its model, for several zblocks\n"
      "  --compression  only that last study, for the config's halo, stages and tile\n"
      "  --csv FILE  every result as CSV; --json FILE: the same as JSON\n"
      "  --quiet     print only the final table\n");
}

#ifdef RTM3D_HAVE_CUDA_BACKEND
#include "rtm_cuda_bench.h"
#include "rtm_cuda_kernel.h"

static void apply_variant(rtm_config_t *cfg, const bench_variant_t *v) {
  snprintf(cfg->backend.name, sizeof cfg->backend.name, "cuda");
  snprintf(cfg->kernel.halo, sizeof cfg->kernel.halo, "%s", v->halo);
  cfg->kernel.stages = v->stages;
  cfg->kernel.block[0] = v->block[0];
  cfg->kernel.block[1] = v->block[1];
  cfg->kernel.zblock = v->zblock;
  snprintf(cfg->memory.strategy, sizeof cfg->memory.strategy, "%s", v->strategy);
  cfg->memory.wavefield[0] = '\0';
  cfg->memory.model[0] = '\0';
}

/* kernel.* = auto resolved for this GPU (rtm_cuda_kernel.h), so that the variants and
 * their rows name what runs. */
static int resolve_kernel(rtm_config_t *cfg, int quiet) {
  int status = RTM_OK;
  rtm_kernel_shape_t kernel;
  char why[1024];
  RTM_TRY(rtm_cuda_kernel_resolve(cfg, cfg->backend.device, &kernel, why, sizeof why));
  snprintf(cfg->kernel.halo, sizeof cfg->kernel.halo, "%s", kernel.halo);
  cfg->kernel.stages = kernel.stages;
  cfg->kernel.block[0] = kernel.block[0];
  cfg->kernel.block[1] = kernel.block[1];
  cfg->kernel.zblock = kernel.zblock;
  if (!quiet) rtm_log_info("bench: kernel.* %s%s", strcmp(why, "explicit") ? "auto: " : "", why);
fail:
  return status;
}

static int wavefields_compressed(const rtm_propagator_t *prop) {
  int any = 0, all = 1;
  for (int i = 0; i < prop->ledger.count; ++i)
    if (strncmp(prop->ledger.records[i].label, "p ", 2) == 0) {
      any = 1;
      all = all && prop->ledger.records[i].compressed;
    }
  return any && all;
}

/* A timed variant into the results (its row printed unless --quiet): its figures against
 * the copy bandwidth, and whether its wavefields were compressed; `window` (NULL but in
 * the compression study) names the window starting at `window_step`. */
static int add_result(bench_t *b, const char *kind, const bench_variant_t *v,
                      const rtm_propagator_t *prop, double ms_per_step, const char *window,
                      int window_step) {
  int status = RTM_OK;
  if (b->count == RTM_BENCH_MAX_RESULTS)
    RTM_FAIL(RTM_ERR_INTERNAL, "bench: more than %d results", RTM_BENCH_MAX_RESULTS);
  bench_result_t *r = &b->results[b->count++];
  memset(r, 0, sizeof *r);
  r->kind = kind;
  r->v = *v;
  r->window = window;
  r->window_step = window_step;
  r->compressed = wavefields_compressed(prop);
  r->ms_per_step = ms_per_step;
  r->mcells = rtm_bench_mcells((double)rtm_grid_interior_cells(b->grid), ms_per_step);
  r->gbs = rtm_bench_gbs(r->mcells, rtm_bench_bytes_per_cell(b->cfg));
  r->fraction = b->copy_gbs > 0.0 ? r->gbs / b->copy_gbs : 0.0;
  if (!b->quiet) rtm_bench_print_row(stdout, r);
  fflush(stdout);
fail:
  return status;
}

/* Creates the propagator for a variant, starting from b->initial (both levels) or rest. */
static int create_variant(const bench_t *b, const bench_variant_t *v, int steps, rtm_config_t *cfg,
                          rtm_propagator_t *prop) {
  int status = RTM_OK;
  *cfg = *b->cfg;
  apply_variant(cfg, v);
  cfg->time.steps = steps;
  RTM_TRY(rtm_propagator_create(cfg, b->grid, b->model, prop));
  if (b->initial)
    RTM_TRY(rtm_bench_start_from(prop->backend, prop->state, cfg->physics.equation, b->initial));
fail:
  return status;
}

/* Warm-up, then the median of three timed windows. */
static int run_variant(bench_t *b, const char *kind, const bench_variant_t *v) {
  int status = RTM_OK;
  rtm_config_t cfg;
  rtm_propagator_t prop;
  const int warmup = b->cfg->bench.warmup_steps, steps = b->cfg->bench.steps;
  double ms = 0.0;
  memset(&prop, 0, sizeof prop);
  RTM_TRY(create_variant(b, v, warmup + RTM_BENCH_WINDOWS * steps, &cfg, &prop));
  RTM_TRY(rtm_bench_time_windows(prop.backend, prop.state, warmup, steps, &ms));
  RTM_TRY(add_result(b, kind, v, &prop, ms, NULL, 0));
fail:
  rtm_propagator_destroy(&prop);
  return status;
}

/* The zblocks of the compression study (--matrix, --compression). */
static const int study_zblocks[] = {0, 128, 64, 32, 16};

/* vmm against vmm-compressed over one real propagation each: windows of bench.steps
 * starting at 1/8, 1/2 and all of time.steps. */
static int compression_study(bench_t *b, const bench_variant_t *base, int zblock) {
  int status = RTM_OK;
  static const char *const names[3] = {"early", "middle", "late"};
  static const char *const strategies[2] = {"vmm", "vmm-compressed"};
  const int total = b->cfg->time.steps, window = b->cfg->bench.steps;
  const int starts[3] = {total / 8, total / 2, total};
  rtm_propagator_t prop;
  memset(&prop, 0, sizeof prop);
  for (int s = 0; s < 2; ++s) {
    bench_variant_t v = *base;
    rtm_config_t cfg;
    v.zblock = zblock;
    snprintf(v.strategy, sizeof v.strategy, "%s", strategies[s]);
    RTM_TRY(create_variant(b, &v, total + window, &cfg, &prop));
    int it = 0;
    for (int w = 0; w < 3; ++w) {
      for (; it < starts[w]; ++it)
        RTM_TRY(prop.backend->step(prop.state, it, RTM_REGION_ALL, RTM_FORWARD));
      double ms = 0.0;
      RTM_TRY(rtm_bench_time_steps(prop.backend, prop.state, it, window, &ms));
      it += window;
      RTM_TRY(add_result(b, "compression", &v, &prop, ms, names[w], starts[w]));
    }
    rtm_propagator_destroy(&prop);
  }
  return RTM_OK;
fail:
  rtm_propagator_destroy(&prop);
  return status;
}

/* The study at every zblock of study_zblocks (--matrix, --compression). */
static int compression_studies(bench_t *b, const bench_variant_t *base) {
  int status = RTM_OK;
  for (size_t z = 0; z < sizeof study_zblocks / sizeof study_zblocks[0]; ++z)
    RTM_TRY(compression_study(b, base, study_zblocks[z]));
fail:
  return status;
}

static int run_matrix(bench_t *b, int hopper) {
  int status = RTM_OK;
  /* each halo's stages up to what its kernel has for the equation (rtm_kernel_max_stages) */
  static const struct {
    const char *halo;
    int stages;
  } halos[] = {{"sync", 2}, {"ldgsts", 2}, {"ldgsts", 3}, {"tma", 2}, {"tma", 3}, {"tma", 4}};
  static const char *const strategies[] = {"device", "vmm", "vmm-compressed", "managed"};
  /* tiles in cells: iso 4 per thread along x (at most 512 threads: 128x16, the H200's row),
   * vti/tti one per cell */
  static const int iso_blocks[][2] = {{32, 16}, {64, 8},  {128, 4}, {64, 16},
                                      {128, 8}, {32, 32}, {32, 8},  {128, 16}};
  static const int tti_blocks[][2] = {{32, 8},  {32, 16}, {64, 4}, {64, 8},
                                      {16, 16}, {32, 4},  {128, 4}};
  const int iso = b->cfg->physics.equation == RTM_EQUATION_ISO;
  const size_t block_count =
      iso ? sizeof iso_blocks / sizeof iso_blocks[0] : sizeof tti_blocks / sizeof tti_blocks[0];
  const int(*blocks)[2] = iso ? iso_blocks : tti_blocks;
  static const int zblocks[] = {0, 128, 32};
  /* 1: halo x stages x strategy at the config's tile and zblock. */
  if (!hopper) rtm_log_info("bench: skipping tma (needs compute capability 9.0)");
  for (size_t h = 0; h < sizeof halos / sizeof halos[0]; ++h) {
    if (strcmp(halos[h].halo, "tma") == 0 && !hopper) continue;
    if (halos[h].stages > rtm_kernel_max_stages(halos[h].halo, b->cfg->physics.equation)) continue;
    for (size_t s = 0; s < sizeof strategies / sizeof strategies[0]; ++s) {
      bench_variant_t v = {.stages = halos[h].stages,
                           .block = {b->cfg->kernel.block[0], b->cfg->kernel.block[1]},
                           .zblock = b->cfg->kernel.zblock};
      snprintf(v.halo, sizeof v.halo, "%s", halos[h].halo);
      snprintf(v.strategy, sizeof v.strategy, "%s", strategies[s]);
      RTM_TRY(run_variant(b, "halo", &v));
    }
  }
  const bench_result_t *best = rtm_bench_fastest(b, 0, "device");
  if (!best) RTM_FAIL(RTM_ERR_INTERNAL, "bench: no halo variant ran");
  bench_variant_t lead = best->v;
  /* 2: tile shapes x zblock for the fastest halo, device memory. */
  const int shape_from = b->count;
  for (size_t k = 0; k < block_count; ++k)
    for (size_t z = 0; z < sizeof zblocks / sizeof zblocks[0]; ++z) {
      bench_variant_t v = lead;
      v.block[0] = blocks[k][0];
      v.block[1] = blocks[k][1];
      v.zblock = zblocks[z];
      RTM_TRY(run_variant(b, "shape", &v));
    }
  best = rtm_bench_fastest(b, shape_from, NULL);
  if (best) lead = best->v;
  /* 3: compression over a real propagation, for several zblocks. */
  RTM_TRY(compression_studies(b, &lead));
  return RTM_OK;
fail:
  return status;
}

/* The options of bench itself; the rest go to the shared config loader. */
typedef struct {
  int matrix, compression;
  const char *csv, *json;
  char **rest; /* argv without the options above */
  int rest_count;
} bench_args_t;

/* Options with values are taken out before the shared config loader sees them. */
static int split_arguments(int argc, char **argv, bench_args_t *args) {
  int status = RTM_OK;
  for (int i = 0; i < argc; ++i) {
    if (i > 0 && strcmp(argv[i], "--matrix") == 0) {
      args->matrix = 1;
    } else if (i > 0 && strcmp(argv[i], "--compression") == 0) {
      args->compression = 1;
    } else if (i > 0 && (strcmp(argv[i], "--csv") == 0 || strcmp(argv[i], "--json") == 0)) {
      if (i + 1 >= argc) RTM_FAIL(RTM_ERR_USAGE, "bench: %s needs a file name", argv[i]);
      if (strcmp(argv[i], "--csv") == 0)
        args->csv = argv[++i];
      else
        args->json = argv[++i];
    } else {
      args->rest[args->rest_count++] = argv[i];
    }
  }
fail:
  return status;
}

/* The matrix, the compression study or the one variant the config names. */
static int run_requested(bench_t *b, const bench_args_t *args, int hopper) {
  int status = RTM_OK;
  const rtm_config_t *cfg = b->cfg;
  if (args->matrix) {
    RTM_TRY(run_matrix(b, hopper));
  } else {
    bench_variant_t v = {.stages = cfg->kernel.stages,
                         .block = {cfg->kernel.block[0], cfg->kernel.block[1]},
                         .zblock = cfg->kernel.zblock};
    snprintf(v.halo, sizeof v.halo, "%s", cfg->kernel.halo);
    const char *strategy = rtm_config_strategy_for(cfg, "wavefield");
    snprintf(v.strategy, sizeof v.strategy, "%s",
             !strategy || !strategy[0] || strcmp(strategy, "auto") == 0 ? "device" : strategy);
    if (args->compression)
      RTM_TRY(compression_studies(b, &v));
    else
      RTM_TRY(run_variant(b, "single", &v));
  }
fail:
  return status;
}

static int bench_cuda(int argc, char **argv) {
  int status = RTM_OK, quiet = 0, hopper = 0;
  bench_args_t args = {.rest = calloc((size_t)argc + 1, sizeof *args.rest)};
  rtm_config_t *cfg = calloc(1, sizeof *cfg);
  bench_t *b = calloc(1, sizeof *b);
  rtm_grid_t grid;
  rtm_model_t model;
  float *initial = NULL;
  char device[512] = "";
  memset(&model, 0, sizeof model);
  if (!args.rest || !cfg || !b) RTM_FAIL(RTM_ERR_NOMEM, "bench: out of memory");
  RTM_TRY(split_arguments(argc, argv, &args));
  RTM_TRY(rtm_app_load_config(args.rest_count, args.rest, cfg, &quiet, NULL, NULL));
  if (args.matrix && args.compression)
    RTM_FAIL(RTM_ERR_USAGE, "bench: --matrix already ends with the compression study; give one");
  if (strcmp(cfg->backend.name, "cpu") == 0)
    RTM_FAIL(RTM_ERR_CONFIG, "bench: backend.name = cpu; bench times the cuda backend");
  if (args.csv) RTM_TRY(rtm_io_aside_probe(args.csv, "--csv")); /* before the timing */
  if (args.json) RTM_TRY(rtm_io_aside_probe(args.json, "--json"));
  RTM_TRY(rtm_bench_describe_device(cfg->backend.device, device, sizeof device, &hopper));
  RTM_TRY(resolve_kernel(cfg, quiet));
  RTM_TRY(rtm_grid_init(&grid, cfg->grid.n, cfg->grid.spacing_m, cfg->grid.origin_m));
  RTM_TRY(rtm_bench_check_device_fits(cfg, &grid));
  RTM_TRY(rtm_app_load_model(cfg, &grid, &model));
  b->cfg = cfg;
  b->grid = &grid;
  b->model = &model;
  b->quiet = quiet;
  RTM_TRY(rtm_bench_copy_bandwidth(cfg->backend.device, &b->copy_gbs));
  rtm_bench_print_preamble(b, device);
  if (!quiet) rtm_bench_print_header(stdout);
  initial = rtm_bench_random_field(&grid);
  if (!initial) RTM_FAIL(RTM_ERR_NOMEM, "bench: out of host memory for the initial field");
  b->initial = initial;
  RTM_TRY(run_requested(b, &args, hopper));
  rtm_bench_print_summary(b);
  if (args.csv) RTM_TRY(rtm_bench_write_csv(args.csv, b, device));
  if (args.json) RTM_TRY(rtm_bench_write_json(args.json, b, device));
fail:
  free(initial);
  rtm_model_release(&model);
  free(b);
  free(cfg);
  free(args.rest);
  return status;
}
#endif

int rtm_cmd_bench(int argc, char **argv, rtm_mpi_t *mpi) {
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--traces") == 0) return rtm_cmd_bench_traces(argc, argv);
  }
  if (rtm_mpi_size(mpi) > 1) return rtm_cmd_bench_mpi(argc, argv, mpi); /* mpirun: z-slabs */
  for (int i = 1; i < argc; ++i)
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      usage(stdout);
#ifndef RTM3D_HAVE_CUDA_BACKEND
      printf("\nThis build has no cuda backend: only --traces runs (configure with\n"
             "RTM3D_ENABLE_CUDA=ON on a machine with nvcc to time the propagators).\n");
#endif
      return 0;
    }
#ifdef RTM3D_HAVE_CUDA_BACKEND
  return rtm_status_exit_code(bench_cuda(argc, argv));
#else
  rtm_log_error("bench: this build has no cuda backend (configure with RTM3D_ENABLE_CUDA=ON "
                "on a machine with nvcc)");
  return 1;
#endif
}
