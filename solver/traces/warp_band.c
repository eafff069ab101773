/* warp_band.c - the time-dispersion warp as one banded matrix (rtm_traces_band_t): built
 * from the whole-trace warp of a low pass's columns (padded 16x, so that its interpolation
 * error is 16 times below 8x's 1e-4), cut row by row, grouped, and its product in C, the reference
 * of the GPU's kernel (solver/cuda/trace_window.cu). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtm_status.h"
#include "rtm_traces.h"
#include "traces_impl.h"

#define PI RTM_TRACES_PI

enum { LOWPASS_HALF = 64, ROWS = RTM_TRACES_BAND_ROWS, BAND_PADDING = 16 };
/* cycles a sample from the pass band's edge to the low pass's cut-off, and from the cut-off
 * to the end of its transition (a Blackman window of 129 samples: 5.5 / 129 wide) */
static const double lowpass_margin = 0.025;
/* entries below these shares of their row's largest are cut from its ends: before the row's
 * sample (raw samples earlier than k, the warp's dispersed past) and after it (later ones,
 * the low pass's reach): lower shares keep more columns a row for less error, higher ones
 * fewer for more. At these, on test_traces_band's traces (10 Hz at 2 ms, 25 Hz at 1 ms):
 * 2e-5 from the exact warp, lag 72, 209 columns a row (the test prints them). */
static const double tail_left = 1e-4, tail_right = 1e-5;
/* the wavelet's spectrum below this share of its peak is out of band */
static const double limit_floor = 1e-5;

double rtm_traces_band_limit_hz(const float *wavelet, int n, double dt) {
  /* |DFT| at LIMIT_BINS + 1 frequencies from 0 to Nyquist (a wavelet's spectrum is smooth:
   * its edge to a 256th of Nyquist; the exact DFT's bins cost n^2), by a rotation a sample,
   * in double */
  enum { LIMIT_BINS = 256 };
  double peak = 0.0, magnitude[LIMIT_BINS + 1];
  for (int j = 0; j <= LIMIT_BINS; ++j) {
    const double turn = PI * j / LIMIT_BINS; /* radians a sample: 0 to pi */
    const double c = cos(turn), s = sin(turn);
    double re = 0.0, im = 0.0, rc = 1.0, rs = 0.0;
    for (int k = 0; k < n; ++k) {
      re += wavelet[k] * rc;
      im -= wavelet[k] * rs;
      const double next = rc * c - rs * s;
      rs = rs * c + rc * s;
      rc = next;
    }
    magnitude[j] = hypot(re, im);
    if (magnitude[j] > peak) peak = magnitude[j];
  }
  int last = 0;
  for (int j = 0; j <= LIMIT_BINS; ++j)
    if (magnitude[j] >= limit_floor * peak) last = j;
  /* the next bin's frequency: the edge lies below it */
  const int edge = last < LIMIT_BINS ? last + 1 : LIMIT_BINS;
  return edge * 0.5 / (dt * LIMIT_BINS);
}

/* Low pass impulse m (column m of P) into row m of `matrix` [n][n]. */
static void lowpass_columns(int n, double cutoff, float *matrix) {
  double tap[2 * LOWPASS_HALF + 1];
  for (int j = -LOWPASS_HALF; j <= LOWPASS_HALF; ++j) {
    const double sinc = j == 0 ? 2.0 * cutoff : sin(2.0 * PI * cutoff * j) / (PI * j);
    const double window =
        0.42 + 0.5 * cos(PI * j / LOWPASS_HALF) + 0.08 * cos(2.0 * PI * j / LOWPASS_HALF);
    tap[j + LOWPASS_HALF] = sinc * window;
  }
  for (int m = 0; m < n; ++m)
    for (int j = -LOWPASS_HALF; j <= LOWPASS_HALF; ++j)
      if (m + j >= 0 && m + j < n) matrix[(size_t)m * n + m + j] = (float)tap[j + LOWPASS_HALF];
}

/* The columns row k can need: the low pass's reach each side and the warp's move of the
 * frequencies it passes (to `top` cycles a sample): the inverse warp delays frequency f by
 * t (1 / cos(pi f dt) - 1), so corrected time t takes raw times down to t cos(pi top); the
 * forward one advances it, taking raw times up to t / cos(pi top); a guard of 8. Outside,
 * the warped columns hold only what the float warp leaves (1e-7 of a row's largest) and the
 * spread of the low pass's columns cut by the trace's ends (a step, which the warp spreads
 * over every row at 1e-4: a trace is silent at its start, and at its end the whole-trace
 * warp is no better defined). */
static void row_reach(rtm_traces_warp_t warp, int n, int k, double top, int *from, int *to) {
  enum { GUARD = RTM_TRACES_BAND_MAX_LAG - LOWPASS_HALF };
  const double slow = cos(PI * top);
  const double earliest = warp == RTM_TRACES_WARP_INVERSE ? k * slow : k;
  const double latest = warp == RTM_TRACES_WARP_INVERSE ? k : k / slow;
  *from = (int)floor(earliest) - LOWPASS_HALF - GUARD;
  *to = (int)ceil(latest) + LOWPASS_HALF + GUARD;
  *from = *from < 0 ? 0 : *from;
  *to = *to > n - 1 ? n - 1 : *to;
}

/* Row k of W' (entry m at warped[m n + k]) cut to [*lo, *hi] within its reach: the first
 * entry of at least tail_left of the row's largest and the last of at least tail_right. */
static void row_cut(const float *warped, int n, int k, int from, int to, int *lo, int *hi) {
  float largest = 0.0f;
  for (int m = from; m <= to; ++m)
    largest = fmaxf(largest, fabsf(warped[(size_t)m * n + k]));
  const float floor_left = (float)(tail_left * largest),
              floor_right = (float)(tail_right * largest);
  for (*lo = from; *lo < k && fabsf(warped[(size_t)*lo * n + k]) < floor_left; ++*lo)
    ;
  for (*hi = to; *hi > k && fabsf(warped[(size_t)*hi * n + k]) < floor_right; --*hi)
    ;
}

/* Groups, their columns and the lag from the rows' cuts; then the blocks. */
static int band_pack(rtm_traces_warp_t warp, const float *warped, int n, double top,
                     rtm_traces_band_t *band) {
  int status = RTM_OK;
  band->first = calloc((size_t)band->groups, sizeof *band->first);
  band->width = calloc((size_t)band->groups, sizeof *band->width);
  band->offset = calloc((size_t)band->groups + 1, sizeof *band->offset);
  int *lo = malloc((size_t)n * sizeof *lo), *hi = malloc((size_t)n * sizeof *hi);
  if (!band->first || !band->width || !band->offset || !lo || !hi)
    RTM_FAIL(RTM_ERR_NOMEM, "traces: out of memory for the warp's band");
#pragma omp parallel for schedule(static)
  for (int k = 0; k < n; ++k) {
    int from = 0, to = 0;
    row_reach(warp, n, k, top, &from, &to);
    row_cut(warped, n, k, from, to, &lo[k], &hi[k]);
  }
  for (int g = 0; g < band->groups; ++g) {
    const int rows = n - g * ROWS < ROWS ? n - g * ROWS : ROWS;
    int first = lo[g * ROWS], last = hi[g * ROWS];
    for (int j = 1; j < rows; ++j) {
      first = lo[g * ROWS + j] < first ? lo[g * ROWS + j] : first;
      last = hi[g * ROWS + j] > last ? hi[g * ROWS + j] : last;
    }
    band->first[g] = first;
    band->width[g] = last - first + 1;
    band->offset[g + 1] = band->offset[g] + (long long)band->width[g] * ROWS;
    const int lag = last - (g * ROWS + ROWS - 1);
    band->lag = lag > band->lag ? lag : band->lag;
    band->max_width = band->width[g] > band->max_width ? band->width[g] : band->max_width;
  }
  band->coef = calloc((size_t)band->offset[band->groups], sizeof *band->coef);
  if (!band->coef) RTM_FAIL(RTM_ERR_NOMEM, "traces: out of memory for the warp's band");
#pragma omp parallel for schedule(static)
  for (int g = 0; g < band->groups; ++g)
    for (int j = 0; j < ROWS && g * ROWS + j < n; ++j) {
      const int k = g * ROWS + j;
      for (int m = lo[k]; m <= hi[k]; ++m)
        band->coef[band->offset[g] + (long long)(m - band->first[g]) * ROWS + j] =
            warped[(size_t)m * n + k];
    }
fail:
  free(lo);
  free(hi);
  return status;
}

/* The low pass's cut-off in cycles a sample, and the warp's end (the inverse warp takes no
 * frequency above 1 / (pi dt); the forward one reaches Nyquist). */
static double band_cutoff(double limit_hz, double dt) {
  return limit_hz * dt + lowpass_margin;
}
static double warp_end(rtm_traces_warp_t warp) {
  return warp == RTM_TRACES_WARP_INVERSE ? 1.0 / PI : 0.5;
}

int rtm_traces_band_supported(rtm_traces_warp_t warp, int n, double dt, double limit_hz, char *why,
                              size_t why_size) {
  const char *reason = NULL;
  char text[160];
  if (n > RTM_TRACES_BAND_MAX_SAMPLES) {
    snprintf(text, sizeof text, "traces of %d samples are longer than the warp's band takes (%d)",
             n, RTM_TRACES_BAND_MAX_SAMPLES);
    reason = text;
  } else if (band_cutoff(limit_hz, dt) + lowpass_margin >= 0.95 * warp_end(warp)) {
    snprintf(text, sizeof text,
             "the traces' band (to %.4g Hz) reaches too near the warp's end at %.4g Hz for a "
             "banded warp",
             limit_hz, warp_end(warp) / dt);
    reason = text;
  }
  if (reason && why) snprintf(why, why_size, "%s", reason);
  return reason == NULL;
}

int rtm_traces_band_build(const char *backend, rtm_traces_warp_t warp, int n, double dt,
                          double limit_hz, rtm_traces_band_t *band) {
  int status = RTM_OK;
  float *matrix = NULL;
  char why[160];
  memset(band, 0, sizeof *band);
  const double cutoff = band_cutoff(limit_hz, dt); /* cycles a sample */
  if (warp == RTM_TRACES_WARP_NONE || n < 1 || !(dt > 0.0) || !(limit_hz > 0.0))
    RTM_FAIL(RTM_ERR_INTERNAL, "traces: a warp band of %d samples at %g s below %g Hz", n, dt,
             limit_hz);
  if (!rtm_traces_band_supported(warp, n, dt, limit_hz, why, sizeof why))
    RTM_FAIL(RTM_ERR_UNSUPPORTED, "%s", why);
  band->n = n;
  band->groups = (n + ROWS - 1) / ROWS;
  band->limit_hz = limit_hz;
  band->cutoff_hz = cutoff / dt;
  matrix = calloc((size_t)n * (size_t)n, sizeof *matrix);
  if (!matrix) RTM_FAIL(RTM_ERR_NOMEM, "traces: out of memory for the warp's %d x %d matrix", n, n);
  lowpass_columns(n, cutoff, matrix);
#ifdef RTM3D_HAVE_CUDA
  if (strcmp(backend, "cuda") == 0)
    RTM_TRY(rtm_traces_cuda_dispersion_staged(warp, n, n, dt, BAND_PADDING, matrix));
  else
#endif
    RTM_TRY(rtm_traces_dispersion_padded(backend, warp, n, n, dt, BAND_PADDING, matrix));
  RTM_TRY(band_pack(warp, matrix, n, cutoff + lowpass_margin, band));
fail:
  free(matrix);
  if (status != RTM_OK) rtm_traces_band_release(band);
  return status;
}

void rtm_traces_band_release(rtm_traces_band_t *band) {
  free(band->first);
  free(band->width);
  free(band->offset);
  free(band->coef);
  memset(band, 0, sizeof *band);
}

void rtm_traces_band_apply(const rtm_traces_band_t *band, const float *traces, size_t pitch,
                           int receivers, int first, int count, float *out) {
  const int g0 = first / ROWS, g1 = (first + count + ROWS - 1) / ROWS;
#pragma omp parallel for schedule(static)
  for (int r = 0; r < receivers; ++r)
    for (int g = g0; g < g1; ++g) {
      float acc[ROWS] = {0.0f};
      const float *x = traces + (size_t)r * pitch + band->first[g];
      const float *c = band->coef + band->offset[g];
      for (int m = 0; m < band->width[g]; ++m)
        for (int j = 0; j < ROWS; ++j)
          acc[j] = fmaf(c[(size_t)m * ROWS + j], x[m], acc[j]);
      for (int j = 0; j < ROWS; ++j) {
        const int s = g * ROWS + j - first;
        if (s < count) out[(size_t)r * count + s] = acc[j];
      }
    }
}
