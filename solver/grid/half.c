/* IEEE binary16 conversions on the host (rtm_half.h), by integer arithmetic on the bit
 * patterns so that the result does not depend on the compiler's _Float16 support or the
 * FPU's rounding mode. */
#include "rtm_half.h"

#include <string.h>

enum {
  HALF_SIGN = 0x8000,
  HALF_EXPONENT = 0x7c00, /* all ones: infinity or NaN */
  HALF_FRACTION = 0x03ff,
  HALF_QUIET = 0x0200, /* top fraction bit: quiet NaN */
  FLOAT_BIAS = 127,
  HALF_BIAS = 15,
  SHIFT = 23 - 10 /* fraction bits a float has beyond a half's */
};

rtm_half_t rtm_half_from_float(float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof bits);
  const uint32_t sign = (bits >> 16) & HALF_SIGN;
  const uint32_t exponent = (bits >> 23) & 0xff;
  const uint32_t fraction = bits & 0x7fffff;
  if (exponent == 0xff) /* infinity, or NaN kept a (quiet) NaN */
    return (rtm_half_t)(sign | HALF_EXPONENT | (fraction ? HALF_QUIET | (fraction >> SHIFT) : 0));
  if (exponent == 0) return (rtm_half_t)sign; /* float subnormals are below 2^-126: zero */

  /* value = significand 2^(exponent - 150) with the implicit bit in a 24-bit significand.
   * As a half: normal (biased exponent e >= 1) keeps the top 11 bits, a subnormal (units of
   * 2^-24) keeps significand >> (126 - exponent), which is 13 + (1 - e) bits off. */
  const uint32_t significand = fraction | 0x800000;
  const int e = (int)exponent - FLOAT_BIAS + HALF_BIAS;
  const int shift = e >= 1 ? SHIFT : SHIFT + 1 - e;
  if (shift > 24) return (rtm_half_t)sign; /* below half of 2^-24: rounds to zero */
  uint32_t kept = significand >> shift;
  const uint32_t rest = significand & ((1u << shift) - 1u), halfway = 1u << (shift - 1);
  if (rest > halfway || (rest == halfway && (kept & 1u))) ++kept; /* nearest, ties to even */
  if (e < 1) /* subnormal; kept == 0x400 after rounding up is the smallest normal, as wanted */
    return (rtm_half_t)(sign | kept);
  if (e >= 31) return (rtm_half_t)(sign | HALF_EXPONENT);
  /* kept holds the implicit bit (0x400 .. 0x800): adding it to exponent e - 1 carries a
   * rounded-up 0x800 into the next binade, and 0x7bff + 1 ulp into 0x7c00, infinity. */
  return (rtm_half_t)(sign | (((uint32_t)(e - 1) << 10) + kept));
}

float rtm_half_to_float(rtm_half_t half) {
  const uint32_t sign = (uint32_t)(half & HALF_SIGN) << 16;
  const uint32_t exponent = (half & HALF_EXPONENT) >> 10;
  uint32_t fraction = half & HALF_FRACTION;
  uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (fraction << SHIFT);
  } else if (exponent != 0) {
    bits = sign | ((exponent - HALF_BIAS + FLOAT_BIAS) << 23) | (fraction << SHIFT);
  } else if (fraction == 0) {
    bits = sign;
  } else { /* subnormal: fraction 2^-24, a normal float once the leading bit is found */
    int e = 1 - HALF_BIAS;
    while (!(fraction & 0x400)) {
      fraction <<= 1;
      --e;
    }
    bits = sign | ((uint32_t)(e + FLOAT_BIAS) << 23) | ((fraction & HALF_FRACTION) << SHIFT);
  }
  float value;
  memcpy(&value, &bits, sizeof value);
  return value;
}

float rtm_half_round(float value) {
  return rtm_half_to_float(rtm_half_from_float(value));
}

int rtm_half_is_finite(rtm_half_t half) {
  return (half & HALF_EXPONENT) != HALF_EXPONENT;
}
