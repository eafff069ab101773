/* rtm3d bench CONFIG: propagator throughput beside the device's copy bandwidth
 * (DESIGN.md "Measuring").
 *
 * Figures: MCells/s = cells x steps / time (CUDA events around `bench.steps` steps after
 * `bench.warmup` untimed ones, median of three windows); effective GB/s = bytes per cell (iso 16:
 * read p[n], p[n-1], v^2 dt^2, write p[n+1]) x MCells/s; fraction = that over the copy
 * bandwidth measured in the same process (a large device-to-device cudaMemcpy, bytes read
 * plus bytes written). Matrix variants start from random wavefields (never zeros: they
 * compress and hide unwritten cells). The compression study instead propagates the
 * config's source through its model and times vmm against vmm-compressed at an early, a
 * middle and a late window, since compressibility falls as the wavefield fills the volume.
 * CSV and JSON files are written only when the whole run succeeded. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "bench.h"
#include "rtm_io.h"
#include "rtm_mpi.h"
#include "rtm_propagator.h"
#include "rtm_status.h"
#include "solver_io.h"

#ifdef RTM3D_HAVE_CUDA_BACKEND
#include <cuda_runtime_api.h>

#include "rtm_cuda_kernel.h"

enum { WINDOWS = 3, MAX_RESULTS = 256 };

/* What a step holds per cell: wavefield levels (iso p[n], p[n-1]; vti/tti p and q at two
 * levels), float each, and model volumes (iso v^2 dt^2; the per-cell coefficients of
 * solver/cuda/tti_cuda.h, 4 volumes for vti, 7 for tti), 4 bytes a cell, or 2 with
 * memory.model_precision = fp16. */
typedef struct {
  int levels, volumes, volume_bytes;
} footprint_t;

static footprint_t footprint_of(const rtm_config_t *cfg) {
  const int fp16 = rtm_config_model_precision(cfg) == RTM_PRECISION_FP16;
  switch (cfg->physics.equation) {
  case RTM_EQUATION_VTI: return (footprint_t){4, 4, fp16 ? 2 : 4};
  case RTM_EQUATION_TTI: return (footprint_t){4, 7, fp16 ? 2 : 4};
  default: return (footprint_t){2, 1, 4};
  }
}

/* Bytes a step must move per cell at least: every level read, the new one written over the
 * oldest (levels + levels / 2 fields), and every model volume read: iso 16, vti 40 or 32,
 * tti 52 or 38 (fp32 or fp16 coefficients). */
int rtm_bench_bytes_per_cell(const rtm_config_t *cfg) {
  const footprint_t f = footprint_of(cfg);
  return (f.levels + f.levels / 2) * 4 + f.volumes * f.volume_bytes;
}

#define BENCH_CUDA_TRY(call)                                                                       \
  do {                                                                                             \
    cudaError_t bench_err_ = (call);                                                               \
    if (bench_err_ != cudaSuccess)                                                                 \
      RTM_FAIL(RTM_ERR_DEVICE, "%s:%d: %s failed: %s", __FILE__, __LINE__, #call,                  \
               cudaGetErrorString(bench_err_));                                                    \
  } while (0)

typedef struct {
  char halo[RTM_CONFIG_NAME_MAX];
  int stages;
  int block[2];
  int zblock;
  char strategy[RTM_CONFIG_NAME_MAX];
} variant_t;

typedef struct {
  const char *kind; /* "single", "matrix", "compression" */
  variant_t v;
  int compressed;     /* every wavefield allocation was granted compression */
  int window_step;    /* compression: first step of the timed window */
  const char *window; /* compression: early | middle | late */
  double ms_per_step, mcells, gbs, fraction;
} result_t;

typedef struct {
  const rtm_config_t *cfg;
  const rtm_grid_t *grid;
  const rtm_model_t *model;
  const float *initial; /* random dense field for matrix runs; NULL = start from rest */
  double copy_gbs;
  int quiet;
  result_t results[MAX_RESULTS];
  int count;
} bench_t;

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

double rtm_bench_median3(double a, double b, double c) {
  if (a > b) {
    double t = a;
    a = b;
    b = t;
  }
  if (b > c) {
    double t = b;
    b = c;
    c = t;
  }
  return a > b ? a : b;
}

/* Copy bandwidth, bytes read + written per second: median of 10 copies of 1 GiB (less when
 * the device has less than 4 GiB free). */
int rtm_bench_copy_bandwidth(int device, double *gbs) {
  int status = RTM_OK;
  void *a = NULL, *b = NULL;
  cudaEvent_t start = NULL, stop = NULL;
  size_t free_bytes = 0, total = 0, bytes = (size_t)1 << 30;
  float ms[10];
  BENCH_CUDA_TRY(cudaSetDevice(device));
  BENCH_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total));
  while (bytes > ((size_t)16 << 20) && 4 * bytes > free_bytes)
    bytes /= 2;
  BENCH_CUDA_TRY(cudaMalloc(&a, bytes));
  BENCH_CUDA_TRY(cudaMalloc(&b, bytes));
  BENCH_CUDA_TRY(cudaMemset(a, 1, bytes));
  BENCH_CUDA_TRY(cudaEventCreate(&start));
  BENCH_CUDA_TRY(cudaEventCreate(&stop));
  BENCH_CUDA_TRY(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice));
  for (int r = 0; r < 10; ++r) {
    BENCH_CUDA_TRY(cudaEventRecord(start, 0));
    BENCH_CUDA_TRY(
        cudaMemcpyAsync(r % 2 ? a : b, r % 2 ? b : a, bytes, cudaMemcpyDeviceToDevice, 0));
    BENCH_CUDA_TRY(cudaEventRecord(stop, 0));
    BENCH_CUDA_TRY(cudaEventSynchronize(stop));
    BENCH_CUDA_TRY(cudaEventElapsedTime(&ms[r], start, stop));
  }
  for (int i = 1; i < 10; ++i) /* insertion sort for the median */
    for (int j = i; j > 0 && ms[j] < ms[j - 1]; --j) {
      float t = ms[j];
      ms[j] = ms[j - 1];
      ms[j - 1] = t;
    }
  *gbs = 2.0 * (double)bytes / (0.5 * (ms[4] + ms[5]) * 1e-3) / 1e9;
fail:
  if (start) cudaEventDestroy(start);
  if (stop) cudaEventDestroy(stop);
  cudaFree(a);
  cudaFree(b);
  return status;
}

/* Milliseconds per step over `steps` steps starting at step `first`. */
int rtm_bench_time_steps(rtm_propagator_t *prop, int first, int steps, double *ms_per_step) {
  int status = RTM_OK;
  cudaEvent_t start = NULL, stop = NULL;
  float ms = 0.f;
  BENCH_CUDA_TRY(cudaEventCreate(&start));
  BENCH_CUDA_TRY(cudaEventCreate(&stop));
  /* The backend's stream is a blocking one: events on the legacy stream bracket it. */
  BENCH_CUDA_TRY(cudaEventRecord(start, 0));
  for (int it = first; it < first + steps; ++it)
    RTM_TRY(prop->backend->step(prop->state, it, RTM_REGION_ALL, RTM_FORWARD));
  BENCH_CUDA_TRY(cudaEventRecord(stop, 0));
  BENCH_CUDA_TRY(cudaEventSynchronize(stop));
  BENCH_CUDA_TRY(cudaEventElapsedTime(&ms, start, stop));
  *ms_per_step = ms / steps;
fail:
  if (start) cudaEventDestroy(start);
  if (stop) cudaEventDestroy(stop);
  return status;
}

static void apply_variant(rtm_config_t *cfg, const variant_t *v) {
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
  char why[160];
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

static void fill_figures(const bench_t *b, double ms_per_step, result_t *r) {
  const double cells = (double)rtm_grid_interior_cells(b->grid);
  r->ms_per_step = ms_per_step;
  r->mcells = cells / (ms_per_step * 1e-3) / 1e6;
  r->gbs = r->mcells * 1e6 * rtm_bench_bytes_per_cell(b->cfg) / 1e9;
  r->fraction = b->copy_gbs > 0.0 ? r->gbs / b->copy_gbs : 0.0;
}

static void print_header(FILE *out) {
  fprintf(out, "%-11s %-6s %2s %7s %5s %-14s %4s %6s %9s %9s %8s %6s\n", "kind", "halo", "st",
          "block", "zblk", "strategy", "comp", "step", "ms/step", "MCells/s", "GB/s", "%copy");
}

static void print_row(FILE *out, const result_t *r) {
  char block[16];
  snprintf(block, sizeof block, "%dx%d", r->v.block[0], r->v.block[1]);
  char step[16] = "-";
  if (r->window) snprintf(step, sizeof step, "%d", r->window_step);
  fprintf(out, "%-11s %-6s %2d %7s %5d %-14s %4s %6s %9.3f %9.0f %8.0f %5.1f%%\n",
          r->window ? r->window : r->kind, r->v.halo, r->v.stages, block, r->v.zblock,
          r->v.strategy, r->compressed ? "yes" : "no", step, r->ms_per_step, r->mcells, r->gbs,
          100.0 * r->fraction);
}

static result_t *next_result(bench_t *b) {
  if (b->count == MAX_RESULTS) return NULL;
  result_t *r = &b->results[b->count++];
  memset(r, 0, sizeof *r);
  return r;
}

/* Creates the propagator for a variant, starting from b->initial (both levels) or rest. */
static int create_variant(const bench_t *b, const variant_t *v, int steps, rtm_config_t *cfg,
                          rtm_propagator_t *prop) {
  int status = RTM_OK;
  *cfg = *b->cfg;
  apply_variant(cfg, v);
  cfg->time.steps = steps;
  RTM_TRY(rtm_propagator_create(cfg, b->grid, b->model, prop));
  if (b->initial) {
    RTM_TRY(prop->backend->write_field(prop->state, RTM_FIELD_P, RTM_LEVEL_CURRENT, b->initial));
    RTM_TRY(prop->backend->write_field(prop->state, RTM_FIELD_P, RTM_LEVEL_PREVIOUS, b->initial));
    if (b->cfg->physics.equation != RTM_EQUATION_ISO)
      for (int l = RTM_LEVEL_CURRENT; l <= RTM_LEVEL_PREVIOUS; ++l)
        RTM_TRY(prop->backend->write_field(prop->state, RTM_FIELD_Q, (rtm_level_t)l, b->initial));
  }
  return RTM_OK;
fail:
  return status;
}

/* Warm-up, then the median of three timed windows. */
static int run_variant(bench_t *b, const char *kind, const variant_t *v, result_t **out) {
  int status = RTM_OK;
  rtm_config_t cfg;
  rtm_propagator_t prop;
  const int warmup = b->cfg->bench.warmup_steps, steps = b->cfg->bench.steps;
  double ms[WINDOWS];
  memset(&prop, 0, sizeof prop);
  *out = NULL;
  RTM_TRY(create_variant(b, v, warmup + WINDOWS * steps, &cfg, &prop));
  for (int it = 0; it < warmup; ++it)
    RTM_TRY(prop.backend->step(prop.state, it, RTM_REGION_ALL, RTM_FORWARD));
  for (int w = 0; w < WINDOWS; ++w)
    RTM_TRY(rtm_bench_time_steps(&prop, warmup + w * steps, steps, &ms[w]));
  result_t *r = next_result(b);
  if (!r) RTM_FAIL(RTM_ERR_INTERNAL, "bench: more than %d results", MAX_RESULTS);
  r->kind = kind;
  r->v = *v;
  r->compressed = wavefields_compressed(&prop);
  fill_figures(b, rtm_bench_median3(ms[0], ms[1], ms[2]), r);
  if (!b->quiet) print_row(stdout, r);
  fflush(stdout);
  *out = r;
fail:
  rtm_propagator_destroy(&prop);
  return status;
}

/* The zblocks of the compression study (--matrix, --compression). */
static const int study_zblocks[] = {0, 128, 64, 32, 16};

/* vmm against vmm-compressed over one real propagation each: windows of bench.steps
 * starting at 1/8, 1/2 and all of time.steps. */
static int compression_study(bench_t *b, const variant_t *base, int zblock) {
  int status = RTM_OK;
  static const char *const names[3] = {"early", "middle", "late"};
  static const char *const strategies[2] = {"vmm", "vmm-compressed"};
  const int total = b->cfg->time.steps, window = b->cfg->bench.steps;
  const int starts[3] = {total / 8, total / 2, total};
  rtm_propagator_t prop;
  memset(&prop, 0, sizeof prop);
  for (int s = 0; s < 2; ++s) {
    variant_t v = *base;
    rtm_config_t cfg;
    v.zblock = zblock;
    snprintf(v.strategy, sizeof v.strategy, "%s", strategies[s]);
    RTM_TRY(create_variant(b, &v, total + window, &cfg, &prop));
    int it = 0;
    for (int w = 0; w < 3; ++w) {
      for (; it < starts[w]; ++it)
        RTM_TRY(prop.backend->step(prop.state, it, RTM_REGION_ALL, RTM_FORWARD));
      double ms = 0.0;
      RTM_TRY(rtm_bench_time_steps(&prop, it, window, &ms));
      it += window;
      result_t *r = next_result(b);
      if (!r) RTM_FAIL(RTM_ERR_INTERNAL, "bench: more than %d results", MAX_RESULTS);
      r->kind = "compression";
      r->v = v;
      r->window = names[w];
      r->window_step = starts[w];
      r->compressed = wavefields_compressed(&prop);
      fill_figures(b, ms, r);
      if (!b->quiet) print_row(stdout, r);
      fflush(stdout);
    }
    rtm_propagator_destroy(&prop);
  }
  return RTM_OK;
fail:
  rtm_propagator_destroy(&prop);
  return status;
}

/* The study at every zblock of study_zblocks (--matrix, --compression). */
static int compression_studies(bench_t *b, const variant_t *base) {
  int status = RTM_OK;
  for (size_t z = 0; z < sizeof study_zblocks / sizeof study_zblocks[0]; ++z)
    RTM_TRY(compression_study(b, base, study_zblocks[z]));
fail:
  return status;
}

static const result_t *fastest(const bench_t *b, int from, const char *strategy) {
  const result_t *best = NULL;
  for (int i = from; i < b->count; ++i)
    if ((!strategy || strcmp(b->results[i].v.strategy, strategy) == 0) &&
        (!best || b->results[i].mcells > best->mcells))
      best = &b->results[i];
  return best;
}

static int run_matrix(bench_t *b, int hopper) {
  int status = RTM_OK;
  static const struct {
    const char *halo;
    int stages;
  } halos[] = {{"sync", 2}, {"ldgsts", 2}, {"ldgsts", 3}, {"tma", 2}, {"tma", 3}};
  static const char *const strategies[] = {"device", "vmm", "vmm-compressed", "managed"};
  /* tiles in cells: iso 4 per thread along x (at most 512 threads), vti/tti one per cell */
  static const int iso_blocks[][2] = {{32, 16}, {64, 8},  {128, 4}, {64, 16},
                                      {128, 8}, {32, 32}, {32, 8}};
  static const int tti_blocks[][2] = {{32, 8},  {32, 16}, {64, 4}, {64, 8},
                                      {16, 16}, {32, 4},  {128, 4}};
  _Static_assert(sizeof iso_blocks == sizeof tti_blocks, "one count of tiles");
  const size_t block_count = sizeof iso_blocks / sizeof iso_blocks[0];
  const int(*blocks)[2] = b->cfg->physics.equation == RTM_EQUATION_ISO ? iso_blocks : tti_blocks;
  static const int zblocks[] = {0, 128, 32};
  result_t *r = NULL;
  /* 1: halo x stages x strategy at the config's tile and zblock. */
  for (size_t h = 0; h < sizeof halos / sizeof halos[0]; ++h) {
    if (strcmp(halos[h].halo, "tma") == 0 && !hopper) {
      rtm_log_info("bench: skipping tma (needs compute capability 9.0)");
      continue;
    }
    for (size_t s = 0; s < sizeof strategies / sizeof strategies[0]; ++s) {
      variant_t v = {.stages = halos[h].stages,
                     .block = {b->cfg->kernel.block[0], b->cfg->kernel.block[1]},
                     .zblock = b->cfg->kernel.zblock};
      snprintf(v.halo, sizeof v.halo, "%s", halos[h].halo);
      snprintf(v.strategy, sizeof v.strategy, "%s", strategies[s]);
      RTM_TRY(run_variant(b, "halo", &v, &r));
    }
  }
  const result_t *best = fastest(b, 0, "device");
  if (!best) RTM_FAIL(RTM_ERR_INTERNAL, "bench: no halo variant ran");
  variant_t lead = best->v;
  /* 2: tile shapes x zblock for the fastest halo, device memory. */
  const int shape_from = b->count;
  for (size_t k = 0; k < block_count; ++k)
    for (size_t z = 0; z < sizeof zblocks / sizeof zblocks[0]; ++z) {
      variant_t v = lead;
      v.block[0] = blocks[k][0];
      v.block[1] = blocks[k][1];
      v.zblock = zblocks[z];
      RTM_TRY(run_variant(b, "shape", &v, &r));
    }
  best = fastest(b, shape_from, NULL);
  if (best) lead = best->v;
  /* 3: compression over a real propagation, for several zblocks. */
  RTM_TRY(compression_studies(b, &lead));
  return RTM_OK;
fail:
  return status;
}

static int write_csv(const char *path, const bench_t *b, const char *device) {
  FILE *f = fopen(path, "w");
  if (!f) {
    rtm_log_error("--csv %s: cannot write", path);
    return RTM_ERR_IO;
  }
  fprintf(f, "device,copy_gb_s,kind,window,window_step,halo,stages,block_x,block_y,zblock,"
             "strategy,compressed,ms_per_step,mcells_per_s,bytes_per_cell,gb_per_s,"
             "fraction_of_copy\n");
  for (int i = 0; i < b->count; ++i) {
    const result_t *r = &b->results[i];
    fprintf(f, "\"%s\",%.1f,%s,%s,%d,%s,%d,%d,%d,%d,%s,%d,%.5f,%.1f,%d,%.1f,%.4f\n", device,
            b->copy_gbs, r->kind, r->window ? r->window : "", r->window ? r->window_step : -1,
            r->v.halo, r->v.stages, r->v.block[0], r->v.block[1], r->v.zblock, r->v.strategy,
            r->compressed, r->ms_per_step, r->mcells, rtm_bench_bytes_per_cell(b->cfg), r->gbs,
            r->fraction);
  }
  return fclose(f) == 0 ? RTM_OK : RTM_ERR_IO;
}

static int write_json(const char *path, const bench_t *b, const char *device) {
  FILE *f = fopen(path, "w");
  if (!f) {
    rtm_log_error("--json %s: cannot write", path);
    return RTM_ERR_IO;
  }
  fprintf(f,
          "{\n  \"device\": \"%s\",\n  \"copy_gb_s\": %.1f,\n  \"grid\": [%d, %d, %d],\n"
          "  \"bytes_per_cell\": %d,\n  \"model_precision\": \"%s\",\n  \"warmup_steps\": %d,\n"
          "  \"steps\": %d,\n  \"results\": [\n",
          device, b->copy_gbs, b->grid->n[0], b->grid->n[1], b->grid->n[2],
          rtm_bench_bytes_per_cell(b->cfg), rtm_precision_name(rtm_config_model_precision(b->cfg)),
          b->cfg->bench.warmup_steps, b->cfg->bench.steps);
  for (int i = 0; i < b->count; ++i) {
    const result_t *r = &b->results[i];
    fprintf(f,
            "    {\"kind\": \"%s\", \"window\": \"%s\", \"window_step\": %d, \"halo\": \"%s\", "
            "\"stages\": %d, \"block\": [%d, %d], \"zblock\": %d, \"strategy\": \"%s\", "
            "\"compressed\": %s, \"ms_per_step\": %.5f, \"mcells_per_s\": %.1f, "
            "\"gb_per_s\": %.1f, \"fraction_of_copy\": %.4f}%s\n",
            r->kind, r->window ? r->window : "", r->window ? r->window_step : -1, r->v.halo,
            r->v.stages, r->v.block[0], r->v.block[1], r->v.zblock, r->v.strategy,
            r->compressed ? "true" : "false", r->ms_per_step, r->mcells, r->gbs, r->fraction,
            i + 1 < b->count ? "," : "");
  }
  fprintf(f, "  ]\n}\n");
  return fclose(f) == 0 ? RTM_OK : RTM_ERR_IO;
}

/* Estimate before the model is read (and before any allocation): the wavefield levels and
 * the model volumes of footprint_of, each a padded volume on its strategy, rounded to the
 * VMM granularity there. The backends check again with their exact sizes. */
int rtm_bench_check_device_fits(const rtm_config_t *cfg, const rtm_grid_t *grid) {
  int status = RTM_OK;
  size_t free_bytes = 0, total = 0;
  const char *wave = rtm_config_strategy_for(cfg, "wavefield");
  const char *model = rtm_config_strategy_for(cfg, "model");
  if (!wave || !wave[0] || strcmp(wave, "auto") == 0) wave = "device";
  if (!model || !model[0] || strcmp(model, "auto") == 0) model = "device";
  const footprint_t f = footprint_of(cfg);
  const size_t granule = (size_t)2 << 20;
  const size_t field = grid->padded_cells * sizeof(float);
  const size_t volume = grid->padded_cells * (size_t)f.volume_bytes;
  const size_t wave_bytes =
      strncmp(wave, "vmm", 3) == 0 ? (field + granule - 1) / granule * granule : field;
  const size_t model_bytes =
      strncmp(model, "vmm", 3) == 0 ? (volume + granule - 1) / granule * granule : volume;
  const size_t need = f.levels * wave_bytes + f.volumes * model_bytes;
  BENCH_CUDA_TRY(cudaSetDevice(cfg->backend.device));
  BENCH_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total));
  if (need > free_bytes)
    RTM_FAIL(RTM_ERR_NOMEM,
             "bench: grid %d x %d x %d needs %.2f GB on device %d but %.2f GB are free: %d "
             "wavefield levels x %.2f GB (%s), %d model volumes x %.2f GB (%s); reduce grid.n",
             grid->n[0], grid->n[1], grid->n[2], need / 1e9, cfg->backend.device, free_bytes / 1e9,
             f.levels, wave_bytes / 1e9, wave, f.volumes, model_bytes / 1e9, model);
fail:
  return status;
}

/* Small random values: a stable leapfrog keeps them bounded, and they do not compress. */
float *rtm_bench_random_field(const rtm_grid_t *grid) {
  const size_t cells = rtm_grid_interior_cells(grid);
  float *f = malloc(cells * sizeof *f);
  uint64_t s = 0x2545f4914f6cdd1dull;
  for (size_t i = 0; f && i < cells; ++i) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    f[i] = (float)((double)(s >> 11) * 0x1.0p-53 - 0.5) * 1e-3f;
  }
  return f;
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

/* The device's name and shape for the report; hopper: compute capability 9.0 or above. */
int rtm_bench_describe_device(int device, char *text, size_t size, int *hopper) {
  int status = RTM_OK, count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0)
    RTM_FAIL(RTM_ERR_UNSUPPORTED, "no CUDA device (rtm3d info says what the driver sees)");
  struct cudaDeviceProp prop;
  BENCH_CUDA_TRY(cudaGetDeviceProperties(&prop, device));
  snprintf(text, size, "%s (sm_%d%d, %d SMs, %.0f MB L2)", prop.name, prop.major, prop.minor,
           prop.multiProcessorCount, prop.l2CacheSize / 1e6);
  *hopper = prop.major >= 9;
fail:
  return status;
}

static void print_preamble(const bench_t *b, const char *device) {
  const rtm_config_t *cfg = b->cfg;
  printf("device      %s\ncopy        %.0f GB/s (device-to-device cudaMemcpy, read + write)\n"
         "grid        %d x %d x %d, %s, coefficients %s, %d B/cell counted, %d warm-up + %d timed "
         "steps (median of %d windows)\n",
         device, b->copy_gbs, b->grid->n[0], b->grid->n[1], b->grid->n[2],
         rtm_equation_name(cfg->physics.equation),
         rtm_precision_name(rtm_config_model_precision(cfg)), rtm_bench_bytes_per_cell(cfg),
         cfg->bench.warmup_steps, cfg->bench.steps, WINDOWS);
}

/* The matrix, the compression study or the one variant the config names. */
static int run_requested(bench_t *b, const bench_args_t *args, int hopper) {
  int status = RTM_OK;
  const rtm_config_t *cfg = b->cfg;
  if (args->matrix) {
    RTM_TRY(run_matrix(b, hopper));
  } else {
    variant_t v = {.stages = cfg->kernel.stages,
                   .block = {cfg->kernel.block[0], cfg->kernel.block[1]},
                   .zblock = cfg->kernel.zblock};
    result_t *r = NULL;
    snprintf(v.halo, sizeof v.halo, "%s", cfg->kernel.halo);
    const char *strategy = rtm_config_strategy_for(cfg, "wavefield");
    snprintf(v.strategy, sizeof v.strategy, "%s",
             !strategy || !strategy[0] || strcmp(strategy, "auto") == 0 ? "device" : strategy);
    if (args->compression)
      RTM_TRY(compression_studies(b, &v));
    else
      RTM_TRY(run_variant(b, "single", &v, &r));
  }
fail:
  return status;
}

/* Every result again under one header, and the fastest. */
static void print_summary(const bench_t *b) {
  printf("\n");
  print_header(stdout);
  for (int i = 0; i < b->count; ++i)
    print_row(stdout, &b->results[i]);
  const result_t *best = fastest(b, 0, NULL);
  if (best)
    printf("best: %s, %d stages, block %dx%d, zblock %d, %s: %.0f MCells/s = %.1f%% of %.0f GB/s\n",
           best->v.halo, best->v.stages, best->v.block[0], best->v.block[1], best->v.zblock,
           best->v.strategy, best->mcells, 100.0 * best->fraction, b->copy_gbs);
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
  print_preamble(b, device);
  if (!quiet) print_header(stdout);
  initial = rtm_bench_random_field(&grid);
  if (!initial) RTM_FAIL(RTM_ERR_NOMEM, "bench: out of host memory for the initial field");
  b->initial = initial;
  RTM_TRY(run_requested(b, &args, hopper));
  print_summary(b);
  if (args.csv) RTM_TRY(write_csv(args.csv, b, device));
  if (args.json) RTM_TRY(write_json(args.json, b, device));
fail:
  free(initial);
  rtm_model_release(&model);
  free(b);
  free(cfg);
  free(args.rest);
  return status;
}
#endif

int rtm_cmd_bench(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--traces") == 0) return rtm_cmd_bench_traces(argc, argv);
  }
  if (rtm_mpi_size() > 1) return rtm_cmd_bench_mpi(argc, argv); /* under mpirun: z-slabs */
  for (int i = 1; i < argc; ++i)
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
#ifdef RTM3D_HAVE_CUDA_BACKEND
      usage(stdout);
#else
      printf("usage: rtm3d bench CONFIG [--matrix] [--csv FILE] [--json FILE] (needs the cuda "
             "backend)\n");
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
