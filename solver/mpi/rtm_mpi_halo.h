/* rtm_mpi_halo.h - the host side of a device's plane exchange between z-slabs: the staged
 * transport. A device's fields cannot be handed to an MPI that is not CUDA-aware, so each
 * step the backend copies the R planes next to each neighbour into host buffers (pinned:
 * the copies are asynchronous), the buffers travel, and the backend copies the neighbours'
 * planes from host buffers into its ghost planes.
 *
 * How they travel (mpi.transport):
 *   shared  the buffers live in an MPI shared-memory window of the node (MPI-3,
 *           MPI_Win_allocate_shared): a rank's copies out land in its neighbour's incoming
 *           buffer, and a zero-byte message says they are there, so the planes cross host
 *           memory once (one device-to-host and one host-to-device copy, no host copy);
 *           a neighbour on another node is sent messages;
 *   staged  the buffers are sent as MPI messages (MPI_Isend, MPI_Irecv) always.
 * The incoming buffers alternate between two sets, step by step: a neighbour writes the
 * next step's planes while this rank may still be copying the last ones in (it cannot be
 * two steps ahead: each step waits for the neighbours' planes of the step before).
 *
 * Every rank of the run creates its halo at the same point (the window is collective over
 * the node), among the ranks that share the grid's slabs (grid->mpi). The memory to pin for the
 * asynchronous copies is rtm_mpi_halo_host_range's. */
#ifndef RTM_MPI_HALO_H
#define RTM_MPI_HALO_H

#include <stddef.h>

#include "rtm_config.h"
#include "rtm_grid.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { RTM_SIDE_BELOW = 0, RTM_SIDE_ABOVE = 1 } rtm_side_t;

typedef struct rtm_mpi_halo rtm_mpi_halo_t;

/* Buffers of `side_floats` floats per side and direction for a slab of `grid`, travelling
 * as `transport` says (auto: shared). Collective over the ranks. */
int rtm_mpi_halo_create(const rtm_grid_t *grid, size_t side_floats, rtm_mpi_transport_t transport,
                        rtm_mpi_halo_t **halo);
void rtm_mpi_halo_destroy(rtm_mpi_halo_t *halo);

/* Where this step's planes toward `side` are to be copied, and where the neighbour's planes
 * of the last rtm_mpi_halo_exchange arrived. A side without a neighbour has NULL. */
float *rtm_mpi_halo_out(rtm_mpi_halo_t *halo, rtm_side_t side);
const float *rtm_mpi_halo_in(const rtm_mpi_halo_t *halo, rtm_side_t side);

/* After this step's copies out have completed: the planes sent and the neighbours' received
 * (their copies out completed too); then the buffers of the next step are chosen. */
int rtm_mpi_halo_exchange(rtm_mpi_halo_t *halo);

/* The host memory the backend's copies touch (this rank's buffers and, shared, the
 * neighbours' incoming ones), one range to pin; and how each side travels, for the report
 * ("shared", "staged", or "none" without a neighbour). */
void rtm_mpi_halo_host_range(const rtm_mpi_halo_t *halo, void **start, size_t *bytes);
const char *rtm_mpi_halo_side_transport(const rtm_mpi_halo_t *halo, rtm_side_t side);
/* The bytes of this rank's buffers (its segment of the window). */
size_t rtm_mpi_halo_bytes(const rtm_mpi_halo_t *halo);

#ifdef __cplusplus
}
#endif

#endif
