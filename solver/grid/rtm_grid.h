/* rtm_grid.h - the grid description every module shares.
 *
 * Global interior extents n (x fastest, z slowest), this rank's z-range, and the padded
 * layout of a field: R = 4 halo cells on every side, each row (halo included) starting
 * 128-byte aligned. MPI decomposition changes z_offset and nz_local, and says with which
 * ranks (mpi), nothing else.
 *
 * Field element of interior cell (ix, iy, iz_local):
 *   field[rtm_grid_index(g, ix, iy, iz_local)], ix in [-R, nx+R), iy in [-R, ny+R),
 *   iz_local in [-R, nz_local+R). */
#ifndef RTM_GRID_H
#define RTM_GRID_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RTM_RADIUS 4            /* 8th-order stencil half width */
#define RTM_ROW_ALIGN_FLOATS 32 /* 128 bytes */

typedef struct {
  int n[3];            /* global interior cells nx, ny, nz */
  double spacing_m[3]; /* dx, dy, dz */
  double origin_m[3];  /* coordinate of global cell (0, 0, 0) */
  int z_offset;        /* first global z plane owned by this rank */
  int nz_local;        /* planes owned by this rank */
  size_t stride_y;     /* floats between rows (>= nx + 2R, multiple of 32) */
  size_t stride_z;     /* floats between planes: stride_y * (ny + 2R) */
  size_t origin_index; /* index of interior cell (0, 0, 0) */
  size_t padded_cells; /* floats in one padded field: stride_z * (nz_local + 2R) */
  struct rtm_mpi *mpi; /* the ranks sharing the slabs (rtm_mpi.h); NULL: this rank alone */
} rtm_grid_t;

/* Describes the whole volume owned by one rank (z_offset 0, nz_local nz, mpi NULL). */
int rtm_grid_init(rtm_grid_t *grid, const int n[3], const double spacing_m[3],
                  const double origin_m[3]);
/* Restricts a grid to the z-range [z_offset, z_offset + nz_local). */
int rtm_grid_set_z_range(rtm_grid_t *grid, int z_offset, int nz_local);

static inline size_t rtm_grid_index(const rtm_grid_t *g, long ix, long iy, long iz) {
  return (size_t)((long)g->origin_index + iz * (long)g->stride_z + iy * (long)g->stride_y + ix);
}

/* The dense [nz_local][ny][nx] index of interior element `padded` (an rtm_grid_index). */
static inline size_t rtm_grid_dense_index(const rtm_grid_t *g, size_t padded) {
  const size_t off = padded - g->origin_index;
  const size_t iz = off / g->stride_z, iy = off % g->stride_z / g->stride_y;
  return (iz * (size_t)g->n[1] + iy) * (size_t)g->n[0] + off % g->stride_y;
}

/* 1 when the grid is a z-slab of the volume (MPI, rtm_mpi.h), not the whole of it. */
static inline int rtm_grid_is_slab(const rtm_grid_t *g) {
  return g->nz_local != g->n[2];
}

static inline size_t rtm_grid_interior_cells(const rtm_grid_t *g) {
  return (size_t)g->n[0] * (size_t)g->n[1] * (size_t)g->nz_local;
}

static inline double rtm_grid_min_spacing(const rtm_grid_t *g) {
  double h = g->spacing_m[0];
  if (g->spacing_m[1] < h) h = g->spacing_m[1];
  if (g->spacing_m[2] < h) h = g->spacing_m[2];
  return h;
}

/* Copies between a padded field and a dense interior array [nz_local][ny][nx]. */
void rtm_grid_pack(const rtm_grid_t *g, const float *padded, float *dense);
void rtm_grid_unpack(const rtm_grid_t *g, const float *dense, float *padded);

#ifdef __cplusplus
}
#endif

#endif
