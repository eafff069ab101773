/* rtm_test_io.h - helpers for the io and cli tests: capturing what a call prints on stderr or
 * stdout, fresh random inputs, and small files. */
#ifndef RTM_TEST_IO_H
#define RTM_TEST_IO_H

#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rtm_test_random.h" /* the io tests' random inputs */

typedef struct {
  int fd; /* 1 or 2 */
  int saved;
  char path[64];
} capture_t;

/* Redirects fd (1 = stdout, 2 = stderr) into a temporary file until capture_end. */
static inline void capture_begin(capture_t *c, int fd) {
  fflush(stdout);
  fflush(stderr);
  c->fd = fd;
  snprintf(c->path, sizeof c->path, "capture_%d_XXXXXX", (int)getpid());
  int tmp = mkstemp(c->path);
  if (tmp < 0) abort();
  c->saved = dup(fd);
  dup2(tmp, fd);
  close(tmp);
}

/* Restores the stream; returns what was written (malloc'd, caller frees) and echoes it to
 * the real stream so that a failing test still shows it. */
static inline char *capture_end(capture_t *c) {
  fflush(stdout);
  fflush(stderr);
  dup2(c->saved, c->fd);
  close(c->saved);
  FILE *f = fopen(c->path, "rb");
  char *text = NULL;
  size_t size = 0;
  if (f) {
    fseek(f, 0, SEEK_END);
    size = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    text = malloc(size + 1);
    if (text) text[fread(text, 1, size, f)] = '\0';
    fclose(f);
  }
  remove(c->path);
  if (text) {
    FILE *real = c->fd == 1 ? stdout : stderr;
    fputs(text, real);
    fflush(real);
  }
  return text;
}

static inline int file_exists(const char *path) {
  struct stat info;
  return stat(path, &info) == 0;
}

static inline int contains(const char *text, const char *needle) {
  return text && needle && strstr(text, needle) != NULL;
}

/* Runs `call` with stderr captured; checks its status and that the messages name `needle`
 * (for files that include <cmocka.h> before this header). */
#define assert_call_refused(call, code, needle)                                                    \
  do {                                                                                             \
    capture_t capture_;                                                                            \
    capture_begin(&capture_, 2);                                                                   \
    const int status_ = (call);                                                                    \
    char *text_ = capture_end(&capture_);                                                          \
    assert_int_equal(status_, (code));                                                             \
    if (!contains(text_, (needle))) fail_msg("expected \"%s\" in: %s", (needle), text_);           \
    free(text_);                                                                                   \
  } while (0)

#endif
