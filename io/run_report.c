/* The JSON run report: a small hand-written writer (the report is flat and its keys are
 * fixed, so a JSON library would add a dependency for nothing). Written as PATH.partial
 * and renamed once complete. Non-finite numbers are written as null. */
#include "rtm_io.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "rtm_io_impl.h"

/* A JSON string (RFC 8259) of text from anywhere (a deck, the command line, a file name):
 * C0 controls and DEL as \u00XX (the short forms where JSON has them), C1 controls written
 * as UTF-8 (U+0080-U+009F) as \u0080-\u009f, so that no reader's terminal acts on them;
 * well-formed UTF-8 (rtm_utf8_length) as it is. A byte that is not part of it (output.name =
 * "\xff\xfe") cannot stand in JSON text: each such byte is written \ufffd, the replacement
 * character, so the report stays valid and shows where a byte was lost. */
static void json_string(FILE *out, const char *text) {
  if (!text) {
    fputs("null", out);
    return;
  }
  fputc('"', out);
  for (const unsigned char *c = (const unsigned char *)text; *c;) {
    const size_t length = rtm_utf8_length((const char *)c);
    if (length == 0) {
      fputs("\\ufffd", out);
      ++c;
      continue;
    }
    if (length == 2 && c[0] == 0xc2 && c[1] <= 0x9f) {
      fprintf(out, "\\u%04x", c[1]); /* U+0080-U+009F: the code point is the second byte */
      c += 2;
      continue;
    }
    if (length > 1) {
      fwrite(c, 1, length, out);
      c += length;
      continue;
    }
    switch (*c) {
    case '"': fputs("\\\"", out); break;
    case '\\': fputs("\\\\", out); break;
    case '\b': fputs("\\b", out); break;
    case '\f': fputs("\\f", out); break;
    case '\n': fputs("\\n", out); break;
    case '\r': fputs("\\r", out); break;
    case '\t': fputs("\\t", out); break;
    default:
      if (*c < 0x20 || *c == 0x7f)
        fprintf(out, "\\u%04x", *c);
      else
        fputc(*c, out);
    }
    ++c;
  }
  fputc('"', out);
}

/* A value read back exactly (dt, spacing): 17 digits. */
static void json_number(FILE *out, double value) {
  if (isfinite(value))
    fprintf(out, "%.17g", value);
  else
    fputs("null", out);
}

/* A measurement (seconds, MCells/s, fractions): the six digits a clock or a counter means,
 * not 0.994775314999998. */
static void json_measure(FILE *out, double value) {
  if (isfinite(value) && value == floor(value) && fabs(value) < 1e15)
    fprintf(out, "%.0f", value); /* a count (recomputed steps) whole */
  else if (isfinite(value))
    fprintf(out, "%.6g", value);
  else
    fputs("null", out);
}

static void json_key(FILE *out, int indent, const char *key) {
  fprintf(out, "%*s", indent, "");
  json_string(out, key);
  fputs(": ", out);
}

static void json_doubles(FILE *out, const double *values, int count,
                         void (*write)(FILE *, double)) {
  fputc('[', out);
  for (int i = 0; i < count; ++i) {
    if (i) fputs(", ", out);
    write(out, values[i]);
  }
  fputc(']', out);
}

static void write_grid(FILE *out, const rtm_io_volume_t *volume) {
  if (!volume) {
    fputs("null", out);
    return;
  }
  fprintf(out, "{\"n\": [%d, %d, %d], \"spacing_m\": ", volume->n[0], volume->n[1], volume->n[2]);
  json_doubles(out, volume->spacing_m, 3, json_number);
  fputs(", \"origin_m\": ", out);
  json_doubles(out, volume->origin_m, 3, json_number);
  fputc('}', out);
}

static void write_memory(FILE *out, const rtm_report_allocation_t *allocations, int count) {
  fputc('[', out);
  for (int i = 0; i < count; ++i) {
    const rtm_report_allocation_t *r = &allocations[i];
    fputs(i ? ",\n    " : "\n    ", out);
    fputs("{\"label\": ", out);
    json_string(out, r->label);
    fputs(", \"strategy\": ", out);
    json_string(out, r->strategy);
    fprintf(out, ", \"bytes\": %zu, \"reserved_bytes\": %zu, \"compressed\": %s}", r->bytes,
            r->reserved_bytes, r->compressed ? "true" : "false");
  }
  fputs(count ? "\n  ]" : "]", out);
}

/* "key": value, at the report's top level; every field but the last ends its line with a
 * comma. */
static void field_string(FILE *out, const char *key, const char *value) {
  json_key(out, 2, key);
  json_string(out, value);
  fputs(",\n", out);
}

static void field_number(FILE *out, const char *key, double value) {
  json_key(out, 2, key);
  json_number(out, value);
  fputs(",\n", out);
}

static void write_timings(FILE *out, const rtm_timing_t *timings, int count) {
  fputc('{', out);
  for (int i = 0; i < count; ++i) {
    if (i) fputs(", ", out);
    json_string(out, timings[i].name);
    fputs(": ", out);
    json_measure(out, timings[i].seconds);
  }
  fputc('}', out);
}

/* "shots": {"count": N, "<name>": [N numbers], ...} */
static void write_shots(FILE *out, const rtm_report_t *report) {
  json_key(out, 2, "shots");
  fprintf(out, "{\"count\": %d", report->shot_count);
  for (int i = 0; i < report->shot_value_count; ++i) {
    fputs(", ", out);
    json_string(out, report->shot_values[i].name);
    fputs(": ", out);
    json_doubles(out, report->shot_values[i].values, report->shot_count, json_measure);
  }
  fputs("},\n", out);
}

/* "reconstruction": {"name": ..., "estimate_bytes": ..., "measured_bytes": ..., "measured_in": ...
 * [, "snapshots": ..., "snapshot_round_trip_l2": ...]} */
static void write_reconstruction(FILE *out, const rtm_report_t *report) {
  json_key(out, 2, "reconstruction");
  fputs("{\"name\": ", out);
  json_string(out, report->reconstruction);
  fprintf(out, ", \"estimate_bytes\": %zu, \"measured_bytes\": %zu, \"measured_in\": ",
          report->reconstruction_estimate_bytes, report->reconstruction_measured_bytes);
  json_string(out, report->reconstruction_measured_in ? report->reconstruction_measured_in : "");
  if (report->snapshot_format) {
    fputs(", \"snapshots\": ", out);
    json_string(out, report->snapshot_format);
  }
  if (report->snapshot_round_trip >= 0.0)
    fprintf(out, ", \"snapshot_round_trip_l2\": %.6g", report->snapshot_round_trip);
  fputs("},\n", out);
}

/* "warnings": the run's distinct warnings, printed or not (--quiet), the first 16 of them, and
 * "warnings_count": how many in all; a script sees from the report alone that a run that
 * exited 0 said something (an image of zeros, a correction turned off, ...). */
static void write_warnings(FILE *out) {
  enum { SHOWN = 16 };
  const char *lines[SHOWN];
  const int total = rtm_log_warnings_kept(lines, SHOWN);
  json_key(out, 2, "warnings");
  fputc('[', out);
  for (int i = 0; i < total && i < SHOWN; ++i) {
    if (i) fputs(", ", out);
    json_string(out, lines[i]);
  }
  fprintf(out, "],\n");
  json_key(out, 2, "warnings_count");
  fprintf(out, "%d,\n", total);
}

static void write_report(FILE *out, const rtm_report_t *report) {
  const rtm_run_info_t none = {0};
  const rtm_run_info_t *info = report->info ? report->info : &none;
  rtm_io_provenance_t stamp;
  rtm_io_provenance(&stamp);
  fputs("{\n", out);
  json_key(out, 2, "format_version");
  fprintf(out, "%d,\n", RTM_IO_FORMAT_VERSION);
  field_string(out, "created", stamp.created);
  field_string(out, "host", stamp.host);
  field_string(out, "command_line", info->command_line ? info->command_line : "");
  field_string(out, "command", report->command);
  field_string(out, "version", info->version);
  field_string(out, "git_revision", info->git_revision);
  field_string(out, "backend", info->backend);
  field_string(out, "device", info->device);
  json_key(out, 2, "grid");
  write_grid(out, report->volume);
  fputs(",\n", out);
  json_key(out, 2, "steps");
  fprintf(out, "%d,\n", report->steps);
  field_number(out, "dt_s", report->dt_s);
  field_string(out, "model_precision", report->model_precision);
  if (report->reconstruction) write_reconstruction(out, report);
  write_warnings(out);
  json_key(out, 2, "timings_s");
  write_timings(out, report->timings, report->timing_count);
  fputs(",\n", out);
  json_key(out, 2, "mcells_per_s");
  json_measure(out, report->mcells_per_s);
  fputs(",\n", out);
  if (report->shot_count > 0) write_shots(out, report);
  if (report->rank_count > 1 && report->command && strcmp(report->command, "bench") == 0) {
    json_key(out, 2, "mpi");
    fprintf(out, "{\"ranks\": %d, \"parallel_efficiency\": ", report->rank_count);
    json_measure(out, report->parallel_efficiency);
    fputs(", \"exchange_hidden\": ", out);
    json_measure(out, report->exchange_hidden);
    fputs("},\n", out);
  }
  if (report->rank_count > 1 && report->rank_lines) {
    json_key(out, 2, "ranks");
    fputc('[', out);
    for (int r = 0; r < report->rank_count; ++r) {
      if (r) fputs(", ", out);
      json_string(out, report->rank_lines + (size_t)r * report->rank_line_size);
    }
    fputs("],\n", out);
  }
  if (report->slab_writes) {
    json_key(out, 2, "slab_writes");
    json_string(out, report->slab_writes);
    fputs(",\n", out);
  }
  json_key(out, 2, "memory");
  write_memory(out, report->allocations, report->allocation_count);
  fputs(",\n", out);
  json_key(out, 2, "memory_total_bytes");
  fprintf(out, "%zu,\n", report->allocation_total_bytes);
  json_key(out, 2, "output_path");
  json_string(out, report->output_path);
  fputs("\n}\n", out);
}

int rtm_report_written_by_rtm3d(const char *path) {
  char head[512];
  FILE *f = fopen(path, "rb");
  const size_t got = f ? fread(head, 1, sizeof head - 1, f) : 0;
  if (f) fclose(f);
  head[got] = '\0';
  return strncmp(head, "{\n  \"format_version\": ", 22) == 0 &&
         strstr(head, "\"command_line\"") != NULL;
}

int rtm_report_write_json(const char *path, const rtm_report_t *report) {
  int status = RTM_OK, appeared = 0;
  char partial[4096 + 32];
  FILE *out = NULL;
  RTM_TRY(rtm_io_make_parent_dir(path));
  RTM_TRY(rtm_io_aside_create(path, partial, sizeof partial)); /* a new name, never a link */
  out = fopen(partial, "w");
  if (!out) RTM_FAIL(RTM_ERR_IO, "cannot write run report %s: %s", partial, strerror(errno));
  write_report(out, report);
  int write_failed = ferror(out);
  int close_failed = fclose(out) != 0;
  out = NULL;
  if (write_failed || close_failed) {
    remove(partial);
    RTM_FAIL(RTM_ERR_IO, "writing run report %s failed: %s", partial, strerror(errno));
  }
  if (!report->replace_none) {
    RTM_TRY(rtm_io_commit_partial(partial, path)); /* synced first */
  } else if (rtm_io_commit_new(partial, path, &appeared) != RTM_OK) {
    rtm_io_remove_own(partial, "this run's unfinished report");
    if (appeared)
      RTM_FAIL(RTM_ERR_IO,
               "%s appeared while this run ran (another run, program or user wrote it): it is "
               "left as it is and this report is not written; run again, with --force to "
               "replace it",
               path);
    status = RTM_ERR_IO;
    goto fail;
  }
fail:
  if (out) {
    fclose(out);
    remove(partial);
  }
  return status;
}
