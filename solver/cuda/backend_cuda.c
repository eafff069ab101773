/* Backend `cuda`: the isotropic z-marching kernels of iso_cuda.cu behind rtm_backend_t.
 *
 * Device state: two padded p levels (wavefield strategy), v^2 dt^2 padded like them (model
 * strategy), the three 1D damping profiles, the point taps and wavelets, and the traces of p
 * [count][steps + 1] (iso has no q to record), which stay on the device until read_traces. A
 * step queues its launches on the backend's stream and returns; nothing crosses to the host
 * per step.
 * The stream is a blocking one, so work queued on the legacy default stream (the bench's
 * timing events) is ordered after it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtm_cuda_check.h"
#include "iso_cuda.h"
#include "tti_cuda.h"
#include "rtm_solver.h"
#include "rtm_status.h"

enum { LEVELS = 2 };

typedef struct {
  rtm_grid_t grid;
  int device;
  int steps;
  rtm_iso_shape_t shape;
  cudaStream_t stream;
  rtm_mem_ledger_t *ledger;
  rtm_mem_request_t request;
  char wavefield_strategy[RTM_CONFIG_NAME_MAX];
  char model_strategy[RTM_CONFIG_NAME_MAX];

  rtm_allocation_t level[LEVELS]; /* p: level[current] = p[n], the other p[n-1] */
  int current;
  rtm_allocation_t v2dt2;
  rtm_allocation_t eta_dt[3];
  rtm_iso_tensor_map_t map[LEVELS];      /* tma: p levels, tile-with-halo boxes */
  rtm_iso_tensor_map_t cell_map[LEVELS]; /* tma: p levels, tile boxes (as p[n-1]) */
  rtm_iso_tensor_map_t v2dt2_map;        /* tma: v^2 dt^2, tile boxes */
  float stencil[RTM_RADIUS + 1]; /* the cpu reference's float coefficients */
  float inv_h2[3];

  int source_count, source_samples;
  rtm_allocation_t source_index, source_coeff, wavelets;

  int receiver_count, trace_length;
  int recording; /* set_receivers asked for p */
  rtm_allocation_t receiver_index, receiver_weight, traces;
} cuda_state_t;

static int cuda_probe(char *why, size_t why_size) {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    snprintf(why, why_size, "no usable CUDA driver or device (%s)", cudaGetErrorString(err));
    return RTM_ERR_UNSUPPORTED;
  }
  if (count == 0) {
    snprintf(why, why_size, "no CUDA device");
    return RTM_ERR_UNSUPPORTED;
  }
  return RTM_OK;
}

/* The strategy a field class gets: "auto" is device memory; host memory cannot serve. */
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

/* Refuses a volume that cannot fit before anything is allocated, naming each field. */
static int check_fits(const cuda_state_t *s) {
  int status = RTM_OK;
  size_t free_bytes = 0, total_bytes = 0;
  const size_t field_bytes = s->grid.padded_cells * sizeof(float);
  const size_t wave = taken_bytes(s->wavefield_strategy, field_bytes);
  const size_t model = taken_bytes(s->model_strategy, field_bytes);
  const size_t need = LEVELS * wave + model;
  /* Headroom for the context, profiles, taps and traces. */
  const size_t slack = (size_t)256 << 20;
  RTM_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (need + slack > free_bytes)
    RTM_FAIL(RTM_ERR_NOMEM,
             "grid %d x %d x %d (local nz %d) needs %.2f GB on device %d but %.2f GB are free: "
             "p[n] %.2f GB (%s), p[n-1] %.2f GB (%s), v^2 dt^2 %.2f GB (%s), plus about "
             "%.2f GB of working space; reduce grid.n or use more ranks",
             s->grid.n[0], s->grid.n[1], s->grid.n[2], s->grid.nz_local, need / 1e9, s->device,
             free_bytes / 1e9, wave / 1e9, s->wavefield_strategy, wave / 1e9, s->wavefield_strategy,
             model / 1e9, s->model_strategy, slack / 1e9);
  return RTM_OK;
fail:
  return status;
}

static int alloc_on_device(cuda_state_t *s, const char *strategy, size_t bytes, const char *label,
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

/* v^2 dt^2 into the padded layout, one plane at a time through a host staging plane. */
static int upload_model(cuda_state_t *s, const rtm_model_t *model, double dt_s) {
  int status = RTM_OK;
  const rtm_grid_t *g = &s->grid;
  const size_t nx = (size_t)g->n[0], ny = (size_t)g->n[1];
  float *plane = calloc(g->stride_z, sizeof(float));
  if (!plane) RTM_FAIL(RTM_ERR_NOMEM, "out of host memory staging the velocity model");
  for (long iz = 0; iz < g->nz_local; ++iz) {
    for (size_t iy = 0; iy < ny; ++iy) {
      const float *vp = model->vp + ((size_t)iz * ny + iy) * nx;
      float *row = plane + (RTM_RADIUS + iy) * g->stride_y + RTM_RADIUS;
      for (size_t ix = 0; ix < nx; ++ix) { /* the cpu reference's expression, bit for bit */
        const double v = vp[ix];
        row[ix] = (float)(v * v * dt_s * dt_s);
      }
    }
    float *dst = (float *)s->v2dt2.ptr + (size_t)(iz + RTM_RADIUS) * g->stride_z;
    RTM_CUDA_TRY(cudaMemcpy(dst, plane, g->stride_z * sizeof(float), cudaMemcpyHostToDevice));
  }
fail:
  free(plane);
  return status;
}

static void cuda_destroy(void *state);

static int cuda_create(const rtm_backend_desc_t *desc, void **state_out) {
  int status = RTM_OK;
  const rtm_config_t *cfg = desc->config;
  char why[256] = "";
  *state_out = NULL;
  cuda_state_t *s = NULL;
  if (!cfg || !desc->grid || !desc->model || !desc->model->vp || !(desc->dt_s > 0.0) ||
      desc->steps < 0)
    RTM_FAIL(RTM_ERR_INTERNAL, "backend cuda: incomplete description (config, grid, model.vp, "
                               "dt > 0, steps >= 0 are required)");
  s = calloc(1, sizeof *s);
  if (!s) RTM_FAIL(RTM_ERR_NOMEM, "out of host memory for the cuda backend");
  s->grid = *desc->grid;
  s->device = cfg->backend.device;
  s->steps = desc->steps;
  s->ledger = desc->ledger;
  s->request.device = s->device;
  s->request.require_compression = cfg->memory.require_compression;
  if (cfg->physics.equation != RTM_EQUATION_ISO)
    RTM_FAIL(RTM_ERR_UNSUPPORTED,
             "backend.name = cuda: physics.equation = %s has no CUDA kernel yet (iso only; "
             "use backend.name = cpu)",
             cfg->physics.equation == RTM_EQUATION_VTI ? "vti" : "tti");
  if (cuda_probe(why, sizeof why) != RTM_OK)
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
  RTM_TRY(rtm_iso_cuda_prepare(&s->shape, s->device));

  RTM_TRY(resolve_strategy(cfg, "wavefield", s->wavefield_strategy, sizeof s->wavefield_strategy));
  RTM_TRY(resolve_strategy(cfg, "model", s->model_strategy, sizeof s->model_strategy));
  RTM_TRY(check_fits(s));
  RTM_CUDA_TRY(cudaStreamCreate(&s->stream));

  const size_t field_bytes = s->grid.padded_cells * sizeof(float);
  RTM_TRY(alloc_on_device(s, s->wavefield_strategy, field_bytes, "p (level a)", &s->level[0]));
  RTM_TRY(alloc_on_device(s, s->wavefield_strategy, field_bytes, "p (level b)", &s->level[1]));
  RTM_TRY(alloc_on_device(s, s->model_strategy, field_bytes, "v2dt2", &s->v2dt2));
  RTM_TRY(upload_model(s, desc->model, desc->dt_s));

  for (int a = 0; a < 3; ++a) {
    static const char *const labels[3] = {"eta_dt x", "eta_dt y", "eta_dt z"};
    const size_t bytes = (size_t)s->grid.n[a] * sizeof(float);
    RTM_TRY(alloc_on_device(s, "device", bytes, labels[a], &s->eta_dt[a]));
    if (desc->boundary && desc->boundary->eta_dt[a]) /* else no layer: zeros */
      RTM_TRY(upload(&s->eta_dt[a], desc->boundary->eta_dt[a], bytes));
    s->inv_h2[a] = (float)(1.0 / (s->grid.spacing_m[a] * s->grid.spacing_m[a]));
  }
  for (int k = 0; k <= RTM_RADIUS; ++k)
    s->stencil[k] = (float)rtm_fd2_coeff[k];
  if (s->shape.halo == RTM_HALO_TMA) {
    for (int l = 0; l < LEVELS; ++l) {
      RTM_TRY(rtm_iso_cuda_tensor_map(&s->grid, s->level[l].ptr, &s->shape, &s->map[l]));
      RTM_TRY(rtm_iso_cuda_cell_map(&s->grid, s->level[l].ptr, &s->shape, &s->cell_map[l]));
    }
    RTM_TRY(rtm_iso_cuda_cell_map(&s->grid, s->v2dt2.ptr, &s->shape, &s->v2dt2_map));
  }
  for (int l = 0; l < LEVELS; ++l)
    RTM_TRY(rtm_mem_prefetch(&s->level[l], s->stream));
  RTM_TRY(rtm_mem_prefetch(&s->v2dt2, s->stream));
  RTM_CUDA_TRY(cudaStreamSynchronize(s->stream));
  *state_out = s;
  return RTM_OK;
fail:
  cuda_destroy(s);
  return status;
}

static void release(rtm_allocation_t *a) {
  rtm_mem_free(a);
  memset(a, 0, sizeof *a);
}

static int cuda_set_sources(void *state, const rtm_points_t *points, const float *wavelets,
                            int samples) {
  int status = RTM_OK;
  cuda_state_t *s = state;
  float *coeff = NULL;
  release(&s->source_index);
  release(&s->source_coeff);
  release(&s->wavelets);
  s->source_count = 0;
  s->source_samples = 0;
  if (!points || points->count == 0) return RTM_OK;
  const size_t taps = (size_t)points->count * RTM_POINT_TAPS;
  coeff = malloc(taps * sizeof *coeff);
  if (!coeff) RTM_FAIL(RTM_ERR_NOMEM, "out of host memory for %d sources", points->count);
  /* Sources are added to the new level after the damped update (the cpu reference's
   * order), so the tap weights go in as they are. */
  for (size_t t = 0; t < taps; ++t)
    coeff[t] = points->tap_weight[t];
  RTM_TRY(alloc_on_device(s, "device", taps * sizeof(size_t), "source taps", &s->source_index));
  RTM_TRY(alloc_on_device(s, "device", taps * sizeof(float), "source weights", &s->source_coeff));
  RTM_TRY(alloc_on_device(s, "device", (size_t)points->count * samples * sizeof(float), "wavelets",
                          &s->wavelets));
  RTM_TRY(upload(&s->source_index, points->tap_index, taps * sizeof(size_t)));
  RTM_TRY(upload(&s->source_coeff, coeff, taps * sizeof(float)));
  RTM_TRY(upload(&s->wavelets, wavelets, (size_t)points->count * samples * sizeof(float)));
  s->source_count = points->count;
  s->source_samples = samples;
fail:
  free(coeff);
  return status;
}

static int cuda_set_receivers(void *state, const rtm_points_t *points, unsigned fields) {
  int status = RTM_OK;
  cuda_state_t *s = state;
  release(&s->receiver_index);
  release(&s->receiver_weight);
  release(&s->traces);
  s->receiver_count = 0;
  s->recording = 0;
  if (fields & ~RTM_FIELD_BIT(RTM_FIELD_P))
    RTM_FAIL(RTM_ERR_INTERNAL, "backend cuda (iso): receivers record p only, not fields %#x",
             fields);
  s->recording = fields != 0;
  if (!points || points->count == 0 || !s->recording) return RTM_OK;
  const size_t taps = (size_t)points->count * RTM_POINT_TAPS;
  s->trace_length = s->steps + 1;
  RTM_TRY(alloc_on_device(s, "device", taps * sizeof(size_t), "receiver taps", &s->receiver_index));
  RTM_TRY(
      alloc_on_device(s, "device", taps * sizeof(float), "receiver weights", &s->receiver_weight));
  RTM_TRY(alloc_on_device(s, "device", (size_t)points->count * s->trace_length * sizeof(float),
                          "traces", &s->traces));
  RTM_TRY(upload(&s->receiver_index, points->tap_index, taps * sizeof(size_t)));
  RTM_TRY(upload(&s->receiver_weight, points->tap_weight, taps * sizeof(float)));
  s->receiver_count = points->count;
  return RTM_OK;
fail:
  return status;
}

static int cuda_step(void *state, int it, rtm_region_t region, rtm_direction_t direction) {
  int status = RTM_OK;
  cuda_state_t *s = state;
  const int nz = s->grid.nz_local, R = RTM_RADIUS;
  const int backward = direction == RTM_BACKWARD;
  /* Forward: centre p[it] = current, the other level p[it-1] becomes p[it+1]. Backward:
   * centre p[it] = previous, the current level p[it+1] becomes p[it-1]. Swapping the
   * levels afterwards is right for both (the cpu reference's convention). */
  const int centre = backward ? 1 - s->current : s->current;
  if (direction != RTM_FORWARD && !backward)
    RTM_FAIL(RTM_ERR_INTERNAL, "backend cuda: step direction %d is neither forward nor backward",
             (int)direction);
  rtm_iso_fields_t f;
  memset(&f, 0, sizeof f);
  f.p = s->level[centre].ptr;
  f.p_other = s->level[1 - centre].ptr;
  f.v2dt2 = s->v2dt2.ptr;
  for (int a = 0; a < 3; ++a)
    f.eta_dt[a] = s->eta_dt[a].ptr;
  if (s->shape.halo == RTM_HALO_TMA) {
    f.p_map = &s->map[centre];
    f.p_other_map = &s->cell_map[1 - centre];
    f.v2dt2_map = &s->v2dt2_map;
  }
  memcpy(f.stencil, s->stencil, sizeof f.stencil);
  memcpy(f.inv_h2, s->inv_h2, sizeof f.inv_h2);

  /* Edge planes: the R next to each z neighbour (all of them when nz <= 2R); the interior
   * is what lies between. */
  const int low_end = nz < R ? nz : R;
  const int high_begin = nz - R > low_end ? nz - R : low_end;
  if (region == RTM_REGION_ALL) {
    RTM_TRY(rtm_iso_cuda_step(&s->grid, &s->shape, &f, backward, 0, nz, s->stream));
  } else if (region == RTM_REGION_EDGE_PLANES) {
    RTM_TRY(rtm_iso_cuda_step(&s->grid, &s->shape, &f, backward, 0, low_end, s->stream));
    RTM_TRY(rtm_iso_cuda_step(&s->grid, &s->shape, &f, backward, high_begin, nz, s->stream));
    return RTM_OK;
  } else if (region == RTM_REGION_INTERIOR) {
    RTM_TRY(rtm_iso_cuda_step(&s->grid, &s->shape, &f, backward, low_end, high_begin, s->stream));
  } else {
    RTM_FAIL(RTM_ERR_INTERNAL, "backend cuda: unknown step region %d", (int)region);
  }
  /* The new level: sources add sample it, receivers record column it + 1 (it - 1
   * backward). */
  RTM_TRY(rtm_iso_cuda_inject(f.p_other, s->source_index.ptr, s->source_coeff.ptr, s->wavelets.ptr,
                              s->source_count, s->source_samples, it, s->stream));
  if (s->recording)
    RTM_TRY(rtm_iso_cuda_record(f.p_other, s->receiver_index.ptr, s->receiver_weight.ptr,
                                s->traces.ptr, s->receiver_count, s->trace_length,
                                backward ? it - 1 : it + 1, s->stream));
  s->current = 1 - s->current;
  return RTM_OK;
fail:
  return status;
}

static int level_index(const cuda_state_t *s, rtm_field_t field, rtm_level_t level) {
  if (field != RTM_FIELD_P) return -1;
  return level == RTM_LEVEL_CURRENT ? s->current : 1 - s->current;
}

static int cuda_read_field(void *state, rtm_field_t field, rtm_level_t level, float *dense) {
  int status = RTM_OK;
  cuda_state_t *s = state;
  const rtm_grid_t *g = &s->grid;
  const int l = level_index(s, field, level);
  if (l < 0) RTM_FAIL(RTM_ERR_UNSUPPORTED, "cuda backend (iso): there is no field q");
  const size_t nx = (size_t)g->n[0], ny = (size_t)g->n[1];
  for (long iz = 0; iz < g->nz_local; ++iz) {
    const float *src = (const float *)s->level[l].ptr + rtm_grid_index(g, 0, 0, iz);
    RTM_CUDA_TRY(cudaMemcpy2DAsync(dense + (size_t)iz * ny * nx, nx * sizeof(float), src,
                                   g->stride_y * sizeof(float), nx * sizeof(float), ny,
                                   cudaMemcpyDeviceToHost, s->stream));
  }
  RTM_CUDA_TRY(cudaStreamSynchronize(s->stream));
  return RTM_OK;
fail:
  return status;
}

static int cuda_write_field(void *state, rtm_field_t field, rtm_level_t level, const float *dense) {
  int status = RTM_OK;
  cuda_state_t *s = state;
  const rtm_grid_t *g = &s->grid;
  const int l = level_index(s, field, level);
  if (l < 0) RTM_FAIL(RTM_ERR_UNSUPPORTED, "cuda backend (iso): there is no field q");
  const size_t nx = (size_t)g->n[0], ny = (size_t)g->n[1];
  for (long iz = 0; iz < g->nz_local; ++iz) {
    float *dst = (float *)s->level[l].ptr + rtm_grid_index(g, 0, 0, iz);
    RTM_CUDA_TRY(cudaMemcpy2DAsync(dst, g->stride_y * sizeof(float), dense + (size_t)iz * ny * nx,
                                   nx * sizeof(float), nx * sizeof(float), ny,
                                   cudaMemcpyHostToDevice, s->stream));
  }
  RTM_CUDA_TRY(cudaStreamSynchronize(s->stream));
  return RTM_OK;
fail:
  return status;
}

static int cuda_read_traces(void *state, rtm_field_t field, float *traces) {
  int status = RTM_OK;
  cuda_state_t *s = state;
  if (field != RTM_FIELD_P || !s->recording)
    RTM_FAIL(RTM_ERR_INTERNAL, "backend cuda (iso): traces of %s were not recorded",
             rtm_field_name(field));
  if (s->receiver_count == 0) return RTM_OK;
  RTM_CUDA_TRY(cudaMemcpyAsync(traces, s->traces.ptr,
                               (size_t)s->receiver_count * s->trace_length * sizeof(float),
                               cudaMemcpyDeviceToHost, s->stream));
  RTM_CUDA_TRY(cudaStreamSynchronize(s->stream));
  return RTM_OK;
fail:
  return status;
}

static int cuda_synchronize(void *state) {
  int status = RTM_OK;
  cuda_state_t *s = state;
  RTM_CUDA_TRY(cudaStreamSynchronize(s->stream));
  return RTM_OK;
fail:
  return status;
}

static void cuda_describe(void *state, char *text, size_t size) {
  const cuda_state_t *s = state;
  struct cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, s->device) != cudaSuccess) {
    snprintf(text, size, "CUDA device %d", s->device);
    return;
  }
  snprintf(text, size, "%s (sm_%d%d), halo %s, %d stages, block %dx%d, zblock %d", prop.name,
           prop.major, prop.minor, rtm_iso_halo_name(s->shape.halo), s->shape.stages,
           s->shape.block[0], s->shape.block[1], s->shape.zblock);
}

static void cuda_destroy(void *state) {
  cuda_state_t *s = state;
  if (!s) return;
  if (s->stream) cudaStreamSynchronize(s->stream);
  release(&s->traces);
  release(&s->receiver_weight);
  release(&s->receiver_index);
  release(&s->wavelets);
  release(&s->source_coeff);
  release(&s->source_index);
  for (int a = 2; a >= 0; --a)
    release(&s->eta_dt[a]);
  release(&s->v2dt2);
  release(&s->level[1]);
  release(&s->level[0]);
  if (s->stream) cudaStreamDestroy(s->stream);
  free(s);
}

static const rtm_backend_t cuda_iso = {
    .name = "cuda",
    .description = "CUDA z-marching kernels (iso; halo sync | ldgsts | tma)",
    .probe = cuda_probe,
    .create = cuda_create,
    .set_sources = cuda_set_sources,
    .set_receivers = cuda_set_receivers,
    .step = cuda_step,
    .read_field = cuda_read_field,
    .write_field = cuda_write_field,
    .read_traces = cuda_read_traces,
    .synchronize = cuda_synchronize,
    .describe = cuda_describe,
    .destroy = cuda_destroy,
};

/* physics.equation = vti | tti runs on backend_cuda_tti.c's table: the state handed out
 * remembers which table made it, and every entry forwards to that table. */
typedef struct {
  const rtm_backend_t *impl;
  void *state;
} cuda_dispatch_t;

static int dispatch_create(const rtm_backend_desc_t *desc, void **state) {
  int status = RTM_OK;
  *state = NULL;
  cuda_dispatch_t *d = calloc(1, sizeof *d);
  if (!d) RTM_FAIL(RTM_ERR_NOMEM, "out of host memory for the cuda backend");
  d->impl = desc->config && desc->config->physics.equation != RTM_EQUATION_ISO
                ? &rtm_backend_cuda_tti
                : &cuda_iso;
  RTM_TRY(d->impl->create(desc, &d->state));
  *state = d;
  return RTM_OK;
fail:
  free(d);
  return status;
}
static int dispatch_set_sources(void *state, const rtm_points_t *points, const float *wavelets,
                                int samples) {
  const cuda_dispatch_t *d = state;
  return d->impl->set_sources(d->state, points, wavelets, samples);
}
static int dispatch_set_receivers(void *state, const rtm_points_t *points, unsigned fields) {
  const cuda_dispatch_t *d = state;
  return d->impl->set_receivers(d->state, points, fields);
}
static int dispatch_step(void *state, int it, rtm_region_t region, rtm_direction_t direction) {
  const cuda_dispatch_t *d = state;
  return d->impl->step(d->state, it, region, direction);
}
static int dispatch_read_field(void *state, rtm_field_t field, rtm_level_t level, float *dense) {
  const cuda_dispatch_t *d = state;
  return d->impl->read_field(d->state, field, level, dense);
}
static int dispatch_write_field(void *state, rtm_field_t field, rtm_level_t level,
                                const float *dense) {
  const cuda_dispatch_t *d = state;
  return d->impl->write_field(d->state, field, level, dense);
}
static int dispatch_read_traces(void *state, rtm_field_t field, float *traces) {
  const cuda_dispatch_t *d = state;
  return d->impl->read_traces(d->state, field, traces);
}
static int dispatch_synchronize(void *state) {
  const cuda_dispatch_t *d = state;
  return d->impl->synchronize(d->state);
}
static void dispatch_describe(void *state, char *text, size_t size) {
  const cuda_dispatch_t *d = state;
  d->impl->describe(d->state, text, size);
}
static void dispatch_destroy(void *state) {
  cuda_dispatch_t *d = state;
  if (!d) return;
  d->impl->destroy(d->state);
  free(d);
}

const rtm_backend_t rtm_backend_cuda = {
    .name = "cuda",
    .description = "CUDA z-marching kernels (iso: halo sync | ldgsts | tma; vti, tti: sync)",
    .probe = cuda_probe,
    .create = dispatch_create,
    .set_sources = dispatch_set_sources,
    .set_receivers = dispatch_set_receivers,
    .step = dispatch_step,
    .read_field = dispatch_read_field,
    .write_field = dispatch_write_field,
    .read_traces = dispatch_read_traces,
    .synchronize = dispatch_synchronize,
    .describe = dispatch_describe,
    .destroy = dispatch_destroy,
};
