/* config_test_util.h - helpers for the config tests: stderr capture, deck paths, temporary
 * decks. Include after <cmocka.h>. */
#ifndef RTM_CONFIG_TEST_UTIL_H
#define RTM_CONFIG_TEST_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef RTM3D_TEST_DATA_DIR
#define RTM3D_TEST_DATA_DIR "tests/data"
#endif

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

#endif
