/* mpi_internal.h - what the files of solver/mpi share and nothing else sees. */
#ifndef RTM_MPI_INTERNAL_H
#define RTM_MPI_INTERNAL_H

/* The rank has given the job up (a wait interrupted by SIGINT or SIGTERM, or its command
 * failed): no collective call may follow (a halo window's MPI_Win_free, NCCL's destroy), as
 * the others may wait elsewhere; main's MPI_Abort ends the job. */
int rtm_mpi_given_up(void);
void rtm_mpi_give_up(void);

#ifdef RTM3D_HAVE_MPI
#include <mpi.h>

/* An MPI return code as a status: RTM_OK, or RTM_ERR_MPI with the library's words and
 * `what` logged. */
int rtm_mpi_status(int code, const char *what);
/* The ranks of this node (MPI_COMM_TYPE_SHARED), MPI_COMM_NULL before rtm_mpi_init. */
MPI_Comm rtm_mpi_node_comm(void);
/* The ranks sharing the slabs (rtm_mpi_rank's): the world, or this rank's shot group. */
MPI_Comm rtm_mpi_slab_comm(void);
/* Those of them on this node (the halo windows'). */
MPI_Comm rtm_mpi_slab_node_comm(void);
/* The one way solver/mpi waits for other ranks (wait.c): the `count` requests completed by
 * polling, so that the wait also ends on SIGINT or SIGTERM (RTM_ERR_INTERRUPTED, the job
 * given up) and, past mpi.timeout_s, ends the job (MPI_Abort) naming `what` and whom it
 * waited for: peers[i], the rank of `comm` that requests[i] involves (MPI_PROC_NULL:
 * none), or, for a collective, peers NULL. RTM_OK, RTM_ERR_MPI with the library's words,
 * or RTM_ERR_INTERRUPTED (at once once the job is given up). */
int rtm_mpi_wait_all(int count, MPI_Request *requests, const int *peers, MPI_Comm comm,
                     const char *what);
#endif

#endif
