/* test_anisotropy - the VTI/TTI parameters: conditioning of the FDF system (delta > epsilon,
 * vsz above vpn), the stability of dt = auto by a von Neumann scan of the discrete operator,
 * errors that name the dataset or key and the first bad cell, the warnings that count the
 * conditioned cells, and the smoothing of the symmetry axis. */
#define _POSIX_C_SOURCE 200809L
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "rtm_test_capture.h"

#include "rtm_anisotropy.h"
#include "rtm_io.h"
#include "rtm_solver.h"
#include "rtm_status.h"
#include "rtm_test_main.h"
#include "rtm_test_random.h"

static const double pi = 3.14159265358979323846;
static const char *model_path = "test_anisotropy_model.h5";

/* io's description of the test grid, for writing and reading model files. */
static rtm_io_volume_t volume_of(const rtm_grid_t *g) {
  return (rtm_io_volume_t){{g->n[0], g->n[1], g->n[2]},
                           {g->spacing_m[0], g->spacing_m[1], g->spacing_m[2]},
                           {g->origin_m[0], g->origin_m[1], g->origin_m[2]},
                           g->z_offset,
                           g->nz_local};
}

/* Writes the model's arrays to a model file (NULL ones left out). */
static int write_model_file(const char *path, const rtm_grid_t *grid, const rtm_model_t *m) {
  const rtm_io_volume_t volume = volume_of(grid);
  const float *const values[RTM_IO_PARAMETERS] = {m->vp, m->epsilon, m->delta, m->theta_deg,
                                                  m->phi_deg};
  return rtm_io_write_model(path, &volume, values);
}

/* Reads a model file's arrays into a model (as `rtm3d model` does, app/solver_io.c). */
static int read_model_file(const char *path, const rtm_grid_t *grid, rtm_equation_t equation,
                           rtm_model_t *m) {
  const rtm_io_volume_t volume = volume_of(grid);
  float *values[RTM_IO_PARAMETERS];
  const int status = rtm_io_read_model(path, &volume, equation, values);
  *m = (rtm_model_t){.vp = values[RTM_IO_VP],
                     .epsilon = values[RTM_IO_EPSILON],
                     .delta = values[RTM_IO_DELTA],
                     .theta_deg = values[RTM_IO_THETA],
                     .phi_deg = values[RTM_IO_PHI]};
  return status;
}

/* ---- the plane-wave matrix ---- */
/* Eigenvalues of M(a, b) (rtm_anisotropy.h) for vpz = 1: a = k_n^2, b = k_perp^2 symbols. */
static void eigenvalues(double epsilon, double delta, double vsz2, double a, double b, double *lo,
                        double *hi, double *discriminant) {
  const double A = 1.0 + 2.0 * epsilon, Z = 1.0, N = 1.0 + 2.0 * delta, S = vsz2;
  const double m11 = A * b + S * a, m12 = (Z - S) * a, m21 = (N - S) * b, m22 = Z * a + S * b;
  const double tr = m11 + m22, det = m11 * m22 - m12 * m21;
  *discriminant = tr * tr - 4.0 * det;
  const double root = sqrt(fmax(*discriminant, 0.0));
  *lo = 0.5 * (tr - root);
  *hi = 0.5 * (tr + root);
}

/* Over directions (a + b = 1): the worst discriminant, the smallest and the largest
 * eigenvalue. */
static void scan_directions(double epsilon, double delta, double vsz2, double *min_disc,
                            double *min_lambda, double *max_lambda) {
  *min_disc = INFINITY;
  *min_lambda = INFINITY;
  *max_lambda = 0.0;
  for (int j = 0; j <= 400; ++j) {
    const double a = j / 400.0;
    double lo, hi, disc;
    eigenvalues(epsilon, delta, vsz2, a, 1.0 - a, &lo, &hi, &disc);
    *min_disc = fmin(*min_disc, disc);
    *min_lambda = fmin(*min_lambda, lo);
    *max_lambda = fmax(*max_lambda, hi);
  }
}

/* Conditioning keeps what is stable and repairs what is not: after it, the eigenvalues are
 * real, non-negative and at most max(vpz^2, vpx^2) over every direction (what dt assumes).
 * The repaired cases fail that before conditioning, so the check can fail. */
static void test_conditioning(void **unused) {
  (void)unused;
  double delta, ratio;
  int dl, vl;
  rtm_fdf_condition(0.2, 0.1, 0.75, &delta, &ratio, &dl, &vl);
  assert_true(delta == 0.1 && fabs(ratio - 0.1 / 0.75) < 1e-15 && !dl && !vl);
  rtm_fdf_condition(0.1, 0.2, 0.75, &delta, &ratio, &dl, &vl); /* delta > epsilon */
  assert_true(delta == 0.1 && ratio == 0.0 && dl && !vl);
  rtm_fdf_condition(0.3, -0.2, 0.75, &delta, &ratio, &dl, &vl); /* vpn^2 < vsz^2 < vpz^2 */
  assert_true(delta == -0.2 && fabs(ratio - 0.6) < 1e-15 && !dl && vl);
  rtm_fdf_condition(1.2, 0.0, 0.75, &delta, &ratio, &dl, &vl); /* vsz > vpz */
  assert_true(delta == 0.0 && ratio == 1.0 && !dl && vl);

  double min_disc, min_lambda, max_lambda;
  scan_directions(0.1, 0.2, 0.0, &min_disc, &min_lambda, &max_lambda);
  assert_true(min_lambda < -1e-3); /* delta > epsilon: omega^2 < 0, exponential growth */
  scan_directions(0.3, -0.2, (0.3 + 0.2) / 0.75, &min_disc, &min_lambda, &max_lambda);
  assert_true(min_disc < -1e-3); /* complex omega^2: growth */
  scan_directions(0.5, 0.0, 0.5 / 0.1, &min_disc, &min_lambda, &max_lambda);
  assert_true(max_lambda > 1.1 * (1.0 + 2.0 * 0.5)); /* vsz > vpz: faster than vpx */

  double worst = 0.0;
  int conditioned = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    const double epsilon = rtm_test_rand_uniform(-0.49, 2.0),
                 sigma = exp(rtm_test_rand_uniform(log(0.05), log(5.0)));
    rtm_fdf_condition(epsilon, rtm_test_rand_uniform(-0.49, 2.0), sigma, &delta, &ratio, &dl, &vl);
    conditioned += dl || vl;
    scan_directions(epsilon, delta, ratio, &min_disc, &min_lambda, &max_lambda);
    const double fastest = fmax(1.0, 1.0 + 2.0 * epsilon);
    /* 1e-12: rounding of the closed form near a double root */
    if (min_disc < -1e-12 * fastest * fastest || min_lambda < -1e-12 * fastest ||
        max_lambda > (1.0 + 1e-12) * fastest)
      fail_msg("eps %g delta %g (conditioned) sigma %g vsz2 %g: disc %g, lambda in [%g, %g], "
               "vpx^2 %g",
               epsilon, delta, sigma, ratio, min_disc, min_lambda, max_lambda, fastest);
    worst = fmax(worst, max_lambda / fastest);
  }
  printf("  20000 random (eps, delta, sigma), %d conditioned: largest omega^2 / max(vpz^2, "
         "vpx^2) = %.12f\n",
         conditioned, worst);
  assert_true(conditioned > 1000); /* both branches ran */
}

/* ---- von Neumann scan of the discrete operator at the dt rtm_resolve_dt allows ---- */
static double symbol_second(double x) { /* -symbol of the 2nd-derivative stencil, >= 0 */
  double s = -rtm_fd2_coeff[0];
  for (int k = 1; k <= RTM_RADIUS; ++k)
    s -= 2.0 * rtm_fd2_coeff[k] * cos(k * x);
  return s;
}

static double symbol_first(double x) { /* symbol of the 1st-derivative stencil over i */
  double s = 0.0;
  for (int k = 1; k <= RTM_RADIUS; ++k)
    s += 2.0 * rtm_fd1_coeff[k - 1] * sin(k * x);
  return s;
}

enum { K = 12 }; /* wavenumbers per half axis; pi itself included */

typedef struct {
  double max_growth;  /* max dt^2 omega^2 / 4 over the scan; <= 1 is stable */
  int unstable_modes; /* complex or negative omega^2 */
} scan_t;

/* Every tilt (15 degree steps) and wavenumber on the grid: the discrete Hz and Hxy symbols
 * (mixed terms from the products of first-derivative symbols, as in the code), the FDF
 * matrix, and dt^2 omega^2 against the leapfrog bound 4. */
static scan_t scan_operator(double vp, double epsilon, double delta, double vsz2_ratio,
                            const double h[3], double dt) {
  scan_t out = {0.0, 0};
  double second[3][2 * K + 1], first[3][2 * K + 1];
  for (int a = 0; a < 3; ++a)
    for (int j = -K; j <= K; ++j) {
      second[a][j + K] = symbol_second(pi * j / K) / (h[a] * h[a]);
      first[a][j + K] = symbol_first(pi * j / K) / h[a];
    }
  const double Z = vp * vp, A = Z * (1 + 2 * epsilon), N = Z * (1 + 2 * delta), S = Z * vsz2_ratio;
  for (int t = 0; t <= 6; ++t)
    for (int f = 0; f < 12; ++f) {
      const double th = t * pi / 12, ph = f * pi / 6;
      const double n[3] = {sin(th) * cos(ph), sin(th) * sin(ph), cos(th)};
      for (int i = 0; i <= K; ++i) /* kx >= 0: the symbol is even in k */
        for (int j = -K; j <= K; ++j)
          for (int k = -K; k <= K; ++k) {
            if (i == 0 && j == 0 && k == 0) continue; /* constant mode: symbols are 0 +- ulps */
            const int idx[3] = {i + K, j + K, k + K};
            double lap = 0.0, hz = 0.0;
            for (int a = 0; a < 3; ++a) {
              lap += second[a][idx[a]];
              hz += n[a] * n[a] * second[a][idx[a]];
              for (int b = 0; b < 3; ++b)
                if (b != a) hz += n[a] * n[b] * first[a][idx[a]] * first[b][idx[b]];
            }
            const double hxy = lap - hz; /* both >= 0 */
            const double m11 = A * hxy + S * hz, m12 = (Z - S) * hz, m21 = (N - S) * hxy;
            const double m22 = Z * hz + S * hxy, tr = m11 + m22;
            const double disc = tr * tr - 4.0 * (m11 * m22 - m12 * m21);
            const double root = sqrt(fmax(disc, 0.0));
            const double scale = (A + Z + S) * lap; /* bounds tr */
            if (disc < -1e-9 * scale * scale || tr - root < -1e-9 * scale) ++out.unstable_modes;
            out.max_growth = fmax(out.max_growth, dt * dt * 0.5 * (tr + root) / 4.0);
          }
    }
  return out;
}

/* A constant vti/tti model on a small grid, for rtm_resolve_dt. */
typedef struct {
  rtm_grid_t grid;
  rtm_model_t model;
  rtm_config_t cfg;
} constant_t;

static float *filled(size_t cells, double value) {
  float *a = malloc(cells * sizeof *a);
  assert_non_null(a);
  for (size_t i = 0; i < cells; ++i)
    a[i] = (float)value;
  return a;
}

static void constant_make(constant_t *c, const int n[3], const double h[3], double vp,
                          double epsilon, double delta, double theta, double phi) {
  memset(c, 0, sizeof *c);
  assert_int_equal(rtm_grid_init(&c->grid, n, h, NULL), RTM_OK);
  const size_t cells = rtm_grid_interior_cells(&c->grid);
  c->model.vp = filled(cells, vp);
  c->model.epsilon = filled(cells, epsilon);
  c->model.delta = filled(cells, delta);
  c->model.theta_deg = filled(cells, theta);
  c->model.phi_deg = filled(cells, phi);
  assert_int_equal(rtm_model_update_range(&c->model, &c->grid), RTM_OK);
  rtm_config_defaults(&c->cfg);
  c->cfg.physics.equation = RTM_EQUATION_TTI;
  c->cfg.source.frequency_hz = 5.0; /* well sampled: no warning */
}

/* constant_make on cubic 10 m cells with vp 2000 m/s; returns the cell count. */
static size_t constant_make_10m(constant_t *c, const int n[3], double epsilon, double delta,
                                double theta, double phi) {
  const double h[3] = {10.0, 10.0, 10.0};
  constant_make(c, n, h, 2000.0, epsilon, delta, theta, phi);
  return rtm_grid_interior_cells(&c->grid);
}

static void test_von_neumann_at_the_limit(void **unused) {
  (void)unused;
  const double h[3] = {10.0, 12.0, 9.0}, vp = 2500.0;
  const int n[3] = {5, 4, 3};
  const double cases[][2] = {{0.0, 0.0},   {0.3, 0.1}, {0.2, 0.1},  {0.6, 0.0},  {1.0, -0.3},
                             {-0.2, -0.4}, {0.3, 0.5}, {0.3, -0.2}, {0.5, -0.3}, {2.0, 2.0}};
  const double sigma = 0.75;
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    const double epsilon = (float)cases[c][0]; /* as the model stores it */
    constant_t setup;
    constant_make(&setup, n, h, vp, epsilon, cases[c][1], 30.0, 40.0);
    /* the largest dt rtm_resolve_dt accepts, and it refuses 0.1% more */
    const double limit = rtm_stable_dt(vp * sqrt(1.0 + 2.0 * fmax(epsilon, 0.0)), h);
    double dt = 0.0;
    setup.cfg.time.dt_s = limit;
    assert_int_equal(rtm_resolve_dt(&setup.cfg, &setup.model, &setup.grid, &dt), RTM_OK);
    assert_true(dt == limit);
    setup.cfg.time.dt_s = 1.001 * limit;
    char text[RTM_TEST_CAPTURE_MAX];
    capture_t cap;
    capture_begin(&cap);
    assert_int_equal(rtm_resolve_dt(&setup.cfg, &setup.model, &setup.grid, &dt), RTM_ERR_CONFIG);
    snprintf(text, sizeof text, "%s", capture_end(&cap));

    double delta, ratio;
    int dl, vl;
    rtm_fdf_condition(epsilon, cases[c][1], sigma, &delta, &ratio, &dl, &vl);
    const scan_t scan = scan_operator(vp, epsilon, delta, ratio, h, limit);
    printf("  eps %5.2f delta %5.2f%s: max dt^2 omega^2 / 4 = %.6f, unstable modes %d\n", epsilon,
           cases[c][1], dl || vl ? " (conditioned)" : "", scan.max_growth, scan.unstable_modes);
    /* 1e-9: rounding of the symbols; the claim is exactly <= 1 */
    assert_true(scan.max_growth <= 1.0 + 1e-9);
    assert_int_equal(scan.unstable_modes, 0);
    /* iso: the bound is reached (the checkerboard mode), so no margin hides in it */
    if (epsilon == 0.0 && cases[c][1] == 0.0) assert_true(scan.max_growth > 1.0 - 1e-9);
    /* Without the conditioning, delta > epsilon or vpn^2 < vsz^2 < vpz^2 grow: the scan can
     * fail. (vsz above both only outruns vpx at some angles, test_conditioning.) */
    const double raw_delta = (float)cases[c][1], raw_ratio = (epsilon - raw_delta) / sigma;
    if (raw_delta > epsilon || (raw_ratio > 1.0 + 2.0 * raw_delta && raw_ratio < 1.0)) {
      const scan_t raw = scan_operator(vp, epsilon, raw_delta, raw_ratio, h, limit);
      assert_true(raw.unstable_modes > 0);
    }
    rtm_model_release(&setup.model);
  }
}

/* ---- prepare: conditioned cells are counted, warned about and repaired ---- */
static void test_prepare_warns_and_repairs(void **unused) {
  (void)unused;
  const int n[3] = {9, 8, 7};
  constant_t c;
  const size_t cells = constant_make_10m(&c, n, 0.2, 0.1, 20.0, 10.0);
  /* three cells with delta > epsilon, the first at [z=2][y=3][x=4]; two with vsz > vpn */
  const size_t bad_delta[3] = {(2 * 8 + 3) * 9 + 4, (3 * 8 + 1) * 9 + 7, (6 * 8 + 7) * 9 + 8};
  for (int k = 0; k < 3; ++k)
    c.model.delta[bad_delta[k]] = 0.35f;
  const size_t bad_vsz[2] = {(4 * 8 + 0) * 9 + 0, (5 * 8 + 5) * 9 + 1};
  for (int k = 0; k < 2; ++k) {
    c.model.epsilon[bad_vsz[k]] = 0.3f;
    c.model.delta[bad_vsz[k]] = -0.2f;
  }
  rtm_anisotropy_t prepared;
  capture_t cap;
  assert_int_equal(captured(&cap, rtm_anisotropy_prepare(&c.cfg, &c.grid, &c.model, &prepared)),
                   RTM_OK);
  assert_true(prepared.delta_lowered == 3 && prepared.vsz_lowered == 2);
  assert_contains(cap.text, "delta > epsilon in 3 of 504 cells");
  assert_contains(cap.text, "[z=2][y=3][x=4]");
  assert_contains(cap.text, "in 2 of 504 cells");
  assert_contains(cap.text, "physics.sigma >= 0.8333"); /* (0.3 + 0.2) / (1 - 0.4) */
  for (size_t i = 0; i < cells; ++i) {
    rtm_fdf_cell_t cell;
    rtm_anisotropy_cell(&prepared, i, &cell);
    const double vpz2 = 2000.0 * 2000.0;
    assert_true(cell.vpz2 == vpz2);
    if (i == bad_delta[0] || i == bad_delta[1] || i == bad_delta[2]) {
      assert_true(cell.vpn2 == cell.vpx2 && cell.vsz2 == 0.0); /* delta = epsilon */
    } else if (i == bad_vsz[0] || i == bad_vsz[1]) {
      assert_true(fabs(cell.vsz2 - cell.vpn2) <= 1e-12 * vpz2); /* vsz = vpn */
    } else {
      const double expected = vpz2 * ((double)0.2f - (double)0.1f) / 0.75;
      assert_true(fabs(cell.vsz2 - expected) <= 1e-12 * vpz2);
    }
    /* the axis from theta 20, phi 10 */
    const double th = 20.0 * pi / 180.0, ph = 10.0 * pi / 180.0;
    assert_true(fabs(cell.axis[0] - sin(th) * cos(ph)) < 1e-12);
    assert_true(fabs(cell.axis[2] - cos(th)) < 1e-12);
  }
  rtm_anisotropy_release(&prepared);

  /* nothing to repair: no warning */
  for (int k = 0; k < 3; ++k)
    c.model.delta[bad_delta[k]] = 0.1f;
  for (int k = 0; k < 2; ++k)
    c.model.delta[bad_vsz[k]] = 0.1f;
  assert_int_equal(captured(&cap, rtm_anisotropy_prepare(&c.cfg, &c.grid, &c.model, &prepared)),
                   RTM_OK);
  assert_null(strstr(cap.text, "warning"));
  rtm_anisotropy_release(&prepared);
  rtm_model_release(&c.model);
}

/* ---- bad input: errors name the dataset (or key) and the first bad cell ---- */
static int check_capturing(const rtm_config_t *cfg, const rtm_grid_t *grid,
                           const rtm_model_t *model, char *text, size_t size) {
  capture_t cap;
  capture_begin(&cap);
  const int status = rtm_anisotropy_check(cfg, grid, model);
  snprintf(text, size, "%s", capture_end(&cap));
  return status;
}

static void test_bad_parameters(void **unused) {
  (void)unused;
  const int n[3] = {7, 6, 5};
  constant_t c;
  char text[RTM_TEST_CAPTURE_MAX];
  double dt;

  /* constants: the config key */
  constant_make_10m(&c, n, 0.1, -0.6, 0.0, 0.0);
  assert_int_equal(check_capturing(&c.cfg, &c.grid, &c.model, text, sizeof text), RTM_ERR_INPUT);
  assert_contains(text, "model.delta = -0.6");
  assert_contains(text, "1 + 2 delta must be > 0");
  capture_t cap;
  capture_begin(&cap); /* rtm_resolve_dt checks before it computes */
  assert_int_equal(rtm_resolve_dt(&c.cfg, &c.model, &c.grid, &dt), RTM_ERR_INPUT);
  snprintf(text, sizeof text, "%s", capture_end(&cap));
  assert_contains(text, "model.delta");
  rtm_model_release(&c.model);

  /* a model file: the dataset, how many cells, the first */
  constant_make_10m(&c, n, 0.2, 0.1, 30.0, 45.0);
  const size_t first = (2 * 6 + 4) * 7 + 3; /* [z=2][y=4][x=3] */
  c.model.delta[first] = -0.5f;             /* 1 + 2 delta = 0 exactly */
  c.model.delta[first + 5] = -0.7f;
  assert_int_equal(write_model_file(model_path, &c.grid, &c.model), RTM_OK);
  rtm_model_t read = {0};
  assert_int_equal(read_model_file(model_path, &c.grid, RTM_EQUATION_TTI, &read), RTM_OK);
  snprintf(c.cfg.model.file, sizeof c.cfg.model.file, "%s", model_path);
  assert_int_equal(check_capturing(&c.cfg, &c.grid, &read, text, sizeof text), RTM_ERR_INPUT);
  assert_contains(text, model_path);
  assert_contains(text, "dataset /delta has 2 values outside (-0.5, 2]");
  assert_contains(text, "the first -0.5 at [z=2][y=4][x=3]");
  rtm_model_release(&read);
  c.model.delta[first] = c.model.delta[first + 5] = 0.1f;

  /* epsilon in percent, angles out of range or not finite (in memory: io refuses NaN) */
  struct {
    float **array;
    float value;
    const char *dataset;
  } bad[] = {{&c.model.epsilon, 20.0f, "dataset /epsilon"},
             {&c.model.epsilon, -0.5f, "dataset /epsilon"},
             {&c.model.theta_deg, 400.0f, "dataset /theta"},
             {&c.model.phi_deg, NAN, "dataset /phi"},
             {&c.model.theta_deg, INFINITY, "dataset /theta"}};
  for (size_t b = 0; b < sizeof bad / sizeof bad[0]; ++b) {
    const size_t cell = (size_t)rand() % rtm_grid_interior_cells(&c.grid);
    const float keep = (*bad[b].array)[cell];
    (*bad[b].array)[cell] = bad[b].value;
    /* the ranges the check reads first, as a loader makes them (rtm_model_update_range) */
    assert_int_equal(rtm_model_update_range(&c.model, &c.grid), RTM_OK);
    assert_int_equal(check_capturing(&c.cfg, &c.grid, &c.model, text, sizeof text), RTM_ERR_INPUT);
    assert_contains(text, bad[b].dataset);
    char where[64];
    snprintf(where, sizeof where, "[z=%zu][y=%zu][x=%zu]", cell / 42, cell / 7 % 6, cell % 7);
    assert_contains(text, where);
    (*bad[b].array)[cell] = keep;
  }
  assert_int_equal(rtm_model_update_range(&c.model, &c.grid), RTM_OK);
  assert_int_equal(check_capturing(&c.cfg, &c.grid, &c.model, text, sizeof text), RTM_OK);

  /* a tti model file without /theta: the reader names it */
  rtm_model_t vti_only = {.vp = c.model.vp, .epsilon = c.model.epsilon, .delta = c.model.delta};
  assert_int_equal(write_model_file(model_path, &c.grid, &vti_only), RTM_OK);
  capture_begin(&cap);
  assert_int_equal(read_model_file(model_path, &c.grid, RTM_EQUATION_TTI, &read), RTM_ERR_INPUT);
  snprintf(text, sizeof text, "%s", capture_end(&cap));
  assert_contains(text, "/theta");
  assert_contains(text, "tti");
  assert_null(read.vp);
  remove(model_path);
  rtm_model_release(&c.model);
}

/* ---- smoothing of the symmetry axis ---- */
static double axis_angle_deg(const double u[3], const double v[3]) { /* between lines */
  const double dot = fabs(u[0] * v[0] + u[1] * v[1] + u[2] * v[2]);
  return acos(fmin(dot, 1.0)) * 180.0 / pi;
}

static void axis_of(const rtm_anisotropy_t *p, size_t cell, double n[3]) {
  rtm_fdf_cell_t c;
  rtm_anisotropy_cell(p, cell, &c);
  memcpy(n, c.axis, sizeof c.axis);
}

static void test_smoothing(void **unused) {
  (void)unused;
  const int n[3] = {16, 10, 9};
  constant_t c;
  const size_t cells = constant_make_10m(&c, n, 0.2, 0.1, 40.0, 25.0);
  rtm_anisotropy_t raw, smooth;

  /* a uniform tilt stays as it is (float rounding of the averaged tensor) away from the one
   * cell that differs (which makes the smoothing run) */
  c.model.theta_deg[cells - 1] = 70.0f;
  c.cfg.physics.smooth_angles_cells = 2;
  assert_int_equal(rtm_anisotropy_prepare(&c.cfg, &c.grid, &c.model, &smooth), RTM_OK);
  c.cfg.physics.smooth_angles_cells = 0;
  assert_int_equal(rtm_anisotropy_prepare(&c.cfg, &c.grid, &c.model, &raw), RTM_OK);
  double worst = 0.0, moved = 0.0;
  for (size_t i = 0; i < cells; ++i) {
    double a[3], b[3];
    axis_of(&raw, i, a);
    axis_of(&smooth, i, b);
    const size_t ix = i % 16, iy = i / 16 % 10, iz = i / 160;
    if (ix < 13 || iy < 7 || iz < 6) /* outside the box of the odd cell */
      worst = fmax(worst, axis_angle_deg(a, b));
    else
      moved = fmax(moved, axis_angle_deg(a, b));
  }
  assert_true(worst < 1e-3);
  assert_true(moved > 0.1); /* the odd cell was averaged in */
  rtm_anisotropy_release(&smooth);
  rtm_anisotropy_release(&raw);

  c.model.theta_deg[cells - 1] = 40.0f;

  /* theta = 88 and -88 degrees (phi 0) are nearly the same horizontal axis: the average
   * stays horizontal (averaging the angles would give a vertical axis at the contact) */
  for (size_t i = 0; i < cells; ++i) {
    c.model.theta_deg[i] = i % 16 < 8 ? 88.0f : -88.0f;
    c.model.phi_deg[i] = 0.0f;
  }
  c.cfg.physics.smooth_angles_cells = 2;
  assert_int_equal(rtm_anisotropy_prepare(&c.cfg, &c.grid, &c.model, &smooth), RTM_OK);
  double worst_tilt = 90.0;
  for (size_t i = 0; i < cells; ++i) {
    double a[3];
    axis_of(&smooth, i, a);
    worst_tilt = fmin(worst_tilt, acos(fabs(a[2])) * 180.0 / pi);
  }
  printf("  +-88 degrees: smallest smoothed tilt %.3f degrees\n", worst_tilt);
  assert_true(worst_tilt > 87.9);
  rtm_anisotropy_release(&smooth);

  /* a step from 0 to 60 degrees along x: spread over the box, monotone, untouched 3 cells
   * away */
  for (size_t i = 0; i < cells; ++i) {
    c.model.theta_deg[i] = i % 16 < 8 ? 0.0f : 60.0f;
    c.model.phi_deg[i] = 30.0f;
  }
  assert_int_equal(rtm_anisotropy_prepare(&c.cfg, &c.grid, &c.model, &smooth), RTM_OK);
  const double vertical[3] = {0.0, 0.0, 1.0};
  double previous = -1.0;
  for (int ix = 0; ix < 16; ++ix) {
    double a[3];
    axis_of(&smooth, (size_t)(4 * 10 + 5) * 16 + (size_t)ix, a);
    const double tilt = axis_angle_deg(a, vertical);
    assert_true(tilt >= previous - 1e-4);
    if (ix <= 5) assert_true(tilt < 1e-3);
    if (ix >= 10) assert_true(fabs(tilt - 60.0) < 1e-3);
    if (ix == 7 || ix == 8) assert_true(tilt > 5.0 && tilt < 55.0);
    previous = tilt;
  }
  rtm_anisotropy_release(&smooth);

  /* random tilt from cell to cell: the smoothed field is much less rough */
  for (size_t i = 0; i < cells; ++i) {
    c.model.theta_deg[i] = (float)rtm_test_rand_uniform(-60.0, 60.0);
    c.model.phi_deg[i] = (float)rtm_test_rand_uniform(0.0, 360.0);
  }
  c.cfg.physics.smooth_angles_cells = 0;
  assert_int_equal(rtm_anisotropy_prepare(&c.cfg, &c.grid, &c.model, &raw), RTM_OK);
  c.cfg.physics.smooth_angles_cells = 1;
  assert_int_equal(rtm_anisotropy_prepare(&c.cfg, &c.grid, &c.model, &smooth), RTM_OK);
  double rough_raw = 0.0, rough_smooth = 0.0;
  for (size_t i = 0; i + 1 < cells; ++i) {
    if (i % 16 == 15) continue;
    double a[3], b[3];
    axis_of(&raw, i, a);
    axis_of(&raw, i + 1, b);
    rough_raw += axis_angle_deg(a, b);
    axis_of(&smooth, i, a);
    axis_of(&smooth, i + 1, b);
    rough_smooth += axis_angle_deg(a, b);
  }
  printf("  random tilt: mean angle between x neighbours %.2f -> %.2f degrees\n", rough_raw / cells,
         rough_smooth / cells);
  assert_true(rough_smooth < 0.5 * rough_raw);
  rtm_anisotropy_release(&smooth);
  rtm_anisotropy_release(&raw);
  rtm_model_release(&c.model);
}

/* Cells [first, first + count) of got (a row's values, [value][cell]) are
 * rtm_anisotropy_stored's at `precision` bit for bit, and so are the cells' coefficients and
 * the values' halves where given. */
static void assert_row_is(const rtm_anisotropy_t *prepared, size_t first, size_t count, double dt2,
                          rtm_precision_t precision, float got[RTM_FDF_STORED_COUNT][12],
                          const rtm_fdf_cell_t *got_cell,
                          rtm_half_t halves[RTM_FDF_STORED_COUNT][12]) {
  for (size_t i = 0; i < count; ++i) {
    rtm_fdf_cell_t want_cell;
    float want[RTM_FDF_STORED_COUNT];
    assert_int_equal(rtm_anisotropy_stored(prepared, first + i, dt2, precision, &want_cell, want),
                     RTM_OK);
    if (got_cell) assert_memory_equal(&got_cell[i], &want_cell, sizeof want_cell);
    for (int k = 0; k < RTM_FDF_STORED_COUNT; ++k) {
      assert_memory_equal(&got[k][i], &want[k], sizeof want[k]);
      if (halves) assert_int_equal(halves[k][i], rtm_half_from_float(want[k]));
    }
  }
}

/* rtm_anisotropy_stored_row gives rtm_anisotropy_stored's values and coefficients at every
 * cell, bit for bit, in fp32 and in fp16 (the values and their halves), on a
 * layered model with random cells among its layers, rows whose every cell changes one
 * parameter of the last (vp, epsilon, delta, theta, phi in turn) and repeated cells that
 * differ only in a sign of zero: vti, tti from the angles and tti with smoothed axes; in
 * whole rows and in pieces that start and end inside one. Theta -0 after +0 gives another
 * axis (n_x = -0): a row that took the last cell's values for it would fail the comparison.
 * A value not asked for (a NULL row) is not written. */
static void test_row_matches_direct(void **unused) {
  (void)unused;
  rtm_test_rng_t rng = rtm_test_seed("test_row_matches_direct");
  const int n[3] = {12, 9, 8};
  constant_t c;
  const size_t cells = constant_make_10m(&c, n, 0.2, 0.1, 30.0, 20.0);
  for (size_t i = 0; i < cells; ++i) {
    const int layer = (int)(i / (12 * 9)) / 3; /* three layers of planes */
    c.model.vp[i] = (float)(2000.0 + 300.0 * layer);
    c.model.epsilon[i] = (float)(0.1 + 0.05 * layer);
    c.model.theta_deg[i] = (float)(10.0 * layer);
    if (i % 7 == 3) { /* a random cell among them */
      c.model.vp[i] = (float)rtm_test_uniform(&rng, 1500.0, 3000.0);
      c.model.delta[i] = (float)rtm_test_uniform(&rng, -0.1, 0.3); /* some conditioned */
      c.model.phi_deg[i] = (float)rtm_test_uniform(&rng, -90.0, 90.0);
    }
    if (layer == 0 && i % 12 >= 6) c.model.theta_deg[i] = i % 2 ? -0.0f : 0.0f;
    if (layer == 1 && i % 12 != 0) { /* its predecessor with one parameter changed */
      float *const parameter[5] = {c.model.vp, c.model.epsilon, c.model.delta, c.model.theta_deg,
                                   c.model.phi_deg};
      static const float change[5] = {150.0f, 0.05f, 0.02f, 5.0f, 7.0f};
      for (int p = 0; p < 5; ++p)
        parameter[p][i] = parameter[p][i - 1];
      parameter[i % 5][i] += change[i % 5];
    }
  }
  assert_int_equal(rtm_model_update_range(&c.model, &c.grid), RTM_OK);
  const double dt2 = 1e-6;
  for (int way = 0; way < 3; ++way) { /* vti, tti from the angles, tti smoothed */
    c.cfg.physics.equation = way == 0 ? RTM_EQUATION_VTI : RTM_EQUATION_TTI;
    c.cfg.physics.smooth_angles_cells = way == 2 ? 1 : 0;
    rtm_anisotropy_t prepared;
    capture_t cap;
    assert_int_equal(captured(&cap, rtm_anisotropy_prepare(&c.cfg, &c.grid, &c.model, &prepared)),
                     RTM_OK);
    assert_true((prepared.axis != NULL) == (way == 2));
    const size_t pieces[] = {12, 5}; /* whole rows; pieces of 5 across them */
    for (int p = 0; p < 2; ++p)
      for (size_t first = 0; first < cells; first += pieces[p]) {
        const size_t count = cells - first < pieces[p] ? cells - first : pieces[p];
        float got[RTM_FDF_STORED_COUNT][12], *row[RTM_FDF_STORED_COUNT];
        rtm_half_t halves[RTM_FDF_STORED_COUNT][12], *half_row[RTM_FDF_STORED_COUNT];
        rtm_fdf_cell_t got_cell[12];
        for (int k = 0; k < RTM_FDF_STORED_COUNT; ++k) {
          row[k] = got[k];
          half_row[k] = halves[k];
        }
        assert_int_equal(rtm_anisotropy_stored_row(&prepared, first, count, dt2, RTM_PRECISION_FP32,
                                                   row, NULL, got_cell),
                         count);
        assert_row_is(&prepared, first, count, dt2, RTM_PRECISION_FP32, got, got_cell, NULL);
        assert_int_equal(rtm_anisotropy_stored_row(&prepared, first, count, dt2, RTM_PRECISION_FP16,
                                                   row, half_row, got_cell),
                         count);
        assert_row_is(&prepared, first, count, dt2, RTM_PRECISION_FP16, got, got_cell, halves);
      }
    rtm_anisotropy_release(&prepared);
  }
  /* the sign of zero: layer 0, row 0 has theta +0 at cell 6 and -0 at cell 7 */
  rtm_anisotropy_t prepared;
  c.cfg.physics.smooth_angles_cells = 0;
  assert_int_equal(rtm_anisotropy_prepare(&c.cfg, &c.grid, &c.model, &prepared), RTM_OK);
  const size_t plus = 6, minus = 7;
  assert_true(c.model.theta_deg[plus] == 0.0f && !signbit(c.model.theta_deg[plus]));
  assert_true(c.model.theta_deg[minus] == 0.0f && signbit(c.model.theta_deg[minus]));
  c.model.phi_deg[plus] = c.model.phi_deg[minus] = 20.0f;
  c.model.vp[plus] = c.model.vp[minus];
  c.model.delta[plus] = c.model.delta[minus];
  float want[2][RTM_FDF_STORED_COUNT], got[RTM_FDF_STORED_COUNT][2], *row[RTM_FDF_STORED_COUNT];
  rtm_fdf_cell_t cell;
  for (int j = 0; j < 2; ++j)
    assert_int_equal(
        rtm_anisotropy_stored(&prepared, plus + (size_t)j, dt2, RTM_PRECISION_FP32, &cell, want[j]),
        RTM_OK);
  assert_true(signbit(want[1][RTM_FDF_AXIS_X]) != signbit(want[0][RTM_FDF_AXIS_X]));
  for (int k = 0; k < RTM_FDF_STORED_COUNT; ++k)
    row[k] = got[k];
  rtm_anisotropy_stored_row(&prepared, plus, 2, dt2, RTM_PRECISION_FP32, row, NULL, NULL);
  for (int j = 0; j < 2; ++j)
    for (int k = 0; k < RTM_FDF_STORED_COUNT; ++k)
      assert_memory_equal(&got[k][j], &want[j][k], sizeof(float));
  const float mark = -12345.0f; /* a value not asked for stays as it was */
  got[RTM_FDF_AXIS_Y][0] = got[RTM_FDF_AXIS_Y][1] = mark;
  row[RTM_FDF_AXIS_Y] = NULL;
  rtm_anisotropy_stored_row(&prepared, plus, 2, dt2, RTM_PRECISION_FP32, row, NULL, NULL);
  assert_true(got[RTM_FDF_AXIS_Y][0] == mark && got[RTM_FDF_AXIS_Y][1] == mark);
  assert_memory_equal(&got[RTM_FDF_AXIS_X][1], &want[1][RTM_FDF_AXIS_X], sizeof(float));
  rtm_anisotropy_release(&prepared);
  free(c.model.vp), free(c.model.epsilon), free(c.model.delta);
  free(c.model.theta_deg), free(c.model.phi_deg);
}

/* rtm_anisotropy_narrow_row names the first value binary16 cannot keep, whether the one
 * before it repeats or not: beyond its range, and below its normal range for a v^2 dt^2
 * (zero kept); the axis and vsz^2 dt^2 keep small values. */
static void test_narrow_row_refuses(void **unused) {
  (void)unused;
  const struct {
    int k;
    float values[4];
    size_t first_refused;
  } cases[] = {
      {RTM_FDF_VPZ2DT2, {1.0f, 1.0f, 70000.0f, 70000.0f}, 2},
      {RTM_FDF_VPX2DT2, {70000.0f, 1.0f, 1.0f, 1.0f}, 0},
      {RTM_FDF_VPN2DT2, {0.0f, 0.0f, 1e-6f, 1.0f}, 2},
      {RTM_FDF_VSZ2DT2, {0.0f, 1e-6f, 1e-6f, 1.0f}, 4},
      {RTM_FDF_AXIS_X, {1e-6f, -1e-6f, 0.5f, 1.0f}, 4},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    float values[4];
    memcpy(values, cases[c].values, sizeof values);
    assert_int_equal(rtm_anisotropy_narrow_row(cases[c].k, values, 4, NULL),
                     cases[c].first_refused);
    for (int i = 0; i < 4; ++i) /* each the float of its half, refused or not */
      assert_true(values[i] == rtm_half_to_float(rtm_half_from_float(cases[c].values[i])));
  }
}

RTM_TEST_MAIN_SEEDED(cmocka_unit_test(test_conditioning),
                     cmocka_unit_test(test_von_neumann_at_the_limit),
                     cmocka_unit_test(test_prepare_warns_and_repairs),
                     cmocka_unit_test(test_bad_parameters), cmocka_unit_test(test_smoothing),
                     cmocka_unit_test(test_row_matches_direct),
                     cmocka_unit_test(test_narrow_row_refuses))
