/* test_fd - the 8th-order stencils differentiate polynomials exactly up to their order.
 *
 * A symmetric (2R+1)-point stencil for f'' has truncation error ~ h^8 f^(10), so it is
 * exact for degree <= 9; the first-derivative stencil has error ~ h^8 f^(9), exact for
 * degree <= 8. "Exact" here means within the rounding of double arithmetic, bounded by
 * ulps times the magnitudes that were summed (the terms cancel heavily, so the bound is
 * relative to the sum of |terms|, not to the result). */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "rtm_solver.h"
#include "rtm_test_main.h"

enum { MAX_DEGREE = 10, TRIALS = 200 };

typedef struct {
  int degree;
  double a[MAX_DEGREE + 1];
} poly_t;

/* Non-zero coefficients of either sign, magnitudes in [0.25, 1]. */
static void random_poly(poly_t *p, int degree) {
  p->degree = degree;
  for (int j = 0; j <= degree; ++j)
    p->a[j] = (rand() & 1 ? 1.0 : -1.0) * rtm_test_rand_uniform(0.25, 1.0);
}

/* Value, and the same sum of |a_j x^j| that bounds Horner's rounding error. */
static double eval(const poly_t *p, double x, double *magnitude) {
  double value = 0.0, mag = 0.0;
  for (int j = p->degree; j >= 0; --j) {
    value = value * x + p->a[j];
    mag = mag * fabs(x) + fabs(p->a[j]);
  }
  if (magnitude) *magnitude = mag;
  return value;
}

static double derivative(const poly_t *p, int order, double x) {
  double value = 0.0;
  for (int j = p->degree; j >= order; --j) {
    double c = p->a[j];
    for (int m = 0; m < order; ++m)
      c *= j - m;
    value = value * x + c;
  }
  return value;
}

/* Stencil result and its rounding bound: every value carries <= 2 degree roundings of
 * Horner (u = DBL_EPSILON / 2 each, relative to sum |a_j x^j|), the stencil adds <= 2R + 2
 * products and sums, and the exact derivative's own Horner evaluation is of the same
 * size; (2 degree + 2R + 4) u doubled covers them. */
static double second_derivative(const poly_t *p, double x, double h, double *tolerance) {
  double m0, sum = 0.0, mag = 0.0;
  sum = rtm_fd2_coeff[0] * eval(p, x, &m0);
  mag = fabs(rtm_fd2_coeff[0]) * m0;
  for (int k = 1; k <= RTM_RADIUS; ++k) {
    double mp, mm;
    sum += rtm_fd2_coeff[k] * (eval(p, x + k * h, &mp) + eval(p, x - k * h, &mm));
    mag += fabs(rtm_fd2_coeff[k]) * (mp + mm);
  }
  *tolerance = (2.0 * p->degree + 2 * RTM_RADIUS + 4) * DBL_EPSILON * mag / (h * h);
  return sum / (h * h);
}

static double first_derivative(const poly_t *p, double x, double h, double *tolerance) {
  double sum = 0.0, mag = 0.0;
  for (int k = 1; k <= RTM_RADIUS; ++k) {
    double mp, mm;
    sum += rtm_fd1_coeff[k - 1] * (eval(p, x + k * h, &mp) - eval(p, x - k * h, &mm));
    mag += fabs(rtm_fd1_coeff[k - 1]) * (mp + mm);
  }
  *tolerance = (2.0 * p->degree + 2 * RTM_RADIUS + 4) * DBL_EPSILON * mag / h;
  return sum / h;
}

typedef double (*stencil_t)(const poly_t *p, double x, double h, double *tolerance);

/* TRIALS random polynomials of degrees 0..max_degree at random x and h: the stencil for the
 * derivative of `order` is exact within its rounding bound. */
static void check_exact(stencil_t stencil, int order, int max_degree, const char *name) {
  double worst = 0.0;
  for (int trial = 0; trial < TRIALS; ++trial) {
    poly_t p;
    random_poly(&p, trial % (max_degree + 1));
    const double x = rtm_test_rand_uniform(-2.0, 2.0), h = rtm_test_rand_uniform(0.05, 0.5);
    double tolerance;
    const double error = fabs(stencil(&p, x, h, &tolerance) - derivative(&p, order, x));
    if (error > tolerance)
      fail_msg("%s, degree %d, x = %.17g, h = %.17g: error %.3e > %.3e", name, p.degree, x, h,
               error, tolerance);
    if (error / tolerance > worst) worst = error / tolerance;
  }
  printf("%s, degree <= %d: worst error %.3f of the rounding bound\n", name, max_degree, worst);
}

static void test_second_derivative_exact_to_degree_9(void **unused) {
  (void)unused;
  check_exact(second_derivative, 2, 9, "second derivative");
}

static void test_first_derivative_exact_to_degree_8(void **unused) {
  (void)unused;
  check_exact(first_derivative, 1, 8, "first derivative");
}

/* One degree more and the truncation term appears: for a_10 x^10 the second-derivative
 * stencil is off by exactly 2 a_10 h^8 sum_k c_k k^10 = -1151.5 a_10 h^8 at every x, well
 * above the rounding bound, so the checks above can fail. */
static void test_one_degree_more_is_not_exact(void **unused) {
  (void)unused;
  for (int trial = 0; trial < 20; ++trial) {
    poly_t p;
    const double x = rtm_test_rand_uniform(-1.0, 1.0), h = rtm_test_rand_uniform(0.3, 0.5);
    double tolerance;
    random_poly(&p, 10);
    double error = fabs(second_derivative(&p, x, h, &tolerance) - derivative(&p, 2, x));
    double expected = 0.0;
    for (int k = 1; k <= RTM_RADIUS; ++k)
      expected += rtm_fd2_coeff[k] * pow(k, 10);
    expected = fabs(2.0 * pow(h, 8) * p.a[10] * expected);
    assert_true(error > 10.0 * tolerance);
    assert_true(fabs(error - expected) <= tolerance);

    random_poly(&p, 9);
    error = fabs(first_derivative(&p, x, h, &tolerance) - derivative(&p, 1, x));
    assert_true(error > 10.0 * tolerance);
  }
}

RTM_TEST_MAIN_SEEDED(cmocka_unit_test(test_second_derivative_exact_to_degree_9),
                     cmocka_unit_test(test_first_derivative_exact_to_degree_8),
                     cmocka_unit_test(test_one_degree_more_is_not_exact))
