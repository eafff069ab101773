/* The cuda backend's vti/tti kernel against the cpu reference (tti_cpu.c): 300 steps of a
 * heterogeneous TTI model (vp with layers and noise; epsilon, delta, theta, phi varying in
 * space, some cells with delta > epsilon so that conditioning acts), an off-grid source, 96
 * off-grid receivers, an absorbing layer, for every device memory strategy and tiles that
 * leave partial edge tiles (45 x 37 x 29 cells), zblock 0 and zblocks that do not divide
 * nz, and every halo variant (sync; ldgsts and tma with 2 and 3 stages; tma only on
 * compute capability 9.0+, refused below). Final p and q and all traces must match: the
 * receivers record p and q (receivers.fields = p,q), both compared. Also vti against its
 * reference; eps = delta = 0 with a tilt reproducing the iso kernel with p = q (and q traces
 * = p traces); EDGE_PLANES + INTERIOR equal to
 * ALL bit for bit; a backward step undoing a forward one; fields p and q written and read
 * back; shapes the kernel cannot run refused; memory.model_precision = fp16 (binary16
 * coefficient volumes) against the cpu reference's fp16, with the fp16 - fp32 difference.
 *
 * Exit 77 (skipped) without a CUDA device. Fresh inputs on each run (the seed is printed;
 * RTM3D_TEST_SEED repeats it). RTM3D_TEST_STEPS shortens the runs and RTM3D_TEST_FEW=1
 * keeps one memory strategy per halo variant, for compute-sanitizer; RTM3D_TEST_FILTER (a
 * cmocka glob such as "test_tti*") runs only the tests it matches, and RTM3D_TEST_HALO
 * (sync, ldgsts or tma) limits test_tti_every_variant to one halo family. */
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
#include "rtm_test_compare.h"
#include "rtm_test_main.h"

/* The bound. The kernel repeats the reference's operations in its order with the
 * same float weights and fused multiply-adds (tti_cpu.c's header), so a correct kernel
 * lands at 0 (measured on an H100: 0 for every variant); the Hz factors are formed in float
 * from n where the reference forms them in double from the angles when the axis is not
 * smoothed (a 1-ulp difference of the medium, ~1e-7). A wrong halo cell, queue slot, ring
 * slot or race gives 1e-2 or more. */
static const double tolerance = 1e-5;

/* The cpu references, fixture->reference[...]: fp32 and memory.model_precision = fp16. */
enum { TTI_REF, VTI_REF, TTI_HALF_REF, VTI_HALF_REF };

/* Layered vp with 5% noise; epsilon 0.05-0.35 and delta -0.05-0.2 varying smoothly with
 * noise (delta > epsilon in some cells); a tilt turning from 0 to 60 degrees with depth and
 * an azimuth turning across x, plus noise of a few degrees. */
static void fill_cell(cuda_fixture_t *f, size_t i, int ix, int iy, int iz, rtm_test_rng_t *rng) {
  const int nx = f->grid.n[0], ny = f->grid.n[1], nz = f->grid.n[2];
  rtm_model_t *m = &f->model;
  m->vp[i] = cuda_layered_vp(&f->grid, ix, iy, iz, rng);
  m->epsilon[i] = (float)(0.05 + 0.25 * ix / (double)nx + 0.05 * rtm_test_uniform(rng, 0.0, 1.0));
  m->delta[i] = (float)(-0.05 + 0.2 * iy / (double)ny + 0.05 * rtm_test_uniform(rng, 0.0, 1.0));
  m->theta_deg[i] = (float)(60.0 * iz / (double)nz + 4.0 * (rtm_test_uniform(rng, 0.0, 1.0) - 0.5));
  m->phi_deg[i] =
      (float)(-150.0 + 300.0 * ix / (double)nx + 6.0 * (rtm_test_uniform(rng, 0.0, 1.0) - 0.5));
}

static int setup(void **state) {
  cuda_fixture_t *f = cuda_fixture_create("test_cuda_tti", RTM_EQUATION_TTI, fill_cell);
  if (!f) return -1;
  *state = f;
  snprintf(f->cfg.receivers.fields, sizeof f->cfg.receivers.fields, "p,q");
  snprintf(f->cfg.kernel.halo, sizeof f->cfg.kernel.halo, "sync");
  rtm_config_t cpu = cuda_with_backend(f, "cpu", "host");
  if (cuda_run(f, &cpu, &f->model, &f->reference[TTI_REF]) != RTM_OK) return -1;
  cpu.physics.equation = RTM_EQUATION_VTI;
  if (cuda_run(f, &cpu, &f->model, &f->reference[VTI_REF]) != RTM_OK) return -1;
  cpu.memory.model_precision = RTM_PRECISION_FP16;
  if (cuda_run(f, &cpu, &f->model, &f->reference[VTI_HALF_REF]) != RTM_OK) return -1;
  cpu.physics.equation = RTM_EQUATION_TTI;
  if (cuda_run(f, &cpu, &f->model, &f->reference[TTI_HALF_REF]) != RTM_OK) return -1;
  return 0;
}

/* The references must be non-trivial: the wave reached the receivers and p differs from q
 * (else a kernel that ignored the anisotropy could pass). */
static void test_reference_not_trivial(void **state) {
  const cuda_fixture_t *f = *state;
  const cuda_run_t *tti = &f->reference[TTI_REF], *vti = &f->reference[VTI_REF];
  const size_t n = (size_t)tti->receiver_count * (f->steps + 1);
  double peak = 0.0;
  for (size_t i = 0; i < n; ++i)
    peak = fmax(peak, fabs(tti->traces[i]));
  assert_int_equal(tti->receiver_count, 96);
  assert_true(peak > 0.0);
  const size_t cells = rtm_grid_interior_cells(&f->grid);
  assert_true(rtm_test_relative_l2(tti->q, tti->p, cells) > 1e-3);
  assert_true(rtm_test_relative_l2(vti->p, tti->p, cells) > 1e-3);
  /* the q traces are recorded, and they are not the p traces */
  assert_non_null(tti->q_traces);
  assert_non_null(vti->q_traces);
  assert_true(rtm_test_relative_l2(tti->q_traces, tti->traces, n) > 1e-3);
  assert_true(rtm_test_relative_l2(vti->q_traces, vti->traces, n) > 1e-3);
}

/* One thread per cell: 512, 128, 256, 128 threads; zblock 0 and zblocks leaving a short
 * last block (29 = 3 x 8 + 5 = 2 x 13 + 3 = 9 x 3 + 2). */
static const cuda_shape_t shapes[] = {{{32, 16}, 0}, {{16, 8}, 8}, {{64, 4}, 13}, {{8, 16}, 3}};
static const char *const strategies[] = {"device", "vmm", "vmm-compressed", "managed"};

typedef struct {
  const char *halo;
  int stages;
} halo_t;

static const halo_t halos[] = {{"sync", 2}, {"ldgsts", 2}, {"ldgsts", 3}, {"tma", 2}, {"tma", 3}};
enum { HALO_COUNT = sizeof halos / sizeof halos[0] };

/* Runs `equation` with halo h, strategy s and shape k against `ref`; tma below sm_90 must
 * be refused instead. */
static void check_variant(cuda_fixture_t *f, rtm_equation_t equation, const cuda_run_t *ref, int h,
                          int s, int k) {
  rtm_config_t cfg = cuda_with_backend(f, "cuda", strategies[s]);
  cfg.physics.equation = equation;
  cuda_set_kernel(&cfg, halos[h].halo, halos[h].stages, &shapes[k]);
  char what[96];
  snprintf(what, sizeof what, "%s %s s%d %s block %dx%d zblock %d",
           equation == RTM_EQUATION_TTI ? "tti" : "vti", halos[h].halo, halos[h].stages,
           strategies[s], shapes[k].block[0], shapes[k].block[1], shapes[k].zblock);
  cuda_run_t got;
  if (strcmp(halos[h].halo, "tma") == 0 && !f->hopper) {
    assert_int_equal(cuda_run(f, &cfg, &f->model, &got), RTM_ERR_UNSUPPORTED);
    printf("  %-44s refused (needs sm_90)\n", what);
    return;
  }
  assert_int_equal(cuda_run(f, &cfg, &f->model, &got), RTM_OK);
  cuda_compare(f, &got, ref, tolerance, what);
  cuda_run_free(&got);
}

/* Every halo variant x every memory strategy, the tile shapes rotating through both
 * (RTM3D_TEST_FEW=1: device memory only, for the slow compute-sanitizer runs). */
static void test_tti_every_variant(void **state) {
  cuda_fixture_t *f = *state;
  const int strategy_count = getenv("RTM3D_TEST_FEW") ? 1 : 4;
  const char *only = getenv("RTM3D_TEST_HALO"); /* e.g. "tma": one halo family */
  for (int h = 0; h < HALO_COUNT; ++h)
    for (int s = 0; s < strategy_count && (!only || !only[0] || strcmp(only, halos[h].halo) == 0);
         ++s)
      check_variant(f, RTM_EQUATION_TTI, &f->reference[TTI_REF], h, s, (h + s) % 4);
}

/* vti: every halo variant once, strategies and shapes rotating. */
static void test_vti(void **state) {
  cuda_fixture_t *f = *state;
  for (int h = 0; h < HALO_COUNT; ++h)
    check_variant(f, RTM_EQUATION_VTI, &f->reference[VTI_REF], h, h % 4, (h + 2) % 4);
}

/* eps = delta = 0: Hxy + Hz = lap, vpx = vpn = vpz, vsz = 0, so p = q = the iso field for any
 * tilt. The iso kernel's lap sums d_xx + d_yy + d_zz in that order as Hxy + Hz does only up
 * to rounding: the bound is the 1e-5; p and q share every operation: equal. */
static void test_isotropic_limit(void **state) {
  cuda_fixture_t *f = *state;
  const size_t cells = rtm_grid_interior_cells(&f->grid);
  rtm_model_t iso_model = f->model;
  iso_model.epsilon = calloc(cells, sizeof(float));
  iso_model.delta = calloc(cells, sizeof(float));
  assert_non_null(iso_model.epsilon);
  assert_non_null(iso_model.delta);
  assert_int_equal(rtm_model_update_range(&iso_model, &f->grid), RTM_OK);
  rtm_config_t cfg = cuda_with_backend(f, "cuda", "device");
  cuda_run_t tti, iso;
  assert_int_equal(cuda_run(f, &cfg, &iso_model, &tti), RTM_OK);
  cfg.physics.equation = RTM_EQUATION_ISO;
  snprintf(cfg.receivers.fields, sizeof cfg.receivers.fields, "p"); /* iso has no q */
  assert_int_equal(cuda_run(f, &cfg, &iso_model, &iso), RTM_OK);
  const double pq = rtm_test_relative_l2(tti.q, tti.p, cells);
  const double piso = rtm_test_relative_l2(tti.p, iso.p, cells);
  printf("  eps = delta = 0, tilted: rel L2 q vs p %.2e, p vs iso %.2e\n", pq, piso);
  assert_true(pq == 0.0);
  assert_true(piso <= tolerance);
  /* p = q bit for bit, recorded by the same kernel with the same taps: equal traces */
  assert_non_null(tti.q_traces);
  assert_memory_equal(tti.q_traces, tti.traces,
                      (size_t)tti.receiver_count * (f->steps + 1) * sizeof(float));
  /* the anisotropy mattered */
  assert_true(rtm_test_relative_l2(iso.p, f->reference[TTI_REF].p, cells) > 1e-3);
  cuda_run_free(&tti);
  cuda_run_free(&iso);
  free(iso_model.epsilon);
  free(iso_model.delta);
}

/* Split steps equal ALL bit for bit; a backward step undoes a forward one (no damping) to
 * fp32 rounding; p and q written then read are unchanged. For each halo family, and for tma
 * at two cells a thread (64 x 4, 2 stages: slack 1 on sm_90, test_two_cells_a_thread). */
static void split_backward_fields(cuda_fixture_t *f, int h, const cuda_shape_t *shape) {
  rtm_config_t cfg = cuda_with_backend(f, "cuda", "device");
  cuda_set_kernel(&cfg, halos[h].halo, halos[h].stages, shape);
  cfg.boundary.width_cells = 0; /* a damped step is not reversible */
  rtm_propagator_t all, split;
  cuda_step_all_and_split(f, &cfg, &all, &split); /* p and q */
  cuda_check_backward_undoes_forward(f, &all, RTM_FIELD_Q);
  cuda_check_write_read(f, &all, RTM_FIELD_P, 613, 300.0f);
  cuda_check_write_read(f, &all, RTM_FIELD_Q, 977, 300.0f);
  rtm_propagator_destroy(&all);
  rtm_propagator_destroy(&split);
}

static void test_split_backward_fields(void **state) {
  cuda_fixture_t *f = *state;
  const cuda_shape_t square = {{16, 16}, 7}, two_cells = {{64, 4}, 7};
  split_backward_fields(f, 0, &square); /* sync */
  split_backward_fields(f, 2, &square); /* ldgsts, 3 stages */
  if (f->hopper) {
    split_backward_fields(f, 3, &square);    /* tma, 2 stages */
    split_backward_fields(f, 3, &two_cells); /* the same, two cells a thread */
  }
}

/* memory.model_precision = fp16: the kernel reads binary16 volumes and widens them to float,
 * the reference computes with the same values (rtm_anisotropy_stored: the binary16 axis
 * gives Hz factors exact in float), so cuda fp16 against cpu fp16 is held to the fp32 bound,
 * for tti with the sync, ldgsts and tma halos and for vti. That bound tells the two apart:
 * the fp16 and fp32 references differ by 1e-4 to 3e-4 in p (measured on the cpu over 11
 * seeds), so a kernel that ignored coeff_half, or volumes left in float, would fail; the
 * check below (3 x the bound) keeps that true. The seven (four) coefficient volumes take 2
 * bytes a padded cell. The fp16 - fp32 difference on the GPU is printed: the accuracy cost
 * (tests/solver/test_model_precision.c bounds it). */
static void test_fp16_coefficients(void **state) {
  cuda_fixture_t *f = *state;
  const size_t cells = rtm_grid_interior_cells(&f->grid);
  const cuda_run_t *ref = f->reference;
  const size_t samples = (size_t)ref[TTI_REF].receiver_count * (f->steps + 1);
  assert_true(rtm_test_relative_l2(ref[TTI_HALF_REF].p, ref[TTI_REF].p, cells) > 3.0 * tolerance);
  assert_true(rtm_test_relative_l2(ref[VTI_HALF_REF].p, ref[VTI_REF].p, cells) > 3.0 * tolerance);
  static const struct {
    rtm_equation_t equation;
    int halo, strategy, shape;               /* indices into halos, strategies, shapes */
  } cases[] = {{RTM_EQUATION_TTI, 0, 0, 1},  /* sync, device */
               {RTM_EQUATION_TTI, 2, 1, 0},  /* ldgsts 3 stages, vmm */
               {RTM_EQUATION_TTI, 3, 0, 2},  /* tma 2 stages, device (sm_90), 64 wide */
               {RTM_EQUATION_TTI, 4, 2, 1},  /* tma 3 stages, vmm-compressed, 16 wide */
               {RTM_EQUATION_VTI, 4, 0, 3},  /* tma 3 stages, device, 8 wide */
               {RTM_EQUATION_VTI, 1, 3, 3}}; /* ldgsts 2 stages, managed */
  int printed[2] = {0, 0};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    const int tilted = cases[c].equation == RTM_EQUATION_TTI;
    const cuda_shape_t *shape = &shapes[cases[c].shape];
    if (strcmp(halos[cases[c].halo].halo, "tma") == 0 && !f->hopper)
      continue; /* refused below sm_90: test_tti_every_variant */
    rtm_config_t cfg = cuda_with_backend(f, "cuda", strategies[cases[c].strategy]);
    cfg.physics.equation = cases[c].equation;
    cuda_set_kernel(&cfg, halos[cases[c].halo].halo, halos[cases[c].halo].stages, shape);
    cfg.memory.model_precision = RTM_PRECISION_FP16;

    rtm_propagator_t prop;
    assert_int_equal(rtm_propagator_create(&cfg, &f->grid, &f->model, &prop), RTM_OK);
    int volumes = 0;
    for (int i = 0; i < prop.ledger.count; ++i)
      if (strstr(prop.ledger.records[i].label, " (fp16)")) {
        assert_int_equal(prop.ledger.records[i].bytes, f->grid.padded_cells * 2);
        ++volumes;
      }
    assert_int_equal(volumes, tilted ? 7 : 4);
    rtm_propagator_destroy(&prop);

    cuda_run_t half;
    char what[96];
    assert_int_equal(cuda_run(f, &cfg, &f->model, &half), RTM_OK);
    snprintf(what, sizeof what, "%s fp16 %s s%d %s block %dx%d zblock %d", tilted ? "tti" : "vti",
             halos[cases[c].halo].halo, halos[cases[c].halo].stages, strategies[cases[c].strategy],
             shape->block[0], shape->block[1], shape->zblock);
    cuda_compare(f, &half, &ref[tilted ? TTI_HALF_REF : VTI_HALF_REF], tolerance, what);
    if (!printed[tilted]) {
      cuda_run_t full;
      cfg.memory.model_precision = RTM_PRECISION_FP32;
      assert_int_equal(cuda_run(f, &cfg, &f->model, &full), RTM_OK);
      printf("  %s on the GPU, fp16 against fp32 after %d steps: rel L2 p %.2e q %.2e traces "
             "%.2e\n",
             tilted ? "tti" : "vti", f->steps, rtm_test_relative_l2(half.p, full.p, cells),
             rtm_test_relative_l2(half.q, full.q, cells),
             rtm_test_relative_l2(half.traces, full.traces, samples));
      cuda_run_free(&full);
      printed[tilted] = 1;
    }
    cuda_run_free(&half);
  }
}

/* Two cells a thread (tti_cuda.cu's two_cells: tma, a tile of 32 x 8 or 64 x 4 cells whose
 * blocks fit three to a multiprocessor, with the rings' usual slack or, at 2 stages, with one
 * iteration of slack; side by side in y at width 32, in x at width 64) against the
 * references, tti and vti, fp32 and fp16, partial edge tiles in x and y (45 x 37 cells: a
 * thread whose second row, or second column, is outside), with
 * the path each case took as the backend describes it. Where a multiprocessor has sm_90's
 * shared memory (228 KiB, 1 KiB of it reserved a block: H100, H200) the cases take the path
 * named (tti fp32 2 stages 64 x 4 fits three blocks only with slack 1: 67 760 bytes; the
 * last case fits two blocks whatever the slack, 83 920 bytes at slack 1), so every path is
 * held to the reference; elsewhere the path taken is printed and the results compared. */
static void test_two_cells_a_thread(void **state) {
  cuda_fixture_t *f = *state;
  static const struct {
    rtm_equation_t equation;
    rtm_precision_t precision;
    int stages;
    const char *path; /* as the description says it */
    cuda_shape_t shape;
  } cases[] = {
      {RTM_EQUATION_TTI, RTM_PRECISION_FP32, 2, "(2 cells a thread along y)", {{32, 8}, 13}},
      {RTM_EQUATION_TTI,
       RTM_PRECISION_FP32,
       2,
       "(2 cells a thread along x, slack 1)",
       {{64, 4}, 0}},
      {RTM_EQUATION_TTI, RTM_PRECISION_FP16, 3, "(2 cells a thread along y)", {{32, 8}, 0}},
      {RTM_EQUATION_TTI, RTM_PRECISION_FP16, 2, "(2 cells a thread along x)", {{64, 4}, 7}},
      {RTM_EQUATION_VTI, RTM_PRECISION_FP32, 2, "(2 cells a thread along x)", {{64, 4}, 13}},
      {RTM_EQUATION_VTI, RTM_PRECISION_FP16, 2, "(2 cells a thread along y)", {{32, 8}, 0}},
      {RTM_EQUATION_TTI, RTM_PRECISION_FP32, 3, "(1 cell a thread)", {{64, 4}, 13}}};
  if (!f->hopper) {
    printf("  two cells a thread: tma needs sm_90, not run\n");
    return;
  }
  int device = 0, per_sm = 0, reserved = 0;
  assert_int_equal(cudaGetDevice(&device), cudaSuccess);
  assert_int_equal(
      cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device),
      cudaSuccess);
  assert_int_equal(
      cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, device),
      cudaSuccess);
  const int sm90_shared = per_sm == 228 * 1024 && reserved == 1024;
  if (!sm90_shared)
    printf("  two cells a thread: %d + %d bytes of shared memory a multiprocessor, not sm_90's: "
           "the paths are printed, not checked\n",
           per_sm, reserved);
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    const int tilted = cases[c].equation == RTM_EQUATION_TTI;
    const int half = cases[c].precision == RTM_PRECISION_FP16;
    rtm_config_t cfg = cuda_with_backend(f, "cuda", "device");
    cfg.physics.equation = cases[c].equation;
    cfg.memory.model_precision = cases[c].precision;
    cuda_set_kernel(&cfg, "tma", cases[c].stages, &cases[c].shape);
    rtm_propagator_t prop;
    char text[256];
    assert_int_equal(rtm_propagator_create(&cfg, &f->grid, &f->model, &prop), RTM_OK);
    prop.backend->describe(prop.state, text, sizeof text);
    rtm_propagator_destroy(&prop);
    if (sm90_shared && !strstr(text, cases[c].path))
      fail_msg("%s: expected %s", text, cases[c].path);
    if (!sm90_shared) printf("  %s\n", text);

    cuda_run_t got;
    char what[112];
    assert_int_equal(cuda_run(f, &cfg, &f->model, &got), RTM_OK);
    snprintf(what, sizeof what, "%s %s tma s%d block %dx%d zblock %d %s", tilted ? "tti" : "vti",
             half ? "fp16" : "fp32", cases[c].stages, cases[c].shape.block[0],
             cases[c].shape.block[1], cases[c].shape.zblock, cases[c].path);
    const int ref = tilted ? (half ? TTI_HALF_REF : TTI_REF) : (half ? VTI_HALF_REF : VTI_REF);
    cuda_compare(f, &got, &f->reference[ref], tolerance, what);
    cuda_run_free(&got);
  }
}

/* A tti propagator moved to another shot (p and q reset, new source and patch, both fields
 * recorded: the fixture's receivers.fields) equals a fresh one. */
static void test_set_shot(void **state) {
  const cuda_fixture_t *f = *state;
  const rtm_config_t cfg = cuda_with_backend(f, "cuda", "device");
  cuda_check_set_shot(f, &cfg);
}

static void test_refusals(void **state) {
  cuda_fixture_t *f = *state;
  /* width not a multiple of 4; 1024 threads (one per cell); 24 threads (not whole warps) */
  static const int bad[][2] = {{33, 16}, {64, 16}, {12, 2}};
  cuda_check_tiles_refused(f, bad, sizeof bad / sizeof bad[0]);
  /* four stages (ldgsts, and tma, whose four are iso's alone); a tma box (tile plus halo)
   * over 256 cells a side */
  rtm_config_t cfg = cuda_with_backend(f, "cuda", "device");
  snprintf(cfg.kernel.halo, sizeof cfg.kernel.halo, "ldgsts");
  cfg.kernel.stages = 4;
  cuda_check_refused(f, &cfg);
  if (f->hopper) {
    snprintf(cfg.kernel.halo, sizeof cfg.kernel.halo, "tma");
    cuda_check_refused(f, &cfg);
    cfg = cuda_with_backend(f, "cuda", "device");
    snprintf(cfg.kernel.halo, sizeof cfg.kernel.halo, "tma");
    cfg.kernel.block[0] = 256; /* 512 threads: only the box is wrong */
    cfg.kernel.block[1] = 2;
    cuda_check_refused(f, &cfg);
  }
}

RTM_TEST_MAIN_CUDA("test_cuda_tti", setup, cuda_fixture_teardown,
                   cmocka_unit_test(test_reference_not_trivial),
                   cmocka_unit_test(test_tti_every_variant), cmocka_unit_test(test_vti),
                   cmocka_unit_test(test_isotropic_limit),
                   cmocka_unit_test(test_split_backward_fields), cmocka_unit_test(test_set_shot),
                   cmocka_unit_test(test_refusals), cmocka_unit_test(test_fp16_coefficients),
                   cmocka_unit_test(test_two_cells_a_thread))
