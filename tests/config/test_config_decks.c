/* Loading INI decks: every value type and layout freedom, the echo read back to the same
 * struct, and bad decks that must fail naming the file's line and the key. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "config_test_util.h"
#include "rtm_config.h"
#include "rtm_status.h"
#include "rtm_test_main.h"

/* Decimal text in a deck parses to the nearest double, and the same text in the assertion
 * compiles to that same double, so doubles compare exactly. */
static void test_good_deck_every_type(void **state) {
  (void)state;
  char path[1024];
  rtm_config_t cfg;
  assert_int_equal(rtm_config_load(deck_path("good_all_types.ini", path, sizeof path), &cfg),
                   RTM_OK);
  assert_string_equal(cfg.path, path);
  assert_int_equal(cfg.grid.n[0], 64);
  assert_int_equal(cfg.grid.n[1], 48);
  assert_int_equal(cfg.grid.n[2], 32); /* tab-indented, inline ';' comment */
  assert_true(cfg.grid.spacing_m[0] == 12.5);
  assert_true(cfg.grid.spacing_m[1] == 12.5); /* 1.25e1 */
  assert_true(cfg.grid.spacing_m[2] == 10.0); /* "dz: 10", inih's ':' separator */
  assert_true(cfg.grid.origin_m[0] == -100.5);
  assert_true(cfg.grid.origin_m[1] == -100.0);
  assert_true(cfg.grid.origin_m[2] == 300.0);
  assert_int_equal(cfg.time.steps, 250);
  assert_true(cfg.time.dt_s == 0.001);
  assert_true(cfg.time.cfl == 0.3);
  assert_string_equal(cfg.model.file, "");
  assert_true(cfg.model.vp_m_s == 3000.0);
  assert_true(cfg.model.epsilon == 0.2);
  assert_true(cfg.model.delta == 0.1);
  assert_true(cfg.model.theta_deg == 30.0);
  assert_true(cfg.model.phi_deg == -45.0);
  assert_int_equal(cfg.physics.equation, RTM_EQUATION_TTI); /* "TTI": choices ignore case */
  assert_true(cfg.physics.sigma == 0.5);
  assert_true(isnan(cfg.source.position_m[0]));
  assert_true(cfg.source.position_m[1] == 200.0);
  assert_true(isnan(cfg.source.position_m[2])); /* "AUTO" */
  assert_true(cfg.source.frequency_hz == 20.0);
  assert_true(cfg.source.delay_s == 0.08);
  assert_true(cfg.source.amplitude == -2.5);
  assert_int_equal(cfg.receivers.layout, RTM_RECEIVERS_PLANE);
  assert_true(cfg.receivers.z_m == 350.0);
  assert_true(isnan(cfg.receivers.x_first_m));
  assert_true(cfg.receivers.x_step_m == 25.0);
  assert_int_equal(cfg.receivers.x_count, 10);
  assert_true(cfg.receivers.y_first_m == -50.0);
  assert_true(isnan(cfg.receivers.y_step_m));
  assert_int_equal(cfg.receivers.y_count, 0);
  assert_int_equal(cfg.boundary.kind, RTM_BOUNDARY_SPONGE);
  assert_int_equal(cfg.boundary.width_cells, 12);
  assert_true(cfg.boundary.reflection == 1e-4);
  assert_int_equal(cfg.snapshots.every_steps, 25);
  assert_string_equal(cfg.output.dir, "runs/with space "); /* quotes keep the space */
  assert_string_equal(cfg.output.name, "shot_001");
  assert_true(cfg.output.trace_dt_s == 0.004);
  assert_run_keys(&cfg, &(run_keys_t){.backend = "cpu", /* "CPU": stored as the canonical choice */
                                      .device = 3,
                                      .halo = "tma",
                                      .stages = 3,
                                      .zblock = 16,
                                      .block_x = 64,
                                      .block_y = 8,
                                      .strategy = "vmm",
                                      .wavefield = "vmm-compressed",
                                      .model = "managed",
                                      .imaging = "",
                                      .require_compression = 1,
                                      .model_precision = RTM_PRECISION_FP32, /* not in the deck */
                                      .warmup_steps = 0,
                                      .bench_steps = 5,
                                      .pipeline = "streams"});
  assert_int_equal(rtm_config_validate(&cfg), RTM_OK);
}

/* Keys a deck leaves out keep their defaults; loading starts from the defaults, not from
 * what the struct held before. */
static void test_partial_deck_keeps_defaults(void **state) {
  (void)state;
  static const char text[] = "[grid]\nnx = 77\n";
  char path[64];
  rtm_config_t cfg, defaults;
  write_temp_deck(text, sizeof text - 1, path, sizeof path);
  rtm_config_defaults(&defaults);
  memset(&cfg, 0x5a, sizeof cfg);
  assert_int_equal(rtm_config_load(path, &cfg), RTM_OK);
  remove(path);
  assert_int_equal(cfg.grid.n[0], 77);
  assert_int_equal(cfg.grid.n[1], defaults.grid.n[1]);
  assert_true(cfg.time.cfl == defaults.time.cfl);
  assert_true(isnan(cfg.time.dt_s));
  assert_string_equal(cfg.output.dir, "out");
}

/* Windows line ends, a UTF-8 byte-order mark, an empty file and a line longer than inih's
 * 200-byte buffer (a long model path must still work). */
static void test_line_ends_bom_and_long_lines(void **state) {
  (void)state;
  char path[64];
  rtm_config_t cfg;

  static const char crlf[] = "\xEF\xBB\xBF[grid]\r\nnx = 21\r\n  ny = 22\r\n[model]\r\nfile = \r\n";
  write_temp_deck(crlf, sizeof crlf - 1, path, sizeof path);
  assert_int_equal(rtm_config_load(path, &cfg), RTM_OK);
  remove(path);
  assert_int_equal(cfg.grid.n[0], 21);
  assert_int_equal(cfg.grid.n[1], 22);
  assert_string_equal(cfg.model.file, "");

  write_temp_deck("", 0, path, sizeof path);
  assert_int_equal(rtm_config_load(path, &cfg), RTM_OK);
  remove(path);
  assert_int_equal(cfg.grid.n[2], 100);

  char long_path[700], text[1024];
  for (size_t i = 0; i < sizeof long_path - 1; ++i)
    long_path[i] = (char)('a' + i % 26);
  long_path[sizeof long_path - 1] = '\0';
  long_path[0] = '/';
  int n = snprintf(text, sizeof text, "[model]\nfile = %s   ; the model\nvp = 2500\n", long_path);
  write_temp_deck(text, (size_t)n, path, sizeof path);
  assert_int_equal(rtm_config_load(path, &cfg), RTM_OK);
  remove(path);
  assert_string_equal(cfg.model.file, long_path);
  assert_true(cfg.model.vp_m_s == 2500.0);

  /* The same long line with an error reports its own line number. */
  n = snprintf(text, sizeof text, "[model]\nvp = 2500\nfile = %s\nvp = 1\n", long_path);
  write_temp_deck(text, (size_t)n, path, sizeof path);
  capture_t capture;
  int status = captured(&capture, rtm_config_load(path, &cfg));
  remove(path);
  assert_int_equal(status, RTM_ERR_CONFIG);
  char needle[128];
  snprintf(needle, sizeof needle, "%s:4: model.vp = \"1\": key given twice (first at line 2)",
           path);
  assert_contains(capture.text, needle);
}

static int same_value(const rtm_cfg_entry_t *row, const rtm_config_t *a, const rtm_config_t *b) {
  const char *fa = (const char *)a + row->offset, *fb = (const char *)b + row->offset;
  if (row->type == RTM_CFG_STRING) return strcmp(fa, fb) == 0;
  if (row->type == RTM_CFG_DOUBLE || row->type == RTM_CFG_DOUBLE_AUTO) {
    double x, y;
    memcpy(&x, fa, sizeof x);
    memcpy(&y, fb, sizeof y);
    return (isnan(x) && isnan(y)) || (x == y && signbit(x) == signbit(y));
  }
  return memcmp(fa, fb, row->size) == 0;
}

/* xorshift64: fresh values for every key in each round, reproducible from the seed. */
static uint64_t next_random(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

static double uniform(uint64_t *s) {
  return (double)(next_random(s) >> 11) * 0x1.0p-53;
}

/* A random legal value for a row, as --set text; doubles carry all 17 significant digits so
 * that the echo must print them exactly. */
static void random_value(const rtm_cfg_entry_t *row, uint64_t *s, char *buf, size_t size) {
  static const char *const texts[] = {"  leading spaces", "out/dir-1", "a;b#c", "", "x\"y",
                                      "run # nightly"};
  double low = isfinite(row->min) ? row->min : -1e4;
  double high = isfinite(row->max) ? row->max : 1e4;
  if (high > 1e6) high = low + 1e6;
  switch (row->type) {
  case RTM_CFG_INT_AUTO:
    if (next_random(s) % 3 == 0) {
      snprintf(buf, size, "auto");
      break;
    }
    /* fall through */
  case RTM_CFG_INT:
    snprintf(buf, size, "%d", (int)(low + floor(uniform(s) * (high - low + 1))));
    break;
  case RTM_CFG_DOUBLE_AUTO:
    if (next_random(s) % 3 == 0) {
      snprintf(buf, size, "auto");
      break;
    }
    /* fall through */
  case RTM_CFG_DOUBLE: snprintf(buf, size, "%.17g", low + uniform(s) * (high - low)); break;
  case RTM_CFG_BOOL: snprintf(buf, size, "%s", next_random(s) % 2 ? "on" : "0"); break;
  case RTM_CFG_ENUM:
  case RTM_CFG_STRING:
    if (row->choices) {
      int count = 1;
      for (const char *c = row->choices; *c; ++c)
        count += *c == '|';
      int pick = (int)(next_random(s) % (uint64_t)count);
      const char *piece = row->choices;
      for (int i = 0; i < pick; ++i)
        piece = strchr(piece, '|') + 1;
      const char *bar = strchr(piece, '|');
      snprintf(buf, size, "%.*s", (int)(bar ? (size_t)(bar - piece) : strlen(piece)), piece);
    } else {
      const char *text = texts[next_random(s) % (sizeof texts / sizeof texts[0])];
      snprintf(buf, size, "\"%s\"", text);
    }
    break;
  }
}

/* load(echo(cfg)) == cfg field by field, for the defaults (autos echo as "auto") and for
 * rounds of random values in every key. */
static void test_echo_round_trip(void **state) {
  (void)state;
  uint64_t seed = 0x9e3779b97f4a7c15ull;
  for (int round = 0; round < 25; ++round) {
    rtm_config_t cfg, back;
    char assignment[256], value[200], path[64];
    rtm_config_defaults(&cfg);
    if (round > 0) {
      for (const rtm_cfg_entry_t *row = rtm_config_schema; row->section; ++row) {
        random_value(row, &seed, value, sizeof value);
        snprintf(assignment, sizeof assignment, "%s.%s=%s", row->section, row->key, value);
        if (rtm_config_set(&cfg, assignment) != RTM_OK) fail_msg("--set %s refused", assignment);
      }
    }
    char *text = rtm_config_echo_string(&cfg);
    assert_non_null(text);
    assert_true(text[0] == '#'); /* the header comment */
    write_temp_deck(text, strlen(text), path, sizeof path);

    /* The FILE echo writes the same text as the string echo. */
    FILE *file = tmpfile();
    assert_non_null(file);
    rtm_config_echo(&cfg, file);
    rewind(file);
    char *copy = calloc(strlen(text) + 2, 1);
    assert_non_null(copy);
    size_t n = fread(copy, 1, strlen(text) + 1, file);
    fclose(file);
    assert_int_equal(n, strlen(text));
    assert_string_equal(copy, text);
    free(copy);

    memset(&back, 0, sizeof back);
    int status = rtm_config_load(path, &back);
    if (status != RTM_OK) fail_msg("round %d: echo did not load:\n%s", round, text);
    remove(path);
    for (const rtm_cfg_entry_t *row = rtm_config_schema; row->section; ++row) {
      if (!same_value(row, &cfg, &back)) {
        printf("echo of round %d:\n%s", round, text);
        fail_msg("round %d: %s.%s differs after the round trip", round, row->section, row->key);
      }
    }
    free(text);
  }
}

static void test_missing_file(void **state) {
  (void)state;
  rtm_config_t cfg;
  capture_t capture;
  assert_int_equal(captured(&capture, rtm_config_load("no/such/deck.ini", &cfg)), RTM_ERR_INPUT);
  assert_contains(capture.text,
                  "no/such/deck.ini: cannot open config file: No such file or directory");
}

static void test_directory_is_not_a_deck(void **state) {
  (void)state;
  rtm_config_t cfg;
  capture_t capture;
  assert_int_equal(captured(&capture, rtm_config_load(".", &cfg)), RTM_ERR_INPUT);
  assert_contains(capture.text, ".: cannot open config file: a directory, not a text file");
}

/* Each deck lists what stderr must contain on "# expect: ..." lines at its top. The decks
 * hold several errors each: every one must be reported, not just the first. */
static void check_bad_deck(const char *name) {
  char path[1024], line[512];
  rtm_config_t cfg, untouched;
  deck_path(name, path, sizeof path);
  rtm_config_defaults(&cfg);
  cfg.grid.n[0] = 12345;
  untouched = cfg;

  capture_t capture;
  int status = captured(&capture, rtm_config_load(path, &cfg));
  const char *err = capture.text;
  if (status != RTM_ERR_CONFIG) fail_msg("%s: status %d, expected RTM_ERR_CONFIG", name, status);
  assert_memory_equal(&cfg, &untouched, sizeof cfg); /* a failed load changes nothing */

  FILE *deck = fopen(path, "r");
  assert_non_null(deck);
  int expectations = 0;
  while (fgets(line, sizeof line, deck) && strncmp(line, "# expect: ", 10) == 0) {
    line[strcspn(line, "\r\n")] = '\0';
    assert_contains(err, line + 10);
    ++expectations;
  }
  fclose(deck);
  assert_true(expectations > 0);
  /* Every error names the deck with a line number. */
  for (const char *at = strstr(err, "rtm3d: error: "); at; at = strstr(at + 1, "rtm3d: error: ")) {
    const char *where = at + strlen("rtm3d: error: ");
    assert_true(strncmp(where, path, strlen(path)) == 0);
  }
}

static void test_bad_decks_for_the_cli(void **state) {
  (void)state;
  check_bad_deck("bad_int.ini");
  check_bad_deck("bad_unknown_key.ini");
  check_bad_deck("bad_enum.ini");
  check_bad_deck("bad_duplicate.ini");
}

/* test_bad_values, test_bad_ranges, test_bad_syntax: one deck of many errors each, its name
 * the test's state. */
static void test_bad_deck(void **state) {
  check_bad_deck(*state);
}

#define BAD_DECK_TEST(test, deck)                                                                  \
  { .name = #test, .test_func = test_bad_deck, .initial_state = (void *)(deck) }

/* Keys in an unknown section are not reported one by one: the header error covers them. */
static void test_unknown_section_reported_once(void **state) {
  (void)state;
  static const char text[] = "[gird]\nnx = 1\nny = 2\nnz = 3\n";
  char path[64];
  rtm_config_t cfg;
  write_temp_deck(text, sizeof text - 1, path, sizeof path);
  capture_t capture;
  int status = captured(&capture, rtm_config_load(path, &cfg));
  const char *err = capture.text;
  remove(path);
  assert_int_equal(status, RTM_ERR_CONFIG);
  char needle[128];
  snprintf(needle, sizeof needle, "%s:1: unknown section [gird] (did you mean [grid]?)", path);
  assert_contains(err, needle);
  int lines = 0;
  for (const char *c = err; *c; ++c)
    lines += *c == '\n';
  assert_int_equal(lines, 1);
}

/* A deck that sets no key (empty, or comments and headers alone) is read as the defaults,
 * with a warning naming it (a probe: an empty file ran a full default run without a word);
 * a deck that sets one says nothing. */
static void test_deck_without_keys_said(void **state) {
  (void)state;
  static const char *const texts[] = {"", "; only a comment\n[grid]\n\n# and another\n",
                                      "[grid]\nnx = 12\n"};
  for (int k = 0; k < 3; ++k) {
    char path[64];
    rtm_config_t cfg;
    write_temp_deck(texts[k], strlen(texts[k]), path, sizeof path);
    capture_t capture;
    const int status = captured(&capture, rtm_config_load(path, &cfg));
    remove(path);
    assert_int_equal(status, RTM_OK);
    char needle[128];
    snprintf(needle, sizeof needle, "warning: %s sets no key", path);
    if (k < 2)
      assert_contains(capture.text, needle);
    else
      assert_null(strstr(capture.text, "sets no key"));
  }
}

/* A message's origin names the deck's line of each key it is about (a probe: a check across
 * keys said "e.ini: output.name" with no line), the first as path:LINE; a key a --set has
 * changed since has no line, and a message about no deck key has none. */
static void test_origin_names_deck_lines(void **state) {
  (void)state;
  static const char text[] = "[grid]\nnx = 40\n[mpi]\nshot_groups = 2\n\n[shots]\nlayout = "
                             "grid\n[output]\nname = x\n";
  char path[64], origin[RTM_CONFIG_ORIGIN_MAX], want[128];
  rtm_config_t cfg;
  write_temp_deck(text, sizeof text - 1, path, sizeof path);
  assert_int_equal(rtm_config_load(path, &cfg), RTM_OK);
  remove(path);
  snprintf(want, sizeof want, "%s:4", path);
  assert_string_equal(
      rtm_config_origin(&cfg, "mpi.shot_groups = 2: too many", origin, sizeof origin), want);
  snprintf(want, sizeof want, "%s:4 (and line 7)", path);
  assert_string_equal(
      rtm_config_origin(&cfg, "shots.layout, mpi.shot_groups", origin, sizeof origin), want);
  snprintf(want, sizeof want, "%s:2 (and lines 4, 7, 9)", path);
  assert_string_equal(rtm_config_origin(&cfg, "grid.nx mpi.shot_groups shots.layout output.name",
                                        origin, sizeof origin),
                      want);
  assert_string_equal(rtm_config_origin(&cfg, "time.dt", origin, sizeof origin), path);
  assert_string_equal(rtm_config_origin(&cfg, NULL, origin, sizeof origin), path);
  assert_int_equal(rtm_config_set_option(&cfg, "mpi.shot_groups=3"), RTM_OK);
  snprintf(want, sizeof want, "%s:7 with --set mpi.shot_groups", path);
  assert_string_equal(
      rtm_config_origin(&cfg, "shots.layout, mpi.shot_groups", origin, sizeof origin), want);
}

/* A message about a value given by --set says so: the deck's path, then the keys the user's
 * --set changed that the message names (rtm_config_origin; each once, in order); the
 * program's own rtm_config_set is not noted, nor a --set that failed; past its room the list
 * of keys ends in ", ...". */
static void test_messages_name_set_keys(void **state) {
  (void)state;
  static const char text[] = "[grid]\nnx = 40\nny = 40\nnz = 40\n";
  char path[64], origin[4096], want[256];
  rtm_config_t cfg;
  write_temp_deck(text, sizeof text - 1, path, sizeof path);
  assert_int_equal(rtm_config_load(path, &cfg), RTM_OK);
  remove(path);
  assert_string_equal(rtm_config_origin(&cfg, NULL, origin, sizeof origin), path);
  assert_int_equal(rtm_config_set(&cfg, "source.frequency=12"), RTM_OK); /* the program's */
  assert_int_equal(rtm_config_set_option(&cfg, "receivers.z=99999"), RTM_OK);
  assert_int_equal(rtm_config_set_option(&cfg, "time.steps=10"), RTM_OK);
  assert_int_equal(rtm_config_set_option(&cfg, "receivers.z = 99998"), RTM_OK); /* again */
  capture_t capture;
  assert_int_equal(captured(&capture, rtm_config_set_option(&cfg, "grid.nx=-1")), RTM_ERR_CONFIG);
  assert_string_equal(cfg.set_keys, "receivers.z, time.steps");
  snprintf(want, sizeof want, "%s with --set receivers.z, time.steps", path);
  assert_string_equal(rtm_config_origin(&cfg, NULL, origin, sizeof origin), want);
  /* only the keys a message names, as whole names */
  snprintf(want, sizeof want, "%s with --set time.steps", path);
  assert_string_equal(rtm_config_origin(&cfg, "time.steps = 10 is short", origin, sizeof origin),
                      want);
  assert_string_equal(
      rtm_config_origin(&cfg, "source.frequency, receivers.z_step", origin, sizeof origin), path);
  /* the check of the deck's keys: the receiver plane's depth, which --set gave, against the
   * volume's grid.nz, which the deck's line 4 gave */
  assert_int_equal(captured(&capture, rtm_config_validate(&cfg)), RTM_ERR_CONFIG);
  snprintf(want, sizeof want, "%s:4 with --set receivers.z: receivers.z = 99998 m", path);
  assert_contains(capture.text, want);
  /* every key of the schema at its default, some 3 kB of names: past the room */
  rtm_config_defaults(&cfg);
  char assignment[512];
  size_t names = 0;
  for (const rtm_cfg_entry_t *row = rtm_config_schema; row->section; ++row) {
    snprintf(assignment, sizeof assignment, "%s.%s=%s", row->section, row->key, row->default_text);
    assert_int_equal(rtm_config_set_option(&cfg, assignment), RTM_OK);
    names += strlen(row->section) + strlen(row->key) + 3;
  }
  assert_true(names > sizeof cfg.set_keys);
  const size_t length = strlen(cfg.set_keys);
  assert_true(length < sizeof cfg.set_keys);
  assert_string_equal(cfg.set_keys + length - 5, ", ...");
  assert_string_equal(strstr(cfg.set_keys, ", ..."), ", ...");
  /* a key the list holds is named, one past it is not: ", ..." says that more were set */
  assert_string_equal(rtm_config_origin(&cfg, "grid.nx", origin, sizeof origin),
                      "configuration with --set grid.nx, ...");
  const rtm_cfg_entry_t *last = rtm_config_schema;
  while (last[1].section)
    ++last;
  snprintf(assignment, sizeof assignment, "%s.%s", last->section, last->key);
  assert_null(strstr(cfg.set_keys, assignment));
  assert_string_equal(rtm_config_origin(&cfg, assignment, origin, sizeof origin),
                      "configuration with --set ...");
}

RTM_TEST_MAIN(
    cmocka_unit_test(test_good_deck_every_type), cmocka_unit_test(test_partial_deck_keeps_defaults),
    cmocka_unit_test(test_line_ends_bom_and_long_lines), cmocka_unit_test(test_echo_round_trip),
    cmocka_unit_test(test_missing_file), cmocka_unit_test(test_directory_is_not_a_deck),
    cmocka_unit_test(test_bad_decks_for_the_cli), BAD_DECK_TEST(test_bad_values, "err_values.ini"),
    BAD_DECK_TEST(test_bad_ranges, "err_range.ini"),
    BAD_DECK_TEST(test_bad_syntax, "err_syntax.ini"),
    BAD_DECK_TEST(test_bad_quotes, "err_quotes.ini"),
    cmocka_unit_test(test_unknown_section_reported_once),
    cmocka_unit_test(test_deck_without_keys_said), cmocka_unit_test(test_origin_names_deck_lines),
    cmocka_unit_test(test_messages_name_set_keys))
