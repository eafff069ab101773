/* rtm_cuda_trace_window.h - a window of samples of every trace, packed on the device
 * (trace_window.cu), so that it leaves the device in one dense copy: as recorded, or
 * corrected for time dispersion by the warp's band (rtm_traces_band_t) on the way. */
#ifndef RTM_CUDA_TRACE_WINDOW_H
#define RTM_CUDA_TRACE_WINDOW_H

#include <cuda_runtime_api.h>

#include "rtm_traces.h"

#ifdef __cplusplus
extern "C" {
#endif

/* window[r][s] = traces[r][first + s] for r < receivers, s < count, where traces holds
 * `length` samples a receiver; queued on `stream`. */
int rtm_cuda_pack_trace_window(const float *traces, int receivers, int length, int first, int count,
                               float *window, cudaStream_t stream);

/* A warp band (rtm_traces_band_t) in device memory: its arrays copied as they are. */
typedef struct {
  int groups;
  int *first, *width;
  long long *offset;
  float *coef;
} rtm_cuda_band_t;

/* window[r][s] = corrected sample first + s of trace r (rtm_traces_band_apply's sums, bit for
 * bit), for r < receivers, s < count, first a multiple of RTM_TRACES_BAND_ROWS; traces holds
 * `length` samples a receiver, known to first + count + band lag; queued on `stream`. */
int rtm_cuda_band_trace_window(const float *traces, int receivers, int length, int first, int count,
                               const rtm_cuda_band_t *band, float *window, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
