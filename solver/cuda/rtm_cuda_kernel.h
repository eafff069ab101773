/* rtm_cuda_kernel.h - kernel.* = auto: the z-marching kernels' shape for a GPU and an
 * equation from the table of measured winners (backend_cuda_common.c), for the cuda
 * backend and for rtm3d bench, which prints what it runs. */
#ifndef RTM_CUDA_KERNEL_H
#define RTM_CUDA_KERNEL_H

#include <stddef.h>

#include "rtm_config.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  char halo[RTM_CONFIG_NAME_MAX]; /* sync | ldgsts | tma */
  int stages, block[2], zblock;
} rtm_cuda_kernel_t;

/* cfg's kernel.* with each auto replaced by the table's value for CUDA device `device`
 * (its compute capability) and physics.equation; explicit values are kept. `why` (may be
 * NULL) names the table row used, or "explicit". */
int rtm_cuda_kernel_resolve(const rtm_config_t *cfg, int device, rtm_cuda_kernel_t *kernel,
                            char *why, size_t size);

#ifdef __cplusplus
}
#endif

#endif
