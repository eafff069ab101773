/* The comparison of two float arrays that `rtm3d validate` prints and the tests state their
 * bounds in: one definition, so that a figure in a test and in a validate report mean the
 * same thing. */
#include "rtm_io.h"

#include <math.h>

rtm_comparison_t rtm_compare(const float *values, const float *reference, size_t count) {
  rtm_comparison_t c = {0.0, 0.0, 0, 0};
  double diff2 = 0.0, ref2 = 0.0;
  for (size_t i = 0; i < count; ++i) {
    if (!isfinite(values[i]) || !isfinite(reference[i])) {
      ++c.non_finite;
      continue;
    }
    const double d = (double)values[i] - (double)reference[i];
    diff2 += d * d;
    ref2 += (double)reference[i] * reference[i];
    if (fabs(d) > c.max_abs) c.max_abs = fabs(d);
  }
  c.absolute = !(ref2 > 0.0);
  c.error_norm = c.absolute ? sqrt(diff2) : sqrt(diff2 / ref2);
  return c;
}
