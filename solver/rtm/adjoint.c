/* The adjoint receiver taps (rtm_imaging.h's derivation): the receivers' trilinear taps, each
 * weight times dt^2 vp^2 / (1 + eta dt) at its cell, so that the backends' forward kernel
 * stepped over the time-reversed gather computes chi = D V lambda. The factor is formed in
 * double from the same floats the backends read (model vp, the eta dt profiles) and rounded
 * once to float. */
#include <stdlib.h>
#include <string.h>

#include "rtm_imaging.h"
#include "rtm_status.h"

/* Interior cell (ix, iy, iz local) of a padded tap index; RTM_ERR_INTERNAL when the index is
 * not one of an interior cell of the grid. */
static int tap_cell(const rtm_grid_t *grid, size_t index, long cell[3]) {
  if (index < grid->origin_index) return RTM_ERR_INTERNAL;
  const size_t offset = index - grid->origin_index;
  cell[2] = (long)(offset / grid->stride_z);
  cell[1] = (long)(offset % grid->stride_z / grid->stride_y);
  cell[0] = (long)(offset % grid->stride_y);
  if (cell[0] >= grid->n[0] || cell[1] >= grid->n[1] || cell[2] >= grid->nz_local)
    return RTM_ERR_INTERNAL;
  return RTM_OK;
}

/* dt^2 vp^2 / (1 + eta dt) at a cell; eta dt summed x, y, z as the backends do, from the
 * profiles over the global interior (z at z_offset + iz local). */
static double tap_factor(const rtm_grid_t *grid, const rtm_model_t *model,
                         const rtm_boundary_t *boundary, double dt_s, const long cell[3]) {
  const size_t dense =
      ((size_t)cell[2] * (size_t)grid->n[1] + (size_t)cell[1]) * (size_t)grid->n[0] +
      (size_t)cell[0];
  const long global[3] = {cell[0], cell[1], cell[2] + grid->z_offset};
  const double vp = model->vp[dense];
  double eta_dt = 0.0;
  for (int a = 0; a < 3; ++a)
    if (boundary && boundary->eta_dt[a]) eta_dt += boundary->eta_dt[a][global[a]];
  return dt_s * dt_s * vp * vp / (1.0 + eta_dt);
}

static int copy_points(const rtm_points_t *from, rtm_points_t *to) {
  int status = RTM_OK;
  const size_t count = (size_t)from->count, taps = count * (size_t)from->taps;
  memset(to, 0, sizeof *to);
  to->taps = from->taps;
  to->taps_per_plane = from->taps_per_plane;
  if (count == 0) return RTM_OK;
  to->position_m = malloc(count * 3 * sizeof *to->position_m);
  to->tap_index = malloc(taps * sizeof *to->tap_index);
  to->tap_weight = malloc(taps * sizeof *to->tap_weight);
  if (!to->position_m || !to->tap_index || !to->tap_weight)
    RTM_FAIL(RTM_ERR_NOMEM, "out of memory for the adjoint taps of %d receivers", from->count);
  memcpy(to->position_m, from->position_m, count * 3 * sizeof *to->position_m);
  memcpy(to->tap_index, from->tap_index, taps * sizeof *to->tap_index);
  memcpy(to->tap_weight, from->tap_weight, taps * sizeof *to->tap_weight);
  if (from->base_index) { /* the taps' indices from each point's first (the weights are not
                             the tensor product's any more: no axis_weight) */
    to->base_index = malloc(count * sizeof *to->base_index);
    if (!to->base_index)
      RTM_FAIL(RTM_ERR_NOMEM, "out of memory for the adjoint taps of %d receivers", from->count);
    memcpy(to->base_index, from->base_index, count * sizeof *to->base_index);
    to->width = from->width;
  }
  to->count = from->count;
  return RTM_OK;
fail:
  rtm_points_release(to);
  return status;
}

int rtm_adjoint_receivers(const rtm_points_t *receivers, const rtm_grid_t *grid,
                          const rtm_model_t *model, const rtm_boundary_t *boundary, double dt_s,
                          rtm_points_t *adjoint) {
  int status = RTM_OK, copied = 0;
  if (!receivers || !adjoint || receivers == adjoint || !grid || !model || !model->vp ||
      !(dt_s > 0.0))
    RTM_FAIL(RTM_ERR_INTERNAL, "rtm_adjoint_receivers: receivers, a distinct adjoint, the grid, "
                               "model.vp and dt > 0 are required");
  RTM_TRY(copy_points(receivers, adjoint));
  copied = 1;
  for (size_t t = 0; t < (size_t)adjoint->count * (size_t)adjoint->taps; ++t) {
    long cell[3];
    if (adjoint->tap_weight[t] == 0.0f) continue; /* outside the volume or the slab */
    if (tap_cell(grid, adjoint->tap_index[t], cell) != RTM_OK)
      RTM_FAIL(RTM_ERR_INTERNAL,
               "rtm_adjoint_receivers: tap %zu of receiver %zu (index %zu) is "
               "not an interior cell of the local grid",
               t % (size_t)adjoint->taps, t / (size_t)adjoint->taps, adjoint->tap_index[t]);
    const double factor = tap_factor(grid, model, boundary, dt_s, cell);
    adjoint->tap_weight[t] = (float)((double)adjoint->tap_weight[t] * factor);
  }
  return RTM_OK;
fail:
  if (copied) rtm_points_release(adjoint);
  return status;
}
