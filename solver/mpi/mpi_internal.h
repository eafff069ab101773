/* mpi_internal.h - what the files of solver/mpi share and nothing else sees. */
#ifndef RTM_MPI_INTERNAL_H
#define RTM_MPI_INTERNAL_H

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
#endif

#endif
