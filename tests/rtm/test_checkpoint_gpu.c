/* rtm.reconstruction = checkpoint on the cuda backend (checkpoint_testing.h), as
 * test_checkpoint.c on the cpu: S(n) recomputed from checkpoints equals the forward pass's
 * bit for bit at every imaging step (iso with the checkpoints in device memory, tti in managed
 * memory), and the migrated image equals the snapshots one bit for bit with the optimal
 * recomputation (iso with 4 checkpoints in device memory, tti with as many as fit in managed
 * memory, and iso with 4 in pinned host memory while the image stays on the device). The backend's
 * steps are deterministic (no reduction order depends on the run: the one atomicAdd, the injection,
 * meets 8 distinct cells of one source), so 0 is expected. */
#include <cuda_runtime_api.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "checkpoint_testing.h"
#include "rtm_test_main.h"

static void test_source_iso(void **state) {
  (void)state;
  const checkpoint_case_t c = {"cuda", "iso", "device", 150, 3, 3};
  checkpoint_check_source(&c);
}

static void test_source_tti_managed(void **state) {
  (void)state;
  const checkpoint_case_t c = {"cuda", "tti", "managed", 151, 3, 3};
  checkpoint_check_source(&c);
}

static void test_image_iso(void **state) {
  (void)state;
  const checkpoint_case_t c = {"cuda", "iso", "device", 301, 4, 4};
  checkpoint_check_image(&c);
}

static void test_image_iso_pinned(void **state) {
  (void)state;
  const checkpoint_case_t c = {"cuda", "iso", "pinned", 301, 4, 4};
  checkpoint_check_image(&c);
}

static void test_image_tti_managed_as_many_as_fit(void **state) {
  (void)state;
  const checkpoint_case_t c = {"cuda", "tti", "managed", 200, 5, 0};
  checkpoint_check_image(&c);
}

RTM_TEST_MAIN_CUDA("test_checkpoint_gpu", NULL, NULL, cmocka_unit_test(test_source_iso),
                   cmocka_unit_test(test_source_tti_managed), cmocka_unit_test(test_image_iso),
                   cmocka_unit_test(test_image_iso_pinned),
                   cmocka_unit_test(test_image_tti_managed_as_many_as_fit))
