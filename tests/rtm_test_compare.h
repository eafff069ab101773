/* rtm_test_compare.h - the comparison every solver test states its bounds in (header only).
 *
 * rtm_test_relative_l2(a, ref, n) = ||a - ref||_2 / ||ref||_2 in double; 0 when both are
 * zero, infinity when only ref is. */
#ifndef RTM_TEST_COMPARE_H
#define RTM_TEST_COMPARE_H

#include <math.h>
#include <stddef.h>

static inline double rtm_test_relative_l2(const float *a, const float *ref, size_t count) {
  double diff = 0.0, norm = 0.0;
  for (size_t i = 0; i < count; ++i) {
    const double d = (double)a[i] - (double)ref[i];
    diff += d * d;
    norm += (double)ref[i] * ref[i];
  }
  return norm > 0.0 ? sqrt(diff / norm) : (diff > 0.0 ? INFINITY : 0.0);
}

#endif
