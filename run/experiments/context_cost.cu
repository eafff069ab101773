// context_cost.cu - what a process pays for the GPU before its first kernel: cuInit, the
// primary context (cudaFree(0)), cudaMemGetInfo, 1 GiB of cudaMalloc and its memset, 64 MiB
// of page-locked host memory. Built and run by context_cost.sh; seconds on one line.
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

int main(void) {
  const double t0 = now();
  cuInit(0);
  const double t1 = now();
  cudaFree(0);
  const double t2 = now();
  size_t free_bytes = 0, total = 0;
  cudaMemGetInfo(&free_bytes, &total);
  const double t3 = now();
  void *device = NULL, *host = NULL;
  cudaMalloc(&device, (size_t)1 << 30);
  const double t4 = now();
  cudaMemset(device, 0, (size_t)1 << 30);
  cudaDeviceSynchronize();
  const double t5 = now();
  cudaMallocHost(&host, (size_t)64 << 20);
  const double t6 = now();
  printf("cuInit %.3f  context %.3f  meminfo %.4f  malloc 1 GiB %.4f  memset %.4f  "
         "pinned 64 MiB %.4f  (s)\n",
         t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4, t6 - t5);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
