/* The status module's text helpers: rtm_utf8_length, rtm_escape_text (what may reach a
 * terminal from a file), the bounded reading of a user's text file (rtm_text_open,
 * rtm_text_read_line) and warnings said once a run (rtm_log_warning). */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "config_test_util.h"
#include "rtm_status.h"
#include "rtm_test_capture.h"
#include "rtm_test_main.h"

/* The length of the character at the start, at the ends of each range of RFC 3629's table,
 * and 0 just past them. */
static void test_utf8_length(void **state) {
  (void)state;
  static const struct {
    const char *text;
    size_t length;
  } cases[] = {{"", 1},
               {"\x7f", 1},
               {"\xc2\x80", 2},
               {"\xdf\xbf", 2},
               {"\xc1\xbf", 0},
               {"\xc2", 0},
               {"\xc2x", 0},
               {"\xe0\xa0\x80", 3},
               {"\xe0\x9f\xbf", 0},
               {"\xed\x9f\xbf", 3},
               {"\xed\xa0\x80", 0},
               {"\xef\xbf\xbf", 3},
               {"\xf0\x90\x80\x80", 4},
               {"\xf0\x8f\xbf\xbf", 0},
               {"\xf4\x8f\xbf\xbf", 4},
               {"\xf4\x90\x80\x80", 0},
               {"\xf5\x80\x80\x80", 0},
               {"\x80", 0},
               {"\xe2\x82", 0}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i)
    if (rtm_utf8_length(cases[i].text) != cases[i].length)
      fail_msg("case %zu: length %zu, expected %zu", i, rtm_utf8_length(cases[i].text),
               cases[i].length);
}

static void assert_escaped(const char *in, const char *want) {
  char out[256];
  rtm_escape_text(in, out, sizeof out);
  if (strcmp(out, want) != 0)
    fail_msg("escape of \"%s\" gave \"%s\", expected \"%s\"", in, out, want);
}

/* C0 controls (tab kept; a newline would start a forged line), DEL and C1 controls, raw or as
 * UTF-8, are escaped; so is every byte that is not part of well-formed UTF-8 (a lone continuation,
 * a cut sequence, an overlong form, a surrogate, a code point above U+10FFFF, 0xf5-0xff). */
static void test_escape_controls_and_bad_utf8(void **state) {
  (void)state;
  assert_escaped("a\001b\033[31m\177\n\t", "a\\x01b\\x1b[31m\\x7f\\x0a\t");
  assert_escaped("\x80 \x9b \x9f", "\\x80 \\x9b \\x9f");                            /* C1, raw */
  assert_escaped("\xc2\x80 \xc2\x9b \xc2\x9f", "\\xc2\\x80 \\xc2\\x9b \\xc2\\x9f"); /* as UTF-8 */
  assert_escaped("\xbf", "\\xbf");                         /* a lone continuation */
  assert_escaped("\xe2\x82", "\\xe2\\x82");                /* a cut sequence, at the end */
  assert_escaped("\xe2\x82x", "\\xe2\\x82x");              /* ... in the middle */
  assert_escaped("\xc0\xaf \xe0\x80\xaf \xf0\x80\x80\xaf", /* overlong '/' */
                 "\\xc0\\xaf \\xe0\\x80\\xaf \\xf0\\x80\\x80\\xaf");
  assert_escaped("\xed\xa0\x80", "\\xed\\xa0\\x80");          /* surrogate U+D800 */
  assert_escaped("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"); /* U+110000 */
  assert_escaped("\xf5\xff\xfe", "\\xf5\\xff\\xfe");
  assert_escaped("caf\xe9", "caf\\xe9"); /* Latin-1, not UTF-8 */
}

/* Well-formed UTF-8 of every length, at the ends of each range, passes byte for byte. */
static void test_escape_keeps_utf8(void **state) {
  (void)state;
  static const char *const kept[] = {
      "plain ascii ~",
      "\xc2\xa0 \xc3\xa9 \xdf\xbf",                         /* U+00A0, e acute, U+07FF */
      "\xe0\xa0\x80 \xe2\x82\xac",                          /* U+0800, the euro sign */
      "\xed\x9f\xbf \xee\x80\x80 \xef\xbf\xbf",             /* around the surrogates */
      "\xf0\x90\x80\x80 \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf", /* U+10000, emoji, U+10FFFF */
      "\xc2\xb5s, 3\xc3\x97"
      "3, \xce\xbb"}; /* micro, times, lambda: what a message may print itself */
  for (size_t i = 0; i < sizeof kept / sizeof kept[0]; ++i)
    assert_escaped(kept[i], kept[i]);
}

/* A short output ends at a whole character or escape, always NUL-terminated. */
static void test_escape_cut_at_boundaries(void **state) {
  (void)state;
  char out[8];
  rtm_escape_text("ab\033cd", out, 6); /* "ab\x1b" needs 7 bytes with its NUL */
  assert_string_equal(out, "ab");
  rtm_escape_text("ab\033cd", out, 7);
  assert_string_equal(out, "ab\\x1b");
  rtm_escape_text("a\xe2\x82\xac", out, 4); /* the euro's 3 bytes do not fit after "a" */
  assert_string_equal(out, "a");
  rtm_escape_text("a\xe2\x82\xac", out, 5);
  assert_string_equal(out, "a\xe2\x82\xac");
  rtm_escape_text("xyz", out, 1);
  assert_string_equal(out, "");
}

static void write_bytes(const char *path, const char *bytes, size_t length) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(bytes, 1, length, f), length);
  assert_int_equal(fclose(f), 0);
}

/* Reads path's lines through a buffer of `size` bytes; returns the status of the first
 * failing read (RTM_OK at the end), the lines read joined by '|' in joined. */
static int read_all(const char *path, size_t size, char *joined, size_t joined_size, char *why,
                    size_t why_size) {
  FILE *f = NULL;
  long long bytes = -1;
  char line[64];
  int got = 1, status;
  assert_true(size <= sizeof line);
  assert_int_equal(rtm_text_open(path, &f, &bytes, why, why_size), RTM_OK);
  joined[0] = '\0';
  while ((status = rtm_text_read_line(f, line, size, &got, why, why_size)) == RTM_OK && got) {
    strncat(joined, line, joined_size - strlen(joined) - 1);
    strncat(joined, "|", joined_size - strlen(joined) - 1);
  }
  fclose(f);
  return status;
}

/* Lines end in "\n" or "\r\n" (the "\r" dropped), the last may lack its end; a line of
 * size - 1 bytes fits, with or without "\r"; one byte more is refused, never cut in two. */
static void test_read_line_bounds(void **state) {
  (void)state;
  const char *path = "test_status_text.txt";
  char joined[256], why[256];
  static const char ends[] = "one\r\ntwo\n\nthree \r\nlast";
  write_bytes(path, ends, sizeof ends - 1);
  assert_int_equal(read_all(path, 16, joined, sizeof joined, why, sizeof why), RTM_OK);
  assert_string_equal(joined, "one|two||three |last|");

  write_bytes(path, "12345678\n1234567\r\n12345678", 26);
  assert_int_equal(read_all(path, 9, joined, sizeof joined, why, sizeof why), RTM_OK);
  assert_string_equal(joined, "12345678|1234567|12345678|");
  assert_int_equal(read_all(path, 8, joined, sizeof joined, why, sizeof why), RTM_ERR_INPUT);
  assert_string_equal(joined, "");
  assert_string_equal(why, "a line longer than 7 bytes");

  write_bytes(path, "12345678\r\nx\n", 12); /* 8 bytes and "\r\n": fits a 9-byte buffer */
  assert_int_equal(read_all(path, 9, joined, sizeof joined, why, sizeof why), RTM_OK);
  assert_string_equal(joined, "12345678|x|");
  write_bytes(path, "12345678\rx\n", 11); /* a "\r" inside the line counts */
  assert_int_equal(read_all(path, 9, joined, sizeof joined, why, sizeof why), RTM_ERR_INPUT);

  write_bytes(path, "", 0);
  assert_int_equal(read_all(path, 9, joined, sizeof joined, why, sizeof why), RTM_OK);
  assert_string_equal(joined, "");
  remove(path);
}

/* A NUL byte is refused at its column: the line is not read as text cut short. */
static void test_read_line_refuses_nul(void **state) {
  (void)state;
  const char *path = "test_status_text.txt";
  char joined[256], why[256];
  write_bytes(path, "ok\n[gr\0id]\nnx = 1\n", 18);
  assert_int_equal(read_all(path, 32, joined, sizeof joined, why, sizeof why), RTM_ERR_INPUT);
  assert_string_equal(joined, "ok|");
  assert_string_equal(why, "a NUL byte at column 4: binary data (or UTF-16), not text");
  remove(path);
}

/* Only a regular file opens; the others are named, and a FIFO with no writer is refused
 * at once rather than waited on (this test would hang, and time out, otherwise). */
static void test_open_refuses_special_files(void **state) {
  (void)state;
  FILE *f = (FILE *)1;
  long long bytes = -1;
  char why[256];
  assert_int_equal(rtm_text_open(".", &f, &bytes, why, sizeof why), RTM_ERR_INPUT);
  assert_null(f);
  assert_string_equal(why, "a directory, not a text file");
  assert_int_equal(rtm_text_open("/dev/zero", &f, &bytes, why, sizeof why), RTM_ERR_INPUT);
  assert_string_equal(why, "a character device, not a text file");
  const char *fifo = "test_status_text.fifo";
  remove(fifo);
  assert_int_equal(mkfifo(fifo, 0600), 0);
  assert_int_equal(rtm_text_open(fifo, &f, &bytes, why, sizeof why), RTM_ERR_INPUT);
  remove(fifo);
  assert_string_equal(why, "a FIFO (a pipe), not a text file");
  assert_int_equal(rtm_text_open("no/such/file", &f, &bytes, why, sizeof why), RTM_ERR_INPUT);
  assert_string_equal(why, "No such file or directory");

  const char *path = "test_status_text.txt";
  write_bytes(path, "12345", 5);
  assert_int_equal(rtm_text_open(path, &f, &bytes, why, sizeof why), RTM_OK);
  assert_non_null(f);
  assert_int_equal(bytes, 5);
  fclose(f);
  assert_int_equal(rtm_text_open(path, &f, NULL, why, sizeof why), RTM_OK);
  fclose(f);
  remove(path);
}

/* How many lines of text start with `line` (each ends in a newline). */
static int count_lines(const char *text, const char *line) {
  int count = 0;
  const size_t length = strlen(line);
  for (const char *at = text; at && *at; at = strchr(at, '\n'), at = at ? at + 1 : NULL)
    count += strncmp(at, line, length) == 0 && at[length] == '\n';
  return count;
}

/* A warning met again (a check each propagator repeats) prints once; one that differs in a
 * value is another warning and prints too; errors and info lines always print; under MPI
 * a rank other than 0 prints no warning (rank 0 says what every rank would). */
static void test_warning_once_a_run(void **state) {
  (void)state;
  capture_t capture;
  capture_begin(&capture);
  for (int k = 0; k < 4; ++k)
    rtm_log_warning("time dispersion: off by about %d%%", 9);
  rtm_log_warning("time dispersion: off by about %d%%", 12);
  rtm_log_warning("time dispersion: off by about %d%%", 9);
  rtm_log_info("a note");
  rtm_log_info("a note");
  rtm_log_error("an error");
  rtm_log_error("an error");
  const char *text = capture_end(&capture);
  assert_int_equal(count_lines(text, "rtm3d: warning: time dispersion: off by about 9%"), 1);
  assert_int_equal(count_lines(text, "rtm3d: warning: time dispersion: off by about 12%"), 1);
  assert_int_equal(count_lines(text, "rtm3d: a note"), 2);
  assert_int_equal(count_lines(text, "rtm3d: error: an error"), 2);

  /* forgotten (each capture starts afresh): said again */
  capture_begin(&capture);
  rtm_log_warning("time dispersion: off by about %d%%", 9);
  text = capture_end(&capture);
  assert_int_equal(count_lines(text, "rtm3d: warning: time dispersion: off by about 9%"), 1);

  /* rank 1 of 2 says none, and does not use up rank 0's (each process its own table) */
  capture_begin(&capture);
  rtm_log_set_rank(1, 2);
  rtm_log_warning("a warning on rank 1");
  rtm_log_set_rank(0, 1);
  rtm_log_warning("a warning on rank 1");
  text = capture_end(&capture);
  assert_int_equal(count_lines(text, "rtm3d: warning: a warning on rank 1"), 1);

  /* more distinct warnings than the table holds: none is hidden */
  capture_begin(&capture);
  for (int k = 0; k < 300; ++k)
    rtm_log_warning("w%d", k);
  rtm_log_warning("w%d", 299);
  text = capture_end(&capture);
  assert_int_equal(count_lines(text, "rtm3d: warning: w0"), 1);
  assert_int_equal(count_lines(text, "rtm3d: warning: w299"), 2);
}

RTM_TEST_MAIN(cmocka_unit_test(test_utf8_length),
              cmocka_unit_test(test_escape_controls_and_bad_utf8),
              cmocka_unit_test(test_escape_keeps_utf8),
              cmocka_unit_test(test_escape_cut_at_boundaries),
              cmocka_unit_test(test_read_line_bounds), cmocka_unit_test(test_read_line_refuses_nul),
              cmocka_unit_test(test_open_refuses_special_files),
              cmocka_unit_test(test_warning_once_a_run))
