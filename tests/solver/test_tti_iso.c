/* test_tti_iso - with epsilon = delta = 0 the vti and tti equations are the iso one with
 * p = q, whatever the tilt: after 200 steps on a heterogeneous vp model (with the damping
 * layer) p matches the iso run to fp32 rounding (relative L2 <= 1e-5, over the volume and
 * over the traces) and q equals p, in the volume and in the traces the receivers record of
 * each (receivers.fields = p,q). Also on rows of 300 cells, longer than the pieces the tti
 * coefficients are filled in, the wave crossing them. */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rtm_status.h"
#include "rtm_test_main.h"
#include "tti_helper.h"

enum { STEPS = 200, RECEIVERS = 4 };
static const double h_m = 10.0, frequency_hz = 12.0; /* 5.5 points at 2.5 f */

typedef struct {
  float *p, *q, *traces, *q_traces; /* q, q_traces: vti and tti */
  double seconds;
} result_t;

/* A grid, its source and its receivers (metres). */
typedef struct {
  int n[3];
  double source[3], receivers[3 * RECEIVERS];
} setting_t;

static const setting_t block = {{40, 36, 32},
                                {17 * h_m, 19 * h_m, 15 * h_m},
                                {10 * h_m, 10 * h_m, 10 * h_m, 25.5 * h_m, 20 * h_m, 8 * h_m,
                                 30 * h_m, 12 * h_m, 24 * h_m, 15 * h_m, 28.3 * h_m, 20 * h_m}};
static const setting_t long_rows = {{300, 20, 20},
                                    {200 * h_m, 10 * h_m, 10 * h_m},
                                    {140 * h_m, 10 * h_m, 10 * h_m, 185.5 * h_m, 9 * h_m, 11 * h_m,
                                     230 * h_m, 10 * h_m, 8 * h_m, 260 * h_m, 11 * h_m, 12 * h_m}};

/* Smooth lateral variation on layers: 1800 to 3200 m/s, contrasts that reflect. */
static double velocity(int ix, int iy, int iz) {
  const double layer = iz < 12 ? 1800.0 : iz < 22 ? 2500.0 : 3000.0;
  return layer + 150.0 * sin(0.3 * ix) * cos(0.25 * iy);
}

static result_t run(const setting_t *set, rtm_equation_t equation, double theta_deg, double phi_deg,
                    int varying_angles) {
  tti_run_t r;
  tti_run_init(&r, set->n, h_m, equation);
  for (size_t i = 0; i < r.cells; ++i) {
    const tti_cell_t c = tti_run_cell(&r, i);
    r.model.vp[i] = (float)velocity(c.x, c.y, c.z);
    if (equation != RTM_EQUATION_TTI) continue;
    r.model.theta_deg[i] = (float)(varying_angles ? 60.0 * sin(0.2 * c.x + 0.1 * c.z) : theta_deg);
    r.model.phi_deg[i] = (float)(varying_angles ? 10.0 * c.y : phi_deg);
  }
  const int has_q = equation != RTM_EQUATION_ISO;
  if (has_q) r.trace_fields |= RTM_FIELD_BIT(RTM_FIELD_Q);
  assert_int_equal(
      tti_run_start(&r, set->source, set->receivers, RECEIVERS, frequency_hz, STEPS, 8, 1e-3),
      RTM_OK);
  const double start = tti_now_s();
  assert_int_equal(tti_run_steps(&r, 0, STEPS), RTM_OK);
  result_t out = {tti_run_field(&r, RTM_FIELD_P), has_q ? tti_run_field(&r, RTM_FIELD_Q) : NULL,
                  tti_run_traces(&r, RTM_FIELD_P), has_q ? tti_run_traces(&r, RTM_FIELD_Q) : NULL,
                  tti_now_s() - start};
  tti_run_release(&r);
  return out;
}

static void compare(const setting_t *set, const result_t *iso, rtm_equation_t equation,
                    double theta, double phi, int varying) {
  result_t aniso = run(set, equation, theta, phi, varying);
  const size_t cells = (size_t)set->n[0] * set->n[1] * set->n[2];
  const size_t samples = (size_t)RECEIVERS * (STEPS + 1);
  const double field = rtm_test_relative_l2(aniso.p, iso->p, cells);
  const double traces = rtm_test_relative_l2(aniso.traces, iso->traces, samples);
  printf("  %s theta %s%g phi %g: relative L2 of p %.3g, of the traces %.3g; q == p %s, "
         "q traces == p traces %s (%.2f s, iso %.2f s)\n",
         equation == RTM_EQUATION_TTI ? "tti" : "vti", varying ? "varying up to " : "",
         varying ? 60.0 : theta, phi, field, traces,
         memcmp(aniso.p, aniso.q, cells * sizeof(float)) == 0 ? "bit for bit" : "NOT equal",
         memcmp(aniso.traces, aniso.q_traces, samples * sizeof(float)) == 0 ? "bit for bit"
                                                                            : "NOT equal",
         aniso.seconds, iso->seconds);
  /* fp32 rounding: each step rounds every cell at ~1e-7 of the local terms; over 200 steps
   * the differences stay near 1e-6. A wrong coefficient, stencil or source scale shows at
   * the 1e-3 level or above. */
  assert_true(field <= 1e-5);
  assert_true(traces <= 1e-5);
  /* with vsz = 0 and vpx = vpn = vpz both fields are the same float expression */
  assert_memory_equal(aniso.p, aniso.q, cells * sizeof(float));
  /* so the receivers read the same numbers with the same weights in the same order: the q
   * traces are the p traces bit for bit (q recorded from the old level, into another column
   * or not at all would differ wherever the wave has arrived) */
  assert_memory_equal(aniso.q_traces, aniso.traces, samples * sizeof(float));
  free(aniso.p);
  free(aniso.q);
  free(aniso.traces);
  free(aniso.q_traces);
}

/* iso on `set`, then vti and tti with epsilon = delta = 0 against it (varying: the angles
 * too). */
static void compare_all(const setting_t *set, int varying) {
  result_t iso = run(set, RTM_EQUATION_ISO, 0.0, 0.0, 0);
  double peak = 0.0;
  for (size_t i = 0; i < (size_t)RECEIVERS * (STEPS + 1); ++i)
    peak = fmax(peak, fabs(iso.traces[i]));
  assert_true(peak > 0.0); /* the wave reached the receivers */
  compare(set, &iso, RTM_EQUATION_VTI, 0.0, 0.0, 0);
  compare(set, &iso, RTM_EQUATION_TTI, 35.0, 70.0, 0);
  compare(set, &iso, RTM_EQUATION_TTI, 70.0, 35.0, 0);
  if (varying) compare(set, &iso, RTM_EQUATION_TTI, 0.0, 0.0, 1);
  free(iso.p);
  free(iso.traces);
}

static void test_zero_anisotropy_is_iso(void **unused) {
  (void)unused;
  compare_all(&block, 1);
}

static void test_zero_anisotropy_is_iso_on_long_rows(void **unused) {
  (void)unused;
  compare_all(&long_rows, 0);
}

RTM_TEST_MAIN(cmocka_unit_test(test_zero_anisotropy_is_iso),
              cmocka_unit_test(test_zero_anisotropy_is_iso_on_long_rows))
