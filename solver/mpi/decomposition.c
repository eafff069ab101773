/* The z-slabs of the ranks (rtm_mpi.h): no MPI call, the same answer on every rank. */
#include "rtm_mpi.h"

#include "rtm_status.h"

int rtm_mpi_slab(int nz, int ranks, int rank, int *z_offset, int *nz_local) {
  int status = RTM_OK;
  if (ranks < 1 || rank < 0 || rank >= ranks)
    RTM_FAIL(RTM_ERR_INTERNAL, "rank %d of %d ranks", rank, ranks);
  const int base = nz / ranks, extra = nz % ranks;
  if (base < RTM_RADIUS)
    RTM_FAIL(RTM_ERR_CONFIG,
             "grid.nz = %d over %d ranks leaves slabs of %d plane%s, and each needs at least %d "
             "(the stencil's reach, taken from one neighbour): run on at most %d ranks or "
             "enlarge grid.nz",
             nz, ranks, base, base == 1 ? "" : "s", RTM_RADIUS, nz / RTM_RADIUS);
  *nz_local = base + (rank < extra ? 1 : 0);
  *z_offset = rank * base + (rank < extra ? rank : extra);
fail:
  return status;
}
