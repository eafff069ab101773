/* traces_cuda.cu - kernels of the trace pipeline and their extern "C" launchers: spectrum
 * spread, CUB segmented reduction of peak and energy, normalisation and merge. Every
 * launcher enqueues on the stream it is given and never synchronizes, so that it can be
 * captured into a CUDA graph. */
#include <cuda_runtime.h>

#include <cub/device/device_segmented_reduce.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include "rtm_cuda_check.h"
#include "traces_impl.h"

namespace {

constexpr int SPREAD_THREADS = 256;
constexpr int MERGE_THREADS = 256;

/* Spread: Y_k = factor_k X_k for k < bins_in (X at a warped frequency with a warp:
 * rtm_traces_input_at), 0 beyond (zero-padding of the spectrum).
 * Thread mapping: one block per output trace, threads stride over its bins_out bins. The
 * factor is formed in double (the phase ramp of a long shift needs it) exactly as the
 * FFTW loops do, so both backends apply the same numbers. */
__global__ void spread_kernel(const rtm_traces_trace_t *__restrict__ traces,
                              const float2 *__restrict__ spectrum_in,
                              float2 *__restrict__ spectrum_out) {
  const rtm_traces_trace_t *t = &traces[blockIdx.x];
  const float2 *x = spectrum_in + t->spectrum_in_offset;
  float2 *y = spectrum_out + t->spectrum_out_offset;
  const int bins_in = t->bins_in, bins_out = t->bins_out;
  for (int k = threadIdx.x; k < bins_out; k += blockDim.x) {
    float2 v = make_float2(0.0f, 0.0f);
    if (k < bins_in) {
      double re, im, xr, xi;
      rtm_traces_bin_factor(t, k, &re, &im);
      rtm_traces_input_at(t, (const float *)x, k, &xr, &xi);
      v.x = (float)(xr * re - xi * im);
      v.y = (float)(xr * im + xi * re);
    }
    y[k] = v;
  }
}

/* Segment o of the concatenated inverse FFT outputs: [real_offset, real_offset + length). */
struct segment_begin {
  const rtm_traces_trace_t *traces;
  __host__ __device__ long long operator()(int o) const { return traces[o].real_offset; }
};
struct segment_end {
  const rtm_traces_trace_t *traces;
  __host__ __device__ long long operator()(int o) const {
    return traces[o].real_offset + traces[o].length;
  }
};

/* y -> (y^2 in double, |y|): one pass gives both the peak and the energy. */
struct to_peak_energy {
  __host__ __device__ rtm_traces_peak_energy_t operator()(float y) const {
    rtm_traces_peak_energy_t r;
    r.energy = (double)y * (double)y;
    r.peak = fabsf(y);
    return r;
  }
};
struct combine_peak_energy {
  __host__ __device__ rtm_traces_peak_energy_t operator()(const rtm_traces_peak_energy_t &a,
                                                          const rtm_traces_peak_energy_t &b) const {
    rtm_traces_peak_energy_t r;
    r.energy = a.energy + b.energy;
    r.peak = fmaxf(a.peak, b.peak);
    return r;
  }
};

using begin_iterator = thrust::transform_iterator<segment_begin, thrust::counting_iterator<int>>;
using end_iterator = thrust::transform_iterator<segment_end, thrust::counting_iterator<int>>;
using value_iterator = thrust::transform_iterator<to_peak_energy, const float *>;

cudaError_t reduce(void *d_temp, size_t &temp_bytes, const rtm_traces_trace_t *d_traces,
                   int n_traces, const float *d_real, rtm_traces_peak_energy_t *d_out,
                   cudaStream_t stream) {
  thrust::counting_iterator<int> first(0);
  begin_iterator begins(first, segment_begin{d_traces});
  end_iterator ends(first, segment_end{d_traces});
  value_iterator values(d_real, to_peak_energy{});
  rtm_traces_peak_energy_t zero;
  zero.energy = 0.0;
  zero.peak = 0.0f;
  return cub::DeviceSegmentedReduce::Reduce(d_temp, temp_bytes, values, d_out, n_traces, begins,
                                            ends, combine_peak_energy{}, zero, stream);
}

/* Combine and merge: rms = sqrt(energy / length), divisor per the normalisation, then
 * gather[gather_offset + j] = real[real_offset + j] * (1 / divisor). Thread mapping: one
 * block per output trace, threads stride over its length samples; thread 0 writes the
 * trace's (peak, rms) into the stats that travel back with the gather. */
__global__ void merge_kernel(const rtm_traces_trace_t *__restrict__ traces,
                             const float *__restrict__ real,
                             const rtm_traces_peak_energy_t *__restrict__ peak_energy,
                             float *__restrict__ gather, double *__restrict__ stats) {
  const int o = blockIdx.x;
  const rtm_traces_trace_t *t = &traces[o];
  const rtm_traces_peak_energy_t pe = peak_energy[o];
  const int length = t->length;
  const double rms = sqrt(pe.energy / length);
  const float scale = (float)(1.0 / rtm_traces_norm_divisor(t->normalisation, pe.peak, rms));
  const float *y = real + t->real_offset;
  float *out = gather + t->gather_offset;
  for (int j = threadIdx.x; j < length; j += blockDim.x)
    out[j] = y[j] * scale;
  if (threadIdx.x == 0) {
    stats[2 * (size_t)o] = pe.peak;
    stats[2 * (size_t)o + 1] = rms;
  }
}

} // namespace

extern "C" int rtm_traces_cuda_spread(const rtm_traces_trace_t *d_traces, int n_traces,
                                      const void *d_spectrum_in, void *d_spectrum_out,
                                      void *stream) {
  int status = RTM_OK;
  spread_kernel<<<n_traces, SPREAD_THREADS, 0, (cudaStream_t)stream>>>(
      d_traces, (const float2 *)d_spectrum_in, (float2 *)d_spectrum_out);
  RTM_CUDA_TRY_LAUNCH("traces spread_kernel");
fail:
  return status;
}

extern "C" int rtm_traces_cuda_reduce_bytes(int n_traces, size_t *bytes) {
  int status = RTM_OK;
  *bytes = 0;
  RTM_CUDA_TRY(reduce(nullptr, *bytes, nullptr, n_traces, nullptr, nullptr, 0));
fail:
  return status;
}

extern "C" int rtm_traces_cuda_reduce(const rtm_traces_trace_t *d_traces, int n_traces,
                                      const float *d_real, rtm_traces_peak_energy_t *d_peak_energy,
                                      void *d_temp, size_t temp_bytes, void *stream) {
  int status = RTM_OK;
  RTM_CUDA_TRY(
      reduce(d_temp, temp_bytes, d_traces, n_traces, d_real, d_peak_energy, (cudaStream_t)stream));
  RTM_CUDA_TRY_LAUNCH("traces cub::DeviceSegmentedReduce");
fail:
  return status;
}

extern "C" int rtm_traces_cuda_merge(const rtm_traces_trace_t *d_traces, int n_traces,
                                     const float *d_real,
                                     const rtm_traces_peak_energy_t *d_peak_energy, float *d_gather,
                                     double *d_stats, void *stream) {
  int status = RTM_OK;
  merge_kernel<<<n_traces, MERGE_THREADS, 0, (cudaStream_t)stream>>>(
      d_traces, d_real, d_peak_energy, d_gather, d_stats);
  RTM_CUDA_TRY_LAUNCH("traces merge_kernel");
fail:
  return status;
}
