/* The cuda backend against the cpu reference: every halo variant (sync, ldgsts and tma with
 * 2 and 3 stages) x every device memory strategy runs 300 steps of a heterogeneous model
 * with an off-grid source, off-grid receivers and an absorbing layer; the final snapshot
 * and all traces must match the cpu backend. Grid 45 x 37 x 29: nx and ny are not
 * multiples of any tile, so edge tiles are partial; the shapes cycle through zblock 0 and
 * zblocks that do not divide nz, and through tiles whose halo needs more than one 16-byte
 * copy per thread; the tma pipeline also runs its fastest tiles with both pipeline depths.
 * Also: the EDGE_PLANES + INTERIOR split equals ALL bit for bit, a field
 * written comes back unchanged, a backward step undoes a forward one, and bad shapes or a
 * volume that cannot fit are refused before anything is allocated.
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

#include "rtm_config.h"
#include "rtm_test_compare.h"
#include "rtm_test_random.h"
#include "rtm_propagator.h"
#include "rtm_solver.h"
#include "rtm_status.h"

/* The bound. The kernel evaluates the cpu reference's expression in its order with
 * every operation rounded (no FMA), so on a correct kernel the difference is exactly 0
 * (measured on an H100); a wrong halo cell, a skipped plane or a race gives O(1e-2) or
 * more, and FMA contraction alone drifts to about 3e-5 after 300 steps. */
static const double tolerance = 1e-5;

typedef struct {
  int steps; /* 300 unless RTM3D_TEST_STEPS says otherwise */
  rtm_config_t cfg;
  rtm_grid_t grid;
  rtm_model_t model;
  float *snapshot; /* cpu p after `steps` steps, dense */
  float *traces;   /* cpu traces [count][steps + 1] */
  int receiver_count;
  int hopper; /* compute capability >= 9.0 */
} fixture_t;

static void base_config(fixture_t *f, rtm_test_rng_t *rng) {
  rtm_config_t *c = &f->cfg;
  rtm_config_defaults(c);
  c->grid.n[0] = 45;
  c->grid.n[1] = 37;
  c->grid.n[2] = 29;
  c->grid.spacing_m[0] = 10.0;
  c->grid.spacing_m[1] = 12.0;
  c->grid.spacing_m[2] = 8.0;
  for (int a = 0; a < 3; ++a)
    c->grid.origin_m[a] = 100.0 * (a + 1);
  c->time.steps = f->steps;
  c->time.dt_s = NAN;
  c->time.cfl = 0.4;
  c->physics.equation = RTM_EQUATION_ISO;
  c->model.file[0] = '\0';
  /* Off-grid source, away from the layer, at a fresh fractional position. */
  const double cell[3] = {19.0 + rtm_test_uniform(rng, 0.0, 1.0), 15.0 + rtm_test_uniform(rng, 0.0, 1.0), 12.0 + rtm_test_uniform(rng, 0.0, 1.0)};
  for (int a = 0; a < 3; ++a)
    c->source.position_m[a] = c->grid.origin_m[a] + cell[a] * c->grid.spacing_m[a];
  c->source.frequency_hz = 10.0;
  c->source.delay_s = NAN;
  c->source.amplitude = 1.0;
  /* An off-grid plane of receivers, some inside the absorbing layer. */
  c->receivers.layout = RTM_RECEIVERS_PLANE;
  c->receivers.z_m = c->grid.origin_m[2] + (5.0 + rtm_test_uniform(rng, 0.0, 1.0)) * c->grid.spacing_m[2];
  c->receivers.x_first_m = c->grid.origin_m[0] + (2.0 + rtm_test_uniform(rng, 0.0, 1.0)) * c->grid.spacing_m[0];
  c->receivers.x_step_m = 3.3 * c->grid.spacing_m[0];
  c->receivers.x_count = 12;
  c->receivers.y_first_m = c->grid.origin_m[1] + (1.0 + rtm_test_uniform(rng, 0.0, 1.0)) * c->grid.spacing_m[1];
  c->receivers.y_step_m = 4.1 * c->grid.spacing_m[1];
  c->receivers.y_count = 8;
  c->boundary.width_cells = 6;
  c->boundary.reflection = 1e-3;
  c->backend.device = 0;
  c->memory.require_compression = 0;
}

/* Layered velocity with a gradient and 5% cell-by-cell noise. */
static int make_model(fixture_t *f, rtm_test_rng_t *rng) {
  const int nx = f->grid.n[0], ny = f->grid.n[1], nz = f->grid.n[2];
  f->model.vp = malloc((size_t)nx * ny * nz * sizeof(float));
  if (!f->model.vp) return -1;
  for (int iz = 0; iz < nz; ++iz)
    for (int iy = 0; iy < ny; ++iy)
      for (int ix = 0; ix < nx; ++ix) {
        double v = 1800.0 + 30.0 * iz + (iz > nz / 2 ? 600.0 : 0.0) + 8.0 * ix - 5.0 * iy;
        v *= 1.0 + 0.05 * (2.0 * rtm_test_uniform(rng, 0.0, 1.0) - 1.0);
        f->model.vp[((size_t)iz * ny + iy) * nx + ix] = (float)v;
      }
  return rtm_model_update_range(&f->model, &f->grid) == RTM_OK ? 0 : -1;
}

typedef struct {
  float *snapshot;
  float *traces;
  int receiver_count;
  int compressed; /* vmm-compressed: granted for the wavefields */
} run_t;

static int run(const fixture_t *f, const rtm_config_t *cfg, run_t *out) {
  int status = RTM_OK;
  rtm_propagator_t prop;
  memset(out, 0, sizeof *out);
  RTM_TRY(rtm_propagator_create(cfg, &f->grid, &f->model, &prop));
  for (int it = 0; it < f->steps; ++it)
    RTM_TRY(prop.backend->step(prop.state, it, RTM_REGION_ALL, RTM_FORWARD));
  if (prop.backend->synchronize) RTM_TRY(prop.backend->synchronize(prop.state));
  out->receiver_count = prop.receivers.count;
  out->snapshot = malloc(rtm_grid_interior_cells(&f->grid) * sizeof(float));
  out->traces = malloc((size_t)prop.receivers.count * (f->steps + 1) * sizeof(float));
  if (!out->snapshot || !out->traces) RTM_FAIL(RTM_ERR_NOMEM, "test: out of memory");
  RTM_TRY(prop.backend->read_field(prop.state, RTM_FIELD_P, RTM_LEVEL_CURRENT, out->snapshot));
  RTM_TRY(prop.backend->read_traces(prop.state, RTM_FIELD_P, out->traces));
  for (int i = 0; i < prop.ledger.count; ++i)
    if (strncmp(prop.ledger.records[i].label, "p ", 2) == 0)
      out->compressed = prop.ledger.records[i].compressed;
  rtm_propagator_destroy(&prop);
  return RTM_OK;
fail:
  rtm_propagator_destroy(&prop);
  return status;
}

static void free_run(run_t *r) {
  free(r->snapshot);
  free(r->traces);
}

static int setup(void **state) {
  fixture_t *f = calloc(1, sizeof *f);
  if (!f) return -1;
  const char *steps = getenv("RTM3D_TEST_STEPS");
  f->steps = steps ? atoi(steps) : 300;
  if (f->steps < 50) f->steps = 50; /* the split/backward test steps 41 times */
  rtm_test_rng_t rng = rtm_test_seed("test_cuda_backend");
  base_config(f, &rng);
  if (rtm_grid_init(&f->grid, f->cfg.grid.n, f->cfg.grid.spacing_m, f->cfg.grid.origin_m) != RTM_OK)
    return -1;
  if (make_model(f, &rng) != 0) return -1;
  int major = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0) != cudaSuccess)
    return -1;
  f->hopper = major >= 9;

  rtm_config_t cpu = f->cfg;
  snprintf(cpu.backend.name, sizeof cpu.backend.name, "cpu");
  snprintf(cpu.memory.strategy, sizeof cpu.memory.strategy, "host");
  run_t ref;
  if (run(f, &cpu, &ref) != RTM_OK) return -1;
  f->snapshot = ref.snapshot;
  f->traces = ref.traces;
  f->receiver_count = ref.receiver_count;
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture_t *f = *state;
  if (!f) return 0;
  free(f->snapshot);
  free(f->traces);
  rtm_model_release(&f->model);
  free(f);
  return 0;
}

typedef struct {
  int block[2];
  int zblock;
} shape_t;

/* Tiles in cells (4 per thread along x). zblock 0 (whole nz) and zblocks that leave a short
 * last block (29 = 3*8 + 5, 2*13 + 3, 9*3 + 2); tiles whose halo takes 2 to 4 16-byte
 * copies per thread, and 128x1, which takes the general copy loop (10 per thread). */
static const shape_t shapes[] = {
    {{32, 16}, 0}, {{16, 8}, 8}, {{64, 4}, 13}, {{8, 16}, 3}, {{128, 1}, 0}, {{32, 8}, 5},
};
enum { SHAPE_COUNT = (int)(sizeof shapes / sizeof shapes[0]) };

static const char *const strategies[] = {"device", "vmm", "vmm-compressed", "managed"};

static void check_variant(fixture_t *f, const char *halo, int stages, int first_shape) {
  for (int s = 0; s < 4; ++s) {
    const shape_t *shape = &shapes[(first_shape + s) % SHAPE_COUNT];
    rtm_config_t cfg = f->cfg;
    snprintf(cfg.backend.name, sizeof cfg.backend.name, "cuda");
    snprintf(cfg.memory.strategy, sizeof cfg.memory.strategy, "%s", strategies[s]);
    snprintf(cfg.kernel.halo, sizeof cfg.kernel.halo, "%s", halo);
    cfg.kernel.stages = stages;
    cfg.kernel.block[0] = shape->block[0];
    cfg.kernel.block[1] = shape->block[1];
    cfg.kernel.zblock = shape->zblock;
    run_t got;
    const int status = run(f, &cfg, &got);
    if (strcmp(halo, "tma") == 0 && !f->hopper) {
      /* Before sm_90 tma must be refused, not run. */
      assert_int_equal(status, RTM_ERR_UNSUPPORTED);
      continue;
    }
    assert_int_equal(status, RTM_OK);
    assert_int_equal(got.receiver_count, f->receiver_count);
    const double snap = rtm_test_relative_l2(got.snapshot, f->snapshot, rtm_grid_interior_cells(&f->grid));
    const double traces =
        rtm_test_relative_l2(got.traces, f->traces, (size_t)f->receiver_count * (f->steps + 1));
    printf("  %-6s stages %d  %-14s block %2dx%-2d zblock %2d  compressed %d  "
           "rel L2 snapshot %.2e traces %.2e\n",
           halo, stages, strategies[s], shape->block[0], shape->block[1], shape->zblock,
           got.compressed, snap, traces);
    assert_true(snap <= tolerance);
    assert_true(traces <= tolerance);
    free_run(&got);
  }
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

/* The tma pipeline's own shapes on device memory, with stages 2 and 3: the tiles it runs
 * fastest on a 512^3 volume (128x8, 64x8, 128x4; run/results/gpu_iso.md) with zblocks that
 * leave a short last z-chunk (29 = 3*8 + 5, 5*5 + 4, 2*13 + 3, 14*2 + 1: a chunk of one
 * plane, whose pipeline holds fewer planes than its rings have slots), and 128x16, whose
 * 512 consumer threads plus the producer warp are the most a block may hold. A wrong
 * barrier phase or slot gives O(1e-2) or a hang, not a rounding difference. */
static void test_tma_pipeline_shapes(void **state) {
  fixture_t *f = *state;
  static const shape_t tma_shapes[] = {
      {{128, 8}, 8}, {{128, 16}, 0}, {{64, 8}, 5}, {{32, 16}, 13}, {{128, 4}, 2},
  };
  for (int stages = 2; stages <= 3; ++stages)
    for (size_t k = 0; k < sizeof tma_shapes / sizeof tma_shapes[0]; ++k) {
      const shape_t *shape = &tma_shapes[k];
      rtm_config_t cfg = f->cfg;
      snprintf(cfg.backend.name, sizeof cfg.backend.name, "cuda");
      snprintf(cfg.memory.strategy, sizeof cfg.memory.strategy, "device");
      snprintf(cfg.kernel.halo, sizeof cfg.kernel.halo, "tma");
      cfg.kernel.stages = stages;
      cfg.kernel.block[0] = shape->block[0];
      cfg.kernel.block[1] = shape->block[1];
      cfg.kernel.zblock = shape->zblock;
      run_t got;
      const int status = run(f, &cfg, &got);
      if (!f->hopper) {
        assert_int_equal(status, RTM_ERR_UNSUPPORTED);
        continue;
      }
      assert_int_equal(status, RTM_OK);
      const double snap = rtm_test_relative_l2(got.snapshot, f->snapshot, rtm_grid_interior_cells(&f->grid));
      const double traces =
          rtm_test_relative_l2(got.traces, f->traces, (size_t)f->receiver_count * (f->steps + 1));
      printf("  tma    stages %d  device         block %3dx%-2d zblock %2d  "
             "rel L2 snapshot %.2e traces %.2e\n",
             stages, shape->block[0], shape->block[1], shape->zblock, snap, traces);
      assert_true(snap <= tolerance);
      assert_true(traces <= tolerance);
      free_run(&got);
    }
}

/* The reference itself must be non-trivial: the wave reached the receivers. */
static void test_reference_not_trivial(void **state) {
  fixture_t *f = *state;
  const size_t n = (size_t)f->receiver_count * (f->steps + 1);
  double peak = 0.0;
  for (size_t i = 0; i < n; ++i)
    peak = fmax(peak, fabs(f->traces[i]));
  assert_true(f->receiver_count == 96);
  assert_true(peak > 0.0);
}

/* Split steps compute each cell with the same expression: bit-equal to ALL. Then a backward
 * step with the same `it` undoes the last forward step where the source is outside the
 * damping layer (the cpu reference's contract) to fp32 rounding. */
static void test_split_and_backward(void **state) {
  fixture_t *f = *state;
  const int halos = f->hopper ? 3 : 2;
  static const char *const names[3] = {"sync", "ldgsts", "tma"};
  const size_t cells = rtm_grid_interior_cells(&f->grid);
  for (int h = 0; h < halos; ++h) {
    rtm_config_t cfg = f->cfg;
    snprintf(cfg.backend.name, sizeof cfg.backend.name, "cuda");
    snprintf(cfg.memory.strategy, sizeof cfg.memory.strategy, "device");
    snprintf(cfg.kernel.halo, sizeof cfg.kernel.halo, "%s", names[h]);
    cfg.kernel.zblock = 7;
    cfg.boundary.width_cells = 0; /* a damped step is not reversible */
    rtm_propagator_t all, split;
    assert_int_equal(rtm_propagator_create(&cfg, &f->grid, &f->model, &all), RTM_OK);
    assert_int_equal(rtm_propagator_create(&cfg, &f->grid, &f->model, &split), RTM_OK);
    for (int it = 0; it < 40; ++it) {
      assert_int_equal(all.backend->step(all.state, it, RTM_REGION_ALL, RTM_FORWARD), RTM_OK);
      assert_int_equal(split.backend->step(split.state, it, RTM_REGION_EDGE_PLANES, RTM_FORWARD),
                       RTM_OK);
      assert_int_equal(split.backend->step(split.state, it, RTM_REGION_INTERIOR, RTM_FORWARD),
                       RTM_OK);
    }
    float *a = malloc(cells * sizeof *a), *b = malloc(cells * sizeof *b);
    float *before = malloc(cells * sizeof *before);
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(before);
    assert_int_equal(all.backend->read_field(all.state, RTM_FIELD_P, RTM_LEVEL_CURRENT, a), RTM_OK);
    assert_int_equal(split.backend->read_field(split.state, RTM_FIELD_P, RTM_LEVEL_CURRENT, b),
                     RTM_OK);
    assert_memory_equal(a, b, cells * sizeof *a);

    /* backward: p[40], p[39] -> forward step 40 -> backward step 40 -> p[40], p[39] */
    assert_int_equal(all.backend->read_field(all.state, RTM_FIELD_P, RTM_LEVEL_PREVIOUS, before),
                     RTM_OK);
    assert_int_equal(all.backend->step(all.state, 40, RTM_REGION_ALL, RTM_FORWARD), RTM_OK);
    assert_int_equal(all.backend->step(all.state, 40, RTM_REGION_ALL, RTM_BACKWARD), RTM_OK);
    assert_int_equal(all.backend->read_field(all.state, RTM_FIELD_P, RTM_LEVEL_CURRENT, b), RTM_OK);
    /* two fp32 updates of O(1) relative rounding each */
    assert_true(rtm_test_relative_l2(b, a, cells) < 1e-5);
    assert_int_equal(all.backend->read_field(all.state, RTM_FIELD_P, RTM_LEVEL_PREVIOUS, b),
                     RTM_OK);
    assert_true(rtm_test_relative_l2(b, before, cells) < 1e-5);

    /* write then read: exact */
    for (size_t i = 0; i < cells; ++i)
      a[i] = (float)(i % 977) - 488.0f;
    assert_int_equal(all.backend->write_field(all.state, RTM_FIELD_P, RTM_LEVEL_PREVIOUS, a),
                     RTM_OK);
    assert_int_equal(all.backend->read_field(all.state, RTM_FIELD_P, RTM_LEVEL_PREVIOUS, b),
                     RTM_OK);
    assert_memory_equal(a, b, cells * sizeof *a);
    free(a);
    free(b);
    free(before);
    rtm_propagator_destroy(&all);
    rtm_propagator_destroy(&split);
  }
}

/* Shapes the kernel cannot run and volumes that cannot fit: a config error or NOMEM, and
 * nothing left allocated. */
static void test_refusals(void **state) {
  fixture_t *f = *state;
  /* width not a multiple of 4; 1024 threads; 6 threads (not whole warps); empty */
  static const int bad[][2] = {{33, 16}, {128, 32}, {12, 2}, {0, 16}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    rtm_config_t cfg = f->cfg;
    snprintf(cfg.backend.name, sizeof cfg.backend.name, "cuda");
    snprintf(cfg.memory.strategy, sizeof cfg.memory.strategy, "device");
    cfg.kernel.block[0] = bad[i][0];
    cfg.kernel.block[1] = bad[i][1];
    rtm_propagator_t prop;
    assert_int_equal(rtm_propagator_create(&cfg, &f->grid, &f->model, &prop), RTM_ERR_CONFIG);
  }
  {
    rtm_config_t cfg = f->cfg;
    snprintf(cfg.backend.name, sizeof cfg.backend.name, "cuda");
    snprintf(cfg.memory.strategy, sizeof cfg.memory.strategy, "host");
    rtm_propagator_t prop;
    assert_int_equal(rtm_propagator_create(&cfg, &f->grid, &f->model, &prop), RTM_ERR_CONFIG);
  }
  /* 4096^3 needs 3 x 280 GB: refused by the estimate, before any allocation. The model
   * arrays are never touched by the backend before the estimate. */
  {
    rtm_config_t cfg = f->cfg;
    snprintf(cfg.backend.name, sizeof cfg.backend.name, "cuda");
    snprintf(cfg.memory.strategy, sizeof cfg.memory.strategy, "device");
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

int main(void) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    printf("test_cuda_backend: no CUDA device, skipped\n");
    return 77;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reference_not_trivial),
      cmocka_unit_test(test_sync),
      cmocka_unit_test(test_ldgsts_2),
      cmocka_unit_test(test_ldgsts_3),
      cmocka_unit_test(test_tma_2),
      cmocka_unit_test(test_tma_3),
      cmocka_unit_test(test_tma_pipeline_shapes),
      cmocka_unit_test(test_split_and_backward),
      cmocka_unit_test(test_refusals),
  };
  const char *filter = getenv("RTM3D_TEST_FILTER");
  if (filter && filter[0]) cmocka_set_test_filter(filter);
  return cmocka_run_group_tests(tests, setup, teardown);
}
