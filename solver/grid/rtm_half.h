/* rtm_half.h - IEEE 754 binary16 ("half") on the host, in plain C: the conversions that
 * memory.model_precision = fp16 needs to fill the coefficient volumes the GPU reads as
 * __half, and to give the cpu reference the very values the GPU sees.
 *
 * binary16: 1 sign bit, 5 exponent bits (bias 15), 10 fraction bits. Largest finite value
 * 65504 = (2 - 2^-10) 2^15; smallest normal 2^-14; smallest subnormal 2^-24; 11 significant
 * bits, so a rounded normal value is within 2^-11 (relative) of the original.
 *
 * float -> binary16 rounds to nearest, ties to even, through the subnormal range (the
 * conversion of IEEE 754 and of CUDA's __float2half_rn). A finite value whose magnitude
 * rounds past 65504 (from 65520 = 65504 + half an ulp up) becomes infinity: the caller
 * decides whether that is an error (for model coefficients it is; rtm_anisotropy.h).
 * Infinities stay infinities; a NaN stays a NaN (quiet, sign and the top fraction bits
 * kept). binary16 -> float is exact (every binary16 value is a float). */
#ifndef RTM_HALF_H
#define RTM_HALF_H

#include <stdint.h>

#include "rtm_float_bits.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef uint16_t rtm_half_t; /* the bit pattern; the GPU reads it as __half */

#define RTM_HALF_MAX 65504.0f        /* largest finite binary16 */
#define RTM_HALF_MIN_NORMAL 0x1p-14f /* smallest normal binary16 */
#define RTM_HALF_MIN_SUBNORMAL 0x1p-24f

rtm_half_t rtm_half_from_float(float value);
float rtm_half_to_float(rtm_half_t half);

/* value rounded to the nearest binary16 and widened back: what a kernel that stores value
 * as binary16 computes with. */
float rtm_half_round(float value);

/* 1 unless the pattern is an infinity or a NaN. */
int rtm_half_is_finite(rtm_half_t half);

/* A volume stored as binary16 without losing its range (source snapshots,
 * rtm.snapshot_precision = fp16): its values x are stored as binary16(x 2^e) and read back
 * as float times 2^-e, both scalings exact, with e chosen from the bits of max |x| (a
 * non-negative float's bits: |x| as uint32 is x's bits & 0x7fffffff, and the largest bits
 * are the largest |x|) so that 2^e max |x| lies in [2^14, 2^15): well under 65504, with the
 * subnormal range 2^38 below the largest value. 0 for an all-zero or non-finite volume; e is
 * kept within [-126, 126], where 2^e and 2^-e are normal floats. The cpu and cuda backends
 * both use these two, so their snapshots agree bit for bit. */
#ifdef __CUDACC__
#define RTM_HALF_HD __host__ __device__
#else
#define RTM_HALF_HD
#endif
static inline RTM_HALF_HD int rtm_half_scale_exponent(uint32_t max_abs_bits) {
  const int biased = (int)(max_abs_bits >> 23);
  if (max_abs_bits == 0 || biased >= 255) return 0;
  const int exponent = biased == 0 ? -126 : biased - 127;
  const int e = 14 - exponent;
  return e < -126 ? -126 : e > 126 ? 126 : e;
}
/* 2^e as a float, |e| <= 126 (exact): its bits formed and read as a float
 * (rtm_float_bits.h). */
static inline RTM_HALF_HD float rtm_half_power_of_two(int e) {
  return rtm_bits_float((uint32_t)(e + 127) << 23);
}

#ifdef __cplusplus
}
#endif

#endif
