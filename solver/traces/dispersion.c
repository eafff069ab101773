/* dispersion.c - time.dispersion_correction in one place: what each mode warps, with the
 * trace pipeline's warp (rtm_traces_dispersion, rtm_traces_warp_t), and what it refuses.
 *   none:   nothing is warped;
 *   traces: the recorded traces are warped back from the leapfrog's frequencies to the true
 *           ones after the run (INVERSE); a migration records none, so it refuses the mode;
 *   full:   the source wavelet is warped forward before the run (FORWARD) and the recorded
 *           traces back after it; in a migration the observed gathers, the sources of the
 *           receiver side's propagation, are warped forward like the wavelet: both
 *           wavefields are then the exact ones at the warped frequencies, and their zero-lag
 *           correlation, the image, has no time-dispersion error (only a weight
 *           1 / cos(omega dt / 2) >= 1 per frequency, Parseval).
 * The propagator (wavelet, recorded traces) and the migration (observed gathers) call it. */
#include "rtm_status.h"
#include "rtm_traces.h"

int rtm_dispersion_warp_wavelet(rtm_dispersion_correction_t mode, int samples, double dt_s,
                                float *wavelet) {
  if (mode != RTM_DISPERSION_FULL) return RTM_OK;
  return rtm_traces_dispersion("cpu", RTM_TRACES_WARP_FORWARD, 1, samples, dt_s, wavelet);
}

int rtm_dispersion_corrects_recorded(rtm_dispersion_correction_t mode) {
  return mode == RTM_DISPERSION_TRACES || mode == RTM_DISPERSION_FULL;
}

int rtm_dispersion_correct_recorded(rtm_dispersion_correction_t mode, const char *pipeline,
                                    int count, int samples, double dt_s, float *traces) {
  if (!rtm_dispersion_corrects_recorded(mode)) return RTM_OK;
  return rtm_traces_dispersion(pipeline, RTM_TRACES_WARP_INVERSE, count, samples, dt_s, traces);
}

int rtm_dispersion_correct_recorded_device(rtm_dispersion_correction_t mode, int count, int samples,
                                           size_t pitch, double dt_s, float *traces) {
  if (!rtm_dispersion_corrects_recorded(mode)) return RTM_OK;
  return rtm_traces_dispersion_device(RTM_TRACES_WARP_INVERSE, count, samples, pitch, dt_s, traces);
}

int rtm_dispersion_warp_observed(rtm_dispersion_correction_t mode, const char *pipeline, int count,
                                 int samples, double dt_s, float *traces) {
  if (mode != RTM_DISPERSION_FULL) return RTM_OK;
  return rtm_traces_dispersion(pipeline, RTM_TRACES_WARP_FORWARD, count, samples, dt_s, traces);
}

int rtm_dispersion_check_migration(const rtm_config_t *cfg) {
  char where[RTM_CONFIG_ORIGIN_MAX];
  int status = RTM_OK;
  if (cfg->time.dispersion_correction == RTM_DISPERSION_TRACES)
    RTM_FAIL(RTM_ERR_CONFIG,
             "%s: time.dispersion_correction = traces warps recorded traces, and a migration "
             "records none: set full (the source wavelet and the observed gathers warped "
             "before they are injected) or none",
             rtm_config_origin(cfg, "time.dispersion_correction", where, sizeof where));
fail:
  return status;
}
