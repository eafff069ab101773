/* rtm_test_random.h - the tests' random inputs (header only): xorshift64* from a seed drawn
 * fresh each run and printed, so that RTM3D_TEST_SEED=<seed> replays a failure; and the same
 * seeding for the tests that draw with rand(). */
#ifndef RTM_TEST_RANDOM_H
#define RTM_TEST_RANDOM_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct {
  uint64_t state;
} rtm_test_rng_t;

static inline uint64_t rtm_test_next(rtm_test_rng_t *r) { /* xorshift64* */
  r->state ^= r->state >> 12;
  r->state ^= r->state << 25;
  r->state ^= r->state >> 27;
  return r->state * 2685821657736338717ULL;
}

/* Uniform in [lo, hi). */
static inline double rtm_test_uniform(rtm_test_rng_t *r, double lo, double hi) {
  return lo + (hi - lo) * (double)(rtm_test_next(r) >> 11) * 0x1.0p-53;
}

/* RTM3D_TEST_SEED when set, else a fresh seed; printed with the test's name. */
static inline rtm_test_rng_t rtm_test_seed(const char *test) {
  const char *env = getenv("RTM3D_TEST_SEED");
  uint64_t seed =
      env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL) * 2654435761ULL + (uint64_t)clock();
  if (!seed) seed = 88172645463325252ULL;
  printf("# %s: RTM3D_TEST_SEED=%llu\n", test, (unsigned long long)seed);
  rtm_test_rng_t r = {seed};
  return r;
}

/* The tests that draw with rand() (the solver unit tests): srand from RTM3D_TEST_SEED when
 * set, else from the clock as before; printed either way, so that a failure replays. */
static inline void rtm_test_srand(void) {
  const char *env = getenv("RTM3D_TEST_SEED");
  const unsigned seed = env ? (unsigned)strtoul(env, NULL, 0) : (unsigned)time(NULL);
  printf("seed %u (RTM3D_TEST_SEED=%u replays it)\n", seed, seed);
  srand(seed);
}

/* Uniform in [lo, hi] from rand(). */
static inline double rtm_test_rand_uniform(double lo, double hi) {
  return lo + (hi - lo) * rand() / (double)RAND_MAX;
}

#endif
