/* The cuda backend migrates as the cpu reference does: a flat-reflector survey (the image
 * test's, smaller) modelled and migrated on each backend, iso, vti and tti, each with every
 * rtm.reconstruction (snapshots in fp32 and in zfp, boundary, checkpoint with 3 states), with
 * the image and the illumination of cuda within 1e-4 relative L2 of cpu's, the bar,
 * and the subsurface-offset gathers within 1e-5 (issue 38's bar). The backends propagate iso
 * and vti bit for bit and accumulate with the same fused multiply-adds: 0 measured on an H100
 * (and with zfp snapshots on an H200). tti differs by the medium's last bit where the cpu
 * reference forms the axis from constant angles in double (tti_cuda.cu's header): 6e-6, and
 * 2.7e-4 through zfp snapshots (below). */
#include <cuda_runtime_api.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "migration_helper.h"
#include "rtm_test_compare.h"
#include "rtm_test_main.h"

enum { NX = 48, NY = 44, NZ = 48 };
static const int grid_n[3] = {NX, NY, NZ};

static float flat(const void *context, int ix, int iy, int iz) {
  (void)context;
  (void)ix;
  (void)iy;
  return iz <= 30 ? 2000.0f : 2600.0f;
}

enum { EXTRA_MAX = 6 };

/* The survey on grid n, with `extra`'s settings (up to EXTRA_MAX, NULL-terminated) after the
 * common ones. */
static void migrate_on_grid(const char *backend, const char *equation, const int n[3],
                            const char *const *extra, survey_t *s) {
  char backend_set[64], equation_set[64];
  snprintf(backend_set, sizeof backend_set, "backend.name=%s", backend);
  snprintf(equation_set, sizeof equation_set, "physics.equation=%s", equation);
  const char *settings[8 + EXTRA_MAX + 1] = {
      "shots.x_count=2",    "time.steps=300",   backend_set,      equation_set,
      "model.epsilon=0.15", "model.delta=0.05", "model.theta=20", "model.phi=30"};
  for (int k = 0; extra && extra[k]; ++k) {
    assert_true(k < EXTRA_MAX);
    settings[8 + k] = extra[k];
  }
  survey_config(s, n, settings);
  survey_model(s, flat, NULL);
  survey_migrate(s, NULL, NULL);
}

/* Every reconstruction: snapshots (fp32, zfp), boundary, and checkpoint with 3 states (which
 * recompute) on each backend, each with subsurface-offset gathers (issue 38: on the GPU with
 * every reconstruction, within 1e-5 of the cpu's), and the snapshots without them too. */
static void compare_backends(const char *equation) {
  static const struct {
    const char *reconstruction, *extra;
    int gathers;
  } ways[] = {{"rtm.reconstruction=snapshots", NULL, 0},
              {"rtm.reconstruction=snapshots", NULL, 1},
              {"rtm.reconstruction=snapshots", "rtm.snapshot_precision=zfp", 0},
              {"rtm.reconstruction=snapshots", "rtm.snapshot_precision=zfp", 1},
              {"rtm.reconstruction=boundary", NULL, 1},
              {"rtm.reconstruction=checkpoint", "rtm.checkpoints=3", 1}};
  const size_t cells = (size_t)NX * NY * NZ;
  for (size_t w = 0; w < sizeof ways / sizeof ways[0]; ++w) {
    survey_t cpu, cuda;
    const char *const with_gathers[] = {ways[w].reconstruction, "rtm.offset_lags=4",
                                        "rtm.cip_x_step=8",     "rtm.cip_y_step=8",
                                        ways[w].extra,          NULL};
    const char *const without[] = {ways[w].reconstruction, ways[w].extra, NULL};
    const char *const *more = ways[w].gathers ? with_gathers : without;
    migrate_on_grid("cpu", equation, grid_n, more, &cpu);
    migrate_on_grid("cuda", equation, grid_n, more, &cuda);
    const double image = rtm_test_relative_l2(cuda.image, cpu.image, cells);
    const double illumination = rtm_test_relative_l2(cuda.illumination, cpu.illumination, cells);
    printf("%s, %s%s%s%s: cuda against cpu, relative L2: image %.3e, illumination %.3e\n", equation,
           ways[w].reconstruction + strlen("rtm.reconstruction="), ways[w].extra ? ", " : "",
           ways[w].extra ? ways[w].extra : "", ways[w].gathers ? ", with gathers" : "", image,
           illumination);
    /* zfp and tti: the lossy store turns tti's last-bit differences of S into whole
     * quantisation steps of a few blocks (2.7e-4 on an H200, where iso and vti, whose S are
     * the same floats, give 0): held to a tenth of issue 37's 1% bar for a zfp image */
    const int lossy_tti =
        ways[w].extra && strstr(ways[w].extra, "zfp") && strcmp(equation, "tti") == 0;
    assert_true(image <= (lossy_tti ? 1e-3 : 1e-4));
    assert_true(illumination <= 1e-4);
    if (ways[w].gathers) {
      assert_non_null(cpu.gathers);
      assert_non_null(cuda.gathers);
      const double gathers = rtm_test_relative_l2(
          cuda.gathers, cpu.gathers, rtm_gather_plan_cells(&cpu.gather_plan, cpu.grid.nz_local));
      printf("  offset gathers: relative L2 %.3e\n", gathers);
      /* unfiltered: issue 38's 1e-5 (an H200: iso and vti 0 with every reconstruction, tti
       * 2.6e-6); through tti's zfp store 1.5e-5 there, held to a tenth of its image's bound */
      assert_true(gathers <= (lossy_tti ? 1e-4 : 1e-5));
    }
    /* zfp on the GPU: iso images S in the receiver's step, from a volume; vti and tti decode
     * the blocks as they image them, and the run never took a staging volume for S, but for
     * the gathers, which read S's volume (the preflight counts it) */
    if (ways[w].extra && strstr(ways[w].extra, "zfp"))
      assert_int_equal(cuda.staging_held, strcmp(equation, "iso") == 0 || ways[w].gathers);
    survey_release(&cpu);
    survey_release(&cuda);
  }
}

static void test_iso(void **state) {
  (void)state;
  compare_backends("iso");
}

static void test_vti(void **state) {
  (void)state;
  compare_backends("vti");
}

static void test_tti(void **state) {
  (void)state;
  compare_backends("tti");
}

/* Snapshots in pinned host memory (memory.imaging = pinned, for volumes whose store does not
 * fit on the device): the image stays in device memory with the fields, and equals the
 * device-snapshot image bit for bit. Pinned slots are packed after the step; fp32 slots on the
 * device are written by the step's own kernel (its COPY instance, with the cells the source
 * injected copied again): every kernel family that has one, tti's stores of one cell, of a
 * pair along y, of a pair along x (in 8 bytes at an even width, one by one at an odd one).
 * The device store's illumination is added in one pass after each backward pass, the pinned
 * store's in its imaging steps (rtm_image_defer_illumination): the same floats too. */
static void test_snapshots_in_pinned_memory(void **state) {
  (void)state;
  static const int odd_n[3] = {NX - 1, NY, NZ};
  static const struct {
    const char *equation;
    const int *n;
    const char *shape[4];
  } runs[] = {
      {"iso", grid_n, {NULL}},
      {"iso", grid_n, {"kernel.halo=ldgsts", NULL}},
      {"iso",
       grid_n,
       {"kernel.halo=tma", "kernel.stages=4", "kernel.block_x=128", "kernel.block_y=16"}},
      {"vti", grid_n, {"kernel.halo=tma", "kernel.block_x=64", "kernel.block_y=4"}},
      {"tti", grid_n, {"kernel.halo=tma", "kernel.block_x=64", "kernel.block_y=4"}},
      {"tti", odd_n, {"kernel.halo=tma", "kernel.block_x=64", "kernel.block_y=4"}},
      {"tti", grid_n, {"kernel.halo=tma", "kernel.block_x=32", "kernel.block_y=8"}},
      {"tti", grid_n, {"kernel.halo=tma", "kernel.block_x=16", "kernel.block_y=8"}},
      {"tti", odd_n, {"kernel.halo=ldgsts", NULL}},
  };
  for (size_t r = 0; r < sizeof runs / sizeof runs[0]; ++r) {
    const char *const *shape = runs[r].shape;
    const char *on_device[EXTRA_MAX + 1] = {"rtm.reconstruction=snapshots"};
    const char *in_pinned[EXTRA_MAX + 1] = {"rtm.reconstruction=snapshots",
                                            "memory.imaging=pinned"};
    for (int k = 0; k < 4 && shape[k]; ++k) {
      on_device[1 + k] = shape[k];
      in_pinned[2 + k] = shape[k];
    }
    survey_t device, pinned;
    migrate_on_grid("cuda", runs[r].equation, runs[r].n, on_device, &device);
    migrate_on_grid("cuda", runs[r].equation, runs[r].n, in_pinned, &pinned);
    const size_t cells = (size_t)runs[r].n[0] * runs[r].n[1] * runs[r].n[2];
    char keys[160] = "kernel.* auto";
    for (int k = 0, at = 0; k < 4 && shape[k]; ++k)
      at += snprintf(keys + at, sizeof keys - (size_t)at, "%s%s", k ? " " : "", shape[k]);
    printf("%s, %d x %d x %d, %s: snapshots in device and in pinned memory\n", runs[r].equation,
           runs[r].n[0], runs[r].n[1], runs[r].n[2], keys);
    assert_memory_equal(pinned.image, device.image, cells * sizeof *device.image);
    assert_memory_equal(pinned.illumination, device.illumination,
                        cells * sizeof *device.illumination);
    survey_release(&device);
    survey_release(&pinned);
  }
}

/* fp16 and zfp slots in pinned memory cross PCIe through two transfer buffers beside the steps
 * (the backward pass fetching the next slot ahead, the second shot saving over the first's
 * slots): the image of the same store on the device, bit for bit. */
static void test_formats_in_pinned_memory(void **state) {
  (void)state;
  static const char *const equations[] = {"iso", "tti"};
  static const char *const formats[] = {"rtm.snapshot_precision=fp16",
                                        "rtm.snapshot_precision=zfp"};
  for (size_t e = 0; e < sizeof equations / sizeof equations[0]; ++e)
    for (size_t f = 0; f < sizeof formats / sizeof formats[0]; ++f) {
      const char *on_device[] = {"rtm.reconstruction=snapshots", formats[f], NULL};
      const char *in_pinned[] = {"rtm.reconstruction=snapshots", formats[f],
                                 "memory.imaging=pinned", NULL};
      survey_t device, pinned;
      migrate_on_grid("cuda", equations[e], grid_n, on_device, &device);
      migrate_on_grid("cuda", equations[e], grid_n, in_pinned, &pinned);
      const size_t cells = (size_t)grid_n[0] * grid_n[1] * grid_n[2];
      printf("%s, %s: device and pinned snapshots\n", equations[e], formats[f]);
      assert_memory_equal(pinned.image, device.image, cells * sizeof *device.image);
      assert_memory_equal(pinned.illumination, device.illumination,
                          cells * sizeof *device.illumination);
      survey_release(&device);
      survey_release(&pinned);
    }
}

/* The gathers read a store of fp32 volumes on the device in place, four imaging steps a
 * pass, and copy S aside where the store's volume is rewritten (pinned slots fetched into a
 * staging volume, fp16 unpacked into one): pinned against the device's store, bit for bit,
 * iso and tti; fp16 on cuda against the cpu backend's, iso. */
static void test_gathers_of_each_store(void **state) {
  (void)state;
  static const char *const equations[] = {"iso", "tti"};
  const char *const gathers[] = {"rtm.offset_lags=4", "rtm.cip_x_step=8", "rtm.cip_y_step=8"};
  for (size_t e = 0; e < sizeof equations / sizeof equations[0]; ++e) {
    const char *on_device[] = {"rtm.reconstruction=snapshots", gathers[0], gathers[1], gathers[2],
                               NULL};
    const char *in_pinned[] = {"rtm.reconstruction=snapshots",
                               "memory.imaging=pinned",
                               gathers[0],
                               gathers[1],
                               gathers[2],
                               NULL};
    survey_t device, pinned;
    migrate_on_grid("cuda", equations[e], grid_n, on_device, &device);
    migrate_on_grid("cuda", equations[e], grid_n, in_pinned, &pinned);
    const size_t count = rtm_gather_plan_cells(&device.gather_plan, device.grid.nz_local);
    printf("%s: gathers of fp32 snapshots in device and in pinned memory\n", equations[e]);
    assert_memory_equal(pinned.gathers, device.gathers, count * sizeof *device.gathers);
    survey_release(&device);
    survey_release(&pinned);
  }
  const char *fp16[] = {"rtm.reconstruction=snapshots",
                        "rtm.snapshot_precision=fp16",
                        gathers[0],
                        gathers[1],
                        gathers[2],
                        NULL};
  survey_t cpu, cuda;
  migrate_on_grid("cpu", "iso", grid_n, fp16, &cpu);
  migrate_on_grid("cuda", "iso", grid_n, fp16, &cuda);
  const double l2 = rtm_test_relative_l2(
      cuda.gathers, cpu.gathers, rtm_gather_plan_cells(&cpu.gather_plan, cpu.grid.nz_local));
  printf("iso, fp16 snapshots: gathers, cuda against cpu, relative L2 %.3e\n", l2);
  assert_true(l2 <= 1e-5);
  survey_release(&cpu);
  survey_release(&cuda);
}

RTM_TEST_MAIN_CUDA("test_migration_gpu", NULL, NULL, cmocka_unit_test(test_iso),
                   cmocka_unit_test(test_vti), cmocka_unit_test(test_tti),
                   cmocka_unit_test(test_snapshots_in_pinned_memory),
                   cmocka_unit_test(test_formats_in_pinned_memory),
                   cmocka_unit_test(test_gathers_of_each_store))
