/* config_echo.c - the resolved deck as INI text, and that text less the keys that only pace a
 * run. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_impl.h"
#include "rtm_version.h"

/* Text goes to a FILE or grows in memory; one writer serves both echo functions. */
typedef struct {
  FILE *file;
  char *text;
  size_t length, capacity;
  int failed;
} sink_t;

static void put(sink_t *sink, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(sink_t *sink, const char *fmt, ...) {
  va_list args;
  if (sink->failed) return;
  if (sink->file) {
    va_start(args, fmt);
    vfprintf(sink->file, fmt, args);
    va_end(args);
    return;
  }
  va_start(args, fmt);
  int needed = vsnprintf(NULL, 0, fmt, args);
  va_end(args);
  if (needed < 0) {
    sink->failed = 1;
    return;
  }
  if (sink->length + (size_t)needed + 1 > sink->capacity) {
    size_t capacity = sink->capacity ? sink->capacity : 4096;
    while (sink->length + (size_t)needed + 1 > capacity)
      capacity *= 2;
    char *grown = realloc(sink->text, capacity);
    if (!grown) {
      sink->failed = 1;
      return;
    }
    sink->text = grown;
    sink->capacity = capacity;
  }
  va_start(args, fmt);
  vsnprintf(sink->text + sink->length, sink->capacity - sink->length, fmt, args);
  va_end(args);
  sink->length += (size_t)needed;
}

static void echo(const rtm_config_t *cfg, sink_t *sink) {
  char value[RTM_CFG_VALUE_MAX];
  const char *section = NULL;
  put(sink, "# rtm3d %s configuration, every key resolved%s%s\n", RTM3D_VERSION,
      cfg->path[0] ? "; read from " : "", cfg->path);
  for (const rtm_cfg_entry_t *row = rtm_config_schema; row->section; ++row) {
    if (!section || strcmp(section, row->section) != 0) {
      put(sink, "%s[%s]\n", section ? "\n" : "", row->section);
      section = row->section;
    }
    rtm_cfg_format_value(row, cfg, value, sizeof value);
    put(sink, "%s = %s\n", row->key, value);
  }
}

void rtm_config_echo(const rtm_config_t *cfg, FILE *out) {
  sink_t sink = {out, NULL, 0, 0, 0};
  echo(cfg, &sink);
}

char *rtm_config_echo_string(const rtm_config_t *cfg) {
  sink_t sink = {NULL, NULL, 0, 0, 0};
  echo(cfg, &sink);
  if (sink.failed) {
    free(sink.text);
    return NULL;
  }
  return sink.text;
}

/* The keys that set how a run proceeds, not what it computes. */
static const char *const pacing[] = {
    "rtm.resume_every",     "output.overwrite",     "mpi.timeout_s", "mpi.exchange",
    "output.stream_traces", "output.stream_window", "output.segy"};

/* Whether `line` ("key = value") sets one of the "section.key" names. */
static int is_listed(const char *section, size_t section_length, const char *line,
                     const char *const *keys, size_t count) {
  for (size_t k = 0; k < count; ++k) {
    const char *dot = strchr(keys[k], '.');
    if (!dot) continue;
    const char *key = dot + 1;
    const size_t key_length = strlen(key);
    if ((size_t)(dot - keys[k]) == section_length &&
        strncmp(section, keys[k], section_length) == 0 && strncmp(line, key, key_length) == 0 &&
        strncmp(line + key_length, " = ", 3) == 0)
      return 1;
  }
  return 0;
}

void rtm_config_drop_keys(char *text, const char *const *keys, size_t count) {
  const char *section = ""; /* the last [section] header, where it lies once kept */
  size_t section_length = 0;
  char *kept = text;
  for (const char *line = text; *line;) {
    const size_t end = strcspn(line, "\n"), length = end + (line[end] == '\n');
    const int header = line[0] == '[' && end > 2 && line[end - 1] == ']';
    if (header || !is_listed(section, section_length, line, keys, count)) {
      memmove(kept, line, length);
      if (header) {
        section = kept + 1;
        section_length = end - 2;
      }
      kept += length;
    }
    line += length;
  }
  *kept = '\0';
}

void rtm_config_drop_pacing(char *text) {
  rtm_config_drop_keys(text, pacing, sizeof pacing / sizeof pacing[0]);
}
