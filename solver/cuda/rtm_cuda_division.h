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

#endif

#endif
