/* The image and the illumination summed over the shots on the host (rtm_imaging.h): float
 * pairs (hi, lo) added with error-free transformations (Knuth's TwoSum, Dekker's
 * Fast2Sum), in double-float arithmetic, so that the order of the shots changes the rounded
 * sum in about no cell. Plain float operations, each rounded to float: the file is compiled
 * without contraction or reassociation (the project's flags; no -ffast-math). */
#include <stddef.h>

#include "imaging_impl.h"
#include "rtm_imaging.h"

/* s + e = a + b exactly, s = fl(a + b) (TwoSum: no condition on |a|, |b|). */
static inline void two_sum(float a, float b, float *s, float *e) {
  const float sum = a + b, b_virtual = sum - a, a_virtual = sum - b_virtual;
  *s = sum;
  *e = (a - a_virtual) + (b - b_virtual);
}

/* (hi, lo) := a + b renormalised, for |a| >= |b| or a = 0 (Fast2Sum). */
static inline void fast_two_sum(float a, float b, float *hi, float *lo) {
  const float sum = a + b;
  *hi = sum;
  *lo = b - (sum - a);
}

/* One cell's pair (hi, lo) plus x, whose own low part the caller has added to lo. */
static inline void pair_add(float hi, float lo, float x, float *sum_hi, float *sum_lo) {
  float s, e;
  two_sum(hi, x, &s, &e);
  fast_two_sum(s, e + lo, sum_hi, sum_lo);
}

/* One cell's pair rounded once to float. */
static inline float pair_round(float hi, float lo) {
  return (float)((double)hi + (double)lo);
}

/* (hi, lo) += (x, x_lo) cell by cell; x_lo NULL: a float's pair (x, 0). */
static void add_pairs(float *hi, float *lo, const float *x, const float *x_lo, size_t cells) {
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
  for (size_t i = 0; i < cells; ++i)
    pair_add(hi[i], x_lo ? lo[i] + x_lo[i] : lo[i], x[i], &hi[i], &lo[i]);
}

void rtm_sums_start(float *hi, float *lo, const float *shot, size_t cells) {
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
  for (size_t i = 0; i < cells; ++i) {
    hi[i] = shot ? 0.0f + shot[i] : 0.0f; /* TwoSum(0, x)'s sum: -0 becomes +0 */
    lo[i] = 0.0f;
  }
}

void rtm_sums_add(float *hi, float *lo, const float *shot, size_t cells) {
  add_pairs(hi, lo, shot, NULL, cells);
}

void rtm_sums_add_round(float *out, const float *hi, const float *lo, const float *shot,
                        size_t cells) {
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
  for (size_t i = 0; i < cells; ++i) {
    float sum_hi = 0.0f + shot[i], sum_lo = 0.0f; /* rtm_sums_start's pair */
    if (hi) pair_add(hi[i], lo[i], shot[i], &sum_hi, &sum_lo);
    out[i] = pair_round(sum_hi, sum_lo);
  }
}

void rtm_sums_merge(float *hi, float *lo, const float *other_hi, const float *other_lo,
                    size_t cells) {
  add_pairs(hi, lo, other_hi, other_lo, cells);
}

void rtm_sums_round(float *out, const float *hi, const float *lo, size_t cells) {
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
  for (size_t i = 0; i < cells; ++i)
    out[i] = pair_round(hi[i], lo[i]);
}
