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
 *   cuda against cpu         the flat-reflector survey of test_migration_gpu migrated with
 *                            boundary on each backend: image and illumination within 1e-4
 *                            relative L2 (the backends step iso and vti bit for bit; tti
 *                            differs in the medium's last bit), iso and tti.
 * The sizes (40^3 and 48 x 44 x 48 cells, at most 300 steps) keep a compute-sanitizer run
 * short (RTM3D_TEST_FILTER picks tests). */
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
#include "rtm_test_compare.h"
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

enum { NX = 48, NY = 44, NZ = 48 }; /* survey_flat_modelled's grid */

/* The survey modelled and migrated with boundary on `backend`. */
static void boundary_image(const char *backend, const char *equation, survey_t *s) {
  char backend_set[64], equation_set[64];
  snprintf(backend_set, sizeof backend_set, "backend.name=%s", backend);
  snprintf(equation_set, sizeof equation_set, "physics.equation=%s", equation);
  const char *const settings[] = {backend_set, equation_set, "rtm.reconstruction=boundary", NULL};
  survey_flat_modelled(s, settings);
  survey_migrate(s, NULL, NULL);
}

static void check_images(const char *equation) {
  survey_t cpu, cuda;
  boundary_image("cpu", equation, &cpu);
  boundary_image("cuda", equation, &cuda);
  const size_t cells = (size_t)NX * NY * NZ;
  const double image = rtm_test_relative_l2(cuda.image, cpu.image, cells);
  const double illumination = rtm_test_relative_l2(cuda.illumination, cpu.illumination, cells);
  printf("%s, boundary: cuda against cpu, relative L2: image %.3e, illumination %.3e\n", equation,
         image, illumination);
  assert_true(image <= 1e-4);
  assert_true(illumination <= 1e-4);
  survey_release(&cpu);
  survey_release(&cuda);
}

static void test_images_iso(void **state) {
  (void)state;
  check_images("iso");
}

static void test_images_tti(void **state) {
  (void)state;
  check_images("tti");
}

RTM_TEST_MAIN_CUDA("test_reconstruction_gpu", NULL, NULL, cmocka_unit_test(test_rebuilt_iso),
                   cmocka_unit_test(test_rebuilt_vti), cmocka_unit_test(test_rebuilt_tti),
                   cmocka_unit_test(test_images_iso), cmocka_unit_test(test_images_tti))
