/* Filters of the final image (rtm_imaging.h), on the host, dense [nz_local][ny][nx]: the
 * illumination compensation and the Laplacian. Both run once per migration, so they favour
 * accuracy (double arithmetic, one rounding to float per cell) over speed. */
#include <string.h>

#include "imaging_impl.h"
#include "rtm_imaging.h"
#include "rtm_physics.h"

void rtm_image_compensate(float *image, const float *illumination, size_t cells, double eps) {
  float largest = 0.0f;
#ifdef _OPENMP
#pragma omp parallel for reduction(max : largest) schedule(static)
#endif
  for (size_t i = 0; i < cells; ++i)
    if (illumination[i] > largest) largest = illumination[i];
  const double floor = eps * (double)largest;
  /* A cell whose denominator is 0 (no illumination anywhere, or eps = 0 where the source
   * never reached) keeps its value: there is nothing to divide by. */
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
  for (size_t i = 0; i < cells; ++i) {
    const double denominator = (double)illumination[i] + floor;
    if (denominator > 0.0) image[i] = (float)((double)image[i] / denominator);
  }
}

/* sum_a (c0 u + sum_k c_k (u[+k e_a] + u[-k e_a])) / h_a^2 at cell (ix, iy, iz) of the dense
 * volume u, cells beyond a face taken as zero. */
static double laplacian_at(const float *u, const long n[3], const long stride[3],
                           const long cell[3], const double inv_h2[3]) {
  const size_t i = (size_t)(cell[2] * stride[2] + cell[1] * stride[1] + cell[0]);
  double lap = 0.0;
  for (int a = 0; a < 3; ++a) {
    double d2 = rtm_fd2_coeff[0] * (double)u[i];
    for (long k = 1; k <= RTM_RADIUS; ++k) {
      const double plus = cell[a] + k < n[a] ? (double)u[i + (size_t)(k * stride[a])] : 0.0;
      const double minus = cell[a] - k >= 0 ? (double)u[i - (size_t)(k * stride[a])] : 0.0;
      d2 += rtm_fd2_coeff[k] * (plus + minus);
    }
    lap += d2 * inv_h2[a];
  }
  return lap;
}

void rtm_image_laplacian(const rtm_grid_t *grid, float *image, float *scratch) {
  const long n[3] = {grid->n[0], grid->n[1], grid->nz_local};
  const long stride[3] = {1, n[0], n[0] * n[1]};
  double inv_h2[3];
  for (int a = 0; a < 3; ++a)
    inv_h2[a] = 1.0 / (grid->spacing_m[a] * grid->spacing_m[a]);
  memcpy(scratch, image, rtm_grid_interior_cells(grid) * sizeof(float));
  IMAGING_OMP_ROWS
  for (long iz = 0; iz < n[2]; ++iz)
    for (long iy = 0; iy < n[1]; ++iy)
      for (long ix = 0; ix < n[0]; ++ix) {
        const long cell[3] = {ix, iy, iz};
        image[(size_t)(iz * stride[2] + iy * stride[1] + ix)] =
            (float)-laplacian_at(scratch, n, stride, cell, inv_h2);
      }
}
