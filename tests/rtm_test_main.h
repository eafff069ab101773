/* rtm_test_main.h - the main() of a cmocka test file, written once. Include after <cmocka.h>.
 *
 * RTM_TEST_MAIN(entries...) runs the entries (cmocka_unit_test(...) and the like) as one
 * group without group fixtures. RTM_TEST_MAIN_SEEDED first seeds rand() for the tests that
 * draw their inputs with it (rtm_test_srand: printed, replayed with RTM3D_TEST_SEED).
 * RTM_TEST_MAIN_CUDA(name, setup, teardown, entries...) is for the GPU tests (the file
 * includes <cuda_runtime_api.h>): without a CUDA device it exits 77, which ctest reports as
 * skipped; RTM3D_TEST_FILTER (a cmocka glob such as "test_tma*") narrows the compute-sanitizer
 * runs of run/tools/gpu_check.sh and tti_gpu_check.sh.
 * RTM_TEST_MAIN_CLI(name, decks, entries...) is for the tests that run the rtm3d binary as
 * a user does: argv[1] is the binary (rtm_test_rtm3d) and, when decks is 1, argv[2] a deck
 * (rtm_test_deck); ctest passes them.
 * rtm_long_test(f) is an entry whose case needs size or many steps to mean something: its
 * name starts with "long_". Every main honours RTM3D_TEST_FILTER and RTM3D_TEST_SKIP (cmocka
 * globs); rtm3d_add_test(... LONG_CASES) registers the file twice, without its long cases
 * and, labelled long, with them alone (tests/CMakeLists.txt). */
#ifndef RTM_TEST_MAIN_H
#define RTM_TEST_MAIN_H

#include <stdio.h>
#include <stdlib.h>

#include "rtm_test_random.h"

#define rtm_long_test(f) {"long_" #f, f, NULL, NULL, NULL}

/* RTM3D_TEST_FILTER and RTM3D_TEST_SKIP, when set, to cmocka */
static inline void rtm_test_filters(void) {
  const char *filter = getenv("RTM3D_TEST_FILTER"), *skip = getenv("RTM3D_TEST_SKIP");
  if (filter && filter[0]) cmocka_set_test_filter(filter);
  if (skip && skip[0]) cmocka_set_skip_filter(skip);
}

#define RTM_TEST_MAIN(...)                                                                         \
  int main(void) {                                                                                 \
    rtm_test_filters();                                                                            \
    const struct CMUnitTest tests[] = {__VA_ARGS__};                                               \
    return cmocka_run_group_tests(tests, NULL, NULL);                                              \
  }

#define RTM_TEST_MAIN_SEEDED(...)                                                                  \
  int main(void) {                                                                                 \
    rtm_test_srand();                                                                              \
    rtm_test_filters();                                                                            \
    const struct CMUnitTest tests[] = {__VA_ARGS__};                                               \
    return cmocka_run_group_tests(tests, NULL, NULL);                                              \
  }

#define RTM_TEST_MAIN_CUDA(name, setup, teardown, ...)                                             \
  int main(void) {                                                                                 \
    int devices = 0;                                                                               \
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {                             \
      printf("%s: no CUDA device, skipped\n", name);                                               \
      return 77;                                                                                   \
    }                                                                                              \
    const struct CMUnitTest tests[] = {__VA_ARGS__};                                               \
    rtm_test_filters();                                                                            \
    return cmocka_run_group_tests(tests, setup, teardown);                                         \
  }

/* the binary and the deck of RTM_TEST_MAIN_CLI (unused by the other tests) */
static const char *rtm_test_rtm3d __attribute__((unused)), *rtm_test_deck __attribute__((unused));

#define RTM_TEST_MAIN_CLI(name, decks, ...)                                                        \
  int main(int argc, char **argv) {                                                                \
    if (argc < 2 + (decks)) {                                                                      \
      fprintf(stderr, "usage: %s PATH/TO/rtm3d%s\n", name, (decks) ? " DECK.ini" : "");            \
      return 2;                                                                                    \
    }                                                                                              \
    rtm_test_rtm3d = argv[1];                                                                      \
    rtm_test_deck = (decks) ? argv[2] : NULL;                                                      \
    rtm_test_filters();                                                                            \
    const struct CMUnitTest tests[] = {__VA_ARGS__};                                               \
    return cmocka_run_group_tests(tests, NULL, NULL);                                              \
  }

#endif
