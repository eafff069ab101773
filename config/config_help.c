/* config_help.c - `rtm3d help-config`: the schema as one table a section, wrapped at a width.
 *
 * Each section's columns (key, type, default, range) are as wide as the section's cells need,
 * up to a cap; the meaning column takes the rest of the width and is wrapped under itself. A
 * cell longer than its column's cap does not widen the column: the row goes on on the next
 * line, under the next column, so a long key or choice list gets a line of its own. Where the
 * width leaves the meaning too little room, it goes under the row, indented. */
#include <stdio.h>
#include <string.h>

#include "config_impl.h"
#include "rtm_status.h"

enum {
  CELLS = 4,         /* key, type, default, range; then the meaning */
  CELL_MAX = 160,    /* room for any cell's text */
  INDENT = 2,        /* a row's indent */
  GAP = 2,           /* spaces between columns */
  MEANING_MIN = 24,  /* the narrowest meaning column kept beside the others */
  WIDTH_MIN = 60,    /* a narrower width is taken as this */
  MEANING_UNDER = 6, /* the meaning's indent when it goes under the row */
};
static const char *const headings[CELLS + 1] = {"key", "type", "default", "range", "meaning"};
/* "number|auto" fits its column, as do most defaults and ranges ("<= 1023 chars") */
static const size_t cell_caps[CELLS] = {16, 11, 8, 16};

typedef struct {
  FILE *out;
  int width;
  int column; /* characters on the line so far */
} writer_t;

static void new_line(writer_t *w) {
  fputc('\n', w->out);
  w->column = 0;
}

/* To `column` on this line when what is on it ends GAP before there, else on the next. */
static void move_to(writer_t *w, int column) {
  if (w->column > 0 && w->column + GAP > column) new_line(w);
  fprintf(w->out, "%*s", column - w->column, "");
  w->column = column;
}

static void put_text(writer_t *w, const char *text, size_t length) {
  fwrite(text, 1, length, w->out);
  w->column += (int)length;
}

/* `text` word by word from `column` to the width, each further line begun at `column`; a
 * word longer than a whole line is cut. */
static void put_wrapped(writer_t *w, int column, const char *text) {
  const size_t room = (size_t)(w->width - column);
  move_to(w, column);
  const int start = w->column;
  for (const char *word = text + strspn(text, " "); *word; word += strspn(word, " ")) {
    size_t length = strcspn(word, " ");
    if (w->column > start && (size_t)w->column + 1 + length <= (size_t)w->width) {
      put_text(w, " ", 1);
    } else if (w->column > start) {
      new_line(w);
      move_to(w, column);
    }
    while (length > room) { /* no line holds it */
      put_text(w, word, room);
      word += room;
      length -= room;
      new_line(w);
      move_to(w, column);
    }
    put_text(w, word, length);
    word += length;
  }
}

/* A row's key, type, default and range as the table shows them. */
static void row_cells(const rtm_cfg_entry_t *row, char cells[CELLS][CELL_MAX]) {
  snprintf(cells[0], CELL_MAX, "%s", row->key);
  snprintf(cells[1], CELL_MAX, "%s", row->choices ? "choice" : rtm_cfg_type_name(row->type));
  snprintf(cells[2], CELL_MAX, "%s", row->default_text[0] ? row->default_text : "\"\"");
  rtm_cfg_describe_range(row, cells[3], CELL_MAX);
  if (!cells[3][0] && row->type == RTM_CFG_STRING)
    snprintf(cells[3], CELL_MAX, "<= %zu chars", row->size - 1);
  else if (!cells[3][0])
    snprintf(cells[3], CELL_MAX, "-");
}

/* Where each column of `section` starts: each as wide as its heading and its cells within the
 * cap; starts[CELLS] is the meaning's. */
static void section_columns(const char *section, int width, int starts[CELLS + 1]) {
  size_t widths[CELLS];
  char cells[CELLS][CELL_MAX];
  for (int k = 0; k < CELLS; ++k)
    widths[k] = strlen(headings[k]);
  for (const rtm_cfg_entry_t *row = rtm_config_schema; row->section; ++row) {
    if (strcmp(row->section, section) != 0) continue;
    row_cells(row, cells);
    for (int k = 0; k < CELLS; ++k) {
      const size_t length = strlen(cells[k]);
      if (length <= cell_caps[k] && length > widths[k]) widths[k] = length;
    }
  }
  starts[0] = INDENT;
  for (int k = 0; k < CELLS; ++k)
    starts[k + 1] = starts[k] + (int)widths[k] + GAP;
  if (width - starts[CELLS] < MEANING_MIN) starts[CELLS] = MEANING_UNDER;
}

static void put_row(writer_t *w, const int starts[CELLS + 1], const char *const cells[CELLS],
                    const char *meaning) {
  for (int k = 0; k < CELLS; ++k) {
    const int length = (int)strlen(cells[k]), last_start = w->width - length;
    /* a cell that would pass the width at its column ends at the width, on a line of its own */
    move_to(w, starts[k] <= last_start ? starts[k] : last_start > INDENT ? last_start : INDENT);
    put_text(w, cells[k], (size_t)length);
  }
  put_wrapped(w, starts[CELLS], meaning);
  new_line(w);
}

static void put_section(writer_t *w, const char *section) {
  int starts[CELLS + 1];
  char cells[CELLS][CELL_MAX];
  section_columns(section, w->width, starts);
  fprintf(w->out, "[%s]\n", section);
  put_row(w, starts, headings, headings[CELLS]);
  for (const rtm_cfg_entry_t *row = rtm_config_schema; row->section; ++row) {
    if (strcmp(row->section, section) != 0) continue;
    row_cells(row, cells);
    const char *const texts[CELLS] = {cells[0], cells[1], cells[2], cells[3]};
    put_row(w, starts, texts, row->help);
  }
}

/* "grid, time, model, ...": the sections in schema order. */
static void section_names(char *buf, size_t size) {
  size_t used = 0;
  const char *previous = NULL;
  buf[0] = '\0';
  for (const rtm_cfg_entry_t *row = rtm_config_schema; row->section && used < size; ++row) {
    if (previous && strcmp(previous, row->section) == 0) continue;
    const int n = snprintf(buf + used, size - used, "%s%s", previous ? ", " : "", row->section);
    if (n < 0) break;
    used += (size_t)n;
    previous = row->section;
  }
}

/* "rtm" for "rtm" or "[rtm]", into buf; 0 when no section is so named. */
static int known_section(const char *name, char *buf, size_t size) {
  const size_t length = strlen(name);
  if (length > 2 && name[0] == '[' && name[length - 1] == ']')
    snprintf(buf, size, "%.*s", (int)(length - 2), name + 1);
  else
    snprintf(buf, size, "%s", name);
  return rtm_cfg_section_known(buf);
}

int rtm_config_print_schema(FILE *out, const char *const *sections, int section_count, int width) {
  char names[512], name[RTM_CONFIG_NAME_MAX], hint[640];
  writer_t w = {out, width < WIDTH_MIN ? WIDTH_MIN : width, 0};
  section_names(names, sizeof names);
  for (int s = 0; s < section_count; ++s) {
    if (known_section(sections[s], name, sizeof name)) continue;
    rtm_cfg_suggest_section(name, hint, sizeof hint);
    if (strncmp(hint, " (did", 5) != 0) hint[0] = '\0'; /* the list follows anyway */
    rtm_log_error("help-config: no section [%s]%s; the sections are %s", name, hint, names);
    return RTM_ERR_USAGE;
  }
  if (section_count > 0) {
    for (int s = 0; s < section_count; ++s) {
      known_section(sections[s], name, sizeof name);
      fprintf(out, "%s", s ? "\n" : "");
      put_section(&w, name);
    }
    return RTM_OK;
  }
  char intro[1024];
  snprintf(intro, sizeof intro,
           "rtm3d configuration keys. A deck is an INI file: [section] headers, key = value "
           "lines, comments starting with ';' or '#'. Any key can be overridden on the command "
           "line with --set section.key=value. Strings may be double-quoted; number|auto keys "
           "take \"auto\" for the value the solver works out. 'rtm3d help-config SECTION' "
           "prints one section: %s.",
           names);
  put_wrapped(&w, 0, intro);
  new_line(&w);
  const char *section = NULL;
  for (const rtm_cfg_entry_t *row = rtm_config_schema; row->section; ++row) {
    if (section && strcmp(section, row->section) == 0) continue;
    section = row->section;
    fprintf(out, "\n");
    put_section(&w, section);
  }
  return RTM_OK;
}
