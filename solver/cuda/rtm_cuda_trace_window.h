/* rtm_cuda_trace_window.h - a window of samples of every trace, packed on the device
 * (trace_window.cu), so that it leaves the device in one dense copy. */
#ifndef RTM_CUDA_TRACE_WINDOW_H
#define RTM_CUDA_TRACE_WINDOW_H

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* window[r][s] = traces[r][first + s] for r < receivers, s < count, where traces holds
 * `length` samples a receiver; queued on `stream`. */
int rtm_cuda_pack_trace_window(const float *traces, int receivers, int length, int first, int count,
                               float *window, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
