/* rtm_cuda_field_checks.h - checks of a whole field on the device (field_checks.cu). */
#ifndef RTM_CUDA_FIELD_CHECKS_H
#define RTM_CUDA_FIELD_CHECKS_H

#include <stddef.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The number of the n floats at `data` (device memory) that are not finite, after the work
 * queued on `stream`; waits for the stream. */
int rtm_cuda_count_nonfinite(const float *data, size_t n, cudaStream_t stream, size_t *count);

#ifdef __cplusplus
}
#endif

#endif
