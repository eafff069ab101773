/* rtm_mpi_nccl.h - mpi.transport = nccl: the halo planes of the ranks' GPUs go device to
 * device through NCCL point-to-point (ncclSend, ncclRecv), queued on the stream that
 * computes the edge planes, so the exchange overlaps the interior with no host
 * synchronisation and never leaves the GPUs (NVLink, or what NCCL finds between nodes).
 * MPI stays the launcher: it makes the communicator (NCCL's unique id broadcast over the
 * ranks that share the slabs) and every other exchange of the run.
 *
 * z-slabs are contiguous: a field's R planes next to a neighbour, x/y padding included, are
 * one run of memory, sent as it lies into the neighbour's R ghost planes (the padding cells
 * are zeros on both sides). NCCL refuses two ranks of one communicator on one GPU, so nccl
 * needs a GPU for each rank: rtm_mpi_nccl_choose checks it on every rank at once. */
#ifndef RTM_MPI_NCCL_H
#define RTM_MPI_NCCL_H

#include <stddef.h>

#include "rtm_config.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rtm_mpi_nccl rtm_mpi_nccl_t;

/* 1 when this build has NCCL (configure found it), for rtm3d info. */
int rtm_mpi_nccl_built(void);
/* The NCCL version the library reports ("2.28.9"), or why there is none. */
void rtm_mpi_nccl_describe(char *text, size_t size);

/* Whether the planes of the ranks' GPUs go through NCCL for `requested`, `device` being
 * this rank's GPU (rtm_backend_device): auto takes it when the build has NCCL and every rank
 * that shares the slabs has a GPU of its own (host and PCI bus id, gathered over the ranks);
 * nccl without either is refused (RTM_ERR_UNSUPPORTED naming mpi.transport, the same on
 * every rank); shared and staged never. Collective over the ranks that share the slabs,
 * before anything is allocated. */
int rtm_mpi_nccl_choose(rtm_mpi_transport_t requested, int device, int *use);

/* The communicator of the ranks that share the slabs, on the current GPU. Collective. */
int rtm_mpi_nccl_create(rtm_mpi_nccl_t **nccl);
void rtm_mpi_nccl_destroy(rtm_mpi_nccl_t *nccl);

/* Queues on `stream` (a cudaStream_t) the exchange of `count` padded fields, each
 * [nz_local + 2R][plane_floats] from ghost plane -R on: planes [0, R) to the neighbour
 * below and [nz_local - R, nz_local) to the one above, theirs into planes [-R, 0) and
 * [nz_local, nz_local + R); one NCCL group. `has_below` / `has_above` say which neighbours
 * exist (rtm_slab_has_below, rtm_slab_has_above). */
int rtm_mpi_nccl_exchange(rtm_mpi_nccl_t *nccl, float *const fields[], int count,
                          size_t plane_floats, int nz_local, int has_below, int has_above,
                          void *stream);

#ifdef __cplusplus
}
#endif

#endif
