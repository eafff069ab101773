#define _POSIX_C_SOURCE 200809L
/* The shot groups' meeting (rtm_mpi_groups_combine) under mpirun, mostly in chunks of 1000
 * floats so that a volume of 4321 crosses in five, the last short: the slots of the node's
 * window are filled, freed and filled again, and the messages' path does the same. Two
 * groups of 2 slabs (4 ranks); chains of 3 groups, 4, 3 groups of 2 slabs (6 ranks), 5
 * groups in 3 chunks of 2000 (fewer chunks than groups), 3 groups in one chunk, and 3
 * groups in the library's own chunks (a volume of 5 Mi + 17 floats, which takes six); and
 * two groups in one chunk (no slot freed). On group 0, for each slab, every cell must be
 * a = sum of 3^(G-1-g) a_g over the G groups (combined in group order with a' = 3 a +
 * other, exact in float for these small integers) and b the sum of the groups'; the other
 * groups' arrays unchanged; the window's path and the messages' the same floats. The launcher is
 * $RTM3D_MPIEXEC (ctest sets it); the test runs itself under it with --ranks GROUPS --chunk FLOATS.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "rtm_mpi.h"
#include "rtm_test_main.h"

enum { COUNT = 4321, CHUNK = 1000, CHUNK_FEW = 2000 };
/* With the library's own chunks: 5 Mi + 17 floats, which a chain of three groups takes in
 * six chunks of its least, 1 Mi (chain_chunk), the last short. */
enum { COUNT_OWN = (5 << 20) + 17 };

static const char *self; /* this binary, run again under the launcher */

/* The values group g's rank of slab `slab` holds at cell i: small integers. */
static float value_a(int g, int slab, size_t i) {
  return (float)(1 + g + slab + (int)(i % 7));
}
static float value_b(int g, int slab, size_t i) {
  return (float)(g * 10 + slab + (int)(i % 5));
}

/* a := 3 a + other_a (the order of the groups shows), b := b + other_b. */
static void combine(float *a, float *b, const float *other_a, const float *other_b, size_t count,
                    void *context) {
  (void)context;
  for (size_t i = 0; i < count; ++i) {
    a[i] = 3.0f * a[i] + other_a[i];
    b[i] = b[i] + other_b[i];
  }
}

/* One path (shared or messages) on this rank: the cells that differ from what they should
 * hold, or -1 when the meeting failed. */
static long meet(rtm_mpi_t *mpi, int shared, float *a, float *b, size_t count) {
  const int g = rtm_mpi_group(mpi), groups = rtm_mpi_groups(mpi), slab = rtm_mpi_rank(mpi);
  for (size_t i = 0; i < count; ++i) {
    a[i] = value_a(g, slab, i);
    b[i] = value_b(g, slab, i);
  }
  if (rtm_mpi_groups_combine(mpi, a, b, count, shared, combine, NULL) != 0) return -1;
  long differ = 0;
  for (size_t i = 0; i < count; ++i) {
    float want_a = value_a(g, slab, i), want_b = value_b(g, slab, i);
    for (int other = 1; g == 0 && other < groups; ++other) {
      want_a = 3.0f * want_a + value_a(other, slab, i);
      want_b = want_b + value_b(other, slab, i);
    }
    differ += a[i] != want_a || b[i] != want_b;
  }
  return differ;
}

/* Under the launcher: every rank meets both ways, in chunks of `chunk` floats of COUNT, or
 * (0) in the library's own of COUNT_OWN; exit 0 when every rank's cells hold what they
 * should and both paths agree. */
static int ranks_main(int argc, char **argv, int groups, size_t chunk) {
  rtm_mpi_t *mpi = NULL;
  const size_t count = chunk ? COUNT : COUNT_OWN;
  if (rtm_mpi_init(&argc, &argv, &mpi) != 0 || rtm_mpi_split_groups(mpi, groups) != 0) return 1;
  rtm_mpi_set_combine_chunk(mpi, chunk); /* 0: the library's own */
  float *a[2], *b[2];
  for (int path = 0; path < 2; ++path) {
    a[path] = malloc(count * sizeof(float));
    b[path] = malloc(count * sizeof(float));
    if (!a[path] || !b[path]) return 1;
  }
  const long window = meet(mpi, 1, a[0], b[0], count), messages = meet(mpi, 0, a[1], b[1], count);
  const int same = memcmp(a[0], a[1], count * sizeof(float)) == 0 &&
                   memcmp(b[0], b[1], count * sizeof(float)) == 0;
  printf("world rank %d (group %d, slab %d): window %ld, messages %ld cells wrong; paths %s\n",
         rtm_mpi_world_rank(mpi), rtm_mpi_group(mpi), rtm_mpi_rank(mpi), window, messages,
         same ? "equal" : "differ");
  double failed = window != 0 || messages != 0 || !same;
  if (rtm_mpi_world_allreduce(mpi, &failed, 1, RTM_MPI_MAX) != 0) failed = 1.0;
  for (int path = 0; path < 2; ++path)
    free(a[path]), free(b[path]);
  rtm_mpi_finalize(mpi);
  return failed != 0.0;
}

/* This binary on `ranks` ranks in `groups` groups, in chunks of `chunk` floats (0: the
 * library's): its exit status. */
static int run_ranks(int ranks, int groups, int chunk) {
  const char *mpiexec = getenv("RTM3D_MPIEXEC");
  assert_non_null(mpiexec);
  char command[4096];
  snprintf(command, sizeof command,
           "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 %s --oversubscribe -np %d "
           "%s --ranks %d --chunk %d",
           mpiexec, ranks, self, groups, chunk);
  const int status = system(command);
  assert_true(WIFEXITED(status));
  return WEXITSTATUS(status);
}

/* A meeting under the launcher: its ranks, groups and chunk (0: the library's own). */
typedef struct {
  int ranks, groups, chunk;
} meeting_t;

static void test_meeting(void **state) {
  const meeting_t *m = *state;
  assert_int_equal(run_ranks(m->ranks, m->groups, m->chunk), 0);
}

#define MEETING_TEST(test, ranks, groups, chunk)                                                   \
  {                                                                                                \
    .name = #test, .test_func = test_meeting, .initial_state = (void *)&(const meeting_t) {        \
      ranks, groups, chunk                                                                         \
    }                                                                                              \
  }

int main(int argc, char **argv) {
  if (argc >= 5 && strcmp(argv[1], "--ranks") == 0 && strcmp(argv[3], "--chunk") == 0)
    return ranks_main(argc, argv, atoi(argv[2]), (size_t)atoi(argv[4]));
  self = argv[0];
  rtm_test_filters();
  const struct CMUnitTest tests[] = {MEETING_TEST(test_three_groups, 3, 3, CHUNK),
                                     MEETING_TEST(test_four_groups, 4, 4, CHUNK),
                                     MEETING_TEST(test_five_groups_three_chunks, 5, 5, CHUNK_FEW),
                                     MEETING_TEST(test_three_groups_one_chunk, 3, 3, COUNT),
                                     MEETING_TEST(test_three_groups_of_two_slabs, 6, 3, CHUNK),
                                     MEETING_TEST(test_three_groups_own_chunks, 3, 3, 0),
                                     MEETING_TEST(test_two_groups_one_chunk, 2, 2, COUNT),
                                     MEETING_TEST(test_two_groups_of_two_slabs, 4, 2, CHUNK)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
