/* rtm3d plot FILE.h5 DATASET: a PNG of one slice of a snapshot or a volume, or of a
 * gather, in a red-white-blue colormap clipped at a percentile of |value|. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "rtm_io.h"
#include "rtm_status.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: rtm3d plot FILE.h5 DATASET [--index K] [--slice x=N|y=N|z=N] [--clip PCT]\n"
          "                  [-o OUT.png]\n\n"
          "Writes a PNG of DATASET in a red (positive) - white (zero) - blue (negative)\n"
          "colormap that saturates at the PCT percentile of |value|:\n"
          "  snapshots [nsnap][nz][ny][nx]  snapshot K (default the last), one slice\n"
          "  volumes [nz][ny][nx]           (a model file's /vp, /epsilon, ...) one slice\n"
          "  gathers [nrec][nt]             (/traces/p) receivers across, time downward\n\n"
          "  --index K        snapshot index, 0 .. nsnap-1 (default nsnap-1)\n"
          "  --slice a=N      plane to show: z=N (map view, default z = nz/2), y=N or x=N\n"
          "                   (vertical sections, depth downward)\n"
          "  --clip PCT       clip percentile of |value| in (0, 100] (default 99)\n"
          "  -o OUT.png       output (default: beside FILE, e.g. run.snapshots_p.k3.z50.png)\n"
          "  --help           this text\n\n"
          "Datasets in a file: the names 'rtm3d validate' compares, e.g. /snapshots/p,\n"
          "/traces/p, /vp. Exit status: 0 written, 1 write failure, 2 usage or input error.\n");
}

typedef struct {
  const char *file;
  char dataset[512];
  long index; /* -1: default */
  char axis;  /* 0: default */
  long plane;
  double clip_percentile;
  const char *out;
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

static int parse_args(int argc, char **argv, plot_args_t *a, int *help) {
  int status = RTM_OK, positional = 0;
  *help = 0;
  memset(a, 0, sizeof *a);
  a->index = -1;
  a->clip_percentile = 99.0;
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

/* Prints the datasets of the usual groups as a hint after a failed lookup. */
static void hint_datasets(const char *file) {
  char **names = NULL;
  int count = 0;
  if (rtm_io_list_datasets(file, &names, &count) != RTM_OK) return;
  if (count > 0) {
    fprintf(stderr, "rtm3d: datasets in %s:", file);
    for (int i = 0; i < count; ++i)
      fprintf(stderr, "%s %s", i ? "," : "", names[i]);
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
  if (rank == 4)
    snprintf(suffix, sizeof suffix, ".k%ld.%c%ld", index, axis, plane);
  else if (rank == 3)
    snprintf(suffix, sizeof suffix, ".%c%ld", axis, plane);
  snprintf(out, size, "%s.%s%s.png", stem, name, suffix);
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
fail:
  return status;
}

/* One plane of a volume, or of snapshot p->index of a series. */
static int read_slice(plot_t *p) {
  int status = RTM_OK;
  const plot_args_t *a = &p->a;
  if (p->rank == 4) {
    if (p->dims[0] == 0)
      RTM_FAIL(RTM_ERR_INPUT, "plot: %s in %s holds no snapshots (an empty series)", a->dataset,
               a->file);
    p->index = a->index >= 0 ? a->index : (long)p->dims[0] - 1;
    if ((size_t)p->index >= p->dims[0])
      RTM_FAIL(RTM_ERR_USAGE, "plot: --index %ld is out of range: %s has %zu snapshots (0..%zu)",
               p->index, a->dataset, p->dims[0], p->dims[0] - 1);
  }
  const size_t *volume = p->dims + (p->rank == 4);
  p->axis = a->axis ? a->axis : 'z';
  size_t extent = volume[p->axis == 'z' ? 0 : p->axis == 'y' ? 1 : 2];
  p->plane = a->axis ? a->plane : (long)(volume[0] / 2);
  if (extent == 0)
    RTM_FAIL(RTM_ERR_INPUT, "plot: %s in %s is empty (n%c = 0)", a->dataset, a->file, p->axis);
  if (p->plane < 0 || (size_t)p->plane >= extent)
    RTM_FAIL(RTM_ERR_USAGE, "plot: --slice %c=%ld is out of range: %s has n%c = %zu (%c = 0..%zu)",
             p->axis, p->plane, a->dataset, p->axis, extent, p->axis, extent - 1);
  if (p->rank == 4)
    RTM_TRY(rtm_io_read_dataset_entry(a->file, a->dataset, (size_t)p->index, &p->data));
  else
    RTM_TRY(rtm_io_read_dataset(a->file, a->dataset, &p->data));
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
    status = RTM_ERR_IO; /* a failed write is a run-time failure (exit 1) */
    goto fail;
  }
  printf("wrote %s (%d x %d, clip \xc2\xb1%.3g at the %g percentile of |value|)\n", out, p->width,
         p->height, clip, a->clip_percentile);
fail:
  return status;
}

int rtm_cmd_plot(int argc, char **argv) {
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
  RTM_TRY(p.rank >= 3 ? read_slice(&p) : read_gather(&p));
  RTM_TRY(write_png(&p));
fail:
  free(p.image);
  rtm_dataset_release(&p.data);
  return rtm_status_exit_code(status);
}
