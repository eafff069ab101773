/* Absorbing boundary: a damping layer of `width` cells inside every face.
 *
 *   p_tt + 2 eta p_t = v^2 lap(p) + s,  eta(x) = eta_x(ix) + eta_y(iy) + eta_z(iz)
 *
 * A cell i along an axis of n cells lies d = max(W - i, W - (n - 1 - i), 0) cells deep in
 * the layer: d = W at the outer cells, 1 at the innermost layer cell, 0 inside. Profile
 *
 *   eta(d) = eta_max (d / W)^2,  eta_max = 3 v_max ln(1/R) / (2 W h)
 *
 * is the PML choice: for eta << omega a plane wave decays as exp(-int eta dx / v), so the
 * round trip through the layer and back returns exp(-2 eta_max W h / (3 v)) = R of its
 * amplitude. The sponge is not matched like a PML, so it also reflects where eta grows;
 * the quadratic start keeps that small. tests/solver/test_boundary.c measures the energy
 * sent back at normal incidence, 10 points per wavelength: width 20 and R = 1e-3 (the
 * defaults) give at most 9e-4, most of it from the gradient some 7 cells deep; at this
 * width R = 1e-2 gives 5e-4 and R = 1e-6 gives 3e-3, so stronger damping buys nothing. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rtm_physics.h"
#include "rtm_status.h"

int rtm_boundary_init(rtm_boundary_t *boundary, const rtm_grid_t *grid, int width_cells,
                      double reflection, double v_max, double dt_s) {
  int status = RTM_OK;
  memset(boundary, 0, sizeof *boundary);
  if (width_cells < 0)
    RTM_FAIL(RTM_ERR_CONFIG, "boundary.width = %d must be >= 0", width_cells);
  if (width_cells > 0 && !(reflection > 0.0 && reflection < 1.0))
    RTM_FAIL(RTM_ERR_CONFIG, "boundary.reflection = %g must lie in (0, 1)", reflection);
  boundary->width_cells = width_cells;
  for (int a = 0; a < 3; ++a) {
    const int n = grid->n[a];
    boundary->eta_dt[a] = calloc((size_t)n, sizeof(float));
    if (!boundary->eta_dt[a])
      RTM_FAIL(RTM_ERR_NOMEM, "out of memory for the %c damping profile", "xyz"[a]);
    if (width_cells == 0) continue;
    if (2 * width_cells >= n)
      rtm_log_warning("boundary.width = %d leaves no undamped interior along %c "
                      "(n = %d)",
                      width_cells, "xyz"[a], n);
    const double W = width_cells;
    const double eta_max = 3.0 * v_max * log(1.0 / reflection) / (2.0 * W * grid->spacing_m[a]);
    for (int i = 0; i < n; ++i) {
      int d = width_cells - i;
      if (width_cells - (n - 1 - i) > d) d = width_cells - (n - 1 - i);
      if (d <= 0) continue;
      const double x = d / W;
      boundary->eta_dt[a][i] = (float)(eta_max * x * x * dt_s);
    }
  }
  return RTM_OK;
fail:
  rtm_boundary_release(boundary);
  return status;
}

void rtm_boundary_release(rtm_boundary_t *boundary) {
  if (!boundary) return;
  for (int a = 0; a < 3; ++a)
    free(boundary->eta_dt[a]);
  memset(boundary, 0, sizeof *boundary);
}
