/* rtm_boundary_shell.h - the shell of rtm.reconstruction = boundary (reconstruction_boundary.c,
 * its device side boundary_cuda.cu), public so that tests can walk it.
 *
 * The shell is the outer R = 4 cells of the non-absorbing interior, the box of cells inside
 * the absorbing layer (boundary.width cells on every face): every box cell within R cells of
 * one of the box's six faces. A cell further in (the core) has its whole stencil, the
 * 64-point product stencil of tti's mixed derivatives included, inside the box, so the core
 * of a level follows from the two levels after it in the box alone. A level of the shell is
 * stored compact, cell index i in [0, cells):
 *   the R lowest z planes of the box, whole (each plane y by y, each row x by x);
 *   every z plane between them, its ring: the R lowest rows whole, then the R first and the
 *   R last cells of each row between, then the R highest rows whole;
 *   the R highest z planes, whole.
 * On a z-slab (MPI) a rank stores the part of that shell in its planes, in the same order:
 * its planes among the box's R lowest (`low` of them: the first rank's), its ring planes,
 * its planes among the R highest (the last rank's); a slab in the layer alone stores none.
 * rtm_boundary_shell_element maps i to a field's element; the host loops and the kernels both
 * walk i through it, so that host and device stores hold the same numbers in the same place.
 */
#ifndef RTM_BOUNDARY_SHELL_H
#define RTM_BOUNDARY_SHELL_H

#include "rtm_grid.h"
#include "rtm_imaging.h"

#ifdef __CUDACC__
#define RTM_SHELL_HOST_DEVICE __host__ __device__
#else
#define RTM_SHELL_HOST_DEVICE
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  int first[3];                 /* the box's first cell here (z: the slab's first box plane) */
  int box[3];                   /* its cells along x, y (each > 2 R) and z: the whole box's */
  int low, rings, high;         /* this slab's planes of it: whole, ring, whole, from first[2] */
  long long plane, ring, cells; /* cells of a whole box plane, of a ring, of the shell here */
} rtm_boundary_shell_t;

/* The shell of `grid`'s z-range (a slab's part under MPI) inside a layer of `width` cells;
 * 0 when the box holds no core (a box of 2 R cells or fewer along an axis). */
int rtm_boundary_shell_of(const rtm_grid_t *grid, int width, rtm_boundary_shell_t *shell);

/* The element of shell cell i in a field laid out as `layout`. */
static inline RTM_SHELL_HOST_DEVICE long long
rtm_boundary_shell_element(const rtm_boundary_shell_t *shell, rtm_layout_t layout, long long i) {
  const long long R = RTM_RADIUS, bx = shell->box[0], by = shell->box[1];
  const long long low_planes = shell->low * shell->plane, rings = shell->rings * shell->ring;
  long long x, y, z;
  if (i < low_planes || i >= low_planes + rings) { /* a whole plane */
    const long long j = i < low_planes ? i : i - rings - low_planes;
    z = j / shell->plane + (i < low_planes ? 0 : shell->low + shell->rings);
    y = j % shell->plane / bx;
    x = j % bx;
  } else { /* a ring */
    const long long j = i - low_planes, k = j % shell->ring, low_rows = R * bx;
    const long long sides = (by - 2 * R) * 2 * R;
    z = shell->low + j / shell->ring;
    if (k < low_rows || k >= low_rows + sides) {
      const long long m = k < low_rows ? k : k - sides - low_rows;
      y = m / bx + (k < low_rows ? 0 : by - R);
      x = m % bx;
    } else {
      const long long m = k - low_rows, side = m % (2 * R);
      y = R + m / (2 * R);
      x = side < R ? side : bx - 2 * R + side;
    }
  }
  return layout.origin + (shell->first[2] + z) * layout.stride_z +
         (shell->first[1] + y) * layout.stride_y + shell->first[0] + x;
}

#ifdef __cplusplus
}
#endif

#endif
