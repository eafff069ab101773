/* run/experiments/codec_bench.cu - the codec's CUDA kernels timed at 512^3 (a Ricker shell)
 * and their bytes and floats checked against the C reference at 256^3; codec_bench.sh builds
 * it against a tree's codec_cuda.cu and codec.c (no CMake) and runs it. Argument: 1 checks. */
#include <cuda_runtime.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
extern "C" {
#include "rtm_codec.h"
#include "rtm_cuda_codec.h"
void rtm_log_error(const char *f, ...) {
  va_list a;
  va_start(a, f);
  vfprintf(stderr, f, a);
  va_end(a);
  fputc('\n', stderr);
}
}
#define CK(x)                                                                                      \
  do {                                                                                             \
    cudaError_t e_ = (x);                                                                          \
    if (e_ != cudaSuccess) {                                                                       \
      fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));                                     \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

static void fill(float *v, int n, double r0, double lambda) {
  const double c = n / 2.0 - 0.3;
#pragma omp parallel for
  for (int z = 0; z < n; ++z)
    for (int y = 0; y < n; ++y)
      for (int x = 0; x < n; ++x) {
        const double dx = x - c, dy = y - c * 0.9, dz = z - c * 0.8;
        const double r = sqrt(dx * dx + dy * dy + dz * dz) + 1.0;
        const double u = M_PI * (r - r0) / lambda, a = u * u;
        const double w = (1.0 - 2.0 * a) * exp(-a);
        const double w2 = (1.0 - 2.0 * a * 0.5) * exp(-a * 0.5) * 0.3;
        v[((size_t)z * n + y) * n + x] = fabs(u) > 12 ? 0.0f : (float)((w + w2 * dz / r) * 1e-3 / r);
      }
}

/* A cube of m^3 on the device: the volume, a receiver (both v), image and illumination
 * zeroed, the compressed bytes and the coder's scratch. */
struct Dev {
  float *v, *r, *im, *il;
  void *c, *s;
};
static Dev dev_make(int m, int rate, const float *v) {
  const int n[3] = {m, m, m};
  const size_t cells = (size_t)m * m * m;
  Dev d;
  CK(cudaMalloc(&d.v, cells * 4));
  CK(cudaMalloc(&d.r, cells * 4));
  CK(cudaMalloc(&d.im, cells * 4));
  CK(cudaMalloc(&d.il, cells * 4));
  CK(cudaMalloc(&d.c, rtm_codec_bytes(n, rate)));
  CK(cudaMalloc(&d.s, rtm_codec_scratch_bytes(n)));
  CK(cudaMemcpy(d.v, v, cells * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d.r, v, cells * 4, cudaMemcpyHostToDevice));
  CK(cudaMemset(d.im, 0, cells * 4));
  CK(cudaMemset(d.il, 0, cells * 4));
  return d;
}
static void dev_free(Dev &d) {
  cudaFree(d.v), cudaFree(d.r), cudaFree(d.im), cudaFree(d.il), cudaFree(d.c), cudaFree(d.s);
}

int main(int argc, char **argv) {
  const int check = argc > 1 ? atoi(argv[1]) : 1;
  int failures = 0;
  for (int rate = 6; rate >= 4; rate -= 2) {
    /* the device against the reference, 256^3 */
    if (check) {
      const int m = 256, n[3] = {m, m, m};
      const size_t cells = (size_t)m * m * m, bytes = rtm_codec_bytes(n, rate);
      float *v = (float *)malloc(cells * 4), *ref = (float *)malloc(cells * 4),
            *got = (float *)malloc(cells * 4);
      void *comp = malloc(bytes), *dcomp_host = malloc(bytes);
      fill(v, m, 70.0, 10.0);
      size_t refused;
      if (rtm_codec_compress(v, n, m, (size_t)m * m, rate, comp, &refused)) return 1;
      if (rtm_codec_decompress(comp, n, rate, ref, m, (size_t)m * m)) return 1;
      Dev d = dev_make(m, rate, v);
      if (rtm_cuda_codec_compress(d.v, n, m, (size_t)m * m, rate, d.c, d.s, NULL, 0)) return 1;
      CK(cudaMemcpy(dcomp_host, d.c, bytes, cudaMemcpyDeviceToHost));
      const int same_bytes = !memcmp(dcomp_host, comp, bytes);
      CK(cudaMemset(d.v, 0, cells * 4));
      if (rtm_cuda_codec_decompress(d.c, n, rate, d.s, d.v, m, (size_t)m * m, 0)) return 1;
      CK(cudaMemcpy(got, d.v, cells * 4, cudaMemcpyDeviceToHost));
      const int same_floats = !memcmp(got, ref, cells * 4);
      /* imaged: receiver = v, image 0, illumination 0 -> fmaf(s, v, 0), fmaf(s, s, 0) */
      if (rtm_cuda_codec_decompress_image(d.c, n, rate, d.s, d.im, d.il, d.r, m, (size_t)m * m, 0))
        return 1;
      CK(cudaMemcpy(got, d.im, cells * 4, cudaMemcpyDeviceToHost));
      size_t bad_image = 0;
      for (size_t i = 0; i < cells; ++i)
        if (got[i] != fmaf(ref[i], v[i], 0.0f)) ++bad_image;
      CK(cudaMemcpy(got, d.il, cells * 4, cudaMemcpyDeviceToHost));
      for (size_t i = 0; i < cells; ++i)
        if (got[i] != fmaf(ref[i], ref[i], 0.0f)) ++bad_image;
      printf("check 256^3 rate %d: bytes %s, floats %s, imaged cells off %zu\n", rate,
             same_bytes ? "same" : "DIFFER", same_floats ? "same" : "DIFFER", bad_image);
      failures += !same_bytes + !same_floats + (bad_image != 0);
      dev_free(d);
      free(v); free(ref); free(got); free(comp); free(dcomp_host);
    }
    /* timing, 512^3 */
    const int m = 512, n[3] = {m, m, m};
    const size_t cells = (size_t)m * m * m, bytes = rtm_codec_bytes(n, rate);
    float *v = (float *)malloc(cells * 4);
    fill(v, m, 150.0, 10.0);
    Dev d = dev_make(m, rate, v);
    cudaEvent_t e[4];
    for (int i = 0; i < 4; ++i) cudaEventCreate(&e[i]);
    const int reps = 20;
    float best[3] = {1e9f, 1e9f, 1e9f};
    for (int rep = 0; rep < reps; ++rep) {
      cudaEventRecord(e[0]);
      if (rtm_cuda_codec_compress(d.v, n, m, (size_t)m * m, rate, d.c, d.s, NULL, 0)) return 1;
      cudaEventRecord(e[1]);
      if (rtm_cuda_codec_decompress(d.c, n, rate, d.s, d.r, m, (size_t)m * m, 0)) return 1;
      cudaEventRecord(e[2]);
      if (rtm_cuda_codec_decompress_image(d.c, n, rate, d.s, d.im, d.il, d.v, m, (size_t)m * m, 0))
        return 1;
      cudaEventRecord(e[3]);
      CK(cudaEventSynchronize(e[3]));
      for (int k = 0; k < 3; ++k) {
        float ms;
        cudaEventElapsedTime(&ms, e[k], e[k + 1]);
        if (rep > 1 && ms < best[k]) best[k] = ms;
      }
    }
    printf("512^3 rate %d: compress %.3f ms, decompress %.3f ms, decompress+image %.3f ms "
           "(best of %d)\n", rate, best[0], best[1], best[2], reps - 2);
    dev_free(d);
    free(v);
  }
  return failures != 0;
}
