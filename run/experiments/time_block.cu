// time_block.cu - an experiment: two leapfrog steps of the iso equation fused in
// one z-march, measured against the single-sweep bound. A standalone experiment, not the
// product's kernel: a 512^3 interior, v^2 dt^2 varying from cell to cell, without damping,
// sources or receivers, padded by 2R on every side (zeros), so that only the fusion is
// measured.
//
// Fused kernel: a block owns a BX x BY tile of outputs and has one thread per cell of the
// tile grown by R on each side (BX + 2R) x (BY + 2R). At iteration i it loads plane i of
// p[n] with a 2R halo into a ring (shared), pushes its column's value into a register queue
// (9 planes), computes p[n+1] of plane i - R on the grown tile (the halo of the second step;
// cells outside the interior are 0, as the reference leaves them) into a second ring, stores
// it where the cell is the block's own, then (own cells) pushes p[n+1] into a second queue
// and computes p[n+2] of plane i - 2R, p[n] there being the first queue's oldest entry. Two
// barriers an iteration. Reads p[n], p[n-1], v once, writes p[n+1] and p[n+2]: 20 bytes for
// two steps against 16 a step, and the grown tile's step costs (BX+2R)(BY+2R) / (BX BY)
// times the work. The fields can not be updated in place: a neighbour's grown tile reads
// p[n-1] and p[n] where this block writes, so p[n+1] and p[n+2] go to two other arrays.
//
// Reference: one thread a cell, one step, the same update function (the same rounding);
// run twice, its p[n+1] and p[n+2] must equal the fused kernel's bit for bit.
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(x)                                                                                   \
  do {                                                                                             \
    cudaError_t e_ = (x);                                                                          \
    if (e_ != cudaSuccess) {                                                                       \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));          \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

constexpr int R = 4, PAD = 2 * R;
struct Dims {
  int n, np;              // interior cells a side, padded (n + 2 PAD)
  long long plane;        // np * np
};
__constant__ float c_w[R + 1];
__constant__ float c_ih2;

__device__ __forceinline__ long long at(const Dims &d, int x, int y, int z) {
  return ((long long)z * d.np + y) * d.np + x;
}
__device__ __forceinline__ bool interior(const Dims &d, int x, int y, int z) {
  return x >= PAD && x < PAD + d.n && y >= PAD && y < PAD + d.n && z >= PAD && z < PAD + d.n;
}
// The update, every operation rounded on its own in one order (the product's update4).
__device__ __forceinline__ float update(float p, const float *xm, const float *xp, const float *ym,
                                        const float *yp, const float *zm, const float *zp,
                                        float prev, float v) {
  float dx = __fmul_rn(c_w[0], p), dy = dx, dz = dx;
#pragma unroll
  for (int m = 1; m <= R; ++m) {
    dx = __fadd_rn(dx, __fmul_rn(c_w[m], __fadd_rn(xp[m - 1], xm[m - 1])));
    dy = __fadd_rn(dy, __fmul_rn(c_w[m], __fadd_rn(yp[m - 1], ym[m - 1])));
    dz = __fadd_rn(dz, __fmul_rn(c_w[m], __fadd_rn(zp[m - 1], zm[m - 1])));
  }
  const float lap = __fadd_rn(__fadd_rn(__fmul_rn(dx, c_ih2), __fmul_rn(dy, c_ih2)),
                              __fmul_rn(dz, c_ih2));
  return __fadd_rn(__fsub_rn(2.f * p, prev), __fmul_rn(v, lap));
}

__global__ void reference_step(const float *p, const float *prev, const float *v, float *out,
                               Dims d) {
  const int x = PAD + blockIdx.x * blockDim.x + threadIdx.x, y = PAD + blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= PAD + d.n || y >= PAD + d.n) return;
  for (int z = PAD; z < PAD + d.n; ++z) {
    float xm[R], xp[R], ym[R], yp[R], zm[R], zp[R];
    for (int m = 1; m <= R; ++m) {
      xm[m - 1] = p[at(d, x - m, y, z)];
      xp[m - 1] = p[at(d, x + m, y, z)];
      ym[m - 1] = p[at(d, x, y - m, z)];
      yp[m - 1] = p[at(d, x, y + m, z)];
      zm[m - 1] = p[at(d, x, y, z - m)];
      zp[m - 1] = p[at(d, x, y, z + m)];
    }
    const long long c = at(d, x, y, z);
    out[c] = update(p[c], xm, xp, ym, yp, zm, zp, prev[c], v[c]);
  }
}

template <int BX, int BY> constexpr size_t fused_shared_bytes() {
  return sizeof(float) * (size_t)(R + 2) * ((BX + 4 * R) * (BY + 4 * R) + (BX + 2 * R) * (BY + 2 * R));
}

template <int BX, int BY, int BLOCKS>
__global__ void __launch_bounds__((BX + 2 * R) * (BY + 2 * R), BLOCKS)
    fused2(const float *__restrict__ pn, const float *__restrict__ pprev,
           const float *__restrict__ v, float *__restrict__ p1, float *__restrict__ p2, Dims d) {
  constexpr int EW = BX + 2 * R, EH = BY + 2 * R; // grown tile: step one's outputs
  constexpr int AW = BX + 4 * R, AH = BY + 4 * R; // p[n] with a 2R halo
  constexpr int SA = R + 2, SB = R + 2, Q = 2 * R + 1;
  extern __shared__ float smem[]; /* the two rings, SA and SB planes: fused_shared_bytes */
  float(*ring_a)[AH][AW] = reinterpret_cast<float(*)[AH][AW]>(smem);
  float(*ring_b)[EH][EW] = reinterpret_cast<float(*)[EH][EW]>(smem + SA * AH * AW);
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * EW + tx, nthreads = EW * EH;
  const int x0 = blockIdx.x * BX, y0 = blockIdx.y * BY; // padded origin of the 2R-halo tile
  const int gx = x0 + R + tx, gy = y0 + R + ty;         // this thread's grown-tile cell
  const bool own = tx >= R && tx < R + BX && ty >= R && ty < R + BY;
  const bool in_xy = gx >= PAD && gx < PAD + d.n && gy >= PAD && gy < PAD + d.n;
  float qa[Q], qb[Q];
#pragma unroll
  for (int k = 0; k < Q; ++k)
    qa[k] = qb[k] = 0.f;
  const int planes = d.np; // padded planes 0 .. np - 1
  // software pipeline: plane i + 1's share of the halo tile (at most PER elements a thread)
  // and the next iteration's p[n-1] and v are loaded while plane i is computed
  constexpr int PER = (AW * AH + EW * EH - 1) / (EW * EH);
  float pre[PER];
  int pre_off[PER];
#pragma unroll
  for (int k = 0; k < PER; ++k) {
    const int e = tid + k * nthreads, r = e / AW, c = e - r * AW;
    pre_off[k] = e < AW * AH ? r * AW + c : -1;
    pre[k] = e < AW * AH ? pn[at(d, x0 + c, y0 + r, 0)] : 0.f;
  }
  const long long column = at(d, gx, gy, 0);
  float prev_a = 0.f, v_a = 0.f, v_b = 0.f; // for za = i - R and zb = i - 2R
  for (int i = 0; i < planes; ++i) {
    float *a = &ring_a[i % SA][0][0];
#pragma unroll
    for (int k = 0; k < PER; ++k)
      if (pre_off[k] >= 0) a[pre_off[k]] = pre[k];
    if (i + 1 < planes) {
#pragma unroll
      for (int k = 0; k < PER; ++k)
        if (pre_off[k] >= 0) {
          const int r = pre_off[k] / AW, c = pre_off[k] - r * AW;
          pre[k] = pn[at(d, x0 + c, y0 + r, i + 1)];
        }
    }
    const float prev_now = prev_a, v_now = v_a, vb_now = v_b;
    {
      const int za1 = i + 1 - R, zb1 = i + 1 - 2 * R;
      if (in_xy && za1 >= PAD && za1 < PAD + d.n) {
        prev_a = pprev[column + (long long)za1 * d.plane];
        v_a = v[column + (long long)za1 * d.plane];
      }
      if (own && in_xy && zb1 >= PAD && zb1 < PAD + d.n) v_b = v[column + (long long)zb1 * d.plane];
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < Q - 1; ++k)
      qa[k] = qa[k + 1];
    qa[Q - 1] = ring_a[i % SA][ty + R][tx + R];
    const int za = i - R; // step one's plane: qa holds za - R .. za + R
    if (za >= 0) {
      float out = 0.f;
      if (in_xy && za >= PAD && za < PAD + d.n) {
        const float(*t)[AW] = ring_a[za % SA];
        float xm[R], xp[R], ym[R], yp[R], zm[R], zp[R];
#pragma unroll
        for (int m = 1; m <= R; ++m) {
          xm[m - 1] = t[ty + R][tx + R - m];
          xp[m - 1] = t[ty + R][tx + R + m];
          ym[m - 1] = t[ty + R - m][tx + R];
          yp[m - 1] = t[ty + R + m][tx + R];
          zm[m - 1] = qa[R - m];
          zp[m - 1] = qa[R + m];
        }
        const long long c = at(d, gx, gy, za);
        out = update(qa[R], xm, xp, ym, yp, zm, zp, prev_now, v_now);
        if (own) p1[c] = out;
      }
      ring_b[za % SB][ty][tx] = out;
    }
    __syncthreads();
    if (own && za >= 0) {
#pragma unroll
      for (int k = 0; k < Q - 1; ++k)
        qb[k] = qb[k + 1];
      qb[Q - 1] = ring_b[za % SB][ty][tx];
      const int zb = za - R; // step two's plane: qb holds zb - R .. zb + R, qa[0] is p[n] at zb
      if (zb >= PAD && zb < PAD + d.n && in_xy) {
        const float(*t)[EW] = ring_b[zb % SB];
        float xm[R], xp[R], ym[R], yp[R], zm[R], zp[R];
#pragma unroll
        for (int m = 1; m <= R; ++m) {
          xm[m - 1] = t[ty][tx - m];
          xp[m - 1] = t[ty][tx + m];
          ym[m - 1] = t[ty - m][tx];
          yp[m - 1] = t[ty + m][tx];
          zm[m - 1] = qb[R - m];
          zp[m - 1] = qb[R + m];
        }
        const long long c = at(d, gx, gy, zb);
        p2[c] = update(qb[R], xm, xp, ym, yp, zm, zp, qa[0], vb_now);
      }
    }
  }
}

static void fill(float *h, const Dims &d, unsigned seed) {
  srand(seed);
  memset(h, 0, sizeof(float) * (size_t)d.plane * d.np);
  for (int z = PAD; z < PAD + d.n; ++z)
    for (int y = PAD; y < PAD + d.n; ++y)
      for (int x = PAD; x < PAD + d.n; ++x)
        h[((size_t)z * d.np + y) * d.np + x] = (float)rand() / RAND_MAX - 0.5f;
}

static float elapsed_ms(cudaEvent_t t0, cudaEvent_t t1) {
  float ms = 0.f;
  CHECK(cudaEventSynchronize(t1));
  CHECK(cudaEventElapsedTime(&ms, t0, t1));
  return ms;
}

/* The fused kernel of one tile shape: its p[n+1] and p[n+2] against the reference's r1, r2
 * cell for cell, then `reps` launches timed. Returns the cells that differ. */
template <int BX, int BY, int BLOCKS>
static size_t run_tile(const float *pn, const float *pprev, const float *v, float *p1, float *p2,
                       const float *r1, const float *r2, const Dims &d, int reps, double copy_gbs) {
  const size_t cells = (size_t)d.plane * d.np, bytes = cells * sizeof(float);
  const dim3 block(BX + 2 * R, BY + 2 * R), grid(d.n / BX, d.n / BY);
  const size_t shared = fused_shared_bytes<BX, BY>();
  CHECK(cudaFuncSetAttribute(fused2<BX, BY, BLOCKS>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             (int)shared));
  CHECK(cudaMemset(p1, 0, bytes));
  CHECK(cudaMemset(p2, 0, bytes));
  fused2<BX, BY, BLOCKS><<<grid, block, shared>>>(pn, pprev, v, p1, p2, d);
  CHECK(cudaDeviceSynchronize());
  float *a = (float *)malloc(bytes), *b = (float *)malloc(bytes);
  size_t differ = 0;
  for (int k = 0; k < 2; ++k) {
    CHECK(cudaMemcpy(a, k ? p2 : p1, bytes, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(b, k ? r2 : r1, bytes, cudaMemcpyDeviceToHost));
    for (size_t c = 0; c < cells; ++c)
      differ += memcmp(&a[c], &b[c], sizeof(float)) != 0;
  }
  free(a);
  free(b);
  cudaEvent_t t0, t1;
  CHECK(cudaEventCreate(&t0));
  CHECK(cudaEventCreate(&t1));
  CHECK(cudaEventRecord(t0));
  for (int r = 0; r < reps; ++r) /* the same inputs each time: a timing, not a propagation */
    fused2<BX, BY, BLOCKS><<<grid, block, shared>>>(pn, pprev, v, p1, p2, d);
  CHECK(cudaEventRecord(t1));
  const double ms = elapsed_ms(t0, t1), interior = (double)d.n * d.n * d.n;
  const double rate = 2.0 * interior * reps / (ms * 1e-3) / 1e6;
  printf("fused, tile %dx%d (%d threads, %d blocks a SM asked, step one on %.2fx the cells): "
         "%zu cells differ from two reference steps; %.0f MCells/s (cell-steps), %.0f GB/s at 10 B "
         "a cell-step = %.1f%% of copy\n",
         BX, BY, (BX + 2 * R) * (BY + 2 * R), BLOCKS, (double)(BX + 2 * R) * (BY + 2 * R) / (BX * BY),
         differ, rate, rate * 10e-3, 100.0 * rate * 10e-3 / copy_gbs);
  return differ;
}

int main(int argc, char **argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 512, reps = argc > 2 ? atoi(argv[2]) : 20;
  Dims d;
  d.n = n;
  d.np = n + 2 * PAD;
  d.plane = (long long)d.np * d.np;
  const size_t cells = (size_t)d.plane * d.np, bytes = cells * sizeof(float);
  const float w[R + 1] = {-205.f / 72.f, 8.f / 5.f, -1.f / 5.f, 8.f / 315.f, -1.f / 560.f};
  const float ih2 = 1.f / (10.f * 10.f);
  CHECK(cudaMemcpyToSymbol(c_w, w, sizeof w));
  CHECK(cudaMemcpyToSymbol(c_ih2, &ih2, sizeof ih2));
  float *h = (float *)malloc(bytes);
  float *pn, *pprev, *v, *p1, *p2, *r1, *r2;
  for (float **f : {&pn, &pprev, &v, &p1, &p2, &r1, &r2}) {
    CHECK(cudaMalloc(f, bytes));
    CHECK(cudaMemset(*f, 0, bytes));
  }
  fill(h, d, 1);
  CHECK(cudaMemcpy(pn, h, bytes, cudaMemcpyHostToDevice));
  fill(h, d, 2);
  CHECK(cudaMemcpy(pprev, h, bytes, cudaMemcpyHostToDevice));
  memset(h, 0, bytes); /* v^2 dt^2 varying from cell to cell, a Courant number near 0.4 */
  for (int z = PAD; z < PAD + n; ++z)
    for (int y = PAD; y < PAD + n; ++y)
      for (int x = PAD; x < PAD + n; ++x)
        h[((size_t)z * d.np + y) * d.np + x] = 16.f + (float)((x + 2 * y + 3 * z) % 7) * 0.25f;
  CHECK(cudaMemcpy(v, h, bytes, cudaMemcpyHostToDevice));
  free(h);

  /* the reference: p[n+1] into r1, then p[n+2] into r2 */
  const dim3 rb(32, 8), rg((n + 31) / 32, (n + 7) / 8);
  reference_step<<<rg, rb>>>(pn, pprev, v, r1, d);
  reference_step<<<rg, rb>>>(r1, pn, v, r2, d);
  CHECK(cudaDeviceSynchronize());

  cudaEvent_t t0, t1;
  CHECK(cudaEventCreate(&t0));
  CHECK(cudaEventCreate(&t1));
  CHECK(cudaEventRecord(t0)); /* the copy bandwidth in the same process */
  for (int r = 0; r < reps; ++r)
    CHECK(cudaMemcpy(p1, p2, bytes, cudaMemcpyDeviceToDevice));
  CHECK(cudaEventRecord(t1));
  const double copy_gbs = 2.0 * bytes * reps / (elapsed_ms(t0, t1) * 1e-3) / 1e9;
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  printf("%s, %d^3, copy %.0f GB/s: the one-sweep bound at 16 B a cell-step %.0f MCells/s, the "
         "two-step bound at 10 B %.0f\n",
         prop.name, n, copy_gbs, copy_gbs * 1e3 / 16.0, copy_gbs * 1e3 / 10.0);
  size_t bad = 0;
  bad += run_tile<32, 8, 1>(pn, pprev, v, p1, p2, r1, r2, d, reps, copy_gbs);
  bad += run_tile<32, 8, 2>(pn, pprev, v, p1, p2, r1, r2, d, reps, copy_gbs);
  bad += run_tile<32, 16, 1>(pn, pprev, v, p1, p2, r1, r2, d, reps, copy_gbs);
  bad += run_tile<16, 16, 2>(pn, pprev, v, p1, p2, r1, r2, d, reps, copy_gbs);
  return bad ? 1 : 0;
}
