/* rtm.reconstruction = boundary on the cuda backend (reconstruction_boundary.c,
 * boundary_cuda.cu); exits 77 (skipped) without a CUDA device.
 *
 *   rebuilt against stored   test_reconstruction's check on cuda: S(n) of p rebuilt at 5
 *                            imaging steps of 250 against the cuda forward propagator's
 *                            S(n), within 1e-4 relative L2 inside the non-absorbing interior,
 *                            iso, vti and tti, with the shell store in device memory
 *                            (memory.imaging = device) and in host memory through the copy
 *                            stream and the ring of device buffers (pinned; vti also pageable
 *                            host); every value finite (the layer's damping switched off).
 * Images with boundary on cuda against cpu: test_migration_gpu (every reconstruction). The
 * size (40^3 cells, 250 steps) keeps a compute-sanitizer run short (RTM3D_TEST_FILTER picks
 * tests). */
#include <cuda_runtime_api.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "migration_helper.h"
#include "rtm_test_main.h"

/* survey_rebuild_error on cuda with the store in `strategy`. */
static void check_rebuilt(const char *equation, const char *strategy) {
  char equation_set[64], strategy_set[64], label[128];
  snprintf(equation_set, sizeof equation_set, "physics.equation=%s", equation);
  snprintf(strategy_set, sizeof strategy_set, "memory.imaging=%s", strategy);
  snprintf(label, sizeof label, "cuda, %s, shell in %s memory", equation, strategy);
  const char *const settings[] = {"backend.name=cuda", equation_set, strategy_set, NULL};
  const double error = survey_rebuild_error(settings, label);
  printf("%s: worst relative L2 %.3e\n", label, error);
  assert_true(error <= 1e-4);
}

static void test_rebuilt_iso(void **state) {
  (void)state;
  check_rebuilt("iso", "device");
  check_rebuilt("iso", "pinned");
}

static void test_rebuilt_vti(void **state) {
  (void)state;
  check_rebuilt("vti", "device");
  check_rebuilt("vti", "host");
}

static void test_rebuilt_tti(void **state) {
  (void)state;
  check_rebuilt("tti", "device");
  check_rebuilt("tti", "pinned");
}

RTM_TEST_MAIN_CUDA("test_reconstruction_gpu", NULL, NULL, cmocka_unit_test(test_rebuilt_iso),
                   cmocka_unit_test(test_rebuilt_vti), cmocka_unit_test(test_rebuilt_tti))
