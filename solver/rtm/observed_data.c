/* The observed gathers before back-propagation (rtm_migration.h): the direct-arrival mute,
 * and -d/dt, the phase correction of the 3D image. */
#include <math.h>

#include "rtm_migration.h"

void rtm_mute_direct(float *traces, int count, int samples, double dt_s, const double source_m[3],
                     const double *receivers_m, double velocity_m_s, double delay_s,
                     double taper_s) {
  const double pi = 3.14159265358979323846;
  for (int r = 0; r < count; ++r) {
    const double *p = receivers_m + 3 * (size_t)r;
    const double offset_m = sqrt((p[0] - source_m[0]) * (p[0] - source_m[0]) +
                                 (p[1] - source_m[1]) * (p[1] - source_m[1]) +
                                 (p[2] - source_m[2]) * (p[2] - source_m[2]));
    const double muted_until_s = offset_m / velocity_m_s + delay_s + taper_s;
    float *trace = traces + (size_t)r * (size_t)samples;
    for (int k = 0; k < samples; ++k) {
      const double t = k * dt_s;
      if (t >= muted_until_s + taper_s) break;
      const double gain =
          t < muted_until_s ? 0.0 : 0.5 - 0.5 * cos(pi * (t - muted_until_s) / taper_s);
      trace[k] = (float)(trace[k] * gain);
    }
  }
}

void rtm_phase_correction(float *traces, int count, int samples, double dt_s) {
  for (int r = 0; r < count; ++r) {
    float *trace = traces + (size_t)r * (size_t)samples;
    double before = 0.0; /* the trace is zero before its first sample and after its last */
    for (int k = 0; k < samples; ++k) {
      const double here = trace[k], after = k + 1 < samples ? trace[k + 1] : 0.0;
      trace[k] = (float)(-(after - before) / (2.0 * dt_s));
      before = here;
    }
  }
}
