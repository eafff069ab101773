/* Backend `cuda` for physics.equation = vti | tti: the z-marching kernel of tti_cuda.cu
 * behind rtm_backend_t (backend_cuda.c hands these equations here).
 *
 * Device state: p and q at two padded levels (memory.wavefield strategy), the per-cell
 * coefficient volumes of tti_cuda.h padded like them (memory.model strategy; float, or
 * binary16 with memory.model_precision = fp16: 2 bytes a cell), the three 1D
 * damping profiles, the point taps and wavelets, and the traces [count][steps + 1] of each
 * field the receivers record (p, q or both; only those are allocated). As in the cpu
 * reference (cpu_backend.c): a step writes the new level of p and q, adds sample `it` of
 * every wavelet to both, records the fields asked for, and swaps the levels. Sources and
 * receivers use the iso launchers of iso_cuda.cu. kernel.halo = tma encodes tensor maps per
 * level of p and q (boxes of the tile with its halo, as the iso kernel's, and of the tile's
 * own cells) and per coefficient volume (own cells). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtm_cuda_check.h"
#include "iso_cuda.h"
#include "rtm_anisotropy.h"
#include "rtm_half.h"
#include "rtm_solver.h"
#include "rtm_status.h"
#include "tti_cuda.h"

enum { FIELDS = 2, LEVELS = 2 };

/* rtm_anisotropy_stored hands the values over in the kernel's volume order. */
_Static_assert((int)RTM_TTI_VPX2 == RTM_FDF_VPX2DT2 && (int)RTM_TTI_VPZ2 == RTM_FDF_VPZ2DT2 &&
                   (int)RTM_TTI_VPN2 == RTM_FDF_VPN2DT2 && (int)RTM_TTI_VSZ2 == RTM_FDF_VSZ2DT2 &&
                   (int)RTM_TTI_NX == RTM_FDF_AXIS_X && (int)RTM_TTI_NY == RTM_FDF_AXIS_Y &&
                   (int)RTM_TTI_NZ == RTM_FDF_AXIS_Z &&
                   (int)RTM_TTI_COEFF_MAX == RTM_FDF_STORED_COUNT,
               "tti_cuda.h's coefficient order differs from rtm_anisotropy.h's");

typedef struct {
  rtm_grid_t grid;
  int device;
  int steps;
  rtm_tti_shape_t shape;
  int coeff_count;
  cudaStream_t stream;
  rtm_mem_ledger_t *ledger;
  rtm_mem_request_t request;
  char wavefield_strategy[RTM_CONFIG_NAME_MAX];
  char model_strategy[RTM_CONFIG_NAME_MAX];

  rtm_allocation_t level[FIELDS][LEVELS]; /* [p|q][a|b]: level[f][current] = f[n] */
  rtm_iso_tensor_map_t map[FIELDS][LEVELS];      /* tma: halo maps of the levels */
  rtm_iso_tensor_map_t cell_map[FIELDS][LEVELS]; /* tma: own-cell maps of the levels */
  rtm_iso_tensor_map_t coeff_map[RTM_TTI_COEFF_MAX]; /* tma: own-cell maps */
  int current;
  rtm_allocation_t coeff[RTM_TTI_COEFF_MAX];
  rtm_allocation_t eta_dt[3];
  rtm_fd_weights_t weights[3];

  int source_count, source_samples;
  rtm_allocation_t source_index, source_coeff, wavelets;

  int receiver_count, trace_length;
  unsigned trace_fields; /* RTM_FIELD_BIT mask of the recorded fields */
  rtm_allocation_t receiver_index, receiver_weight, traces[FIELDS]; /* [p|q] */
} tti_state_t;

/* Bytes a cell of a coefficient volume: float, or binary16 with memory.model_precision = fp16. */
static size_t coeff_size(const tti_state_t *s) {
  return s->shape.coeff_half ? sizeof(rtm_half_t) : sizeof(float);
}

static int tti_probe(char *why, size_t why_size) {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    snprintf(why, why_size, "no usable CUDA device (%s)",
             err != cudaSuccess ? cudaGetErrorString(err) : "none found");
    return RTM_ERR_UNSUPPORTED;
  }
  return RTM_OK;
}

/* As backend_cuda.c: "auto" is device memory; host memory cannot serve. */
static int resolve_strategy(const rtm_config_t *cfg, const char *field_class, char *name,
                            size_t name_size) {
  const char *chosen = rtm_config_strategy_for(cfg, field_class);
  const char *key = strcmp(field_class, "wavefield") == 0 ? "memory.wavefield" : "memory.model";
  if (!chosen || !chosen[0] || strcmp(chosen, "auto") == 0) chosen = "device";
  if (!rtm_mem_find(chosen)) {
    rtm_log_error("%s (or memory.strategy) = '%s' is unknown (known: %s)", key, chosen,
                  rtm_mem_known_names());
    return RTM_ERR_CONFIG;
  }
  if (strcmp(chosen, "host") == 0) {
    rtm_log_error("%s (or memory.strategy) = host: the cuda backend keeps %ss in device "
                  "memory (device, vmm, vmm-compressed, managed)",
                  key, field_class);
    return RTM_ERR_CONFIG;
  }
  snprintf(name, name_size, "%s", chosen);
  return RTM_OK;
}

/* Bytes a strategy takes for a request: VMM rounds to its 2 MiB granularity. */
static size_t taken_bytes(const char *strategy, size_t bytes) {
  const size_t granule = (size_t)2 << 20;
  if (strncmp(strategy, "vmm", 3) == 0) return (bytes + granule - 1) / granule * granule;
  return bytes;
}

/* Refuses a volume that cannot fit before anything is allocated. */
static int check_fits(const tti_state_t *s) {
  int status = RTM_OK;
  size_t free_bytes = 0, total_bytes = 0;
  const size_t field_bytes = s->grid.padded_cells * sizeof(float);
  const size_t wave = taken_bytes(s->wavefield_strategy, field_bytes);
  const size_t model = taken_bytes(s->model_strategy, s->grid.padded_cells * coeff_size(s));
  const size_t need = FIELDS * LEVELS * wave + (size_t)s->coeff_count * model;
  const size_t slack = (size_t)256 << 20; /* context, profiles, taps, traces */
  RTM_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (need + slack > free_bytes)
    RTM_FAIL(RTM_ERR_NOMEM,
             "grid %d x %d x %d (local nz %d, %s) needs %.2f GB on device %d but %.2f GB are "
             "free: p and q at two levels 4 x %.2f GB (%s), %d coefficient volumes %d x %.2f "
             "GB (%s, %s), plus about %.2f GB of working space; reduce grid.n or use more "
             "ranks%s",
             s->grid.n[0], s->grid.n[1], s->grid.n[2], s->grid.nz_local,
             s->shape.tilted ? "tti" : "vti", need / 1e9, s->device, free_bytes / 1e9, wave / 1e9,
             s->wavefield_strategy, s->coeff_count, s->coeff_count, model / 1e9, s->model_strategy,
             s->shape.coeff_half ? "fp16" : "fp32", slack / 1e9,
             s->shape.coeff_half ? "" : " (memory.model_precision = fp16 halves the coefficients)");
  return RTM_OK;
fail:
  return status;
}

static int alloc_on_device(tti_state_t *s, const char *strategy, size_t bytes, const char *label,
                           rtm_allocation_t *out) {
  return rtm_mem_alloc(strategy, bytes, label, &s->request, s->ledger, out);
}

static int upload(rtm_allocation_t *dst, const void *src, size_t bytes) {
  int status = RTM_OK;
  RTM_CUDA_TRY(cudaMemcpy(dst->ptr, src, bytes, cudaMemcpyHostToDevice));
  return RTM_OK;
fail:
  return status;
}

/* The coefficient volumes from the conditioned parameters, rtm_anisotropy_stored's values
 * (those tti_cpu.c computes with), one plane at a time through host staging planes of float
 * or binary16. With coeff_half the values are binary16 already, so the narrowing here is
 * exact, and a value beyond binary16's range has been refused there. */
static int upload_coefficients(tti_state_t *s, const rtm_backend_desc_t *desc) {
  int status = RTM_OK;
  rtm_anisotropy_t prepared;
  int prepared_ok = 0;
  const rtm_grid_t *g = &s->grid;
  const size_t nx = (size_t)g->n[0], ny = (size_t)g->n[1];
  const size_t plane_bytes = g->stride_z * coeff_size(s);
  const double dt2 = desc->dt_s * desc->dt_s;
  const rtm_precision_t precision = s->shape.coeff_half ? RTM_PRECISION_FP16 : RTM_PRECISION_FP32;
  unsigned char *planes = calloc((size_t)s->coeff_count, plane_bytes);
  if (!planes) RTM_FAIL(RTM_ERR_NOMEM, "out of host memory staging the vti/tti coefficients");
  RTM_TRY(rtm_anisotropy_prepare(desc->config, desc->grid, desc->model, &prepared));
  prepared_ok = 1;
  for (long iz = 0; iz < g->nz_local; ++iz) {
    for (size_t iy = 0; iy < ny; ++iy)
      for (size_t ix = 0; ix < nx; ++ix) {
        rtm_fdf_cell_t cell;
        float value[RTM_FDF_STORED_COUNT];
        RTM_TRY(rtm_anisotropy_stored(&prepared, ((size_t)iz * ny + iy) * nx + ix, dt2, precision,
                                      &cell, value));
        const size_t at = (RTM_RADIUS + iy) * g->stride_y + RTM_RADIUS + ix;
        for (int k = 0; k < s->coeff_count; ++k) {
          unsigned char *plane = planes + (size_t)k * plane_bytes;
          if (s->shape.coeff_half)
            ((rtm_half_t *)plane)[at] = rtm_half_from_float(value[k]);
          else
            ((float *)plane)[at] = value[k];
        }
      }
    for (int k = 0; k < s->coeff_count; ++k) {
      unsigned char *dst =
          (unsigned char *)s->coeff[k].ptr + (size_t)(iz + RTM_RADIUS) * plane_bytes;
      RTM_CUDA_TRY(
          cudaMemcpy(dst, planes + (size_t)k * plane_bytes, plane_bytes, cudaMemcpyHostToDevice));
    }
  }
fail:
  if (prepared_ok) rtm_anisotropy_release(&prepared);
  free(planes);
  return status;
}

static void release(rtm_allocation_t *a) {
  rtm_mem_free(a);
  memset(a, 0, sizeof *a);
}

static void tti_destroy(void *state) {
  tti_state_t *s = state;
  if (!s) return;
  if (s->stream) cudaStreamSynchronize(s->stream);
  for (int f = FIELDS - 1; f >= 0; --f)
    release(&s->traces[f]);
  release(&s->receiver_weight);
  release(&s->receiver_index);
  release(&s->wavelets);
  release(&s->source_coeff);
  release(&s->source_index);
  for (int a = 2; a >= 0; --a)
    release(&s->eta_dt[a]);
  for (int k = RTM_TTI_COEFF_MAX - 1; k >= 0; --k)
    release(&s->coeff[k]);
  for (int f = FIELDS - 1; f >= 0; --f)
    for (int l = LEVELS - 1; l >= 0; --l)
      release(&s->level[f][l]);
  if (s->stream) cudaStreamDestroy(s->stream);
  free(s);
}

static int tti_create(const rtm_backend_desc_t *desc, void **state_out) {
  int status = RTM_OK;
  const rtm_config_t *cfg = desc->config;
  char why[256] = "";
  tti_state_t *s = NULL;
  *state_out = NULL;
  if (!cfg || !desc->grid || !desc->model || !desc->model->vp || !(desc->dt_s > 0.0) ||
      desc->steps < 0)
    RTM_FAIL(RTM_ERR_INTERNAL, "backend cuda: incomplete description (config, grid, model.vp, "
                               "dt > 0, steps >= 0 are required)");
  if (cfg->physics.equation == RTM_EQUATION_ISO)
    RTM_FAIL(RTM_ERR_INTERNAL, "backend cuda (vti/tti): physics.equation is iso");
  s = calloc(1, sizeof *s);
  if (!s) RTM_FAIL(RTM_ERR_NOMEM, "out of host memory for the cuda backend");
  s->grid = *desc->grid;
  s->device = cfg->backend.device;
  s->steps = desc->steps;
  s->ledger = desc->ledger;
  s->request.device = s->device;
  s->request.require_compression = cfg->memory.require_compression;
  s->shape.tilted = cfg->physics.equation == RTM_EQUATION_TTI;
  s->coeff_count = s->shape.tilted ? RTM_TTI_COEFF_COUNT : RTM_VTI_COEFF_COUNT;
  s->shape.coeff_half = rtm_config_model_precision(cfg) == RTM_PRECISION_FP16;
  if (tti_probe(why, sizeof why) != RTM_OK)
    RTM_FAIL(RTM_ERR_UNSUPPORTED, "backend.name = cuda: %s", why);
  {
    int count = 0;
    RTM_CUDA_TRY(cudaGetDeviceCount(&count));
    if (s->device < 0 || s->device >= count)
      RTM_FAIL(RTM_ERR_CONFIG, "backend.device = %d: this machine has %d CUDA device(s)", s->device,
               count);
  }
  RTM_CUDA_TRY(cudaSetDevice(s->device));
  RTM_TRY(rtm_iso_halo_parse(cfg->kernel.halo, &s->shape.halo));
  s->shape.stages = cfg->kernel.stages;
  s->shape.zblock = cfg->kernel.zblock;
  s->shape.block[0] = cfg->kernel.block[0];
  s->shape.block[1] = cfg->kernel.block[1];
  RTM_TRY(rtm_tti_cuda_prepare(&s->shape, s->device));

  RTM_TRY(resolve_strategy(cfg, "wavefield", s->wavefield_strategy, sizeof s->wavefield_strategy));
  RTM_TRY(resolve_strategy(cfg, "model", s->model_strategy, sizeof s->model_strategy));
  RTM_TRY(check_fits(s));
  RTM_CUDA_TRY(cudaStreamCreate(&s->stream));

  const size_t field_bytes = s->grid.padded_cells * sizeof(float);
  static const char *const level_label[FIELDS][LEVELS] = {{"p (level a)", "p (level b)"},
                                                          {"q (level a)", "q (level b)"}};
  for (int f = 0; f < FIELDS; ++f)
    for (int l = 0; l < LEVELS; ++l)
      RTM_TRY(alloc_on_device(s, s->wavefield_strategy, field_bytes, level_label[f][l],
                              &s->level[f][l]));
  for (int k = 0; k < s->coeff_count; ++k) {
    char label[RTM_MEM_LABEL_MAX]; /* the ledger and the run report say what a volume holds */
    snprintf(label, sizeof label, "%s%s", rtm_fdf_stored_name[k],
             s->shape.coeff_half ? " (fp16)" : "");
    RTM_TRY(alloc_on_device(s, s->model_strategy, s->grid.padded_cells * coeff_size(s), label,
                            &s->coeff[k]));
  }
  RTM_TRY(upload_coefficients(s, desc));
  if (s->shape.halo == RTM_HALO_TMA) {
    const rtm_iso_shape_t tile = {.halo = RTM_HALO_TMA,
                                  .stages = s->shape.stages,
                                  .zblock = s->shape.zblock,
                                  .block = {s->shape.block[0], s->shape.block[1]}};
    for (int f = 0; f < FIELDS; ++f)
      for (int l = 0; l < LEVELS; ++l) {
        RTM_TRY(rtm_iso_cuda_tensor_map(&s->grid, s->level[f][l].ptr, &tile, &s->map[f][l]));
        RTM_TRY(rtm_iso_cuda_cell_map(&s->grid, s->level[f][l].ptr, &tile, &s->cell_map[f][l]));
      }
    for (int k = 0; k < s->coeff_count; ++k)
      RTM_TRY(s->shape.coeff_half
                  ? rtm_iso_cuda_cell_map_half(&s->grid, s->coeff[k].ptr, &tile, &s->coeff_map[k])
                  : rtm_iso_cuda_cell_map(&s->grid, s->coeff[k].ptr, &tile, &s->coeff_map[k]));
  }

  for (int a = 0; a < 3; ++a) {
    static const char *const labels[3] = {"eta_dt x", "eta_dt y", "eta_dt z"};
    const size_t bytes = (size_t)s->grid.n[a] * sizeof(float);
    RTM_TRY(alloc_on_device(s, "device", bytes, labels[a], &s->eta_dt[a]));
    if (desc->boundary && desc->boundary->eta_dt[a]) /* else no layer: zeros */
      RTM_TRY(upload(&s->eta_dt[a], desc->boundary->eta_dt[a], bytes));
    rtm_fd_weights(s->grid.spacing_m[a], &s->weights[a]);
  }
  for (int f = 0; f < FIELDS; ++f)
    for (int l = 0; l < LEVELS; ++l)
      RTM_TRY(rtm_mem_prefetch(&s->level[f][l], s->stream));
  for (int k = 0; k < s->coeff_count; ++k)
    RTM_TRY(rtm_mem_prefetch(&s->coeff[k], s->stream));
  RTM_CUDA_TRY(cudaStreamSynchronize(s->stream));
  *state_out = s;
  return RTM_OK;
fail:
  tti_destroy(s);
  return status;
}

static int tti_set_sources(void *state, const rtm_points_t *points, const float *wavelets,
                           int samples) {
  int status = RTM_OK;
  tti_state_t *s = state;
  release(&s->source_index);
  release(&s->source_coeff);
  release(&s->wavelets);
  s->source_count = 0;
  s->source_samples = 0;
  if (!points || points->count == 0) return RTM_OK;
  const size_t taps = (size_t)points->count * RTM_POINT_TAPS;
  const size_t values = (size_t)points->count * (size_t)samples;
  RTM_TRY(alloc_on_device(s, "device", taps * sizeof(size_t), "source taps", &s->source_index));
  RTM_TRY(alloc_on_device(s, "device", taps * sizeof(float), "source weights", &s->source_coeff));
  RTM_TRY(alloc_on_device(s, "device", values * sizeof(float), "wavelets", &s->wavelets));
  RTM_TRY(upload(&s->source_index, points->tap_index, taps * sizeof(size_t)));
  RTM_TRY(upload(&s->source_coeff, points->tap_weight, taps * sizeof(float)));
  RTM_TRY(upload(&s->wavelets, wavelets, values * sizeof(float)));
  s->source_count = points->count;
  s->source_samples = samples;
fail:
  return status;
}

static int tti_set_receivers(void *state, const rtm_points_t *points, unsigned fields) {
  int status = RTM_OK;
  tti_state_t *s = state;
  static const char *const trace_label[FIELDS] = {"traces p", "traces q"};
  release(&s->receiver_index);
  release(&s->receiver_weight);
  for (int f = 0; f < FIELDS; ++f)
    release(&s->traces[f]);
  s->receiver_count = 0;
  s->trace_fields = 0;
  if (fields & ~(RTM_FIELD_BIT(RTM_FIELD_P) | RTM_FIELD_BIT(RTM_FIELD_Q)))
    RTM_FAIL(RTM_ERR_INTERNAL, "backend cuda (vti/tti): receivers asked to record unknown "
                               "fields (mask %#x)",
             fields);
  s->trace_fields = fields;
  if (!points || points->count == 0 || fields == 0) return RTM_OK;
  const size_t taps = (size_t)points->count * RTM_POINT_TAPS;
  s->trace_length = s->steps + 1;
  RTM_TRY(alloc_on_device(s, "device", taps * sizeof(size_t), "receiver taps", &s->receiver_index));
  RTM_TRY(
      alloc_on_device(s, "device", taps * sizeof(float), "receiver weights", &s->receiver_weight));
  for (int f = 0; f < FIELDS; ++f)
    if (fields & RTM_FIELD_BIT(f))
      RTM_TRY(alloc_on_device(s, "device",
                              (size_t)points->count * s->trace_length * sizeof(float),
                              trace_label[f], &s->traces[f]));
  RTM_TRY(upload(&s->receiver_index, points->tap_index, taps * sizeof(size_t)));
  RTM_TRY(upload(&s->receiver_weight, points->tap_weight, taps * sizeof(float)));
  s->receiver_count = points->count;
  return RTM_OK;
fail:
  return status;
}

static int tti_step(void *state, int it, rtm_region_t region, rtm_direction_t direction) {
  int status = RTM_OK;
  tti_state_t *s = state;
  const int nz = s->grid.nz_local, R = RTM_RADIUS;
  const int backward = direction == RTM_BACKWARD;
  /* Forward: centre f[it] = current, the other level f[it-1] becomes f[it+1]; backward:
   * centre f[it] = previous, current f[it+1] becomes f[it-1]; a swap afterwards for both. */
  const int centre = backward ? 1 - s->current : s->current;
  if (direction != RTM_FORWARD && !backward)
    RTM_FAIL(RTM_ERR_INTERNAL, "backend cuda: step direction %d is neither forward nor backward",
             (int)direction);
  rtm_tti_fields_t f;
  memset(&f, 0, sizeof f);
  f.p = s->level[0][centre].ptr;
  f.q = s->level[1][centre].ptr;
  f.p_other = s->level[0][1 - centre].ptr;
  f.q_other = s->level[1][1 - centre].ptr;
  if (s->shape.halo == RTM_HALO_TMA) {
    f.p_map = &s->map[0][centre];
    f.q_map = &s->map[1][centre];
    f.p_other_map = &s->cell_map[0][1 - centre];
    f.q_other_map = &s->cell_map[1][1 - centre];
    for (int k = 0; k < s->coeff_count; ++k)
      f.coeff_map[k] = &s->coeff_map[k];
  }
  for (int k = 0; k < s->coeff_count; ++k)
    f.coeff[k] = s->coeff[k].ptr;
  for (int a = 0; a < 3; ++a)
    f.eta_dt[a] = s->eta_dt[a].ptr;
  memcpy(f.weights, s->weights, sizeof f.weights);

  const int low_end = nz < R ? nz : R;
  const int high_begin = nz - R > low_end ? nz - R : low_end;
  if (region == RTM_REGION_ALL) {
    RTM_TRY(rtm_tti_cuda_step(&s->grid, &s->shape, &f, backward, 0, nz, s->stream));
  } else if (region == RTM_REGION_EDGE_PLANES) {
    RTM_TRY(rtm_tti_cuda_step(&s->grid, &s->shape, &f, backward, 0, low_end, s->stream));
    RTM_TRY(rtm_tti_cuda_step(&s->grid, &s->shape, &f, backward, high_begin, nz, s->stream));
    return RTM_OK;
  } else if (region == RTM_REGION_INTERIOR) {
    RTM_TRY(rtm_tti_cuda_step(&s->grid, &s->shape, &f, backward, low_end, high_begin, s->stream));
  } else {
    RTM_FAIL(RTM_ERR_INTERNAL, "backend cuda: unknown step region %d", (int)region);
  }
  /* The new level of both fields gets sample it; receivers record the fields asked for. */
  RTM_TRY(rtm_iso_cuda_inject(f.p_other, s->source_index.ptr, s->source_coeff.ptr, s->wavelets.ptr,
                              s->source_count, s->source_samples, it, s->stream));
  RTM_TRY(rtm_iso_cuda_inject(f.q_other, s->source_index.ptr, s->source_coeff.ptr, s->wavelets.ptr,
                              s->source_count, s->source_samples, it, s->stream));
  float *const written[FIELDS] = {f.p_other, f.q_other};
  for (int k = 0; k < FIELDS; ++k)
    if (s->trace_fields & RTM_FIELD_BIT(k))
      RTM_TRY(rtm_iso_cuda_record(written[k], s->receiver_index.ptr, s->receiver_weight.ptr,
                                  s->traces[k].ptr, s->receiver_count, s->trace_length,
                                  backward ? it - 1 : it + 1, s->stream));
  s->current = 1 - s->current;
  return RTM_OK;
fail:
  return status;
}

static float *level_ptr(tti_state_t *s, rtm_field_t field, rtm_level_t level, int *status) {
  if ((field != RTM_FIELD_P && field != RTM_FIELD_Q) ||
      (level != RTM_LEVEL_CURRENT && level != RTM_LEVEL_PREVIOUS)) {
    rtm_log_error("backend cuda (vti/tti): no field %d at level %d", (int)field, (int)level);
    *status = RTM_ERR_UNSUPPORTED;
    return NULL;
  }
  const int f = field == RTM_FIELD_P ? 0 : 1;
  const int l = level == RTM_LEVEL_CURRENT ? s->current : 1 - s->current;
  return s->level[f][l].ptr;
}

static int tti_read_field(void *state, rtm_field_t field, rtm_level_t level, float *dense) {
  int status = RTM_OK;
  tti_state_t *s = state;
  const rtm_grid_t *g = &s->grid;
  const float *padded = level_ptr(s, field, level, &status);
  if (!padded) goto fail;
  const size_t nx = (size_t)g->n[0], ny = (size_t)g->n[1];
  for (long iz = 0; iz < g->nz_local; ++iz)
    RTM_CUDA_TRY(cudaMemcpy2DAsync(dense + (size_t)iz * ny * nx, nx * sizeof(float),
                                   padded + rtm_grid_index(g, 0, 0, iz),
                                   g->stride_y * sizeof(float), nx * sizeof(float), ny,
                                   cudaMemcpyDeviceToHost, s->stream));
  RTM_CUDA_TRY(cudaStreamSynchronize(s->stream));
  return RTM_OK;
fail:
  return status;
}

static int tti_write_field(void *state, rtm_field_t field, rtm_level_t level, const float *dense) {
  int status = RTM_OK;
  tti_state_t *s = state;
  const rtm_grid_t *g = &s->grid;
  float *padded = level_ptr(s, field, level, &status);
  if (!padded) goto fail;
  const size_t nx = (size_t)g->n[0], ny = (size_t)g->n[1];
  for (long iz = 0; iz < g->nz_local; ++iz)
    RTM_CUDA_TRY(cudaMemcpy2DAsync(padded + rtm_grid_index(g, 0, 0, iz),
                                   g->stride_y * sizeof(float), dense + (size_t)iz * ny * nx,
                                   nx * sizeof(float), nx * sizeof(float), ny,
                                   cudaMemcpyHostToDevice, s->stream));
  RTM_CUDA_TRY(cudaStreamSynchronize(s->stream));
  return RTM_OK;
fail:
  return status;
}

static int tti_read_traces(void *state, rtm_field_t field, float *traces) {
  int status = RTM_OK;
  tti_state_t *s = state;
  if ((field != RTM_FIELD_P && field != RTM_FIELD_Q) || !(s->trace_fields & RTM_FIELD_BIT(field)))
    RTM_FAIL(RTM_ERR_INTERNAL, "backend cuda (vti/tti): traces of %s were not recorded",
             rtm_field_name(field));
  if (s->receiver_count == 0) return RTM_OK;
  RTM_CUDA_TRY(cudaMemcpyAsync(traces, s->traces[field].ptr,
                               (size_t)s->receiver_count * s->trace_length * sizeof(float),
                               cudaMemcpyDeviceToHost, s->stream));
  RTM_CUDA_TRY(cudaStreamSynchronize(s->stream));
  return RTM_OK;
fail:
  return status;
}

static int tti_synchronize(void *state) {
  int status = RTM_OK;
  tti_state_t *s = state;
  RTM_CUDA_TRY(cudaStreamSynchronize(s->stream));
  return RTM_OK;
fail:
  return status;
}

static void tti_describe(void *state, char *text, size_t size) {
  const tti_state_t *s = state;
  struct cudaDeviceProp prop;
  const char *equation = s->shape.tilted ? "tti" : "vti";
  if (cudaGetDeviceProperties(&prop, s->device) != cudaSuccess) {
    snprintf(text, size, "CUDA device %d, %s", s->device, equation);
    return;
  }
  snprintf(text, size, "%s (sm_%d%d), %s, halo %s, stages %d, block %dx%d, zblock %d, %s coefficients",
           prop.name, prop.major, prop.minor, equation, rtm_iso_halo_name(s->shape.halo),
           s->shape.stages, s->shape.block[0], s->shape.block[1], s->shape.zblock,
           s->shape.coeff_half ? "fp16" : "fp32");
}

const rtm_backend_t rtm_backend_cuda_tti = {
    .name = "cuda",
    .description = "CUDA z-marching kernel for vti/tti (halo sync, ldgsts or tma)",
    .probe = tti_probe,
    .create = tti_create,
    .set_sources = tti_set_sources,
    .set_receivers = tti_set_receivers,
    .step = tti_step,
    .read_field = tti_read_field,
    .write_field = tti_write_field,
    .read_traces = tti_read_traces,
    .synchronize = tti_synchronize,
    .describe = tti_describe,
    .destroy = tti_destroy,
};
