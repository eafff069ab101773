/* config_test_util.h - helpers for the config tests: stderr capture, deck paths, temporary
 * decks, and the checks of the keys that choose how a run executes.
 * Include after <cmocka.h>. */
#ifndef RTM_CONFIG_TEST_UTIL_H
#define RTM_CONFIG_TEST_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef RTM3D_TEST_DATA_DIR
#define RTM3D_TEST_DATA_DIR "tests/data"
#endif

#include "rtm_config.h"
#include "rtm_test_capture.h"

/* Path of a deck in tests/data/config (ctest sets RTM3D_TEST_DATA). */
static inline const char *deck_path(const char *name, char *buf, size_t size) {
  const char *root = getenv("RTM3D_TEST_DATA");
  snprintf(buf, size, "%s/config/%s", root && root[0] ? root : RTM3D_TEST_DATA_DIR, name);
  return buf;
}

/* Writes `length` bytes of text to a new file in the working directory; returns its path. */
static inline void write_temp_deck(const char *text, size_t length, char *path, size_t size) {
  snprintf(path, size, "cfgdeck_XXXXXX");
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  FILE *file = fdopen(fd, "wb");
  assert_non_null(file);
  assert_int_equal(fwrite(text, 1, length, file), length);
  assert_int_equal(fclose(file), 0);
}

/* What the [backend], [kernel], [memory], [bench] and [traces] keys should hold, by field. */
typedef struct {
  const char *backend;
  int device;
  const char *halo;
  int stages, zblock, block_x, block_y;
  const char *strategy, *wavefield, *model, *imaging;
  int require_compression;
  rtm_precision_t model_precision;
  int warmup_steps, bench_steps;
  const char *pipeline;
} run_keys_t;

/* Each of those keys landed in the struct field its name promises. */
static inline void assert_run_keys(const rtm_config_t *cfg, const run_keys_t *want) {
  assert_string_equal(cfg->backend.name, want->backend);
  assert_int_equal(cfg->backend.device, want->device);
  assert_string_equal(cfg->kernel.halo, want->halo);
  assert_int_equal(cfg->kernel.stages, want->stages);
  assert_int_equal(cfg->kernel.zblock, want->zblock);
  assert_int_equal(cfg->kernel.block[0], want->block_x);
  assert_int_equal(cfg->kernel.block[1], want->block_y);
  assert_string_equal(cfg->memory.strategy, want->strategy);
  assert_string_equal(cfg->memory.wavefield, want->wavefield);
  assert_string_equal(cfg->memory.model, want->model);
  assert_string_equal(cfg->memory.imaging, want->imaging);
  assert_int_equal(cfg->memory.require_compression, want->require_compression);
  assert_int_equal(cfg->memory.model_precision, want->model_precision);
  assert_int_equal(cfg->bench.warmup_steps, want->warmup_steps);
  assert_int_equal(cfg->bench.steps, want->bench_steps);
  assert_string_equal(cfg->traces.pipeline, want->pipeline);
}

#endif
