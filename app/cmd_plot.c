/* rtm3d plot FILE.h5 DATASET: a figure of one slice of a snapshot or a volume, three slices
 * through a point, or a gather: axes in metres and seconds, the data's true aspect, a colour
 * bar with units and a title (PLplot, io/figure.c); --raw (or a build without PLplot) the
 * plain PNG of one pixel a sample. Signed fields in blue-white-red clipped at a percentile
 * of |value|, models (one sign) from their low to their high percentile. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "rtm_io.h"
#include "rtm_status.h"

static void usage(FILE *out) {
  fprintf(
      out,
      "usage: rtm3d plot FILE.h5 DATASET [--index K] [--slice x=N|y=N|z=N | --panel [--at X,Y,Z]]\n"
      "                  [--clip PCT] [--gain none|t2|agc] [--wiggle] [--size WxH] [--raw]\n"
      "                  [-o OUT.png|OUT.svg|OUT.pdf]\n\n"
      "Draws DATASET with axes in metres (and seconds), the data's true aspect, a colour\n"
      "bar with units and a title naming the file, dataset, snapshot time and plane:\n"
      "  snapshots [nsnap][nz][ny][nx]  snapshot K (default the last), one slice\n"
      "  volumes [nz][ny][nx]           (/image, a model file's /vp, ...) one slice\n"
      "  gathers [nrec][nt]             (/traces/p) receivers across, time downward\n"
      "Signed fields in blue (negative) - white - red (positive), saturating at the PCT\n"
      "percentile of |value|; a volume of one sign (a model) from its (100 - PCT) to its\n"
      "PCT percentile in a dark-to-yellow ramp.\n\n"
      "  --index K        snapshot index, 0 .. nsnap-1 (default nsnap-1)\n"
      "  --slice a=N      plane to show: z=N (map view, default z = nz/2), y=N or x=N\n"
      "                   (vertical sections, depth downward)\n"
      "  --panel          three slices through one cell instead: z (map), y and x sections\n"
      "  --at X,Y,Z       that cell's indices (default the centre)\n"
      "  --clip PCT       clip percentile in (0, 100] (default 99)\n"
      "  --gain G         gathers: none (default), t2 (samples times t^2, late arrivals up)\n"
      "                   or agc (each sample over the RMS of a 0.25 s window)\n"
      "  --wiggle         gathers: a line a trace instead of variable density\n"
      "  --size WxH       the figure's pixels (default 1000x750)\n"
      "  --raw            the plain PNG instead: one pixel a sample, no axes\n"
      "  -o OUT           .png, .svg or .pdf (default: beside FILE, e.g.\n"
      "                   run.snapshots_p.k3.z50.png)\n"
      "  --scaling CSV    instead of FILE and DATASET: run/scaling.sh's CSV as parallel\n"
      "                   efficiency against ranks, a line a mode and the ideal\n"
      "  --help           this text\n\n"
      "Figures need PLplot at configure time (rtm3d info says); without it plot writes the\n"
      "plain PNG. Datasets in a file: the names 'rtm3d validate' compares, e.g.\n"
      "/snapshots/p, /traces/p, /vp.\n\n"
      "A dataset of no samples, or a plane (gather, panel) whose samples are all NaN or Inf,\n"
      "is refused: no figure. Where some are, a warning counts them; they are drawn in the\n"
      "colour bar's lowest colour (black in the plain PNG, zero in a wiggle), and the colours\n"
      "span the finite values. Dataset names and paths are printed with escape sequences,\n"
      "control bytes and invalid UTF-8 as \\xNN.\n"
      "Exit status: 0 written, 1 write failure, 2 usage or input error (no samples, none\n"
      "finite).\n");
}

typedef struct {
  const char *file;
  char dataset[512];
  long index; /* -1: default */
  char axis;  /* 0: default */
  long plane;
  double clip_percentile;
  const char *out;
  int raw, wiggle, panel;
  char gain[8]; /* none | t2 | agc */
  long at[3];   /* --at X,Y,Z; -1: the centre */
  int size[2];  /* figure pixels */
  int sized;    /* --size given */
} plot_args_t;

static int parse_long(const char *option, const char *text, long *value) {
  char *end = NULL;
  long x = text ? strtol(text, &end, 10) : 0;
  if (!text || end == text || *end != '\0') {
    rtm_log_error("plot: %s needs an integer (got '%s')", option, text ? text : "");
    return RTM_ERR_USAGE;
  }
  *value = x;
  return RTM_OK;
}

/* --size WxH: the figure's pixels, 200x150 to 8000x8000. */
static int parse_size(const char *text, int size[2]) {
  char tail = 0;
  int w = 0, h = 0;
  if (!text || sscanf(text, "%dx%d%c", &w, &h, &tail) != 2 || w < 200 || h < 150 || w > 8000 ||
      h > 8000) {
    rtm_log_error("plot: --size needs WxH pixels, 200x150 to 8000x8000 (got '%s')",
                  text ? text : "");
    return RTM_ERR_USAGE;
  }
  size[0] = w;
  size[1] = h;
  return RTM_OK;
}

static int parse_args(int argc, char **argv, plot_args_t *a, int *help) {
  int status = RTM_OK, positional = 0;
  *help = 0;
  memset(a, 0, sizeof *a);
  a->index = -1;
  a->clip_percentile = 99.0;
  snprintf(a->gain, sizeof a->gain, "none");
  a->at[0] = a->at[1] = a->at[2] = -1;
  a->size[0] = 1000;
  a->size[1] = 750;
  for (int i = 1; i < argc; ++i) {
    const char *arg = argv[i];
    const char *next = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
      *help = 1;
      return RTM_OK;
    } else if (strcmp(arg, "--index") == 0) {
      RTM_TRY(parse_long("--index", next, &a->index));
      if (a->index < 0) RTM_FAIL(RTM_ERR_USAGE, "plot: --index %ld must be >= 0", a->index);
      ++i;
    } else if (strcmp(arg, "--slice") == 0) {
      if (!next || !strchr("xyz", next[0]) || next[0] == '\0' || next[1] != '=')
        RTM_FAIL(RTM_ERR_USAGE, "plot: --slice needs x=N, y=N or z=N (got '%s')", next ? next : "");
      a->axis = next[0];
      RTM_TRY(parse_long("--slice", next + 2, &a->plane));
      ++i;
    } else if (strcmp(arg, "--clip") == 0) {
      char *end = NULL;
      double pct = next ? strtod(next, &end) : 0.0;
      if (!next || end == next || *end != '\0' || !(pct > 0.0 && pct <= 100.0))
        RTM_FAIL(RTM_ERR_USAGE, "plot: --clip needs a percentile in (0, 100] (got '%s')",
                 next ? next : "");
      a->clip_percentile = pct;
      ++i;
    } else if (strcmp(arg, "--raw") == 0) {
      a->raw = 1;
    } else if (strcmp(arg, "--wiggle") == 0) {
      a->wiggle = 1;
    } else if (strcmp(arg, "--panel") == 0) {
      a->panel = 1;
    } else if (strcmp(arg, "--gain") == 0) {
      if (!next || (strcmp(next, "none") && strcmp(next, "t2") && strcmp(next, "agc")))
        RTM_FAIL(RTM_ERR_USAGE, "plot: --gain needs none, t2 or agc (got '%s')", next ? next : "");
      snprintf(a->gain, sizeof a->gain, "%s", next);
      ++i;
    } else if (strcmp(arg, "--at") == 0) {
      char tail = 0;
      if (!next || sscanf(next, "%ld,%ld,%ld%c", &a->at[0], &a->at[1], &a->at[2], &tail) != 3 ||
          a->at[0] < 0 || a->at[1] < 0 || a->at[2] < 0)
        RTM_FAIL(RTM_ERR_USAGE, "plot: --at needs three cell indices X,Y,Z >= 0 (got '%s')",
                 next ? next : "");
      ++i;
    } else if (strcmp(arg, "--size") == 0) {
      RTM_TRY(parse_size(next, a->size));
      a->sized = 1;
      ++i;
    } else if (strcmp(arg, "-o") == 0 || strcmp(arg, "--output") == 0) {
      if (!next || !next[0]) RTM_FAIL(RTM_ERR_USAGE, "plot: %s needs a file name", arg);
      a->out = next;
      ++i;
    } else if (arg[0] == '-' && arg[1] != '\0') {
      RTM_FAIL(RTM_ERR_USAGE, "plot: unknown option '%s' (see 'rtm3d plot --help')", arg);
    } else if (positional == 0) {
      a->file = arg;
      ++positional;
    } else if (positional == 1) {
      snprintf(a->dataset, sizeof a->dataset, "%s%s", arg[0] == '/' ? "" : "/", arg);
      ++positional;
    } else {
      RTM_FAIL(RTM_ERR_USAGE, "plot: unexpected argument '%s'", arg);
    }
  }
  if (positional < 2)
    RTM_FAIL(RTM_ERR_USAGE, "plot: need FILE.h5 and DATASET (see 'rtm3d plot --help')");
fail:
  return status;
}

/* Text for the terminal (rtm_escape_text: escape sequences, C1 controls, invalid UTF-8 as
 * \xNN): dataset names are the file's, paths a glob's. safe holds 4 bytes a byte of text. */
typedef struct {
  char text[4 * 2048 + 1];
} safe_text_t;

static const char *safe(const char *text, safe_text_t *out) {
  rtm_escape_text(text, out->text, sizeof out->text);
  return out->text;
}

/* Prints the datasets of the usual groups as a hint after a failed lookup. */
static void hint_datasets(const char *file) {
  char **names = NULL;
  int count = 0;
  safe_text_t text;
  if (rtm_io_list_datasets(file, &names, &count) != RTM_OK) return;
  if (count > 0) {
    fprintf(stderr, "rtm3d: datasets in %s:", safe(file, &text));
    for (int i = 0; i < count; ++i)
      fprintf(stderr, "%s %s", i ? "," : "", safe(names[i], &text));
    fputc('\n', stderr);
  }
  for (int i = 0; i < count; ++i)
    free(names[i]);
  free(names);
}

/* FILE without .h5, then DATASET with '/' as '_', the index and the slice: beside FILE. */
static void default_output(const plot_args_t *a, int rank, long index, char axis, long plane,
                           char *out, size_t size) {
  char stem[1024], name[512], suffix[64] = "";
  snprintf(stem, sizeof stem, "%s", a->file);
  size_t length = strlen(stem);
  if (length > 3 && strcmp(stem + length - 3, ".h5") == 0)
    stem[length - 3] = '\0';
  else if (length > 5 && strcmp(stem + length - 5, ".hdf5") == 0)
    stem[length - 5] = '\0';
  snprintf(name, sizeof name, "%s", a->dataset + 1);
  for (char *c = name; *c; ++c)
    if (*c == '/') *c = '_';
  if (axis == 'p') /* --panel */
    snprintf(suffix, sizeof suffix, rank == 4 ? ".k%ld.panel" : ".panel", index);
  else if (rank == 4)
    snprintf(suffix, sizeof suffix, ".k%ld.%c%ld", index, axis, plane);
  else if (rank == 3)
    snprintf(suffix, sizeof suffix, ".%c%ld", axis, plane);
  snprintf(out, size, "%s.%s%s.png", stem, name, suffix);
}

/* NAME.png (any case): what --raw writes, so that a .svg or .pdf is not PNG bytes. */
static int has_png_extension(const char *path) {
  const size_t length = strlen(path);
  if (length <= 4) return 0;
  for (int i = 0; i < 4; ++i)
    if (tolower((unsigned char)path[length - 4 + i]) != ".png"[i]) return 0;
  return 1;
}

/* One plot: the arguments, the dataset's shape, the snapshot and plane chosen, the image. */
typedef struct {
  plot_args_t a;
  int rank;
  size_t dims[4];
  long index; /* the snapshot shown; -1: not a snapshot series */
  char axis;  /* the plane shown: axis=plane; 0 and -1: a gather */
  long plane;
  rtm_dataset_t data;
  float *image;
  int width, height;
  char where[96]; /* the title's snapshot and plane */
  rtm_io_axes_t axes;
  /* a gather's receivers across: their x or y in metres when they lie on a line along it,
   * evenly spaced (receiver_step != 0), else their index from 1 */
  double receiver_first, receiver_step;
  char receiver_label[32];
  struct { /* --panel: z, y and x slices through one cell */
    float *image;
    int width, height;
    long plane;
  } panel[3];
} plot_t;

/* The dataset's shape, refused where it does not fit the options given. */
static int read_shape(plot_t *p) {
  int status = rtm_io_dataset_shape(p->a.file, p->a.dataset, &p->rank, p->dims);
  if (status != RTM_OK) {
    hint_datasets(p->a.file);
    goto fail;
  }
  if (p->rank < 2)
    RTM_FAIL(RTM_ERR_USAGE,
             "plot: %s in %s has rank %d: need a gather [nrec][nt], a volume "
             "[nz][ny][nx] or snapshots [nsnap][nz][ny][nx]",
             p->a.dataset, p->a.file, p->rank);
  if (p->rank < 4 && p->a.index >= 0)
    RTM_FAIL(RTM_ERR_USAGE,
             "plot: --index applies to snapshot series [nsnap][nz][ny][nx]; %s "
             "has rank %d",
             p->a.dataset, p->rank);
  if (p->rank == 2 && p->a.axis)
    RTM_FAIL(RTM_ERR_USAGE, "plot: --slice applies to volumes; %s is a gather [nrec][nt]",
             p->a.dataset);
  size_t samples = 1;
  char shape[96] = "";
  for (int i = 0; i < p->rank; ++i) {
    samples *= p->dims[i];
    snprintf(shape + strlen(shape), sizeof shape - strlen(shape), "%s%zu", i ? " x " : "",
             p->dims[i]);
  }
  if (samples == 0) /* an empty gather or series: a figure of nothing would look like one */
    RTM_FAIL(RTM_ERR_INPUT, "plot: %s in %s holds no samples (shape %s): nothing to draw",
             p->a.dataset, p->a.file, shape);
fail:
  return status;
}

/* The snapshot a series is shown at (--index, default the last), checked; -1 otherwise. */
static int pick_snapshot(plot_t *p) {
  int status = RTM_OK;
  const plot_args_t *a = &p->a;
  p->index = -1;
  if (p->rank != 4) return RTM_OK; /* a series has snapshots: read_shape refuses no samples */
  p->index = a->index >= 0 ? a->index : (long)p->dims[0] - 1;
  if ((size_t)p->index >= p->dims[0])
    RTM_FAIL(RTM_ERR_USAGE, "plot: --index %ld is out of range: %s has %zu snapshots (0..%zu)",
             p->index, a->dataset, p->dims[0], p->dims[0] - 1);
fail:
  return status;
}

/* The volume shown: snapshot p->index of a series, or the whole dataset. */
static int read_volume(plot_t *p) {
  return p->rank == 4
             ? rtm_io_read_dataset_entry(p->a.file, p->a.dataset, (size_t)p->index, &p->data)
             : rtm_io_read_dataset(p->a.file, p->a.dataset, &p->data);
}

/* One plane of a volume, or of snapshot p->index of a series. */
static int read_slice(plot_t *p) {
  int status = RTM_OK;
  const plot_args_t *a = &p->a;
  const size_t *volume = p->dims + (p->rank == 4);
  p->axis = a->axis ? a->axis : 'z';
  size_t extent = volume[p->axis == 'z' ? 0 : p->axis == 'y' ? 1 : 2];
  p->plane = a->axis ? a->plane : (long)(volume[0] / 2);
  if (p->plane < 0 || (size_t)p->plane >= extent)
    RTM_FAIL(RTM_ERR_USAGE, "plot: --slice %c=%ld is out of range: %s has n%c = %zu (%c = 0..%zu)",
             p->axis, p->plane, a->dataset, p->axis, extent, p->axis, extent - 1);
  RTM_TRY(read_volume(p));
  p->image = malloc(volume[0] * volume[1] * volume[2] / extent * sizeof *p->image);
  if (!p->image) RTM_FAIL(RTM_ERR_NOMEM, "out of memory for a slice of %s", a->dataset);
  rtm_volume_slice(p->data.data, volume, p->axis, (size_t)p->plane, p->image, &p->width,
                   &p->height);
  if (p->rank == 4)
    snprintf(p->where, sizeof p->where, "[%ld] %c=%ld", p->index, p->axis, p->plane);
  else
    snprintf(p->where, sizeof p->where, " %c=%ld", p->axis, p->plane);
fail:
  return status;
}

/* --panel: the three planes through cell --at (default the centre) of the volume. */
static int read_panel(plot_t *p) {
  int status = RTM_OK;
  const plot_args_t *a = &p->a;
  static const char axes[3] = {'z', 'y', 'x'};
  RTM_TRY(read_volume(p));
  const size_t *volume = p->dims + (p->rank == 4); /* nz, ny, nx */
  for (int k = 0; k < 3; ++k) {
    const size_t extent = volume[k];
    const long at = a->at[2 - k] >= 0 ? a->at[2 - k] : (long)(extent / 2); /* --at is x,y,z */
    if ((size_t)at >= extent)
      RTM_FAIL(RTM_ERR_USAGE, "plot: --at %c = %ld is out of range: %s has n%c = %zu", "zyx"[k], at,
               a -> dataset, "zyx"[k], extent);
    p->panel[k].plane = at;
    p->panel[k].image = malloc(volume[0] * volume[1] * volume[2] / extent * sizeof(float));
    if (!p->panel[k].image) RTM_FAIL(RTM_ERR_NOMEM, "out of memory for a slice of %s", a->dataset);
    rtm_volume_slice(p->data.data, volume, axes[k], (size_t)at, p->panel[k].image,
                     &p->panel[k].width, &p->panel[k].height);
  }
  p->axis = 'p';
fail:
  return status;
}

/* The gather's receivers across the figure: x or y in metres when they lie on a line along
 * it, evenly spaced (rtm_io_read_receiver_line), else their number from 1. */
static int receiver_axis(plot_t *p, size_t nrec) {
  int status = RTM_OK;
  char axis = 0;
  double first = 0.0, step = 0.0;
  RTM_TRY(rtm_io_read_receiver_line(p->a.file, p->a.dataset, nrec, &axis, &first, &step));
  p->receiver_first = axis ? first : 1.0;
  p->receiver_step = axis ? step : 0.0;
  snprintf(p->receiver_label, sizeof p->receiver_label, axis ? "receiver %c (m)" : "receiver",
           axis);
fail:
  return status;
}

/* [nrec][nt] -> one column per receiver, time running down the rows */
static int read_gather(plot_t *p) {
  int status = RTM_OK;
  RTM_TRY(rtm_io_read_dataset(p->a.file, p->a.dataset, &p->data));
  const size_t nrec = p->dims[0], nt = p->dims[1];
  p->image = malloc(nrec * nt * sizeof *p->image);
  if (!p->image) RTM_FAIL(RTM_ERR_NOMEM, "out of memory for %s", p->a.dataset);
  for (size_t t = 0; t < nt; ++t)
    for (size_t r = 0; r < nrec; ++r)
      p->image[t * nrec + r] = p->data.data[r * nt + t];
  p->width = (int)nrec;
  p->height = (int)nt;
fail:
  return status;
}

static int write_png(const plot_t *p) {
  int status = RTM_OK;
  const plot_args_t *a = &p->a;
  char out[2048], title[2048];
  double clip = 0.0;
  RTM_TRY(rtm_png_clip_value(p->image, (size_t)p->width * (size_t)p->height, a->clip_percentile,
                             &clip));
  if (a->out)
    snprintf(out, sizeof out, "%s", a->out);
  else
    default_output(a, p->rank, p->index, p->axis, p->plane, out, sizeof out);
  snprintf(title, sizeof title, "%s %s%s (clip \xc2\xb1%.3g)", a->file, a->dataset, p->where, clip);
  status = rtm_png_write(out, p->image, p->width, p->height, a->clip_percentile, title);
  if (status != RTM_OK) {
    /* a failed write is a run-time failure (exit 1); a target that is no file, a usage one */
    if (status != RTM_ERR_USAGE) status = RTM_ERR_IO;
    goto fail;
  }
  safe_text_t text;
  printf("wrote %s (%d x %d, clip \xc2\xb1%.3g at the %g percentile of |value|)\n",
         safe(out, &text), p->width, p->height, clip, a->clip_percentile);
fail:
  return status;
}

/* --gain on a gather image [nt][nrec]: t2 multiplies sample k by (k dt)^2; agc divides it
 * by the RMS of its trace over a window of 0.25 s (25 samples without a dt) around it. */
static void apply_gain(plot_t *p) {
  const int nrec = p->width, nt = p->height;
  const double dt = p->axes.has_dt ? p->axes.dt_s : 1.0;
  if (strcmp(p->a.gain, "t2") == 0) {
    for (int k = 0; k < nt; ++k)
      for (int r = 0; r < nrec; ++r)
        p->image[(size_t)k * nrec + r] *= (float)((k * dt) * (k * dt));
  } else if (strcmp(p->a.gain, "agc") == 0) {
    /* the half window in samples, in double first: a dt of 1e-11 s asks for 1.25e10 */
    const double half_wanted = p->axes.has_dt ? ceil(0.125 / dt) : 12.0;
    const int half = half_wanted < 1.0 ? 1 : half_wanted > nt ? nt : (int)half_wanted;
    float *out = malloc((size_t)nrec * nt * sizeof *out);
    if (!out) return; /* the gather unscaled */
    for (int r = 0; r < nrec; ++r) {
      double sum = 0.0; /* running sum of squares over [k - half, k + half] */
      for (int k = 0; k <= half && k < nt; ++k)
        sum += (double)p->image[(size_t)k * nrec + r] * p->image[(size_t)k * nrec + r];
      for (int k = 0; k < nt; ++k) {
        const int lo = k - half < 0 ? 0 : k - half, hi = k + half >= nt ? nt - 1 : k + half;
        const double rms = sqrt(fmax(sum, 0.0) / (hi - lo + 1));
        out[(size_t)k * nrec + r] =
            rms > 0.0 ? (float)(p->image[(size_t)k * nrec + r] / rms) : 0.0f;
        if (k + half + 1 < nt) {
          const double v = p->image[(size_t)(k + half + 1) * nrec + r];
          sum += v * v;
        }
        if (k - half >= 0) {
          const double v = p->image[(size_t)(k - half) * nrec + r];
          sum -= v * v;
        }
      }
    }
    memcpy(p->image, out, (size_t)nrec * nt * sizeof *out);
    free(out);
  }
}

/* The samples shown (the gather, the slice or the panel's three) that are not finite:
 * none finite is refused, a figure of nothing but the colour bar's end would look like
 * data; some are counted in a warning, since they are drawn in a colour a value could
 * have. Before --gain, which would smear them: the count is the file's. */
static int check_finite(const plot_t *p, int figure) {
  int status = RTM_OK;
  size_t shown = 0, bad = 0;
  for (int k = 0; k < (p->a.panel ? 3 : 1); ++k) {
    const float *values = p->a.panel ? p->panel[k].image : p->image;
    const size_t count =
        p->a.panel ? (size_t)p->panel[k].width * p->panel[k].height : (size_t)p->width * p->height;
    for (size_t i = 0; i < count; ++i)
      bad += !isfinite(values[i]);
    shown += count;
  }
  char where[160] = "", entry[32] = "";
  if (p->rank == 4) snprintf(entry, sizeof entry, "[%ld]", p->index);
  if (p->a.panel)
    snprintf(where, sizeof where, "%s (the slices through x=%ld, y=%ld, z=%ld)", entry,
             p->panel[2].plane, p->panel[1].plane, p->panel[0].plane);
  else if (p->rank >= 3)
    snprintf(where, sizeof where, "%s", p->where);
  if (bad == shown)
    RTM_FAIL(RTM_ERR_INPUT,
             "plot: %s%s in %s holds no finite value: all %zu samples shown are NaN or Inf",
             p->a.dataset, where, p->a.file, shown);
  if (bad > 0)
    rtm_log_warning("plot: %zu of %zu samples shown of %s%s in %s are NaN or Inf, drawn %s", bad,
                    shown, p->a.dataset, where, p->a.file,
                    !figure       ? "black"
                    : p->a.wiggle ? "as zero"
                                  : "in the colour bar's lowest colour");
fail:
  return status;
}

/* The colour range: +-clip of |value| for signed data; for a volume of one sign (a model)
 * its (100 - PCT) to PCT percentile. */
static int colour_range(const plot_t *p, const float *values, size_t count, rtm_figure_style_t *s) {
  int status = RTM_OK, negative = 0;
  size_t finite = 0;
  for (size_t i = 0; i < count; ++i)
    if (isfinite(values[i])) {
      ++finite;
      negative |= values[i] < 0.0f;
    }
  s->diverging = p->rank == 2 || p->rank == 4 || negative;
  if (s->diverging) {
    double clip = 0.0;
    RTM_TRY(rtm_png_clip_value(values, count, p->a.clip_percentile, &clip));
    s->lo = -clip;
    s->hi = clip;
    return RTM_OK;
  }
  float *kept = malloc((finite + 1) * sizeof *kept);
  if (!kept) RTM_FAIL(RTM_ERR_NOMEM, "out of memory for the colour range");
  size_t n = 0;
  for (size_t i = 0; i < count; ++i)
    if (isfinite(values[i])) kept[n++] = values[i];
  const double pct = p->a.clip_percentile / 100.0; /* two order statistics, no sort */
  s->lo = n ? rtm_select_kth(kept, n, (size_t)floor((1.0 - pct) * (double)(n - 1))) : 0.0;
  s->hi = n ? rtm_select_kth(kept, n, (size_t)ceil(pct * (double)(n - 1))) : 1.0;
  if (!(s->hi > s->lo)) s->hi = s->lo + (s->lo != 0.0 ? fabs(s->lo) * 1e-3 : 1.0);
  free(kept);
fail:
  return status;
}

/* What the colour bar says, from the dataset's last name. */
static const char *bar_label(const char *dataset, int rank) {
  const char *name = strrchr(dataset, '/');
  name = name ? name + 1 : dataset;
  if (strcmp(name, "vp") == 0 || strcmp(name, "vs") == 0) return "velocity (m/s)";
  if (strcmp(name, "theta") == 0 || strcmp(name, "phi") == 0) return "angle (degrees)";
  if (strcmp(name, "epsilon") == 0 || strcmp(name, "delta") == 0) return "Thomsen parameter (1)";
  if (strcmp(name, "image") == 0) return "image (cross-correlation, arbitrary units)";
  if (strcmp(name, "illumination") == 0) return "illumination (arbitrary units)";
  if (rank == 2) return "amplitude (source units)";
  return "wavefield (source units)";
}

/* A slice as a panel: its axes in metres when the file has its grid (cells otherwise). */
static void slice_panel(const plot_t *p, char axis, long plane, const float *image, int width,
                        int height, char *title, size_t title_size, rtm_figure_panel_t *panel) {
  const rtm_io_axes_t *g = &p->axes;
  const int have = g->has_grid;
  /* image columns and rows of each plane (rtm_volume_slice): z: x, y; y: x, z; x: y, z */
  const int column_axis = axis == 'x' ? 1 : 0, row_axis = axis == 'z' ? 1 : 2;
  static const char *const with_metres[3] = {"x (m)", "y (m)", "depth z (m)"};
  static const char *const with_cells[3] = {"x (cells)", "y (cells)", "depth z (cells)"};
  const int plane_axis = axis == 'x' ? 0 : axis == 'y' ? 1 : 2;
  char time[48] = "", entry[32] = "", where[64];
  if (p->rank == 4) snprintf(entry, sizeof entry, "[%ld]", p->index);
  if (p->rank == 4 && g->has_time) snprintf(time, sizeof time, ", t = %.4g s", g->time_s);
  if (have)
    snprintf(where, sizeof where, "%c = %g m", axis,
             g->origin_m[plane_axis] + plane * g->spacing_m[plane_axis]);
  else
    snprintf(where, sizeof where, "%c = %ld", axis, plane);
  if (p->a.panel) /* the file and time go above the three */
    snprintf(title, title_size, "%s", where);
  else
    snprintf(title, title_size, "%s %s%s%s, %s", p->a.file, p->a.dataset, entry, time, where);
  *panel = (rtm_figure_panel_t){
      .values = image,
      .columns = width,
      .rows = height,
      .x_first = have ? g->origin_m[column_axis] : 0.0,
      .x_step = have ? g->spacing_m[column_axis] : 1.0,
      .y_first = have ? g->origin_m[row_axis] : 0.0,
      .y_step = have ? g->spacing_m[row_axis] : 1.0,
      .x_label = (have ? with_metres : with_cells)[column_axis],
      .y_label = (have ? with_metres : with_cells)[row_axis],
      .title = title,
      .same_units = 1,
      .y_down = axis != 'z',
  };
}

static int write_figure(plot_t *p) {
  int status = RTM_OK;
  const plot_args_t *a = &p->a;
  char out[2048], titles[3][1024];
  rtm_figure_panel_t panels[3];
  int count = 1;
  rtm_figure_style_t style = {.width = a->size[0], .height = a->size[1]};
  char page_title[1024];
  style.bar_label = bar_label(a->dataset, p->rank);
  if (a->panel) {
    if (!a->sized) style.width = 1500, style.height = 600;
    if (p->rank == 4 && p->axes.has_time)
      snprintf(page_title, sizeof page_title, "%s %s[%ld], t = %.4g s", a->file, a->dataset,
               p->index, p->axes.time_s);
    else
      snprintf(page_title, sizeof page_title, "%s %s", a->file, a->dataset);
    style.page_title = page_title;
  }
  if (a->out)
    snprintf(out, sizeof out, "%s", a->out);
  else
    default_output(a, p->rank, p->index, p->axis, p->plane, out, sizeof out);
  if (a->panel) {
    static const char axes[3] = {'z', 'y', 'x'};
    count = 3;
    size_t total = 0;
    for (int k = 0; k < 3; ++k)
      total += (size_t)p->panel[k].width * p->panel[k].height;
    float *all = malloc(total * sizeof *all); /* the range over the three planes */
    if (!all) RTM_FAIL(RTM_ERR_NOMEM, "out of memory for the colour range");
    size_t at = 0;
    for (int k = 0; k < 3; ++k) {
      const size_t n = (size_t)p->panel[k].width * p->panel[k].height;
      memcpy(all + at, p->panel[k].image, n * sizeof *all);
      at += n;
      slice_panel(p, axes[k], p->panel[k].plane, p->panel[k].image, p->panel[k].width,
                  p->panel[k].height, titles[k], sizeof titles[k], &panels[k]);
    }
    status = colour_range(p, all, total, &style);
    free(all);
    RTM_TRY(status);
  } else if (p->rank >= 3) {
    slice_panel(p, p->axis, p->plane, p->image, p->width, p->height, titles[0], sizeof titles[0],
                &panels[0]);
    RTM_TRY(colour_range(p, p->image, (size_t)p->width * p->height, &style));
  } else {
    const int timed = p->axes.has_dt;
    RTM_TRY(receiver_axis(p, (size_t)p->width)); /* the figure's alone: the plain PNG has none */
    snprintf(titles[0], sizeof titles[0], "%s %s%s%s", a->file, a->dataset,
             strcmp(a->gain, "t2") == 0    ? ", gain t^2"
             : strcmp(a->gain, "agc") == 0 ? ", AGC 0.25 s"
                                           : "",
             a->wiggle ? ", wiggle" : "");
    panels[0] = (rtm_figure_panel_t){.values = p->image,
                                     .columns = p->width,
                                     .rows = p->height,
                                     .x_first = p->receiver_first,
                                     .x_step = p->receiver_step != 0.0 ? p->receiver_step : 1.0,
                                     .y_first = 0.0,
                                     .y_step = timed ? p->axes.dt_s : 1.0,
                                     .x_label = p->receiver_label,
                                     .y_label = timed ? "time (s)" : "time (samples)",
                                     .title = titles[0],
                                     .y_down = 1,
                                     .wiggle = a->wiggle};
    RTM_TRY(colour_range(p, p->image, (size_t)p->width * p->height, &style));
  }
  status = rtm_figure_write(out, panels, count, &style);
  if (status != RTM_OK) {
    if (status != RTM_ERR_USAGE) status = RTM_ERR_IO;
    goto fail;
  }
  char across[96] = "";
  if (p->rank < 3 && p->receiver_step != 0.0)
    snprintf(across, sizeof across, "; across: %s, %.6g to %.6g", p->receiver_label,
             p->receiver_first, p->receiver_first + p->receiver_step * (p->width - 1));
  else if (p->rank < 3)
    snprintf(across, sizeof across, "; across: receivers 1 to %d", p->width);
  safe_text_t text;
  printf("wrote %s (%d x %d pixels, colours %s%.4g to %.4g %s%s)\n", safe(out, &text), style.width,
         style.height, style.diverging ? "symmetric, " : "", style.lo, style.hi, style.bar_label,
         across);
fail:
  return status;
}

/* rtm3d plot --scaling FILE.csv [-o OUT] [--size WxH]: run/scaling.sh's CSV (columns mode,
 * ranks, efficiency at least) as efficiency against ranks, a line a mode, the ideal dashed. */
enum { SCALING_MODES = 8, SCALING_ROWS = 256 };

typedef struct {
  char names[SCALING_MODES][32];
  double x[SCALING_MODES][SCALING_ROWS], y[SCALING_MODES][SCALING_ROWS];
  int counts[SCALING_MODES], modes;
  int strong[SCALING_MODES]; /* the line's mode: strong (else weak) */
  double x_max, y_max;
} scaling_t;

/* The CSV's rows into s, mode by mode in order of first appearance. */
static int read_scaling(const char *csv, scaling_t *s) {
  int status = RTM_OK, mode_at = -1, run_at = -1, ranks_at = -1, efficiency_at = -1, number = 0;
  char line[1024], why[256];
  FILE *f = NULL;
  /* bounded: a FIFO refused rather than waited on, a NUL byte or an over-long line refused
   * naming file:line rather than cut into rows that were never written */
  if (rtm_text_open(csv, &f, NULL, why, sizeof why) != RTM_OK)
    RTM_FAIL(RTM_ERR_INPUT, "plot: cannot read %s: %s", csv, why);
  s->x_max = 1.0;
  s->y_max = 1.1;
  for (;;) {
    int got = 0;
    status = rtm_text_read_line(f, line, sizeof line, &got, why, sizeof why);
    if (status != RTM_OK) RTM_FAIL(status, "%s:%d: %s", csv, number + 1, why);
    if (!got) break;
    ++number;
    char *fields[32], *save = NULL;
    int n = 0;
    for (char *cell = strtok_r(line, ",", &save); cell && n < 32; cell = strtok_r(NULL, ",", &save))
      fields[n++] = cell;
    if (number == 1) {
      for (int k = 0; k < n; ++k) {
        if (strcmp(fields[k], "mode") == 0) mode_at = k;
        if (strcmp(fields[k], "run") == 0) run_at = k;
        if (strcmp(fields[k], "ranks") == 0) ranks_at = k;
        if (strcmp(fields[k], "efficiency") == 0) efficiency_at = k;
      }
      if (mode_at < 0 || ranks_at < 0 || efficiency_at < 0)
        RTM_FAIL(RTM_ERR_INPUT, "%s:1: needs the columns mode, ranks and efficiency", csv);
      continue;
    }
    if (n <= mode_at || n <= ranks_at || n <= efficiency_at)
      RTM_FAIL(RTM_ERR_INPUT, "%s:%d: %d fields, too few", csv, number, n);
    char *end = NULL, *end2 = NULL;
    const double ranks = strtod(fields[ranks_at], &end);
    const double efficiency = strtod(fields[efficiency_at], &end2);
    if (*end || *end2 || !(ranks > 0.0) || !isfinite(efficiency))
      RTM_FAIL(RTM_ERR_INPUT, "%s:%d: ranks '%s' and efficiency '%s' must be numbers", csv, number,
               fields[ranks_at], fields[efficiency_at]);
    /* a line a run (run/scaling.sh names each: 512_nccl_strong), else a mode */
    const char *key = run_at >= 0 && run_at < n ? fields[run_at] : fields[mode_at];
    int m = 0;
    while (m < s->modes && strcmp(s->names[m], key) != 0)
      ++m;
    if (m == s->modes) {
      if (s->modes == SCALING_MODES) RTM_FAIL(RTM_ERR_INPUT, "%s: more than %d lines", csv, m);
      snprintf(s->names[s->modes], sizeof s->names[0], "%s", key);
      s->strong[s->modes++] = strcmp(fields[mode_at], "strong") == 0;
    }
    if (s->counts[m] == SCALING_ROWS)
      RTM_FAIL(RTM_ERR_INPUT, "%s: more than %d rows a mode", csv, SCALING_ROWS);
    s->x[m][s->counts[m]] = ranks;
    s->y[m][s->counts[m]++] = efficiency;
    if (ranks > s->x_max) s->x_max = ranks;
    if (efficiency * 1.05 > s->y_max) s->y_max = efficiency * 1.05;
  }
  if (s->modes == 0) RTM_FAIL(RTM_ERR_INPUT, "%s: no rows", csv);
fail:
  if (f) fclose(f);
  return status;
}

static int plot_scaling(int argc, char **argv) {
  int status = RTM_OK, size[2] = {800, 560};
  const char *csv = NULL, *out = NULL;
  scaling_t *s = calloc(1, sizeof *s);
  if (!s) RTM_FAIL(RTM_ERR_NOMEM, "out of memory");
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--scaling") == 0 && i + 1 < argc) {
      csv = argv[++i];
    } else if ((strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--output") == 0) && i + 1 < argc) {
      out = argv[++i];
    } else if (strcmp(argv[i], "--size") == 0 && i + 1 < argc) {
      RTM_TRY(parse_size(argv[++i], size));
    } else {
      RTM_FAIL(RTM_ERR_USAGE,
               "plot --scaling: unexpected '%s' (rtm3d plot --scaling FILE.csv [-o OUT.png] "
               "[--size WxH])",
               argv[i]);
    }
  }
  if (!csv) RTM_FAIL(RTM_ERR_USAGE, "plot: --scaling needs the CSV of run/scaling.sh");
  if (!rtm_figure_available())
    RTM_FAIL(RTM_ERR_UNSUPPORTED, "plot --scaling draws a figure: this build has no PLplot");
  RTM_TRY(read_scaling(csv, s));
  static const int palette[4][3] = {{31, 90, 200}, {200, 40, 40}, {40, 150, 60}, {150, 80, 180}};
  rtm_figure_series_t series[SCALING_MODES + 1];
  for (int m = 0; m < s->modes; ++m) {
    const int *rgb = palette[(s->strong[m] ? 0 : 1) + 2 * (m / 2 % 2)];
    series[m] = (rtm_figure_series_t){
        s->names[m], s->counts[m], s->x[m], s->y[m], {rgb[0], rgb[1], rgb[2]}, 0};
  }
  const double ideal_x[2] = {0.5, s->x_max + 0.5}, ideal_y[2] = {1.0, 1.0};
  series[s->modes] = (rtm_figure_series_t){"ideal", 2, ideal_x, ideal_y, {150, 150, 150}, 1};
  const double range[4] = {0.5, s->x_max + 0.5, 0.0, s->y_max};
  char path[2048], title[1200];
  const char *dot = strrchr(csv, '.'), *slash = strrchr(csv, '/');
  if (dot && slash && dot < slash) dot = NULL; /* a dot in a folder's name */
  if (out)
    snprintf(path, sizeof path, "%s", out);
  else
    snprintf(path, sizeof path, "%.*s.png", dot ? (int)(dot - csv) : (int)strlen(csv), csv);
  snprintf(title, sizeof title, "parallel efficiency, %s", csv);
  RTM_TRY(rtm_figure_lines(path, series, s->modes + 1, range, "ranks", "parallel efficiency", title,
                           size[0], size[1]));
  safe_text_t text[2];
  printf("wrote %s (%d mode(s) of %s)\n", safe(path, &text[0]), s->modes, safe(csv, &text[1]));
fail:
  free(s);
  return rtm_status_exit_code(status);
}

int rtm_cmd_plot(int argc, char **argv) {
  for (int i = 1; i < argc; ++i)
    if (strcmp(argv[i], "--scaling") == 0) return plot_scaling(argc, argv);
  int status = RTM_OK, help = 0;
  plot_t p;
  memset(&p, 0, sizeof p);
  p.index = -1;
  p.plane = -1;
  RTM_TRY(parse_args(argc, argv, &p.a, &help));
  if (help) {
    usage(stdout);
    return 0;
  }
  RTM_TRY(read_shape(&p));
  const int figure = !p.a.raw && rtm_figure_available();
  if ((p.a.panel || p.a.wiggle) && !figure)
    RTM_FAIL(RTM_ERR_USAGE, "plot: --%s draws a figure: %s", p.a.panel ? "panel" : "wiggle",
             p.a.raw ? "not with --raw" : "this build has no PLplot (rtm3d info)");
  if (p.a.panel && (p.rank < 3 || p.a.axis))
    RTM_FAIL(RTM_ERR_USAGE, "plot: --panel shows three slices of a volume (%s), without --slice",
             p.rank < 3 ? "not a gather" : "--slice picks one");
  if ((p.a.wiggle || strcmp(p.a.gain, "none") != 0) && p.rank != 2)
    RTM_FAIL(RTM_ERR_USAGE, "plot: --%s applies to gathers [nrec][nt]; %s is a volume",
             p.a.wiggle ? "wiggle" : "gain", p.a.dataset);
  if (p.a.raw && p.a.out && !has_png_extension(p.a.out)) {
    safe_text_t text;
    RTM_FAIL(RTM_ERR_USAGE, "plot: --raw writes a PNG: the output %s must end in .png",
             safe(p.a.out, &text));
  }
  RTM_TRY(pick_snapshot(&p));
  RTM_TRY(rtm_io_read_axes(p.a.file, p.a.dataset, p.index, &p.axes));
  if (p.a.panel)
    RTM_TRY(read_panel(&p));
  else
    RTM_TRY(p.rank >= 3 ? read_slice(&p) : read_gather(&p));
  RTM_TRY(check_finite(&p, figure));
  if (p.rank == 2) apply_gain(&p);
  if (figure) {
    RTM_TRY(write_figure(&p));
  } else {
    if (!p.a.raw && !p.a.out) /* once, so that a user knows why the picture is plain */
      rtm_log_info("plot: this build has no PLplot: a plain PNG, one pixel a sample");
    RTM_TRY(write_png(&p));
  }
fail:
  for (int k = 0; k < 3; ++k)
    free(p.panel[k].image);
  free(p.image);
  rtm_dataset_release(&p.data);
  return rtm_status_exit_code(status);
}
