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

#ifdef __cplusplus
}
#endif

#endif
