/* What a deck reader will read: a regular file of at most 1 MiB, lines of less than 4096
 * bytes, no NUL byte, and at most 20 errors before it stops; a careless file (binary, a
 * FIFO, a CSV) is refused quickly with one clear message, not read for ever or echoed in
 * thousands of lines. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "config_test_util.h"
#include "rtm_config.h"
#include "rtm_status.h"
#include "rtm_test_main.h"

static int count_lines(const char *text) {
  int lines = 0;
  for (const char *c = text; *c; ++c)
    lines += *c == '\n';
  return lines;
}

/* Loads text as a deck; returns the status, stderr in capture->text. */
static int load_text(const char *text, size_t length, capture_t *capture, char *path, size_t size) {
  rtm_config_t cfg;
  write_temp_deck(text, length, path, size);
  int status = captured(capture, rtm_config_load(path, &cfg));
  remove(path);
  return status;
}

/* A NUL is refused where it stands (line and column), not read as the end of the line:
 * "[gr\0id]" is not "[gr", and "dx = 1\00" is not dx = 1. */
static void test_nul_refused_at_line_and_column(void **state) {
  (void)state;
  char path[64], needle[256];
  capture_t capture;
  static const char header[] = "# a deck\n[gr\0id]\nnx = 30\n";
  assert_int_equal(load_text(header, sizeof header - 1, &capture, path, sizeof path),
                   RTM_ERR_CONFIG);
  snprintf(needle, sizeof needle, "%s:2: a NUL byte at column 4: binary data (or UTF-16), not text",
           path);
  assert_contains(capture.text, needle);
  assert_int_equal(count_lines(capture.text), 1);

  static const char value[] = "[grid]\ndx = 1\0"
                              "0\n";
  assert_int_equal(load_text(value, sizeof value - 1, &capture, path, sizeof path), RTM_ERR_CONFIG);
  snprintf(needle, sizeof needle, "%s:2: a NUL byte at column 7", path);
  assert_contains(capture.text, needle);
}

/* A deck saved as UTF-16 (a Windows editor) is all NULs between its letters. */
static void test_utf16_deck_refused(void **state) {
  (void)state;
  char path[64], needle[256];
  capture_t capture;
  static const char utf16[] = "\xff\xfe[\0g\0r\0i\0d\0]\0\n\0";
  assert_int_equal(load_text(utf16, sizeof utf16 - 1, &capture, path, sizeof path), RTM_ERR_CONFIG);
  snprintf(needle, sizeof needle, "%s:1: a NUL byte at column 4: binary data (or UTF-16)", path);
  assert_contains(capture.text, needle);
}

/* A line of 4095 bytes is read whole (a long comment after a value); a longer one is
 * refused with its line number (it was read at any length: a binary file's line is all of
 * it). */
static void test_line_cap(void **state) {
  (void)state;
  enum { LINE = 4095 };
  char path[64], needle[256];
  capture_t capture;
  char *text = malloc(LINE + 64);
  assert_non_null(text);
  int head = snprintf(text, 64, "[grid]\nnx = 31 ;");
  memset(text + head, 'c', LINE - (head - 7)); /* line 2 holds LINE bytes */
  int length = head + LINE - (head - 7);
  text[length++] = '\n';
  rtm_config_t cfg;
  write_temp_deck(text, (size_t)length, path, sizeof path);
  assert_int_equal(captured(&capture, rtm_config_load(path, &cfg)), RTM_OK);
  remove(path);
  assert_int_equal(cfg.grid.n[0], 31);

  /* Five bytes more. */
  memcpy(text + length - 1, "c = 1\n", 6);
  length += 5;
  assert_int_equal(load_text(text, (size_t)length, &capture, path, sizeof path), RTM_ERR_CONFIG);
  snprintf(needle, sizeof needle, "%s:2: a line longer than 4095 bytes", path);
  assert_contains(capture.text, needle);
  assert_int_equal(count_lines(capture.text), 1);
  free(text);
}

/* A file that is no deck (here 5000 lines of a CSV) stops at 20 errors with one line
 * saying so, instead of thousands of lines. */
static void test_error_cap(void **state) {
  (void)state;
  char path[64], needle[256];
  capture_t capture;
  size_t size = 5000 * 16 + 1, length = 0;
  char *text = malloc(size);
  assert_non_null(text);
  for (int i = 0; i < 5000; ++i)
    length += (size_t)snprintf(text + length, size - length, "%d,%d,%d\n", i, 2 * i, 3 * i);
  assert_int_equal(load_text(text, length, &capture, path, sizeof path), RTM_ERR_CONFIG);
  free(text);
  snprintf(needle, sizeof needle, "%s:20: malformed line \"19,38,57\"", path);
  assert_contains(capture.text, needle);
  snprintf(needle, sizeof needle,
           "%s: 20 errors by line 20; stopped reading there (is this a config deck?)", path);
  assert_contains(capture.text, needle);
  assert_int_equal(count_lines(capture.text), 21);
  /* Fewer errors than the cap are all shown, with their count. */
  static const char few[] = "[grid]\nnx = a\nny = b\nnz = c\n";
  assert_int_equal(load_text(few, sizeof few - 1, &capture, path, sizeof path), RTM_ERR_CONFIG);
  snprintf(needle, sizeof needle, "%s: 3 errors in the config file", path);
  assert_contains(capture.text, needle);
  assert_int_equal(count_lines(capture.text), 4);
}

/* Over 1 MiB is refused before a byte is parsed, naming the size; 1 MiB exactly of
 * comments is still a deck. */
static void test_size_cap(void **state) {
  (void)state;
  char path[64], needle[256];
  capture_t capture;
  size_t size = (1u << 20) + 1;
  char *text = malloc(size);
  assert_non_null(text);
  memset(text, '#', size);
  for (size_t i = 63; i < size; i += 64)
    text[i] = '\n'; /* lines of comment */
  assert_int_equal(load_text(text, size - 1, &capture, path, sizeof path), RTM_OK);
  assert_int_equal(load_text(text, size, &capture, path, sizeof path), RTM_ERR_INPUT);
  free(text);
  snprintf(needle, sizeof needle,
           "%s: cannot read config file: 1048577 bytes (1.0 MiB), more than a deck may hold "
           "(1 MiB)",
           path);
  assert_contains(capture.text, needle);
  assert_int_equal(count_lines(capture.text), 1);
}

/* A FIFO is refused at once (opening it for reading would wait for a writer for ever);
 * a directory and a device are named for what they are. */
static void test_special_files_refused(void **state) {
  (void)state;
  rtm_config_t cfg;
  capture_t capture;
  const char *fifo = "test_config_bounds.fifo";
  remove(fifo);
  assert_int_equal(mkfifo(fifo, 0600), 0);
  int status = captured(&capture, rtm_config_load(fifo, &cfg));
  remove(fifo);
  assert_int_equal(status, RTM_ERR_INPUT);
  assert_contains(capture.text,
                  "test_config_bounds.fifo: cannot open config file: a FIFO (a pipe), not a text "
                  "file");
  assert_int_equal(captured(&capture, rtm_config_load(".", &cfg)), RTM_ERR_INPUT);
  assert_contains(capture.text, ".: cannot open config file: a directory, not a text file");
  assert_int_equal(captured(&capture, rtm_config_load("/dev/zero", &cfg)), RTM_ERR_INPUT);
  assert_contains(capture.text,
                  "/dev/zero: cannot open config file: a character device, not a text file");
}

RTM_TEST_MAIN(cmocka_unit_test(test_nul_refused_at_line_and_column),
              cmocka_unit_test(test_utf16_deck_refused), cmocka_unit_test(test_line_cap),
              cmocka_unit_test(test_error_cap), cmocka_unit_test(test_size_cap),
              cmocka_unit_test(test_special_files_refused))
