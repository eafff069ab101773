/* rtm_compare, the one comparison of `rtm3d validate` and the tests, on values whose answer
 * is known by hand: a 3-4-5 difference, an all-zero reference (absolute norm), NaN and
 * infinity on either side (counted, left out of the norms), exact equality. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "rtm_io.h"
#include "rtm_test_compare.h"
#include "rtm_test_main.h"

static void test_known_values(void **state) {
  (void)state;
  /* difference (3, 4) against a reference of norm 10: relative 5 / 10 = 0.5, max 4 */
  const float reference[2] = {6.0f, 8.0f}, values[2] = {9.0f, 12.0f};
  rtm_comparison_t c = rtm_compare(values, reference, 2);
  assert_true(c.error_norm == 0.5 && c.max_abs == 4.0);
  assert_int_equal(c.absolute, 0);
  assert_int_equal(c.non_finite, 0);
  assert_true(rtm_test_relative_l2(values, reference, 2) == 0.5);

  /* an all-zero reference: the absolute norm, and the test reading says infinity */
  const float zeros[2] = {0.0f, 0.0f};
  c = rtm_compare(values, zeros, 2);
  assert_int_equal(c.absolute, 1);
  assert_true(c.error_norm == 15.0); /* |(9, 12)| */
  assert_true(isinf(rtm_test_relative_l2(values, zeros, 2)));
  assert_true(rtm_test_relative_l2(zeros, zeros, 2) == 0.0);

  /* equal arrays: 0 whatever the values */
  c = rtm_compare(values, values, 2);
  assert_true(c.error_norm == 0.0 && c.max_abs == 0.0);
}

static void test_non_finite_pairs(void **state) {
  (void)state;
  const float reference[4] = {6.0f, 8.0f, NAN, 1.0f}, values[4] = {9.0f, 12.0f, 1.0f, INFINITY};
  const rtm_comparison_t c = rtm_compare(values, reference, 4);
  assert_int_equal(c.non_finite, 2); /* NaN in the reference, infinity in the values */
  assert_true(c.error_norm == 0.5);  /* over the finite pairs: the 3-4-5 case above */
  assert_true(isnan(rtm_test_relative_l2(values, reference, 4))); /* no bound passes NaN */
}

RTM_TEST_MAIN(cmocka_unit_test(test_known_values), cmocka_unit_test(test_non_finite_pairs))
