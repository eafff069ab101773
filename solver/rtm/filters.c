/* Filters of the final image (rtm_imaging.h), on the host, dense [nz_local][ny][nx]: the
 * illumination compensation and the Laplacian. Both run once per migration, so they favour
 * accuracy (double arithmetic, one rounding to float per cell) over speed. On z-slabs each
 * rank filters its own planes, with what it needs of the others (the largest illumination,
 * the Laplacian's R planes past each cut): the same floats as one rank's. */
#include <string.h>

#include "imaging_impl.h"
#include "rtm_imaging.h"
#include "rtm_mpi.h"
#include "rtm_physics.h"
#include "rtm_status.h"

int rtm_image_compensate(rtm_mpi_t *mpi, float *image, const float *illumination, size_t cells,
                         double eps) {
  int status = RTM_OK;
  float largest = 0.0f;
#ifdef _OPENMP
#pragma omp parallel for reduction(max : largest) schedule(static)
#endif
  for (size_t i = 0; i < cells; ++i)
    if (illumination[i] > largest) largest = illumination[i];
  double whole = largest; /* exact: the largest float of every rank's */
  RTM_TRY(rtm_mpi_allreduce(mpi, &whole, 1, RTM_MPI_MAX));
  const double floor = eps * whole;
  /* A cell whose denominator is 0 (no illumination anywhere, or eps = 0 where the source
   * never reached) keeps its value: there is nothing to divide by. */
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
  for (size_t i = 0; i < cells; ++i) {
    const double denominator = (double)illumination[i] + floor;
    if (denominator > 0.0) image[i] = (float)((double)image[i] / denominator);
  }
fail:
  return status;
}

/* j folded back into the box [lo, hi) by even reflection across its faces (lo - 1 - i is
 * lo + i), clamped should a box narrower than the stencil fold it out again. */
static long mirror(long j, long lo, long hi) {
  if (j < lo) j = 2 * lo - 1 - j;
  if (j >= hi) j = 2 * hi - 1 - j;
  return j < lo ? lo : j;
}

/* sum_a (c0 u + sum_k c_k (u[+k e_a] + u[-k e_a])) / h_a^2 at `cell` of the dense volume u,
 * the neighbours mirrored into the box [lo, hi). */
static double laplacian_at(const float *u, const long lo[3], const long hi[3], const long stride[3],
                           const long cell[3], const double inv_h2[3]) {
  const size_t i = (size_t)(cell[2] * stride[2] + cell[1] * stride[1] + cell[0]);
  double lap = 0.0;
  for (int a = 0; a < 3; ++a) {
    double d2 = rtm_fd2_coeff[0] * (double)u[i];
    for (long k = 1; k <= RTM_RADIUS; ++k) {
      const long plus = mirror(cell[a] + k, lo[a], hi[a]) - cell[a];
      const long minus = mirror(cell[a] - k, lo[a], hi[a]) - cell[a];
      d2 += rtm_fd2_coeff[k] *
            ((double)u[(long)i + plus * stride[a]] + (double)u[(long)i + minus * stride[a]]);
    }
    lap += d2 * inv_h2[a];
  }
  return lap;
}

/* c0 u + sum_k c_k (u[+k s] + u[-k s]) at p, in double: laplacian_at's sum along one axis
 * of stride s for a cell whose taps all lie in the box, in the same order. */
static inline double axis_d2(const float *p, long s) {
  double d2 = rtm_fd2_coeff[0] * (double)p[0];
  for (long k = 1; k <= RTM_RADIUS; ++k)
    d2 += rtm_fd2_coeff[k] * ((double)p[k * s] + (double)p[-k * s]);
  return d2;
}

/* One row of -lap, nx cells, into `row` from the row of scratch at `at`, (iy, z) its place
 * in the scratch's box [lo, hi): the cells whose every tap lies in the box (most) by a plain
 * loop across x, the three axes spelled out so that it vectorises (through the stride array
 * it did not), laplacian_at's floats; the others mirrored; zero outside the box. */
IMAGING_FMA_CLONES static void laplacian_row(const float *scratch, size_t at, float *row, long nx,
                                             long iy, long z, const long lo[3], const long hi[3],
                                             const long stride[3], const double inv_h2[3]) {
  long deep_lo = lo[0] + RTM_RADIUS, deep_hi = hi[0] - RTM_RADIUS;
  if (iy - RTM_RADIUS < lo[1] || iy + RTM_RADIUS >= hi[1] || z - RTM_RADIUS < lo[2] ||
      z + RTM_RADIUS >= hi[2] || deep_hi < deep_lo)
    deep_lo = deep_hi = 0;
  const float *u = scratch + at;
  const long sy = stride[1], sz = stride[2];
  const double hx = inv_h2[0], hy = inv_h2[1], hz = inv_h2[2];
  IMAGING_OMP_SIMD
  for (long ix = deep_lo; ix < deep_hi; ++ix) {
    double lap = 0.0;
    lap += axis_d2(u + ix, 1) * hx;
    lap += axis_d2(u + ix, sy) * hy;
    lap += axis_d2(u + ix, sz) * hz;
    row[ix] = (float)-lap;
  }
  for (long ix = 0; ix < nx; ++ix) {
    if (ix >= deep_lo && ix < deep_hi) continue;
    const long cell[3] = {ix, iy, z};
    const int inside =
        ix >= lo[0] && ix < hi[0] && iy >= lo[1] && iy < hi[1] && z >= lo[2] && z < hi[2];
    row[ix] = inside ? (float)-laplacian_at(scratch, lo, hi, stride, cell, inv_h2) : 0.0f;
  }
}

/* A thread's piece of the filter: rows along y through planes, so that the planes above and
 * below the one filtered stay in its cache between them (a plane at a time, each row's z taps
 * were read from memory again); pieces of both, so that a narrow volume still spreads over
 * the threads. */
enum { LAPLACIAN_STRIP = 8, LAPLACIAN_PLANES = 16 };

int rtm_image_laplacian_begin(const rtm_grid_t *grid, const float *image, float *scratch) {
  /* the planes past a cut are the neighbour's (a slab is at least R planes: rtm_mpi_slab);
   * past the volume's faces there are none, and the box (mirrored) never reaches them */
  return rtm_mpi_exchange_dense_planes(grid, RTM_RADIUS, image, scratch);
}

void rtm_image_laplacian_planes(const rtm_grid_t *grid, int width, float *image,
                                const float *scratch, int z_begin, int z_end) {
  const long n[3] = {grid->n[0], grid->n[1], grid->nz_local};
  const long stride[3] = {1, n[0], n[0] * n[1]};
  /* scratch: R planes below the slab, its nz_local, R above; the box in its cells */
  const long offset[3] = {0, 0, (long)grid->z_offset - RTM_RADIUS},
             extent[3] = {n[0], n[1], n[2] + 2 * RTM_RADIUS};
  long lo[3], hi[3];
  double inv_h2[3];
  for (int a = 0; a < 3; ++a) {
    const long global_lo = width, global_hi = (long)grid->n[a] - width;
    lo[a] = global_lo - offset[a] > 0 ? global_lo - offset[a] : 0;
    hi[a] = global_hi - offset[a] < extent[a] ? global_hi - offset[a] : extent[a];
    inv_h2[a] = 1.0 / (grid->spacing_m[a] * grid->spacing_m[a]);
  }
  const long first = z_begin > 0 ? z_begin : 0, last = z_end < n[2] ? z_end : n[2];
  const long strips = (n[1] + LAPLACIAN_STRIP - 1) / LAPLACIAN_STRIP;
  const long blocks = last > first ? (last - first + LAPLACIAN_PLANES - 1) / LAPLACIAN_PLANES : 0;
#ifdef _OPENMP
#pragma omp parallel for collapse(2) schedule(static)
#endif
  for (long strip = 0; strip < strips; ++strip)
    for (long block = 0; block < blocks; ++block) {
      const long y_end = strip * LAPLACIAN_STRIP + LAPLACIAN_STRIP < n[1]
                             ? strip * LAPLACIAN_STRIP + LAPLACIAN_STRIP
                             : n[1];
      const long z_first = first + block * LAPLACIAN_PLANES;
      const long z_last = z_first + LAPLACIAN_PLANES < last ? z_first + LAPLACIAN_PLANES : last;
      for (long iz = z_first; iz < z_last; ++iz)
        for (long iy = strip * LAPLACIAN_STRIP; iy < y_end; ++iy) {
          const long z = iz + RTM_RADIUS; /* the row's plane in scratch */
          laplacian_row(scratch, (size_t)(z * stride[2] + iy * stride[1]),
                        image + (size_t)(iz * stride[2] + iy * stride[1]), n[0], iy, z, lo, hi,
                        stride, inv_h2);
        }
    }
}

int rtm_image_laplacian(const rtm_grid_t *grid, int width, float *image, float *scratch) {
  const int status = rtm_image_laplacian_begin(grid, image, scratch);
  if (status == RTM_OK) rtm_image_laplacian_planes(grid, width, image, scratch, 0, grid->nz_local);
  return status;
}
