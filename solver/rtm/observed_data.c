/* The observed gathers before back-propagation (rtm_migration.h): checked against the
 * acquisition, brought to the modelling dt, its end tapered and warped for time dispersion,
 * the direct-arrival mute, and -d/dt, the phase correction of the 3D image. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rtm_migration.h"
#include "rtm_points.h"
#include "rtm_status.h"
#include "rtm_traces.h"

/* The gather's source and receivers are the acquisition's, to a millimetre. */
static int check_geometry(const rtm_config_t *cfg, const rtm_grid_t *grid, const double source[3],
                          const rtm_observed_gather_t *gather) {
  int status = RTM_OK, count = 0;
  double *receivers = NULL;
  const int shot = gather->shot;
  const double tolerance_m = 1e-3;
  for (int a = 0; a < 3; ++a)
    if (!(fabs(gather->source_m[a] - source[a]) <= tolerance_m)) /* a NaN too */
      RTM_FAIL(RTM_ERR_INPUT,
               "rtm.observed = %s: shot %d was recorded from (%g, %g, %g) m but the "
               "acquisition puts it at (%g, %g, %g) m",
               cfg->rtm.observed, shot, gather->source_m[0], gather->source_m[1],
               gather->source_m[2], source[0], source[1], source[2]);
  RTM_TRY(rtm_receiver_positions(cfg, grid, source, &receivers, &count));
  if (count != gather->count)
    RTM_FAIL(RTM_ERR_INPUT,
             "rtm.observed = %s: shot %d has %d receivers but the acquisition ([receivers]) "
             "gives it %d",
             cfg->rtm.observed, shot, gather->count, count);
  for (int r = 0; r < count; ++r)
    for (int a = 0; a < 3; ++a)
      if (!(fabs(gather->receivers_m[3 * (size_t)r + a] - receivers[3 * (size_t)r + a]) <=
            tolerance_m))
        RTM_FAIL(RTM_ERR_INPUT,
                 "rtm.observed = %s: receiver %d of shot %d lies at %c = %g m but the "
                 "acquisition puts it at %g m",
                 cfg->rtm.observed, r, shot, "xyz"[a], gather -> receivers_m[3 * (size_t)r + a],
                 receivers[3 * (size_t)r + a]);
fail:
  free(receivers);
  return status;
}

/* Samples of the gather at the modelling dt (resampled when its dt differs); none, or fewer
 * than the migration's steps + 1, or a dt the resampling cannot reach is an error. */
static int check_duration(const rtm_config_t *cfg, double dt_s, const rtm_observed_gather_t *gather,
                          int *available) {
  int status = RTM_OK;
  const int samples = cfg->time.steps + 1;
  const int resample = fabs(gather->dt_s - dt_s) > 1e-9 * dt_s;
  if (gather->samples < 1)
    RTM_FAIL(RTM_ERR_INPUT,
             "rtm.observed = %s: shot %d's gather has no samples (%d traces of 0 samples)",
             cfg->rtm.observed, gather->shot, gather->count);
  const double at_dt =
      resample ? floor((gather->samples - 1) * gather->dt_s / dt_s + 1e-9) + 1 : gather->samples;
  *available = at_dt < INT_MAX ? (int)at_dt : INT_MAX; /* a dt of 1e300 s is refused below */
  if (resample && *available >= samples &&
      !rtm_traces_resample_possible(gather->samples, gather->dt_s, *available, dt_s))
    RTM_FAIL(RTM_ERR_INPUT,
             "rtm.observed = %s: shot %d's traces are sampled at dt = %.12g s (their dt "
             "attribute, or the SEG-Y interval), which cannot be resampled to the modelling dt = "
             "%g s: their ratio %.12g is not a ratio of integers p/q with q <= 4096 (a rounded or "
             "damaged dt?)",
             cfg->rtm.observed, gather->shot, gather->dt_s, dt_s, dt_s / gather->dt_s);
  if (*available < samples)
    RTM_FAIL(RTM_ERR_INPUT,
             "rtm.observed = %s: shot %d's gather lasts %g s (%d samples of %g s) but the "
             "migration needs %g s (time.steps = %d of %g s)",
             cfg->rtm.observed, gather->shot, (gather->samples - 1) * gather->dt_s, gather->samples,
             gather->dt_s, (samples - 1) * dt_s, samples - 1, dt_s);
fail:
  return status;
}

/* The image sums S R and the receiver wavefield R scales with the gathers: their largest
 * sample times the source wavefield at the volume's far corner, about |A| / (4 pi r), must
 * keep float32's 24 bits (RTM_FLOAT_FULL_PRECISION), or the image loses precision and then
 * underflows to zero (probe O, O2: a record scaled by 1e-38 gave an image 64% off with exit
 * 0). A gather of zeros images nothing and passes. */
static int check_amplitude(const rtm_config_t *cfg, const rtm_grid_t *grid,
                           const rtm_observed_gather_t *gather) {
  float largest = 0.0f;
  const size_t total = (size_t)gather->count * (size_t)gather->samples;
  for (size_t i = 0; i < total; ++i)
    largest = fmaxf(largest, fabsf(gather->traces[i]));
  const double diagonal = rtm_config_volume_diagonal_m(cfg);
  const double pi = 3.14159265358979323846;
  const double source_far = fabs(cfg->source.amplitude) / (4.0 * pi * diagonal);
  /* divided by the illumination, the image is about R / S: the gathers over the source
   * wavefield near the source (probe P, P3: amplitude 1e19 over a record of 1e-30 gave an
   * image of zeros) */
  const double h_min = fmin(grid->spacing_m[0], fmin(grid->spacing_m[1], grid->spacing_m[2]));
  const double source_near = fabs(cfg->source.amplitude) / (4.0 * pi * h_min);
  if (largest != 0.0f && cfg->rtm.illumination &&
      (double)largest / source_near < RTM_FLOAT_FULL_PRECISION) {
    rtm_log_error("%s: shot %d's largest sample is %.3g: the image divided by the illumination "
                  "is about the gathers over the source wavefield, whose |source.amplitude| / "
                  "(4 pi h) near the source is %.3g, and that ratio, %.3g, falls below %.3g, where "
                  "float32 loses precision and then gives zero: lower source.amplitude (1 is "
                  "usual) or scale the gathers up",
                  cfg->rtm.observed, gather->shot, (double)largest, source_near,
                  (double)largest / source_near, RTM_FLOAT_FULL_PRECISION);
    return RTM_ERR_INPUT;
  }
  if (largest == 0.0f || (double)largest * source_far >= RTM_FLOAT_FULL_PRECISION) return RTM_OK;
  rtm_log_error("%s: shot %d's largest sample is %.3g: the image sums its back-propagated "
                "wavefield times the source's, about |source.amplitude| / (4 pi r) = %.3g at "
                "the volume's far corner, and that product, %.3g, falls below %.3g, where "
                "float32 loses precision and then gives zero: the image would be wrong or zero; "
                "scale the gathers up (the image scales with them: a largest sample of at least "
                "%.3g loses nothing)",
                cfg->rtm.observed, gather->shot, (double)largest, source_far,
                (double)largest * source_far, RTM_FLOAT_FULL_PRECISION,
                RTM_FLOAT_FULL_PRECISION / source_far);
  return RTM_ERR_INPUT;
}

int rtm_observed_check(const rtm_config_t *cfg, const rtm_grid_t *grid, double dt_s,
                       const double acquisition_source_m[3], const rtm_observed_gather_t *gather) {
  int status = RTM_OK, available = 0;
  RTM_TRY(check_geometry(cfg, grid, acquisition_source_m, gather));
  RTM_TRY(check_duration(cfg, dt_s, gather, &available));
  if (gather->traces) RTM_TRY(check_amplitude(cfg, grid, gather));
fail:
  return status;
}

int rtm_observed_at_modelling_dt(const rtm_config_t *cfg, const char *backend, double dt_s,
                                 const rtm_observed_gather_t *gather, float **observed) {
  int status = RTM_OK, available = 0;
  const int samples = cfg->time.steps + 1, shot = gather->shot;
  const int resample = fabs(gather->dt_s - dt_s) > 1e-9 * dt_s;
  const char *pipeline = rtm_traces_backend_for(backend);
  float *resampled = NULL, *out = NULL;
  *observed = NULL;
  RTM_TRY(check_duration(cfg, dt_s, gather, &available));
  const float *source = gather->traces;
  /* a record much coarser than the run (its Nyquist below half the run's, where the trace
   * pipeline warns without a name): said with the file and the shot */
  if (resample && gather->dt_s > 2.0 * dt_s)
    rtm_log_warning("%s: shot %d is sampled every %g s, %.3gx the modelling dt = %g s: "
                    "resampled, it holds nothing above %g Hz (source.frequency = %g Hz)",
                    cfg->rtm.observed, shot, gather->dt_s, gather->dt_s / dt_s, dt_s,
                    0.5 / gather->dt_s, cfg->source.frequency_hz);
  if (resample) {
    resampled = malloc((size_t)gather->count * (size_t)available * sizeof *resampled);
    if (!resampled) RTM_FAIL(RTM_ERR_NOMEM, "out of memory resampling shot %d", shot);
    RTM_TRY(rtm_traces_resample(pipeline, gather->count, gather->samples, gather->dt_s,
                                gather->traces, available, dt_s, resampled));
    source = resampled;
  }
  out = malloc((size_t)gather->count * (size_t)samples * sizeof *out);
  if (!out) RTM_FAIL(RTM_ERR_NOMEM, "out of memory for shot %d's gather", shot);
  for (int r = 0; r < gather->count; ++r)
    memcpy(out + (size_t)r * samples, source + (size_t)r * available, samples * sizeof *out);
  rtm_end_taper(out, gather->count, samples, dt_s, rtm_end_taper_seconds(cfg, dt_s));
  RTM_TRY(rtm_dispersion_warp_observed(cfg->time.dispersion_correction, pipeline, gather->count,
                                       samples, dt_s, out));
  *observed = out;
  out = NULL;
fail:
  free(resampled);
  free(out);
  return status;
}

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

double rtm_end_taper_seconds(const rtm_config_t *cfg, double dt_s) {
  if (!isnan(cfg->rtm.end_taper_s)) return cfg->rtm.end_taper_s;
  const double wanted = 0.5 / cfg->source.frequency_hz, half = 0.5 * cfg->time.steps * dt_s;
  return wanted < half ? wanted : half;
}

void rtm_end_taper(float *traces, int count, int samples, double dt_s, double taper_s) {
  const double pi = 3.14159265358979323846;
  if (!(taper_s > 0.0)) return;
  for (int r = 0; r < count; ++r) {
    float *trace = traces + (size_t)r * (size_t)samples;
    for (int k = samples - 1; k >= 0; --k) {
      const double before_end_s = (samples - 1 - k) * dt_s;
      if (before_end_s >= taper_s) break;
      trace[k] = (float)(trace[k] * (0.5 - 0.5 * cos(pi * before_end_s / taper_s)));
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
