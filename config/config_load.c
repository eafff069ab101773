/* config_load.c - reading an INI deck through inih, with every error reported at its line.
 *
 * inih hands our reader a fixed buffer and calls the handler without line numbers (the
 * Debian build lacks INI_HANDLER_LINENO), so the reader does the line-level work: it counts
 * lines, tracks [section] headers, reports malformed lines and unknown sections itself and
 * passes inih only well-formed "key = value" lines. inih then splits them, strips inline
 * ';' comments and calls the handler for the line the reader just counted. Every error is
 * printed and parsing goes on, so one run shows all mistakes in a deck, up to a cap: a
 * file that is no deck (binary data, a CSV) stops at RTM_CFG_ERRORS_MAX errors. What is
 * read is bounded: a regular file only, at most RTM_CFG_DECK_MAX_BYTES, lines of less than
 * RTM_CFG_LINE_MAX bytes, no NUL byte (each refused naming the size or file:line). */
#include <ctype.h>
#include <ini.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_impl.h"
#include "rtm_status.h"

/* A deck is a page or two of text: 1 MiB is far beyond any, and small enough to read at
 * once. Lines hold at most a path (RTM_CONFIG_PATH_MAX) and a comment. */
#define RTM_CFG_DECK_MAX_BYTES (1 << 20)
#define RTM_CFG_LINE_MAX 4096
#define RTM_CFG_ERRORS_MAX 20

typedef struct {
  FILE *file;
  const char *path;
  rtm_config_t *cfg;
  int line_number;
  char line[RTM_CFG_LINE_MAX]; /* the current physical line */
  int read_status;             /* RTM_ERR_IO after a read error, its reason in read_why */
  char read_why[256];
  int stopped;       /* a line could not be read or too many errors: read no further */
  int in_section;    /* a [section] header has been seen */
  int section_known; /* ... and it names a schema section */
  char section[RTM_CONFIG_NAME_MAX];
  int errors;
} loader_t;

static void loader_error(loader_t *ld, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void loader_error(loader_t *ld, const char *fmt, ...) {
  char message[2048];
  va_list args;
  va_start(args, fmt);
  vsnprintf(message, sizeof message, fmt, args);
  va_end(args);
  rtm_log_error("%s:%d: %s", ld->path, ld->line_number, message);
  if (++ld->errors == RTM_CFG_ERRORS_MAX) ld->stopped = 1;
}

/* Reads the next physical line into ld->line. Returns 1, or 0 at the end of the file and
 * after an error that stops the reading (reported here). */
static int read_physical_line(loader_t *ld) {
  char why[256];
  int got = 0;
  if (ld->stopped) return 0;
  int status = rtm_text_read_line(ld->file, ld->line, sizeof ld->line, &got, why, sizeof why);
  if (status == RTM_ERR_IO) {
    ld->read_status = status;
    snprintf(ld->read_why, sizeof ld->read_why, "%s", why);
  } else if (status != RTM_OK) {
    ++ld->line_number; /* the line that could not be read */
    loader_error(ld, "%s", why);
  }
  if (status != RTM_OK) ld->stopped = 1;
  return got;
}

static void apply_assignment(loader_t *ld, const char *name, const char *value) {
  char hint[RTM_CFG_WHY_MAX], why[RTM_CFG_WHY_MAX];
  if (!ld->in_section) {
    rtm_cfg_suggest_key("", name, hint, sizeof hint);
    loader_error(ld, "%s = \"%.200s\": key outside any [section]%s", name, value, hint);
    return;
  }
  if (!ld->section_known) return; /* reported once, at the header */
  if (name[0] == '\0') {
    loader_error(ld, "[%s] = \"%.200s\": missing key name before '='", ld->section, value);
    return;
  }
  const rtm_cfg_entry_t *row = rtm_cfg_find(ld->section, name);
  if (!row) {
    rtm_cfg_suggest_key(ld->section, name, hint, sizeof hint);
    loader_error(ld, "%s.%s = \"%.200s\": unknown key%s", ld->section, name, value, hint);
    return;
  }
  size_t index = (size_t)(row - rtm_config_schema);
  if (ld->cfg->deck_line[index]) {
    loader_error(ld, "%s.%s = \"%.200s\": key given twice (first at line %d)", row->section,
                 row->key, value, ld->cfg->deck_line[index]);
    return;
  }
  ld->cfg->deck_line[index] = ld->line_number;
  if (rtm_cfg_parse_value(row, value, ld->cfg, why, sizeof why) != RTM_OK)
    loader_error(ld, "%s.%s = \"%.200s\": %s", row->section, row->key, value, why);
}

static int on_pair(void *user, const char *section, const char *name, const char *value) {
  (void)section; /* the reader tracks sections: it sees every header, inih does not say where */
  apply_assignment(user, name, value);
  return 1;
}

static void enter_section(loader_t *ld, char *text) {
  char hint[RTM_CFG_WHY_MAX];
  char *close = strchr(text, ']');
  ld->in_section = 1;
  ld->section_known = 0;
  ld->section[0] = '\0';
  if (!close) {
    loader_error(ld, "malformed section header \"%.60s\": missing ']'", text);
    return;
  }
  char *rest = close + 1;
  while (isspace((unsigned char)*rest))
    ++rest;
  *close = '\0';
  char *name = rtm_cfg_trim(text + 1);
  snprintf(ld->section, sizeof ld->section, "%s", name);
  ld->section_known = strlen(name) < sizeof ld->section && rtm_cfg_section_known(name);
  if (*rest && *rest != ';' && *rest != '#') {
    loader_error(ld, "[%s]: unexpected \"%.60s\" after ']'", name, rest);
    return;
  }
  if (!ld->section_known) {
    rtm_cfg_suggest_section(name, hint, sizeof hint);
    loader_error(ld, "unknown section [%.60s]%s", name, hint);
  }
}

/* The first '=' or ':' as inih finds it: a ';' after white space starts a comment first. */
static char *find_separator(char *text) {
  int after_space = 0;
  for (char *s = text; *s; ++s) {
    if (*s == '=' || *s == ':') return s;
    if (after_space && *s == ';') return NULL;
    after_space = isspace((unsigned char)*s);
  }
  return NULL;
}

/* A line longer than inih's buffer: split it here the way inih would, so that long paths
 * work. */
static void apply_long_line(loader_t *ld, char *text, char *separator) {
  *separator = '\0';
  char *value = separator + 1;
  for (char *s = value; *s; ++s) {
    if (*s == ';' && s > value && isspace((unsigned char)s[-1])) {
      *s = '\0';
      break;
    }
  }
  apply_assignment(ld, rtm_cfg_trim(text), rtm_cfg_trim(value));
}

static char *next_line(char *buffer, int size, void *stream) {
  loader_t *ld = stream;
  if (size < 1 || read_physical_line(ld) <= 0) return NULL;
  ++ld->line_number;
  char *text = ld->line;
  if (ld->line_number == 1 && strncmp(text, "\xEF\xBB\xBF", 3) == 0) text += 3; /* UTF-8 BOM */
  /* inih reads an indented line as the continuation of the previous value; here
   * indentation is only layout. */
  text = rtm_cfg_trim(text);
  buffer[0] = '\0';
  if (text[0] == '\0' || text[0] == ';' || text[0] == '#') return buffer;
  if (text[0] == '[') {
    enter_section(ld, text);
    return buffer;
  }
  char *separator = find_separator(text);
  if (!separator) {
    loader_error(ld, "malformed line \"%.60s\": expected key = value, [section] or a comment",
                 text);
    return buffer;
  }
  size_t length = strlen(text);
  if (length < (size_t)size) {
    memcpy(buffer, text, length + 1);
  } else {
    apply_long_line(ld, text, separator);
  }
  return buffer;
}

int rtm_config_load(const char *path, rtm_config_t *cfg) {
  int status = RTM_OK;
  loader_t ld = {0};
  rtm_config_t *work = NULL;
  char why[256];
  long long bytes = 0;
  ld.path = path;
  if (strlen(path) >= sizeof cfg->path)
    RTM_FAIL(RTM_ERR_INPUT, "%.100s...: config path longer than %zu characters", path,
             sizeof cfg->path - 1);
  if (rtm_text_open(path, &ld.file, &bytes, why, sizeof why) != RTM_OK)
    RTM_FAIL(RTM_ERR_INPUT, "%s: cannot open config file: %s", path, why);
  if (bytes > RTM_CFG_DECK_MAX_BYTES)
    RTM_FAIL(RTM_ERR_INPUT,
             "%s: cannot read config file: %lld bytes (%.1f MiB), more than a deck may hold "
             "(%d MiB)",
             path, bytes, bytes / 1048576.0, RTM_CFG_DECK_MAX_BYTES >> 20);
  work = malloc(sizeof *work);
  if (!work) RTM_FAIL(RTM_ERR_NOMEM, "%s: out of memory", path);
  rtm_config_defaults(work);
  snprintf(work->path, sizeof work->path, "%s", path);
  ld.cfg = work;

  int first_error_line = ini_parse_stream(next_line, &ld, on_pair, &ld);
  if (first_error_line == -2) RTM_FAIL(RTM_ERR_NOMEM, "%s: out of memory", path);
  if (ld.read_status) RTM_FAIL(RTM_ERR_INPUT, "%s: cannot read config file: %s", path, ld.read_why);
  if (first_error_line > 0 && ld.errors == 0) {
    /* The reader passes inih only lines it accepts, so this is inih disagreeing with it. */
    ld.line_number = first_error_line;
    loader_error(&ld, "syntax error");
  }
  if (ld.errors >= RTM_CFG_ERRORS_MAX)
    rtm_log_error("%s: %d errors by line %d; stopped reading there (is this a config deck?)", path,
                  ld.errors, ld.line_number);
  else if (ld.errors > 1)
    rtm_log_error("%s: %d errors in the config file", path, ld.errors);
  if (ld.errors) {
    status = RTM_ERR_CONFIG;
    goto fail;
  }
  /* an empty deck (or one of comments and headers) is read as every default: said, since a
   * full default run from an empty file was taken without a word (a probe) */
  int keys = 0;
  for (size_t k = 0; k < rtm_cfg_row_count(); ++k)
    keys += work->deck_line[k] != 0;
  if (keys == 0)
    rtm_log_warning(
        "%s sets no key (it is empty, or holds only comments and section headers): "
        "every key not given with --set is at its default (rtm3d help-config lists them)",
        path);
  *cfg = *work;
fail:
  free(work);
  if (ld.file) fclose(ld.file);
  return status;
}
