/* traces_test_util.h - signals with known answers and error measures for the trace
 * pipeline tests. Inputs are drawn fresh each run from a seed that is printed, so that a
 * failure can be replayed with RTM3D_TEST_SEED (rtm_test_random.h). */
#ifndef TRACES_TEST_UTIL_H
#define TRACES_TEST_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "rtm_test_random.h"
#include "rtm_traces.h"

#define TT_PI 3.14159265358979323846
#define TT_MAX_TONES 8

/* A plan description: n_inputs traces of `length` samples at dt to the outputs; fft_length 0
 * lets the plan choose the window. */
static inline rtm_traces_desc_t tt_desc(const char *backend, rtm_traces_pipeline_t pipeline,
                                        int n_inputs, int length, double dt, int fft_length,
                                        const rtm_traces_output_t *outputs, int n_outputs) {
  rtm_traces_desc_t d = {.backend = backend,
                         .pipeline = pipeline,
                         .n_inputs = n_inputs,
                         .input_length = length,
                         .input_dt_s = dt,
                         .fft_length = fft_length,
                         .outputs = outputs,
                         .n_outputs = n_outputs};
  return d;
}

/* Sum of tones a cos(2 pi f t + phi): frequencies in whole Hz so that a window of whole
 * seconds holds whole cycles. */
typedef struct {
  int count;
  double amplitude[TT_MAX_TONES], frequency_hz[TT_MAX_TONES], phase[TT_MAX_TONES];
} tt_tones_t;

static inline tt_tones_t tt_random_tones(rtm_test_rng_t *r, int count, double f_min_hz,
                                         double f_max_hz) {
  tt_tones_t t = {.count = count};
  for (int i = 0; i < count; ++i) {
    t.amplitude[i] = rtm_test_uniform(r, 0.5, 2.0);
    t.frequency_hz[i] = floor(rtm_test_uniform(r, f_min_hz, f_max_hz + 1.0));
    t.phase[i] = rtm_test_uniform(r, -TT_PI, TT_PI);
  }
  return t;
}

/* derivative: 0 the signal, 1 its time derivative; shift: y(t) = x(t - shift). */
static inline double tt_tones_at(const tt_tones_t *t, double time_s, int derivative,
                                 double shift_s) {
  double v = 0.0;
  for (int i = 0; i < t->count; ++i) {
    double w = 2.0 * TT_PI * t->frequency_hz[i];
    double arg = w * (time_s - shift_s) + t->phase[i];
    v += derivative ? -t->amplitude[i] * w * sin(arg) : t->amplitude[i] * cos(arg);
  }
  return v;
}

static inline double tt_ricker(double time_s, double frequency_hz, double delay_s) {
  double a = TT_PI * frequency_hz * (time_s - delay_s);
  a *= a;
  return (1.0 - 2.0 * a) * exp(-a);
}

/* ||got - want|| / ||want|| over samples [first, last). */
static inline double tt_rel_l2(const float *got, const double *want, int first, int last) {
  double num = 0.0, den = 0.0;
  for (int j = first; j < last; ++j) {
    double d = (double)got[j] - want[j];
    num += d * d;
    den += want[j] * want[j];
  }
  return den > 0.0 ? sqrt(num / den) : sqrt(num);
}

static inline double tt_rel_l2_f(const float *got, const float *want, size_t n) {
  double num = 0.0, den = 0.0;
  for (size_t j = 0; j < n; ++j) {
    double d = (double)got[j] - (double)want[j];
    num += d * d;
    den += (double)want[j] * want[j];
  }
  return den > 0.0 ? sqrt(num / den) : sqrt(num);
}

/* |got - want| <= tolerance, or a cmocka failure naming both (needs cmocka.h first). */
#define tt_assert_close(got, want, tolerance)                                                      \
  do {                                                                                             \
    double tt_got_ = (got), tt_want_ = (want), tt_tol_ = (tolerance);                              \
    if (!(fabs(tt_got_ - tt_want_) <= tt_tol_))                                                    \
      fail_msg("%s = %.12g, expected %s = %.12g within %.3g", #got, tt_got_, #want, tt_want_,      \
               tt_tol_);                                                                           \
  } while (0)

static inline void tt_peak_rms(const float *y, int n, double *peak, double *rms) {
  double p = 0.0, e = 0.0;
  for (int j = 0; j < n; ++j) {
    double v = y[j];
    if (fabs(v) > p) p = fabs(v);
    e += v * v;
  }
  *peak = p;
  *rms = sqrt(e / n);
}

/* ||got - want|| / ||want|| over samples [first, last) within `tolerance`, printed as
 * "# what: rel L2 ..." (needs cmocka.h first). */
static inline void tt_assert_rel_l2(const float *got, const double *want, int first, int last,
                                    double tolerance, const char *what) {
  const double err = tt_rel_l2(got, want, first, last);
  printf("# %s: rel L2 %.3g\n", what, err);
  if (!(err <= tolerance)) fail_msg("%s: rel L2 %.3g > %g", what, err, tolerance);
}

/* The statistics the plan reports for one output (peak_stat, rms_stat: of the signal before
 * normalisation) against a double loop over its `length` samples y, within `tolerance`
 * relative: the same for an un-normalised output; a normalised one reaches peak 1 or RMS 1
 * and keeps the ratio of the two (needs cmocka.h first). */
static inline void tt_check_output_stats(double peak_stat, double rms_stat, const float *y,
                                         int length, rtm_traces_norm_t normalisation,
                                         double tolerance) {
  double peak, r;
  tt_peak_rms(y, length, &peak, &r);
  assert_true(peak_stat > 0.0 && rms_stat > 0.0);
  switch (normalisation) {
  case RTM_TRACES_NORM_NONE:
    tt_assert_close(peak_stat, peak, tolerance * peak);
    tt_assert_close(rms_stat, r, tolerance * r);
    break;
  case RTM_TRACES_NORM_PEAK:
    tt_assert_close(peak, 1.0, tolerance);
    tt_assert_close(r, rms_stat / peak_stat, tolerance * r);
    break;
  case RTM_TRACES_NORM_RMS:
    tt_assert_close(r, 1.0, tolerance);
    tt_assert_close(peak, peak_stat / rms_stat, tolerance * peak);
    break;
  default: fail_msg("unknown normalisation %d", (int)normalisation);
  }
}

#endif
