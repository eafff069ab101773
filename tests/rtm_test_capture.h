/* rtm_test_capture.h - stderr redirected into a temporary file for the length of a call, so
 * that a test can check what the library told the user. rtm_log_* write to the stderr
 * stream, which is unbuffered and so lands on descriptor 2 at once; the warnings already
 * printed are forgotten, so that each capture sees its own. Include after <cmocka.h>. */
#ifndef RTM_TEST_CAPTURE_H
#define RTM_TEST_CAPTURE_H

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "rtm_status.h"

#define RTM_TEST_CAPTURE_MAX 32768

typedef struct {
  FILE *file;
  int saved_fd;
  char text[RTM_TEST_CAPTURE_MAX];
} capture_t;

static inline void capture_begin(capture_t *capture) {
  fflush(stderr);
  rtm_log_forget_warnings(); /* a warning said once a run: again in each capture */
  capture->file = tmpfile();
  assert_non_null(capture->file);
  capture->saved_fd = dup(STDERR_FILENO);
  assert_true(capture->saved_fd >= 0);
  assert_true(dup2(fileno(capture->file), STDERR_FILENO) >= 0);
}

/* Restores stderr, keeps what was written in capture->text and shows it in the test log. */
static inline const char *capture_end(capture_t *capture) {
  fflush(stderr);
  dup2(capture->saved_fd, STDERR_FILENO);
  close(capture->saved_fd);
  rewind(capture->file);
  size_t n = fread(capture->text, 1, sizeof capture->text - 1, capture->file);
  capture->text[n] = '\0';
  fclose(capture->file);
  printf("--- captured stderr ---\n%s-----------------------\n", capture->text);
  return capture->text;
}

/* capture_end, passing `value` through (for captured). */
static inline int capture_end_with(capture_t *capture, int value) {
  capture_end(capture);
  return value;
}

/* The value of `call` (an int, such as a status) evaluated with stderr captured in *capture
 * (capture->text): the comma operator begins the capture before the call, and the call, an
 * argument of capture_end_with, is evaluated before that ends it. */
#define captured(capture, call) (capture_begin(capture), capture_end_with((capture), (call)))

static inline void assert_contains(const char *text, const char *needle) {
  if (!strstr(text, needle)) {
    print_error("expected to find \"%s\" in:\n%s\n", needle, text);
    fail();
  }
}

#endif
