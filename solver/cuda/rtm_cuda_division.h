/* rtm_cuda_division.h - the absorbing layer's division of the z-marching kernels
 * (iso_cuda.cu, tti_cuda.cu), public to solver/cuda's users so that its test
 * (tests/gpu/test_layer_div.cu) checks the function the kernels use. CUDA device code only. */
#ifndef RTM_CUDA_DIVISION_H
#define RTM_CUDA_DIVISION_H

#ifdef __CUDACC__

/* num / den rounded to nearest, the float __fdiv_rn (and the cpu reference's division) give,
 * for the absorbing layer's leapfrog (den = 1 +- d, in (0, 2)). __fdiv_rn leaves its fast
 * path for a routine it calls when the numerator is zero or so small that the quotient nears
 * the subnormal range, which is most of the layer ahead of a wavefront: a 512^3 iso run from
 * rest stepped 166 GCells/s against 216 with no layer (H200). So __fdiv_rn takes the
 * numerators of a wave (|num| >= 2^-100: its fast path holds, and it is faster than the
 * double below), zero is returned as it is (its sign kept) and the tiny rest divides in
 * double. The quotient of the two floats in double rounded once to float is the same float:
 * double's 53 bits are at least 2 x 24 + 2, so rounding twice is innocuous for division
 * (Figueroa 1995); below, a subnormal float's midpoints are multiples of 2^-150, and a
 * quotient of two floats that is not one lies at least 2^-175 from it, beyond double's half
 * ulp there (2^-179 or less). */
__device__ __forceinline__ float layer_div(float num, float den) {
  if (fabsf(num) >= 0x1p-100f) return __fdiv_rn(num, den);
  return num == 0.f ? num : __double2float_rn(__ddiv_rn((double)num, (double)den));
}

/* Whether layer_div_fast gives layer_div's quotient for this numerator: zero (a wavefield
 * ahead of its front) or 2^-100 <= |num| < 2^100 (false for infinities and NaN). */
__device__ __forceinline__ bool layer_div_fast_holds(float num) {
  const float size = fabsf(num);
  return size == 0.f || (size >= 0x1p-100f && size < 0x1p100f);
}

/* 1 / den rounded to nearest, the float __frcp_rn gives, for den in [1/4, 2)
 * (layer_rcp_holds; test_layer_div checks every float there), without a branch: the
 * approximate reciprocal and two Newton steps, each adding r (1 - den r) with its residual
 * in one fma. For the z layer's planes, where den changes from plane to plane. */
__device__ __forceinline__ bool layer_rcp_holds(float den) {
  return den >= 0.25f && den < 2.f;
}
__device__ __forceinline__ float layer_rcp(float den) {
  float r;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(den));
  r = __fmaf_rn(r, __fmaf_rn(-den, r, 1.f), r);
  return __fmaf_rn(r, __fmaf_rn(-den, r, 1.f), r);
}

/* layer_div's quotient, where layer_div_fast_holds(num), given rcp = 1 / den rounded to
 * nearest (__frcp_rn, or layer_rcp), without a branch: a product and two corrections, where
 * __fdiv_rn makes its own reciprocal first and branches on its operands' range, so that
 * the four quotients of a thread's float4 did not interleave (the iso kernel's x and y
 * layer kept the reciprocals of its cells' denominators, the same on every plane outside
 * the z layer). Each
 * correction adds the exact remainder num - den q (one fma) times rcp: the first brings
 * num rcp (within 1.5 ulp of the quotient) within half an ulp and a little; from within one
 * ulp, the second gives the correctly rounded quotient (Markstein 1990, with rcp correctly
 * rounded; no remainder underflows for |num| >= 2^-100); a zero is returned as it is.
 * Other numerators: layer_div. */
__device__ __forceinline__ float layer_div_fast(float num, float den, float rcp) {
  const float q0 = __fmul_rn(num, rcp);
  const float q1 = __fmaf_rn(__fmaf_rn(-den, q0, num), rcp, q0);
  const float q2 = __fmaf_rn(__fmaf_rn(-den, q1, num), rcp, q1);
  return num == 0.f ? num : q2; /* -0: the corrections' sums would give +0 */
}

#endif

#endif
