/* The GPUs' halo planes sent GPU to GPU: NCCL or a CUDA-aware MPI (rtm_mpi_device.h). */
#include "rtm_mpi_device.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_internal.h"
#include "rtm_grid.h"
#include "rtm_mpi.h"
#include "rtm_status.h"

/* A device link needs MPI and CUDA in the build; NCCL and an MPI that takes device memory
 * are each optional on top. */
#if defined(RTM3D_HAVE_MPI) && defined(RTM3D_HAVE_CUDA)
#define DEVICE_LINKS 1
#include <cuda_runtime.h>
#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h> /* MPIX_Query_cuda_support, where Open MPI has it */
#endif
#ifdef RTM3D_HAVE_NCCL
#include <nccl.h>
#endif
#endif

struct rtm_mpi_device_link {
  rtm_mpi_transport_t transport;
  rtm_mpi_t *mpi; /* the ranks sharing the slabs */
#ifdef RTM3D_HAVE_NCCL
  ncclComm_t comm;
#endif
};

#ifdef DEVICE_LINKS
/* 1 when the MPI library says at run time that it takes device memory. */
static int mpi_takes_device_memory(void) {
#ifdef MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return 0;
#endif
}
#endif

void rtm_mpi_cuda_aware_describe(char *text, size_t size) {
#if !defined(RTM3D_HAVE_CUDA)
  snprintf(text, size, "no (this build has no CUDA)");
#elif !defined(RTM3D_HAVE_MPI)
  snprintf(text, size, "no (this build has no MPI)");
#elif defined(MPIX_CUDA_AWARE_SUPPORT)
  if (mpi_takes_device_memory())
    snprintf(text, size, "yes (MPIX_Query_cuda_support)");
  else
    snprintf(text, size, "no (MPIX_Query_cuda_support() = 0: this MPI was built without CUDA)");
#else
  snprintf(text, size, "no (this MPI has no MPIX_Query_cuda_support to ask)");
#endif
}

void rtm_mpi_nccl_describe(char *text, size_t size) {
#ifdef RTM3D_HAVE_NCCL
  int version = 0;
  if (ncclGetVersion(&version) != ncclSuccess) {
    snprintf(text, size, "NCCL (its version unreadable)");
    return;
  }
  /* 2.9 on: major * 10000 + minor * 100 + patch */
  snprintf(text, size, "NCCL %d.%d.%d", version / 10000, version / 100 % 100, version % 100);
#elif !defined(RTM3D_HAVE_CUDA)
  snprintf(text, size, "not built (this build has no CUDA)");
#elif !defined(RTM3D_HAVE_MPI)
  snprintf(text, size, "not built (this build has no MPI)");
#else
  snprintf(text, size,
           "not built (configure found no nccl.h and libnccl beside CUDA's or the "
           "system's; RTM3D_ENABLE_NCCL)");
#endif
}

const char *rtm_mpi_device_name(const rtm_mpi_device_link_t *link) {
  return link->transport == RTM_TRANSPORT_NCCL ? "nccl" : "cuda-aware";
}

int rtm_mpi_device_queued(const rtm_mpi_device_link_t *link) {
  return link->transport == RTM_TRANSPORT_NCCL;
}

#ifdef DEVICE_LINKS

enum { PLACE_CHARS = 160, TAG_DOWN = 31, TAG_UP = 32 };

/* Where this rank computes: its host and its GPU's PCI bus id. */
static int place_of(int device, char place[PLACE_CHARS]) {
  int status = RTM_OK, length = 0;
  char host[MPI_MAX_PROCESSOR_NAME] = "", bus[32] = "";
  const cudaError_t err = cudaDeviceGetPCIBusId(bus, (int)sizeof bus, device);
  if (err != cudaSuccess)
    RTM_FAIL(RTM_ERR_DEVICE, "mpi.transport: the rank's GPU: %s", cudaGetErrorString(err));
  MPI_Get_processor_name(host, &length);
  snprintf(place, PLACE_CHARS, "%.100s %.40s", host, bus);
fail:
  return status;
}

/* Whether every rank that shares the slabs has a GPU of its own; with `explain` (an explicit
 * nccl) two that share one are an error naming them. */
static int own_gpus(rtm_mpi_t *mpi, int device, int explain, int *own) {
  int status = RTM_OK;
  const int size = mpi->size;
  char mine[PLACE_CHARS] = "";
  char *places = calloc((size_t)size, PLACE_CHARS);
  *own = 0;
  if (!places) RTM_FAIL(RTM_ERR_NOMEM, "out of memory choosing mpi.transport");
  if (place_of(device, mine) != RTM_OK) mine[0] = '\0'; /* said; the others learn it below */
  MPI_Request request = MPI_REQUEST_NULL;
  RTM_TRY(rtm_mpi_status(MPI_Iallgather(mine, PLACE_CHARS, MPI_CHAR, places, PLACE_CHARS, MPI_CHAR,
                                        mpi->slab, &request),
                         "MPI_Allgather (the ranks' GPUs)"));
  RTM_TRY(rtm_mpi_wait_all(mpi, 1, &request, NULL, mpi->slab, "MPI_Allgather (the ranks' GPUs)"));
  for (int a = 0; a < size; ++a) {
    const char *pa = places + (size_t)a * PLACE_CHARS;
    if (!pa[0]) RTM_FAIL(RTM_ERR_DEVICE, "mpi.transport: rank %d could not name its GPU", a);
    for (int b = a + 1; b < size; ++b) {
      if (strcmp(pa, places + (size_t)b * PLACE_CHARS) != 0) continue;
      if (!explain) goto fail; /* *own stays 0 */
      RTM_FAIL(RTM_ERR_UNSUPPORTED,
               "mpi.transport = nccl: ranks %d and %d share one GPU (%s); NCCL needs a GPU "
               "for each rank: start as many ranks a node as it has GPUs, or set "
               "mpi.transport = auto (the shared window where ranks share a GPU)",
               a, b, pa);
    }
  }
  *own = 1;
fail:
  free(places);
  return status;
}

int rtm_mpi_device_choose(rtm_mpi_t *mpi, rtm_mpi_transport_t requested, int device,
                          rtm_mpi_transport_t *chosen) {
  char why[200];
  *chosen = RTM_TRANSPORT_AUTO;
  if (rtm_mpi_size(mpi) < 2) return RTM_OK;
  if (requested == RTM_TRANSPORT_CUDA_AWARE) {
    if (!mpi_takes_device_memory()) {
      rtm_mpi_cuda_aware_describe(why, sizeof why);
      rtm_log_error("mpi.transport = cuda-aware: does this MPI take device memory? %s; set "
                    "mpi.transport = auto (or nccl)",
                    why);
      return RTM_ERR_UNSUPPORTED;
    }
    *chosen = RTM_TRANSPORT_CUDA_AWARE;
    return RTM_OK;
  }
  if (requested != RTM_TRANSPORT_NCCL && requested != RTM_TRANSPORT_AUTO)
    return RTM_OK; /* shared, staged: through the host */
#ifdef RTM3D_HAVE_NCCL
  int own = 0;
  const int status = own_gpus(mpi, device, requested == RTM_TRANSPORT_NCCL, &own);
  if (status == RTM_OK && own) *chosen = RTM_TRANSPORT_NCCL;
  return status;
#else
  (void)device;
  if (requested == RTM_TRANSPORT_AUTO) return RTM_OK;
  rtm_mpi_nccl_describe(why, sizeof why);
  rtm_log_error("mpi.transport = nccl: NCCL %s; set mpi.transport = auto", why);
  return RTM_ERR_UNSUPPORTED;
#endif
}

#ifdef RTM3D_HAVE_NCCL
/* An NCCL result as a status, `what` and NCCL's words logged. */
static int nccl_status(const rtm_mpi_t *mpi, ncclResult_t result, const char *what) {
  if (result == ncclSuccess) return RTM_OK;
  rtm_log_error("[rank %d] %s failed: %s", rtm_mpi_world_rank(mpi), what,
                ncclGetErrorString(result));
  return RTM_ERR_MPI;
}
#endif

int rtm_mpi_device_create(rtm_mpi_t *mpi, rtm_mpi_transport_t transport,
                          rtm_mpi_device_link_t **out) {
  int status = RTM_OK;
  rtm_mpi_device_link_t *link = calloc(1, sizeof *link);
  *out = NULL;
  if (!link) RTM_FAIL(RTM_ERR_NOMEM, "out of memory for the device link");
  link->transport = transport;
  link->mpi = mpi;
  if (transport == RTM_TRANSPORT_NCCL) {
#ifdef RTM3D_HAVE_NCCL
    ncclUniqueId id;
    memset(&id, 0, sizeof id);
    if (mpi->rank == 0) RTM_TRY(nccl_status(mpi, ncclGetUniqueId(&id), "ncclGetUniqueId"));
    MPI_Request request = MPI_REQUEST_NULL;
    RTM_TRY(rtm_mpi_status(MPI_Ibcast(&id, (int)sizeof id, MPI_BYTE, 0, mpi->slab, &request),
                           "MPI_Bcast (NCCL's unique id)"));
    RTM_TRY(rtm_mpi_wait_all(mpi, 1, &request, NULL, mpi->slab, "MPI_Bcast (NCCL's unique id)"));
    RTM_TRY(nccl_status(mpi, ncclCommInitRank(&link->comm, mpi->size, id, mpi->rank),
                        "ncclCommInitRank"));
#else
    RTM_FAIL(RTM_ERR_INTERNAL, "a NCCL link in a build without NCCL");
#endif
  } else if (transport != RTM_TRANSPORT_CUDA_AWARE) {
    RTM_FAIL(RTM_ERR_INTERNAL, "mpi.transport %d is not a device link", (int)transport);
  }
  *out = link;
  link = NULL;
fail:
  free(link);
  return status;
}

void rtm_mpi_device_destroy(rtm_mpi_device_link_t *link) {
  if (!link) return;
#ifdef RTM3D_HAVE_NCCL
  /* once the job is given up a peer may never finish its part: abort, not destroy */
  if (link->comm && rtm_mpi_given_up(link->mpi))
    ncclCommAbort(link->comm);
  else if (link->comm)
    ncclCommDestroy(link->comm);
#endif
  free(link);
}

/* The four runs of memory of one field: own planes out, ghost planes in, per side. */
typedef struct {
  float *own[2], *ghost[2]; /* [side]: 0 below, 1 above */
} field_runs_t;

static field_runs_t runs_of(float *field, size_t plane_floats, int nz_local) {
  const int R = RTM_RADIUS; /* plane p starts (p + R) planes in */
  return (field_runs_t){{field + (size_t)R * plane_floats, field + (size_t)nz_local * plane_floats},
                        {field, field + (size_t)(nz_local + R) * plane_floats}};
}

#ifdef RTM3D_HAVE_NCCL
static int nccl_exchange(rtm_mpi_device_link_t *link, float *const fields[], int count,
                         size_t floats, size_t plane_floats, int nz_local, const int has[2],
                         cudaStream_t stream) {
  int status = RTM_OK;
  const rtm_mpi_t *mpi = link->mpi;
  const int rank = mpi->rank;
  RTM_TRY(nccl_status(mpi, ncclGroupStart(), "ncclGroupStart"));
  for (int f = 0; f < count; ++f) {
    const field_runs_t run = runs_of(fields[f], plane_floats, nz_local);
    for (int side = 0; side < 2; ++side) {
      if (!has[side]) continue;
      const int peer = side == 0 ? rank - 1 : rank + 1;
      RTM_TRY(nccl_status(mpi, ncclSend(run.own[side], floats, ncclFloat, peer, link->comm, stream),
                          "ncclSend"));
      RTM_TRY(nccl_status(
          mpi, ncclRecv(run.ghost[side], floats, ncclFloat, peer, link->comm, stream), "ncclRecv"));
    }
  }
  return nccl_status(mpi, ncclGroupEnd(), "ncclGroupEnd");
fail:
  ncclGroupEnd(); /* closes the group; the failure is already said */
  return status;
}
#endif

/* The host waits for the stream's work (the edge planes), then MPI moves device memory. */
static int cuda_aware_exchange(rtm_mpi_t *mpi, float *const fields[], int count, size_t floats,
                               size_t plane_floats, int nz_local, const int has[2],
                               cudaStream_t stream) {
  int status = RTM_OK, posted = 0;
  enum { MAX_REQUESTS = 2 * 2 * 2 * 2 }; /* fields x sides x (send, receive), 2 fields */
  MPI_Request requests[MAX_REQUESTS];
  int peers[MAX_REQUESTS];
  const int rank = mpi->rank;
  const MPI_Comm comm = mpi->slab;
  if (count > 2 || floats > (size_t)INT_MAX)
    RTM_FAIL(RTM_ERR_UNSUPPORTED, "mpi.transport = cuda-aware: %d fields of %zu floats a side",
             count, floats);
  /* NULL: the caller has waited for the planes (the backend, for them alone) */
  const cudaError_t err = stream ? cudaStreamSynchronize(stream) : cudaSuccess;
  if (err != cudaSuccess)
    RTM_FAIL(RTM_ERR_DEVICE, "mpi.transport = cuda-aware: the edge planes: %s",
             cudaGetErrorString(err));
  for (int f = 0; f < count; ++f) {
    const field_runs_t run = runs_of(fields[f], plane_floats, nz_local);
    for (int side = 0; side < 2; ++side) {
      if (!has[side]) continue;
      const int peer = side == 0 ? rank - 1 : rank + 1;
      /* a message down carries the sender's lowest planes: tag by direction and field */
      const int out_tag = (side == 0 ? TAG_DOWN : TAG_UP) * 4 + f;
      const int in_tag = (side == 0 ? TAG_UP : TAG_DOWN) * 4 + f;
      peers[posted] = peers[posted + 1] = peer;
      RTM_TRY(rtm_mpi_status(MPI_Irecv(run.ghost[side], (int)floats, MPI_FLOAT, peer, in_tag, comm,
                                       &requests[posted++]),
                             "MPI_Irecv (device memory)"));
      RTM_TRY(rtm_mpi_status(MPI_Isend(run.own[side], (int)floats, MPI_FLOAT, peer, out_tag, comm,
                                       &requests[posted++]),
                             "MPI_Isend (device memory)"));
    }
  }
  const int waiting = posted;
  posted = 0;
  RTM_TRY(rtm_mpi_wait_all(mpi, waiting, requests, peers, comm,
                           "the halo exchange (device memory between neighbours)"));
fail:
  if (posted) rtm_mpi_wait_all(mpi, posted, requests, peers, comm, "MPI_Waitall (device memory)");
  return status;
}

int rtm_mpi_device_exchange(rtm_mpi_device_link_t *link, float *const fields[], int count,
                            size_t plane_floats, int nz_local, int has_below, int has_above,
                            void *stream) {
  const size_t floats = (size_t)RTM_RADIUS * plane_floats;
  const int has[2] = {has_below, has_above};
#ifdef RTM3D_HAVE_NCCL
  if (link->transport == RTM_TRANSPORT_NCCL)
    return nccl_exchange(link, fields, count, floats, plane_floats, nz_local, has,
                         (cudaStream_t)stream);
#endif
  return cuda_aware_exchange(link->mpi, fields, count, floats, plane_floats, nz_local, has,
                             (cudaStream_t)stream);
}

#else /* no MPI or no CUDA: one rank a run, or host fields only */

int rtm_mpi_device_choose(rtm_mpi_t *mpi, rtm_mpi_transport_t requested, int device,
                          rtm_mpi_transport_t *chosen) {
  (void)mpi;
  (void)requested;
  (void)device;
  *chosen = RTM_TRANSPORT_AUTO; /* several ranks need MPI; a GPU's fields need CUDA */
  return RTM_OK;
}

int rtm_mpi_device_create(rtm_mpi_t *mpi, rtm_mpi_transport_t transport,
                          rtm_mpi_device_link_t **link) {
  (void)mpi;
  (void)transport;
  *link = NULL;
  rtm_log_error("a device link in a build without MPI or CUDA");
  return RTM_ERR_INTERNAL;
}

void rtm_mpi_device_destroy(rtm_mpi_device_link_t *link) {
  free(link);
}

int rtm_mpi_device_exchange(rtm_mpi_device_link_t *link, float *const fields[], int count,
                            size_t plane_floats, int nz_local, int has_below, int has_above,
                            void *stream) {
  (void)link;
  (void)fields;
  (void)count;
  (void)plane_floats;
  (void)nz_local;
  (void)has_below;
  (void)has_above;
  (void)stream;
  rtm_log_error("a device link in a build without MPI or CUDA");
  return RTM_ERR_INTERNAL;
}

#endif
