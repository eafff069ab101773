/* test_half - the host binary16 conversions (solver/grid/rtm_half.h) that memory.model_precision
 * = fp16 fills the GPU's coefficient volumes with.
 *
 * Exact cases (1, 65504, 65520 rounding to infinity, the smallest subnormal, ties to even,
 * negative zero, NaN); every one of the 65536 patterns widened against the format's
 * definition and narrowed back to itself; random floats over the whole range and the exact
 * midpoints between neighbouring halves against a brute-force nearest-even search; and,
 * where the compiler has _Float16, against its conversion. The conversions are exact
 * integer operations, so every comparison is for equality of bit patterns. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "rtm_half.h"
#include "rtm_test_random.h"

enum { RANDOM_FLOATS = 2000000, FINITE_POSITIVE = 0x7c00 };

static float float_of_bits(uint32_t bits) {
  float value;
  memcpy(&value, &bits, sizeof value);
  return value;
}

/* Random sign and fraction, exponent from 2^-30 to 2^18: zero, the subnormal and normal
 * ranges, overflow. */
static float random_float(rtm_test_rng_t *s) {
  const uint64_t r = rtm_test_next(s);
  const uint32_t exponent = 127 - 30 + (uint32_t)(r % 49);
  return float_of_bits((uint32_t)(r >> 32 & 0x807fffffu) | exponent << 23);
}

static int is_nan_pattern(rtm_half_t h) {
  return (h & 0x7c00) == 0x7c00 && (h & 0x03ff) != 0;
}

/* The format's definition, in double: (-1)^s 2^(e - 15) (1 + f / 1024), subnormals
 * 2^-14 (f / 1024). */
static double defined_value(rtm_half_t h) {
  const int s = h >> 15, e = (h >> 10) & 0x1f, f = h & 0x3ff;
  const double magnitude = e == 0 ? ldexp(f, -24) : e == 31 ? INFINITY : ldexp(1024 + f, e - 25);
  return s ? -magnitude : magnitude;
}

/* Nearest binary16 to x by search over the ordered positive patterns, ties to the even
 * pattern; beyond 65504 + half an ulp (65520) infinity. */
static rtm_half_t nearest_by_search(float x) {
  const rtm_half_t sign = signbit(x) ? 0x8000 : 0;
  const double a = fabs((double)x);
  if (a >= 65520.0) return sign | 0x7c00;
  int lo = 0, hi = FINITE_POSITIVE - 1; /* largest pattern with value <= a */
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (defined_value((rtm_half_t)mid) <= a)
      lo = mid;
    else
      hi = mid - 1;
  }
  if (lo == FINITE_POSITIVE - 1) return sign | (rtm_half_t)lo; /* in [65504, 65520) */
  const double below = a - defined_value((rtm_half_t)lo);
  const double above = defined_value((rtm_half_t)(lo + 1)) - a;
  const int up = above < below || (above == below && (lo & 1));
  return sign | (rtm_half_t)(lo + up);
}

static void expect_bits(float value, rtm_half_t want) {
  const rtm_half_t got = rtm_half_from_float(value);
  if (got != want) fail_msg("%a -> 0x%04x, want 0x%04x", (double)value, got, want);
}

static void test_exact_cases(void **unused) {
  (void)unused;
  expect_bits(1.0f, 0x3c00);
  expect_bits(-2.0f, 0xc000);
  expect_bits(0.5f, 0x3800);
  expect_bits(RTM_HALF_MAX, 0x7bff);               /* 65504 */
  expect_bits(nextafterf(65520.0f, 0.0f), 0x7bff); /* just below the tie: 65504 */
  expect_bits(65520.0f, 0x7c00);                   /* the tie rounds to even: inf */
  expect_bits(-65520.0f, 0xfc00);
  expect_bits(1e10f, 0x7c00);
  expect_bits(RTM_HALF_MIN_NORMAL, 0x0400);    /* 2^-14 */
  expect_bits(RTM_HALF_MIN_SUBNORMAL, 0x0001); /* 2^-24 */
  expect_bits(0x1p-25f, 0x0000);               /* tie: to even, zero */
  expect_bits(0x1.8p-25f, 0x0001);             /* above the tie */
  expect_bits(0x3p-25f, 0x0002);               /* tie between 1 and 2: even 2 */
  expect_bits(1023.5f * 0x1p-24f, 0x0400); /* 1023.5 x 2^-24: largest subnormal rounds to normal */
  expect_bits(1023.0f * 0x1p-24f, 0x03ff);
  expect_bits(0x1p-100f, 0x0000);
  expect_bits(float_of_bits(0x00000001u), 0x0000);   /* float subnormal */
  expect_bits(1.0f + 0x1p-11f, 0x3c00);              /* tie: 1 is even */
  expect_bits(1.0f + 0x3p-11f, 0x3c02);              /* tie: 1 + 2^-9 is even */
  expect_bits(1.0f + 0x1p-11f + 0x1p-20f, 0x3c01);   /* above the tie */
  expect_bits(2047.0f / 1024.0f + 0x1p-11f, 0x4000); /* 1.999.. + tie carries to 2 */
  expect_bits(0.0f, 0x0000);
  expect_bits(-0.0f, 0x8000);
  expect_bits(INFINITY, 0x7c00);
  expect_bits(-INFINITY, 0xfc00);
  assert_true(is_nan_pattern(rtm_half_from_float(NAN)));
  assert_true(is_nan_pattern(rtm_half_from_float(float_of_bits(0x7f800001u)))); /* signalling */
  assert_true(rtm_half_from_float(copysignf(NAN, -1.0f)) & 0x8000);

  assert_true(rtm_half_to_float(0x3c00) == 1.0f);
  assert_true(rtm_half_to_float(0x7bff) == 65504.0f);
  assert_true(rtm_half_to_float(0x0001) == 0x1p-24f);
  assert_true(rtm_half_to_float(0x03ff) == 1023.0f * 0x1p-24f);
  const float negative_zero = rtm_half_to_float(0x8000);
  assert_true(negative_zero == 0.0f && signbit(negative_zero));
  assert_true(isinf(rtm_half_to_float(0xfc00)) && rtm_half_to_float(0xfc00) < 0.0f);
  assert_true(isnan(rtm_half_to_float(0x7e00)));

  assert_true(rtm_half_is_finite(0x7bff));
  assert_false(rtm_half_is_finite(0x7c00));
  assert_false(rtm_half_is_finite(0xfe00));
  assert_true(rtm_half_round(1.0f + 0x1p-12f) == 1.0f);
  assert_true(rtm_half_round(3.14159265f) == 3.140625f);
}

/* Every pattern: widened as the format defines, and (NaNs aside) narrowed back to itself;
 * NaNs stay NaNs both ways. */
static void test_every_pattern_round_trips(void **unused) {
  (void)unused;
  int nans = 0;
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const rtm_half_t h = (rtm_half_t)bits;
    const float widened = rtm_half_to_float(h);
    if (is_nan_pattern(h)) {
      ++nans;
      assert_true(isnan(widened));
      assert_true(is_nan_pattern(rtm_half_from_float(widened)));
      continue;
    }
    if ((double)widened != defined_value(h) || !signbit(widened) != !(h >> 15))
      fail_msg("0x%04x widened to %a, defined %a", h, (double)widened, defined_value(h));
    if (rtm_half_from_float(widened) != h)
      fail_msg("0x%04x -> %a -> 0x%04x", h, (double)widened, rtm_half_from_float(widened));
  }
  assert_int_equal(nans, 2 * 1023);
}

/* The midpoints between neighbouring halves (exact floats: 12 significant bits) go to the
 * even neighbour, the floats next to them to the nearer one. */
static void test_midpoints(void **unused) {
  (void)unused;
  for (int h = 0; h < FINITE_POSITIVE; ++h) {
    const double lo = defined_value((rtm_half_t)h);
    const double hi = h + 1 < FINITE_POSITIVE ? defined_value((rtm_half_t)(h + 1)) : 65536.0;
    const float mid = (float)(0.5 * (lo + hi));
    assert_true((double)mid == 0.5 * (lo + hi));
    const rtm_half_t even = (rtm_half_t)(h & 1 ? h + 1 : h);
    expect_bits(mid, even);
    expect_bits(-mid, (rtm_half_t)(0x8000 | even));
    expect_bits(nextafterf(mid, 0.0f), (rtm_half_t)h);
    expect_bits(nextafterf(mid, INFINITY), (rtm_half_t)(h + 1));
  }
}

/* Random floats against the search. */
static void test_random_against_search(void **unused) {
  (void)unused;
  rtm_test_rng_t s = rtm_test_seed(__func__);
  for (int i = 0; i < RANDOM_FLOATS; ++i) {
    const float x = random_float(&s);
    const rtm_half_t want = nearest_by_search(x);
    if (rtm_half_from_float(x) != want)
      fail_msg("%a -> 0x%04x, nearest even 0x%04x", (double)x, rtm_half_from_float(x), want);
  }
}

#ifdef __FLT16_MAX__
/* The compiler's float -> _Float16 rounds to nearest even as well (IEEE 754). */
static void test_against_compiler(void **unused) {
  (void)unused;
  rtm_test_rng_t s = rtm_test_seed(__func__);
  for (int i = 0; i < RANDOM_FLOATS; ++i) {
    const float x = random_float(&s);
    const _Float16 h = (_Float16)x;
    rtm_half_t want;
    memcpy(&want, &h, sizeof want);
    if (rtm_half_from_float(x) != want)
      fail_msg("%a -> 0x%04x, _Float16 0x%04x", (double)x, rtm_half_from_float(x), want);
  }
}
#endif

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_exact_cases),      cmocka_unit_test(test_every_pattern_round_trips),
      cmocka_unit_test(test_midpoints),        cmocka_unit_test(test_random_against_search),
#ifdef __FLT16_MAX__
      cmocka_unit_test(test_against_compiler),
#endif
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
