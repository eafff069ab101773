/* rtm_test_compare.h - the comparison every solver test states its bounds in (header only),
 * io's rtm_compare (the one `rtm3d validate` prints) read as a single number:
 *
 * rtm_test_relative_l2(a, ref, n) = ||a - ref||_2 / ||ref||_2 in double; 0 when both are
 * zero, infinity when only ref is, NaN (which passes no bound) when a value on either side
 * is not finite. */
#ifndef RTM_TEST_COMPARE_H
#define RTM_TEST_COMPARE_H

#include <math.h>
#include <stddef.h>

#include "rtm_io.h"

static inline double rtm_test_relative_l2(const float *a, const float *ref, size_t count) {
  const rtm_comparison_t c = rtm_compare(a, ref, count);
  if (c.non_finite > 0) return NAN;
  if (c.absolute) return c.error_norm > 0.0 ? INFINITY : 0.0;
  return c.error_norm;
}

#endif
