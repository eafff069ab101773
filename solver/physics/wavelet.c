/* Source wavelets. */
#include <math.h>

#include "rtm_physics.h"

/* Ricker: w(t) = (1 - 2 a) exp(-a), a = pi^2 f^2 (t - t0)^2; peak 1 at t0. */
double rtm_ricker(double t_s, double frequency_hz, double delay_s) {
  const double pi = 3.14159265358979323846;
  double tau = t_s - delay_s;
  double a = pi * pi * frequency_hz * frequency_hz * tau * tau;
  return (1.0 - 2.0 * a) * exp(-a);
}
