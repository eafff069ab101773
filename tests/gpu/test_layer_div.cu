/* test_layer_div.cu - the absorbing layer's divisions (solver/cuda/rtm_cuda_division.h)
 * against __fdiv_rn (the float division the cpu reference's C division is), bit for bit:
 * layer_div, and layer_div_fast with the reciprocal of __frcp_rn (the iso kernels' x and y
 * layer) and of layer_rcp (their z layer), where they hold, layer_div where not, as the
 * kernels call them. Numerators: every subnormal and its neighbours up to 2^-90 of both
 * signs, and zeros, over denominators 1 +- d in (0, 2), then random ones over every exponent;
 * every numerator of [1, 2) and (-2, -1] over the edges of [1/4, 2) (its ends, 1 and 1/2 and
 * their neighbours, the three floats whose significand is all ones: 1 / den lies next to a
 * power of two, where a reciprocal's corrections are known to be delicate); random numerators
 * over random denominators of [1/4, 2). And layer_rcp against __frcp_rn at every float of
 * [1/4, 2). A difference prints the first operands and fails; no CUDA device: exit 77
 * (skipped). */
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

/* one quotient against __fdiv_rn's */
__device__ void compare(float num, float den, float got, float want, Mismatch *out) {
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

/* The ways compared, a Mismatch each (and a row of WAYS for each set of numerators). */
enum { LAYER_DIV, FAST_FRCP, FAST_LAYER_RCP, WAYS };

/* How a kernel divides with the reciprocal rcp of den, whose range it checks: as iso's. */
__device__ float kernel_division(float num, float den, float rcp, bool rcp_holds) {
  return layer_div_fast_holds(num) && rcp_holds ? layer_div_fast(num, den, rcp)
                                                : layer_div(num, den);
}

/* numerator bit pattern `bits` over denominator den, each way into its out[way] */
__device__ void check(unsigned bits, float den, Mismatch *out) {
  float num;
  memcpy(&num, &bits, sizeof num);
  const float want = __fdiv_rn(num, den);
  compare(num, den, layer_div(num, den), want, &out[LAYER_DIV]);
  compare(num, den, kernel_division(num, den, __frcp_rn(den), layer_rcp_holds(den)), want,
          &out[FAST_FRCP]);
  compare(num, den, kernel_division(num, den, layer_rcp(den), layer_rcp_holds(den)), want,
          &out[FAST_LAYER_RCP]);
}

/* Every float of [1/4, 2): layer_rcp against __frcp_rn (num 1 in the mismatch). */
__global__ void every_reciprocal(Mismatch *out) {
  const unsigned first = 125u << 23, end = 128u << 23; /* 2^-2 .. 2^1 */
  for (unsigned bits = first + blockIdx.x * blockDim.x + threadIdx.x; bits < end;
       bits += gridDim.x * blockDim.x) {
    float den;
    memcpy(&den, &bits, sizeof den);
    compare(1.f, den, layer_rcp(den), __frcp_rn(den), out);
  }
}

/* Every pattern below 2^-90 in magnitude (exponent field < 37), both signs, zero included. */
__global__ void small_numerators(Mismatch *out) {
  const unsigned limit = 37u << 23;
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < 2u * limit;
       i += gridDim.x * blockDim.x) {
    const unsigned bits = (i < limit ? i : (i - limit) | 0x80000000u);
    check(bits, denominator(i * 7u), out);
  }
}

/* Random patterns over every exponent, infinities and NaN included. */
__global__ void random_numerators(Mismatch *out, unsigned count) {
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
       i += gridDim.x * blockDim.x)
    check(mix(i + 1u), denominator(mix(i + 7u)), out);
}

/* The edges of layer_rcp_holds's range, as bit patterns: 1/4 and its successor, 1/2 and its
 * neighbours, 1 and its neighbours, 2's predecessor (0x3effffff, 0x3f7fffff and 0x3fffffff:
 * the significands of all ones), 3/2. */
__constant__ unsigned edge_bits[] = {0x3e800000u, 0x3e800001u, 0x3effffffu, 0x3f000000u,
                                     0x3f000001u, 0x3f7fffffu, 0x3f800000u, 0x3f800001u,
                                     0x3fffffffu, 0x3fc00000u};
enum { EDGES = sizeof edge_bits / sizeof edge_bits[0] };

/* Every numerator of [1, 2) of both signs over each edge denominator. */
__global__ void edge_denominators(Mismatch *out) {
  const unsigned count = 2u << 23;
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
       i += gridDim.x * blockDim.x) {
    const unsigned bits = (127u << 23 | (i & 0x7fffffu)) | (i >> 23 ? 0x80000000u : 0u);
    for (int e = 0; e < EDGES; ++e) {
      float den;
      memcpy(&den, &edge_bits[e], sizeof den);
      check(bits, den, out);
    }
  }
}

/* Random numerators over random denominators of [1/4, 2). */
__global__ void random_denominators(Mismatch *out, unsigned count) {
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
       i += gridDim.x * blockDim.x) {
    const unsigned den_bits = (125u << 23) + mix(i + 11u) % (3u << 23);
    float den;
    memcpy(&den, &den_bits, sizeof den);
    check(mix(i + 3u), den, out);
  }
}

int main(void) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    printf("no CUDA device: skipped\n");
    return 77;
  }
  enum { SETS = 4, CHECKS = SETS * WAYS + 1 };
  Mismatch *d_out = NULL, host[CHECKS];
  if (cudaMalloc(&d_out, sizeof host) != cudaSuccess) return 1;
  cudaMemset(d_out, 0, sizeof host);
  small_numerators<<<4096, 256>>>(d_out);
  random_numerators<<<4096, 256>>>(d_out + WAYS, 1u << 28);
  edge_denominators<<<4096, 256>>>(d_out + 2 * WAYS);
  random_denominators<<<4096, 256>>>(d_out + 3 * WAYS, 1u << 28);
  every_reciprocal<<<4096, 256>>>(d_out + SETS * WAYS);
  if (cudaMemcpy(host, d_out, sizeof host, cudaMemcpyDeviceToHost) != cudaSuccess) {
    printf("FAIL: %s\n", cudaGetErrorString(cudaGetLastError()));
    return 1;
  }
  const char *sets[SETS] = {"numerators below 2^-90", "random numerators",
                            "[1, 2) over the edges of [1/4, 2)",
                            "random numerators over random denominators of [1/4, 2)"};
  const char *ways[WAYS] = {"layer_div", "layer_div_fast with __frcp_rn",
                            "layer_div_fast with layer_rcp"};
  int failed = 0;
  for (int k = 0; k < CHECKS; ++k) {
    char name[128];
    if (k < SETS * WAYS)
      snprintf(name, sizeof name, "%s, %s: = __fdiv_rn", ways[k % WAYS], sets[k / WAYS]);
    else
      snprintf(name, sizeof name, "layer_rcp, every float of [1/4, 2): = __frcp_rn");
    if (host[k].count == 0) {
      printf("ok: %s bit for bit\n", name);
      continue;
    }
    printf("FAIL: %s: %llu differ; first %a / %a: %a, want %a\n", name, host[k].count,
           host[k].num, host[k].den, host[k].got, host[k].want);
    failed = 1;
  }
  cudaFree(d_out);
  return failed;
}
