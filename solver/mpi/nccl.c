/* mpi.transport = nccl: the GPUs' halo planes through NCCL (rtm_mpi_nccl.h). */
#include "rtm_mpi_nccl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_internal.h"
#include "rtm_grid.h"
#include "rtm_mpi.h"
#include "rtm_status.h"

#ifdef RTM3D_HAVE_NCCL
#include <cuda_runtime.h>
#include <nccl.h>

struct rtm_mpi_nccl {
  ncclComm_t comm;
};

/* An NCCL result as a status, `what` and NCCL's words logged. */
static int nccl_status(ncclResult_t result, const char *what) {
  if (result == ncclSuccess) return RTM_OK;
  rtm_log_error("[rank %d] %s failed: %s", rtm_mpi_world_rank(), what, ncclGetErrorString(result));
  return RTM_ERR_MPI;
}

int rtm_mpi_nccl_built(void) {
  return 1;
}

void rtm_mpi_nccl_describe(char *text, size_t size) {
  int version = 0;
  if (ncclGetVersion(&version) != ncclSuccess) {
    snprintf(text, size, "NCCL (its version unreadable)");
    return;
  }
  /* 2.9 on: major * 10000 + minor * 100 + patch */
  snprintf(text, size, "NCCL %d.%d.%d", version / 10000, version / 100 % 100, version % 100);
}

enum { PLACE_CHARS = 160 }; /* "host PCI-bus-id" */

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

int rtm_mpi_nccl_choose(rtm_mpi_transport_t requested, int device, int *use) {
  int status = RTM_OK;
  char *places = NULL;
  *use = 0;
  if (requested != RTM_TRANSPORT_AUTO && requested != RTM_TRANSPORT_NCCL) return RTM_OK;
  const int size = rtm_mpi_size();
  if (size < 2) return RTM_OK;
  places = calloc((size_t)size, PLACE_CHARS);
  if (!places) RTM_FAIL(RTM_ERR_NOMEM, "out of memory choosing mpi.transport");
  char own[PLACE_CHARS] = "";
  const int placed = place_of(device, own);
  if (placed != RTM_OK) own[0] = '\0'; /* said by this rank; the others learn it below */
  RTM_TRY(rtm_mpi_status(
      MPI_Allgather(own, PLACE_CHARS, MPI_CHAR, places, PLACE_CHARS, MPI_CHAR, rtm_mpi_slab_comm()),
      "MPI_Allgather (the ranks' GPUs)"));
  for (int a = 0; a < size; ++a) {
    const char *pa = places + (size_t)a * PLACE_CHARS;
    if (!pa[0]) RTM_FAIL(RTM_ERR_DEVICE, "mpi.transport: rank %d could not name its GPU", a);
    for (int b = a + 1; b < size; ++b) {
      if (strcmp(pa, places + (size_t)b * PLACE_CHARS) != 0) continue;
      if (requested == RTM_TRANSPORT_AUTO) goto fail; /* shared or staged: *use stays 0 */
      RTM_FAIL(RTM_ERR_UNSUPPORTED,
               "mpi.transport = nccl: ranks %d and %d share one GPU (%s); NCCL needs a GPU "
               "for each rank: start as many ranks a node as it has GPUs, or set "
               "mpi.transport = auto (the shared window where ranks share a GPU)",
               a, b, pa);
    }
  }
  *use = 1;
fail:
  free(places);
  return status;
}

int rtm_mpi_nccl_create(rtm_mpi_nccl_t **out) {
  int status = RTM_OK;
  ncclUniqueId id;
  rtm_mpi_nccl_t *n = calloc(1, sizeof *n);
  *out = NULL;
  if (!n) RTM_FAIL(RTM_ERR_NOMEM, "out of memory for the NCCL communicator");
  memset(&id, 0, sizeof id);
  if (rtm_mpi_rank() == 0) RTM_TRY(nccl_status(ncclGetUniqueId(&id), "ncclGetUniqueId"));
  RTM_TRY(rtm_mpi_status(MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, rtm_mpi_slab_comm()),
                         "MPI_Bcast (NCCL's unique id)"));
  RTM_TRY(nccl_status(ncclCommInitRank(&n->comm, rtm_mpi_size(), id, rtm_mpi_rank()),
                      "ncclCommInitRank"));
  *out = n;
  n = NULL;
fail:
  free(n);
  return status;
}

void rtm_mpi_nccl_destroy(rtm_mpi_nccl_t *n) {
  if (!n) return;
  if (n->comm) ncclCommDestroy(n->comm);
  free(n);
}

int rtm_mpi_nccl_exchange(rtm_mpi_nccl_t *n, float *const fields[], int count, size_t plane_floats,
                          int nz_local, int has_below, int has_above, void *stream) {
  int status = RTM_OK;
  const int R = RTM_RADIUS, rank = rtm_mpi_rank();
  const size_t floats = (size_t)R * plane_floats;
  cudaStream_t s = (cudaStream_t)stream;
  /* plane p of a field starts (p + R) planes in */
  RTM_TRY(nccl_status(ncclGroupStart(), "ncclGroupStart"));
  for (int f = 0; f < count; ++f) {
    float *ghost_below = fields[f], *own_low = fields[f] + floats;
    float *own_high = fields[f] + (size_t)nz_local * plane_floats;
    float *ghost_above = fields[f] + (size_t)(nz_local + R) * plane_floats;
    if (has_below) {
      RTM_TRY(nccl_status(ncclSend(own_low, floats, ncclFloat, rank - 1, n->comm, s), "ncclSend"));
      RTM_TRY(
          nccl_status(ncclRecv(ghost_below, floats, ncclFloat, rank - 1, n->comm, s), "ncclRecv"));
    }
    if (has_above) {
      RTM_TRY(nccl_status(ncclSend(own_high, floats, ncclFloat, rank + 1, n->comm, s), "ncclSend"));
      RTM_TRY(
          nccl_status(ncclRecv(ghost_above, floats, ncclFloat, rank + 1, n->comm, s), "ncclRecv"));
    }
  }
  return nccl_status(ncclGroupEnd(), "ncclGroupEnd");
fail:
  ncclGroupEnd(); /* closes the group; the failure is already said */
  return status;
}

#else /* no NCCL in the build */

struct rtm_mpi_nccl {
  int unused;
};

int rtm_mpi_nccl_built(void) {
  return 0;
}

void rtm_mpi_nccl_describe(char *text, size_t size) {
#ifndef RTM3D_HAVE_CUDA
  snprintf(text, size, "not built (this build has no CUDA)");
#elif !defined(RTM3D_HAVE_MPI)
  snprintf(text, size, "not built (this build has no MPI)");
#else
  snprintf(text, size,
           "not built (configure found no nccl.h and libnccl beside CUDA's or the "
           "system's; RTM3D_ENABLE_NCCL)");
#endif
}

int rtm_mpi_nccl_choose(rtm_mpi_transport_t requested, int device, int *use) {
  (void)device;
  *use = 0;
  if (requested != RTM_TRANSPORT_NCCL || rtm_mpi_size() < 2) return RTM_OK;
  char why[200];
  rtm_mpi_nccl_describe(why, sizeof why);
  rtm_log_error("mpi.transport = nccl: NCCL %s; set mpi.transport = auto", why);
  return RTM_ERR_UNSUPPORTED;
}

int rtm_mpi_nccl_create(rtm_mpi_nccl_t **nccl) {
  *nccl = NULL;
  rtm_log_error("mpi.transport = nccl: this build has no NCCL");
  return RTM_ERR_UNSUPPORTED;
}

void rtm_mpi_nccl_destroy(rtm_mpi_nccl_t *nccl) {
  (void)nccl;
}

int rtm_mpi_nccl_exchange(rtm_mpi_nccl_t *nccl, float *const fields[], int count,
                          size_t plane_floats, int nz_local, int has_below, int has_above,
                          void *stream) {
  (void)nccl;
  (void)fields;
  (void)count;
  (void)plane_floats;
  (void)nz_local;
  (void)has_below;
  (void)has_above;
  (void)stream;
  rtm_log_error("mpi.transport = nccl: this build has no NCCL");
  return RTM_ERR_UNSUPPORTED;
}

#endif
