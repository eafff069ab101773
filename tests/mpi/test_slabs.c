/* rtm_mpi_slab on its own (decomposition.c, no MPI call): for every nz from 4 to 200 and
 * every rank count that leaves slabs of at least 4 planes, the slabs tile [0, nz) in rank
 * order without gap or overlap, their sizes differ by at most one, larger first; one rank
 * more is refused with RTM_ERR_CONFIG naming grid.nz, the rank count and the most ranks
 * that work. rtm_mpi_slab_aligned, in units of 4 planes (a migration's): the same rank
 * counts accepted, the slabs tiling [0, nz), each starting on a multiple of 4 and all but
 * the last whole units, their sizes within 4 planes of each other. */
#define _POSIX_C_SOURCE 200809L /* fileno, dup2: rtm_test_capture.h */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "rtm_mpi.h"
#include "rtm_status.h"
#include "rtm_test_capture.h"
#include "rtm_test_main.h"

static void test_slabs_tile_the_planes(void **state) {
  (void)state;
  int checked = 0;
  for (int nz = RTM_RADIUS; nz <= 200; ++nz)
    for (int ranks = 1; nz / ranks >= RTM_RADIUS; ++ranks) {
      int next = 0, largest = 0, smallest = nz;
      for (int rank = 0; rank < ranks; ++rank) {
        int z_offset = -1, nz_local = -1;
        assert_int_equal(rtm_mpi_slab(nz, ranks, rank, &z_offset, &nz_local), RTM_OK);
        assert_int_equal(z_offset, next); /* in rank order, no gap, no overlap */
        assert_true(nz_local >= RTM_RADIUS);
        assert_true(rank == 0 || nz_local <= largest); /* the larger slabs first */
        if (nz_local > largest) largest = nz_local;
        if (nz_local < smallest) smallest = nz_local;
        next += nz_local;
      }
      assert_int_equal(next, nz);
      assert_true(largest - smallest <= 1);
      ++checked;
    }
  printf("%d splits checked\n", checked);
  assert_true(checked > 1000);
}

static void test_aligned_slabs(void **state) {
  (void)state;
  enum { ALIGN = 4 };
  int checked = 0;
  for (int nz = RTM_RADIUS; nz <= 200; ++nz)
    for (int ranks = 1; ranks <= nz; ++ranks) {
      int z_offset = -1, nz_local = -1;
      const int plain = rtm_mpi_slab(nz, ranks, 0, &z_offset, &nz_local) == RTM_OK;
      int next = 0, largest = 0, smallest = nz, accepted = 1;
      for (int rank = 0; rank < ranks && accepted; ++rank) {
        static capture_t capture; /* a refusal says why on every rank: kept off the log */
        accepted = captured(&capture, rtm_mpi_slab_aligned(nz, ranks, rank, ALIGN, &z_offset,
                                                           &nz_local)) == RTM_OK;
        if (!accepted) break;
        assert_int_equal(z_offset, next);
        assert_int_equal(z_offset % ALIGN, 0);
        assert_true(rank == ranks - 1 || nz_local % ALIGN == 0);
        assert_true(nz_local >= RTM_RADIUS);
        if (nz_local > largest) largest = nz_local;
        if (nz_local < smallest) smallest = nz_local;
        next += nz_local;
      }
      assert_int_equal(accepted, plain); /* the same rank counts as the plain cut */
      if (!accepted) continue;
      assert_int_equal(next, nz);
      assert_true(largest - smallest <= ALIGN);
      ++checked;
    }
  printf("%d splits in units of 4 planes checked\n", checked);
  assert_true(checked > 1000);
}

static void test_thin_slabs_refused(void **state) {
  (void)state;
  static capture_t capture;
  int z_offset = 0, nz_local = 0;
  assert_int_equal(captured(&capture, rtm_mpi_slab(37, 10, 0, &z_offset, &nz_local)),
                   RTM_ERR_CONFIG);
  assert_non_null(strstr(capture.text, "grid.nz = 37 over 10 ranks leaves slabs of 3 planes"));
  assert_non_null(strstr(capture.text, "run on at most 9 ranks"));
  /* every rank says so, the last one too */
  assert_int_equal(captured(&capture, rtm_mpi_slab(37, 10, 9, &z_offset, &nz_local)),
                   RTM_ERR_CONFIG);
  assert_int_equal(rtm_mpi_slab(36, 9, 8, &z_offset, &nz_local), RTM_OK);
  assert_int_equal(z_offset, 32);
  assert_int_equal(nz_local, 4);
  /* in units of 4: the unit said, the same rank count advised */
  assert_int_equal(captured(&capture, rtm_mpi_slab_aligned(37, 10, 3, 4, &z_offset, &nz_local)),
                   RTM_ERR_CONFIG);
  assert_non_null(strstr(capture.text, "(cut in whole units of 4 planes)"));
  assert_non_null(strstr(capture.text, "run on at most 9 ranks"));
  assert_int_equal(rtm_mpi_slab_aligned(37, 9, 8, 4, &z_offset, &nz_local), RTM_OK);
  assert_int_equal(z_offset, 32);
  assert_int_equal(nz_local, 5); /* the last unit and the plane short of one */
  /* the thinnest slab, which a reach into a neighbour (physics.smooth_angles) is checked
   * against: 14/13/13 cut plainly, 16/12/12 in units of 4 */
  assert_int_equal(rtm_mpi_thinnest_slab(40, 3, 1), 13);
  assert_int_equal(rtm_mpi_thinnest_slab(40, 3, 4), 12);
  assert_int_equal(rtm_mpi_thinnest_slab(37, 10, 4), 1); /* 4 x 9 and the last's 1 */
}

RTM_TEST_MAIN(cmocka_unit_test(test_slabs_tile_the_planes), cmocka_unit_test(test_aligned_slabs),
              cmocka_unit_test(test_thin_slabs_refused))
