/* rtm_backend_cuda.h - the cuda backend's table (backend_cuda_common.c), for the registry
 * (backend.c, rtm_solver.h), and the GPU a rank computes on. Only in a build with CUDA
 * (RTM3D_HAVE_CUDA_BACKEND): include it under that macro. */
#ifndef RTM_BACKEND_CUDA_H
#define RTM_BACKEND_CUDA_H

#include "rtm_backend.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const rtm_backend_t rtm_backend_cuda;

/* The GPU this rank computes on (rtm_backend_device, rtm_solver.h): `configured` (backend.
 * device) checked against the machine's count, then under MPI (`mpi`'s ranks; NULL: one)
 * offset by the rank's place on its node, modulo the count. */
int rtm_cuda_rank_device(int configured, const struct rtm_mpi *mpi, int *device);

#ifdef __cplusplus
}
#endif

#endif
