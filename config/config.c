/* config.c - typed values: parsing and printing one schema row, defaults, --set overrides
 * and the memory strategy lookup. */
#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_impl.h"
#include "rtm_status.h"

char *rtm_cfg_trim(char *text) {
  while (isspace((unsigned char)*text))
    ++text;
  size_t length = strlen(text);
  while (length > 0 && isspace((unsigned char)text[length - 1]))
    text[--length] = '\0';
  return text;
}

static int same_text_n(const char *a, const char *b, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (tolower((unsigned char)a[i]) != tolower((unsigned char)b[i]) || a[i] == '\0') return 0;
  return 1;
}

static int same_text(const char *a, const char *b) {
  size_t n = strlen(a);
  return strlen(b) == n && same_text_n(a, b, n);
}

/* Index of text among "a|b|c" (ignoring case), with the canonical spelling; -1 if absent. */
static int choice_index(const char *choices, const char *text, const char **start, size_t *length) {
  int index = 0;
  for (const char *piece = choices;; ++index) {
    const char *bar = strchr(piece, '|');
    size_t n = bar ? (size_t)(bar - piece) : strlen(piece);
    if (strlen(text) == n && same_text_n(piece, text, n)) {
      if (start) *start = piece;
      if (length) *length = n;
      return index;
    }
    if (!bar) return -1;
    piece = bar + 1;
  }
}

const char *rtm_cfg_type_name(rtm_cfg_type_t type) {
  switch (type) {
  case RTM_CFG_INT: return "int";
  case RTM_CFG_INT_AUTO: return "int|auto";
  case RTM_CFG_DOUBLE: return "number";
  case RTM_CFG_DOUBLE_AUTO: return "number|auto";
  case RTM_CFG_BOOL: return "bool";
  case RTM_CFG_STRING: return "string";
  case RTM_CFG_ENUM: return "choice";
  }
  return "?";
}

void rtm_cfg_describe_range(const rtm_cfg_entry_t *row, char *buf, size_t size) {
  buf[0] = '\0';
  if (row->choices) {
    snprintf(buf, size, "%s", row->choices);
    return;
  }
  if (row->type != RTM_CFG_INT && row->type != RTM_CFG_INT_AUTO && row->type != RTM_CFG_DOUBLE &&
      row->type != RTM_CFG_DOUBLE_AUTO)
    return;
  int open_min = row->min == DBL_TRUE_MIN; /* the schema's spelling of "> 0" */
  double low = open_min ? 0.0 : row->min;
  int has_min = isfinite(row->min), has_max = isfinite(row->max);
  if (has_min && has_max)
    snprintf(buf, size, "%c%g, %g]", open_min ? '(' : '[', low, row->max);
  else if (has_min)
    snprintf(buf, size, "%s %g", open_min ? ">" : ">=", low);
  else if (has_max)
    snprintf(buf, size, "<= %g", row->max);
}

/* "an integer in [1, 100000]", "auto or a number > 0", "one of iso|vti|tti", ... */
static void describe_expected(const rtm_cfg_entry_t *row, char *buf, size_t size) {
  char range[128];
  rtm_cfg_describe_range(row, range, sizeof range);
  const char *joint = (range[0] == '[' || range[0] == '(') ? " in " : " ";
  switch (row->type) {
  case RTM_CFG_INT: snprintf(buf, size, "an integer%s%s", range[0] ? joint : "", range); break;
  case RTM_CFG_INT_AUTO:
    snprintf(buf, size, "auto or an integer%s%s", range[0] ? joint : "", range);
    break;
  case RTM_CFG_DOUBLE:
    snprintf(buf, size, "a finite number%s%s", range[0] ? joint : "", range);
    break;
  case RTM_CFG_DOUBLE_AUTO:
    snprintf(buf, size, "auto or a finite number%s%s", range[0] ? joint : "", range);
    break;
  case RTM_CFG_BOOL: snprintf(buf, size, "true/false, yes/no, on/off or 1/0"); break;
  case RTM_CFG_ENUM: snprintf(buf, size, "one of %s", row->choices); break;
  case RTM_CFG_STRING:
    if (row->choices)
      snprintf(buf, size, "one of %s", row->choices);
    else
      snprintf(buf, size, "text of at most %zu bytes", row->size - 1);
    break;
  }
}

static int in_range(const rtm_cfg_entry_t *row, double value) {
  return value >= row->min && value <= row->max;
}

/* Reason for characters left after a number; '#' is not a comment inside an INI value. */
static void trailing_reason(const char *rest, char *buf, size_t size) {
  while (isspace((unsigned char)*rest))
    ++rest;
  snprintf(buf, size, "unexpected \"%.40s\" after the number%s", rest,
           rest[0] == '#' ? " (comments after a value start with ';')" : "");
}

/* After strtod or strtol stopped at end: 1 when the whole text was the number; else 0
 * with the reason (nothing read: `none`; characters left: what they are). */
static int read_whole(const char *text, const char *end, const char *none, char *reason,
                      size_t size) {
  if (text[0] == '\0') {
    snprintf(reason, size, "empty value");
    return 0;
  }
  if (end == text) {
    snprintf(reason, size, "%s", none);
    return 0;
  }
  if (*end != '\0') {
    trailing_reason(end, reason, size);
    return 0;
  }
  return 1;
}

static int parse_number(const rtm_cfg_entry_t *row, const char *text, double *value, char *reason,
                        size_t size) {
  char *end = NULL;
  errno = 0;
  double parsed = rtm_text_number(text, &end);
  if (!read_whole(text, end, "not a number", reason, size)) return 0;
  if (!isfinite(parsed)) {
    snprintf(reason, size, "not a finite number%s",
             row->type == RTM_CFG_DOUBLE_AUTO ? " (write auto for the automatic value)" : "");
    return 0;
  }
  if (!in_range(row, parsed)) {
    snprintf(reason, size, "out of range");
    return 0;
  }
  *value = parsed;
  return 1;
}

static int parse_int(const rtm_cfg_entry_t *row, const char *text, int *value, char *reason,
                     size_t size) {
  char *end = NULL;
  errno = 0;
  long parsed = strtol(text, &end, 10);
  if (end != text && *end != '\0') {
    /* "2.5" or "1e3": a number, but not an integer */
    char *number_end = NULL;
    rtm_text_number(text, &number_end);
    if (*number_end == '\0') {
      snprintf(reason, size, "not an integer");
      return 0;
    }
  }
  if (!read_whole(text, end, "not an integer", reason, size)) return 0;
  if (errno == ERANGE || parsed < INT_MIN || parsed > INT_MAX || !in_range(row, (double)parsed)) {
    snprintf(reason, size, "out of range");
    return 0;
  }
  *value = (int)parsed;
  return 1;
}

static int parse_bool(const char *text, int *value) {
  static const char *const truths[] = {"true", "yes", "on", "1"};
  static const char *const falsehoods[] = {"false", "no", "off", "0"};
  for (size_t i = 0; i < sizeof truths / sizeof truths[0]; ++i) {
    if (same_text(text, truths[i])) {
      *value = 1;
      return 1;
    }
    if (same_text(text, falsehoods[i])) {
      *value = 0;
      return 1;
    }
  }
  return 0;
}

/* A '#' that reads as a comment: at the start of the text or after white space. */
static int hash_comment_at(const char *text, size_t i) {
  return text[i] == '#' && (i == 0 || isspace((unsigned char)text[i - 1]));
}

/* Strips one pair of surrounding double quotes from *text (its *length characters): 1, or 0
 * with the reason when a quote opens and does not close at the end of the value. Comments
 * after a value start with ';' (inih strips those), so "x.h5" # note is refused rather than
 * read with its '#' as part of the string, as numbers refuse "5 # metres". */
static int unquote(const char **text, size_t *length, char *reason, size_t size) {
  if (*length == 0 || (*text)[0] != '"') return 1;
  const char *close = strrchr(*text + 1, '"');
  if (!close) {
    snprintf(reason, size, "unterminated quote (no closing '\"')");
    return 0;
  }
  /* an inner quote followed by a comment closed the value there: "a.h5" # not "b.h5" is
   * a.h5 and a comment, not one string (a quote inside a value, "x"y", stays text) */
  const char *first = strchr(*text + 1, '"');
  const char *after = first + 1 + strspn(first + 1, " \t");
  const char *rest = first != close && (*after == '#' || *after == ';') ? first + 1 : close + 1;
  if (*rest != '\0') {
    snprintf(reason, size, "unexpected \"%.40s\" after the closing quote%s", rest,
             rest[strspn(rest, " \t")] == '#' ? " (comments after a value start with ';')" : "");
    return 0;
  }
  *text += 1;
  *length = (size_t)(close - *text);
  return 1;
}

/* Strings: one pair of surrounding double quotes is removed, so that "" is the empty string
 * and leading or trailing spaces survive. Text the echo could not write back is refused, and
 * so is a '#' after white space outside quotes: it is a comment in many INI dialects, and a
 * run named "run # nightly" is rarely what was meant. */
static int parse_string(const rtm_cfg_entry_t *row, const char *text, char *field, char *reason,
                        size_t size) {
  size_t length = strlen(text);
  int quoted = length > 0 && text[0] == '"';
  if (!unquote(&text, &length, reason, size)) return 0;
  for (size_t i = 0; i < length; ++i) {
    if (iscntrl((unsigned char)text[i])) {
      snprintf(reason, size, "contains a control character");
      return 0;
    }
    if (text[i] == ';' && i > 0 && isspace((unsigned char)text[i - 1])) {
      snprintf(reason, size, "contains \" ;\", which starts a comment in INI files");
      return 0;
    }
    if (!quoted && hash_comment_at(text, i)) {
      snprintf(reason, size,
               "unexpected \"%.40s\" (comments after a value start with ';'; quote the value "
               "if '#' belongs to it)",
               text + i);
      return 0;
    }
  }
  if (row->choices) {
    char value[RTM_CONFIG_NAME_MAX];
    const char *canonical = NULL;
    size_t canonical_length = 0;
    if (length >= sizeof value) length = sizeof value - 1; /* too long to be a choice */
    memcpy(value, text, length);
    value[length] = '\0';
    if (choice_index(row->choices, value, &canonical, &canonical_length) < 0 ||
        canonical_length >= row->size) {
      snprintf(reason, size, "not a known choice");
      return 0;
    }
    memcpy(field, canonical, canonical_length);
    field[canonical_length] = '\0';
    return 1;
  }
  if (length >= row->size) {
    snprintf(reason, size, "too long (%zu bytes)", length);
    return 0;
  }
  memcpy(field, text, length);
  field[length] = '\0';
  return 1;
}

/* Values the choices leave out on purpose, which a user may still try: why, for the error. */
static void enum_hint(const rtm_cfg_entry_t *row, const char *text, char *reason, size_t size) {
  static const struct {
    const char *section, *key, *value, *why;
  } hints[] = {
      {"time", "dispersion_correction", "source",
       "a wavelet warped alone leaves the run's output warped (the leapfrog gives at omega the "
       "exact response at psi(omega)): full warps the wavelet and the recorded traces"},
  };
  for (size_t i = 0; i < sizeof hints / sizeof hints[0]; ++i)
    if (strcmp(row->section, hints[i].section) == 0 && strcmp(row->key, hints[i].key) == 0 &&
        same_text(text, hints[i].value))
      snprintf(reason, size, "%s", hints[i].why);
}

int rtm_cfg_parse_value(const rtm_cfg_entry_t *row, const char *text, rtm_config_t *cfg, char *why,
                        size_t why_size) {
  char *field = (char *)cfg + row->offset;
  char reason[RTM_CFG_WHY_MAX / 2];
  char expected[RTM_CFG_WHY_MAX / 2];
  int ok = 0;
  reason[0] = '\0';
  switch (row->type) {
  case RTM_CFG_INT:
  case RTM_CFG_INT_AUTO: {
    int value = RTM_CFG_AUTO_INT;
    if (row->type == RTM_CFG_INT_AUTO && same_text(text, "auto"))
      ok = row->size == sizeof value;
    else
      ok = row->size == sizeof value && parse_int(row, text, &value, reason, sizeof reason);
    if (ok) memcpy(field, &value, sizeof value);
    break;
  }
  case RTM_CFG_DOUBLE:
  case RTM_CFG_DOUBLE_AUTO: {
    double value = NAN;
    if (row->type == RTM_CFG_DOUBLE_AUTO && same_text(text, "auto"))
      ok = 1;
    else
      ok = parse_number(row, text, &value, reason, sizeof reason);
    ok = ok && row->size == sizeof value;
    if (ok) memcpy(field, &value, sizeof value);
    break;
  }
  case RTM_CFG_BOOL: {
    int value = 0;
    ok = row->size == sizeof value && parse_bool(text, &value);
    if (ok) memcpy(field, &value, sizeof value);
    break;
  }
  case RTM_CFG_ENUM: {
    int value = choice_index(row->choices, text, NULL, NULL);
    ok = value >= 0 && row->size == sizeof value;
    if (ok)
      memcpy(field, &value, sizeof value);
    else
      enum_hint(row, text, reason, sizeof reason);
    break;
  }
  case RTM_CFG_STRING: {
    char value[RTM_CFG_VALUE_MAX];
    ok = row->size <= sizeof value && parse_string(row, text, value, reason, sizeof reason);
    if (ok) memcpy(field, value, strlen(value) + 1);
    break;
  }
  }
  if (ok) return RTM_OK;
  describe_expected(row, expected, sizeof expected);
  if (reason[0])
    snprintf(why, why_size, "%s; expected %s", reason, expected);
  else
    snprintf(why, why_size, "expected %s", expected);
  return RTM_ERR_CONFIG;
}

static int needs_quotes(const char *text) {
  size_t length = strlen(text);
  int hash = 0;
  for (size_t i = 0; i < length && !hash; ++i)
    hash = hash_comment_at(text, i);
  return length == 0 || hash || text[0] == '"' || isspace((unsigned char)text[0]) ||
         isspace((unsigned char)text[length - 1]);
}

void rtm_cfg_format_value(const rtm_cfg_entry_t *row, const rtm_config_t *cfg, char *buf,
                          size_t size) {
  const char *field = (const char *)cfg + row->offset;
  switch (row->type) {
  case RTM_CFG_INT:
  case RTM_CFG_INT_AUTO:
  case RTM_CFG_BOOL: {
    int value;
    memcpy(&value, field, sizeof value);
    if (row->type == RTM_CFG_INT_AUTO && value == RTM_CFG_AUTO_INT)
      snprintf(buf, size, "auto");
    else if (row->type == RTM_CFG_BOOL)
      snprintf(buf, size, "%s", value ? "true" : "false");
    else
      snprintf(buf, size, "%d", value);
    break;
  }
  case RTM_CFG_DOUBLE:
  case RTM_CFG_DOUBLE_AUTO: {
    double value;
    memcpy(&value, field, sizeof value);
    if (isnan(value)) {
      snprintf(buf, size, "auto");
      break;
    }
    /* %.17g always reads back to the same double; fewer digits often do too and read
     * better (0.3 rather than 0.29999999999999999), so the shortest exact one is kept. */
    for (int digits = 15; digits <= 17; ++digits) {
      snprintf(buf, size, "%.*g", digits, value);
      if (strtod(buf, NULL) == value) break;
    }
    break;
  }
  case RTM_CFG_ENUM: {
    int value, index = 0;
    memcpy(&value, field, sizeof value);
    const char *piece = row->choices;
    while (piece && index < value) {
      piece = strchr(piece, '|');
      if (piece) ++piece;
      ++index;
    }
    if (!piece || value < 0) {
      snprintf(buf, size, "invalid(%d)", value);
      break;
    }
    const char *bar = strchr(piece, '|');
    snprintf(buf, size, "%.*s", (int)(bar ? (size_t)(bar - piece) : strlen(piece)), piece);
    break;
  }
  case RTM_CFG_STRING: snprintf(buf, size, needs_quotes(field) ? "\"%s\"" : "%s", field); break;
  }
}

void rtm_config_defaults(rtm_config_t *cfg) {
  char why[RTM_CFG_WHY_MAX];
  memset(cfg, 0, sizeof *cfg);
  /* Every default goes through the parser, so the table's text is the one truth; the unit
   * tests check that each default parses. */
  for (const rtm_cfg_entry_t *row = rtm_config_schema; row->section; ++row)
    (void)rtm_cfg_parse_value(row, row->default_text, cfg, why, sizeof why);
}

void rtm_config_reset(rtm_config_t *cfg, const char *section, const char *key) {
  char why[RTM_CFG_WHY_MAX];
  for (size_t k = 0; rtm_config_schema[k].section; ++k) {
    const rtm_cfg_entry_t *row = &rtm_config_schema[k];
    if (strcmp(row->section, section) != 0 || (key && strcmp(row->key, key) != 0)) continue;
    (void)rtm_cfg_parse_value(row, row->default_text, cfg, why, sizeof why); /* as defaults */
    cfg->deck_line[k] = 0; /* no message cites the deck for a value no longer the deck's */
  }
}

/* Whether `name` ("section.key") occurs in `text` as a whole key name. */
static int names_key(const char *text, const char *name, size_t length) {
  for (const char *at = strstr(text, name); at; at = strstr(at + 1, name)) {
    const char before = at == text ? ' ' : at[-1], after = at[length];
    if (!isalnum((unsigned char)before) && before != '_' && before != '.' &&
        !isalnum((unsigned char)after) && after != '_')
      return 1;
  }
  return 0;
}

/* Whether a set_keys list was cut: it ends in "..." once it is full. */
static int list_cut(const char *keys) {
  const size_t length = strlen(keys);
  return length >= 3 && strcmp(keys + length - 3, "...") == 0;
}

/* `row`'s key added to cfg->set_keys unless there already; ", ..." once it is full. */
static void note_set_key(rtm_config_t *cfg, const rtm_cfg_entry_t *row) {
  static const char more[] = ", ...";
  char name[128];
  snprintf(name, sizeof name, "%s.%s", row->section, row->key);
  char *keys = cfg->set_keys;
  const size_t used = strlen(keys), room = sizeof cfg->set_keys;
  if (names_key(keys, name, strlen(name)) || list_cut(keys)) return;
  const size_t need = (used ? 2 : 0) + strlen(name);
  if (used + need + sizeof more <= room) {
    snprintf(keys + used, room - used, "%s%s", used ? ", " : "", name);
    return;
  }
  snprintf(keys + used, room - used, "%s", more);
}

/* One "section.key=value" into cfg; `noted`: its key into cfg->set_keys (a user's --set). */
static int set_value(rtm_config_t *cfg, const char *assignment, int noted) {
  int status = RTM_OK;
  char *copy = NULL;
  char why[RTM_CFG_WHY_MAX], hint[RTM_CFG_WHY_MAX];
  if (!assignment) RTM_FAIL(RTM_ERR_USAGE, "--set needs section.key=value");
  size_t length = strlen(assignment);
  copy = malloc(length + 1);
  if (!copy) RTM_FAIL(RTM_ERR_NOMEM, "--set %s: out of memory", assignment);
  memcpy(copy, assignment, length + 1);
  char *equals = strchr(copy, '=');
  if (!equals) RTM_FAIL(RTM_ERR_CONFIG, "--set %s: expected section.key=value", assignment);
  *equals = '\0';
  char *name = rtm_cfg_trim(copy), *value = rtm_cfg_trim(equals + 1);
  char *dot = strchr(name, '.');
  if (!dot) {
    rtm_cfg_suggest_key("", name, hint, sizeof hint);
    RTM_FAIL(RTM_ERR_CONFIG, "--set %s: expected section.key=value, the key with its section%s",
             assignment, hint);
  }
  *dot = '\0';
  char *section = rtm_cfg_trim(name), *key = rtm_cfg_trim(dot + 1);
  const rtm_cfg_entry_t *row = rtm_cfg_find(section, key);
  if (!row) {
    rtm_cfg_suggest_key(section, key, hint, sizeof hint);
    if (!hint[0] && !rtm_cfg_section_known(section))
      rtm_cfg_suggest_section(section, hint, sizeof hint);
    RTM_FAIL(RTM_ERR_CONFIG, "--set %s: unknown %s %s.%s%s", assignment,
             rtm_cfg_section_known(section) ? "key" : "section and key", section, key, hint);
  }
  if (rtm_cfg_parse_value(row, value, cfg, why, sizeof why) != RTM_OK)
    RTM_FAIL(RTM_ERR_CONFIG, "--set %s: %s", assignment, why);
  if (noted) note_set_key(cfg, row);
  if (noted) cfg->deck_line[row - rtm_config_schema] = 0; /* the deck's value is gone */
fail:
  free(copy);
  return status;
}

int rtm_config_set(rtm_config_t *cfg, const char *assignment) {
  return set_value(cfg, assignment, 0);
}

int rtm_config_set_option(rtm_config_t *cfg, const char *assignment) {
  return set_value(cfg, assignment, 1);
}

/* The lines of the deck that set the keys `about` names, in order, into lines[at most]. */
static int deck_lines(const rtm_config_t *cfg, const char *about, int *lines, int most) {
  int count = 0;
  for (size_t k = 0; rtm_config_schema[k].section; ++k) {
    const int line = cfg->deck_line[k];
    char name[128];
    const int length = snprintf(name, sizeof name, "%s.%s", rtm_config_schema[k].section,
                                rtm_config_schema[k].key);
    if (line <= 0 || length <= 0 || !names_key(about, name, (size_t)length)) continue;
    int at = count < most ? count++ : most; /* kept sorted; past `most`, the largest dropped */
    while (at > 0 && lines[at - 1] > line) {
      if (at < most) lines[at] = lines[at - 1];
      --at;
    }
    if (at < most) lines[at] = line;
  }
  return count;
}

const char *rtm_config_origin(const rtm_config_t *cfg, const char *about, char *text, size_t size) {
  size_t used = (size_t)snprintf(text, size, "%s", cfg->path[0] ? cfg->path : "configuration");
  int lines[5];
  const int count = cfg->path[0] && about ? deck_lines(cfg, about, lines, 5) : 0;
  for (int k = 0; k < count && used < size; ++k)
    used += (size_t)snprintf(text + used, size - used,
                             k == 0       ? ":%d"
                             : k > 1      ? ", %d"
                             : count == 2 ? " (and line %d"
                                          : " (and lines %d",
                             lines[k]);
  if (count > 1 && used < size) used += (size_t)snprintf(text + used, size - used, ")");
  int named = 0;
  for (const char *key = cfg->set_keys; *key && used < size;) { /* "a.b, c.d[, ...]" */
    const size_t length = strcspn(key, ",");
    char name[128];
    snprintf(name, sizeof name, "%.*s", (int)length, key);
    if (strcmp(name, "...") != 0 && (!about || names_key(about, name, length)))
      used +=
          (size_t)snprintf(text + used, size - used, "%s%s", named++ ? ", " : " with --set ", name);
    key += length;
    key += strspn(key, ", ");
  }
  if (list_cut(cfg->set_keys) && used < size)
    snprintf(text + used, size - used, "%s", named ? ", ..." : " with --set ..."); /* cut */
  return text;
}

const char *rtm_config_strategy_for(const rtm_config_t *cfg, const char *field_class) {
  const char *override = NULL;
  if (strcmp(field_class, "wavefield") == 0)
    override = cfg->memory.wavefield;
  else if (strcmp(field_class, "model") == 0)
    override = cfg->memory.model;
  else if (strcmp(field_class, "imaging") == 0)
    override = cfg->memory.imaging;
  else
    return NULL;
  return override[0] ? override : cfg->memory.strategy;
}

rtm_precision_t rtm_config_model_precision(const rtm_config_t *cfg) {
  return cfg->physics.equation == RTM_EQUATION_ISO ? RTM_PRECISION_FP32
                                                   : cfg->memory.model_precision;
}

int rtm_config_source_axes_placed(const rtm_config_t *cfg) {
  return cfg->shots.layout == RTM_SHOTS_GRID ? 2 : cfg->shots.layout == RTM_SHOTS_FILE ? 3 : 0;
}

size_t rtm_config_free_within_limit(const rtm_config_t *cfg, size_t free_bytes) {
  const double limit = cfg->memory.limit_gb * 1e9;
  if (limit <= 0.0 || limit >= (double)free_bytes) return free_bytes;
  return (size_t)limit;
}

const char *rtm_equation_name(rtm_equation_t equation) {
  switch (equation) {
  case RTM_EQUATION_ISO: return "iso";
  case RTM_EQUATION_VTI: return "vti";
  case RTM_EQUATION_TTI: return "tti";
  }
  return "?";
}

const char *rtm_precision_name(rtm_precision_t precision) {
  return precision == RTM_PRECISION_FP16 ? "fp16" : precision == RTM_PRECISION_ZFP ? "zfp" : "fp32";
}
