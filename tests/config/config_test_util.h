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

#define CAPTURE_MAX 32768

/* stderr redirected into a temporary file for the length of one call: rtm_log_error writes
 * to the stderr stream, which is unbuffered and so lands on descriptor 2 at once. */
typedef struct {
  FILE *file;
  int saved_fd;
  char text[CAPTURE_MAX];
} capture_t;

static inline void capture_begin(capture_t *capture) {
  fflush(stderr);
  capture->file = tmpfile();
  assert_non_null(capture->file);
  capture->saved_fd = dup(2);
  assert_true(capture->saved_fd >= 0);
  assert_true(dup2(fileno(capture->file), 2) >= 0);
}

/* Restores stderr, keeps what was written in capture->text and shows it in the test log. */
static inline const char *capture_end(capture_t *capture) {
  fflush(stderr);
  dup2(capture->saved_fd, 2);
  close(capture->saved_fd);
  rewind(capture->file);
  size_t n = fread(capture->text, 1, sizeof capture->text - 1, capture->file);
  capture->text[n] = '\0';
  fclose(capture->file);
  printf("--- captured stderr ---\n%s-----------------------\n", capture->text);
  return capture->text;
}

static inline void assert_contains(const char *text, const char *needle) {
  if (!strstr(text, needle)) {
    print_error("expected to find \"%s\" in:\n%s\n", needle, text);
    fail();
  }
}

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
