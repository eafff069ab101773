/* run/experiments/pin_speed.c - how fast page-locked host memory can be had (the pinned
 * store's set-up: run/experiments/pinned_ways.sh found 0.46 s a GB): cudaHostAlloc and the
 * memset that follows it, against an anonymous mapping faulted in (huge pages advised) by
 * THREADS threads and then registered with cudaHostRegister; each with its release.
 * Built and run by pin_speed.sh. Usage: pin_speed GB THREADS */
#define _GNU_SOURCE
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

typedef struct {
  char *base;
  size_t bytes;
} part_t;

static void *populate(void *arg) {
  const part_t *p = arg;
#ifdef MADV_POPULATE_WRITE
  if (madvise(p->base, p->bytes, MADV_POPULATE_WRITE) == 0) return NULL;
#endif
  for (size_t at = 0; at < p->bytes; at += 4096)
    p->base[at] = 0;
  return NULL;
}

static void *zero(void *arg) {
  const part_t *p = arg;
  memset(p->base, 0, p->bytes);
  return NULL;
}

/* fn over THREADS parts of [base, base + bytes), 2 MB aligned */
static void over_threads(void *(*fn)(void *), char *base, size_t bytes, int threads) {
  pthread_t id[64];
  part_t part[64];
  const size_t unit = 2u << 20, each = (bytes / threads + unit - 1) / unit * unit;
  int n = 0;
  for (size_t at = 0; at < bytes && n < 64; at += each, ++n) {
    part[n].base = base + at;
    part[n].bytes = bytes - at < each ? bytes - at : each;
    pthread_create(&id[n], NULL, fn, &part[n]);
  }
  for (int i = 0; i < n; ++i)
    pthread_join(id[i], NULL);
}

int main(int argc, char **argv) {
  const double gb = argc > 1 ? atof(argv[1]) : 8.0;
  const int threads = argc > 2 ? atoi(argv[2]) : 16;
  const size_t bytes = (size_t)(gb * 1e9) / (2u << 20) * (2u << 20);
  double t0 = now();
  cudaFree(0);
  printf("context %.3f s\n", now() - t0);

  void *ptr = NULL;
  t0 = now();
  if (cudaHostAlloc(&ptr, bytes, cudaHostAllocDefault) != cudaSuccess) return 1;
  const double alloc = now() - t0;
  t0 = now();
  memset(ptr, 0, bytes);
  const double set1 = now() - t0;
  t0 = now();
  over_threads(zero, ptr, bytes, threads);
  const double setn = now() - t0;
  t0 = now();
  cudaFreeHost(ptr);
  printf("cudaHostAlloc %.2f GB: %.3f s, memset %.3f s, memset on %d threads %.3f s, free %.3f s\n",
         bytes / 1e9, alloc, set1, threads, setn, now() - t0);

  for (int huge = 0; huge < 2; ++huge)
    for (int n = 1; n <= threads; n *= threads) {
      t0 = now();
      char *map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (map == MAP_FAILED) return 1;
      if (huge) madvise(map, bytes, MADV_HUGEPAGE);
      over_threads(populate, map, bytes, n);
      const double fault = now() - t0;
      t0 = now();
      const cudaError_t e = cudaHostRegister(map, bytes, cudaHostRegisterPortable);
      const double reg = now() - t0;
      t0 = now();
      if (e == cudaSuccess) cudaHostUnregister(map);
      munmap(map, bytes);
      printf("mmap%s, faulted in on %2d threads: %.3f s, cudaHostRegister %.3f s (%s), release "
             "%.3f s\n",
             huge ? " (huge pages advised)" : "", n, fault, reg, cudaGetErrorString(e), now() - t0);
    }
  return 0;
}
