/* Leapfrog stability limit of the 8th-order Laplacian and the choice of dt. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "rtm_anisotropy.h"
#include "rtm_physics.h"
#include "rtm_status.h"

/* Anisotropic equations (vti, tti). With the parameters conditioned as rtm_anisotropy.h says
 * (delta <= epsilon, 0 <= vsz^2 <= min(vpz^2, vpn^2)), a plane wave obeys
 * omega^2 u = M(a, b) u with a = -symbol(Hz) >= 0, b = -symbol(Hxy) >= 0, a + b =
 * -symbol(lap), and the largest eigenvalue of M is at most max(vpz^2, vpx^2) (a + b): the qP
 * phase velocity never exceeds max(vpz, vpx). a, b >= 0 holds for the discrete operators as
 * well, because the mixed derivatives are products of first-derivative stencils and the
 * square of that symbol never exceeds the second-derivative one (D1(kh)^2 <= S2(kh) on
 * [0, pi]; then Hz and Hxy are both sums of non-negative terms by Cauchy-Schwarz, |n| = 1).
 * So the cross terms do not tighten the limit: it is the iso one at
 * v = vp sqrt(1 + 2 max(eps, 0)), and one cfl limit, 0.4529, holds for every equation.
 * tests/solver/test_anisotropy.c scans the discrete symbol over wavenumbers, tilts and
 * parameters at the dt chosen here; variable coefficients (vp gradient, smooth tilt up to 60
 * degrees, blocks of +-60 degrees) ran 5000 steps at 99% of the limit without growth. Tilt
 * that changes from cell to cell grows at any dt (the variable-coefficient FDF operator, not
 * the time step): physics.smooth_angles is the remedy there. */

/* Points per shortest wavelength below which the sampling warning is printed. */
static const double min_points_per_wavelength = 5.0;
/* Relative L2 error of the last arrivals above which the time-dispersion warning is. */
#define PI 3.14159265358979323846
static const double max_time_dispersion_error = 0.05;

/* The leapfrog's time dispersion on a Ricker of peak f_peak after travelling T seconds at
 * step dt: the relative L2 error of the arrival. Each frequency f runs early by
 * T (x / sin x - 1), x = pi f dt (the scheme is exact for psi = (2 / dt) sin(omega dt / 2),
 * Koene et al. 2018); its phase error weighed by the Ricker's spectrum, (f / f_peak)^2
 * exp(-(f / f_peak)^2), up to 4 f_peak. For test_dispersion's trial (2000 m/s, 10 m, 20 Hz,
 * cfl 0.4, the farthest arrival near 0.26 s: 130 steps) it gives 19% (cli_basics checks the
 * warning's figure) where the test measured 14% with sinc points and no correction: an
 * estimate on the high side. */
static double time_dispersion_error(double f_peak, double dt, double T) {
  enum { SAMPLES = 400 };
  double error = 0.0, energy = 0.0;
  for (int k = 1; k <= SAMPLES; ++k) {
    const double f = 4.0 * f_peak * k / SAMPLES, r = f / f_peak, x = PI * f * dt;
    if (x >= PI / 2) break; /* past the band a stable run carries */
    const double a2 = r * r * r * r * exp(-2.0 * r * r);
    const double phase = 2.0 * PI * f * T * (x / sin(x) - 1.0);
    error += a2 * (2.0 - 2.0 * cos(phase));
    energy += a2;
  }
  return energy > 0.0 ? sqrt(error / energy) : 0.0;
}

/* "1 point" or "4.8 points": the figure as %.3g, the noun singular when that reads 1. */
static void points_text(double points, char *text, size_t size) {
  char figure[32];
  /* three figures, rounded down: a value below a bound does not read as the bound (1.996
   * points were said as "2 points ... below 2"); the nudge keeps 4.8 from a quotient's
   * 4.7999999999 at 4.8 */
  if (points > 0.0 && isfinite(points)) {
    const double scale = pow(10.0, 2.0 - floor(log10(points)));
    points = floor(points * scale * (1.0 + 1e-9)) / scale;
  }
  snprintf(figure, sizeof figure, "%.3g", points);
  snprintf(text, size, "%s point%s", figure, strcmp(figure, "1") == 0 ? "" : "s");
}

/* |symbol of the 2nd-derivative stencil at kh = pi| = |c0| + 2 sum |c_k| = 6.5016. */
static double nyquist_symbol(void) {
  double s = fabs(rtm_fd2_coeff[0]);
  for (int k = 1; k <= RTM_RADIUS; ++k)
    s += 2.0 * fabs(rtm_fd2_coeff[k]);
  return s;
}

/* Leapfrog p[n+1] - 2 p[n] + p[n-1] = dt^2 v^2 L p[n] is stable while
 * dt^2 v^2 max|L| <= 4, and max|L| = S sum_a 1/h_a^2 (the checkerboard mode). */
double rtm_stable_dt(double v_max, const double spacing_m[3]) {
  double sum = 0.0;
  for (int a = 0; a < 3; ++a)
    sum += 1.0 / (spacing_m[a] * spacing_m[a]);
  return 2.0 / (v_max * sqrt(nyquist_symbol() * sum));
}

/* The fastest phase velocity: vp_max, times sqrt(1 + 2 eps_max) for vti and tti. */
static double fastest_velocity(const rtm_config_t *cfg, double vp_max, double epsilon_max) {
  if (cfg->physics.equation != RTM_EQUATION_ISO && epsilon_max > 0.0)
    return vp_max * sqrt(1.0 + 2.0 * epsilon_max);
  return vp_max;
}

/* time.dt, or dt = auto from time.cfl, within the stability limit at v_max. */
static int stable_dt(const rtm_config_t *cfg, const rtm_grid_t *grid, double v_max, double *dt_s) {
  int status = RTM_OK;
  const double limit_s = rtm_stable_dt(v_max, grid->spacing_m);
  const double h_min = rtm_grid_min_spacing(grid);
  const double cfl_limit = limit_s * v_max / h_min;
  char why[128] = "";
  if (cfg->physics.equation != RTM_EQUATION_ISO)
    snprintf(why, sizeof why, " (anisotropic: v_max = vp sqrt(1 + 2 eps_max))");

  double dt = cfg->time.dt_s;
  if (isnan(dt)) {
    if (!(cfg->time.cfl > 0.0) || cfg->time.cfl > cfl_limit)
      RTM_FAIL(RTM_ERR_CONFIG,
               "time.cfl = %g is outside (0, %.6g], the stability limit for v_max = %g m/s "
               "and h_min = %g m%s",
               cfg->time.cfl, cfl_limit, v_max, h_min, why);
    dt = cfg->time.cfl * h_min / v_max;
  } else if (!(dt > 0.0) || dt > limit_s) {
    char advice[128]; /* what dt = auto would take */
    if (cfg->time.cfl > 0.0 && cfg->time.cfl <= cfl_limit)
      snprintf(advice, sizeof advice, "%.4g s here: time.cfl = %g x h_min / v_max",
               cfg->time.cfl * h_min / v_max, cfg->time.cfl);
    else
      snprintf(advice, sizeof advice, "with time.cfl <= %.4g", cfl_limit);
    RTM_FAIL(RTM_ERR_CONFIG,
             "time.dt = %g s is outside (0, %.6g s], the stability limit for v_max = %g m/s "
             "and spacing (%g, %g, %g) m%s: lower it, or set time.dt = auto (%s)",
             dt, limit_s, v_max, grid->spacing_m[0], grid->spacing_m[1], grid->spacing_m[2], why,
             advice);
  }
  *dt_s = dt;
fail:
  return status;
}

int rtm_check_deck_dt(const rtm_config_t *cfg, const rtm_grid_t *grid) {
  double dt;
  if (cfg->model.file[0]) return RTM_OK;
  const double v_max =
      fastest_velocity(cfg, rtm_model_constants_vp_max(cfg, grid), (float)cfg->model.epsilon);
  return stable_dt(cfg, grid, v_max, &dt);
}

int rtm_resolve_dt(const rtm_config_t *cfg, const rtm_model_t *model, const rtm_grid_t *grid,
                   double *dt_s) {
  int status = RTM_OK;
  if (cfg->physics.equation != RTM_EQUATION_ISO) RTM_TRY(rtm_anisotropy_check(cfg, grid, model));
  const double v_max = fastest_velocity(cfg, model->vp_max, model->epsilon_max);
  if (!(v_max > 0.0) || !isfinite(v_max))
    RTM_FAIL(RTM_ERR_INTERNAL, "model velocity range not set (vp_max = %g m/s)", model->vp_max);
  double dt;
  RTM_TRY(stable_dt(cfg, grid, v_max, &dt));

  /* a step the float32 fields can see the wave move in, a wavelet inside the run: named
   * by rtm_config_validate when the deck gave dt, here when the model did */
  RTM_TRY(rtm_config_check_timing(cfg, dt));

  /* The Ricker spectrum falls to 3% of its peak at 2.5 f_peak. */
  double h_max = grid->spacing_m[0];
  for (int a = 1; a < 3; ++a)
    if (grid->spacing_m[a] > h_max) h_max = grid->spacing_m[a];
  const double f = cfg->source.frequency_hz;
  if (f > 0.0) {
    double points = model->vp_min / (2.5 * f) / h_max;
    char points_said[48];
    points_text(points, points_said, sizeof points_said);
    if (points < 2.0) /* past Nyquist: the grid cannot carry the wavelet at all */
      RTM_FAIL(RTM_ERR_CONFIG,
               "source.frequency = %g Hz leaves %s per shortest wavelength (vp_min = "
               "%g m/s, 2.5 x source.frequency = %g Hz, h_max = %g m): below 2 the grid cannot "
               "carry the wavelet (aliased); lower source.frequency or refine the grid",
               f, points_said, model->vp_min, 2.5 * f, h_max);
    if (points < min_points_per_wavelength)
      rtm_log_warning("%s per shortest wavelength (vp_min = %g m/s, 2.5 x "
                      "source.frequency = %g Hz, h_max = %g m); below %g the 8th-order "
                      "stencil disperses visibly: refine grid.dx, dy, dz or lower "
                      "source.frequency",
                      points_said, model->vp_min, 2.5 * f, h_max, min_points_per_wavelength);
    const double run_s = cfg->time.steps * dt;
    const double error = time_dispersion_error(f, dt, run_s);
    if (cfg->time.dispersion_correction == RTM_DISPERSION_NONE && error > max_time_dispersion_error)
      rtm_log_warning("time dispersion: with time.dispersion_correction = none an arrival "
                      "after the run's %.3g s (time.steps x dt = %d x %.3g s) is off by about "
                      "%.0f%% relative L2 (the leapfrog runs the source's high frequencies "
                      "early); leave the correction at full, its default (the wavelet and the "
                      "gathers warped), or lower time.cfl (the error falls as dt^2); rtm3d "
                      "accuracy measures it",
                      run_s, cfg->time.steps, dt, 100.0 * error);
  }
  /* a run that ends before the wavelet's peak records nothing: say so before it starts */
  const double delay_s = isnan(cfg->source.delay_s) ? 1.2 / f : cfg->source.delay_s;
  if (f > 0.0 && cfg->time.steps * dt < delay_s)
    rtm_log_warning("time.steps x dt = %d x %g s = %g s ends before the source wavelet's peak "
                    "at %g s (source.delay, auto 1.2 / source.frequency): the traces and "
                    "snapshots will be all but zero; raise time.steps or time.dt",
                    cfg->time.steps, dt, cfg->time.steps * dt, delay_s);
  *dt_s = dt;
  return RTM_OK;
fail:
  return status;
}
