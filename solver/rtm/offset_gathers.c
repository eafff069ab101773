/* Subsurface-offset gathers (rtm_imaging.h): the CIP lines of a plan, and the host loop that
 * adds one imaging step's S(x - h) R(x + h) to them, one fused multiply-add an element, the
 * reference the device kernel (imaging_cuda.cu, gathers_kernel) reproduces bit for bit; on
 * a GPU the gathers live in its memory beside the fields. There imaging steps are held
 * until a pass adds several at once: the gathers, four times the bytes of a field at 16 lags
 * every 16 lines, are read and written once for them (each element's fmafs in the steps'
 * order: the same floats). Where the sources stay as they are through the backward pass (a
 * store's fp32 volumes), three steps' R are held (copied, dense), their S read where they
 * lie, and the fourth step's pass adds all four; else one step's S and R are held and the
 * next one's pass adds both. One NVIDIA H200, the gathers of a 512^3 survey's plan (900
 * CIPs, 16 lags each way): an imaging step 1.35 ms four a pass with the sources in place,
 * 1.69 ms two a pass with both copied, 1.59 ms two a pass with S in place, the kernel and
 * smaller copies alone (run/experiments/gathers_pass.sh); in the 8-shot survey 1.29 against
 * 1.61 ms (docs/migration.md). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "imaging_cuda.h"
#include "imaging_impl.h"
#include "rtm_imaging.h"
#include "rtm_status.h"

/* Imaging steps a device pass adds: four where the sources stay, two where they are copied. */
enum { GATHER_PASS_STAYING = 4, GATHER_PASS_COPIED = 2 };

struct rtm_gathers {
  rtm_grid_t grid;
  rtm_gather_plan_t plan;
  rtm_allocation_t values; /* [ncip][nh][nh][nz_local], on `device` (-1: the host) */
  int device;
  int sources_stay; /* the steps' S are read where they lie (rtm_gathers_create) */
  /* device: the steps not yet added, dense copies of their R (and S, unless they stay) a
   * field apart, and where each step's S is */
  rtm_allocation_t held_receivers, held_sources;
  const float *source[GATHER_PASS_STAYING - 1];
  rtm_layout_t source_layout[GATHER_PASS_STAYING - 1];
  int holding;                /* steps held */
  rtm_device_hold_t deferred; /* device: rtm_gathers_hold's copy to the host, the clear */
};

static int steps_a_pass(int sources_stay) {
  return sources_stay ? GATHER_PASS_STAYING : GATHER_PASS_COPIED;
}

/* A held field: the rank's interior, dense. */
static size_t held_field_bytes(const rtm_grid_t *grid) {
  return rtm_grid_interior_cells(grid) * sizeof(float);
}

/* The lines every `step` cells across an interior of `width` cells from `low`, centred. */
static void place_lines(int low, int width, int step, int *first, int *count) {
  *count = (width - 1) / step + 1;
  *first = low + (width - 1 - (*count - 1) * step) / 2;
}

int rtm_gather_plan_make(const rtm_grid_t *grid, int layer, int lags, int step_x, int step_y,
                         rtm_gather_plan_t *plan) {
  static const char *const names[2][2] = {{"x", "nx"}, {"y", "ny"}};
  const int steps[2] = {step_x, step_y};
  memset(plan, 0, sizeof *plan);
  if (lags < 1 || step_x < 1 || step_y < 1) {
    rtm_log_error("rtm.offset_lags = %d, rtm.cip_x_step = %d, rtm.cip_y_step = %d: gathers need "
                  "at least one lag and steps of at least one cell",
                  lags, step_x, step_y);
    return RTM_ERR_CONFIG;
  }
  for (int a = 0; a < 2; ++a) {
    const int width = grid->n[a] - 2 * layer;
    if (2 * lags + 1 > width) { /* config_validate.c says why, with the keys */
      rtm_log_error("rtm.offset_lags = %d: 2 x %d + 1 lags exceed the %d cells of the "
                    "non-absorbing interior in %s (grid.%s)",
                    lags, lags, width, names[a][0], names[a][1]);
      return RTM_ERR_CONFIG;
    }
    place_lines(layer, width, steps[a], &plan->first[a], &plan->count[a]);
    plan->step[a] = steps[a];
  }
  plan->lags = lags;
  plan->layer = layer;
  return RTM_OK;
}

int rtm_gathers_create(const rtm_grid_t *grid, const rtm_gather_plan_t *plan, int device,
                       int sources_stay, rtm_mem_ledger_t *ledger, rtm_gathers_t **gathers) {
  int status = RTM_OK;
  rtm_gathers_t *created = NULL;
  *gathers = NULL;
  created = calloc(1, sizeof *created);
  if (!created) RTM_FAIL(RTM_ERR_NOMEM, "out of host memory for the gathers' state");
  created->grid = *grid;
  created->plan = *plan;
  created->device = device;
  created->sources_stay = sources_stay;
  const size_t bytes = rtm_gather_plan_cells(plan, grid->nz_local) * sizeof(float);
  if (device >= 0) RTM_TRY(rtm_imaging_cuda_use_device(device));
  status = rtm_imaging_alloc(device >= 0 ? "device" : "host", bytes, "gathers", device, ledger,
                             &created->values);
  if (status == RTM_ERR_NOMEM)
    RTM_FAIL(RTM_ERR_NOMEM,
             "the subsurface-offset gathers (%d CIPs x %d x %d lags x %d planes, %.3g GB) do not "
             "fit in %s memory: fewer rtm.offset_lags, or larger rtm.cip_x_step and "
             "rtm.cip_y_step",
             rtm_gather_plan_cips(plan), 2 * plan->lags + 1, 2 * plan->lags + 1, grid->nz_local,
             bytes / 1e9, device >= 0 ? "the GPU's" : "host");
  RTM_TRY(status);
  if (device >= 0) {
    const size_t fields = steps_a_pass(sources_stay) - 1, field = held_field_bytes(grid);
    static const char *const held[2] = {"gathers: R held", "gathers: S held"};
    rtm_allocation_t *const into[2] = {&created->held_receivers, &created->held_sources};
    for (int k = 0; k < (sources_stay ? 1 : 2); ++k) {
      status = rtm_imaging_alloc("device", fields * field, held[k], device, ledger, into[k]);
      if (status == RTM_ERR_NOMEM)
        RTM_FAIL(RTM_ERR_NOMEM,
                 "the subsurface-offset gathers hold imaging steps' fields (%.3g GB) beside "
                 "them, which do not fit in the GPU's memory: fewer rtm.offset_lags, or larger "
                 "rtm.cip_x_step and rtm.cip_y_step",
                 rtm_gathers_held_bytes(grid, device, sources_stay) / 1e9);
      RTM_TRY(status);
    }
  }
  RTM_TRY(rtm_gathers_clear(created));
  *gathers = created;
  return RTM_OK;
fail:
  rtm_gathers_destroy(created);
  return status;
}

/* Whether cell index `i` of an axis of n cells lies in [layer, n - layer). */
static int inside(int i, int n, int layer) {
  return i >= layer && i < n - layer;
}

/* One gather trace, element (cip, hy, hx) over the depths [z_begin, z_end): a column of S and
 * one of R, each `stride` apart. */
IMAGING_FMA_CLONES static void accumulate_column(float *trace, const float *source,
                                                 long long source_stride, const float *receiver,
                                                 long long receiver_stride, long z_begin,
                                                 long z_end) {
  for (long iz = z_begin; iz < z_end; ++iz)
    trace[iz] = fmaf(source[iz * source_stride], receiver[iz * receiver_stride], trace[iz]);
}

size_t rtm_gathers_held_bytes(const rtm_grid_t *grid, int device, int sources_stay) {
  if (device < 0) return 0;
  const size_t fields = (size_t)(steps_a_pass(sources_stay) - 1) * (sources_stay ? 1 : 2);
  return fields * held_field_bytes(grid);
}

/* The rank's planes inside the interior, local indices [*z_begin, *z_end). */
static void interior_planes(const rtm_gathers_t *gathers, long *z_begin, long *z_end) {
  const rtm_grid_t *g = &gathers->grid;
  const long nz = g->nz_local, w = gathers->plan.layer;
  *z_begin = w - g->z_offset < 0 ? 0 : w - g->z_offset;
  *z_end = (long)g->n[2] - w - g->z_offset > nz ? nz : (long)g->n[2] - w - g->z_offset;
}

/* A device's values as the next use wants them: after the last hold's copy, zeroed if a
 * clear came since. */
static int order_after_hold(rtm_gathers_t *gathers) {
  rtm_allocation_t *const values[1] = {&gathers->values};
  return rtm_device_hold_settle(&gathers->deferred, values, 1);
}

/* The device's pass over the gathers: the held steps, then S and R if given. */
static int device_pass(rtm_gathers_t *gathers, const float *source, rtm_layout_t source_layout,
                       const float *receiver, rtm_layout_t receiver_layout) {
  const rtm_grid_t *g = &gathers->grid;
  const rtm_layout_t dense = rtm_layout_dense(g);
  const size_t field = held_field_bytes(g) / sizeof(float);
  const float *sources[GATHER_PASS_STAYING], *receivers[GATHER_PASS_STAYING];
  rtm_layout_t source_layouts[GATHER_PASS_STAYING], receiver_layouts[GATHER_PASS_STAYING];
  int count = 0;
  for (; count < gathers->holding; ++count) {
    sources[count] = gathers->source[count];
    source_layouts[count] = gathers->source_layout[count];
    receivers[count] = (const float *)gathers->held_receivers.ptr + (size_t)count * field;
    receiver_layouts[count] = dense;
  }
  if (source) {
    sources[count] = source;
    source_layouts[count] = source_layout;
    receivers[count] = receiver;
    receiver_layouts[count++] = receiver_layout;
  }
  long z_begin = 0, z_end = 0;
  interior_planes(gathers, &z_begin, &z_end);
  gathers->holding = 0;
  if (z_begin >= z_end || count == 0) return RTM_OK;
  const int status = order_after_hold(gathers);
  if (status != RTM_OK) return status;
  return rtm_imaging_cuda_gathers(&gathers->plan, g->n, z_begin, z_end, g->nz_local,
                                  gathers->values.ptr, count, sources, source_layouts, receivers,
                                  receiver_layouts);
}

/* The device: the step held (R copied, as the next steps change it; S copied too unless it
 * stays), or added with the ones held. */
static int device_accumulate(rtm_gathers_t *gathers, const float *source,
                             rtm_layout_t source_layout, const float *receiver,
                             rtm_layout_t receiver_layout) {
  int status = RTM_OK;
  if (gathers->holding == steps_a_pass(gathers->sources_stay) - 1)
    return device_pass(gathers, source, source_layout, receiver, receiver_layout);
  const int k = gathers->holding;
  const size_t field = held_field_bytes(&gathers->grid) / sizeof(float);
  const rtm_imaging_extent_t extent = rtm_imaging_extent(&gathers->grid);
  float *held_receiver = (float *)gathers->held_receivers.ptr + (size_t)k * field;
  RTM_TRY(rtm_imaging_cuda_pack(extent, receiver, receiver_layout, held_receiver));
  gathers->source[k] = source;
  gathers->source_layout[k] = source_layout;
  if (!gathers->sources_stay) {
    float *held_source = (float *)gathers->held_sources.ptr + (size_t)k * field;
    RTM_TRY(rtm_imaging_cuda_pack(extent, source, source_layout, held_source));
    gathers->source[k] = held_source;
    gathers->source_layout[k] = rtm_layout_dense(&gathers->grid);
  }
  gathers->holding = k + 1;
fail:
  return status;
}

int rtm_gathers_flush(rtm_gathers_t *gathers) {
  if (gathers->device < 0 || !gathers->holding) return RTM_OK;
  const rtm_layout_t unused = rtm_layout_dense(&gathers->grid);
  return device_pass(gathers, NULL, unused, NULL, unused);
}

int rtm_gathers_accumulate(rtm_gathers_t *gathers, const float *source, rtm_layout_t source_layout,
                           const float *receiver, rtm_layout_t receiver_layout) {
  if (!gathers || !source || !receiver) {
    rtm_log_error("rtm_gathers_accumulate: gathers, a source and a receiver field are required");
    return RTM_ERR_INTERNAL;
  }
  if (gathers->device >= 0)
    return device_accumulate(gathers, source, source_layout, receiver, receiver_layout);
  const rtm_grid_t *g = &gathers->grid;
  const rtm_gather_plan_t *p = &gathers->plan;
  const int lags = p->lags, nh = 2 * lags + 1, w = p->layer;
  const long nz = g->nz_local, rows = (long)rtm_gather_plan_cips(p) * nh;
  long z_begin = 0, z_end = 0;
  interior_planes(gathers, &z_begin, &z_end);
  float *values = gathers->values.ptr;
  if (z_begin >= z_end) return RTM_OK;
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
  for (long row = 0; row < rows; ++row) { /* (cip, hy) */
    const int cip = (int)(row / nh), hy = (int)(row % nh) - lags;
    int cx = 0, cy = 0;
    rtm_gather_plan_cip(p, cip, &cx, &cy);
    if (!inside(cy - hy, g->n[1], w) || !inside(cy + hy, g->n[1], w)) continue;
    for (int hx = -lags; hx <= lags; ++hx) {
      if (!inside(cx - hx, g->n[0], w) || !inside(cx + hx, g->n[0], w)) continue;
      const long long s =
          source_layout.origin + (long long)(cy - hy) * source_layout.stride_y + (cx - hx);
      const long long r =
          receiver_layout.origin + (long long)(cy + hy) * receiver_layout.stride_y + (cx + hx);
      float *trace = values + ((size_t)row * (size_t)nh + (size_t)(hx + lags)) * (size_t)nz;
      accumulate_column(trace, source + s, source_layout.stride_z, receiver + r,
                        receiver_layout.stride_z, z_begin, z_end);
    }
  }
  return RTM_OK;
}

int rtm_gathers_read(rtm_gathers_t *gathers, float *dense) {
  int status = RTM_OK;
  if (gathers->device >= 0) {
    RTM_TRY(rtm_gathers_flush(gathers));
    RTM_TRY(order_after_hold(gathers));
    return rtm_imaging_cuda_read(dense, gathers->values.ptr, gathers->values.bytes);
  }
  memcpy(dense, gathers->values.ptr, gathers->values.bytes);
fail:
  return status;
}

int rtm_gathers_hold(rtm_gathers_t *gathers, float *dense) {
  int status = RTM_OK;
  if (gathers->device < 0) return rtm_gathers_read(gathers, dense);
  RTM_TRY(rtm_imaging_cuda_use_device(gathers->device)); /* its streams and events */
  RTM_TRY(rtm_gathers_flush(gathers)); /* the steps held, queued before the copy */
  RTM_TRY(order_after_hold(gathers));
  RTM_TRY(rtm_imaging_cuda_hold_start(&gathers->deferred.hold, dense, gathers->values.ptr, NULL,
                                      NULL, gathers->values.bytes));
  gathers->deferred.hold_pending = 1;
fail:
  return status;
}

int rtm_gathers_hold_wait(rtm_gathers_t *gathers) {
  int status = RTM_OK;
  if (gathers->device < 0 || !gathers->deferred.hold) return RTM_OK;
  RTM_TRY(rtm_imaging_cuda_use_device(gathers->device)); /* any thread may wait */
  RTM_TRY(rtm_imaging_cuda_hold_wait(gathers->deferred.hold));
fail:
  return status;
}

int rtm_gathers_clear(rtm_gathers_t *gathers) {
  gathers->holding = 0; /* the steps held are dropped with the sums */
  if (gathers->device >= 0) {
    gathers->deferred.clear_pending =
        1; /* zeroed where the values are next used (order_after_hold) */
    return RTM_OK;
  }
  memset(gathers->values.ptr, 0, gathers->values.bytes);
  return RTM_OK;
}

void rtm_gathers_destroy(rtm_gathers_t *gathers) {
  if (!gathers) return;
  /* its device's: no kernel still writing them, no copy still reading them */
  if (gathers->device >= 0 && rtm_imaging_cuda_use_device(gathers->device) == RTM_OK) {
    rtm_imaging_cuda_synchronize();
    if (gathers->deferred.hold) rtm_imaging_cuda_hold_destroy(gathers->deferred.hold);
  }
  rtm_mem_free(&gathers->held_sources);
  rtm_mem_free(&gathers->held_receivers);
  rtm_mem_free(&gathers->values);
  free(gathers);
}
