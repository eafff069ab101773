/* rtm_mpi_device.h - the halo planes of the ranks' GPUs sent GPU to GPU, without host
 * staging (mpi.transport = nccl | cuda-aware); the staged transports are rtm_mpi_halo.h's.
 *
 *   nccl        NCCL point-to-point (ncclSend, ncclRecv in one group), queued on the stream
 *               that computes the edge planes, after them: the exchange overlaps the
 *               interior and the host never waits. MPI stays the launcher and makes the
 *               communicator (NCCL's unique id broadcast over the ranks that share the
 *               slabs). NCCL refuses two ranks of one communicator on one GPU, so nccl needs
 *               a GPU for each rank.
 *   cuda-aware  MPI_Isend, MPI_Irecv of device memory, for an MPI that says at run time
 *               that it takes device pointers (Open MPI's MPIX_Query_cuda_support): the host
 *               waits for the edge planes (the interior queued behind them keeps the GPU
 *               busy), posts the messages and waits for them before the next step.
 *
 * Either way z-slabs are contiguous: a field's R planes next to a neighbour, x/y padding
 * included, are one run of memory, sent as it lies into the neighbour's R ghost planes
 * (the padding cells are zeros on both sides). */
#ifndef RTM_MPI_DEVICE_H
#define RTM_MPI_DEVICE_H

#include <stddef.h>

#include "rtm_config.h"
#include "rtm_mpi.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rtm_mpi_device_link rtm_mpi_device_link_t;

/* What this build and library offer, for rtm3d info: "NCCL 2.28.9" or why not, and whether
 * the MPI takes device memory ("yes", "no (...)"). */
void rtm_mpi_nccl_describe(char *text, size_t size);
void rtm_mpi_cuda_aware_describe(char *text, size_t size);

/* The GPU-to-GPU transport for `requested`, `device` being this rank's GPU
 * (rtm_backend_device): RTM_TRANSPORT_NCCL or RTM_TRANSPORT_CUDA_AWARE in *chosen, or
 * RTM_TRANSPORT_AUTO for none (the staged transports then). auto takes nccl when the build
 * has NCCL and every rank that shares the slabs has a GPU of its own (host and PCI bus id,
 * gathered over the ranks); an explicit nccl without either, or cuda-aware with an MPI that
 * does not say it takes device memory, is refused (RTM_ERR_UNSUPPORTED naming
 * mpi.transport, on every rank at once). Collective over the ranks that share the slabs
 * (`mpi`'s), before anything is allocated. */
int rtm_mpi_device_choose(rtm_mpi_t *mpi, rtm_mpi_transport_t requested, int device,
                          rtm_mpi_transport_t *chosen);

/* The link of the ranks that share the slabs (`mpi`'s) for `transport` (the communicator for
 * nccl), on the current GPU. Collective. */
int rtm_mpi_device_create(rtm_mpi_t *mpi, rtm_mpi_transport_t transport,
                          rtm_mpi_device_link_t **link);
void rtm_mpi_device_destroy(rtm_mpi_device_link_t *link);
/* "nccl" or "cuda-aware", for the reports. */
const char *rtm_mpi_device_name(const rtm_mpi_device_link_t *link);
/* 1 when the exchange is queued on the stream and the host never waits (nccl): the
 * propagator starts it after the edge planes; 0 when the host waits for it (cuda-aware):
 * started after the interior is queued, so that the interior runs while the planes travel. */
int rtm_mpi_device_queued(const rtm_mpi_device_link_t *link);

/* The exchange of `count` padded fields, each [nz_local + 2R][plane_floats] from ghost plane
 * -R on: planes [0, R) to the neighbour below and [nz_local - R, nz_local) to the one above,
 * theirs into planes [-R, 0) and [nz_local, nz_local + R), after the work queued on `stream`
 * (a cudaStream_t): queued there (nccl), or done when it returns (cuda-aware).
 * `has_below` / `has_above` say which neighbours exist (rtm_slab_has_below, _above). */
int rtm_mpi_device_exchange(rtm_mpi_device_link_t *link, float *const fields[], int count,
                            size_t plane_floats, int nz_local, int has_below, int has_above,
                            void *stream);

#ifdef __cplusplus
}
#endif

#endif
