/* banded_warp.c - whether the inverse time-dispersion warp can be one banded matrix for
 * every trace (issue 35: corrected gathers streamed while a run steps). The warp of n
 * samples is a linear map W, the same for all traces; W' = W P, with P a low pass above the
 * source's band (a Blackman-windowed sinc, cut-off NU cycles a sample, HALF samples each
 * side), is compact: its row k is cut to [k - L - c k, k + R]. Prints, for several cuts,
 * the relative L2 distance of W' x from the whole-trace warp rtm_traces_dispersion of x, x
 * being 10 Hz Ricker arrivals at 0.3 to 3.9 s warped forward (as a leapfrog records them),
 * 2001 samples at 2 ms (the 512^3 bench deck's dt at 2000 steps).
 * Usage: banded_warp [NU] [HALF]   (defaults 0.1 and 64); run/experiments/banded_warp.sh. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "rtm_traces.h"

enum { N = 2001, TRACES = 6 };

int main(int argc, char **argv) {
  const double dt = 0.002, f = 10.0, pi = 3.14159265358979323846;
  const double nu = argc > 1 ? atof(argv[1]) : 0.1;
  const int half = argc > 2 ? atoi(argv[2]) : 64;
  /* row m of w: the low-passed impulse at m, warped: column m of W' */
  float *w = calloc((size_t)N * N, sizeof *w), *x = calloc((size_t)TRACES * N, sizeof *x);
  float *y = calloc((size_t)TRACES * N, sizeof *y);
  if (!w || !x || !y) return 1;
  for (int m = 0; m < N; ++m)
    for (int j = -half; j <= half; ++j)
      if (m + j >= 0 && m + j < N) {
        const double sinc = j == 0 ? 2.0 * nu : sin(2.0 * pi * nu * j) / (pi * j);
        const double window = 0.42 + 0.5 * cos(pi * j / half) + 0.08 * cos(2.0 * pi * j / half);
        w[(size_t)m * N + m + j] = (float)(sinc * window);
      }
  if (rtm_traces_dispersion("cpu", RTM_TRACES_WARP_INVERSE, N, N, dt, w) != 0) return 1;
  const double arrival_s[TRACES] = {0.3, 1.0, 2.0, 3.0, 3.6, 3.9};
  for (int t = 0; t < TRACES; ++t)
    for (int k = 0; k < N; ++k) {
      const double a = pi * f * (k * dt - arrival_s[t]);
      x[(size_t)t * N + k] = (float)((1.0 - 2.0 * a * a) * exp(-a * a));
    }
  rtm_traces_dispersion("cpu", RTM_TRACES_WARP_FORWARD, TRACES, N, dt, x);
  for (size_t i = 0; i < (size_t)TRACES * N; ++i)
    y[i] = x[i];
  rtm_traces_dispersion("cpu", RTM_TRACES_WARP_INVERSE, TRACES, N, dt, y);
  static const int lead[] = {32, 64, 128, 192}, lag[] = {16, 64, 128};
  static const double growth[] = {0.0, 0.03, 0.05};
  printf("nu %.3g, half %d: row k cut to [k - L - c k, k + R]\n", nu, half);
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 3; ++b)
      for (int c = 0; c < 3; ++c) {
        double num = 0.0, den = 0.0;
        for (int t = 0; t < TRACES; ++t)
          for (int k = 0; k < N; ++k) {
            int lo = k - lead[a] - (int)(growth[c] * k), hi = k + lag[b];
            lo = lo < 0 ? 0 : lo;
            hi = hi > N - 1 ? N - 1 : hi;
            double sum = 0.0;
            for (int m = lo; m <= hi; ++m)
              sum += (double)w[(size_t)m * N + k] * x[(size_t)t * N + m];
            const double e = sum - y[(size_t)t * N + k];
            num += e * e;
            den += (double)y[(size_t)t * N + k] * y[(size_t)t * N + k];
          }
        printf("L %3d  c %.2f  R %3d  taps at the end %4d  rel L2 %.2e\n", lead[a], growth[c],
               lag[b], lead[a] + (int)(growth[c] * (N - 1)) + lag[b] + 1, sqrt(num / den));
      }
  free(w);
  free(x);
  free(y);
  return 0;
}
