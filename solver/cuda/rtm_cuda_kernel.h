/* rtm_cuda_kernel.h - kernel.* = auto for a CUDA device: the key of rtm_kernel_choice.h
 * filled from the device, then the tune cache or the table of measured winners; for the
 * cuda backend, rtm3d bench and rtm3d tune, which print what they run. */
#ifndef RTM_CUDA_KERNEL_H
#define RTM_CUDA_KERNEL_H

#include <stddef.h>

#include "rtm_config.h"
#include "rtm_kernel_choice.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The choice's key for CUDA device `device` (name, compute capability, driver) and cfg
 * (physics.equation, memory.model_precision, grid.n). */
int rtm_cuda_kernel_key(const rtm_config_t *cfg, int device, rtm_kernel_key_t *key);

/* cfg's kernel.* with each auto replaced from the user's tune cache, else the table, for
 * CUDA device `device`; explicit values are kept. `why` (may be NULL) names the cache
 * entry or the table row, or says "explicit". */
int rtm_cuda_kernel_resolve(const rtm_config_t *cfg, int device, rtm_kernel_shape_t *kernel,
                            char *why, size_t size);

#ifdef __cplusplus
}
#endif

#endif
