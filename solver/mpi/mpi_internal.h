/* mpi_internal.h - what the files of solver/mpi share and nothing else sees: the context
 * behind rtm_mpi_t, the one wait. */
#ifndef RTM_MPI_INTERNAL_H
#define RTM_MPI_INTERNAL_H

#include "rtm_mpi.h"

#ifdef RTM3D_HAVE_MPI
#include <mpi.h>
#endif

struct rtm_mpi {
  int world_rank, world_size; /* MPI_COMM_WORLD's */
  int local_rank, local_size; /* among the ranks of this node */
  int rank, size;             /* among the ranks sharing the slabs: the world, or a group */
  int group, groups;          /* shot groups: this rank's, and their count */
  int started;                /* rtm_mpi_init ran MPI_Init: rtm_mpi_finalize owes MPI_Finalize */
  int given_up;               /* stopped by a signal, in a wait or between steps: no more MPI */
  double timeout_s;           /* mpi.timeout_s, once a deck is loaded; 0 waits for ever */
  int slab_align;             /* slabs in multiples of it (rtm_mpi_slab_aligned); 0: 1 */
  size_t combine_chunk;       /* rtm_mpi_set_combine_chunk's; 0: groups_combine.c's own */
  rtm_mpi_cleanup_t on_abort; /* rtm_mpi_on_abort's: run before this rank aborts the job */
  void *on_abort_context;
#ifdef RTM3D_HAVE_MPI
  MPI_Comm node;       /* the ranks of this node */
  MPI_Comm slab;       /* the ranks sharing the slabs: world, or a group */
  MPI_Comm cross;      /* the same slab in every group */
  MPI_Comm group_node; /* a group's ranks on this node */
  MPI_Comm cross_node; /* the ranks of `cross` on this node */
#endif
};

/* The rank has given the job up (a wait interrupted by SIGINT or SIGTERM, or its command
 * failed): no collective call may follow (a halo window's MPI_Win_free, NCCL's destroy), as
 * the others may wait elsewhere; main's MPI_Abort ends the job. */
int rtm_mpi_given_up(const rtm_mpi_t *mpi);
void rtm_mpi_give_up(rtm_mpi_t *mpi);
/* Runs the cleanup rtm_mpi_on_abort set (it may run twice: cleanups are idempotent);
 * before any MPI_Abort of this rank. */
void rtm_mpi_run_abort_cleanup(const rtm_mpi_t *mpi);

#ifdef RTM3D_HAVE_MPI
/* An MPI return code as a status: RTM_OK, or RTM_ERR_MPI with the library's words and
 * `what` logged. */
int rtm_mpi_status(int code, const char *what);
/* The ranks sharing the slabs that are on this node (the halo windows'). */
static inline MPI_Comm rtm_mpi_slab_node_comm(const rtm_mpi_t *mpi) {
  return mpi->group_node != MPI_COMM_NULL ? mpi->group_node : mpi->node;
}
/* The one way solver/mpi waits for other ranks (wait.c): the `count` requests completed by
 * polling, so that the wait also ends on SIGINT or SIGTERM (RTM_ERR_INTERRUPTED, the job
 * given up) and, past mpi.timeout_s, ends the job (MPI_Abort) naming `what` and whom it
 * waited for: peers[i], the rank of `comm` that requests[i] involves (MPI_PROC_NULL:
 * none), or, for a collective, peers NULL. RTM_OK, RTM_ERR_MPI with the library's words,
 * or RTM_ERR_INTERRUPTED (at once once the job is given up). */
int rtm_mpi_wait_all(rtm_mpi_t *mpi, int count, MPI_Request *requests, const int *peers,
                     MPI_Comm comm, const char *what);
#endif

#endif
