// run/experiments/cufft_jit.cu: which FFT lengths make cuFFT compile kernels at run time?
// For each length, a batched R2C and C2R plan (batch 2080, the dispersion warp's batch at
// 2001 samples) made and run once, timed: with CUDA_CACHE_DISABLE=1 a compiled-at-run-time
// length costs a compile in every process. Build and run (run/experiments/cufft_jit.sh).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <cufft.h>

int main(int argc, char **argv) {
  const int batch = 2080;
  cudaFree(0);
  for (int a = 1; a < argc; ++a) {
    const int n = atoi(argv[a]);
    float *real = nullptr;
    cufftComplex *spectrum = nullptr;
    cudaMalloc(&real, sizeof(float) * n * batch);
    cudaMalloc(&spectrum, sizeof(cufftComplex) * (n / 2 + 1) * batch);
    auto t0 = std::chrono::steady_clock::now();
    cufftHandle forward, inverse;
    cufftPlan1d(&forward, n, CUFFT_R2C, batch);
    cufftPlan1d(&inverse, n, CUFFT_C2R, batch);
    auto t1 = std::chrono::steady_clock::now();
    cufftExecR2C(forward, real, spectrum);
    cufftExecC2R(inverse, spectrum, real);
    cudaDeviceSynchronize();
    auto t2 = std::chrono::steady_clock::now();
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    cudaEventRecord(e0);
    for (int r = 0; r < 10; ++r) {
      cufftExecR2C(forward, real, spectrum);
      cufftExecC2R(inverse, spectrum, real);
    }
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    printf("%6d  plans %7.1f ms  first run %7.1f ms  then %6.3f ms a pair\n", n,
           std::chrono::duration<double, std::milli>(t1 - t0).count(),
           std::chrono::duration<double, std::milli>(t2 - t1).count(), ms / 10);
    cufftDestroy(forward);
    cufftDestroy(inverse);
    cudaFree(real);
    cudaFree(spectrum);
  }
  return 0;
}
