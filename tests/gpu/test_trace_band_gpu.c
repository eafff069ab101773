/* The time-dispersion warp's band on the GPU (solver/cuda/trace_window.cu) against its C
 * reference (rtm_traces_band_apply), bit for bit: windows that do and do not end on a group
 * of rows, a receiver count that fills no block, each window from the raw samples to its lag
 * only; and the band made by cuFFT against the band made by FFTW. Exits 77 (skipped)
 * without a CUDA device. */
#include <cuda_runtime_api.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rtm_cuda_trace_window.h"
#include "rtm_physics.h"
#include "rtm_status.h"
#include "rtm_test_main.h"
#include "rtm_test_random.h"
#include "rtm_traces.h"

enum { N = 900, RECEIVERS = 300 };
#define DT 0.002
#define PEAK_HZ 12.0

/* The band of a run at PEAK_HZ (its wavelet warped forward, as full warps it), made on
 * `backend`. */
static void make_band(const char *backend, rtm_traces_band_t *band) {
  static float wavelet[N];
  for (int i = 0; i < N; ++i)
    wavelet[i] = (float)rtm_ricker(i * DT, PEAK_HZ, 1.2 / PEAK_HZ);
  assert_int_equal(rtm_traces_dispersion("cpu", RTM_TRACES_WARP_FORWARD, 1, N, DT, wavelet),
                   RTM_OK);
  assert_int_equal(rtm_traces_band_build(backend, RTM_TRACES_WARP_INVERSE, N, DT,
                                         rtm_traces_band_limit_hz(wavelet, N, DT), band),
                   RTM_OK);
}

static void *device_copy(const void *host, size_t bytes) {
  void *device = NULL;
  assert_int_equal(cudaMalloc(&device, bytes), cudaSuccess);
  assert_int_equal(cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice), cudaSuccess);
  return device;
}

static void test_band_kernel(void **state) {
  (void)state;
  rtm_traces_band_t band;
  make_band("cpu", &band);
  const size_t groups = (size_t)band.groups, values = (size_t)band.offset[band.groups];
  rtm_cuda_band_t on_device = {band.groups, device_copy(band.first, groups * sizeof(int)),
                               device_copy(band.width, groups * sizeof(int)),
                               device_copy(band.offset, (groups + 1) * sizeof(long long)),
                               device_copy(band.coef, values * sizeof(float))};
  /* random samples, a few exactly zero, over six decades */
  const size_t size = (size_t)RECEIVERS * N;
  float *raw = malloc(size * sizeof *raw), *known = malloc(size * sizeof *known);
  float *want = malloc(size * sizeof *want), *got = malloc(size * sizeof *got);
  assert_true(raw && known && want && got);
  rtm_test_rng_t rng = rtm_test_seed("test_band_kernel");
  for (size_t i = 0; i < (size_t)RECEIVERS * N; ++i)
    raw[i] = i % 97 == 0 ? 0.0f
                         : (float)(rtm_test_uniform(&rng, -1.0, 1.0) *
                                   pow(10.0, rtm_test_uniform(&rng, -3.0, 3.0)));
  float *traces = NULL, *window = NULL;
  assert_int_equal(cudaMalloc((void **)&traces, size * sizeof *traces), cudaSuccess);
  assert_int_equal(cudaMalloc((void **)&window, size * sizeof *window), cudaSuccess);
  const int windows[3] = {RTM_TRACES_BAND_ROWS, 5 * RTM_TRACES_BAND_ROWS, 200};
  for (int w = 0; w < 3; ++w) {
    const int span =
        (windows[w] + RTM_TRACES_BAND_ROWS - 1) / RTM_TRACES_BAND_ROWS * RTM_TRACES_BAND_ROWS;
    int checked = 0;
    for (int first = 0; first < N; first += span, ++checked) {
      const int count = first + span <= N ? span : N - first;
      const int recorded = first + count + band.lag;
      for (int r = 0; r < RECEIVERS; ++r)
        for (int i = 0; i < N; ++i)
          known[(size_t)r * N + i] = i < recorded ? raw[(size_t)r * N + i] : 0.0f;
      assert_int_equal(cudaMemcpy(traces, known, size * sizeof *known, cudaMemcpyHostToDevice),
                       cudaSuccess);
      assert_int_equal(
          rtm_cuda_band_trace_window(traces, RECEIVERS, N, first, count, &on_device, window, 0),
          RTM_OK);
      assert_int_equal(cudaMemcpy(got, window, sizeof(float) * RECEIVERS * (size_t)count,
                                  cudaMemcpyDeviceToHost),
                       cudaSuccess);
      rtm_traces_band_apply(&band, raw, N, RECEIVERS, first, count, want);
      assert_memory_equal(got, want, sizeof(float) * RECEIVERS * (size_t)count);
    }
    printf("kernel: %d windows of %d samples of %d receivers, lag %d: the reference's bits\n",
           checked, span, RECEIVERS, band.lag);
  }
  cudaFree(traces);
  cudaFree(window);
  cudaFree(on_device.first);
  cudaFree(on_device.width);
  cudaFree(on_device.offset);
  cudaFree(on_device.coef);
  free(raw);
  free(known);
  free(want);
  free(got);
  rtm_traces_band_release(&band);
}

/* cuFFT and FFTW round differently: the two bands' coefficients agree to the FFTs' float
 * rounding, but for entries at a cut edge that one keeps and the other cuts (each below
 * 1e-4 of its row's largest). */
static void test_band_backends(void **state) {
  (void)state;
  rtm_traces_band_t cpu, cuda;
  make_band("cpu", &cpu);
  make_band("cuda", &cuda);
  assert_int_equal(cpu.groups, cuda.groups);
  double largest = 0.0, worst = 0.0;
  int edge = 0;
  for (int g = 0; g < cpu.groups; ++g) {
    edge = abs(cpu.first[g] - cuda.first[g]) > edge ? abs(cpu.first[g] - cuda.first[g]) : edge;
    for (int c = 0; c < cpu.width[g]; ++c) {
      const int column = cpu.first[g] + c, at = column - cuda.first[g];
      for (int j = 0; j < RTM_TRACES_BAND_ROWS; ++j) {
        const double a = cpu.coef[cpu.offset[g] + (long long)c * RTM_TRACES_BAND_ROWS + j];
        const double b = at >= 0 && at < cuda.width[g]
                             ? cuda.coef[cuda.offset[g] + (long long)at * RTM_TRACES_BAND_ROWS + j]
                             : 0.0;
        largest = fabs(a) > largest ? fabs(a) : largest;
        worst = fabs(a - b) > worst ? fabs(a - b) : worst;
      }
    }
  }
  printf("backends: cuFFT's band against FFTW's: largest difference %.2e of the largest entry, "
         "cut edges moved by %d columns at most, lag %d against %d\n",
         worst / largest, edge, cuda.lag, cpu.lag);
  assert_true(worst < 1e-4 * largest);
  rtm_traces_band_release(&cpu);
  rtm_traces_band_release(&cuda);
}

RTM_TEST_MAIN_CUDA("test_trace_band_gpu", NULL, NULL, cmocka_unit_test(test_band_kernel),
                   cmocka_unit_test(test_band_backends))
