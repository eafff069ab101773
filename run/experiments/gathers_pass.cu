/* run/experiments/gathers_pass.cu - the offset gathers' kernel (gathers_kernel of
 * solver/rtm/imaging_cuda.cu as at 533923f, copied here so that it builds alone) at the plan
 * of the 512^3 survey of run/results/end_to_end.md (900 CIPs, 16 lags each way), timed a
 * pass and an imaging step: 1, 2 and 4 steps a pass, with the held fields' copies of S and
 * R, or of R alone (S read where the store keeps it), and the kernel alone; then the
 * device's copy rate. A copy here is of the non-absorbing interior, (n - 2 layer)^3
 * floats; the product's packs copy the whole n^3, a quarter more bytes at 512^3. Fields
 * zero (the time does not depend on the values). Run by gathers_pass.sh. */
#include <cstdio>
#include <cstdint>
#include <cuda_runtime.h>
struct rtm_layout_t {
  long long origin, stride_y, stride_z;
};
struct rtm_gather_plan_t {
  int lags;
  int first[2], step[2], count[2];
  int layer;
};
static __device__ __forceinline__ long long element(const rtm_layout_t &layout, int ix,
                                                    long long iy, long long iz) {
  return layout.origin + iz * layout.stride_z + iy * layout.stride_y + ix;
}
enum { GATHER_Z = 64, GATHER_THREADS = 256, MAXS = 4 };
struct GatherSteps {
  const float *source[MAXS], *receiver[MAXS];
  rtm_layout_t source_layout[MAXS], receiver_layout[MAXS];
};
template <int STEPS>
static __device__ __forceinline__ float
gather_element(const float *const s[], const float *const r[], const long long s_z[],
               const long long r_z[], int dz, float g) {
#pragma unroll
  for (int t = 0; t < STEPS; ++t)
    g = __fmaf_rn(__ldg(s[t] + dz * s_z[t]), __ldg(r[t] + dz * r_z[t]), g);
  return g;
}
template <int STEPS>
static __global__ void __launch_bounds__(GATHER_THREADS)
    gathers_kernel(rtm_gather_plan_t plan, int nx, int ny, long long z_begin, long long z_end,
                   long long nz_local, float *__restrict__ values, const GatherSteps steps) {
  const int lags = plan.lags, nh = 2 * lags + 1, w = plan.layer;
  const long long index = (long long)blockIdx.x * GATHER_THREADS + threadIdx.x;
  const int line = nh * plan.count[0];
  if (index >= (long long)line * nh * plan.count[1]) return;
  const long long z0 = z_begin + (long long)blockIdx.y * GATHER_Z;
  const int depths = (int)(z_end - z0 < GATHER_Z ? z_end - z0 : GATHER_Z);
  const int jy = (int)(index / line), rest = (int)(index - (long long)jy * line);
  const int j = jy / nh, hy = jy - j * nh - lags, i = rest / nh, hx = rest - i * nh - lags;
  const int cx = plan.first[0] + i * plan.step[0], cy = plan.first[1] + j * plan.step[1];
  if (cy - hy < w || cy - hy >= ny - w || cy + hy < w || cy + hy >= ny - w) return;
  if (cx - hx < w || cx - hx >= nx - w || cx + hx < w || cx + hx >= nx - w) return;
  const float *s[STEPS], *r[STEPS];
  long long s_z[STEPS], r_z[STEPS];
#pragma unroll
  for (int t = 0; t < STEPS; ++t) {
    s[t] = steps.source[t] + element(steps.source_layout[t], cx - hx, cy - hy, z0);
    r[t] = steps.receiver[t] + element(steps.receiver_layout[t], cx + hx, cy + hy, z0);
    s_z[t] = steps.source_layout[t].stride_z;
    r_z[t] = steps.receiver_layout[t].stride_z;
  }
  const long long cip = (long long)j * plan.count[0] + i;
  float *g = values + ((cip * nh + hy + lags) * nh + hx + lags) * nz_local + z0;
  int dz = 0;
  for (; dz < depths && ((uintptr_t)(g + dz) & 15u) != 0; ++dz)
    g[dz] = gather_element<STEPS>(s, r, s_z, r_z, dz, g[dz]);
  for (; dz + 4 <= depths; dz += 4) {
    float4 v = *reinterpret_cast<const float4 *>(g + dz);
    v.x = gather_element<STEPS>(s, r, s_z, r_z, dz, v.x);
    v.y = gather_element<STEPS>(s, r, s_z, r_z, dz + 1, v.y);
    v.z = gather_element<STEPS>(s, r, s_z, r_z, dz + 2, v.z);
    v.w = gather_element<STEPS>(s, r, s_z, r_z, dz + 3, v.w);
    *reinterpret_cast<float4 *>(g + dz) = v;
  }
  for (; dz < depths; ++dz)
    g[dz] = gather_element<STEPS>(s, r, s_z, r_z, dz, g[dz]);
}
#define CK(x)                                                                                      \
  do {                                                                                             \
    cudaError_t e = (x);                                                                           \
    if (e != cudaSuccess) {                                                                        \
      printf("%s: %s\n", #x, cudaGetErrorString(e));                                               \
      return 1;                                                                                    \
    }                                                                                              \
  } while (0)
int main() {
  const int n = 512, w = 20, lags = 16, step = 16;
  rtm_gather_plan_t plan;
  plan.lags = lags;
  plan.layer = w;
  for (int a = 0; a < 2; ++a) {
    int width = n - 2 * w;
    plan.step[a] = step;
    plan.count[a] = (width - 1) / step + 1;
    plan.first[a] = w + (width - 1 - (plan.count[a] - 1) * step) / 2;
  }
  const long long nh = 2 * lags + 1, cips = (long long)plan.count[0] * plan.count[1];
  const long long nzl = n, cells = (long long)n * n * n, gcells = cips * nh * nh * nzl;
  printf("cips %lld, gathers %.3f GB, a field %.3f GB\n", cips, gcells * 4e-9, cells * 4e-9);
  float *G, *F[10];
  CK(cudaMalloc(&G, gcells * 4));
  CK(cudaMemset(G, 0, gcells * 4));
  for (int k = 0; k < 10; ++k) {
    CK(cudaMalloc(&F[k], cells * 4));
    CK(cudaMemset(F[k], 0, cells * 4));
  }
  rtm_layout_t dense = {0, n, (long long)n * n};
  const long long threads = cips * nh * nh;
  dim3 blocks((unsigned)((threads + GATHER_THREADS - 1) / GATHER_THREADS),
              (unsigned)((n - 2 * w + GATHER_Z - 1) / GATHER_Z));
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  // per configuration: B steps a pass, packs copies a pass (0..2(B-1)), time per step
  struct {
    int B, packs;
    const char *name;
  } cfg[] = {{1, 0, "B=1, no pack"},
             {2, 2, "B=2, S and R packed"},
             {2, 1, "B=2, R packed, S in place"},
             {4, 6, "B=4, S and R packed"},
             {4, 3, "B=4, R packed, S in place"},
             {2, 0, "B=2 kernel alone"},
             {4, 0, "B=4 kernel alone"}};
  const size_t pack = (size_t)(n - 2 * w) * (n - 2 * w) * (n - 2 * w) * 4;
  for (int round = 0; round < 2; ++round)
    for (auto &c : cfg) {
      GatherSteps st = {};
      for (int t = 0; t < c.B; ++t) {
        st.source[t] = F[2 * t];
        st.receiver[t] = F[2 * t + 1];
        st.source_layout[t] = dense;
        st.receiver_layout[t] = dense;
      }
      const int reps = 12;
      for (int k = 0; k <= reps; ++k) {
        if (k == 1) cudaEventRecord(a);
        for (int p = 0; p < c.packs; ++p)
          CK(cudaMemcpyAsync(F[9], F[8], pack, cudaMemcpyDeviceToDevice));
        if (c.B == 1)
          gathers_kernel<1><<<blocks, GATHER_THREADS>>>(plan, n, n, w, n - w, nzl, G, st);
        else if (c.B == 2)
          gathers_kernel<2><<<blocks, GATHER_THREADS>>>(plan, n, n, w, n - w, nzl, G, st);
        else
          gathers_kernel<4><<<blocks, GATHER_THREADS>>>(plan, n, n, w, n - w, nzl, G, st);
        CK(cudaGetLastError());
      }
      cudaEventRecord(b);
      CK(cudaEventSynchronize(b));
      float ms = 0;
      cudaEventElapsedTime(&ms, a, b);
      printf("round %d  %-30s  a pass %.3f ms  an imaging step %.3f ms\n", round, c.name, ms / reps,
             ms / reps / c.B);
    }
  // the copy's rate, for the roofline
  cudaEventRecord(a);
  for (int k = 0; k < 10; ++k)
    CK(cudaMemcpyAsync(F[9], F[8], cells * 4, cudaMemcpyDeviceToDevice));
  cudaEventRecord(b);
  CK(cudaEventSynchronize(b));
  float ms = 0;
  cudaEventElapsedTime(&ms, a, b);
  printf("copy %.0f GB/s (read + write)\n", 2.0 * cells * 4 * 10 / (ms * 1e-3) / 1e9);
  return 0;
}
