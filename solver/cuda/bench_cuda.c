/* Measuring the cuda backend against its device (rtm_cuda_bench.h): the device's copy
 * bandwidth, the roofline's ceiling (a large device-to-device cudaMemcpy, bytes read plus
 * bytes written, median of ten); the bytes a step must move per cell, from the levels and
 * coefficient volumes the kernels hold; the memory a deck needs against what is free; a
 * random starting field (never zeros: they compress and hide unwritten cells); and steps
 * timed between CUDA events, a warm-up then the median of three windows. */
#include "rtm_cuda_bench.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "rtm_cuda_check.h"
#include "rtm_cuda_driver.h"
#include "rtm_status.h"

enum { COPIES = 10 };

/* What a step holds per cell: wavefield levels (iso p[n], p[n-1]; vti/tti p and q at two
 * levels), float each, and model volumes (iso v^2 dt^2; the per-cell coefficients of
 * tti_cuda.h, 4 volumes for vti, 7 for tti), 4 bytes a cell, or 2 with
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

/* Every level read, the new one written over the oldest (levels + levels / 2 fields), and
 * every model volume read: iso 16, vti 40 or 32, tti 52 or 38 (fp32 or fp16 coefficients). */
int rtm_bench_bytes_per_cell(const rtm_config_t *cfg) {
  const footprint_t f = footprint_of(cfg);
  return (f.levels + f.levels / 2) * 4 + f.volumes * f.volume_bytes;
}

double rtm_bench_mcells(double cells, double ms_per_step) {
  return cells / (ms_per_step * 1e-3) / 1e6;
}

double rtm_bench_gbs(double mcells, int bytes_per_cell) {
  return mcells * 1e6 * bytes_per_cell / 1e9;
}

static double median3(double a, double b, double c) {
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

int rtm_bench_describe_device(int device, char *text, size_t size, int *hopper) {
  int status = RTM_OK, count = 0;
  char why[512];
  if (rtm_cuda_device_count(&count, why, sizeof why) != RTM_OK)
    RTM_FAIL(RTM_ERR_UNSUPPORTED,
             "no CUDA device: %s. bench and tune time GPU code: run them on a machine with an "
             "NVIDIA GPU",
             why);
  if (device < 0 || device >= count)
    RTM_FAIL(RTM_ERR_CONFIG, "backend.device = %d: this machine has %d CUDA device%s", device,
             count, count == 1 ? "" : "s");
  struct cudaDeviceProp prop;
  RTM_CUDA_TRY(cudaGetDeviceProperties(&prop, device));
  snprintf(text, size, "%s (sm_%d%d, %d SMs, %.0f MB L2)", prop.name, prop.major, prop.minor,
           prop.multiProcessorCount, prop.l2CacheSize / 1e6);
  *hopper = prop.major >= 9;
fail:
  return status;
}

/* 1 GiB a copy, less when the device has less than 4 GiB free. */
int rtm_bench_copy_bandwidth(int device, double *gbs) {
  int status = RTM_OK;
  void *a = NULL, *b = NULL;
  cudaEvent_t start = NULL, stop = NULL;
  size_t free_bytes = 0, total = 0, bytes = (size_t)1 << 30;
  float ms[COPIES];
  RTM_CUDA_TRY(cudaSetDevice(device));
  RTM_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total));
  while (bytes > ((size_t)16 << 20) && 4 * bytes > free_bytes)
    bytes /= 2;
  RTM_CUDA_TRY(cudaMalloc(&a, bytes));
  RTM_CUDA_TRY(cudaMalloc(&b, bytes));
  RTM_CUDA_TRY(cudaMemset(a, 1, bytes));
  RTM_CUDA_TRY(cudaEventCreate(&start));
  RTM_CUDA_TRY(cudaEventCreate(&stop));
  RTM_CUDA_TRY(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice));
  for (int r = 0; r < COPIES; ++r) {
    RTM_CUDA_TRY(cudaEventRecord(start, 0));
    RTM_CUDA_TRY(cudaMemcpyAsync(r % 2 ? a : b, r % 2 ? b : a, bytes, cudaMemcpyDeviceToDevice, 0));
    RTM_CUDA_TRY(cudaEventRecord(stop, 0));
    RTM_CUDA_TRY(cudaEventSynchronize(stop));
    RTM_CUDA_TRY(cudaEventElapsedTime(&ms[r], start, stop));
  }
  for (int i = 1; i < COPIES; ++i) /* insertion sort for the median */
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

int rtm_bench_time_steps(const rtm_backend_t *backend, void *state, int first, int steps,
                         double *ms_per_step) {
  int status = RTM_OK;
  cudaEvent_t start = NULL, stop = NULL;
  float ms = 0.f;
  RTM_CUDA_TRY(cudaEventCreate(&start));
  RTM_CUDA_TRY(cudaEventCreate(&stop));
  /* The backend's stream is a blocking one: events on the legacy stream bracket it. */
  RTM_CUDA_TRY(cudaEventRecord(start, 0));
  for (int it = first; it < first + steps; ++it)
    RTM_TRY(backend->step(state, it, RTM_REGION_ALL, RTM_FORWARD));
  RTM_CUDA_TRY(cudaEventRecord(stop, 0));
  RTM_CUDA_TRY(cudaEventSynchronize(stop));
  RTM_CUDA_TRY(cudaEventElapsedTime(&ms, start, stop));
  *ms_per_step = ms / steps;
fail:
  if (start) cudaEventDestroy(start);
  if (stop) cudaEventDestroy(stop);
  return status;
}

int rtm_bench_time_windows(const rtm_backend_t *backend, void *state, int warmup, int steps,
                           double *ms_per_step) {
  int status = RTM_OK;
  double ms[RTM_BENCH_WINDOWS];
  for (int it = 0; it < warmup; ++it)
    RTM_TRY(backend->step(state, it, RTM_REGION_ALL, RTM_FORWARD));
  for (int w = 0; w < RTM_BENCH_WINDOWS; ++w)
    RTM_TRY(rtm_bench_time_steps(backend, state, warmup + w * steps, steps, &ms[w]));
  _Static_assert(RTM_BENCH_WINDOWS == 3, "the median of three");
  *ms_per_step = median3(ms[0], ms[1], ms[2]);
fail:
  return status;
}

/* The wavefield levels and the model volumes of footprint_of, each a padded volume on its
 * strategy, rounded to the VMM granularity there. The backends check again with their
 * exact sizes. */
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
  RTM_CUDA_TRY(cudaSetDevice(cfg->backend.device));
  RTM_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total));
  if (need > free_bytes)
    RTM_FAIL(RTM_ERR_NOMEM,
             "bench: grid %d x %d x %d needs %.2f GB on device %d but %.2f GB are free: %d "
             "wavefield levels x %.2f GB (%s), %d model volumes x %.2f GB (%s); reduce grid.n",
             grid->n[0], grid->n[1], grid->n[2], need / 1e9, cfg->backend.device, free_bytes / 1e9,
             f.levels, wave_bytes / 1e9, wave, f.volumes, model_bytes / 1e9, model);
fail:
  return status;
}

/* Small random values (xorshift): a stable leapfrog keeps them bounded, and they do not
 * compress. */
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

int rtm_bench_start_from(const rtm_backend_t *backend, void *state, rtm_equation_t equation,
                         const float *field) {
  int status = RTM_OK;
  for (int l = RTM_LEVEL_CURRENT; l <= RTM_LEVEL_PREVIOUS; ++l) {
    RTM_TRY(backend->write_field(state, RTM_FIELD_P, (rtm_level_t)l, field));
    if (equation != RTM_EQUATION_ISO)
      RTM_TRY(backend->write_field(state, RTM_FIELD_Q, (rtm_level_t)l, field));
  }
fail:
  return status;
}
