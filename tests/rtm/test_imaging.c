/* The imaging pieces of rtm_imaging.h on the host (the cpu backend's memory): the image
 * accumulation against a plain loop (every cell, and the interior box alone), the sums over
 * the shots as float pairs against exact sums and in several orders, snapshots in fp32 and
 * binary16, the store's byte estimate against its ledger, the adjoint receiver taps against
 * a hand computation, and the final filters on volumes whose answer is known. */
#define _POSIX_C_SOURCE 200809L /* fileno, dup2: rtm_test_capture.h */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "rtm_boundary_shell.h"
#include "imaging_testing.h"
#include "rtm_half.h"
#include "rtm_imaging.h"
#include "rtm_mpi.h"
#include "rtm_physics.h"
#include "rtm_points.h"
#include "rtm_status.h"
#include "rtm_test_capture.h"
#include "rtm_test_main.h"

/* ---- layouts ---- */

static void test_layouts(void **state) {
  (void)state;
  rtm_grid_t grid;
  imaging_test_grid(&grid);
  const rtm_layout_t padded = rtm_layout_padded(&grid), dense = rtm_layout_dense(&grid);
  /* element of cell (ix, iy, iz) = origin + iz stride_z + iy stride_y + ix, both ways */
  assert_int_equal(padded.origin + 6 * padded.stride_z + 10 * padded.stride_y + 12,
                   rtm_grid_index(&grid, 12, 10, 6));
  assert_int_equal(dense.origin + 6 * dense.stride_z + 10 * dense.stride_y + 12,
                   rtm_grid_dense_index(&grid, rtm_grid_index(&grid, 12, 10, 6)));
  assert_int_equal(dense.stride_z, 13 * 11);
}

/* ---- image ---- */

/* Two accumulations, each layout on each side, against the plain loop bit for bit; then a
 * read of one volume alone, and clear. */
static void test_accumulate_matches_loop(void **state) {
  (void)state;
  rtm_test_rng_t rng = rtm_test_seed("test_accumulate_matches_loop");
  rtm_grid_t grid;
  imaging_test_grid(&grid);
  const size_t cells = rtm_grid_interior_cells(&grid), padded = grid.padded_cells;
  float *source_padded = imaging_test_alloc(padded), *receiver_padded = imaging_test_alloc(padded);
  float *source_dense = imaging_test_alloc(cells), *receiver_dense = imaging_test_alloc(cells);
  float *want_image = imaging_test_alloc(cells), *want_illumination = imaging_test_alloc(cells);
  float *got_image = imaging_test_alloc(cells), *got_illumination = imaging_test_alloc(cells);
  /* halos and padding too: a wrong index reads a non-zero value there */
  imaging_test_fill(&rng, source_padded, padded, 0.1, 3.0);
  imaging_test_fill(&rng, receiver_padded, padded, 0.1, 3.0);
  imaging_test_fill(&rng, source_dense, cells, 0.1, 3.0);
  imaging_test_fill(&rng, receiver_dense, cells, 0.1, 3.0);
  const rtm_layout_t p = rtm_layout_padded(&grid), d = rtm_layout_dense(&grid);

  rtm_mem_ledger_t ledger;
  rtm_mem_ledger_init(&ledger);
  rtm_image_t *image = NULL;
  assert_int_equal(rtm_image_create(&grid, -1, "auto", &ledger, &image), RTM_OK);
  assert_string_equal(imaging_test_record(&ledger, "image")->strategy, "host");
  assert_string_equal(imaging_test_record(&ledger, "illumination")->strategy, "host");
  assert_int_equal(rtm_image_accumulate(image, source_padded, p, receiver_dense, d), RTM_OK);
  assert_int_equal(rtm_image_accumulate(image, source_dense, d, receiver_padded, p), RTM_OK);
  imaging_test_accumulate(&grid, want_image, want_illumination, source_padded, p, receiver_dense,
                          d);
  imaging_test_accumulate(&grid, want_image, want_illumination, source_dense, d, receiver_padded,
                          p);
  assert_int_equal(rtm_image_read(image, got_image, got_illumination), RTM_OK);
  assert_memory_equal(got_image, want_image, cells * sizeof(float));
  assert_memory_equal(got_illumination, want_illumination, cells * sizeof(float));
  memset(got_illumination, 0, cells * sizeof(float));
  assert_int_equal(rtm_image_read(image, NULL, got_illumination), RTM_OK);
  assert_memory_equal(got_illumination, want_illumination, cells * sizeof(float));

  assert_int_equal(rtm_image_clear(image), RTM_OK);
  assert_int_equal(rtm_image_read(image, got_image, got_illumination), RTM_OK);
  for (size_t i = 0; i < cells; ++i)
    assert_true(got_image[i] == 0.0f && got_illumination[i] == 0.0f);
  rtm_image_destroy(image);
  rtm_mem_ledger_release(&ledger);
  free(source_padded), free(receiver_padded), free(source_dense), free(receiver_dense);
  free(want_image), free(want_illumination), free(got_image), free(got_illumination);
}

static float *host_copy(const float *host, size_t count) {
  float *copy = imaging_test_alloc(count);
  memcpy(copy, host, count * sizeof *copy);
  return copy;
}

static void host_free(float *copy) {
  free(copy);
}

/* rtm_image_keep_interior: the plain loop's floats inside the box, nothing outside; over
 * other grids, widths and slabs what the layer's zeroing keeps is the unboxed image's. */
static void test_accumulate_interior(void **state) {
  (void)state;
  rtm_test_rng_t rng = rtm_test_seed("test_accumulate_interior");
  imaging_test_interior(&rng, -1, host_copy, host_free);
  imaging_test_interior_geometries(&rng, -1, host_copy, host_free);
}

/* The illumination of a store's volumes in one pass, after the image alone at each step,
 * gives the same floats: 600 x 11 x 7 cells (the host's pieces of 4096 cells, the last one
 * short), 7 sources a volume and 5 floats apart. */
static void test_illumination_deferred(void **state) {
  (void)state;
  rtm_test_rng_t rng = rtm_test_seed("test_illumination_deferred");
  imaging_test_deferred(&rng, -1, 600, 7, 600 * 11 * 7 + 5, host_copy, host_free);
}

/* The cpu backend's image is host memory: another strategy is a config error naming the
 * key. */
static void test_image_refuses_device_strategy(void **state) {
  (void)state;
  imaging_test_image_refused(-1, "managed");
  imaging_test_image_refused(-1, "pinned");
}

/* ---- snapshots ---- */

/* Saves `count` random padded fields into a host store of `precision` and checks each get
 * against `expected` (the interior, rounded as the store rounds: fp16 as rtm_half, zfp as
 * codec.c at 4 bits a value), the ledger against the estimate, and whether get hands back
 * the slot itself (fp32) or the staging volume. */
enum { ZFP_RATE = 4 };
static void check_host_round_trip(rtm_precision_t precision, const char *test) {
  enum { COUNT = 3 };
  rtm_test_rng_t rng = rtm_test_seed(test);
  rtm_grid_t grid;
  imaging_test_grid(&grid);
  const size_t cells = rtm_grid_interior_cells(&grid);
  float *fields[COUNT], *expected[COUNT];
  rtm_mem_ledger_t ledger;
  rtm_mem_ledger_init(&ledger);
  rtm_snapshots_t *store = NULL;
  const int zfp = precision == RTM_PRECISION_ZFP;
  const int n[3] = {grid.n[0], grid.n[1], grid.nz_local};
  assert_int_equal(rtm_snapshots_create(&grid, COUNT, -1, "host", precision, ZFP_RATE,
                                        RTM_SNAPSHOTS_VOLUMES, &ledger, &store),
                   RTM_OK);
  for (int k = 0; k < COUNT; ++k) {
    fields[k] = imaging_test_alloc(grid.padded_cells);
    expected[k] = imaging_test_alloc(cells);
    if (precision == RTM_PRECISION_FP16)
      imaging_test_half_values(&rng, fields[k], grid.padded_cells);
    else
      imaging_test_fill(&rng, fields[k], grid.padded_cells, 1e-30, 1e30);
    rtm_grid_pack(&grid, fields[k], expected[k]);
    if (precision == RTM_PRECISION_FP16) /* scaled by 2^e into binary16's range and back */
      imaging_test_half_scaled(expected[k], cells);
    if (zfp) imaging_test_codec_round_trip(&grid, expected[k], ZFP_RATE);
    const rtm_field_view_t view = {fields[k], -1};
    assert_int_equal(rtm_snapshots_save(store, k, &view), RTM_OK);
  }
  const float *first = NULL;
  for (int k = COUNT - 1; k >= 0; --k) { /* backward, as migration reads them */
    const float *volume = NULL;
    assert_int_equal(rtm_snapshots_get(store, k, &volume), RTM_OK);
    assert_memory_equal(volume, expected[k], cells * sizeof(float));
    if (k == COUNT - 1) first = volume;
    /* fp32: each slot is its own volume; fp16, zfp: one staging volume for every get */
    assert_true((volume == first) == (precision != RTM_PRECISION_FP32 || k == COUNT - 1));
  }
  assert_int_equal(
      imaging_test_ledger_total(&ledger),
      rtm_snapshots_bytes(&grid, COUNT, -1, "host", precision, ZFP_RATE, RTM_SNAPSHOTS_VOLUMES));
  /* blocks are read on a device alone: fields in host memory keep the staging volume */
  assert_int_equal(
      rtm_snapshots_bytes(&grid, COUNT, -1, "host", precision, ZFP_RATE, RTM_SNAPSHOTS_BLOCKS),
      rtm_snapshots_bytes(&grid, COUNT, -1, "host", precision, ZFP_RATE, RTM_SNAPSHOTS_VOLUMES));
  assert_int_equal(imaging_test_record(&ledger, "snapshots")->bytes,
                   zfp ? COUNT * rtm_codec_bytes(n, ZFP_RATE)
                       : COUNT * cells * (precision == RTM_PRECISION_FP16 ? 2 : 4));
  assert_int_equal(ledger.count, precision == RTM_PRECISION_FP16 ? 3 : zfp ? 2 : 1);
  rtm_snapshots_destroy(store);
  rtm_mem_ledger_release(&ledger);
  for (int k = 0; k < COUNT; ++k)
    free(fields[k]), free(expected[k]);
}

static void test_snapshots_fp32_round_trip(void **state) {
  (void)state;
  check_host_round_trip(RTM_PRECISION_FP32, "test_snapshots_fp32_round_trip");
}

/* zfp slots: codec.c's round trip bit for bit, in an eighth of fp32's bytes at 4 bits a
 * value; and a field that is not finite is refused, naming where. */
static void test_snapshots_zfp_round_trip(void **state) {
  (void)state;
  check_host_round_trip(RTM_PRECISION_ZFP, "test_snapshots_zfp_round_trip");
  rtm_grid_t grid;
  imaging_test_grid(&grid);
  rtm_snapshots_t *store = NULL;
  assert_int_equal(rtm_snapshots_create(&grid, 1, -1, "host", RTM_PRECISION_ZFP, ZFP_RATE,
                                        RTM_SNAPSHOTS_VOLUMES, NULL, &store),
                   RTM_OK);
  float *field = imaging_test_alloc(grid.padded_cells);
  field[rtm_grid_index(&grid, 6, 5, 3)] = NAN;
  const rtm_field_view_t view = {field, -1};
  capture_t capture;
  assert_int_equal(captured(&capture, rtm_snapshots_save(store, 0, &view)), RTM_ERR_NUMERIC);
  assert_contains(capture.text, "NaN or an infinity");
  assert_contains(capture.text, "(ix 4, iy 4, iz 5)"); /* the block's first cell, global z */
  rtm_snapshots_destroy(store);
  assert_int_equal(
      captured(&capture, rtm_snapshots_create(&grid, 1, -1, "host", RTM_PRECISION_ZFP, 33,
                                              RTM_SNAPSHOTS_VOLUMES, NULL, &store)),
      RTM_ERR_CONFIG);
  assert_contains(capture.text, "rtm.snapshot_rate = 33");
  free(field);
}

/* Equal to rtm_half's conversion bit for bit; and the values really are rounded (a store
 * that kept fp32 would fail). */
static void test_snapshots_fp16_round_trip(void **state) {
  (void)state;
  check_host_round_trip(RTM_PRECISION_FP16, "test_snapshots_fp16_round_trip");
  rtm_test_rng_t rng = rtm_test_seed("test_snapshots_fp16_round_trip (rounding)");
  float values[60];
  int rounded = 0;
  imaging_test_half_values(&rng, values, 60);
  for (int i = 0; i < 60; ++i)
    rounded += rtm_half_round(values[i]) != values[i];
  assert_true(rounded > 30);
}

/* A wavefield of any amplitude keeps binary16's precision: volumes of values up to 1e-30,
 * 1e-5, 1, 1e8 and 1e30 come back within 2^-11 of each value (those above 2^-20 of the
 * largest) and finite; unscaled, the smallest flushed to zero and the largest overflowed to
 * infinity (the probe's migrations at source.amplitude 1e-5 and 1e8). */
static void test_snapshots_fp16_any_amplitude(void **state) {
  (void)state;
  static const double amplitudes[] = {1e-30, 1e-5, 1.0, 1e8, 1e30};
  rtm_test_rng_t rng = rtm_test_seed(__func__);
  rtm_grid_t grid;
  imaging_test_grid(&grid);
  const size_t cells = rtm_grid_interior_cells(&grid);
  float *field = imaging_test_alloc(grid.padded_cells), *interior = imaging_test_alloc(cells);
  for (size_t a = 0; a < sizeof amplitudes / sizeof *amplitudes; ++a) {
    rtm_snapshots_t *store = NULL;
    assert_int_equal(rtm_snapshots_create(&grid, 1, -1, "host", RTM_PRECISION_FP16, 0,
                                          RTM_SNAPSHOTS_VOLUMES, NULL, &store),
                     RTM_OK);
    imaging_test_fill(&rng, field, grid.padded_cells, -amplitudes[a], amplitudes[a]);
    rtm_grid_pack(&grid, field, interior);
    const rtm_field_view_t view = {field, -1};
    assert_int_equal(rtm_snapshots_save(store, 0, &view), RTM_OK);
    const float *volume = NULL;
    assert_int_equal(rtm_snapshots_get(store, 0, &volume), RTM_OK);
    double largest = 0.0, worst = 0.0;
    for (size_t i = 0; i < cells; ++i)
      largest = fmax(largest, fabs(interior[i]));
    for (size_t i = 0; i < cells; ++i) {
      assert_true(isfinite(volume[i]));
      if (fabs(interior[i]) > largest * 0x1p-20)
        worst = fmax(worst, fabs(volume[i] - interior[i]) / fabs(interior[i]));
    }
    printf("amplitude %g: worst relative error %.3g\n", amplitudes[a], worst);
    assert_true(worst <= 0x1p-11);
    rtm_snapshots_destroy(store);
  }
  free(field);
  free(interior);
}

/* A slot outside the store, a view of another device: internal errors. */
static void test_snapshots_refuse_bad_slots(void **state) {
  (void)state;
  rtm_grid_t grid;
  imaging_test_grid(&grid);
  float *field = imaging_test_alloc(grid.padded_cells);
  rtm_snapshots_t *store = NULL;
  const float *volume = NULL;
  assert_int_equal(rtm_snapshots_create(&grid, 2, -1, "", RTM_PRECISION_FP32, 0,
                                        RTM_SNAPSHOTS_VOLUMES, NULL, &store),
                   RTM_OK);
  const rtm_field_view_t view = {field, -1}, device_view = {field, 0};
  capture_t capture;
  assert_int_equal(captured(&capture, rtm_snapshots_save(store, 2, &view)), RTM_ERR_INTERNAL);
  assert_int_equal(captured(&capture, rtm_snapshots_get(store, -1, &volume)), RTM_ERR_INTERNAL);
  assert_null(volume);
  assert_int_equal(captured(&capture, rtm_snapshots_save(store, 0, &device_view)),
                   RTM_ERR_INTERNAL);
  rtm_snapshots_destroy(store);
  free(field);
}

/* What does not fit names the three settings that make it fit; pinned memory has no place
 * beside a cpu backend. */
static void test_snapshots_too_large(void **state) {
  (void)state;
  rtm_grid_t grid;
  const int n[3] = {4000, 4000, 4000};
  const double spacing_m[3] = {5.0, 5.0, 5.0};
  assert_int_equal(rtm_grid_init(&grid, n, spacing_m, NULL), RTM_OK);
  rtm_snapshots_t *store = NULL;
  capture_t capture;
  /* 2^31 - 1 slots of 128 GB: more bytes than a size_t holds */
  assert_int_equal(
      captured(&capture, rtm_snapshots_create(&grid, 2147483647, -1, "host", RTM_PRECISION_FP16, 0,
                                              RTM_SNAPSHOTS_VOLUMES, NULL, &store)),
      RTM_ERR_NOMEM);
  assert_contains(capture.text, "rtm.imaging_step");
  assert_contains(capture.text, "rtm.snapshot_precision");
  assert_contains(capture.text, "memory.imaging");
  assert_null(store);
  assert_true(rtm_snapshots_bytes(&grid, 2147483647, -1, "host", RTM_PRECISION_FP16, 0,
                                  RTM_SNAPSHOTS_VOLUMES) == SIZE_MAX);
  imaging_test_grid(&grid);
  assert_int_equal(
      captured(&capture, rtm_snapshots_create(&grid, 2, -1, "pinned", RTM_PRECISION_FP32, 0,
                                              RTM_SNAPSHOTS_VOLUMES, NULL, &store)),
      RTM_ERR_CONFIG);
  assert_contains(capture.text, "memory.imaging");
}

/* ---- adjoint receiver taps ---- */

typedef struct {
  rtm_grid_t grid;
  rtm_model_t model;
  rtm_boundary_t boundary;
  double dt_s;
  rtm_points_t receivers;
} adjoint_case_t;

/* 40 x 36 x 30 cells of 12.5 x 10 x 8 m, this rank owning planes [3, 27), an absorbing layer
 * of 8 cells, vp drawn per cell; receivers: one in the interior, one in the layer (x and z),
 * and one whose lower taps lie on the rank above (plane 2). */
static void adjoint_case(adjoint_case_t *c, rtm_test_rng_t *rng) {
  const int n[3] = {40, 36, 30};
  const double spacing_m[3] = {12.5, 10.0, 8.0};
  memset(c, 0, sizeof *c);
  assert_int_equal(rtm_grid_init(&c->grid, n, spacing_m, NULL), RTM_OK);
  assert_int_equal(rtm_grid_set_z_range(&c->grid, 3, 24), RTM_OK);
  const size_t cells = rtm_grid_interior_cells(&c->grid);
  c->model.vp = imaging_test_alloc(cells);
  for (size_t i = 0; i < cells; ++i)
    c->model.vp[i] = (float)rtm_test_uniform(rng, 1500.0, 4500.0);
  c->model.vp_min = 1500.0;
  c->model.vp_max = 4500.0;
  c->dt_s = 0.4 * rtm_stable_dt(4500.0, spacing_m);
  assert_int_equal(rtm_boundary_init(&c->boundary, &c->grid, 8, 1e-3, 4500.0, c->dt_s), RTM_OK);
  const double positions_m[3][3] = {
      {rtm_test_uniform(rng, 200.0, 300.0), rtm_test_uniform(rng, 150.0, 200.0),
       rtm_test_uniform(rng, 100.0, 120.0)},
      {rtm_test_uniform(rng, 12.5, 50.0), rtm_test_uniform(rng, 150.0, 200.0),
       rtm_test_uniform(rng, 190.0, 200.0)},
      {rtm_test_uniform(rng, 200.0, 300.0), rtm_test_uniform(rng, 150.0, 200.0),
       rtm_test_uniform(rng, 16.5, 23.5)}};
  assert_int_equal(rtm_points_init(&c->receivers, &c->grid, &positions_m[0][0], 3, "receivers"),
                   RTM_OK);
}

static void adjoint_case_release(adjoint_case_t *c) {
  rtm_points_release(&c->receivers);
  rtm_boundary_release(&c->boundary);
  free(c->model.vp);
}

/* The weight of tap t of receiver r worked out from its position: the trilinear weight times
 * dt^2 vp^2 / (1 + eta dt) at the tap's cell; sets *damping to its eta dt. */
static double hand_weight(const adjoint_case_t *c, const rtm_boundary_t *boundary, int r, int t,
                          double *damping) {
  const rtm_grid_t *g = &c->grid;
  long cell[3];
  double weight = 1.0;
  for (int a = 0; a < 3; ++a) {
    const double u = c->receivers.position_m[3 * r + a] / g->spacing_m[a];
    const long below = (long)floor(u);
    const int upper = (t >> a) & 1;
    weight *= upper ? u - (double)below : 1.0 - (u - (double)below);
    cell[a] = below + upper;
  }
  const long iz = cell[2] - g->z_offset;
  if (iz < 0 || iz >= g->nz_local) return 0.0; /* another rank's tap */
  /* the taps rtm_points_init made are the ones worked out here; the adjoint scales the
   * stored float weight, so the hand computation does too */
  assert_int_equal(c->receivers.tap_index[r * RTM_POINT_TAPS + t],
                   rtm_grid_index(g, cell[0], cell[1], iz));
  const double stored = c->receivers.tap_weight[r * RTM_POINT_TAPS + t];
  assert_true(fabs(stored - weight) <= 0x1p-24 * weight);
  weight = stored;
  *damping = 0.0;
  for (int a = 0; boundary && a < 3; ++a)
    *damping += boundary->eta_dt[a][cell[a]];
  const double vp = c->model.vp[((size_t)iz * g->n[1] + (size_t)cell[1]) * g->n[0] + cell[0]];
  return weight * c->dt_s * c->dt_s * vp * vp / (1.0 + *damping);
}

/* Each adjoint weight is the hand computation rounded once to float: within half a float ulp
 * (2^-24 relative) of it, and a hair more for the double product formed in another order. */
static void check_adjoint_weights(const adjoint_case_t *c, const rtm_boundary_t *boundary,
                                  const rtm_points_t *adjoint, double *max_damping) {
  *max_damping = 0.0;
  for (int r = 0; r < c->receivers.count; ++r)
    for (int t = 0; t < RTM_POINT_TAPS; ++t) {
      double damping = 0.0;
      const double want = hand_weight(c, boundary, r, t, &damping);
      const float got = adjoint->tap_weight[r * RTM_POINT_TAPS + t];
      if (fabs(got - want) > 0x1.0001p-24 * fabs(want) || (want == 0.0) != (got == 0.0)) {
        print_error("receiver %d tap %d: adjoint weight %.9g, by hand %.9g\n", r, t, got, want);
        fail();
      }
      if (damping > *max_damping) *max_damping = damping;
    }
}

static void test_adjoint_weights(void **state) {
  (void)state;
  rtm_test_rng_t rng = rtm_test_seed("test_adjoint_weights");
  adjoint_case_t c;
  adjoint_case(&c, &rng);
  rtm_points_t adjoint;
  assert_int_equal(
      rtm_adjoint_receivers(&c.receivers, &c.grid, &c.model, &c.boundary, c.dt_s, &adjoint),
      RTM_OK);
  assert_int_equal(adjoint.count, 3);
  assert_memory_equal(adjoint.tap_index, c.receivers.tap_index,
                      3 * RTM_POINT_TAPS * sizeof(size_t));
  assert_memory_equal(adjoint.position_m, c.receivers.position_m, 9 * sizeof(double));
  double max_damping = 0.0;
  check_adjoint_weights(&c, &c.boundary, &adjoint, &max_damping);
  /* the second receiver is deep enough in the layer for the damping to matter */
  printf("largest eta dt at a tap: %g\n", max_damping);
  assert_true(max_damping > 1e-3);
  /* the third straddles the rank boundary: its lower taps stay 0 */
  assert_true(adjoint.tap_weight[2 * RTM_POINT_TAPS + 0] == 0.0f);
  rtm_points_release(&adjoint);

  /* without a boundary: dt^2 vp^2 alone */
  assert_int_equal(rtm_adjoint_receivers(&c.receivers, &c.grid, &c.model, NULL, c.dt_s, &adjoint),
                   RTM_OK);
  check_adjoint_weights(&c, NULL, &adjoint, &max_damping);
  assert_true(max_damping == 0.0);
  rtm_points_release(&adjoint);
  adjoint_case_release(&c);
}

/* ---- filters ---- */

/* u = a x^2 + b y^2 + c z^2 + d xy + e yz + f x + g on spacings 0.5, 2, 1 (powers of two:
 * every u and 1 / h^2 exact in float), integer coefficients: the 8th-order stencil is exact
 * for polynomials of degree <= 9, so at least R = 4 cells from every face -lap u is
 * -(2a + 2b + 2c) to the last bit (the double sums err by 1e-12, a float ulp there is 1e-6). */
static void test_laplacian_of_quadratic(void **state) {
  (void)state;
  rtm_test_rng_t rng = rtm_test_seed("test_laplacian_of_quadratic");
  const int n[3] = {15, 13, 12};
  const double spacing_m[3] = {0.5, 2.0, 1.0};
  rtm_grid_t grid;
  assert_int_equal(rtm_grid_init(&grid, n, spacing_m, NULL), RTM_OK);
  assert_int_equal(rtm_grid_set_z_range(&grid, 2, 10), RTM_OK);
  int k[7];
  for (int i = 0; i < 7; ++i)
    k[i] = (int)(rtm_test_next(&rng) % 9) - 4 + (i < 3 ? 10 : 0); /* a, b, c never zero */
  const size_t cells = rtm_grid_interior_cells(&grid);
  float *image = imaging_test_alloc(cells),
        *scratch = imaging_test_alloc(rtm_image_laplacian_scratch_cells(&grid));
  for (int iz = 0; iz < grid.nz_local; ++iz)
    for (int iy = 0; iy < n[1]; ++iy)
      for (int ix = 0; ix < n[0]; ++ix) {
        const double x = ix * 0.5, y = iy * 2.0, z = (iz + grid.z_offset) * 1.0;
        image[((size_t)iz * n[1] + iy) * n[0] + ix] =
            (float)(k[0] * x * x + k[1] * y * y + k[2] * z * z + k[3] * x * y + k[4] * y * z +
                    k[5] * x + k[6]);
      }
  assert_int_equal(rtm_image_laplacian(&grid, 0, image, scratch), RTM_OK);
  const float want = (float)-(2.0 * (k[0] + k[1] + k[2]));
  int checked = 0;
  for (int iz = RTM_RADIUS; iz < grid.nz_local - RTM_RADIUS; ++iz)
    for (int iy = RTM_RADIUS; iy < n[1] - RTM_RADIUS; ++iy)
      for (int ix = RTM_RADIUS; ix < n[0] - RTM_RADIUS; ++ix, ++checked) {
        const float got = image[((size_t)iz * n[1] + iy) * n[0] + ix];
        if (got != want) {
          print_error("-lap at (%d, %d, %d) = %.9g, want %.9g\n", ix, iy, iz, got, want);
          fail();
        }
      }
  assert_true(checked == 7 * 5 * 2);
  free(image), free(scratch);
}

/* The box 2 cells in from every face of a 12 x 16 x 16 grid (a layer of 2), an impulse on its
 * x face and 1e30 in every cell outside it: -lap reads nothing outside the box (no 1e30
 * comes through), writes zero there, and mirrors the impulse across the face, so that along
 * x the cell m in from the face gets -(c_m + c_(m+1)) / h_x^2 (the impulse and its mirror
 * image at lo - 1), while along y and z, far from their faces, -c_k / h^2 as in the open. */
static void test_laplacian_mirrored_in_box(void **state) {
  (void)state;
  rtm_test_rng_t rng = rtm_test_seed("test_laplacian_mirrored_in_box");
  const int n[3] = {12, 16, 16}, width = 2;
  const double spacing_m[3] = {0.5, 2.0, 1.0};
  const double inv_h2[3] = {4.0, 0.25, 1.0};
  rtm_grid_t grid;
  assert_int_equal(rtm_grid_init(&grid, n, spacing_m, NULL), RTM_OK);
  const size_t cells = rtm_grid_interior_cells(&grid);
  float *image = imaging_test_alloc(cells),
        *scratch = imaging_test_alloc(rtm_image_laplacian_scratch_cells(&grid));
  float *want = imaging_test_alloc(cells);
#define AT(ix, iy, iz) (((size_t)(iz)*n[1] + (size_t)(iy)) * n[0] + (size_t)(ix))
#define INSIDE(ix, iy, iz)                                                                         \
  ((ix) >= width && (ix) < n[0] - width && (iy) >= width && (iy) < n[1] - width &&                 \
   (iz) >= width && (iz) < n[2] - width)
  for (int iz = 0; iz < n[2]; ++iz)
    for (int iy = 0; iy < n[1]; ++iy)
      for (int ix = 0; ix < n[0]; ++ix)
        if (!INSIDE(ix, iy, iz)) image[AT(ix, iy, iz)] = 1e30f;
  const int centre[3] = {width, 7 + (int)(rtm_test_next(&rng) % 2), 8};
  const double amplitude = rtm_test_uniform(&rng, 0.5, 2.0);
  image[AT(centre[0], centre[1], centre[2])] = (float)amplitude;
  for (int m = 1; m <= RTM_RADIUS; ++m) {
    const double next = m < RTM_RADIUS ? rtm_fd2_coeff[m + 1] : 0.0;
    want[AT(width + m, centre[1], centre[2])] =
        (float)-((rtm_fd2_coeff[m] + next) * amplitude * inv_h2[0]);
  }
  for (int a = 1; a < 3; ++a)
    for (int k = 1; k <= RTM_RADIUS; ++k)
      for (int side = -1; side <= 1; side += 2) {
        int cell[3] = {centre[0], centre[1], centre[2]};
        cell[a] += side * k;
        want[AT(cell[0], cell[1], cell[2])] = (float)-(rtm_fd2_coeff[k] * amplitude * inv_h2[a]);
      }
  want[AT(centre[0], centre[1], centre[2])] =
      (float)-(((rtm_fd2_coeff[0] + rtm_fd2_coeff[1]) * inv_h2[0] +
                rtm_fd2_coeff[0] * (inv_h2[1] + inv_h2[2])) *
               amplitude);
  assert_int_equal(rtm_image_laplacian(&grid, width, image, scratch), RTM_OK);
  for (size_t i = 0; i < cells; ++i)
    if (fabsf(image[i] - want[i]) > 1e-6f * fabsf(want[i]) ||
        (want[i] == 0.0f) != (image[i] == 0.0f)) {
      print_error("cell %zu: -lap = %.9g, want %.9g\n", i, image[i], want[i]);
      fail();
    }
#undef INSIDE
#undef AT
  free(image), free(scratch), free(want);
}

/* A random image for the filter's tests: grid n (spacings 10, 12.5, 8 m), this rank's planes
 * [z_offset, z_offset + nz_local) when nz_local > 0, random values in *input and the same in
 * *copy, and a zeroed scratch of the filter's size. */
typedef struct {
  rtm_grid_t grid;
  size_t cells, scratch_cells;
  float *input, *copy, *scratch;
} laplacian_case_t;

static void laplacian_case(laplacian_case_t *c, const char *test, const int n[3], int z_offset,
                           int nz_local) {
  rtm_test_rng_t rng = rtm_test_seed(test);
  const double spacing_m[3] = {10.0, 12.5, 8.0};
  assert_int_equal(rtm_grid_init(&c->grid, n, spacing_m, NULL), RTM_OK);
  if (nz_local > 0) assert_int_equal(rtm_grid_set_z_range(&c->grid, z_offset, nz_local), RTM_OK);
  c->cells = rtm_grid_interior_cells(&c->grid);
  c->scratch_cells = rtm_image_laplacian_scratch_cells(&c->grid);
  c->input = imaging_test_alloc(c->cells);
  c->copy = imaging_test_alloc(c->cells);
  c->scratch = imaging_test_alloc(c->scratch_cells);
  imaging_test_fill(&rng, c->input, c->cells, 0.1, 3.0);
  memcpy(c->copy, c->input, c->cells * sizeof *c->copy);
}

static void laplacian_case_release(laplacian_case_t *c) {
  free(c->input), free(c->copy), free(c->scratch);
}

/* On random values every cell whose taps all lie inside the box (the filter's vectorised
 * loop) gets the sums written plainly (each axis c0 u + sum_k c_k (u[+k] + u[-k]) in double,
 * the axes added to 0 in x, y, z order, then negated and rounded once) bit for bit: a wrong
 * tap, coefficient or spacing shows. The order of the double sums seldom reaches the float
 * (the axes added z first passed here); over a whole image some cell's does, which an A/B of
 * two builds (run/tools/compare_builds.sh) shows. Rows of 45 cells (a vector's tail). */
static void test_laplacian_plain_sums(void **state) {
  (void)state;
  const int n[3] = {45, 23, 19}, width = 1;
  laplacian_case_t c;
  laplacian_case(&c, "test_laplacian_plain_sums", n, 0, 0);
  const float *input = c.input, *image = c.copy;
  assert_int_equal(rtm_image_laplacian(&c.grid, width, c.copy, c.scratch), RTM_OK);
  const long stride[3] = {1, n[0], (long)n[0] * n[1]};
  int checked = 0;
  for (long iz = width + RTM_RADIUS; iz < n[2] - width - RTM_RADIUS; ++iz)
    for (long iy = width + RTM_RADIUS; iy < n[1] - width - RTM_RADIUS; ++iy)
      for (long ix = width + RTM_RADIUS; ix < n[0] - width - RTM_RADIUS; ++ix, ++checked) {
        const long i = iz * stride[2] + iy * stride[1] + ix;
        double lap = 0.0;
        for (int a = 0; a < 3; ++a) {
          double d2 = rtm_fd2_coeff[0] * (double)input[i];
          for (long k = 1; k <= RTM_RADIUS; ++k)
            d2 += rtm_fd2_coeff[k] *
                  ((double)input[i + k * stride[a]] + (double)input[i - k * stride[a]]);
          lap += d2 * (1.0 / (c.grid.spacing_m[a] * c.grid.spacing_m[a]));
        }
        const float want = (float)-lap;
        if (memcmp(&image[i], &want, sizeof want) != 0) {
          print_error("-lap at (%ld, %ld, %ld) = %.9g, the plain sums %.9g\n", ix, iy, iz, image[i],
                      want);
          fail();
        }
      }
  assert_int_equal(checked, 35 * 13 * 9);
  laplacian_case_release(&c);
}

/* The filter in parts (rtm_image_laplacian_begin, then _planes over pieces of 3 planes, the
 * last first, one of them empty) gives the whole call's floats on random values, with a box
 * of width 2 on a slab of planes [3, 14) of 21. */
static void test_laplacian_in_parts(void **state) {
  (void)state;
  const int n[3] = {14, 12, 21}, width = 2;
  laplacian_case_t c;
  laplacian_case(&c, "test_laplacian_in_parts", n, 3, 11);
  float *whole = c.input, *parts = c.copy;
  assert_int_equal(rtm_image_laplacian(&c.grid, width, whole, c.scratch), RTM_OK);
  memset(c.scratch, 0, c.scratch_cells * sizeof *c.scratch);
  assert_int_equal(rtm_image_laplacian_begin(&c.grid, parts, c.scratch), RTM_OK);
  for (int z_end = c.grid.nz_local; z_end > 0; z_end -= 3)
    rtm_image_laplacian_planes(&c.grid, width, parts, c.scratch, z_end - 3, z_end);
  rtm_image_laplacian_planes(&c.grid, width, parts, c.scratch, 5, 5);
  assert_memory_equal(parts, whole, c.cells * sizeof *parts);
  laplacian_case_release(&c);
}

/* image / (illumination + eps max illumination) on values whose quotients are exact, scaled
 * by fresh powers of two; with eps = 0 a cell without illumination keeps its value. */
static void test_compensate(void **state) {
  (void)state;
  rtm_test_rng_t rng = rtm_test_seed("test_compensate");
  const float image_scale = ldexpf(1.0f, (int)(rtm_test_next(&rng) % 21) - 10);
  const float light_scale = ldexpf(1.0f, (int)(rtm_test_next(&rng) % 21) - 10);
  float image[5] = {12, 3, -6, 8, 20}, illumination[5] = {4, 0, 1, 2, 8};
  const float want[5] = {2, 1.5f, -2, 2, 2}; /* denominators 6, 2, 3, 4, 10: max 8, eps 1/4 */
  for (int i = 0; i < 5; ++i)
    image[i] *= image_scale, illumination[i] *= light_scale;
  assert_int_equal(rtm_image_compensate(NULL, image, illumination, 5, 0.25), RTM_OK);
  for (int i = 0; i < 5; ++i)
    assert_true(image[i] == want[i] * image_scale / light_scale);

  float bare[3] = {5, 7, -9}, light[3] = {0, 2, 0.5f};
  assert_int_equal(rtm_image_compensate(NULL, bare, light, 3, 0.0), RTM_OK);
  assert_true(bare[0] == 5 && bare[1] == 3.5f && bare[2] == -18);
}

/* ---- sums over the shots ---- */

/* A shot's value: sign, a mantissa of 24 bits and an exponent in [-span/2, span/2). */
static float random_term(rtm_test_rng_t *rng, int span) {
  const float mantissa = (float)(rtm_test_next(rng) >> 40) * 0x1.0p-24f;
  const int exponent = (int)(rtm_test_next(rng) % (uint64_t)span) - span / 2;
  return (rtm_test_next(rng) & 1 ? -1.0f : 1.0f) * ldexpf(0.5f + 0.5f * mantissa, exponent);
}

/* Terms within 2^20 of each other, 16 of them: their exact sum needs at most 24 + 20 + 4
 * bits, which a double holds, and the pair's value hi + lo is that sum exactly (in double),
 * its rounding the float nearest the exact sum. */
static void test_sums_exact(void **state) {
  (void)state;
  rtm_test_rng_t rng = rtm_test_seed("test_sums_exact");
  enum { CELLS = 4096, SHOTS = 16 };
  float *hi = calloc(CELLS, sizeof *hi), *lo = calloc(CELLS, sizeof *lo);
  float *shot = malloc(CELLS * sizeof *shot), *rounded = malloc(CELLS * sizeof *rounded);
  double *exact = calloc(CELLS, sizeof *exact);
  assert_non_null(hi && lo && shot && rounded && exact);
  for (int k = 0; k < SHOTS; ++k) {
    for (size_t i = 0; i < CELLS; ++i) {
      shot[i] = random_term(&rng, 20);
      exact[i] += (double)shot[i]; /* exact: the bits fit */
    }
    rtm_sums_add(hi, lo, shot, CELLS);
  }
  rtm_sums_round(rounded, hi, lo, CELLS);
  for (size_t i = 0; i < CELLS; ++i) {
    assert_true((double)hi[i] + (double)lo[i] == exact[i]);
    assert_true(rounded[i] == (float)exact[i]);
    assert_true(hi[i] == (float)exact[i]); /* the pair is normalised: hi is the rounding */
  }
  free(hi), free(lo), free(shot), free(rounded), free(exact);
}

/* The same terms (40 binary orders of magnitude apart, either sign: sums that cancel) in
 * three orders: one after another, backwards, and split between two groups whose pairs
 * meet at the end (rtm_sums_merge). The pairs' values lie within 1e-12 relative L2 of the
 * exact sums, and the rounded sums are the floats nearest the exact sums, alike in the
 * three orders, in all but a few cells (by an ulp); the same terms summed in float
 * disagree in most cells (so the check can tell). */
static void test_sums_order(void **state) {
  (void)state;
  rtm_test_rng_t rng = rtm_test_seed("test_sums_order");
  enum { CELLS = 20000, SHOTS = 12 };
  float *terms = malloc((size_t)CELLS * SHOTS * sizeof *terms);
  float *pairs = calloc(8 * (size_t)CELLS, sizeof *pairs); /* 3 orders x (hi, lo), 2 rounded */
  float *plain = calloc(2 * (size_t)CELLS, sizeof *plain);
  long double *exact = calloc(CELLS, sizeof *exact);
  assert_non_null(terms && pairs && plain && exact);
  for (size_t i = 0; i < (size_t)CELLS * SHOTS; ++i)
    terms[i] = random_term(&rng, 40);
  float *forward[2] = {pairs, pairs + CELLS}, *backward[2] = {pairs + 2 * CELLS, pairs + 3 * CELLS};
  float *group0[2] = {pairs + 4 * CELLS, pairs + 5 * CELLS};
  float *group1[2] = {pairs + 6 * CELLS, pairs + 7 * CELLS};
  for (int k = 0; k < SHOTS; ++k) {
    const float *shot = terms + (size_t)k * CELLS, *back = terms + (size_t)(SHOTS - 1 - k) * CELLS;
    rtm_sums_add(forward[0], forward[1], shot, CELLS);
    rtm_sums_add(backward[0], backward[1], back, CELLS);
    if (k % 2 == 0)
      rtm_sums_add(group0[0], group0[1], shot, CELLS);
    else
      rtm_sums_add(group1[0], group1[1], shot, CELLS);
    for (size_t i = 0; i < CELLS; ++i) {
      plain[i] += shot[i];
      plain[CELLS + i] += back[i];
      exact[i] += (long double)shot[i]; /* 64-bit mantissa: exact to about 2^-64 of the terms */
    }
  }
  rtm_sums_merge(group0[0], group0[1], group1[0], group1[1], CELLS);
  long double error = 0.0L, norm = 0.0L;
  for (size_t i = 0; i < CELLS; ++i) {
    const long double e = (long double)forward[0][i] + (long double)forward[1][i] - exact[i];
    error += e * e;
    norm += exact[i] * exact[i];
  }
  rtm_sums_round(forward[0], forward[0], forward[1], CELLS);
  rtm_sums_round(backward[0], backward[0], backward[1], CELLS);
  rtm_sums_round(group0[0], group0[0], group0[1], CELLS);
  int differ = 0, plain_differ = 0;
  for (size_t i = 0; i < CELLS; ++i) {
    differ += forward[0][i] != backward[0][i] || forward[0][i] != group0[0][i] ||
              forward[0][i] != (float)exact[i];
    plain_differ += plain[i] != plain[CELLS + i];
  }
  printf("# float pairs: %d of %d cells differ between the orders or from the exact sum's "
         "float, %.2Lg relative L2 from the exact sums; summed in float %d differ\n",
         differ, CELLS, sqrtl(error / norm), plain_differ);
  assert_true(differ <= CELLS / 1000);
  assert_true(plain_differ > CELLS / 10);
  assert_true(sqrtl(error / norm) < 1e-12L);
  free(terms), free(pairs), free(plain), free(exact);
}

/* A first shot's pairs made by rtm_sums_start are the pairs rtm_sums_add makes from zeros,
 * bit for bit, after it and after the shots added to them; started with no shot, pairs that
 * held values are zeros. */
static void test_sums_start(void **state) {
  (void)state;
  rtm_test_rng_t rng = rtm_test_seed("test_sums_start");
  enum { CELLS = 5000, SHOTS = 4 };
  float *terms = malloc((size_t)CELLS * SHOTS * sizeof *terms);
  float *added = calloc(2 * (size_t)CELLS, sizeof *added);
  float *started = malloc(2 * (size_t)CELLS * sizeof *started);
  assert_non_null(terms && added && started);
  for (size_t i = 0; i < (size_t)CELLS * SHOTS; ++i)
    terms[i] = random_term(&rng, 40);
  terms[0] = -0.0f; /* TwoSum(0, -0) is +0 */
  for (size_t i = 0; i < 2 * (size_t)CELLS; ++i)
    started[i] = 1.0f; /* what a buffer held before */
  for (int k = 0; k < SHOTS; ++k) {
    const float *shot = terms + (size_t)k * CELLS;
    rtm_sums_add(added, added + CELLS, shot, CELLS);
    if (k == 0)
      rtm_sums_start(started, started + CELLS, shot, CELLS);
    else
      rtm_sums_add(started, started + CELLS, shot, CELLS);
    assert_memory_equal(added, started, 2 * (size_t)CELLS * sizeof *added);
  }
  rtm_sums_start(started, started + CELLS, NULL, CELLS);
  for (size_t i = 0; i < 2 * (size_t)CELLS; ++i)
    assert_true(started[i] == 0.0f && !signbit(started[i]));
  free(terms), free(added), free(started);
}

/* The last shot taken into a rounded sum with the pairs left as they are
 * (rtm_sums_add_round) gives rtm_sums_add's then rtm_sums_round's floats bit for bit, over
 * terms that cancel (40 binary orders apart), written over the shot itself; from no pairs,
 * rtm_sums_start's then the rounding's (-0 becoming +0); and the pairs are untouched. */
static void test_sums_add_round(void **state) {
  (void)state;
  rtm_test_rng_t rng = rtm_test_seed("test_sums_add_round");
  enum { CELLS = 5000, SHOTS = 5 };
  float *pairs = calloc(2 * (size_t)CELLS, sizeof *pairs), *kept = malloc(2 * CELLS * sizeof *kept);
  float *shot = malloc(CELLS * sizeof *shot), *want = malloc(CELLS * sizeof *want);
  float *added = malloc(2 * (size_t)CELLS * sizeof *added);
  assert_non_null(pairs && kept && shot && want && added);
  for (int k = 0; k < SHOTS - 1; ++k) {
    for (size_t i = 0; i < CELLS; ++i)
      shot[i] = random_term(&rng, 40);
    rtm_sums_add(pairs, pairs + CELLS, shot, CELLS);
  }
  for (size_t i = 0; i < CELLS; ++i)
    shot[i] = random_term(&rng, 40);
  shot[7] = -pairs[7]; /* a cell that cancels to the pair's lo */
  memcpy(kept, pairs, 2 * (size_t)CELLS * sizeof *kept);
  memcpy(added, pairs, 2 * (size_t)CELLS * sizeof *added);
  rtm_sums_add(added, added + CELLS, shot, CELLS);
  rtm_sums_round(want, added, added + CELLS, CELLS);
  rtm_sums_add_round(shot, pairs, pairs + CELLS, shot, CELLS);
  assert_memory_equal(shot, want, CELLS * sizeof *shot);
  assert_memory_equal(pairs, kept, 2 * (size_t)CELLS * sizeof *pairs);

  for (size_t i = 0; i < CELLS; ++i)
    shot[i] = random_term(&rng, 40);
  shot[0] = -0.0f;
  rtm_sums_start(added, added + CELLS, shot, CELLS);
  rtm_sums_round(want, added, added + CELLS, CELLS);
  rtm_sums_add_round(shot, NULL, NULL, shot, CELLS);
  assert_memory_equal(shot, want, CELLS * sizeof *shot);
  assert_true(shot[0] == 0.0f && !signbit(shot[0]));
  free(pairs), free(kept), free(shot), free(want), free(added);
}

/* rtm.reconstruction = boundary on z-slabs: the slabs' shells, each walked in its own order
 * and taken in rank order, are the whole grid's shell in its order, cell for cell (so every
 * cell is stored by exactly one rank), for 1 to 7 ranks over 37 planes with a 3-cell layer
 * (box planes 3..33: slabs wholly in the layer, slabs of whole planes only, of rings only). */
static void test_boundary_shell_by_slabs(void **state) {
  (void)state;
  const int n[3] = {20, 18, 37}, width = 3;
  const double spacing[3] = {10, 10, 10}, origin[3] = {0, 0, 0};
  rtm_grid_t whole;
  rtm_boundary_shell_t shell;
  assert_int_equal(rtm_grid_init(&whole, n, spacing, origin), RTM_OK);
  assert_true(rtm_boundary_shell_of(&whole, width, &shell));
  const rtm_layout_t dense = {0, n[0], (long long)n[0] * n[1]};
  const long long cells = shell.cells;
  long long *expected = malloc((size_t)cells * sizeof *expected);
  assert_non_null(expected);
  for (long long i = 0; i < cells; ++i)
    expected[i] = rtm_boundary_shell_element(&shell, dense, i);
  for (int ranks = 1; ranks <= 7; ++ranks) {
    long long at = 0;
    for (int r = 0; r < ranks; ++r) {
      rtm_grid_t slab = whole;
      int z_offset = 0, nz_local = 0;
      assert_int_equal(rtm_mpi_slab(n[2], ranks, r, &z_offset, &nz_local), RTM_OK);
      assert_int_equal(rtm_grid_set_z_range(&slab, z_offset, nz_local), RTM_OK);
      assert_true(rtm_boundary_shell_of(&slab, width, &shell));
      for (long long i = 0; i < shell.cells; ++i, ++at) {
        /* the slab's element, its plane made global */
        const long long element = rtm_boundary_shell_element(&shell, dense, i);
        assert_true(at < cells);
        assert_int_equal(element + (long long)z_offset * dense.stride_z, expected[at]);
      }
    }
    assert_int_equal(at, cells);
  }
  free(expected);
}

RTM_TEST_MAIN(cmocka_unit_test(test_layouts), cmocka_unit_test(test_accumulate_matches_loop),
              cmocka_unit_test(test_accumulate_interior),
              cmocka_unit_test(test_illumination_deferred),
              cmocka_unit_test(test_image_refuses_device_strategy),
              cmocka_unit_test(test_snapshots_fp32_round_trip),
              cmocka_unit_test(test_snapshots_fp16_round_trip),
              cmocka_unit_test(test_snapshots_zfp_round_trip),
              cmocka_unit_test(test_snapshots_fp16_any_amplitude),
              cmocka_unit_test(test_snapshots_refuse_bad_slots),
              cmocka_unit_test(test_snapshots_too_large), cmocka_unit_test(test_adjoint_weights),
              cmocka_unit_test(test_laplacian_of_quadratic),
              cmocka_unit_test(test_laplacian_mirrored_in_box),
              cmocka_unit_test(test_laplacian_plain_sums),
              cmocka_unit_test(test_laplacian_in_parts), cmocka_unit_test(test_compensate),
              cmocka_unit_test(test_sums_exact), cmocka_unit_test(test_sums_order),
              cmocka_unit_test(test_sums_start), cmocka_unit_test(test_sums_add_round),
              cmocka_unit_test(test_boundary_shell_by_slabs))
