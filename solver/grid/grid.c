/* The grid (rtm_grid.h): its padded layout from the extents, a rank's z-range, and the
 * copies between padded fields and dense interior arrays. */
#include "rtm_grid.h"

#include <string.h>

#include "rtm_status.h"

int rtm_grid_init(rtm_grid_t *grid, const int n[3], const double spacing_m[3],
                  const double origin_m[3]) {
  memset(grid, 0, sizeof *grid);
  for (int a = 0; a < 3; ++a) {
    if (n[a] < 1 || !(spacing_m[a] > 0.0)) {
      rtm_log_error("grid axis %c: need n >= 1 and spacing > 0 (got n = %d, spacing = %g m)",
                    "xyz"[a], n[a], spacing_m[a]);
      return RTM_ERR_CONFIG;
    }
    grid->n[a] = n[a];
    grid->spacing_m[a] = spacing_m[a];
    grid->origin_m[a] = origin_m ? origin_m[a] : 0.0;
  }
  return rtm_grid_set_z_range(grid, 0, n[2]);
}

int rtm_grid_set_z_range(rtm_grid_t *grid, int z_offset, int nz_local) {
  if (z_offset < 0 || nz_local < 1 || z_offset + nz_local > grid->n[2]) {
    rtm_log_error("z-range [%d, %d) does not fit in nz = %d", z_offset, z_offset + nz_local,
                  grid->n[2]);
    return RTM_ERR_INTERNAL;
  }
  const size_t R = RTM_RADIUS;
  grid->z_offset = z_offset;
  grid->nz_local = nz_local;
  size_t row = (size_t)grid->n[0] + 2 * R;
  grid->stride_y = (row + RTM_ROW_ALIGN_FLOATS - 1) / RTM_ROW_ALIGN_FLOATS * RTM_ROW_ALIGN_FLOATS;
  grid->stride_z = grid->stride_y * ((size_t)grid->n[1] + 2 * R);
  grid->origin_index = R * grid->stride_z + R * grid->stride_y + R;
  grid->padded_cells = grid->stride_z * ((size_t)nz_local + 2 * R);
  return RTM_OK;
}

void rtm_grid_pack(const rtm_grid_t *g, const float *padded, float *dense) {
  const size_t nx = (size_t)g->n[0], ny = (size_t)g->n[1];
  for (long iz = 0; iz < g->nz_local; ++iz)
    for (long iy = 0; iy < (long)ny; ++iy)
      memcpy(dense + ((size_t)iz * ny + (size_t)iy) * nx, padded + rtm_grid_index(g, 0, iy, iz),
             nx * sizeof(float));
}

void rtm_grid_unpack(const rtm_grid_t *g, const float *dense, float *padded) {
  const size_t nx = (size_t)g->n[0], ny = (size_t)g->n[1];
  for (long iz = 0; iz < g->nz_local; ++iz)
    for (long iy = 0; iy < (long)ny; ++iy)
      memcpy(padded + rtm_grid_index(g, 0, iy, iz), dense + ((size_t)iz * ny + (size_t)iy) * nx,
             nx * sizeof(float));
}
