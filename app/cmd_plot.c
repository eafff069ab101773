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
          "  volumes [nz][ny][nx]           (/image, /illumination, model /vp) one slice\n"
          "  gathers [nrec][nt]             (/traces/p) receivers across, time downward\n\n"
          "  --index K        snapshot index, 0 .. nsnap-1 (default nsnap-1)\n"
          "  --slice a=N      plane to show: z=N (map view, default z = nz/2), y=N or x=N\n"
          "                   (vertical sections, depth downward)\n"
          "  --clip PCT       clip percentile of |value| in (0, 100] (default 99)\n"
          "  -o OUT.png       output (default: beside FILE, e.g. run.snapshots_p.k3.z50.png)\n"
          "  --help           this text\n\n"
          "Datasets in a file: the names 'rtm3d validate' compares, e.g. /snapshots/p,\n"
          "/traces/p, /image. Exit status: 0 written, 1 write failure, 2 usage or input error.\n");
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

/* Copies plane `plane` of a [nz][ny][nx] volume across `axis` into a row-major image:
 * z: rows y, columns x; y: rows z, columns x; x: rows z, columns y. */
static void extract_slice(const float *volume, const size_t dims[3], char axis, size_t plane,
                          float *image, int *width, int *height) {
  const size_t nz = dims[0], ny = dims[1], nx = dims[2];
  if (axis == 'z') {
    memcpy(image, volume + plane * ny * nx, ny * nx * sizeof *image);
    *width = (int)nx;
    *height = (int)ny;
  } else if (axis == 'y') {
    for (size_t z = 0; z < nz; ++z)
      memcpy(image + z * nx, volume + (z * ny + plane) * nx, nx * sizeof *image);
    *width = (int)nx;
    *height = (int)nz;
  } else {
    for (size_t z = 0; z < nz; ++z)
      for (size_t y = 0; y < ny; ++y)
        image[z * ny + y] = volume[(z * ny + y) * nx + plane];
    *width = (int)ny;
    *height = (int)nz;
  }
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

int rtm_cmd_plot(int argc, char **argv) {
  int status = RTM_OK, help = 0, rank = 0, width = 0, height = 0;
  size_t dims[4];
  plot_args_t a;
  rtm_dataset_t data = {0};
  float *image = NULL;
  char out[2048], title[2048], where[96] = "";
  long index = -1, plane = -1;
  char axis = 0;
  double clip = 0.0;

  RTM_TRY(parse_args(argc, argv, &a, &help));
  if (help) {
    usage(stdout);
    return 0;
  }
  status = rtm_io_dataset_shape(a.file, a.dataset, &rank, dims);
  if (status != RTM_OK) {
    hint_datasets(a.file);
    goto fail;
  }
  if (rank < 2)
    RTM_FAIL(RTM_ERR_USAGE,
             "plot: %s in %s has rank %d: need a gather [nrec][nt], a volume "
             "[nz][ny][nx] or snapshots [nsnap][nz][ny][nx]",
             a.dataset, a.file, rank);
  if (rank < 4 && a.index >= 0)
    RTM_FAIL(RTM_ERR_USAGE,
             "plot: --index applies to snapshot series [nsnap][nz][ny][nx]; %s "
             "has rank %d",
             a.dataset, rank);
  if (rank == 2 && a.axis)
    RTM_FAIL(RTM_ERR_USAGE, "plot: --slice applies to volumes; %s is a gather [nrec][nt]",
             a.dataset);

  if (rank == 4) {
    index = a.index >= 0 ? a.index : (long)dims[0] - 1;
    if ((size_t)index >= dims[0])
      RTM_FAIL(RTM_ERR_USAGE, "plot: --index %ld is out of range: %s has %zu snapshots (0..%zu)",
               index, a.dataset, dims[0], dims[0] - 1);
  }
  if (rank >= 3) {
    const size_t *volume = dims + (rank == 4);
    axis = a.axis ? a.axis : 'z';
    size_t extent = volume[axis == 'z' ? 0 : axis == 'y' ? 1 : 2];
    plane = a.axis ? a.plane : (long)(volume[0] / 2);
    if (plane < 0 || (size_t)plane >= extent)
      RTM_FAIL(RTM_ERR_USAGE,
               "plot: --slice %c=%ld is out of range: %s has n%c = %zu (%c = 0..%zu)", axis, plane,
               a.dataset, axis, extent, axis, extent - 1);
    if (rank == 4)
      RTM_TRY(rtm_io_read_dataset_entry(a.file, a.dataset, (size_t)index, &data));
    else
      RTM_TRY(rtm_io_read_dataset(a.file, a.dataset, &data));
    image = malloc(volume[0] * volume[1] * volume[2] / extent * sizeof *image);
    if (!image) RTM_FAIL(RTM_ERR_NOMEM, "out of memory for a slice of %s", a.dataset);
    extract_slice(data.data, volume, axis, (size_t)plane, image, &width, &height);
    if (rank == 4)
      snprintf(where, sizeof where, "[%ld] %c=%ld", index, axis, plane);
    else
      snprintf(where, sizeof where, " %c=%ld", axis, plane);
  } else {
    /* [nrec][nt] -> one column per receiver, time running down the rows */
    RTM_TRY(rtm_io_read_dataset(a.file, a.dataset, &data));
    const size_t nrec = dims[0], nt = dims[1];
    image = malloc(nrec * nt * sizeof *image);
    if (!image) RTM_FAIL(RTM_ERR_NOMEM, "out of memory for %s", a.dataset);
    for (size_t t = 0; t < nt; ++t)
      for (size_t r = 0; r < nrec; ++r)
        image[t * nrec + r] = data.data[r * nt + t];
    width = (int)nrec;
    height = (int)nt;
  }

  RTM_TRY(rtm_png_clip_value(image, (size_t)width * (size_t)height, a.clip_percentile, &clip));
  if (a.out)
    snprintf(out, sizeof out, "%s", a.out);
  else
    default_output(&a, rank, index, axis, plane, out, sizeof out);
  snprintf(title, sizeof title, "%s %s%s (clip \xc2\xb1%.3g)", a.file, a.dataset, where, clip);
  status = rtm_png_write(out, image, width, height, a.clip_percentile, title);
  if (status != RTM_OK) {
    status = RTM_ERR_IO; /* a failed write is a run-time failure (exit 1) */
    goto fail;
  }
  printf("wrote %s (%d x %d, clip \xc2\xb1%.3g at the %g percentile of |value|)\n", out, width,
         height, clip, a.clip_percentile);
fail:
  free(image);
  rtm_dataset_release(&data);
  return rtm_status_exit_code(status);
}
