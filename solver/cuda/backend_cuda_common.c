/* Backend `cuda`: the z-marching kernels of iso_cuda.cu and tti_cuda.cu behind
 * rtm_backend_t. This file holds what every equation shares (backend_cuda_impl.h); the
 * physics lives in backend_cuda_iso.c (iso) and backend_cuda_tti.c (vti, tti).
 *
 * Device state: p (and q for vti and tti) at two padded levels (memory.wavefield strategy),
 * the physics' model volumes padded like them (memory.model strategy), the three 1D damping
 * profiles, the point taps and wavelets, and the traces [count][steps + 1] of each field the
 * receivers record, which stay on the device until read_traces. A step queues its launches
 * on the backend's stream and returns; nothing crosses to the host per step. As in the cpu
 * reference (cpu_backend.c): a step writes the new level of every field, adds sample `it` of
 * every wavelet to each, records the fields asked for, and swaps the levels.
 * The stream is a blocking one, so work queued on the legacy default stream (the bench's
 * timing events) is ordered after it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_cuda_impl.h"
#include "rtm_cuda_check.h"
#include "rtm_cuda_driver.h"
#include "rtm_cuda_field_checks.h"
#include "rtm_cuda_kernel.h"
#include "rtm_cuda_trace_window.h"
#include "rtm_backend.h"
#include "rtm_mpi.h"
#include "rtm_mpi_device.h"
#include "rtm_status.h"

/* ---- helpers for the physics ---- */

size_t rtm_cuda_backend_taken_bytes(const char *strategy, size_t bytes) {
  const size_t granule = (size_t)2 << 20;
  if (strncmp(strategy, "vmm", 3) == 0) return (bytes + granule - 1) / granule * granule;
  return bytes;
}

int rtm_cuda_backend_check_fits(const rtm_cuda_backend_state_t *b, size_t need,
                                const char *grid_note, const char *volumes, const char *advice) {
  int status = RTM_OK;
  size_t free_bytes = 0, total_bytes = 0;
  /* Headroom for the context, profiles, taps and traces. */
  const size_t slack = (size_t)256 << 20;
  RTM_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (need + slack > free_bytes)
    RTM_FAIL(RTM_ERR_NOMEM,
             "grid %d x %d x %d (local nz %d%s) needs %.2f GB on device %d but %.2f GB are "
             "free: %s, plus about %.2f GB of working space; reduce grid.n or use more ranks%s",
             b->grid.n[0], b->grid.n[1], b->grid.n[2], b->grid.nz_local, grid_note, need / 1e9,
             b->device, free_bytes / 1e9, volumes, slack / 1e9, advice);
  return RTM_OK;
fail:
  return status;
}

int rtm_cuda_backend_alloc(rtm_cuda_backend_state_t *b, const char *strategy, size_t bytes,
                           const char *label, rtm_allocation_t *out) {
  return rtm_mem_alloc(strategy, bytes, label, &b->request, b->ledger, out);
}

static int upload(rtm_allocation_t *dst, const void *src, size_t bytes) {
  int status = RTM_OK;
  RTM_CUDA_TRY(cudaMemcpy(dst->ptr, src, bytes, cudaMemcpyHostToDevice));
  return RTM_OK;
fail:
  return status;
}

int rtm_cuda_backend_upload_planes(rtm_cuda_backend_state_t *b, int volumes, size_t cell_bytes,
                                   rtm_allocation_t *const *dst, rtm_cuda_fill_planes_t fill,
                                   void *context) {
  /* two sets of staging blocks of 8 planes (the page-locked bytes of one set of 16 before):
   * one filled while the other's copies run */
  enum { BLOCK_PLANES = 8, MAX_VOLUMES = 8, SETS = 2 };
  int status = RTM_OK;
  const rtm_grid_t *g = &b->grid;
  const size_t plane_bytes = g->stride_z * cell_bytes, block_bytes = BLOCK_PLANES * plane_bytes;
  unsigned char *blocks[SETS][MAX_VOLUMES] = {{NULL}};
  int pinned[SETS][MAX_VOLUMES] = {{0}};
  cudaEvent_t copied[SETS] = {NULL};
  if (volumes < 1 || volumes > MAX_VOLUMES)
    RTM_FAIL(RTM_ERR_INTERNAL, "backend cuda: %d volumes to upload (1 to %d)", volumes,
             MAX_VOLUMES);
  for (int set = 0; set < SETS; ++set) {
    RTM_CUDA_TRY(cudaEventCreateWithFlags(&copied[set], cudaEventDisableTiming));
    for (int v = 0; v < volumes; ++v) {
      /* zero-filled: the x/y halo of every plane stays zero, the fills write the interior */
      blocks[set][v] = calloc(1, block_bytes);
      if (!blocks[set][v])
        RTM_FAIL(RTM_ERR_NOMEM, "out of host memory staging the model (%zu bytes)", block_bytes);
      pinned[set][v] = rtm_mem_host_pin(blocks[set][v], block_bytes, "model upload") == RTM_OK;
    }
  }
  for (long z = 0, k = 0; z < g->nz_local; z += BLOCK_PLANES, ++k) {
    const long count = g->nz_local - z < BLOCK_PLANES ? g->nz_local - z : BLOCK_PLANES;
    const int set = (int)(k % SETS);
    if (k >= SETS) RTM_CUDA_TRY(cudaEventSynchronize(copied[set])); /* its last copies out */
    RTM_TRY(fill(context, z, count, blocks[set]));
    for (int v = 0; v < volumes; ++v)
      RTM_CUDA_TRY(cudaMemcpyAsync(
          (unsigned char *)dst[v]->ptr + (size_t)(z + RTM_RADIUS) * plane_bytes, blocks[set][v],
          (size_t)count * plane_bytes, cudaMemcpyHostToDevice, b->stream));
    RTM_CUDA_TRY(cudaEventRecord(copied[set], b->stream));
  }
  RTM_CUDA_TRY(cudaStreamSynchronize(b->stream));
fail:
  if (status != RTM_OK && b->stream) cudaStreamSynchronize(b->stream);
  for (int set = 0; set < SETS; ++set) {
    for (int v = 0; v < volumes; ++v) {
      if (pinned[set][v]) rtm_mem_host_unpin(blocks[set][v]);
      free(blocks[set][v]);
    }
    if (copied[set]) cudaEventDestroy(copied[set]);
  }
  return status;
}

void rtm_cuda_backend_release(rtm_allocation_t *allocation) {
  rtm_mem_free(allocation);
  memset(allocation, 0, sizeof *allocation);
}

int rtm_cuda_backend_damping(rtm_cuda_backend_state_t *b, const rtm_boundary_t *boundary) {
  int status = RTM_OK;
  static const char *const label[3] = {"eta_dt x", "eta_dt y", "eta_dt z"};
  for (int a = 0; a < 3; ++a) {
    const size_t bytes = (size_t)b->grid.n[a] * sizeof(float);
    RTM_TRY(rtm_cuda_backend_alloc(b, "device", bytes, label[a], &b->eta_dt[a]));
    if (boundary && boundary->eta_dt[a]) /* else no layer: zeros */
      RTM_TRY(upload(&b->eta_dt[a], boundary->eta_dt[a], bytes));
  }
  return RTM_OK;
fail:
  return status;
}

int rtm_cuda_backend_level_maps(rtm_cuda_backend_state_t *b) {
  int status = RTM_OK;
  for (int f = 0; f < b->physics->field_count; ++f)
    for (int l = 0; l < RTM_CUDA_LEVELS; ++l) {
      const float *field = b->level[f][l].ptr;
      RTM_TRY(rtm_iso_cuda_tensor_map(&b->grid, field, &b->kernel, &b->map[f][l]));
      RTM_TRY(rtm_iso_cuda_cell_map(&b->grid, field, &b->kernel, &b->cell_map[f][l]));
    }
  return RTM_OK;
fail:
  return status;
}

int rtm_cuda_backend_prefetch(rtm_cuda_backend_state_t *b, const rtm_allocation_t *volumes,
                              int count) {
  int status = RTM_OK;
  for (int f = 0; f < b->physics->field_count; ++f)
    for (int l = 0; l < RTM_CUDA_LEVELS; ++l)
      RTM_TRY(rtm_mem_prefetch(&b->level[f][l], b->stream));
  for (int k = 0; k < count; ++k)
    RTM_TRY(rtm_mem_prefetch(&volumes[k], b->stream));
  return RTM_OK;
fail:
  return status;
}

/* ---- create ---- */

static int cuda_probe(char *why, size_t why_size) {
  int count = 0;
  return rtm_cuda_device_count(&count, why, why_size);
}

/* backend.device, and under MPI the ranks of a node take its GPUs in turn from it
 * (rtm_backend_device). */
int rtm_cuda_rank_device(int configured, const rtm_mpi_t *mpi, int *device) {
  int status = RTM_OK;
  char why[256] = "";
  int count = 0;
  *device = -1;
  if (rtm_cuda_device_count(&count, why, sizeof why) != RTM_OK)
    RTM_FAIL(RTM_ERR_UNSUPPORTED, "backend.name = cuda: %s", why);
  if (configured < 0 || configured >= count)
    RTM_FAIL(RTM_ERR_CONFIG, "backend.device = %d: this machine has %d CUDA device%s", configured,
             count, count == 1 ? "" : "s");
  /* every rank of the run (a shot group of one rank included) takes a GPU in turn */
  *device =
      rtm_mpi_world_size(mpi) > 1 ? (configured + rtm_mpi_local_rank(mpi)) % count : configured;
fail:
  return status;
}

/* Checks the description and allocates the physics' state, the common part filled in. */
static int new_state(const rtm_backend_desc_t *desc, rtm_cuda_backend_state_t **state) {
  int status = RTM_OK;
  const rtm_config_t *cfg = desc->config;
  rtm_cuda_backend_state_t *b = NULL;
  *state = NULL;
  if (!cfg || !desc->grid || !desc->model || !desc->model->vp || !(desc->dt_s > 0.0) ||
      desc->steps < 0)
    RTM_FAIL(RTM_ERR_INTERNAL, "backend cuda: incomplete description (config, grid, model.vp, "
                               "dt > 0, steps >= 0 are required)");
  const rtm_cuda_physics_t *physics =
      cfg->physics.equation == RTM_EQUATION_ISO ? &rtm_cuda_physics_iso : &rtm_cuda_physics_tti;
  const rtm_cuda_backend_state_t *medium_of = desc->medium_of;
  if (medium_of && medium_of->physics != physics)
    RTM_FAIL(RTM_ERR_INTERNAL, "backend cuda: a medium shared between two equations");
  b = calloc(1, physics->state_bytes);
  if (!b) RTM_FAIL(RTM_ERR_NOMEM, "out of host memory for the cuda backend");
  b->physics = physics;
  b->grid = *desc->grid;
  b->steps = desc->steps;
  b->ledger = desc->ledger;
  b->request.require_compression = cfg->memory.require_compression;
  b->medium_of = desc->medium_of;
  *state = b;
  return RTM_OK;
fail:
  return status;
}

int rtm_cuda_kernel_key(const rtm_config_t *cfg, int device, rtm_kernel_key_t *key) {
  int status = RTM_OK;
  struct cudaDeviceProp prop;
  memset(key, 0, sizeof *key);
  RTM_CUDA_TRY(cudaGetDeviceProperties(&prop, device));
  RTM_CUDA_TRY(cudaDriverGetVersion(&key->driver));
  snprintf(key->gpu, sizeof key->gpu, "%s", prop.name);
  key->cc = 10 * prop.major + prop.minor;
  key->equation = cfg->physics.equation;
  key->precision = rtm_config_model_precision(cfg);
  key->size_class = rtm_kernel_size_class(cfg->grid.n);
fail:
  return status;
}

int rtm_cuda_kernel_resolve(const rtm_config_t *cfg, int device, rtm_kernel_shape_t *kernel,
                            char *why, size_t size) {
  int status = RTM_OK;
  rtm_kernel_key_t key;
  char cache[4096];
  RTM_TRY(rtm_cuda_kernel_key(cfg, device, &key));
  const int have_cache = rtm_kernel_cache_path(cache, sizeof cache);
  rtm_kernel_choose(cfg, &key, have_cache ? cache : NULL, kernel, why, size);
fail:
  return status;
}

/* Probes, checks backend.device, makes it current and reads the kernel.* shape. */
static int open_device(rtm_cuda_backend_state_t *b, const rtm_config_t *cfg) {
  int status = RTM_OK;
  /* every allocation, stream and event of the backend on this device (a rank's own GPU) */
  RTM_TRY(rtm_cuda_rank_device(cfg->backend.device, b->grid.mpi, &b->device));
  b->request.device = b->device;
  RTM_CUDA_TRY(cudaSetDevice(b->device));
  rtm_kernel_shape_t kernel;
  RTM_TRY(rtm_cuda_kernel_resolve(cfg, b->device, &kernel, b->kernel_why, sizeof b->kernel_why));
  if (strcmp(b->kernel_why, "explicit") != 0) rtm_log_info("kernel.* auto: %s", b->kernel_why);
  RTM_TRY(rtm_iso_halo_parse(kernel.halo, &b->kernel.halo));
  b->kernel.stages = kernel.stages;
  b->kernel.zblock = kernel.zblock;
  b->kernel.block[0] = kernel.block[0];
  b->kernel.block[1] = kernel.block[1];
  return RTM_OK;
fail:
  return status;
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

static int alloc_levels(rtm_cuda_backend_state_t *b) {
  int status = RTM_OK;
  static const char *const label[RTM_CUDA_FIELDS][RTM_CUDA_LEVELS] = {
      {"p (level a)", "p (level b)"}, {"q (level a)", "q (level b)"}};
  const size_t field_bytes = b->grid.padded_cells * sizeof(float);
  for (int f = 0; f < b->physics->field_count; ++f)
    for (int l = 0; l < RTM_CUDA_LEVELS; ++l)
      RTM_TRY(rtm_cuda_backend_alloc(b, b->wavefield_strategy, field_bytes, label[f][l],
                                     &b->level[f][l]));
  return RTM_OK;
fail:
  return status;
}

static void cuda_destroy(void *state);

static int cuda_create(const rtm_backend_desc_t *desc, void **state_out) {
  int status = RTM_OK;
  const rtm_config_t *cfg = desc->config;
  rtm_cuda_backend_state_t *b = NULL;
  *state_out = NULL;
  RTM_TRY(new_state(desc, &b));
  RTM_TRY(open_device(b, cfg));
  RTM_TRY(b->physics->prepare(b, cfg));
  RTM_TRY(resolve_strategy(cfg, "wavefield", b->wavefield_strategy, sizeof b->wavefield_strategy));
  RTM_TRY(resolve_strategy(cfg, "model", b->model_strategy, sizeof b->model_strategy));
  RTM_TRY(b->physics->check_fits(b));
  RTM_CUDA_TRY(cudaStreamCreate(&b->stream));
  RTM_TRY(alloc_levels(b));
  RTM_TRY(b->physics->fill(b, desc));
  RTM_CUDA_TRY(cudaStreamSynchronize(b->stream));
  *state_out = b;
  return RTM_OK;
fail:
  cuda_destroy(b);
  return status;
}

static void release_band(rtm_cuda_backend_state_t *b) {
  rtm_cuda_backend_release(&b->band_coef);
  rtm_cuda_backend_release(&b->band_offset);
  rtm_cuda_backend_release(&b->band_width);
  rtm_cuda_backend_release(&b->band_first);
  b->band = (rtm_cuda_band_t){0};
}

static void cuda_destroy(void *state) {
  rtm_cuda_backend_state_t *b = state;
  if (!b) return;
  if (b->stream) cudaStreamSynchronize(b->stream);
  /* copies out of the traces and levels still queued (a run that failed mid-way) first */
  if (b->copies) cudaStreamSynchronize(b->copies);
  if (b->edges) cudaStreamSynchronize(b->edges);
  rtm_cuda_backend_release(&b->trace_window);
  release_band(b);
  for (int f = RTM_CUDA_FIELDS - 1; f >= 0; --f)
    rtm_cuda_backend_release(&b->traces[f]);
  rtm_cuda_backend_release(&b->receiver_base);
  rtm_cuda_backend_release(&b->receiver_axis);
  rtm_cuda_backend_release(&b->receiver_weight);
  rtm_cuda_backend_release(&b->receiver_index);
  rtm_cuda_backend_release(&b->wavelets);
  rtm_cuda_backend_release(&b->source_coeff);
  rtm_cuda_backend_release(&b->source_base);
  rtm_cuda_backend_release(&b->source_index);
  for (int a = 2; a >= 0; --a)
    rtm_cuda_backend_release(&b->eta_dt[a]);
  b->physics->release(b);
  for (int f = RTM_CUDA_FIELDS - 1; f >= 0; --f)
    for (int l = RTM_CUDA_LEVELS - 1; l >= 0; --l)
      rtm_cuda_backend_release(&b->level[f][l]);
  if (b->copies) {
    cudaStreamSynchronize(b->copies);
    cudaStreamDestroy(b->copies);
  }
  if (b->edges) {
    cudaStreamSynchronize(b->edges);
    cudaStreamDestroy(b->edges);
  }
  if (b->steps_done) cudaEventDestroy(b->steps_done);
  for (int s = 0; s < RTM_TRACE_SLOTS; ++s)
    if (b->traces_copied[s]) cudaEventDestroy(b->traces_copied[s]);
  if (b->copies_done) cudaEventDestroy(b->copies_done);
  if (b->edges_start) cudaEventDestroy(b->edges_start);
  if (b->edges_done) cudaEventDestroy(b->edges_done);
  for (int p = 0; p < RTM_PHASE_COUNT; ++p)
    for (int i = 0; i < RTM_CUDA_PHASE_RING; ++i)
      if (b->phase[p].start[i]) {
        cudaEventDestroy(b->phase[p].start[i]);
        cudaEventDestroy(b->phase[p].end[i]);
      }
  if (b->stream) cudaStreamDestroy(b->stream);
  free(b);
}

/* ---- sources and receivers ---- */

/* A device buffer of at least `bytes`: the one held when it is large enough (the next shot
 * with no more points), so that a run of many shots allocates, and enters in the ledger,
 * once rather than once a shot. */
static int device_buffer(rtm_cuda_backend_state_t *b, size_t bytes, const char *label,
                         rtm_allocation_t *buffer) {
  int status = RTM_OK;
  if (buffer->ptr && buffer->bytes >= bytes) return RTM_OK;
  rtm_cuda_backend_release(buffer);
  RTM_TRY(rtm_cuda_backend_alloc(b, "device", bytes, label, buffer));
fail:
  return status;
}

static int cuda_set_sources(void *state, const rtm_points_t *points, const float *wavelets,
                            int samples) {
  int status = RTM_OK;
  rtm_cuda_backend_state_t *b = state;
  b->source_count = 0;
  b->source_samples = 0;
  if (!points || points->count == 0) return RTM_OK;
  const size_t taps = (size_t)points->count * (size_t)points->taps;
  const size_t values = (size_t)points->count * (size_t)samples;
  /* Sources are added to the new level after the damped update (the cpu reference's
   * order), so the tap weights go in as they are; the taps' indices from each point's first
   * (8 bytes a point, not 8 a tap: a migration injects every receiver) when the points have
   * it */
  b->source_width = points->base_index && points->width > 0 &&
                            points->taps == points->width * points->width * points->width
                        ? points->width
                        : 0;
  if (b->source_width) {
    RTM_TRY(device_buffer(b, (size_t)points->count * sizeof(long long), "source base taps",
                          &b->source_base));
    RTM_TRY(upload(&b->source_base, points->base_index, (size_t)points->count * sizeof(long long)));
  } else {
    RTM_TRY(device_buffer(b, taps * sizeof(size_t), "source taps", &b->source_index));
    RTM_TRY(upload(&b->source_index, points->tap_index, taps * sizeof(size_t)));
  }
  RTM_TRY(device_buffer(b, taps * sizeof(float), "source weights", &b->source_coeff));
  RTM_TRY(device_buffer(b, values * sizeof(float), "wavelets", &b->wavelets));
  RTM_TRY(upload(&b->source_coeff, points->tap_weight, taps * sizeof(float)));
  RTM_TRY(upload(&b->wavelets, wavelets, values * sizeof(float)));
  b->source_count = points->count;
  b->source_taps = points->taps;
  b->source_samples = samples;
fail:
  return status;
}

static int cuda_set_receivers(void *state, const rtm_points_t *points, unsigned fields) {
  int status = RTM_OK;
  rtm_cuda_backend_state_t *b = state;
  b->receiver_count = 0;
  b->trace_fields = 0;
  RTM_TRY(b->physics->check_recorded(fields));
  b->trace_fields = fields;
  if (!points || points->count == 0 || fields == 0) return RTM_OK;
  const size_t taps = (size_t)points->count * (size_t)points->taps;
  b->trace_length = b->steps + 1;
  /* the tensor-product form when the points have it (a sinc receiver: 200 bytes, not 6 KB) */
  b->receiver_width = points->axis_weight && points->base_index ? points->width : 0;
  const size_t axis_doubles = (size_t)points->count * 3 * (size_t)b->receiver_width;
  if (b->receiver_width) {
    RTM_TRY(device_buffer(b, axis_doubles * sizeof(double), "receiver axis weights",
                          &b->receiver_axis));
    RTM_TRY(device_buffer(b, (size_t)points->count * sizeof(long long), "receiver base taps",
                          &b->receiver_base));
  } else {
    RTM_TRY(device_buffer(b, taps * sizeof(size_t), "receiver taps", &b->receiver_index));
    RTM_TRY(device_buffer(b, taps * sizeof(float), "receiver weights", &b->receiver_weight));
  }
  for (int f = 0; f < RTM_CUDA_FIELDS; ++f) {
    if (!(fields & RTM_FIELD_BIT(f))) continue;
    const size_t bytes = (size_t)points->count * b->trace_length * sizeof(float);
    RTM_TRY(device_buffer(b, bytes, b->physics->trace_label[f], &b->traces[f]));
    /* a kept buffer holds the last shot's samples; column 0 is never recorded */
    RTM_CUDA_TRY(cudaMemsetAsync(b->traces[f].ptr, 0, bytes, b->stream));
  }
  if (b->receiver_width) {
    RTM_TRY(upload(&b->receiver_axis, points->axis_weight, axis_doubles * sizeof(double)));
    RTM_TRY(
        upload(&b->receiver_base, points->base_index, (size_t)points->count * sizeof(long long)));
  } else {
    RTM_TRY(upload(&b->receiver_index, points->tap_index, taps * sizeof(size_t)));
    RTM_TRY(upload(&b->receiver_weight, points->tap_weight, taps * sizeof(float)));
  }
  b->receiver_count = points->count;
  b->receiver_taps = points->taps;
  b->receiver_taps_per_plane = points->taps_per_plane;
  return RTM_OK;
fail:
  return status;
}

/* ---- step ---- */

/* Sample `it` of every source into the new level (the one opposite `centre`) of every field,
 * at the taps in local planes [z_begin, z_end), on `stream`. */
static int inject_planes(rtm_cuda_backend_state_t *b, int centre, int it, int z_begin, int z_end,
                         cudaStream_t stream) {
  int status = RTM_OK;
  const size_t begin = (size_t)(z_begin + RTM_RADIUS) * b->grid.stride_z;
  const size_t end = (size_t)(z_end + RTM_RADIUS) * b->grid.stride_z;
  for (int f = 0; f < b->physics->field_count; ++f)
    if (b->source_width)
      RTM_TRY(rtm_iso_cuda_inject_based(
          b->level[f][1 - centre].ptr, b->source_base.ptr, b->source_coeff.ptr, b->wavelets.ptr,
          b->source_count, b->source_width, (long long)b->grid.stride_y,
          (long long)b->grid.stride_z, b->source_samples, it, begin, end, stream));
    else
      RTM_TRY(rtm_iso_cuda_inject(b->level[f][1 - centre].ptr, b->source_index.ptr,
                                  b->source_coeff.ptr, b->wavelets.ptr, b->source_count,
                                  b->source_taps, b->source_samples, it, begin, end, stream));
  if (!b->level_copy) return RTM_OK;
  /* the level copy took the stencil's cells: the injected ones again, as they are now */
  const rtm_iso_level_copy_t copy = {b->level_copy,          (long long)b->grid.origin_index,
                                     (long long)b->grid.stride_y, (long long)b->grid.stride_z,
                                     b->grid.n[0],           b->grid.n[1]};
  const float *p_new = b->level[RTM_FIELD_P][1 - centre].ptr;
  if (b->source_width)
    RTM_TRY(rtm_iso_cuda_copy_taps_based(p_new, b->source_base.ptr, b->source_coeff.ptr,
                                         b->source_count, b->source_width,
                                         (long long)b->grid.stride_y, (long long)b->grid.stride_z,
                                         begin, end, &copy, stream));
  else
    RTM_TRY(rtm_iso_cuda_copy_taps(p_new, b->source_index.ptr, b->source_coeff.ptr,
                                   b->source_count, b->source_taps, begin, end, &copy, stream));
fail:
  return status;
}

/* copy_next_level: the p level the next steps write also goes to `dense` in their kernels
 * (the stencil's store, then the injected cells), where the physics' kernel can. */
static int cuda_copy_next_level(void *state, float *dense) {
  rtm_cuda_backend_state_t *b = state;
  if (!b->physics->copies_level) return RTM_ERR_UNSUPPORTED;
  b->level_copy = dense;
  return RTM_OK;
}

/* image_next_step: the request kept for the next step's launches (every region of it), which
 * pass it to the kernel, and forgotten when that step ends. */
static int cuda_image_next_step(void *state, const rtm_step_image_t *request) {
  rtm_cuda_backend_state_t *b = state;
  if (!b->physics->images_in_step || !b->physics->images_in_step(b) || b->level_copy)
    return RTM_ERR_UNSUPPORTED;
  b->step_image = *request;
  b->step_image_set = 1;
  return RTM_OK;
}

/* ---- phase timing: an event pair around each split step region and each plane copy ---- */

/* The pair in slot i of `phase` read into its seconds (waits for its end). */
static int phase_read(rtm_cuda_backend_state_t *b, rtm_phase_t phase, int i) {
  int status = RTM_OK;
  float ms = 0.0f;
  if (!b->phase[phase].used[i]) return RTM_OK;
  RTM_CUDA_TRY(cudaEventSynchronize(b->phase[phase].end[i]));
  RTM_CUDA_TRY(cudaEventElapsedTime(&ms, b->phase[phase].start[i], b->phase[phase].end[i]));
  b->phase[phase].seconds += 1e-3 * ms;
  b->phase[phase].used[i] = 0;
fail:
  return status;
}

/* The start of `phase` on `stream`: the slot's last pair (a ring ago, long done) read first. */
static int phase_start(rtm_cuda_backend_state_t *b, rtm_phase_t phase, cudaStream_t stream) {
  int status = RTM_OK;
  const int i = b->phase[phase].next;
  if (!b->phase[phase].start[i]) {
    RTM_CUDA_TRY(cudaEventCreate(&b->phase[phase].start[i]));
    RTM_CUDA_TRY(cudaEventCreate(&b->phase[phase].end[i]));
  }
  RTM_TRY(phase_read(b, phase, i));
  RTM_CUDA_TRY(cudaEventRecord(b->phase[phase].start[i], stream));
fail:
  return status;
}

static int phase_stop(rtm_cuda_backend_state_t *b, rtm_phase_t phase, cudaStream_t stream) {
  int status = RTM_OK;
  const int i = b->phase[phase].next;
  RTM_CUDA_TRY(cudaEventRecord(b->phase[phase].end[i], stream));
  b->phase[phase].used[i] = 1;
  b->phase[phase].next = (i + 1) % RTM_CUDA_PHASE_RING;
fail:
  return status;
}

static int cuda_phase_seconds(void *state, double seconds[RTM_PHASE_COUNT]) {
  int status = RTM_OK;
  rtm_cuda_backend_state_t *b = state;
  for (int p = 0; p < RTM_PHASE_COUNT; ++p) {
    for (int i = 0; i < RTM_CUDA_PHASE_RING; ++i)
      RTM_TRY(phase_read(b, (rtm_phase_t)p, i));
    seconds[p] += b->phase[p].seconds;
    b->phase[p].seconds = 0.0;
  }
fail:
  return status;
}

static int ensure_copy_stream(rtm_cuda_backend_state_t *b);

/* The step stream's later work after what the edge stream holds: the edge planes and an
 * exchange device to device (cuda_exchange_planes) that a whole step left queued there. */
static int join_edges(rtm_cuda_backend_state_t *b) {
  int status = RTM_OK;
  if (b->edges) RTM_CUDA_TRY(cudaStreamWaitEvent(b->stream, b->edges_done, 0));
fail:
  return status;
}

static int cuda_step(void *state, int it, rtm_region_t region, rtm_direction_t direction) {
  int status = RTM_OK;
  rtm_cuda_backend_state_t *b = state;
  const int nz = b->grid.nz_local;
  const int backward = direction == RTM_BACKWARD;
  /* Forward: centre f[it] = current, the other level f[it-1] becomes f[it+1]. Backward:
   * centre f[it] = previous, the current level f[it+1] becomes f[it-1]. Swapping the
   * levels afterwards is right for both (the cpu reference's convention). */
  const int centre = backward ? 1 - b->current : b->current;
  if (direction != RTM_FORWARD && !backward)
    RTM_FAIL(RTM_ERR_INTERNAL, "backend cuda: step direction %d is neither forward nor backward",
             (int)direction);
  /* Edge planes: the R next to each z neighbour (all of them when the slab is thinner);
   * the interior is what lies between (rtm_slab_edges) */
  int low_end = 0, high_begin = 0;
  rtm_slab_edges(&b->grid, &low_end, &high_begin);
  b->last_split = region != RTM_REGION_ALL;
  if (region == RTM_REGION_ALL) {
    RTM_TRY(join_edges(b));
    RTM_TRY(b->physics->launch(b, centre, backward, 0, nz, b->stream));
    RTM_TRY(inject_planes(b, centre, it, 0, nz, b->stream));
  } else if (region == RTM_REGION_EDGE_PLANES) {
    /* on the edge stream after what the step stream holds, beside the interior queued next;
     * the taps in the edge planes get sample it now, before the planes leave (MPI) */
    RTM_TRY(ensure_copy_stream(b));
    RTM_CUDA_TRY(cudaEventRecord(b->edges_start, b->stream));
    RTM_CUDA_TRY(cudaStreamWaitEvent(b->edges, b->edges_start, 0));
    RTM_TRY(phase_start(b, RTM_PHASE_EDGE, b->edges));
    if (low_end > 0) RTM_TRY(b->physics->launch(b, centre, backward, 0, low_end, b->edges));
    if (high_begin < nz) RTM_TRY(b->physics->launch(b, centre, backward, high_begin, nz, b->edges));
    if (low_end > 0) RTM_TRY(inject_planes(b, centre, it, 0, low_end, b->edges));
    if (high_begin < nz) RTM_TRY(inject_planes(b, centre, it, high_begin, nz, b->edges));
    RTM_TRY(phase_stop(b, RTM_PHASE_EDGE, b->edges));
    RTM_CUDA_TRY(cudaEventRecord(b->edges_done, b->edges));
    return RTM_OK;
  } else if (region == RTM_REGION_INTERIOR) {
    RTM_TRY(phase_start(b, RTM_PHASE_INTERIOR, b->stream));
    if (high_begin > low_end) {
      RTM_TRY(b->physics->launch(b, centre, backward, low_end, high_begin, b->stream));
      RTM_TRY(inject_planes(b, centre, it, low_end, high_begin, b->stream));
    }
    RTM_TRY(phase_stop(b, RTM_PHASE_INTERIOR, b->stream));
    /* the receivers read the whole new level, and what follows on the step stream too */
    if (b->edges) RTM_CUDA_TRY(cudaStreamWaitEvent(b->stream, b->edges_done, 0));
  } else {
    RTM_FAIL(RTM_ERR_INTERNAL, "backend cuda: unknown step region %d", (int)region);
  }
  /* Receivers record the fields asked for, column it + 1 (it - 1 backward), from the new
   * level whole (a split step's INTERIOR comes after its EDGE_PLANES). */
  for (int f = 0; f < b->physics->field_count; ++f) {
    if (!(b->trace_fields & RTM_FIELD_BIT(f))) continue;
    const int sample = backward ? it - 1 : it + 1;
    if (b->receiver_width)
      RTM_TRY(rtm_iso_cuda_record_separable(
          b->level[f][1 - centre].ptr, b->receiver_base.ptr, b->receiver_axis.ptr,
          b->receiver_width, (long long)b->grid.stride_y, (long long)b->grid.stride_z,
          b->traces[f].ptr, b->receiver_count, b->trace_length, sample, b->stream));
    else
      RTM_TRY(rtm_iso_cuda_record(b->level[f][1 - centre].ptr, b->receiver_index.ptr,
                                  b->receiver_weight.ptr, b->traces[f].ptr, b->receiver_count,
                                  b->receiver_taps, b->receiver_taps_per_plane, b->trace_length,
                                  sample, b->stream));
  }
  b->current = 1 - b->current;
  b->step_image_set = 0; /* image_next_step: this step's alone */
  return RTM_OK;
fail:
  b->step_image_set = 0;
  return status;
}

/* ---- fields and traces to and from the host ---- */

/* The copy of planes [first, first + count) of a level (first = -R: the ghosts below), their
 * nx x ny interior cells, to a dense host array [count][ny][nx] (kind cudaMemcpyDeviceToHost)
 * or from one (cudaMemcpyHostToDevice): one 3D copy. */
static int planes_copy(rtm_cuda_backend_state_t *b, rtm_field_t field, rtm_level_t level, int first,
                       int count, float *host, enum cudaMemcpyKind kind,
                       struct cudaMemcpy3DParms *copy) {
  int status = RTM_OK;
  const rtm_grid_t *g = &b->grid;
  RTM_TRY(b->physics->check_field(field, level));
  if (first < -RTM_RADIUS || count < 0 || first + count > g->nz_local + RTM_RADIUS)
    RTM_FAIL(RTM_ERR_INTERNAL, "backend cuda: planes %d .. %d are outside the slab's %d + 2 x %d",
             first, first + count - 1, g->nz_local, RTM_RADIUS);
  float *padded = b->level[field][level == RTM_LEVEL_CURRENT ? b->current : 1 - b->current].ptr;
  const size_t row = (size_t)g->n[0] * sizeof(float);
  const struct cudaPitchedPtr device = {.ptr = padded + (size_t)(first + RTM_RADIUS) * g->stride_z,
                                        .pitch = g->stride_y * sizeof(float),
                                        .xsize = row,
                                        .ysize = (size_t)g->n[1] + 2 * RTM_RADIUS};
  const struct cudaPitchedPtr dense = {
      .ptr = host, .pitch = row, .xsize = row, .ysize = (size_t)g->n[1]};
  const struct cudaPos interior = {.x = RTM_RADIUS * sizeof(float), .y = RTM_RADIUS, .z = 0};
  memset(copy, 0, sizeof *copy);
  copy->extent =
      (struct cudaExtent){.width = row, .height = (size_t)g->n[1], .depth = (size_t)count};
  copy->kind = kind;
  if (kind == cudaMemcpyDeviceToHost) {
    copy->srcPtr = device;
    copy->srcPos = interior;
    copy->dstPtr = dense;
  } else {
    copy->srcPtr = dense;
    copy->dstPtr = device;
    copy->dstPos = interior;
  }
fail:
  return status;
}

static int ensure_copy_stream(rtm_cuda_backend_state_t *b) {
  int status = RTM_OK;
  int least = 0, greatest = 0;
  if (b->copies) return RTM_OK; /* created last: everything before it exists */
  /* each created once, so that a failure part way leaks nothing on the next call */
  if (!b->steps_done)
    RTM_CUDA_TRY(cudaEventCreateWithFlags(&b->steps_done, cudaEventDisableTiming));
  if (!b->copies_done)
    RTM_CUDA_TRY(cudaEventCreateWithFlags(&b->copies_done, cudaEventDisableTiming));
  if (!b->edges_start)
    RTM_CUDA_TRY(cudaEventCreateWithFlags(&b->edges_start, cudaEventDisableTiming));
  if (!b->edges_done)
    RTM_CUDA_TRY(cudaEventCreateWithFlags(&b->edges_done, cudaEventDisableTiming));
  RTM_CUDA_TRY(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  if (!b->edges)
    RTM_CUDA_TRY(cudaStreamCreateWithPriority(&b->edges, cudaStreamNonBlocking, greatest));
  RTM_CUDA_TRY(cudaStreamCreateWithFlags(&b->copies, cudaStreamNonBlocking));
fail:
  return status;
}

/* On the copy stream: out of the level after the steps queued so far (an event on the
 * step stream), into it before the steps queued later (an event the step stream waits
 * for). */
static int cuda_copy_planes(void *state, rtm_field_t field, rtm_level_t level, int first, int count,
                            float *out, const float *in) {
  int status = RTM_OK;
  rtm_cuda_backend_state_t *b = state;
  struct cudaMemcpy3DParms copy;
  RTM_TRY(planes_copy(b, field, level, first, count, out ? out : (float *)in,
                      out ? cudaMemcpyDeviceToHost : cudaMemcpyHostToDevice, &copy));
  RTM_TRY(ensure_copy_stream(b));
  if (out) { /* after the step stream's work and a split step's edge planes */
    RTM_CUDA_TRY(cudaEventRecord(b->steps_done, b->stream));
    RTM_CUDA_TRY(cudaStreamWaitEvent(b->copies, b->steps_done, 0));
    RTM_CUDA_TRY(cudaStreamWaitEvent(b->copies, b->edges_done, 0));
    RTM_TRY(phase_start(b, RTM_PHASE_COPY_OUT, b->copies));
    RTM_CUDA_TRY(cudaMemcpy3DAsync(&copy, b->copies));
    RTM_TRY(phase_stop(b, RTM_PHASE_COPY_OUT, b->copies));
  } else {
    RTM_TRY(phase_start(b, RTM_PHASE_COPY_IN, b->copies));
    RTM_CUDA_TRY(cudaMemcpy3DAsync(&copy, b->copies));
    RTM_TRY(phase_stop(b, RTM_PHASE_COPY_IN, b->copies));
    RTM_CUDA_TRY(cudaEventRecord(b->copies_done, b->copies));
    RTM_CUDA_TRY(cudaStreamWaitEvent(b->stream, b->copies_done, 0));
  }
fail:
  return status;
}

/* Queued (nccl): on the edge stream, after the step stream's work so far (a whole step when
 * the exchange blocks) and the edge planes queued there; edges_done, recorded after it, is
 * what the interior's end and the next whole step wait for. Host-driven (cuda-aware): the
 * host waits for the planes alone (a split step's edge planes, else the whole step), the
 * interior queued behind them running on. */
static int cuda_exchange_planes(void *state, struct rtm_mpi_device_link *link, rtm_level_t level) {
  int status = RTM_OK;
  rtm_cuda_backend_state_t *b = state;
  float *fields[RTM_CUDA_FIELDS] = {NULL};
  const int index = level == RTM_LEVEL_CURRENT ? b->current : 1 - b->current;
  const int below = rtm_slab_has_below(&b->grid), above = rtm_slab_has_above(&b->grid);
  RTM_TRY(ensure_copy_stream(b));
  for (int f = 0; f < b->physics->field_count; ++f)
    fields[f] = b->level[f][index].ptr;
  if (!rtm_mpi_device_queued(link)) {
    if (b->last_split)
      RTM_CUDA_TRY(cudaEventSynchronize(b->edges_done));
    else
      RTM_CUDA_TRY(cudaStreamSynchronize(b->stream));
    return rtm_mpi_device_exchange(link, fields, b->physics->field_count, b->grid.stride_z,
                                   b->grid.nz_local, below, above, NULL);
  }
  RTM_CUDA_TRY(cudaEventRecord(b->steps_done, b->stream));
  RTM_CUDA_TRY(cudaStreamWaitEvent(b->edges, b->steps_done, 0));
  RTM_TRY(phase_start(b, RTM_PHASE_COPY_OUT, b->edges));
  RTM_TRY(rtm_mpi_device_exchange(link, fields, b->physics->field_count, b->grid.stride_z,
                                  b->grid.nz_local, below, above, b->edges));
  RTM_TRY(phase_stop(b, RTM_PHASE_COPY_OUT, b->edges));
  RTM_CUDA_TRY(cudaEventRecord(b->edges_done, b->edges));
  /* after a whole step (the exchange blocks): what the caller queues next, on the step
   * stream or the legacy one (a checkpoint's copies of the padded level), comes after it */
  if (!b->last_split) RTM_TRY(join_edges(b));
fail:
  return status;
}

static int cuda_copy_traces(void *state, rtm_field_t field, int first, int count, float *host,
                            int slot) {
  int status = RTM_OK;
  rtm_cuda_backend_state_t *b = state;
  if ((field != RTM_FIELD_P && field != RTM_FIELD_Q) || !(b->trace_fields & RTM_FIELD_BIT(field)) ||
      first < 0 || count < 1 || first + count > b->trace_length || slot < 0 ||
      slot >= RTM_TRACE_SLOTS)
    RTM_FAIL(RTM_ERR_INTERNAL, "backend cuda: samples [%d, %d) of %s's traces (length %d), slot %d",
             first, first + count, rtm_field_name(field), b->trace_length, slot);
  if (b->receiver_count == 0) return RTM_OK;
  RTM_TRY(ensure_copy_stream(b));
  /* the window's columns of [receivers][trace_length] packed into [receivers][count] on the
   * device, then one dense copy (a 2D copy of rows of count floats ran a few GB/s); the
   * buffer is made before the first step (host NULL) for the largest window, and reused in
   * stream order */
  const size_t bytes = (size_t)b->receiver_count * (size_t)count * sizeof(float);
  if (b->trace_window.bytes < bytes) {
    RTM_CUDA_TRY(cudaStreamSynchronize(b->copies)); /* the last window's copy out of it */
    RTM_TRY(device_buffer(b, bytes, "streamed trace window", &b->trace_window));
  }
  if (!host) return RTM_OK;
  if (!b->traces_copied[slot])
    RTM_CUDA_TRY(cudaEventCreateWithFlags(&b->traces_copied[slot], cudaEventDisableTiming));
  RTM_CUDA_TRY(cudaEventRecord(b->steps_done, b->stream));
  RTM_CUDA_TRY(cudaStreamWaitEvent(b->copies, b->steps_done, 0));
  if (b->band.groups > 0)
    RTM_TRY(rtm_cuda_band_trace_window(b->traces[field].ptr, b->receiver_count, b->trace_length,
                                       first, count, &b->band, b->trace_window.ptr, b->copies));
  else
    RTM_TRY(rtm_cuda_pack_trace_window(b->traces[field].ptr, b->receiver_count, b->trace_length,
                                       first, count, b->trace_window.ptr, b->copies));
  RTM_CUDA_TRY(
      cudaMemcpyAsync(host, b->trace_window.ptr, bytes, cudaMemcpyDeviceToHost, b->copies));
  RTM_CUDA_TRY(cudaEventRecord(b->traces_copied[slot], b->copies));
fail:
  return status;
}

/* The band's arrays to the device, as they are (the copy stream's windows after it wait:
 * the copies are synchronous). */
static int cuda_set_trace_band(void *state, const rtm_traces_band_t *band) {
  int status = RTM_OK;
  rtm_cuda_backend_state_t *b = state;
  if (b->copies) RTM_CUDA_TRY(cudaStreamSynchronize(b->copies)); /* windows using the last one */
  release_band(b);
  if (!band) return RTM_OK;
  if (band->n != b->trace_length)
    RTM_FAIL(RTM_ERR_INTERNAL, "backend cuda: a warp band of %d samples for traces of %d", band->n,
             b->trace_length);
  const size_t groups = (size_t)band->groups, values = (size_t)band->offset[band->groups];
  RTM_TRY(device_buffer(b, groups * sizeof(int), "warp band columns", &b->band_first));
  RTM_TRY(device_buffer(b, groups * sizeof(int), "warp band widths", &b->band_width));
  RTM_TRY(device_buffer(b, (groups + 1) * sizeof(long long), "warp band offsets", &b->band_offset));
  RTM_TRY(device_buffer(b, values * sizeof(float), "warp band", &b->band_coef));
  RTM_CUDA_TRY(cudaMemcpy(b->band_first.ptr, band->first, groups * sizeof(int),
                          cudaMemcpyHostToDevice));
  RTM_CUDA_TRY(cudaMemcpy(b->band_width.ptr, band->width, groups * sizeof(int),
                          cudaMemcpyHostToDevice));
  RTM_CUDA_TRY(cudaMemcpy(b->band_offset.ptr, band->offset, (groups + 1) * sizeof(long long),
                          cudaMemcpyHostToDevice));
  RTM_CUDA_TRY(cudaMemcpy(b->band_coef.ptr, band->coef, values * sizeof(float),
                          cudaMemcpyHostToDevice));
  b->band = (rtm_cuda_band_t){band->groups, b->band_first.ptr, b->band_width.ptr,
                              b->band_offset.ptr, b->band_coef.ptr};
  return RTM_OK;
fail:
  release_band(b);
  return status;
}

static int cuda_wait_traces(void *state, int slot) {
  int status = RTM_OK;
  rtm_cuda_backend_state_t *b = state;
  if (slot < 0 || slot >= RTM_TRACE_SLOTS)
    RTM_FAIL(RTM_ERR_INTERNAL, "backend cuda: trace slot %d", slot);
  RTM_CUDA_TRY(cudaSetDevice(b->device)); /* a thread of its own starts on device 0 */
  if (b->traces_copied[slot]) RTM_CUDA_TRY(cudaEventSynchronize(b->traces_copied[slot]));
fail:
  return status;
}

static int cuda_wait_copies(void *state) {
  int status = RTM_OK;
  rtm_cuda_backend_state_t *b = state;
  if (b->copies) RTM_CUDA_TRY(cudaStreamSynchronize(b->copies));
fail:
  return status;
}

/* The padded level of `field` at `level` to a dense [nz_local][ny][nx] host array
 * (`to_host`, kind cudaMemcpyDeviceToHost) or from one (`from_host`), one 2D copy a plane. */
static int copy_field(rtm_cuda_backend_state_t *b, rtm_field_t field, rtm_level_t level,
                      float *to_host, const float *from_host, enum cudaMemcpyKind kind) {
  int status = RTM_OK;
  const rtm_grid_t *g = &b->grid;
  RTM_TRY(b->physics->check_field(field, level));
  float *padded = b->level[field][level == RTM_LEVEL_CURRENT ? b->current : 1 - b->current].ptr;
  const size_t nx = (size_t)g->n[0], ny = (size_t)g->n[1];
  RTM_TRY(join_edges(b));
  const size_t dense_pitch = nx * sizeof(float), padded_pitch = g->stride_y * sizeof(float);
  for (long iz = 0; iz < g->nz_local; ++iz) {
    const size_t dense_at = (size_t)iz * ny * nx;
    float *padded_plane = padded + rtm_grid_index(g, 0, 0, iz);
    if (kind == cudaMemcpyDeviceToHost)
      RTM_CUDA_TRY(cudaMemcpy2DAsync(to_host + dense_at, dense_pitch, padded_plane, padded_pitch,
                                     dense_pitch, ny, kind, b->stream));
    else
      RTM_CUDA_TRY(cudaMemcpy2DAsync(padded_plane, padded_pitch, from_host + dense_at, dense_pitch,
                                     dense_pitch, ny, kind, b->stream));
  }
  RTM_CUDA_TRY(cudaStreamSynchronize(b->stream));
  return RTM_OK;
fail:
  return status;
}

static int cuda_count_nonfinite(void *state, rtm_field_t field, rtm_level_t level, size_t *count) {
  int status = RTM_OK;
  rtm_cuda_backend_state_t *b = state;
  RTM_TRY(b->physics->check_field(field, level));
  RTM_TRY(join_edges(b));
  /* the padded volume: its halos and pads hold zeros, finite */
  RTM_TRY(rtm_cuda_count_nonfinite(
      b->level[field][level == RTM_LEVEL_CURRENT ? b->current : 1 - b->current].ptr,
      b->grid.padded_cells, b->stream, count));
fail:
  return status;
}

static int cuda_view_field(void *state, rtm_field_t field, rtm_level_t level,
                           rtm_field_view_t *view) {
  int status = RTM_OK;
  rtm_cuda_backend_state_t *b = state;
  *view = (rtm_field_view_t){NULL, b->device};
  RTM_TRY(b->physics->check_field(field, level));
  view->padded = b->level[field][level == RTM_LEVEL_CURRENT ? b->current : 1 - b->current].ptr;
fail:
  return status;
}

static int cuda_reset(void *state) {
  int status = RTM_OK;
  rtm_cuda_backend_state_t *b = state;
  b->level_copy = NULL; /* a copy asked for by a shot that failed within its step */
  b->step_image_set = 0;
  RTM_TRY(join_edges(b));
  for (int f = 0; f < b->physics->field_count; ++f) {
    for (int l = 0; l < 2; ++l)
      RTM_CUDA_TRY(cudaMemsetAsync(b->level[f][l].ptr, 0, b->level[f][l].bytes, b->stream));
    if (b->traces[f].ptr)
      RTM_CUDA_TRY(cudaMemsetAsync(b->traces[f].ptr, 0, b->traces[f].bytes, b->stream));
  }
fail:
  return status;
}

/* The profiles rewritten on the stream, between the queued steps and the later ones (the
 * copy from pageable memory is staged before cudaMemcpyAsync returns, so `boundary` may
 * go away after the call). */
static int cuda_set_damping(void *state, const rtm_boundary_t *boundary) {
  int status = RTM_OK;
  rtm_cuda_backend_state_t *b = state;
  for (int a = 0; a < 3; ++a) {
    const size_t bytes = (size_t)b->grid.n[a] * sizeof(float);
    if (boundary && boundary->eta_dt[a])
      RTM_CUDA_TRY(cudaMemcpyAsync(b->eta_dt[a].ptr, boundary->eta_dt[a], bytes,
                                   cudaMemcpyHostToDevice, b->stream));
    else
      RTM_CUDA_TRY(cudaMemsetAsync(b->eta_dt[a].ptr, 0, bytes, b->stream));
  }
fail:
  return status;
}

static int cuda_read_field(void *state, rtm_field_t field, rtm_level_t level, float *dense) {
  return copy_field(state, field, level, dense, NULL, cudaMemcpyDeviceToHost);
}

static int cuda_write_field(void *state, rtm_field_t field, rtm_level_t level, const float *dense) {
  return copy_field(state, field, level, NULL, dense, cudaMemcpyHostToDevice);
}

static int cuda_view_traces(void *state, rtm_field_t field, float **traces) {
  int status = RTM_OK;
  rtm_cuda_backend_state_t *b = state;
  *traces = NULL;
  if ((field != RTM_FIELD_P && field != RTM_FIELD_Q) || !(b->trace_fields & RTM_FIELD_BIT(field)))
    RTM_FAIL(RTM_ERR_INTERNAL, "backend cuda (%s): traces of %s were not recorded",
             b->physics->name, rtm_field_name(field));
  RTM_TRY(join_edges(b));
  RTM_CUDA_TRY(cudaStreamSynchronize(b->stream));
  *traces = b->traces[field].ptr;
fail:
  return status;
}

static int cuda_read_traces(void *state, rtm_field_t field, float *traces) {
  int status = RTM_OK;
  rtm_cuda_backend_state_t *b = state;
  if ((field != RTM_FIELD_P && field != RTM_FIELD_Q) || !(b->trace_fields & RTM_FIELD_BIT(field)))
    RTM_FAIL(RTM_ERR_INTERNAL, "backend cuda (%s): traces of %s were not recorded",
             b->physics->name, rtm_field_name(field));
  if (b->receiver_count == 0) return RTM_OK;
  RTM_CUDA_TRY(cudaMemcpyAsync(traces, b->traces[field].ptr,
                               (size_t)b->receiver_count * b->trace_length * sizeof(float),
                               cudaMemcpyDeviceToHost, b->stream));
  RTM_CUDA_TRY(cudaStreamSynchronize(b->stream));
  return RTM_OK;
fail:
  return status;
}

static int cuda_synchronize(void *state) {
  int status = RTM_OK;
  rtm_cuda_backend_state_t *b = state;
  RTM_TRY(join_edges(b));
  RTM_CUDA_TRY(cudaStreamSynchronize(b->stream));
  return RTM_OK;
fail:
  return status;
}

/* kernel.* of a live backend changed (rtm3d tune): the queued steps finished first; a shape
 * the device refuses leaves the old one in place, working. */
static int cuda_set_kernel(void *state, const rtm_kernel_shape_t *shape) {
  int status = RTM_OK;
  rtm_cuda_backend_state_t *b = state;
  const rtm_iso_shape_t old = b->kernel;
  RTM_CUDA_TRY(cudaStreamSynchronize(b->stream));
  RTM_TRY(rtm_iso_halo_parse(shape->halo, &b->kernel.halo));
  b->kernel.stages = shape->stages;
  b->kernel.zblock = shape->zblock;
  b->kernel.block[0] = shape->block[0];
  b->kernel.block[1] = shape->block[1];
  RTM_TRY(b->physics->reshape(b));
  snprintf(b->kernel_why, sizeof b->kernel_why, "explicit");
  return RTM_OK;
fail:
  b->kernel = old;
  if (b->physics->reshape(b) != RTM_OK)
    rtm_log_error("backend cuda: the kernel shape before the refused one cannot be restored");
  return status;
}

static void cuda_describe(void *state, char *text, size_t size) {
  const rtm_cuda_backend_state_t *b = state;
  struct cudaDeviceProp prop;
  const struct cudaDeviceProp *known =
      cudaGetDeviceProperties(&prop, b->device) == cudaSuccess ? &prop : NULL;
  b->physics->describe(b, known, text, size);
  /* where an auto kernel.* came from; rtm3d info and the run's log say it in full */
  const char *origin = strncmp(b->kernel_why, "tune cache", 10) == 0
                           ? " (kernel.* auto: tune cache)"
                       : strncmp(b->kernel_why, "table", 5) == 0 ? " (kernel.* auto: table)"
                                                                 : "";
  const size_t used = strlen(text);
  if (used < size) snprintf(text + used, size - used, "%s", origin);
}

const rtm_backend_t rtm_backend_cuda = {
    .name = "cuda",
    .description = "CUDA z-marching kernels (iso: halo sync | ldgsts | tma; vti, tti: sync)",
    /* the physics with an images_in_step: iso's (a migration that plans for none and is
     * offered one anyway never asks; one that plans for it and is refused takes volumes) */
    .images_in_step = 1u << RTM_EQUATION_ISO,
    .probe = cuda_probe,
    .create = cuda_create,
    .set_sources = cuda_set_sources,
    .set_receivers = cuda_set_receivers,
    .step = cuda_step,
    .read_field = cuda_read_field,
    .write_field = cuda_write_field,
    .view_field = cuda_view_field,
    .copy_planes = cuda_copy_planes,
    .wait_copies = cuda_wait_copies,
    .exchange_planes = cuda_exchange_planes,
    .phase_seconds = cuda_phase_seconds,
    .reset = cuda_reset,
    .set_damping = cuda_set_damping,
    .read_traces = cuda_read_traces,
    .view_traces = cuda_view_traces,
    .synchronize = cuda_synchronize,
    .describe = cuda_describe,
    .set_kernel = cuda_set_kernel,
    .count_nonfinite = cuda_count_nonfinite,
    .copy_traces = cuda_copy_traces,
    .copy_next_level = cuda_copy_next_level,
    .image_next_step = cuda_image_next_step,
    .wait_traces = cuda_wait_traces,
    .set_trace_band = cuda_set_trace_band,
    .destroy = cuda_destroy,
};
