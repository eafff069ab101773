/* The imaging pieces of rtm_imaging.h on a CUDA device: the accumulation kernel equals the
 * host loop bit for bit in every device strategy; snapshots round-trip through device, vmm,
 * vmm-compressed, managed, pinned and host slots, fp32 exactly, zfp with codec.c's floats and fp16
 * with the host's binary16 bits; the store's byte estimate equals what its ledger records; and the
 * whole sits correctly between the cuda backend's steps (views saved and accumulated on the legacy
 * default stream, the next steps queued right after). Exits 77 without a device. */
#define _POSIX_C_SOURCE 200809L /* fileno, dup2: rtm_test_capture.h */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <cuda_runtime_api.h>

#include "imaging_testing.h"
#include "rtm_half.h"
#include "rtm_imaging.h"
#include "rtm_test_compare.h"
#include "rtm_propagator.h"
#include "rtm_status.h"
#include "rtm_test_main.h"

enum { DEVICE = 0 };

static float *to_device(const float *host, size_t count) {
  void *device = NULL;
  assert_int_equal(cudaMalloc(&device, count * sizeof(float)), cudaSuccess);
  assert_int_equal(cudaMemcpy(device, host, count * sizeof(float), cudaMemcpyHostToDevice),
                   cudaSuccess);
  return device;
}

static void from_device(float *host, const float *device, size_t count) {
  assert_int_equal(cudaMemcpy(host, device, count * sizeof(float), cudaMemcpyDefault), cudaSuccess);
}

/* ---- image ---- */

/* Inputs on the device in both layouts, and the loop's answers for one and for two
 * accumulations. */
typedef struct {
  rtm_grid_t grid;
  size_t cells;
  float *d_source_padded, *d_receiver_padded, *d_source_dense, *d_receiver_dense;
  float *want_image[2], *want_illumination[2]; /* after the first, after both */
} accumulate_case_t;

/* nx: the x extent (13, imaging_test_grid's: the one-cell kernel; a multiple of 4: the kernel
 * of four cells a thread). */
static void accumulate_case(accumulate_case_t *c, rtm_test_rng_t *rng, int nx) {
  imaging_test_grid_nx(&c->grid, nx);
  const size_t padded = c->grid.padded_cells, cells = rtm_grid_interior_cells(&c->grid);
  const rtm_layout_t p = rtm_layout_padded(&c->grid), d = rtm_layout_dense(&c->grid);
  c->cells = cells;
  float *source_padded = imaging_test_alloc(padded), *receiver_padded = imaging_test_alloc(padded);
  float *source_dense = imaging_test_alloc(cells), *receiver_dense = imaging_test_alloc(cells);
  imaging_test_fill(rng, source_padded, padded, 0.1, 3.0);
  imaging_test_fill(rng, receiver_padded, padded, 0.1, 3.0);
  imaging_test_fill(rng, source_dense, cells, 0.1, 3.0);
  imaging_test_fill(rng, receiver_dense, cells, 0.1, 3.0);
  for (int k = 0; k < 2; ++k) {
    c->want_image[k] = imaging_test_alloc(cells);
    c->want_illumination[k] = imaging_test_alloc(cells);
    imaging_test_accumulate(&c->grid, c->want_image[k], c->want_illumination[k], source_padded, p,
                            receiver_dense, d);
  }
  imaging_test_accumulate(&c->grid, c->want_image[1], c->want_illumination[1], source_dense, d,
                          receiver_padded, p);
  c->d_source_padded = to_device(source_padded, padded);
  c->d_receiver_padded = to_device(receiver_padded, padded);
  c->d_source_dense = to_device(source_dense, cells);
  c->d_receiver_dense = to_device(receiver_dense, cells);
  free(source_padded), free(receiver_padded), free(source_dense), free(receiver_dense);
}

static void accumulate_case_release(accumulate_case_t *c) {
  cudaFree(c->d_source_padded), cudaFree(c->d_receiver_padded);
  cudaFree(c->d_source_dense), cudaFree(c->d_receiver_dense);
  for (int k = 0; k < 2; ++k)
    free(c->want_image[k]), free(c->want_illumination[k]);
}

static void check_image(rtm_image_t *image, const accumulate_case_t *c, int after,
                        const char *strategy) {
  float *image_dense = imaging_test_alloc(c->cells), *illumination = imaging_test_alloc(c->cells);
  assert_int_equal(rtm_image_read(image, image_dense, illumination), RTM_OK);
  if (memcmp(image_dense, c->want_image[after], c->cells * sizeof(float)) != 0 ||
      memcmp(illumination, c->want_illumination[after], c->cells * sizeof(float)) != 0) {
    print_error("%s: the device image after %d accumulation(s) differs from the host loop\n",
                strategy, after + 1);
    fail();
  }
  free(image_dense), free(illumination);
}

/* Both layouts on each side, twice, then clear and once more: the host loop's floats, with
 * rows of 13 cells (one a thread) and of 36 (four a thread). */
static void test_device_accumulate_bitwise(void **state) {
  (void)state;
  static const char *const strategies[] = {"device", "vmm-compressed", "managed", "auto"};
  static const int widths[] = {13, 36};
  rtm_test_rng_t rng = rtm_test_seed("test_device_accumulate_bitwise");
  for (size_t w = 0; w < sizeof widths / sizeof widths[0]; ++w) {
    accumulate_case_t c;
    accumulate_case(&c, &rng, widths[w]);
    const rtm_layout_t p = rtm_layout_padded(&c.grid), d = rtm_layout_dense(&c.grid);
    for (size_t s = 0; s < sizeof strategies / sizeof strategies[0]; ++s) {
      rtm_mem_ledger_t ledger;
      rtm_mem_ledger_init(&ledger);
      rtm_image_t *image = NULL;
      assert_int_equal(rtm_image_create(&c.grid, DEVICE, strategies[s], &ledger, &image), RTM_OK);
      printf("rows of %d: image in %s\n", widths[w],
             imaging_test_record(&ledger, "image")->strategy);
      assert_int_equal(rtm_image_accumulate(image, c.d_source_padded, p, c.d_receiver_dense, d),
                       RTM_OK);
      assert_int_equal(rtm_image_accumulate(image, c.d_source_dense, d, c.d_receiver_padded, p),
                       RTM_OK);
      check_image(image, &c, 1, strategies[s]);
      assert_int_equal(rtm_image_clear(image), RTM_OK);
      assert_int_equal(rtm_image_accumulate(image, c.d_source_padded, p, c.d_receiver_dense, d),
                       RTM_OK);
      check_image(image, &c, 0, strategies[s]);
      rtm_image_destroy(image);
      rtm_mem_ledger_release(&ledger);
    }
    accumulate_case_release(&c);
  }
}

static void device_free(float *placed) {
  cudaFree(placed);
}

/* rtm_image_keep_interior on the device: the host loop's floats inside the box, zeros
 * outside it; over other grids, widths and slabs (rows of 13 cells: the one-cell kernel) what
 * the layer's zeroing keeps is the unboxed image's. */
static void test_device_accumulate_interior(void **state) {
  (void)state;
  rtm_test_rng_t rng = rtm_test_seed("test_device_accumulate_interior");
  imaging_test_interior(&rng, DEVICE, to_device, device_free);
  imaging_test_interior_geometries(&rng, DEVICE, to_device, device_free);
}

/* The illumination of a store's volumes in one pass on the device, after the image alone at
 * each step through rtm_image_accumulate, gives the same floats: four cells a thread (36 x 11
 * x 7 cells, volumes 8 floats apart) and one (an odd stride, 13-cell rows). The iso step's
 * imaging without the illumination is checked whole, not here: test_migration_gpu's device
 * snapshots (deferred) against pinned ones (summed in the step), bit for bit. */
static void test_device_illumination_deferred(void **state) {
  (void)state;
  rtm_test_rng_t rng = rtm_test_seed("test_device_illumination_deferred");
  imaging_test_deferred(&rng, DEVICE, 36, 9, 36 * 11 * 7 + 8, to_device, device_free);
  imaging_test_deferred(&rng, DEVICE, 36, 9, 36 * 11 * 7 + 1, to_device, device_free);
  imaging_test_deferred(&rng, DEVICE, 13, 3, 13 * 11 * 7, to_device, device_free);
}

/* A cuda backend's image lives in device memory: host strategies are config errors. */
static void test_device_image_refuses_host_memory(void **state) {
  (void)state;
  imaging_test_image_refused(DEVICE, "pinned");
  imaging_test_image_refused(DEVICE, "host");
}

/* ---- snapshots ---- */

/* Saves COUNT device fields into a store of `strategy` and `precision`, clobbers the fields,
 * and reads every slot back through get (backward) against the interior, rounded by the
 * host's rtm_half for fp16 (scaled by the volume's 2^e), by codec.c for zfp (RATE bits a
 * value): bit for bit. get's volume is device-accessible, the slot itself
 * exactly when fp32 slots are in device memory; the ledger holds what the estimate said.
 * Then a second shot: new fields saved over the slots (host slots: what the backward gets
 * fetched ahead into the transfer buffers is stale now) and read back out of order. */
enum { RATE = 4 }; /* zfp stores */
static void check_device_round_trip(const char *strategy, rtm_precision_t precision,
                                    rtm_test_rng_t *rng) {
  enum { COUNT = 3 };
  /* slot 0 first: the first shot's last get left slot 0's old bytes in buffer 0, which the
   * second shot's save of slot 2 has overwritten since */
  static const int second_order[COUNT] = {0, 2, 1};
  rtm_grid_t grid;
  imaging_test_grid(&grid);
  const size_t cells = rtm_grid_interior_cells(&grid), padded = grid.padded_cells;
  const int fp16 = precision == RTM_PRECISION_FP16;
  const int zfp = precision == RTM_PRECISION_ZFP;
  const int direct = precision == RTM_PRECISION_FP32 && strcmp(strategy, "host") != 0 &&
                     strcmp(strategy, "pinned") != 0;
  float *d_fields[COUNT], *expected[COUNT], *field = imaging_test_alloc(padded);
  float *got = imaging_test_alloc(cells);
  rtm_mem_ledger_t ledger;
  rtm_mem_ledger_init(&ledger);
  rtm_snapshots_t *store = NULL;
  printf("snapshots: %s, %s\n", strategy, rtm_precision_name(precision));
  assert_int_equal(rtm_snapshots_create(&grid, COUNT, DEVICE, strategy, precision, RATE,
                                        RTM_SNAPSHOTS_VOLUMES, &ledger, &store),
                   RTM_OK);
  for (int k = 0; k < COUNT; ++k) {
    if (fp16)
      imaging_test_half_values(rng, field, padded);
    else
      imaging_test_fill(rng, field, padded, 1e-30, 1e30);
    expected[k] = imaging_test_alloc(cells);
    rtm_grid_pack(&grid, field, expected[k]);
    if (fp16) /* scaled by 2^e into binary16's range and back, as the host store does */
      imaging_test_half_scaled(expected[k], cells);
    if (zfp) imaging_test_codec_round_trip(&grid, expected[k], RATE);
    d_fields[k] = to_device(field, padded);
    const rtm_field_view_t view = {d_fields[k], DEVICE};
    assert_int_equal(rtm_snapshots_save(store, k, &view), RTM_OK);
  }
  for (int k = 0; k < COUNT; ++k) /* queued after the saves: what they copied must not change */
    assert_int_equal(cudaMemset(d_fields[k], 0x7f, padded * sizeof(float)), cudaSuccess);
  for (int shot = 0; shot < 2; ++shot) {
    const float *previous = NULL; /* the shot's last get's volume */
    if (shot == 1)
      for (int k = 0; k < COUNT; ++k) { /* the second shot's fields over the slots */
        if (fp16)
          imaging_test_half_values(rng, field, padded);
        else
          imaging_test_fill(rng, field, padded, 1e-30, 1e30);
        rtm_grid_pack(&grid, field, expected[k]);
        if (fp16) imaging_test_half_scaled(expected[k], cells);
        if (zfp) imaging_test_codec_round_trip(&grid, expected[k], RATE);
        assert_int_equal(
            cudaMemcpy(d_fields[k], field, padded * sizeof(float), cudaMemcpyHostToDevice),
            cudaSuccess);
        const rtm_field_view_t view = {d_fields[k], DEVICE};
        assert_int_equal(rtm_snapshots_save(store, k, &view), RTM_OK);
      }
    for (int i = 0; i < COUNT; ++i) {
      const int k = shot == 0 ? COUNT - 1 - i : second_order[i];
      const float *volume = NULL;
      struct cudaPointerAttributes attributes;
      assert_int_equal(rtm_snapshots_get(store, k, &volume), RTM_OK);
      assert_int_equal(cudaPointerGetAttributes(&attributes, volume), cudaSuccess);
      assert_true(attributes.type == cudaMemoryTypeDevice ||
                  attributes.type == cudaMemoryTypeManaged);
      if (previous) assert_true((volume == previous) == !direct);
      previous = volume;
      from_device(got, volume, cells);
      if (memcmp(got, expected[k], cells * sizeof(float)) != 0) {
        print_error("%s %s, shot %d: slot %d differs from the saved field\n", strategy,
                    rtm_precision_name(precision), shot, k);
        fail();
      }
    }
  }
  const size_t estimate =
      rtm_snapshots_bytes(&grid, COUNT, DEVICE, strategy, precision, RATE, RTM_SNAPSHOTS_VOLUMES);
  printf("  ledger %zu bytes, estimate %zu\n", imaging_test_ledger_total(&ledger), estimate);
  assert_int_equal(imaging_test_ledger_total(&ledger), estimate);
  assert_string_equal(imaging_test_record(&ledger, "snapshots")->strategy, strategy);
  rtm_snapshots_destroy(store);
  rtm_mem_ledger_release(&ledger);
  for (int k = 0; k < COUNT; ++k)
    cudaFree(d_fields[k]), free(expected[k]);
  free(field), free(got);
}

static void test_device_snapshots(void **state) {
  (void)state;
  static const char *const strategies[] = {"device",  "vmm",    "vmm-compressed",
                                           "managed", "pinned", "host"};
  rtm_test_rng_t rng = rtm_test_seed("test_device_snapshots");
  for (size_t s = 0; s < sizeof strategies / sizeof strategies[0]; ++s) {
    check_device_round_trip(strategies[s], RTM_PRECISION_FP32, &rng);
    check_device_round_trip(strategies[s], RTM_PRECISION_FP16, &rng);
    check_device_round_trip(strategies[s], RTM_PRECISION_ZFP, &rng);
  }
}

/* zfp on the device: the codec's kernel stores a block holding a NaN as zeros, and the store
 * refuses it when the backward pass starts (the get of the last slot), naming the slot and the
 * block's first cell (global z), as the host store does when it saves. */
static void test_device_zfp_refuses_nan(void **state) {
  (void)state;
  static capture_t capture;
  rtm_grid_t grid;
  imaging_test_grid(&grid);
  const size_t padded = grid.padded_cells;
  rtm_snapshots_t *store = NULL;
  assert_int_equal(rtm_snapshots_create(&grid, 2, DEVICE, "device", RTM_PRECISION_ZFP, RATE,
                                        RTM_SNAPSHOTS_VOLUMES, NULL, &store),
                   RTM_OK);
  float *field = imaging_test_alloc(padded);
  float *d_zeros = to_device(field, padded);
  field[rtm_grid_index(&grid, 6, 5, 3)] = NAN;
  float *d_nan = to_device(field, padded);
  const rtm_field_view_t nan_view = {d_nan, DEVICE}, zeros_view = {d_zeros, DEVICE};
  assert_int_equal(rtm_snapshots_save(store, 0, &nan_view), RTM_OK); /* queued, not read */
  assert_int_equal(rtm_snapshots_save(store, 1, &zeros_view), RTM_OK);
  const float *volume = NULL;
  assert_int_equal(captured(&capture, rtm_snapshots_get(store, 1, &volume)), RTM_ERR_NUMERIC);
  assert_contains(capture.text, "slot 0 holds a NaN or an infinity");
  assert_contains(capture.text, "(ix 4, iy 4, iz 5)");
  rtm_snapshots_destroy(store);
  cudaFree(d_zeros), cudaFree(d_nan);
  free(field);
}

/* zfp on the device read by its blocks (a tti migration's store): no staging volume, the
 * ledger as the estimate said (a volume under the store read as volumes), the round trip's
 * error summed from the blocks as the reference's decoded floats give it, and a get that
 * comes anyway served, bit for bit, with the staging volume taken then. Device and pinned
 * slots (those cross PCIe as blocks). */
static void check_read_by_blocks(const char *strategy, rtm_test_rng_t *rng) {
  rtm_grid_t grid;
  imaging_test_grid(&grid);
  const size_t cells = rtm_grid_interior_cells(&grid), padded = grid.padded_cells;
  float *field = imaging_test_alloc(padded), *expected = imaging_test_alloc(cells);
  float *got = imaging_test_alloc(cells);
  rtm_mem_ledger_t ledger;
  rtm_mem_ledger_init(&ledger);
  rtm_snapshots_t *store = NULL;
  printf("snapshots read by blocks: %s\n", strategy);
  assert_int_equal(rtm_snapshots_create(&grid, 2, DEVICE, strategy, RTM_PRECISION_ZFP, RATE,
                                        RTM_SNAPSHOTS_BLOCKS, &ledger, &store),
                   RTM_OK);
  const size_t blocks = rtm_snapshots_bytes(&grid, 2, DEVICE, strategy, RTM_PRECISION_ZFP, RATE,
                                            RTM_SNAPSHOTS_BLOCKS);
  const size_t volumes = rtm_snapshots_bytes(&grid, 2, DEVICE, strategy, RTM_PRECISION_ZFP, RATE,
                                             RTM_SNAPSHOTS_VOLUMES);
  assert_int_equal(imaging_test_ledger_total(&ledger), blocks);
  assert_true(volumes - blocks >= cells * sizeof(float));
  for (int i = 0; i < ledger.count; ++i)
    assert_string_not_equal(ledger.records[i].label, "snapshots staging");
  imaging_test_fill(rng, field, padded, 1e-3, 1.0);
  rtm_grid_pack(&grid, field, expected);
  imaging_test_codec_round_trip(&grid, expected, RATE);
  float *d_field = to_device(field, padded);
  const rtm_field_view_t view = {d_field, DEVICE};
  double relative_l2 = -1.0;
  for (int k = 0; k < 2; ++k)
    assert_int_equal(rtm_snapshots_save(store, k, &view), RTM_OK);
  assert_int_equal(rtm_snapshots_round_trip(store, 1, &view, &relative_l2), RTM_OK);
  rtm_grid_pack(&grid, field, got); /* the reference's floats against the field's */
  const double reference = rtm_test_relative_l2(expected, got, cells);
  printf("  round trip %.6e from the blocks, %.6e from the reference\n", relative_l2, reference);
  assert_true(relative_l2 > 0.0);
  assert_true(fabs(relative_l2 - reference) <= 1e-9 * relative_l2);
  const float *volume = NULL;
  assert_int_equal(rtm_snapshots_get(store, 1, &volume), RTM_OK);
  from_device(got, volume, cells);
  assert_memory_equal(got, expected, cells * sizeof(float));
  assert_true(imaging_test_record(&ledger, "snapshots staging")->reserved_bytes >=
              cells * sizeof(float));
  rtm_snapshots_destroy(store);
  rtm_mem_ledger_release(&ledger);
  cudaFree(d_field);
  free(field), free(expected), free(got);
}

static void test_device_zfp_read_by_blocks(void **state) {
  (void)state;
  rtm_test_rng_t rng = rtm_test_seed("test_device_zfp_read_by_blocks");
  check_read_by_blocks("device", &rng);
  check_read_by_blocks("pinned", &rng);
}

/* ---- between the backend's steps ---- */

/* The cuda backend on a 45 x 37 x 29 constant model, the source at the centre: its config
 * (small_config), then its grid, model and propagator (small_propagator). */
static void small_config(rtm_config_t *cfg) {
  rtm_config_defaults(cfg);
  cfg->grid.n[0] = 45;
  cfg->grid.n[1] = 37;
  cfg->grid.n[2] = 29;
  cfg->time.steps = 60;
  cfg->receivers.layout = RTM_RECEIVERS_NONE;
  cfg->boundary.width_cells = 6;
  snprintf(cfg->backend.name, sizeof cfg->backend.name, "cuda");
  snprintf(cfg->memory.strategy, sizeof cfg->memory.strategy, "device");
  cfg->backend.device = DEVICE;
}
static void small_propagator(rtm_config_t *cfg, rtm_grid_t *grid, rtm_model_t *model,
                             rtm_propagator_t *prop) {
  assert_int_equal(rtm_grid_init(grid, cfg->grid.n, cfg->grid.spacing_m, cfg->grid.origin_m),
                   RTM_OK);
  assert_int_equal(rtm_model_from_constants(cfg, grid, model), RTM_OK);
  assert_int_equal(rtm_propagator_create(cfg, grid, model, prop), RTM_OK);
}
static void backend_propagator(rtm_config_t *cfg, rtm_grid_t *grid, rtm_model_t *model,
                               rtm_propagator_t *prop) {
  small_config(cfg);
  small_propagator(cfg, grid, model, prop);
}

/* After 30 steps: a snapshot of the current p and the image of current x previous saved
 * from views, the next 20 steps queued at once behind them. The snapshot and the image must
 * hold the fields of step 30 (read_field's copies), not of a later step. */
static void test_views_between_steps(void **state) {
  (void)state;
  rtm_config_t cfg;
  rtm_grid_t grid;
  rtm_model_t model;
  rtm_propagator_t prop;
  backend_propagator(&cfg, &grid, &model, &prop);
  const rtm_backend_t *backend = prop.backend;
  const size_t cells = rtm_grid_interior_cells(&grid);
  float *current = imaging_test_alloc(cells), *previous = imaging_test_alloc(cells);
  float *want_image = imaging_test_alloc(cells), *want_illumination = imaging_test_alloc(cells);
  float *got = imaging_test_alloc(cells), *got_illumination = imaging_test_alloc(cells);
  rtm_snapshots_t *store = NULL;
  rtm_image_t *image = NULL;
  assert_int_equal(rtm_snapshots_create(&grid, 1, DEVICE, "device", RTM_PRECISION_FP32, 0,
                                        RTM_SNAPSHOTS_VOLUMES, &prop.ledger, &store),
                   RTM_OK);
  assert_int_equal(rtm_image_create(&grid, DEVICE, "device", &prop.ledger, &image), RTM_OK);
  for (int it = 0; it < 30; ++it)
    assert_int_equal(backend->step(prop.state, it, RTM_REGION_ALL, RTM_FORWARD), RTM_OK);
  assert_int_equal(backend->read_field(prop.state, RTM_FIELD_P, RTM_LEVEL_CURRENT, current),
                   RTM_OK);
  assert_int_equal(backend->read_field(prop.state, RTM_FIELD_P, RTM_LEVEL_PREVIOUS, previous),
                   RTM_OK);
  rtm_field_view_t view_current, view_previous;
  assert_int_equal(backend->view_field(prop.state, RTM_FIELD_P, RTM_LEVEL_CURRENT, &view_current),
                   RTM_OK);
  assert_int_equal(backend->view_field(prop.state, RTM_FIELD_P, RTM_LEVEL_PREVIOUS, &view_previous),
                   RTM_OK);
  assert_int_equal(rtm_snapshots_save(store, 0, &view_current), RTM_OK);
  assert_int_equal(rtm_image_accumulate(image, view_current.padded, rtm_layout_padded(&grid),
                                        view_previous.padded, rtm_layout_padded(&grid)),
                   RTM_OK);
  for (int it = 30; it < 50; ++it)
    assert_int_equal(backend->step(prop.state, it, RTM_REGION_ALL, RTM_FORWARD), RTM_OK);

  const float *volume = NULL;
  assert_int_equal(rtm_snapshots_get(store, 0, &volume), RTM_OK);
  from_device(got, volume, cells);
  assert_memory_equal(got, current, cells * sizeof(float));
  const rtm_layout_t d = rtm_layout_dense(&grid);
  imaging_test_accumulate(&grid, want_image, want_illumination, current, d, previous, d);
  assert_int_equal(rtm_image_read(image, got, got_illumination), RTM_OK);
  assert_memory_equal(got, want_image, cells * sizeof(float));
  assert_memory_equal(got_illumination, want_illumination, cells * sizeof(float));
  double energy = 0.0; /* the wavefield has left the source by step 30: a real test */
  for (size_t i = 0; i < cells; ++i)
    energy += (double)want_illumination[i];
  printf("illumination at step 30: %g\n", energy);
  assert_true(energy > 0.0);

  rtm_image_destroy(image);
  rtm_snapshots_destroy(store);
  rtm_propagator_destroy(&prop);
  rtm_model_release(&model);
  free(current), free(previous), free(want_image), free(want_illumination), free(got);
  free(got_illumination);
}

/* ---- the imaging condition in a step (image_next_step) ---- */

typedef struct {
  rtm_equation_t equation;
  const char *halo;
  int block[2];          /* 0 0: kernel.block auto */
  rtm_precision_t coeff; /* memory.model_precision */
  int split;             /* the imaging step split into edge planes and interior */
  int supported;         /* image_next_step takes it (else RTM_ERR_UNSUPPORTED) */
  int stages;            /* kernel.stages; 0: auto */
  int box;               /* > 0: both images keep the interior this many cells in */
} step_image_case_t;

/* The cuda backend on the 45 x 37 x 29 model of backend_propagator in the case's equation
 * (tti tilted 20 and 30 degrees), kernel.halo and tile. */
static void case_propagator(const step_image_case_t *c, rtm_config_t *cfg, rtm_grid_t *grid,
                            rtm_model_t *model, rtm_propagator_t *prop) {
  small_config(cfg);
  cfg->physics.equation = c->equation;
  cfg->model.epsilon = 0.15;
  cfg->model.delta = 0.05;
  cfg->model.theta_deg = c->equation == RTM_EQUATION_TTI ? 20.0 : 0.0;
  cfg->model.phi_deg = c->equation == RTM_EQUATION_TTI ? 30.0 : 0.0;
  cfg->memory.model_precision = c->coeff;
  snprintf(cfg->kernel.halo, sizeof cfg->kernel.halo, "%s", c->halo);
  if (c->block[0] > 0) {
    cfg->kernel.block[0] = c->block[0];
    cfg->kernel.block[1] = c->block[1];
  }
  if (c->stages > 0) cfg->kernel.stages = c->stages;
  small_propagator(cfg, grid, model, prop);
}

static void step_region(const rtm_propagator_t *prop, int it, int split) {
  const rtm_backend_t *backend = prop->backend;
  if (!split) {
    assert_int_equal(backend->step(prop->state, it, RTM_REGION_ALL, RTM_FORWARD), RTM_OK);
    return;
  }
  assert_int_equal(backend->step(prop->state, it, RTM_REGION_EDGE_PLANES, RTM_FORWARD), RTM_OK);
  assert_int_equal(backend->step(prop->state, it, RTM_REGION_INTERIOR, RTM_FORWARD), RTM_OK);
}

/* Two propagators of the case stepped alike, 20 steps: then the first's image is made apart
 * (rtm_image_accumulate of S and its current p) and the second's by its next step
 * (image_next_step), S random, dense (45 cells a row: lane by lane) and then padded (float4
 * where the tile allows); both steps go on, the requests one step each. The images and the
 * illuminations must be equal bit for bit, and so must the fields after the steps: the
 * imaging instance propagates as the plain one. A shape without the instance refuses the
 * request (RTM_ERR_UNSUPPORTED) and changes nothing. Deferred, the second image's steps add
 * the image alone (rtm_image_defer_illumination): its illumination stays zero until
 * rtm_image_illuminate adds both sources, the last first, which must then equal the first's. */
static void check_image_in_step(const step_image_case_t *c, int deferred, rtm_test_rng_t *rng) {
  rtm_config_t cfg[2];
  rtm_grid_t grid;
  rtm_model_t model[2];
  rtm_propagator_t prop[2];
  for (int k = 0; k < 2; ++k)
    case_propagator(c, &cfg[k], &grid, &model[k], &prop[k]);
  const size_t cells = rtm_grid_interior_cells(&grid), padded = grid.padded_cells;
  char description[256];
  prop[1].backend->describe(prop[1].state, description, sizeof description);
  printf("%s\n", description);
  float *dense = imaging_test_alloc(cells), *padded_values = imaging_test_alloc(padded);
  imaging_test_fill(rng, dense, cells, 0.1, 3.0);
  imaging_test_fill(rng, padded_values, padded, 0.1, 3.0);
  float *sources[2] = {to_device(dense, cells), to_device(padded_values, padded)};
  const rtm_layout_t layouts[2] = {rtm_layout_dense(&grid), rtm_layout_padded(&grid)};
  rtm_image_t *image[2] = {NULL, NULL};
  for (int k = 0; k < 2; ++k)
    assert_int_equal(rtm_image_create(&grid, DEVICE, "device", &prop[k].ledger, &image[k]), RTM_OK);
  rtm_image_defer_illumination(image[1], deferred);
  for (int k = 0; k < 2 && c->box > 0; ++k)
    rtm_image_keep_interior(image[k], c->box);
  int it = 0;
  for (; it < 20; ++it)
    for (int k = 0; k < 2; ++k)
      step_region(&prop[k], it, 0);
  for (int s = 0; s < 2; ++s, ++it) {
    rtm_field_view_t view;
    assert_int_equal(
        prop[0].backend->view_field(prop[0].state, RTM_FIELD_P, RTM_LEVEL_CURRENT, &view), RTM_OK);
    assert_int_equal(rtm_image_accumulate(image[0], sources[s], layouts[s], view.padded,
                                          rtm_layout_padded(&grid)),
                     RTM_OK);
    rtm_step_image_t request;
    assert_int_equal(rtm_image_step_request(image[1], sources[s], layouts[s], &request), RTM_OK);
    const int status = prop[1].backend->image_next_step(prop[1].state, &request);
    assert_int_equal(status, c->supported ? RTM_OK : RTM_ERR_UNSUPPORTED);
    if (!c->supported) { /* what the migration does then */
      assert_int_equal(
          prop[1].backend->view_field(prop[1].state, RTM_FIELD_P, RTM_LEVEL_CURRENT, &view),
          RTM_OK);
      assert_int_equal(rtm_image_accumulate(image[1], sources[s], layouts[s], view.padded,
                                            rtm_layout_padded(&grid)),
                       RTM_OK);
    }
    for (int k = 0; k < 2; ++k)
      step_region(&prop[k], it, c->split);
  }
  for (int k = 0; k < 2; ++k) /* a step after the requests: they are forgotten */
    step_region(&prop[k], it, c->split);
  float *want = imaging_test_alloc(cells), *want_illumination = imaging_test_alloc(cells);
  float *got = imaging_test_alloc(cells), *got_illumination = imaging_test_alloc(cells);
  assert_int_equal(rtm_image_read(image[0], want, want_illumination), RTM_OK);
  assert_int_equal(rtm_image_read(image[1], got, got_illumination), RTM_OK);
  assert_memory_equal(got, want, cells * sizeof *got);
  if (c->box > 0) { /* nothing outside the box */
    float *boxed = imaging_test_alloc(cells);
    memcpy(boxed, got, cells * sizeof *boxed);
    imaging_test_outside_box(&grid, c->box, boxed);
    assert_memory_equal(boxed, got, cells * sizeof *got);
    free(boxed);
  }
  if (deferred) {
    for (size_t i = 0; i < cells; ++i)
      assert_true(got_illumination[i] == 0.0f);
    /* the two sources dense, the second first: the pass adds the first first */
    float *both = imaging_test_alloc(2 * cells);
    rtm_grid_pack(&grid, padded_values, both);
    memcpy(both + cells, dense, cells * sizeof *both);
    float *d_both = to_device(both, 2 * cells);
    rtm_image_defer_illumination(image[1], 0);
    assert_int_equal(rtm_image_illuminate(image[1], d_both, cells, 2), RTM_OK);
    assert_int_equal(rtm_image_read(image[1], got, got_illumination), RTM_OK);
    cudaFree(d_both);
    free(both);
    /* the pass adds every cell's (the layer's is zeroed when a migration reads it) */
    if (c->box > 0) imaging_test_outside_box(&grid, c->box, got_illumination);
  }
  assert_memory_equal(got_illumination, want_illumination, cells * sizeof *got);
  size_t imaged = 0;
  for (size_t i = 0; i < cells; ++i)
    imaged += want[i] != 0.0f;
  printf("  %s%s: %zu of %zu cells imaged, equal bit for bit\n",
         c->supported ? "in the step" : "refused, imaged apart",
         deferred ? ", the illumination added after" : "", imaged, cells);
  assert_true(imaged > cells / 100); /* the wavefield has spread: a real comparison */
  for (int f = 0; f < (c->equation == RTM_EQUATION_ISO ? 1 : 2); ++f)
    for (int level = 0; level < 2; ++level) {
      assert_int_equal(
          prop[0].backend->read_field(prop[0].state, (rtm_field_t)f, (rtm_level_t)level, want),
          RTM_OK);
      assert_int_equal(
          prop[1].backend->read_field(prop[1].state, (rtm_field_t)f, (rtm_level_t)level, got),
          RTM_OK);
      assert_memory_equal(got, want, cells * sizeof *got);
    }
  for (int k = 0; k < 2; ++k) {
    rtm_image_destroy(image[k]);
    rtm_propagator_destroy(&prop[k]);
    rtm_model_release(&model[k]);
    cudaFree(sources[k]);
  }
  free(dense), free(padded_values), free(want), free(want_illumination), free(got);
  free(got_illumination);
}

/* iso: every halo, a split step, the tma kernel's 4 stages; vti and tti have no imaging instance
 * (measured slower than the imaging kernel apart) and refuse; with the interior box
 * (rtm_image_keep_interior) the step's imaging and the kernel apart give the same floats, the
 * layer's cells untouched. tma needs compute capability 9.0. */
static void test_image_in_step_bitwise(void **state) {
  (void)state;
  const step_image_case_t all[] = {
      {RTM_EQUATION_ISO, "sync", {0, 0}, RTM_PRECISION_FP32, 0, 1, 0, 0},
      {RTM_EQUATION_ISO, "ldgsts", {0, 0}, RTM_PRECISION_FP32, 0, 1, 0, 0},
      {RTM_EQUATION_ISO, "tma", {0, 0}, RTM_PRECISION_FP32, 0, 1, 0, 0},
      {RTM_EQUATION_ISO, "tma", {32, 4}, RTM_PRECISION_FP32, 1, 1, 0, 0},
      {RTM_EQUATION_ISO, "tma", {128, 16}, RTM_PRECISION_FP32, 0, 1, 4, 0},
      {RTM_EQUATION_TTI, "tma", {64, 4}, RTM_PRECISION_FP32, 0, 0, 0, 0},
      {RTM_EQUATION_VTI, "ldgsts", {32, 8}, RTM_PRECISION_FP16, 1, 0, 0, 0},
      /* the interior alone: x from 4 to 40 of 45, y from 5 to 32, z from 5 to 24 */
      {RTM_EQUATION_ISO, "tma", {0, 0}, RTM_PRECISION_FP32, 0, 1, 0, 5},
      {RTM_EQUATION_ISO, "ldgsts", {32, 4}, RTM_PRECISION_FP32, 1, 1, 0, 5},
      {RTM_EQUATION_TTI, "tma", {64, 4}, RTM_PRECISION_FP32, 0, 0, 0, 5},
  };
  int major = 0;
  assert_int_equal(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, DEVICE),
                   cudaSuccess);
  rtm_test_rng_t rng = rtm_test_seed("test_image_in_step_bitwise");
  for (size_t k = 0; k < sizeof all / sizeof all[0]; ++k) {
    if (strcmp(all[k].halo, "tma") == 0 && major < 9) continue;
    for (int deferred = 0; deferred < 2; ++deferred)
      check_image_in_step(&all[k], deferred, &rng);
  }
}

/* The subsurface-offset gathers on the device (gathers_kernel) against the host loop, bit
 * for bit: a padded source and a dense receiver, then the other way round, then clear. */

/* Host and device gathers of one plan over four fields: S and R of even steps (padded S,
 * dense R) and of odd ones (dense S, padded R), on the host and copied to the device; the
 * device's told that the sources stay (four steps a pass, S read in place) or not (two, S
 * copied). */
typedef struct {
  rtm_grid_t grid;
  rtm_layout_t padded, dense;
  float *fields[4], *on_device[4], *receivers[2]; /* receivers: fields 1 and 3 as made */
  size_t sizes[4], count;
  int stay;
  rtm_gathers_t *host, *device;
} gathers_case_t;

static void gathers_case(gathers_case_t *c, const char *seed, rtm_grid_t grid, int layer, int lags,
                         int step, int stay) {
  rtm_test_rng_t rng = rtm_test_seed(seed);
  rtm_gather_plan_t plan;
  assert_int_equal(rtm_gather_plan_make(&grid, layer, lags, step, step, &plan), RTM_OK);
  c->grid = grid;
  c->padded = rtm_layout_padded(&grid);
  c->dense = rtm_layout_dense(&grid);
  const size_t padded = grid.padded_cells, cells = rtm_grid_interior_cells(&grid);
  const size_t sizes[4] = {padded, cells, cells, padded};
  imaging_test_gather_fields(&rng, &grid, c->fields);
  for (int f = 0; f < 4; ++f) {
    c->sizes[f] = sizes[f];
    c->on_device[f] = to_device(c->fields[f], sizes[f]);
  }
  for (int f = 1; f < 4; f += 2) {
    c->receivers[f / 2] = imaging_test_alloc(sizes[f]);
    memcpy(c->receivers[f / 2], c->fields[f], sizes[f] * sizeof(float));
  }
  c->stay = stay;
  assert_int_equal(rtm_gathers_create(&grid, &plan, -1, 0, NULL, &c->host), RTM_OK);
  rtm_mem_ledger_t ledger;
  rtm_mem_ledger_init(&ledger);
  assert_int_equal(rtm_gathers_create(&grid, &plan, DEVICE, stay, &ledger, &c->device), RTM_OK);
  /* what the device holds steps in is what the preflight counts: R alone where S stays */
  size_t held = 0;
  for (int r = 0; r < ledger.count; ++r) {
    const int of_s = strcmp(ledger.records[r].label, "gathers: S held") == 0;
    assert_false(stay && of_s);
    if (of_s || strcmp(ledger.records[r].label, "gathers: R held") == 0)
      held += ledger.records[r].bytes;
  }
  assert_int_equal(held, rtm_gathers_held_bytes(&grid, DEVICE, stay));
  rtm_mem_ledger_release(&ledger);
  c->count = rtm_gather_plan_cells(&plan, grid.nz_local);
}

/* What gathers_case_step does: the host's step, the device's, and around the device's
 * its fields put back before and overwritten after (R moves on in a migration: a step the
 * device holds is a copy; S too, unless the sources stay, when it is left as it is), R
 * then k + 1 times the field made, so that no two steps of a pass are alike (an order
 * mixed up within a pass changes the floats). */
enum { STEP_HOST = 1, STEP_DEVICE = 2, STEP_MOVED = 4 };

/* Imaging step k (S and R of fields 0, 1 when k is even, else 2, 3) on the sides asked. */
static void gathers_case_step(gathers_case_t *c, int k, int sides) {
  const int a = k % 2 == 0 ? 0 : 2, b = a + 1; /* fields a, b: the step's S and R */
  const rtm_layout_t la = a == 0 ? c->padded : c->dense, lb = a == 0 ? c->dense : c->padded;
  if (sides & STEP_MOVED)
    for (size_t i = 0; i < c->sizes[b]; ++i)
      c->fields[b][i] = (float)(k + 1) * c->receivers[b / 2][i];
  for (int f = a; f <= b && (sides & STEP_MOVED); ++f)
    assert_int_equal(cudaMemcpy(c->on_device[f], c->fields[f], c->sizes[f] * sizeof(float),
                                cudaMemcpyHostToDevice),
                     cudaSuccess);
  if (sides & STEP_HOST)
    assert_int_equal(rtm_gathers_accumulate(c->host, c->fields[a], la, c->fields[b], lb), RTM_OK);
  if (sides & STEP_DEVICE)
    assert_int_equal(rtm_gathers_accumulate(c->device, c->on_device[a], la, c->on_device[b], lb),
                     RTM_OK);
  for (int f = c->stay ? b : a; f <= b && (sides & STEP_MOVED); ++f)
    assert_int_equal(cudaMemset(c->on_device[f], 0x7f, c->sizes[f] * sizeof(float)), cudaSuccess);
}

static void gathers_case_free(gathers_case_t *c) {
  rtm_gathers_destroy(c->host);
  rtm_gathers_destroy(c->device);
  for (int f = 0; f < 4; ++f)
    free(c->fields[f]), cudaFree(c->on_device[f]);
  free(c->receivers[0]), free(c->receivers[1]);
}

/* The device's gathers against the host's for a grid and a plan (layer, lags, CIP steps),
 * bit for bit after 2, 3 more and 5 more accumulations, the sources copied (passes of two:
 * a pass; a pass and the third added at the read; two passes and the fifth) and staying
 * (four: two added at the read, then three, then a pass and the fifth); then cleared. */
static void gathers_bitwise(rtm_grid_t grid, int layer, int lags, int step, int stay) {
  gathers_case_t c;
  gathers_case(&c, "test_device_gathers_bitwise", grid, layer, lags, step, stay);
  float *want = imaging_test_alloc(c.count), *got = imaging_test_alloc(c.count);
  static const int runs[] = {2, 3, 5};
  for (size_t run = 0; run < sizeof runs / sizeof runs[0]; ++run) {
    for (int k = 0; k < runs[run]; ++k)
      gathers_case_step(&c, k, STEP_HOST | STEP_DEVICE | STEP_MOVED);
    assert_int_equal(rtm_gathers_read(c.host, want), RTM_OK);
    assert_int_equal(rtm_gathers_read(c.device, got), RTM_OK);
    assert_memory_equal(got, want, c.count * sizeof *got);
  }
  size_t nonzero = 0;
  for (size_t i = 0; i < c.count; ++i)
    nonzero += want[i] != 0.0f;
  printf("gathers, %d lags each way, %ld planes, sources %s: %zu elements, %zu of them imaged "
         "(the rest in the layer), the host's floats after 10 accumulations\n",
         lags, (long)grid.nz_local, stay ? "staying" : "copied", c.count, nonzero);
  assert_true(nonzero > 0 && nonzero < c.count);
  imaging_test_gathers_cleared(c.device, got, c.count);
  gathers_case_free(&c);
  free(want), free(got);
}

/* A shot's gathers held (rtm_gathers_hold: the copy into page-locked memory behind what is
 * queued next), cleared, and the next shot's steps queued on the device at once, kernels
 * alone, while the copy of 186 MB is still under way (sources copied: three steps, a pass of
 * two, then an odd step at the read; staying: five, a pass of four, then one at the read):
 * the copy lands the first shot's floats, not zeros or the next shot's (which it would not,
 * were the clear or the next pass not queued behind it), and the device then holds the next
 * shot's alone; both the host loop's bit for bit. The first shot's three steps end short of
 * a pass, which the hold adds before its copy. */
static void gathers_hold(int stay) {
  rtm_grid_t grid;
  const int n[3] = {120, 110, 150};
  const double spacing_m[3] = {10.0, 10.0, 10.0};
  assert_int_equal(rtm_grid_init(&grid, n, spacing_m, NULL), 0);
  assert_int_equal(rtm_grid_set_z_range(&grid, 3, 141), 0);
  gathers_case_t c;
  gathers_case(&c, "test_device_gathers_hold", grid, 2, 12, 5, stay);
  float *want[2] = {imaging_test_alloc(c.count), imaging_test_alloc(c.count)};
  float *got = imaging_test_alloc(c.count), *held = NULL;
  assert_int_equal(cudaMallocHost((void **)&held, c.count * sizeof(float)), cudaSuccess);
  memset(held, 0xff, c.count * sizeof(float)); /* NaNs: a copy that did not land shows */
  for (int k = 0; k < 3; ++k)
    gathers_case_step(&c, k, STEP_HOST | STEP_DEVICE);
  assert_int_equal(rtm_gathers_read(c.host, want[0]), RTM_OK);
  assert_int_equal(rtm_gathers_clear(c.host), RTM_OK);
  assert_int_equal(rtm_gathers_hold(c.device, held), RTM_OK);
  assert_int_equal(rtm_gathers_clear(c.device), RTM_OK);
  const int next = stay ? 6 : 4;
  for (int k = 1; k < next; ++k) /* the device's first: queued behind the copy */
    gathers_case_step(&c, k, STEP_DEVICE);
  for (int k = 1; k < next; ++k)
    gathers_case_step(&c, k, STEP_HOST);
  assert_int_equal(rtm_gathers_read(c.host, want[1]), RTM_OK);
  assert_int_equal(rtm_gathers_hold_wait(c.device), RTM_OK);
  assert_memory_equal(held, want[0], c.count * sizeof *held);
  assert_int_equal(rtm_gathers_read(c.device, got), RTM_OK);
  assert_memory_equal(got, want[1], c.count * sizeof *got);
  printf("gathers held (sources %s): the first shot's floats (%.0f MB) landed behind the "
         "second's steps, which the device then holds alone\n",
         stay ? "staying" : "copied", c.count * sizeof(float) / 1e6);
  gathers_case_free(&c);
  cudaFreeHost(held);
  free(want[0]), free(want[1]), free(got);
}

/* Sources copied, and staying (the steps held until the read adds them). */
static void test_device_gathers_hold(void **state) {
  (void)state;
  gathers_hold(0);
  gathers_hold(1);
}

/* Small (2 lags, 7 planes); wide: 40 lags each way over 45 planes (all of them
 * interior: one run of the kernel's 64 depths, partial); deep: 139 interior planes of a slab of 141
 * from z = 0, its first two in the layer (three runs of depths, the last partial, starting at local
 * plane 2), an odd plane count, so that traces start at every alignment the kernel peels to 16
 * bytes. */
static void test_device_gathers_bitwise(void **state) {
  (void)state;
  rtm_grid_t grid;
  imaging_test_grid(&grid);
  for (int stay = 0; stay < 2; ++stay)
    gathers_bitwise(grid, 2, 2, 3, stay);
  const int n[3] = {100, 90, 50};
  const double spacing_m[3] = {10.0, 10.0, 10.0};
  assert_int_equal(rtm_grid_init(&grid, n, spacing_m, NULL), 0);
  assert_int_equal(rtm_grid_set_z_range(&grid, 3, 45), 0);
  for (int stay = 0; stay < 2; ++stay)
    gathers_bitwise(grid, 2, 40, 30, stay);
  const int deep[3] = {60, 50, 150};
  assert_int_equal(rtm_grid_init(&grid, deep, spacing_m, NULL), 0);
  assert_int_equal(rtm_grid_set_z_range(&grid, 0, 141), 0);
  for (int stay = 0; stay < 2; ++stay)
    gathers_bitwise(grid, 2, 6, 11, stay);
}

RTM_TEST_MAIN_CUDA("test_imaging_gpu", NULL, NULL, cmocka_unit_test(test_device_accumulate_bitwise),
                   cmocka_unit_test(test_device_accumulate_interior),
                   cmocka_unit_test(test_device_gathers_bitwise),
                   cmocka_unit_test(test_device_gathers_hold),
                   cmocka_unit_test(test_device_illumination_deferred),
                   cmocka_unit_test(test_image_in_step_bitwise),
                   cmocka_unit_test(test_device_image_refuses_host_memory),
                   cmocka_unit_test(test_device_snapshots),
                   cmocka_unit_test(test_device_zfp_refuses_nan),
                   cmocka_unit_test(test_device_zfp_read_by_blocks),
                   cmocka_unit_test(test_views_between_steps))
