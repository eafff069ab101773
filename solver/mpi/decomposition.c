/* The z-slabs of the ranks (rtm_mpi.h): no MPI call, the same answer on every rank. */
#include "mpi_internal.h"
#include "rtm_mpi.h"

#include <stdio.h>

#include "rtm_status.h"

/* Rank `rank`'s slab of the cut in whole units of `align` planes (the planes short of a
 * unit to the last rank): its planes, and its first in *z_offset. */
static int cut(int nz, int ranks, int rank, int align, int *z_offset) {
  const int units = nz / align, base = units / ranks, extra = units % ranks;
  *z_offset = (rank * base + (rank < extra ? rank : extra)) * align;
  return (base + (rank < extra ? 1 : 0)) * align + (rank == ranks - 1 ? nz % align : 0);
}

int rtm_mpi_thinnest_slab(int nz, int ranks, int align) {
  if (ranks < 1 || align < 1) return 0;
  int thinnest = nz, z_offset = 0;
  for (int rank = 0; rank < ranks; ++rank) {
    const int planes = cut(nz, ranks, rank, align, &z_offset);
    if (planes < thinnest) thinnest = planes;
  }
  return thinnest;
}

int rtm_mpi_slab_aligned(int nz, int ranks, int rank, int align, int *z_offset, int *nz_local) {
  int status = RTM_OK;
  if (ranks < 1 || rank < 0 || rank >= ranks || align < 1)
    RTM_FAIL(RTM_ERR_INTERNAL, "rank %d of %d ranks, slabs in multiples of %d planes", rank, ranks,
             align);
  const int thinnest = rtm_mpi_thinnest_slab(nz, ranks, align);
  if (thinnest < RTM_RADIUS) {
    char unit[48] = "";
    if (align > 1) snprintf(unit, sizeof unit, " (cut in whole units of %d planes)", align);
    RTM_FAIL(RTM_ERR_CONFIG,
             "grid.nz = %d over %d ranks leaves slabs of %d plane%s%s, and each needs at least "
             "%d (the stencil's reach, taken from one neighbour): run on at most %d ranks or "
             "enlarge grid.nz",
             nz, ranks, thinnest, thinnest == 1 ? "" : "s", unit, RTM_RADIUS, nz / RTM_RADIUS);
  }
  *nz_local = cut(nz, ranks, rank, align, z_offset);
fail:
  return status;
}

int rtm_mpi_slab(int nz, int ranks, int rank, int *z_offset, int *nz_local) {
  return rtm_mpi_slab_aligned(nz, ranks, rank, 1, z_offset, nz_local);
}

void rtm_mpi_set_slab_align(rtm_mpi_t *mpi, int align) {
  if (mpi) mpi->slab_align = align > 1 ? align : 1;
}

int rtm_mpi_slab_align(const rtm_mpi_t *mpi) {
  return mpi && mpi->slab_align > 1 ? mpi->slab_align : 1;
}
