/* rtm_test_codec.h - the volumes the codec's tests compress (header only): the cpu
 * test (tests/solver/test_codec.c) measures their round-trip error, the GPU test
 * (tests/gpu/test_codec_gpu.c) checks the device's bits against the C reference's on them.
 * Each is drawn fresh from the test's generator (a random centre, width, direction,
 * amplitude), so the bounds asserted hold for a family, not one lucky volume. */
#ifndef RTM_TEST_CODEC_H
#define RTM_TEST_CODEC_H

#include <math.h>
#include <stddef.h>

#include "rtm_test_random.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

typedef enum {
  CODEC_GAUSSIAN,   /* smooth: exp(-r^2 / 2 s^2), s 6 .. 10 cells */
  CODEC_RICKER,     /* a spherical Ricker wavefront, 10 cells a wavelength */
  CODEC_PLANE_WAVE, /* sin(k.x + phase) in a random direction, `cells` cells a wavelength */
  CODEC_RANDOM,     /* uniform in [-1, 1): no correlation at all, the worst case */
  CODEC_KINDS
} codec_kind_t;

static const char *const codec_kind_names[CODEC_KINDS] = {"gaussian", "ricker", "plane wave",
                                                          "random"};

/* A volume n (x fastest) with pitches pitch_y, pitch_z floats; `cells` is the plane wave's
 * wavelength in cells. The amplitude is drawn over 10^-6 .. 10^6: block floating point
 * must not care. */
static inline void codec_fill(codec_kind_t kind, const int n[3], size_t pitch_y, size_t pitch_z,
                              double cells, rtm_test_rng_t *rng, float *volume) {
  double centre[3], k[3];
  for (int a = 0; a < 3; ++a)
    centre[a] = rtm_test_uniform(rng, 0.3, 0.7) * n[a];
  const double width = rtm_test_uniform(rng, 6.0, 10.0);
  const double amplitude = pow(10.0, rtm_test_uniform(rng, -6.0, 6.0));
  const double theta = rtm_test_uniform(rng, 0.2, 1.3), phi = rtm_test_uniform(rng, 0.0, 6.28);
  const double phase = rtm_test_uniform(rng, 0.0, 6.28);
  k[0] = sin(theta) * cos(phi);
  k[1] = sin(theta) * sin(phi);
  k[2] = cos(theta);
  const double radius = 0.3 * fmin(fmin(n[0], n[1]), n[2]), wavelength = 10.0;
  for (int z = 0; z < n[2]; ++z)
    for (int y = 0; y < n[1]; ++y)
      for (int x = 0; x < n[0]; ++x) {
        const double d[3] = {x - centre[0], y - centre[1], z - centre[2]};
        const double r = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
        double v = 0.0;
        switch (kind) {
        case CODEC_GAUSSIAN: v = exp(-r * r / (2.0 * width * width)); break;
        case CODEC_RICKER: {
          const double a = M_PI * (r - radius) / wavelength;
          v = (1.0 - 2.0 * a * a) * exp(-a * a);
          break;
        }
        case CODEC_PLANE_WAVE:
          v = sin(2.0 * M_PI * (k[0] * x + k[1] * y + k[2] * z) / cells + phase);
          break;
        default: v = rtm_test_uniform(rng, -1.0, 1.0); break;
        }
        volume[(size_t)z * pitch_z + (size_t)y * pitch_y + (size_t)x] = (float)(amplitude * v);
      }
}

/* ||a - b|| / ||a|| over the interior of two volumes of the same pitches. */
static inline double codec_relative_l2(const float *a, const float *b, const int n[3],
                                       size_t pitch_y, size_t pitch_z) {
  double error = 0.0, norm = 0.0;
  for (int z = 0; z < n[2]; ++z)
    for (int y = 0; y < n[1]; ++y)
      for (int x = 0; x < n[0]; ++x) {
        const size_t i = (size_t)z * pitch_z + (size_t)y * pitch_y + (size_t)x;
        const double d = (double)a[i] - (double)b[i];
        error += d * d;
        norm += (double)a[i] * (double)a[i];
      }
  return norm > 0.0 ? sqrt(error / norm) : sqrt(error);
}

#endif
