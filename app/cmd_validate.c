/* rtm3d validate RUN.h5 REFERENCE.h5: compares every dataset of the reference (or the
 * listed ones) with the run. Snapshot series are compared snapshot by snapshot, other
 * datasets whole. A comparison passes when the relative L2 error ||run - ref|| / ||ref||
 * is within --rtol and, when --atol is given, the largest absolute error within --atol;
 * a non-finite value on either side fails. Exit 0 when all pass, 1 when one fails, 2 for
 * usage errors and unreadable files. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "rtm_io.h"
#include "rtm_status.h"

#define NAME_COLUMN 28

static void usage(FILE *out) {
  fprintf(out,
          "usage: rtm3d validate RUN.h5 REFERENCE.h5 [--rtol X] [--atol X] [--datasets a,b,...]\n\n"
          "Compares the datasets of a run with a reference run: /snapshots/* snapshot by\n"
          "snapshot, /traces/* (not receivers), a many-shot run's /shots/<k>/traces/*, a\n"
          "migration's /shots/<k>/image and /gathers/*, and datasets at the root (/image, a\n"
          "model file's /vp, ...) whole, and where they lie: the grid's origin and spacing,\n"
          "a gather's source and receivers (a row that fails when they differ). For each it\n"
          "prints the relative L2 error ||run - ref|| / ||ref|| (the absolute norm when the\n"
          "reference is all zero, marked so) and the largest absolute error.\n\n"
          "  --rtol X          largest relative L2 error that passes (default 1e-05)\n"
          "  --atol X          also require the largest absolute error <= X\n"
          "  --datasets a,b    compare only these datasets (e.g. /snapshots/p,/traces/p)\n"
          "  --help            this text\n\n"
          "A non-finite value (NaN, Inf) on either side fails, and so does a shape mismatch,\n"
          "a dataset missing from RUN, or one only RUN holds (without --datasets).\n"
          "Exit status: 0 all comparisons pass, 1 one fails, 2 usage error or unreadable file.\n");
}

typedef struct {
  double rtol;
  double atol; /* NAN: not checked */
  int compared, failed;
} validate_t;

static void format_shape(int rank, const size_t *dims, char *text, size_t size) {
  size_t used = 0;
  text[0] = '\0';
  for (int i = 0; i < rank && used < size; ++i)
    used += (size_t)snprintf(text + used, size - used, "%s%zu", i ? "x" : "", dims[i]);
}

static void print_header(void) {
  printf("%-*s %-18s %12s %12s  %s\n", NAME_COLUMN, "dataset", "shape", "rel_l2_err", "max_abs_err",
         "result");
}

/* A dataset's name as the table's first column: names come from the files (and from
 * --datasets), so escape sequences, C1 controls and invalid UTF-8 in them are written \xNN
 * (rtm_escape_text) rather than handed to the terminal. entry >= 0: a snapshot's index. */
static void print_name(const char *name, long entry) {
  char safe[4 * 512 + 32];
  rtm_escape_text(name, safe, sizeof safe);
  if (entry >= 0) snprintf(safe + strlen(safe), sizeof safe - strlen(safe), "[%ld]", entry);
  printf("%-*s ", NAME_COLUMN, safe);
}

static void print_row(validate_t *v, const char *name, long entry, const char *shape,
                      const rtm_comparison_t *c) {
  int pass =
      c->non_finite == 0 && c->error_norm <= v->rtol && (isnan(v->atol) || c->max_abs <= v->atol);
  ++v->compared;
  if (!pass) ++v->failed;
  print_name(name, entry);
  printf("%-18s %12.4e %12.4e  %s", shape, c->error_norm, c->max_abs, pass ? "PASS" : "FAIL");
  if (c->non_finite) printf(" (%zu non-finite values)", c->non_finite);
  /* its finite values' norm: of none when every pair held a NaN or an Inf (probe R, R4) */
  if (c->absolute && !c->non_finite) printf(" (reference is all zero: absolute L2 norm)");
  printf("\n");
}

/* why may name a file (a user's path): escaped as the names are. */
static void print_failure(validate_t *v, const char *name, const char *why) {
  char safe[4 * 256 + 1];
  ++v->compared;
  ++v->failed;
  rtm_escape_text(why, safe, sizeof safe);
  print_name(name, -1);
  printf("%-18s %12s %12s  FAIL (%s)\n", "-", "-", "-", safe);
}

/* 1 when two positions or spacings (doubles) agree to a micrometre, or to a millionth of a
 * micrometre of each metre where they are so far out that doubles round more coarsely,
 * both finite (an Inf on one side is no position near itself: probe W, W2). A millionth of
 * the larger passed a survey 4 m north at a northing of 5000 km (a probe). */
static int same_metres(const double *a, const double *b, size_t count) {
  for (size_t i = 0; i < count; ++i)
    if (!isfinite(a[i]) || !isfinite(b[i]) ||
        !(fabs(a[i] - b[i]) <= fmax(1e-6, 1e-12 * fmax(fabs(a[i]), fabs(b[i])))))
      return 0;
  return 1;
}

/* Which side of a pair: "run" or "reference" (side 0 or 1). */
static const char *side_name(int side) {
  return side == 0 ? "run" : "reference";
}

/* The files' grid (spacing, origin: attributes of the file, read beside `name`), which the
 * values do not show (probe S, S5: a survey shifted 1000 m passed on its traces): a failed
 * row when run and reference differ, nothing when they agree or one does not say. Once a
 * pair of files. */
static void validate_grid(validate_t *v, const char *run_path, const char *ref_path,
                          const char *name) {
  rtm_io_axes_t run_axes, ref_axes;
  char why[256];
  const int run_read = rtm_io_read_axes(run_path, name, -1, &run_axes),
            ref_read = rtm_io_read_axes(ref_path, name, -1, &ref_axes);
  if (run_read != RTM_OK || ref_read != RTM_OK) { /* a damaged spacing or origin (said) */
    snprintf(why, sizeof why, "the grid of the %s cannot be read (said above)",
             side_name(run_read == RTM_OK));
    print_failure(v, "grid (where)", why);
    return;
  }
  if (run_axes.has_grid != ref_axes.has_grid) { /* probe X, X5: passed either way */
    snprintf(why, sizeof why, "a grid (attributes spacing, origin) in the %s only",
             side_name(ref_axes.has_grid));
    print_failure(v, "grid (where)", why);
    return;
  }
  if (!run_axes.has_grid) return;
  if (run_axes.has_origin != ref_axes.has_origin) {
    snprintf(why, sizeof why, "an origin (attribute) in the %s only",
             side_name(ref_axes.has_origin));
    print_failure(v, "grid (where)", why);
    return;
  }
  const double *run_at = run_axes.origin_m, *ref_at = ref_axes.origin_m;
  const char *what = "origin";
  if (same_metres(run_at, ref_at, 3)) {
    if (same_metres(run_axes.spacing_m, ref_axes.spacing_m, 3)) return;
    run_at = run_axes.spacing_m;
    ref_at = ref_axes.spacing_m;
    what = "spacing";
  }
  snprintf(why, sizeof why,
           "grid %s (%.10g, %.10g, %.10g) m in run, (%.10g, %.10g, %.10g) m in reference", what,
           run_at[0], run_at[1], run_at[2], ref_at[0], ref_at[1], ref_at[2]);
  print_failure(v, "grid (where)", why);
}

/* The shots each file holds (shot_count, or the single-shot /traces): a failed row when the
 * counts differ or one is damaged (probe X, X1: an extra /shots/3 group, or shot_count 4 of
 * 3 shots stored, passed). */
static void validate_shots(validate_t *v, const char *run_path, const char *ref_path) {
  char why[300];
  int count[2] = {0, 0};
  const int read[2] = {rtm_io_run_shots(run_path, &count[0]),
                       rtm_io_run_shots(ref_path, &count[1])};
  if (read[0] != RTM_OK || read[1] != RTM_OK)
    snprintf(why, sizeof why, "the shots of the %s cannot be counted (said above)",
             side_name(read[0] == RTM_OK));
  else if (count[0] != count[1])
    snprintf(why, sizeof why, "%d shot%s in run, %d in reference", count[0],
             count[0] == 1 ? "" : "s", count[1]);
  else
    return;
  print_failure(v, "shots", why);
}

/* A gather's source in both files: a failed row when they differ, when one file gives one
 * and the other none, or when one cannot be read (a damaged position, said). */
static void validate_source(validate_t *v, const char *run_path, const char *ref_path,
                            const char *name, const char *label) {
  char why[700];
  double source[2][3];
  int found[2] = {0, 0};
  const int read[2] = {rtm_io_read_gather_source(run_path, name, source[0], &found[0]),
                       rtm_io_read_gather_source(ref_path, name, source[1], &found[1])};
  if (read[0] != RTM_OK || read[1] != RTM_OK)
    snprintf(why, sizeof why, "the source in the %s cannot be read (said above)",
             side_name(read[0] == RTM_OK));
  else if (found[0] != found[1])
    snprintf(why, sizeof why, "a source in the %s only", side_name(found[1]));
  else if (found[0] && !same_metres(source[0], source[1], 3))
    snprintf(why, sizeof why,
             "source at (%.10g, %.10g, %.10g) m in run, (%.10g, %.10g, %.10g) m in reference",
             source[0][0], source[0][1], source[0][2], source[1][0], source[1][1], source[1][2]);
  else
    return;
  print_failure(v, label, why);
}

/* A gather's receivers (`receivers`) in both files: as validate_source, a position that is
 * not finite on either side failing too; they are floats in the file, so two of their ulps
 * apart still agree. */
static void validate_receivers(validate_t *v, const char *run_path, const char *ref_path,
                               const char *receivers, const char *label) {
  char why[700];
  rtm_dataset_t at[2] = {{0}, {0}};
  int exists[2] = {0, 0}, read[2] = {RTM_OK, RTM_OK};
  const char *paths[2] = {run_path, ref_path};
  for (int side = 0; side < 2; ++side) {
    read[side] = rtm_io_dataset_exists(paths[side], receivers, &exists[side]);
    if (read[side] == RTM_OK && exists[side])
      read[side] = rtm_io_read_dataset(paths[side], receivers, &at[side]);
  }
  why[0] = '\0';
  if (read[0] != RTM_OK || read[1] != RTM_OK) {
    snprintf(why, sizeof why, "the receivers (%s) in the %s cannot be read (said above)", receivers,
             side_name(read[0] == RTM_OK));
  } else if (exists[0] != exists[1]) {
    snprintf(why, sizeof why, "receivers (%s) in the %s only", receivers, side_name(exists[1]));
  } else if (exists[0]) {
    const size_t count = at[0].dims[0] * at[0].dims[1] * at[0].dims[2] * at[0].dims[3];
    int same = memcmp(at[0].dims, at[1].dims, sizeof at[0].dims) == 0, finite = 1;
    for (size_t i = 0; same && i < count; ++i) {
      const float a = at[0].data[i], b = at[1].data[i];
      finite = finite && isfinite(a) && isfinite(b);
      /* floats in the file: a micrometre, or two of their ulps (2^-22 of the larger) */
      same = finite && fabsf(a - b) <= fmaxf(1e-6f, 0x1p-22f * fmaxf(fabsf(a), fabsf(b)));
    }
    if (!same)
      snprintf(why, sizeof why, "its receivers (%s) differ%s", receivers,
               finite ? "" : ": a position that is not finite");
  }
  if (why[0]) print_failure(v, label, why);
  rtm_dataset_release(&at[0]);
  rtm_dataset_release(&at[1]);
}

/* A gather's sample interval (attribute dt) in both files: a failed row when they differ
 * beyond rounding, when one gives it and the other not, or when one is damaged (said). */
static void validate_interval(validate_t *v, const char *run_path, const char *ref_path,
                              const char *name, const char *label) {
  char why[300];
  rtm_io_axes_t axes[2];
  const int read[2] = {rtm_io_read_axes(run_path, name, -1, &axes[0]),
                       rtm_io_read_axes(ref_path, name, -1, &axes[1])};
  if (read[0] != RTM_OK || read[1] != RTM_OK)
    snprintf(why, sizeof why, "the sample interval in the %s cannot be read (said above)",
             side_name(read[0] == RTM_OK));
  else if (axes[0].has_dt != axes[1].has_dt)
    snprintf(why, sizeof why, "a sample interval (attribute dt) in the %s only",
             side_name(axes[1].has_dt));
  else if (axes[0].has_dt &&
           !(fabs(axes[0].dt_s - axes[1].dt_s) <= 1e-9 * fmax(axes[0].dt_s, axes[1].dt_s)))
    snprintf(why, sizeof why, "samples every %.17g s in run, %.17g s in reference", axes[0].dt_s,
             axes[1].dt_s);
  else
    return;
  print_failure(v, label, why);
}

/* The attribute `name` of list [count], or NULL. */
static const rtm_io_attribute_t *attribute_named(const rtm_io_attribute_t *list, int count,
                                                 const char *name) {
  for (int i = 0; i < count; ++i)
    if (strcmp(list[i].name, name) == 0) return &list[i];
  return NULL;
}

/* The first value where two attributes of as many values differ (a millionth of a millionth
 * apart; NaN as NaN, so that a file is still its own twin), or their count when none does. */
static size_t first_difference(const rtm_io_attribute_t *a, const rtm_io_attribute_t *b) {
  for (size_t i = 0; i < a->count; ++i) {
    const double x = a->values[i], y = b->values[i];
    if (isnan(x) && isnan(y)) continue;
    if (!(fabs(x - y) <= 1e-12 * fmax(fabs(x), fabs(y)))) return i;
  }
  return a->count;
}

/* A snapshot series' times and steps on one side: a value a snapshot, the times finite, the
 * steps whole numbers >= 0; a failed row for each that is not (two files damaged alike
 * passed as twins: a probe's NaN time, one time for two snapshots). */
static void validate_series(validate_t *v, const char *label, const rtm_io_attribute_t *list,
                            int count, size_t length, int side) {
  char why[300];
  for (int i = 0; i < count; ++i) {
    const rtm_io_attribute_t *a = &list[i];
    const int times = strcmp(a->name, "times") == 0, steps = strcmp(a->name, "steps") == 0;
    if (!times && !steps) continue;
    size_t bad = a->count;
    for (size_t k = 0; k < a->count && bad == a->count; ++k)
      if (!isfinite(a->values[k]) ||
          (steps && (a->values[k] < 0.0 || a->values[k] != floor(a->values[k]))))
        bad = k;
    if (a->count != length)
      snprintf(why, sizeof why, "%s in the %s holds %zu value%s for %zu snapshots", a->name,
               side_name(side), a->count, a->count == 1 ? "" : "s", length);
    else if (bad < a->count)
      snprintf(why, sizeof why, "%s in the %s: [%zu] = %g, not %s", a->name, side_name(side), bad,
               a->values[bad], times ? "a finite time" : "a step (a whole number >= 0)");
    else
      continue;
    print_failure(v, label, why);
  }
}

/* A dataset's numeric attributes (a snapshot series' times and steps, a gather panel's axes,
 * lags and angles): a failed row for each one on one side only or holding other values
 * (probe X, X2 and X3: all passed). dt is validate_interval's. */
static void validate_attributes(validate_t *v, const char *run_path, const char *ref_path,
                                const char *name, size_t series_length) {
  char label[600], why[700];
  rtm_io_attribute_t *list[2] = {NULL, NULL};
  int count[2] = {0, 0};
  const int read[2] = {rtm_io_read_numeric_attributes(run_path, name, &list[0], &count[0]),
                       rtm_io_read_numeric_attributes(ref_path, name, &list[1], &count[1])};
  snprintf(label, sizeof label, "%s (attributes)", name);
  if (read[0] != RTM_OK || read[1] != RTM_OK) {
    snprintf(why, sizeof why, "those of the %s cannot be read (said above)",
             side_name(read[0] == RTM_OK));
    print_failure(v, label, why);
  }
  for (int side = 0; read[0] == RTM_OK && read[1] == RTM_OK && side < 2; ++side)
    for (int i = 0; i < count[side]; ++i) {
      const rtm_io_attribute_t *mine = &list[side][i];
      const rtm_io_attribute_t *other =
          attribute_named(list[1 - side], count[1 - side], mine->name);
      if (strcmp(mine->name, "dt") == 0 || (other && side == 1)) continue; /* said once */
      const size_t at = other && other->count == mine->count ? first_difference(mine, other) : 0;
      if (!other)
        snprintf(why, sizeof why, "%s in the %s only", mine->name, side_name(side));
      else if (other->count != mine->count)
        snprintf(why, sizeof why, "%s holds %zu values in run, %zu in reference", mine->name,
                 mine->count, other->count);
      else if (at < mine->count) /* side 0 here: mine is the run's */
        snprintf(why, sizeof why, "%s differs: [%zu] = %.17g in run, %.17g in reference",
                 mine->name, at, mine->values[at], other->values[at]);
      else
        continue;
      print_failure(v, label, why);
    }
  for (int side = 0; series_length && side < 2; ++side)
    if (read[side] == RTM_OK)
      validate_series(v, label, list[side], count[side], series_length, side);
  rtm_io_attributes_release(list[0], count[0]);
  rtm_io_attributes_release(list[1], count[1]);
}

/* A gather panel's axes (/gathers/offset, /gathers/angle), on each side as plot reads them: a
 * failed row for a damaged one (its error said), which two files damaged alike passed as twins (a
 * probe). */
static void validate_gathers_axes(validate_t *v, const char *run_path, const char *ref_path,
                                  const char *name) {
  char label[600], why[300];
  const char *paths[2] = {run_path, ref_path};
  snprintf(label, sizeof label, "%s (attributes)", name);
  for (int side = 0; side < 2; ++side) {
    rtm_io_gathers_info_t info;
    const int read = rtm_io_read_gathers_info(paths[side], name, &info);
    rtm_io_gathers_release(&info);
    if (read == RTM_OK) continue;
    snprintf(why, sizeof why, "its axes in the %s are damaged (said above)", side_name(side));
    print_failure(v, label, why);
  }
}

/* Where and when a gather lies, which its values do not show: its source, its receivers and
 * its sample interval, each a failed row of its own when run and reference differ (nothing
 * when they agree or for a dataset that is no gather). */
static void validate_geometry(validate_t *v, const char *run_path, const char *ref_path,
                              const char *name) {
  char label[600], receivers[600];
  const char *traces = strstr(name, "/traces/"); /* a gather: /traces/F, /shots/<k>/traces/F */
  if (!traces) return;
  snprintf(label, sizeof label, "%s (where)", name);
  validate_source(v, run_path, ref_path, name, label);
  /* the receivers beside it: /traces/receivers, /shots/<k>/receivers */
  if (traces == name)
    snprintf(receivers, sizeof receivers, "/traces/receivers");
  else
    snprintf(receivers, sizeof receivers, "%.*s/receivers", (int)(traces - name), name);
  if (strcmp(receivers, name) != 0) validate_receivers(v, run_path, ref_path, receivers, label);
  snprintf(label, sizeof label, "%s (when)", name);
  validate_interval(v, run_path, ref_path, name, label);
}

/* Compares one dataset; RTM_OK also when the comparison fails (that is counted in v).
 * run_names lists the run's datasets in the usual groups; others are looked up. */
static int validate_dataset(validate_t *v, const char *run_path, const char *ref_path,
                            const char *name, char **run_names, int run_count) {
  int status = RTM_OK, run_rank = 0, ref_rank = 0, in_run = 0;
  size_t run_dims[4], ref_dims[4];
  rtm_dataset_t run = {0}, ref = {0};
  char shape[64], run_shape[64], why[256];

  RTM_TRY(rtm_io_dataset_shape(ref_path, name, &ref_rank, ref_dims));
  for (int i = 0; i < run_count; ++i)
    in_run |= strcmp(run_names[i], name) == 0;
  if (!in_run) in_run = rtm_io_dataset_shape(run_path, name, &run_rank, run_dims) == RTM_OK;
  if (!in_run) {
    snprintf(why, sizeof why, "missing in %s", run_path);
    print_failure(v, name, why);
    goto fail;
  }
  RTM_TRY(rtm_io_dataset_shape(run_path, name, &run_rank, run_dims));
  format_shape(ref_rank, ref_dims, shape, sizeof shape);
  format_shape(run_rank, run_dims, run_shape, sizeof run_shape);
  if (strcmp(shape, run_shape) != 0 || run_rank != ref_rank) {
    snprintf(why, sizeof why, "shape %s in run, %s in reference", run_shape, shape);
    print_failure(v, name, why);
    goto fail;
  }
  if (ref_rank == 4 && strncmp(name, "/snapshots/", 11) == 0) {
    format_shape(3, ref_dims + 1, shape, sizeof shape);
    for (size_t k = 0; k < ref_dims[0]; ++k) {
      RTM_TRY(rtm_io_read_dataset_entry(run_path, name, k, &run));
      RTM_TRY(rtm_io_read_dataset_entry(ref_path, name, k, &ref));
      rtm_comparison_t c = rtm_compare(run.data, ref.data, ref_dims[1] * ref_dims[2] * ref_dims[3]);
      print_row(v, name, (long)k, shape, &c);
      rtm_dataset_release(&run);
      rtm_dataset_release(&ref);
    }
  } else {
    RTM_TRY(rtm_io_read_dataset(run_path, name, &run));
    RTM_TRY(rtm_io_read_dataset(ref_path, name, &ref));
    rtm_comparison_t c =
        rtm_compare(run.data, ref.data, ref_dims[0] * ref_dims[1] * ref_dims[2] * ref_dims[3]);
    print_row(v, name, -1, shape, &c);
  }
  validate_geometry(v, run_path, ref_path, name);
  const int series = ref_rank == 4 && strncmp(name, "/snapshots/", 11) == 0;
  validate_attributes(v, run_path, ref_path, name, series ? ref_dims[0] : 0);
  if (strcmp(name, "/gathers/offset") == 0 || strcmp(name, "/gathers/angle") == 0)
    validate_gathers_axes(v, run_path, ref_path, name);
fail:
  rtm_dataset_release(&run);
  rtm_dataset_release(&ref);
  return status;
}

static int parse_tolerance(const char *option, const char *text, double *value) {
  char *end = NULL;
  double x = text ? rtm_text_number(text, &end) : NAN;
  if (!text || end == text || *end != '\0' || !isfinite(x) || x < 0.0) {
    rtm_log_error("validate: %s needs a number >= 0 (got '%s')", option, text ? text : "");
    return RTM_ERR_USAGE;
  }
  *value = x;
  return RTM_OK;
}

/* "--opt value" or "--opt=value": the value, advancing *i past a separate one; NULL when
 * argv[*i] is another option. */
static const char *option_value(int argc, char **argv, int *i, const char *option, int *matched) {
  size_t length = strlen(option);
  *matched = 0;
  if (strncmp(argv[*i], option, length) != 0) return NULL;
  if (argv[*i][length] == '=') {
    *matched = 1;
    return argv[*i] + length + 1;
  }
  if (argv[*i][length] != '\0') return NULL;
  *matched = 1;
  return *i + 1 < argc ? argv[++*i] : NULL;
}

/* Splits "a,b,c" into names with a leading '/'. */
static int split_names(const char *list, char ***names, int *count) {
  int n = 1;
  for (const char *c = list; *c; ++c)
    n += *c == ',';
  char **out = calloc((size_t)n, sizeof *out);
  if (!out) return RTM_ERR_NOMEM;
  int used = 0;
  const char *start = list;
  for (;;) {
    const char *end = strchr(start, ',');
    size_t length = end ? (size_t)(end - start) : strlen(start);
    if (length > 0) {
      int slash = start[0] != '/';
      out[used] = malloc(length + 1 + (size_t)slash);
      if (!out[used]) {
        for (int i = 0; i < used; ++i)
          free(out[i]);
        free(out);
        return RTM_ERR_NOMEM;
      }
      if (slash) out[used][0] = '/';
      memcpy(out[used] + slash, start, length);
      out[used][length + (size_t)slash] = '\0';
      ++used;
    }
    if (!end) break;
    start = end + 1;
  }
  *names = out;
  *count = used;
  return RTM_OK;
}

/* RUN.h5, REFERENCE.h5 and the options; *help when --help is asked. */
static int parse_args(int argc, char **argv, const char *paths[2], const char **dataset_list,
                      validate_t *v, int *help) {
  int status = RTM_OK, path_count = 0;
  *help = 0;
  /* an option given twice is refused, not the last taken (a probe: --rtol 1e-3 --rtol 1e-2
   * kept the looser one silently) */
  int given[3] = {0, 0, 0};
  const char *const once[3] = {"--rtol", "--atol", "--datasets"};
  for (int i = 1; i < argc; ++i) {
    int matched;
    const char *value;
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      *help = 1;
      return RTM_OK;
    }
    for (int k = 0; k < 3; ++k) {
      const size_t length = strlen(once[k]);
      if (strncmp(argv[i], once[k], length) == 0 &&
          (argv[i][length] == '\0' || argv[i][length] == '=') && given[k]++)
        RTM_FAIL(RTM_ERR_USAGE, "validate: %s is given twice: give it once", once[k]);
    }
    if ((value = option_value(argc, argv, &i, "--rtol", &matched)) || matched) {
      RTM_TRY(parse_tolerance("--rtol", value, &v->rtol));
    } else if ((value = option_value(argc, argv, &i, "--atol", &matched)) || matched) {
      RTM_TRY(parse_tolerance("--atol", value, &v->atol));
    } else if ((value = option_value(argc, argv, &i, "--datasets", &matched)) || matched) {
      if (!value || !value[0])
        RTM_FAIL(RTM_ERR_USAGE, "validate: --datasets needs a comma-separated list of names");
      *dataset_list = value;
    } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
      RTM_FAIL(RTM_ERR_USAGE, "validate: unknown option '%s' (see 'rtm3d validate --help')",
               argv[i]);
    } else if (path_count < 2) {
      paths[path_count++] = argv[i];
    } else {
      RTM_FAIL(RTM_ERR_USAGE, "validate: unexpected argument '%s': give RUN.h5 REFERENCE.h5",
               argv[i]);
    }
  }
  if (path_count < 2)
    RTM_FAIL(RTM_ERR_USAGE, "validate: need RUN.h5 and REFERENCE.h5 (see 'rtm3d validate --help')");
fail:
  return status;
}

int rtm_cmd_validate(int argc, char **argv) {
  int status = RTM_OK, help = 0;
  const char *paths[2] = {NULL, NULL}, *dataset_list = NULL;
  int name_count = 0;
  char **names = NULL, **run_names = NULL;
  int run_count = 0;
  validate_t v = {1e-5, NAN, 0, 0};

  RTM_TRY(parse_args(argc, argv, paths, &dataset_list, &v, &help));
  if (help) {
    usage(stdout);
    return 0;
  }
  const char *run_path = paths[0], *ref_path = paths[1];

  /* Both files must open before anything is compared: an unreadable file is exit 2. */
  RTM_TRY(rtm_io_list_datasets(run_path, &run_names, &run_count));
  if (dataset_list) {
    if (split_names(dataset_list, &names, &name_count) != RTM_OK)
      RTM_FAIL(RTM_ERR_NOMEM, "out of memory");
    if (name_count == 0)
      RTM_FAIL(RTM_ERR_USAGE, "validate: --datasets needs a comma-separated list of names");
    /* a name the reference lacks is a mistyped option, said once before any row (probe: it
     * was said thrice, under a failed grid row and no verdict) */
    for (int i = 0; i < name_count; ++i) {
      int numeric = 0, exists = 0;
      RTM_TRY(rtm_io_numeric_dataset_exists(ref_path, names[i], &numeric));
      if (numeric) continue;
      /* a group passed a check of the name alone and failed as three HDF5 errors and a
       * false grid row (a probe: --datasets /traces) */
      RTM_TRY(rtm_io_dataset_exists(ref_path, names[i], &exists));
      if (!exists)
        RTM_FAIL(RTM_ERR_USAGE,
                 "validate: --datasets names %s, which reference %s does not hold "
                 "(h5ls -r lists what it does)",
                 names[i], ref_path);
      RTM_FAIL(RTM_ERR_USAGE,
               "validate: --datasets names %s, which in reference %s is no dataset of "
               "numbers (a group?): name the datasets in it (h5ls -r lists them)",
               names[i], ref_path);
    }
  } else {
    RTM_TRY(rtm_io_list_datasets(ref_path, &names, &name_count));
    if (name_count == 0)
      RTM_FAIL(RTM_ERR_INPUT,
               "validate: reference %s holds no dataset under /snapshots, /traces or "
               "/shots/<k>/traces, nor at the root, to compare",
               ref_path);
  }

  char run_safe[4096], ref_safe[4096]; /* paths a glob may have found: escaped as names */
  rtm_escape_text(run_path, run_safe, sizeof run_safe);
  rtm_escape_text(ref_path, ref_safe, sizeof ref_safe);
  printf("validate: %s against reference %s (rtol %g", run_safe, ref_safe, v.rtol);
  if (!isnan(v.atol)) printf(", atol %g", v.atol);
  printf(")\n");
  print_header();
  /* the grid beside the first dataset both files hold (one the run lacks is its own row) */
  for (int i = 0; i < name_count; ++i) {
    int exists = 0;
    if (rtm_io_dataset_exists(run_path, names[i], &exists) == RTM_OK && exists) {
      validate_grid(&v, run_path, ref_path, names[i]);
      break;
    }
  }
  if (!dataset_list) validate_shots(&v, run_path, ref_path);
  for (int i = 0; i < name_count; ++i)
    RTM_TRY(validate_dataset(&v, run_path, ref_path, names[i], run_names, run_count));
  /* what only the run holds fails too (probe T, T4: a run of 3 shots passed against a
   * reference of 2), unless --datasets chose what to compare */
  for (int i = 0; !dataset_list && i < run_count; ++i) {
    int in_reference = 0;
    for (int k = 0; k < name_count && !in_reference; ++k)
      in_reference = strcmp(run_names[i], names[k]) == 0;
    if (!in_reference) {
      char why[4200];
      snprintf(why, sizeof why, "in run, missing in %s", ref_path);
      print_failure(&v, run_names[i], why);
    }
  }
  printf("validate: %d of %d comparisons pass: %s\n", v.compared - v.failed, v.compared,
         v.failed ? "FAIL" : "PASS");
  fflush(stdout);
fail:
  for (int i = 0; i < name_count; ++i)
    free(names[i]);
  free(names);
  for (int i = 0; i < run_count; ++i)
    free(run_names[i]);
  free(run_names);
  if (status != RTM_OK) {
    fflush(stdout);
    /* an unreadable run or reference is an input error (2), not a failed comparison */
    return status == RTM_ERR_NOMEM ? 1 : 2;
  }
  return v.failed ? 1 : 0;
}
