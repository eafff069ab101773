/* test_layer_div.cu - layer_div (solver/cuda/rtm_cuda_division.h), the absorbing layer's
 * division, against __fdiv_rn (the float division the cpu reference's C division is), bit
 * for bit: every subnormal numerator and its neighbours up to 2^-90 of both signs, and zeros,
 * over denominators 1 +- d in (0, 2), then random numerators over every exponent. A
 * difference prints the first operands and fails; no CUDA device: exit 77 (skipped). */
#include <cuda_runtime.h>

#include <stdio.h>
#include <string.h>

#include "rtm_cuda_division.h"

/* Denominators 1 +- d of the layer's profile: d from 1e-7 to 0.95, both signs. */
__device__ float denominator(unsigned k) {
  const float d = (float)(k % 64u + 1u) / 64.f * 0.95f * ((k / 64u) % 2u ? 1e-5f : 1.f);
  return (k / 128u) % 2u ? 1.f - d : 1.f + d;
}

/* xorshift, for the random numerators' bit patterns */
__device__ unsigned mix(unsigned x) {
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  return x * 2654435761u;
}

struct Mismatch {
  unsigned long long count;
  float num, den, got, want;
};

/* numerator bit pattern `bits` over every denominator k of this thread's stride */
__device__ void check(unsigned bits, unsigned k, Mismatch *out) {
  float num, den = denominator(k);
  memcpy(&num, &bits, sizeof num);
  const float got = layer_div(num, den), want = __fdiv_rn(num, den);
  unsigned got_bits, want_bits;
  memcpy(&got_bits, &got, sizeof got);
  memcpy(&want_bits, &want, sizeof want);
  if (got_bits == want_bits || (got != got && want != want)) return; /* NaN payloads aside */
  if (atomicAdd(&out->count, 1ull) == 0) {
    out->num = num;
    out->den = den;
    out->got = got;
    out->want = want;
  }
}

/* Every pattern below 2^-90 in magnitude (exponent field < 37), both signs, zero included. */
__global__ void small_numerators(Mismatch *out) {
  const unsigned limit = 37u << 23;
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < 2u * limit;
       i += gridDim.x * blockDim.x) {
    const unsigned bits = (i < limit ? i : (i - limit) | 0x80000000u);
    check(bits, i * 7u, out);
  }
}

/* Random patterns over every exponent, infinities and NaN included. */
__global__ void random_numerators(Mismatch *out, unsigned count) {
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
       i += gridDim.x * blockDim.x)
    check(mix(i + 1u), mix(i + 7u), out);
}

int main(void) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    printf("no CUDA device: skipped\n");
    return 77;
  }
  Mismatch *d_out = NULL, host[2];
  if (cudaMalloc(&d_out, 2 * sizeof *d_out) != cudaSuccess) return 1;
  cudaMemset(d_out, 0, 2 * sizeof *d_out);
  small_numerators<<<4096, 256>>>(d_out);
  random_numerators<<<4096, 256>>>(d_out + 1, 1u << 28);
  if (cudaMemcpy(host, d_out, sizeof host, cudaMemcpyDeviceToHost) != cudaSuccess) {
    printf("FAIL: %s\n", cudaGetErrorString(cudaGetLastError()));
    return 1;
  }
  const char *names[2] = {"numerators below 2^-90", "random numerators"};
  int failed = 0;
  for (int k = 0; k < 2; ++k) {
    if (host[k].count == 0) {
      printf("ok: %s: layer_div = __fdiv_rn bit for bit\n", names[k]);
      continue;
    }
    printf("FAIL: %s: %llu differ; first %a / %a: %a, __fdiv_rn %a\n", names[k], host[k].count,
           host[k].num, host[k].den, host[k].got, host[k].want);
    failed = 1;
  }
  cudaFree(d_out);
  return failed;
}
