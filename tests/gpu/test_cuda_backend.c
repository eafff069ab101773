/* The cuda backend against the cpu reference: every halo variant (sync, ldgsts with 2 and 3
 * stages, tma with 2 to 4) x every device memory strategy runs 300 steps of a heterogeneous model
 * with an off-grid source, off-grid receivers and an absorbing layer; the final snapshot
 * and all traces must match the cpu backend. Grid 45 x 37 x 29: nx and ny are not
 * multiples of any tile, so edge tiles are partial; the shapes cycle through zblock 0 and
 * zblocks that do not divide nz, and through tiles whose halo needs more than one 16-byte
 * copy per thread; the tma pipeline also runs its fastest tiles with both pipeline depths.
 * Also: the EDGE_PLANES + INTERIOR split equals ALL bit for bit, a kernel shape changed on a
 * live propagator (rtm3d tune) steps as a fresh one, non-finite cells are counted on the
 * device, a field written comes back unchanged, a backward step undoes a forward one, and bad
 * shapes or a volume that cannot fit are refused before anything is allocated.
 *
 * Exit 77 (skipped) when there is no CUDA device. Inputs are fresh on each run: the seed
 * is printed, and RTM3D_TEST_SEED repeats a run. RTM3D_TEST_STEPS shortens the run for
 * compute-sanitizer (run/tools/gpu_check.sh); RTM3D_TEST_FILTER (a cmocka glob such as
 * "test_tma*") runs only the tests it matches. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cuda_runtime_api.h>

#include "cuda_fixture.h"
#include "rtm_config.h"
#include "rtm_propagator.h"
#include "rtm_solver.h"
#include "rtm_status.h"
#include "rtm_test_main.h"

/* The bound. The kernel evaluates the cpu reference's expression in its order with
 * every operation rounded (no FMA), so on a correct kernel the difference is exactly 0
 * (measured on an H100); a wrong halo cell, a skipped plane or a race gives O(1e-2) or
 * more, and FMA contraction alone drifts to about 3e-5 after 300 steps. */
static const double tolerance = 1e-5;

/* The cpu reference: fixture->reference[CPU]. */
enum { CPU = 0 };

static void fill_cell(cuda_fixture_t *f, size_t i, int ix, int iy, int iz, rtm_test_rng_t *rng) {
  f->model.vp[i] = cuda_layered_vp(&f->grid, ix, iy, iz, rng);
}

static int setup(void **state) {
  cuda_fixture_t *f = cuda_fixture_create("test_cuda_backend", RTM_EQUATION_ISO, fill_cell);
  if (!f) return -1;
  *state = f;
  const rtm_config_t cpu = cuda_with_backend(f, "cpu", "host");
  return cuda_run(f, &cpu, &f->model, &f->reference[CPU]) == RTM_OK ? 0 : -1;
}

/* Tiles in cells (4 per thread along x). zblock 0 (whole nz) and zblocks that leave a short
 * last block (29 = 3*8 + 5, 2*13 + 3, 9*3 + 2); tiles whose halo takes 2 to 4 16-byte
 * copies per thread, and 128x1, which takes the general copy loop (10 per thread). */
static const cuda_shape_t shapes[] = {
    {{32, 16}, 0}, {{16, 8}, 8}, {{64, 4}, 13}, {{8, 16}, 3}, {{128, 1}, 0}, {{32, 8}, 5},
};
enum { SHAPE_COUNT = (int)(sizeof shapes / sizeof shapes[0]) };

static const char *const strategies[] = {"device", "vmm", "vmm-compressed", "managed"};

/* Runs `halo` with `stages` on memory `strategy` and tile `shape` against the cpu reference;
 * tma before sm_90 must be refused, not run. */
static void check_against_cpu(cuda_fixture_t *f, const char *halo, int stages, const char *strategy,
                              const cuda_shape_t *shape) {
  rtm_config_t cfg = cuda_with_backend(f, "cuda", strategy);
  cuda_set_kernel(&cfg, halo, stages, shape);
  cuda_run_t got;
  const int status = cuda_run(f, &cfg, &f->model, &got);
  if (strcmp(halo, "tma") == 0 && !f->hopper) {
    assert_int_equal(status, RTM_ERR_UNSUPPORTED);
    return;
  }
  assert_int_equal(status, RTM_OK);
  char what[96];
  snprintf(what, sizeof what, "%s s%d %s block %dx%d zblock %d compressed %d", halo, stages,
           strategy, shape->block[0], shape->block[1], shape->zblock, got.compressed);
  cuda_compare(f, &got, &f->reference[CPU], tolerance, what);
  cuda_run_free(&got);
}

static void check_variant(cuda_fixture_t *f, const char *halo, int stages, int first_shape) {
  for (int s = 0; s < 4; ++s)
    check_against_cpu(f, halo, stages, strategies[s], &shapes[(first_shape + s) % SHAPE_COUNT]);
}

static void test_sync(void **state) {
  check_variant(*state, "sync", 2, 0);
}
static void test_ldgsts_2(void **state) {
  check_variant(*state, "ldgsts", 2, 1);
}
static void test_ldgsts_3(void **state) {
  check_variant(*state, "ldgsts", 3, 2);
}
static void test_tma_2(void **state) {
  check_variant(*state, "tma", 2, 3);
}
static void test_tma_3(void **state) {
  check_variant(*state, "tma", 3, 4);
}
static void test_tma_4(void **state) {
  check_variant(*state, "tma", 4, 5);
}

/* The tma pipeline's own shapes on device memory, with 2 to 4 stages: the tiles it runs
 * fastest on a 512^3 volume (128x8, 128x16, 64x8, 128x4; run/results/kernels.md) with zblocks that
 * leave a short last z-chunk (29 = 3*8 + 5, 5*5 + 4, 2*13 + 3, 14*2 + 1: a chunk of one
 * plane, whose pipeline holds fewer planes than its rings have slots), and 128x16, whose
 * 512 consumer threads plus the producer warp are the most a block may hold. A wrong
 * barrier phase or slot gives O(1e-2) or a hang, not a rounding difference. */
static void test_tma_pipeline_shapes(void **state) {
  cuda_fixture_t *f = *state;
  static const cuda_shape_t tma_shapes[] = {
      {{128, 8}, 8}, {{128, 16}, 0}, {{64, 8}, 5}, {{32, 16}, 13}, {{128, 4}, 2},
  };
  for (int stages = 2; stages <= 4; ++stages)
    for (size_t k = 0; k < sizeof tma_shapes / sizeof tma_shapes[0]; ++k)
      check_against_cpu(f, "tma", stages, "device", &tma_shapes[k]);
}

/* The reference itself must be non-trivial: the wave reached the receivers. */
static void test_reference_not_trivial(void **state) {
  const cuda_fixture_t *f = *state;
  const cuda_run_t *ref = &f->reference[CPU];
  const size_t n = (size_t)ref->receiver_count * (f->steps + 1);
  double peak = 0.0;
  for (size_t i = 0; i < n; ++i)
    peak = fmax(peak, fabs(ref->traces[i]));
  assert_true(ref->receiver_count == 96);
  assert_true(peak > 0.0);
}

/* Split steps compute each cell with the same expression: bit-equal to ALL. Then a backward
 * step with the same `it` undoes the last forward step where the source is outside the
 * damping layer (the cpu reference's contract) to fp32 rounding. */
static void test_split_and_backward(void **state) {
  cuda_fixture_t *f = *state;
  const int halos = f->hopper ? 3 : 2;
  static const char *const names[3] = {"sync", "ldgsts", "tma"};
  for (int h = 0; h < halos; ++h) {
    rtm_config_t cfg = cuda_with_backend(f, "cuda", "device");
    snprintf(cfg.kernel.halo, sizeof cfg.kernel.halo, "%s", names[h]);
    cfg.kernel.zblock = 7;
    cfg.boundary.width_cells = 0; /* a damped step is not reversible */
    rtm_propagator_t all, split;
    cuda_step_all_and_split(f, &cfg, &all, &split);
    cuda_check_backward_undoes_forward(f, &all, RTM_FIELD_P);
    cuda_check_write_read(f, &all, RTM_FIELD_P, 977, 488.0f); /* exact */
    rtm_propagator_destroy(&all);
    rtm_propagator_destroy(&split);
  }
}

/* A propagator moved to another shot (reset, new source and patch) equals a fresh one. */
static void test_set_shot(void **state) {
  const cuda_fixture_t *f = *state;
  const rtm_config_t cfg = cuda_with_backend(f, "cuda", "device");
  cuda_check_set_shot(f, &cfg);
}

/* Steps `steps` times from the random field `start` (both levels) and returns p, dense. */
static float *steps_from(const cuda_fixture_t *f, rtm_propagator_t *prop, const float *start,
                         int steps) {
  const size_t cells = rtm_grid_interior_cells(&f->grid);
  float *p = malloc(cells * sizeof *p);
  assert_non_null(p);
  for (int l = RTM_LEVEL_CURRENT; l <= RTM_LEVEL_PREVIOUS; ++l)
    assert_int_equal(prop->backend->write_field(prop->state, RTM_FIELD_P, (rtm_level_t)l, start),
                     RTM_OK);
  for (int it = 0; it < steps; ++it)
    assert_int_equal(prop->backend->step(prop->state, it, RTM_REGION_ALL, RTM_FORWARD), RTM_OK);
  assert_int_equal(prop->backend->read_field(prop->state, RTM_FIELD_P, RTM_LEVEL_CURRENT, p),
                   RTM_OK);
  return p;
}

/* rtm3d tune's set_kernel: a propagator made with one shape and moved to another (tma maps
 * made again, or another halo) steps exactly as one made with the second; a shape the
 * device refuses is an error that leaves the first working. */
static void test_set_kernel(void **state) {
  const cuda_fixture_t *f = *state;
  const size_t cells = rtm_grid_interior_cells(&f->grid);
  const char *halo = f->hopper ? "tma" : "ldgsts";
  const cuda_shape_t first = {{128, 8}, 0}, second = {{32, 8}, 5};
  const rtm_kernel_shape_t moved = {"", 2, {32, 8}, 5}, refused = {"ldgsts", 2, {33, 16}, 0};
  rtm_kernel_shape_t to = moved;
  snprintf(to.halo, sizeof to.halo, "%s", halo);
  float *start = malloc(cells * sizeof *start);
  assert_non_null(start);
  for (size_t i = 0; i < cells; ++i)
    start[i] = (float)((i * 2654435761u) % 1000u) * 1e-3f - 0.5f;
  rtm_config_t a = cuda_with_backend(f, "cuda", "device"), b = a;
  cuda_set_kernel(&a, halo, 3, &first);
  cuda_set_kernel(&b, halo, 2, &second);
  rtm_propagator_t made, set;
  assert_int_equal(rtm_propagator_create(&b, &f->grid, &f->model, &made), RTM_OK);
  assert_int_equal(rtm_propagator_create(&a, &f->grid, &f->model, &set), RTM_OK);
  assert_non_null(set.backend->set_kernel);
  assert_int_equal(set.backend->set_kernel(set.state, &to), RTM_OK);
  float *want = steps_from(f, &made, start, 40), *got = steps_from(f, &set, start, 40);
  assert_memory_equal(got, want, cells * sizeof *got);
  free(got);
  assert_int_not_equal(set.backend->set_kernel(set.state, &refused), RTM_OK);
  got = steps_from(f, &set, start, 40);
  assert_memory_equal(got, want, cells * sizeof *got);
  free(got);
  free(want);
  rtm_propagator_destroy(&set);
  rtm_propagator_destroy(&made);
  free(start);
}

/* count_nonfinite counts on the device what read_field would show: 0, then a NaN and an
 * infinity written into the field. */
static void test_count_nonfinite(void **state) {
  const cuda_fixture_t *f = *state;
  const size_t cells = rtm_grid_interior_cells(&f->grid);
  const rtm_config_t cfg = cuda_with_backend(f, "cuda", "device");
  rtm_propagator_t prop;
  assert_int_equal(rtm_propagator_create(&cfg, &f->grid, &f->model, &prop), RTM_OK);
  float *field = calloc(cells, sizeof *field);
  assert_non_null(field);
  size_t count = 99;
  assert_int_equal(
      prop.backend->count_nonfinite(prop.state, RTM_FIELD_P, RTM_LEVEL_CURRENT, &count), RTM_OK);
  assert_int_equal(count, 0);
  field[cells / 3] = NAN;
  field[cells - 1] = -INFINITY;
  assert_int_equal(prop.backend->write_field(prop.state, RTM_FIELD_P, RTM_LEVEL_PREVIOUS, field),
                   RTM_OK);
  assert_int_equal(
      prop.backend->count_nonfinite(prop.state, RTM_FIELD_P, RTM_LEVEL_PREVIOUS, &count), RTM_OK);
  assert_int_equal(count, 2);
  assert_int_equal(
      prop.backend->count_nonfinite(prop.state, RTM_FIELD_P, RTM_LEVEL_CURRENT, &count), RTM_OK);
  assert_int_equal(count, 0);
  free(field);
  rtm_propagator_destroy(&prop);
}

/* Shapes the kernel cannot run and volumes that cannot fit: a config error or NOMEM, and
 * nothing left allocated. */
static void test_refusals(void **state) {
  cuda_fixture_t *f = *state;
  /* width not a multiple of 4; 1024 threads; 6 threads (not whole warps); empty */
  static const int bad[][2] = {{33, 16}, {128, 32}, {12, 2}, {0, 16}};
  cuda_check_tiles_refused(f, bad, sizeof bad / sizeof bad[0]);
  {
    const rtm_config_t cfg = cuda_with_backend(f, "cuda", "host");
    cuda_check_refused(f, &cfg);
  }
  /* more stages than the kernel has instances: ldgsts 4, tma 5 */
  {
    const cuda_shape_t shape = {{32, 8}, 0};
    rtm_config_t cfg = cuda_with_backend(f, "cuda", "device");
    cuda_set_kernel(&cfg, "ldgsts", 4, &shape);
    cuda_check_refused(f, &cfg);
    cuda_set_kernel(&cfg, "tma", 5, &shape);
    cuda_check_refused(f, &cfg);
  }
  /* 4096^3 needs 3 x 280 GB: refused by the estimate, before any allocation. The model
   * arrays are never touched by the backend before the estimate. */
  {
    rtm_config_t cfg = cuda_with_backend(f, "cuda", "device");
    rtm_grid_t huge;
    const int n[3] = {4096, 4096, 4096};
    assert_int_equal(rtm_grid_init(&huge, n, cfg.grid.spacing_m, cfg.grid.origin_m), RTM_OK);
    rtm_mem_ledger_t ledger;
    rtm_mem_ledger_init(&ledger);
    rtm_boundary_t boundary;
    memset(&boundary, 0, sizeof boundary);
    const rtm_backend_desc_t desc = {.config = &cfg,
                                     .grid = &huge,
                                     .model = &f->model,
                                     .boundary = &boundary,
                                     .dt_s = 1e-3,
                                     .steps = 10,
                                     .ledger = &ledger};
    const rtm_backend_t *cuda = NULL;
    assert_int_equal(rtm_backend_select("cuda", &cuda), RTM_OK);
    void *backend_state = NULL;
    assert_int_equal(cuda->create(&desc, &backend_state), RTM_ERR_NOMEM);
    assert_null(backend_state);
    assert_int_equal(ledger.count, 0);
    rtm_mem_ledger_release(&ledger);
  }
}

RTM_TEST_MAIN_CUDA("test_cuda_backend", setup, cuda_fixture_teardown,
                   cmocka_unit_test(test_reference_not_trivial), cmocka_unit_test(test_sync),
                   cmocka_unit_test(test_ldgsts_2), cmocka_unit_test(test_ldgsts_3),
                   cmocka_unit_test(test_tma_2), cmocka_unit_test(test_tma_3),
                   cmocka_unit_test(test_tma_4), cmocka_unit_test(test_tma_pipeline_shapes),
                   cmocka_unit_test(test_split_and_backward), cmocka_unit_test(test_set_shot),
                   cmocka_unit_test(test_set_kernel), cmocka_unit_test(test_count_nonfinite),
                   cmocka_unit_test(test_refusals))
