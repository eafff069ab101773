/* Model parameters: constant models from the config, and the range of the velocities that
 * set dt, the damping and the sampling. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rtm_memory.h"
#include "rtm_physics.h"
#include "rtm_status.h"

void rtm_model_release(rtm_model_t *model) {
  if (!model) return;
  free(model->vp);
  free(model->epsilon);
  free(model->delta);
  free(model->theta_deg);
  free(model->phi_deg);
  model->vp = model->epsilon = model->delta = model->theta_deg = model->phi_deg = NULL;
  model->vp_min = model->vp_max = model->epsilon_max = 0.0;
  model->range_known = 0;
}

/* [min, max] of `values` over the cells, NaN for both where one is not finite (then 1 is
 * returned; 0 otherwise). */
static int value_range(const float *values, size_t cells, double range[2]) {
  float lo = INFINITY, hi = -INFINITY;
  int bad = 0;
#pragma omp parallel for schedule(static) reduction(min : lo) reduction(max : hi) reduction(| : bad)
  for (size_t i = 0; i < cells; ++i) {
    const float v = values[i];
    if (!isfinite(v)) {
      bad = 1;
      continue;
    }
    lo = v < lo ? v : lo;
    hi = v > hi ? v : hi;
  }
  range[0] = bad ? NAN : lo;
  range[1] = bad ? NAN : hi;
  return bad;
}

int rtm_model_update_range(rtm_model_t *model, const rtm_grid_t *grid) {
  const size_t nx = (size_t)grid->n[0], ny = (size_t)grid->n[1];
  const size_t cells = rtm_grid_interior_cells(grid);
  if (!model->vp) {
    rtm_log_error("model has no vp array");
    return RTM_ERR_INTERNAL;
  }
  /* over the threads first; a bad cell, rare, is then found in order for its message */
  float vp_lo = INFINITY, vp_hi = 0.0f;
  int bad_vp = 0, bad_epsilon = 0;
  const float *vp = model->vp, *epsilon = model->epsilon;
#pragma omp parallel for schedule(static) reduction(min                                            \
                                                    : vp_lo) reduction(max                         \
                                                                       : vp_hi)                    \
    reduction(|                                                                                    \
              : bad_vp)
  for (size_t i = 0; i < cells; ++i) {
    const float v = vp[i];
    if (!(v > 0.0f) || !isfinite(v)) {
      bad_vp = 1;
      continue;
    }
    vp_lo = v < vp_lo ? v : vp_lo;
    vp_hi = v > vp_hi ? v : vp_hi;
  }
  /* the anisotropy parameters' ranges, which rtm_anisotropy_check reads; epsilon's max too */
  const float *parameters[4] = {model->epsilon, model->delta, model->theta_deg, model->phi_deg};
  for (int k = 0; k < 4; ++k)
    if (parameters[k])
      bad_epsilon |= value_range(parameters[k], cells, model->range[k]) && k == RTM_MODEL_EPSILON;
    else
      model->range[k][0] = model->range[k][1] = NAN;
  for (size_t i = 0; bad_vp && i < cells; ++i)
    if (!(vp[i] > 0.0f) || !isfinite(vp[i])) {
      rtm_log_error("model vp = %g m/s at cell (ix %zu, iy %zu, iz %zu): velocity must be "
                    "positive and finite",
                    vp[i], i % nx, i / nx % ny, i / (nx * ny) + (size_t)grid->z_offset);
      return RTM_ERR_INPUT;
    }
  for (size_t i = 0; bad_epsilon && i < cells; ++i)
    if (!isfinite(epsilon[i])) {
      rtm_log_error("model epsilon = %g at cell (ix %zu, iy %zu, iz %zu) is not finite", epsilon[i],
                    i % nx, i / nx % ny, i / (nx * ny) + (size_t)grid->z_offset);
      return RTM_ERR_INPUT;
    }
  model->vp_min = vp_lo;
  model->vp_max = vp_hi;
  model->epsilon_max = epsilon ? model->range[RTM_MODEL_EPSILON][1] : 0.0;
  model->range_known = 1;
  return RTM_OK;
}

/* model.interface_z's plane: through interface_z at the centre of the volume in x, dipping
 * interface_dip along x. */
typedef struct {
  double z_m, slope, x_centre_m;
} interface_plane_t;

static interface_plane_t interface_plane(const rtm_config_t *cfg, const rtm_grid_t *grid) {
  const double pi = 3.14159265358979323846;
  return (interface_plane_t){cfg->model.interface_z_m,
                             tan(cfg->model.interface_dip_deg * pi / 180.0),
                             grid->origin_m[0] + 0.5 * (grid->n[0] - 1) * grid->spacing_m[0]};
}

/* Whether the centre of the cell at x, z lies below the plane: that cell gets vp_below. */
static int below_plane(const interface_plane_t *plane, double x_m, double z_m) {
  return z_m > plane->z_m + plane->slope * (x_m - plane->x_centre_m);
}

static double vp_below(const rtm_config_t *cfg) {
  return isnan(cfg->model.vp_below_m_s) ? cfg->model.vp_m_s : cfg->model.vp_below_m_s;
}

/* model.interface_z: the cells whose centre lies below the plane get vp_below. */
static void lower_layer(const rtm_config_t *cfg, const rtm_grid_t *grid, float *vp) {
  const interface_plane_t plane = interface_plane(cfg, grid);
  const float below = (float)vp_below(cfg);
  const size_t nx = (size_t)grid->n[0], ny = (size_t)grid->n[1];
  for (int iz = 0; iz < grid->nz_local; ++iz) {
    const double z = grid->origin_m[2] + (grid->z_offset + iz) * grid->spacing_m[2];
    for (size_t ix = 0; ix < nx; ++ix) {
      const double x = grid->origin_m[0] + (double)ix * grid->spacing_m[0];
      if (!below_plane(&plane, x, z)) continue;
      for (size_t iy = 0; iy < ny; ++iy)
        vp[((size_t)iz * ny + iy) * nx + ix] = below;
    }
  }
}

/* The plane is linear in x and z, so the cells farthest above and below it are corners of
 * the x-z section: where every corner lies on one side, so does every cell (but one within
 * rounding of the plane). A corner is a cell, so the figure never exceeds the model's. */
double rtm_model_constants_vp_max(const rtm_config_t *cfg, const rtm_grid_t *grid) {
  const double above = (float)cfg->model.vp_m_s, below = (float)vp_below(cfg);
  if (isnan(cfg->model.interface_z_m)) return above;
  const interface_plane_t plane = interface_plane(cfg, grid);
  int cells_above = 0, cells_below = 0;
  for (int corner = 0; corner < 4; ++corner) {
    const int ix = corner & 1 ? grid->n[0] - 1 : 0, iz = corner & 2 ? grid->n[2] - 1 : 0;
    const double x = grid->origin_m[0] + (double)ix * grid->spacing_m[0];
    const double z = grid->origin_m[2] + iz * grid->spacing_m[2];
    if (below_plane(&plane, x, z))
      cells_below = 1;
    else
      cells_above = 1;
  }
  return fmax(cells_above ? above : 0.0, cells_below ? below : 0.0);
}

int rtm_model_from_constants(const rtm_config_t *cfg, const rtm_grid_t *grid, rtm_model_t *model) {
  int status = RTM_OK;
  const rtm_equation_t equation = cfg->physics.equation;
  const size_t cells = rtm_grid_interior_cells(grid);
  /* iso needs vp; vti also epsilon and delta; tti also the axis angles */
  struct {
    const char *name;
    double value;
    float **array;
    int needed;
  } parameters[] = {
      {"vp", cfg->model.vp_m_s, &model->vp, 1},
      {"epsilon", cfg->model.epsilon, &model->epsilon, equation >= RTM_EQUATION_VTI},
      {"delta", cfg->model.delta, &model->delta, equation >= RTM_EQUATION_VTI},
      {"theta", cfg->model.theta_deg, &model->theta_deg, equation >= RTM_EQUATION_TTI},
      {"phi", cfg->model.phi_deg, &model->phi_deg, equation >= RTM_EQUATION_TTI},
  };
  memset(model, 0, sizeof *model);
  for (size_t i = 0; i < sizeof parameters / sizeof parameters[0]; ++i) {
    if (!parameters[i].needed) continue;
    float *values = rtm_mem_host_large(cells * sizeof *values);
    if (!values)
      RTM_FAIL(RTM_ERR_NOMEM, "out of memory for the %s model (%zu cells)", parameters[i].name,
               cells);
    const float value = (float)parameters[i].value;
#pragma omp parallel for schedule(static) /* the first touch, spread over the threads */
    for (size_t c = 0; c < cells; ++c)
      values[c] = value;
    *parameters[i].array = values;
  }
  if (!isnan(cfg->model.interface_z_m)) lower_layer(cfg, grid, model->vp);
  RTM_TRY(rtm_model_update_range(model, grid));
fail:
  if (status != RTM_OK) rtm_model_release(model);
  return status;
}
