/* rtm3d plot FILE.h5 DATASET: a figure of one slice of a snapshot or a volume, three slices
 * through a point, or a gather: axes in metres and seconds, the data's true aspect, a colour
 * bar with units and a title (PLplot, io/figure.c); --raw (or a build without PLplot) the
 * plain PNG of one pixel a sample. Signed fields in blue-white-red clipped at a percentile
 * of |value|, models (one sign) from their low to their high percentile. This file drives
 * the command: it checks the options against the dataset's shape, picks the snapshot and
 * planes, titles and names the figure; io/figure_data.c reads the planes, applies gains and
 * chooses the colours; plot_options.c reads the command line; cmd_plot_scaling.c is
 * --scaling. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "app.h"
#include "plot.h"
#include "rtm_io.h"
#include "rtm_memory.h"
#include "rtm_status.h"
#include "solver_io.h" /* rtm_app_same_file */

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

/* One plot: the arguments, the dataset's shape, the snapshot and planes chosen, the images. */
typedef struct {
  plot_args_t a;
  int rank;
  size_t dims[4];
  long index; /* the snapshot shown; -1: not a snapshot series */
  char axis;  /* the plane shown: axis=plane; 'p': --panel's three; 0: a gather */
  long plane;
  rtm_figure_image_t images[3]; /* the slice or the gather; --panel: the z, y and x slices */
  int count;
  char where[128]; /* the title's snapshot and plane, or a gather's shot */
  rtm_io_axes_t axes;
  /* a gather's receivers across the figure: their x or y in metres when they lie on a line
   * along it, evenly spaced (receiver_step != 0), else their index from 1 */
  double receiver_first, receiver_step;
  char receiver_label[32];
} plot_t;

/* The dataset's shape, refused where it does not fit the options given. */
static int read_shape(plot_t *p) {
  int status = rtm_io_dataset_shape(p->a.file, p->a.dataset, &p->rank, p->dims);
  if (status != RTM_OK) {
    if (p->rank >= 0) hint_datasets(p->a.file); /* not when the file did not open: said once */
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
  /* the shots' receiver and source positions, [n][3] metres: no gather to draw */
  const char *leaf = strrchr(p->a.dataset, '/');
  leaf = leaf ? leaf + 1 : p->a.dataset;
  if (p->rank == 2 && p->dims[1] == 3 &&
      (strcmp(leaf, "receivers") == 0 || strcmp(leaf, "source") == 0 ||
       strstr(leaf, "position") != NULL))
    RTM_FAIL(RTM_ERR_USAGE,
             "plot: %s in %s holds positions ([%zu][3]: x, y, z in metres), not a gather: "
             "plot the shot's traces (/shots/<k>/traces/p or /traces/p)",
             p->a.dataset, p->a.file, p->dims[0]);
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

/* --slice a=Dm: the plane nearest D metres along the axis, from the file's grid; one between
 * two planes is said, with the one shown. */
static int plane_in_metres(plot_t *p, size_t extent) {
  int status = RTM_OK, exact = 0;
  const plot_args_t *a = &p->a;
  const int k = p->axis == 'x' ? 0 : p->axis == 'y' ? 1 : 2;
  if (!p->axes.has_grid)
    RTM_FAIL(RTM_ERR_USAGE,
             "plot: --slice %c=%gm: %s has no grid (root attributes spacing and origin) to "
             "place metres on: give the plane's cell index, %c=N (0..%zu)",
             p->axis, a->plane_m, a->file, p->axis, extent - 1);
  if (!rtm_figure_plane_at(&p->axes, p->axis, a->plane_m, extent, &p->plane, &exact))
    RTM_FAIL(RTM_ERR_USAGE,
             "plot: --slice %c=%gm is outside %s: %c = %g .. %g m (index 0..%zu, every %g m)",
             p->axis, a->plane_m, a->dataset, p->axis, p->axes.origin_m[k],
             p->axes.origin_m[k] + (double)(extent - 1) * p->axes.spacing_m[k], extent - 1,
             p->axes.spacing_m[k]);
  if (!exact)
    rtm_log_info("plot: %c = %g m lies between two planes: the nearest shown, %c = %g m "
                 "(index %ld)",
                 p->axis, a->plane_m, p->axis,
                 p->axes.origin_m[k] + (double)p->plane * p->axes.spacing_m[k], p->plane);
fail:
  return status;
}

/* One plane (--slice, default z = nz/2) of a volume, or of snapshot p->index of a series. */
static int read_slice(plot_t *p) {
  int status = RTM_OK;
  const plot_args_t *a = &p->a;
  const size_t *volume = p->dims + (p->rank == 4);
  p->axis = a->axis ? a->axis : 'z';
  size_t extent = volume[p->axis == 'z' ? 0 : p->axis == 'y' ? 1 : 2];
  p->plane = a->axis ? a->plane : (long)(volume[0] / 2);
  if (a->plane_in_metres)
    RTM_TRY(plane_in_metres(p, extent));
  else if (p->plane < 0 || (size_t)p->plane >= extent)
    RTM_FAIL(RTM_ERR_USAGE,
             "plot: --slice %c=%ld is out of range: %s has n%c = %zu (%c = 0..%zu, a cell "
             "index; a place in metres is written %c=%ldm)",
             p->axis, p->plane, a->dataset, p->axis, extent, p->axis, extent - 1, p->axis,
             p->plane);
  p->images[0].axis = p->axis;
  p->images[0].plane = p->plane;
  p->count = 1;
  RTM_TRY(rtm_io_read_slices(a->file, a->dataset, p->index, volume, 1, p->images));
  char entry[32] = "", plane[64];
  if (p->rank == 4) snprintf(entry, sizeof entry, "[%ld]", p->index);
  rtm_figure_plane_text(&p->axes, p->axis, p->plane, plane, sizeof plane);
  snprintf(p->where, sizeof p->where, "%s, %s", entry, plane);
fail:
  return status;
}

/* --panel: the three planes through cell --at (default the centre) of the volume. */
static int read_panel(plot_t *p) {
  int status = RTM_OK;
  const plot_args_t *a = &p->a;
  const size_t *volume = p->dims + (p->rank == 4); /* nz, ny, nx */
  for (int k = 0; k < 3; ++k) {
    const size_t extent = volume[k];
    const long at = a->at[2 - k] >= 0 ? a->at[2 - k] : (long)(extent / 2); /* --at is x,y,z */
    if ((size_t)at >= extent)
      RTM_FAIL(RTM_ERR_USAGE, "plot: --at %c = %ld is out of range: %s has n%c = %zu", "zyx"[k], at,
               a -> dataset, "zyx"[k], extent);
    p->images[k].axis = "zyx"[k];
    p->images[k].plane = at;
  }
  p->count = 3;
  RTM_TRY(rtm_io_read_slices(a->file, a->dataset, p->index, volume, 3, p->images));
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

/* [nrec][nt] -> one column per receiver, time running down the rows; the title's shot
 * position where the file has it */
static int read_gather(plot_t *p) {
  int status = RTM_OK, found = 0;
  double source_m[3];
  p->count = 1;
  RTM_TRY(rtm_io_read_gather_image(p->a.file, p->a.dataset, &p->images[0]));
  RTM_TRY(rtm_io_read_gather_source(p->a.file, p->a.dataset, source_m, &found));
  if (found)
    snprintf(p->where, sizeof p->where, ", shot at (%g, %g, %g) m", source_m[0], source_m[1],
             source_m[2]);
fail:
  return status;
}

/* The output's name: -o, else beside FILE (default_output). */
static void output_path(const plot_t *p, char *out, size_t size) {
  if (p->a.out)
    snprintf(out, size, "%s", p->a.out);
  else
    default_output(&p->a, p->rank, p->index, p->axis, p->plane, out, size);
}

static int write_png(const plot_t *p, const char *out) {
  int status = RTM_OK;
  const plot_args_t *a = &p->a;
  const rtm_figure_image_t *image = &p->images[0];
  char title[2048];
  double clip = 0.0;
  RTM_TRY(rtm_png_clip_value(image->values, (size_t)image->width * (size_t)image->height,
                             a->clip_percentile, &clip));
  snprintf(title, sizeof title, "%s %s%s, clip \xc2\xb1%.3g", a->file, a->dataset, p->where, clip);
  status =
      rtm_png_write(out, image->values, image->width, image->height, a->clip_percentile, title);
  if (status != RTM_OK) {
    /* a failed write is a run-time failure (exit 1); a target that is no file, a usage one */
    if (status != RTM_ERR_USAGE) status = RTM_ERR_IO;
    goto fail;
  }
  safe_text_t text;
  printf("wrote %s (%d x %d, clip \xc2\xb1%.3g at the %g percentile of |value|)\n",
         safe(out, &text), image->width, image->height, clip, a->clip_percentile);
fail:
  return status;
}

/* The samples shown (the gather, the slice or the panel's three) that are not finite:
 * none finite is refused, a figure of nothing but the colour bar's end would look like
 * data; some are counted in a warning, since they are drawn in a colour a value could
 * have. Before --gain, which would smear them: the count is the file's. */
static int check_finite(const plot_t *p, int figure) {
  int status = RTM_OK;
  size_t shown = 0, bad = 0, first = 0;
  for (int k = 0; k < p->count; ++k) {
    const size_t count = (size_t)p->images[k].width * p->images[k].height;
    bad += rtm_io_find_bad_values(p->images[k].values, count, 0.0, &first);
    shown += count;
  }
  char where[160] = "", entry[32] = "";
  if (p->rank == 4) snprintf(entry, sizeof entry, "[%ld]", p->index);
  if (p->a.panel)
    snprintf(where, sizeof where, "%s (the slices through x=%ld, y=%ld, z=%ld)", entry,
             p->images[2].plane, p->images[1].plane, p->images[0].plane);
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

/* The colour range over the images shown (the panel's three together): signed for gathers
 * and snapshots, or where a value is negative. */
static int colour_range(const plot_t *p, rtm_figure_style_t *style) {
  int status = RTM_OK;
  const int signed_field = p->rank == 2 || p->rank == 4;
  const int whole_range = p->rank == 3 && !p->a.clipped && rtm_figure_is_model(p->a.dataset);
  if (p->count == 1 && whole_range) {
    rtm_figure_value_range(p->images[0].values, (size_t)p->images[0].width * p->images[0].height,
                           style);
    return RTM_OK;
  }
  if (p->count == 1)
    return rtm_figure_colour_range(p->images[0].values,
                                   (size_t)p->images[0].width * p->images[0].height,
                                   p->a.clip_percentile, signed_field, style);
  size_t total = 0, at = 0;
  for (int k = 0; k < p->count; ++k)
    total += (size_t)p->images[k].width * p->images[k].height;
  float *all = malloc(total * sizeof *all);
  if (!all) RTM_FAIL(RTM_ERR_NOMEM, "out of memory for the colour range");
  for (int k = 0; k < p->count; ++k) {
    const size_t n = (size_t)p->images[k].width * p->images[k].height;
    memcpy(all + at, p->images[k].values, n * sizeof *all);
    at += n;
  }
  if (whole_range)
    rtm_figure_value_range(all, total, style);
  else
    status = rtm_figure_colour_range(all, total, p->a.clip_percentile, signed_field, style);
  free(all);
fail:
  return status;
}

/* A slice as a panel titled with the file, the dataset, the snapshot and its time, and the
 * plane (--panel: the plane alone, the rest goes above the three). */
static void slice_panel(const plot_t *p, const rtm_figure_image_t *slice, char *title, size_t size,
                        rtm_figure_panel_t *panel) {
  char time[48] = "", entry[32] = "", where[64];
  if (p->rank == 4) snprintf(entry, sizeof entry, "[%ld]", p->index);
  if (p->rank == 4 && p->axes.has_time) snprintf(time, sizeof time, ", t = %.4g s", p->axes.time_s);
  rtm_figure_plane_text(&p->axes, slice->axis, slice->plane, where, sizeof where);
  if (p->a.panel)
    snprintf(title, size, "%s", where);
  else
    snprintf(title, size, "%s %s%s%s, %s", p->a.file, p->a.dataset, entry, time, where);
  rtm_figure_slice_panel(&p->axes, slice, panel);
  panel->title = title;
}

/* A gather as a panel: receivers across, time (seconds where the file has dt) down. */
static int gather_panel(plot_t *p, char *title, size_t size, rtm_figure_panel_t *panel) {
  int status = RTM_OK;
  const plot_args_t *a = &p->a;
  const rtm_figure_image_t *image = &p->images[0];
  const int timed = p->axes.has_dt;
  RTM_TRY(receiver_axis(p, (size_t)image->width)); /* the figure's alone: the plain PNG has none */
  snprintf(title, size, "%s %s%s%s%s", a->file, a->dataset, p->where,
           strcmp(a->gain, "t2") == 0    ? ", gain t^2"
           : strcmp(a->gain, "agc") == 0 ? ", AGC 0.25 s"
                                         : "",
           a->wiggle ? ", wiggle" : "");
  *panel = (rtm_figure_panel_t){.values = image->values,
                                .columns = image->width,
                                .rows = image->height,
                                .x_first = p->receiver_first,
                                .x_step = p->receiver_step != 0.0 ? p->receiver_step : 1.0,
                                .y_first = 0.0,
                                .y_step = timed ? p->axes.dt_s : 1.0,
                                .x_label = p->receiver_label,
                                .y_label = timed ? "time (s)" : "time (samples)",
                                .title = title,
                                .y_down = 1,
                                .wiggle = a->wiggle};
fail:
  return status;
}

/* What was written: the size, the colours and, of a gather, the receivers across. */
static void print_written(const plot_t *p, const char *out, const rtm_figure_style_t *style) {
  char across[96] = "";
  if (p->rank < 3 && p->receiver_step != 0.0)
    snprintf(across, sizeof across, "; across: %s, %.6g to %.6g", p->receiver_label,
             p->receiver_first, p->receiver_first + p->receiver_step * (p->images[0].width - 1));
  else if (p->rank < 3)
    snprintf(across, sizeof across, "; across: receivers 1 to %d", p->images[0].width);
  safe_text_t text;
  printf("wrote %s (%d x %d pixels, colours %s%.4g to %.4g %s%s)\n", safe(out, &text), style->width,
         style->height, style->diverging ? "symmetric, " : "", style->lo, style->hi,
         style->bar_label, across);
}

static int write_figure(plot_t *p, const char *out) {
  int status = RTM_OK;
  const plot_args_t *a = &p->a;
  char titles[3][1024], page_title[1024];
  rtm_figure_panel_t panels[3];
  rtm_figure_style_t style = {.width = a->size[0], .height = a->size[1]};
  style.bar_label = rtm_figure_bar_label(a->dataset, p->rank);
  if (a->panel) {
    if (!a->sized) style.width = 1500, style.height = 600;
    if (p->rank == 4 && p->axes.has_time)
      snprintf(page_title, sizeof page_title, "%s %s[%ld], t = %.4g s", a->file, a->dataset,
               p->index, p->axes.time_s);
    else
      snprintf(page_title, sizeof page_title, "%s %s", a->file, a->dataset);
    style.page_title = page_title;
  }
  if (p->rank >= 3)
    for (int k = 0; k < p->count; ++k)
      slice_panel(p, &p->images[k], titles[k], sizeof titles[k], &panels[k]);
  else
    RTM_TRY(gather_panel(p, titles[0], sizeof titles[0], &panels[0]));
  RTM_TRY(colour_range(p, &style));
  /* short of address space PLplot aborts the process (probe E5: exit 133 or 139, a temp
   * left): refused first */
  const size_t left = rtm_mem_host_address_space_left();
  if (left < RTM_APP_FIGURE_ADDRESS_SPACE) {
    safe_text_t text;
    RTM_FAIL(RTM_ERR_IO,
             "plot: %s is not drawn: under the address-space limit (ulimit -v) %.0f MB are "
             "left, and drawing takes about %.0f MB; raise the limit, or --raw writes a plain "
             "PNG in little memory",
             safe(out, &text), left / 1048576.0, RTM_APP_FIGURE_ADDRESS_SPACE / 1048576.0);
  }
  status = rtm_figure_write(out, panels, p->count, &style);
  if (status != RTM_OK) {
    if (status != RTM_ERR_USAGE) status = RTM_ERR_IO;
    goto fail;
  }
  print_written(p, out, &style);
fail:
  return status;
}

/* -o checked: a PNG with --raw, and never the file plotted (probe E11: the figure replaced
 * its own HDF5 input). */
static int check_output(const plot_args_t *a) {
  int status = RTM_OK;
  safe_text_t text;
  if (a->raw && a->out && !has_png_extension(a->out))
    RTM_FAIL(RTM_ERR_USAGE, "plot: --raw writes a PNG: the output %s must end in .png",
             safe(a->out, &text));
  /* DIR/new/../NAME too, which does not exist until plot makes DIR/new (probe U, U4) */
  if (a->out && rtm_app_same_file(a->file, a->out))
    RTM_FAIL(RTM_ERR_USAGE, "plot: -o %s is the file plotted: choose another name",
             safe(a->out, &text));
fail:
  return status;
}

int rtm_cmd_plot(int argc, char **argv) {
  for (int i = 1; i < argc; ++i)
    if (strcmp(argv[i], "--scaling") == 0) return rtm_cmd_plot_scaling(argc, argv);
  int status = RTM_OK, help = 0, made = 0;
  char name[2048], out[4096] = "";
  plot_t p;
  memset(&p, 0, sizeof p);
  p.index = -1;
  p.plane = -1;
  RTM_TRY(rtm_plot_parse_args(argc, argv, &p.a, &help));
  if (help) {
    rtm_plot_usage(stdout);
    return 0;
  }
  if (strcmp(p.a.dataset, "/gathers/offset") == 0 || strcmp(p.a.dataset, "/gathers/angle") == 0) {
    RTM_TRY(check_output(&p.a)); /* a panel a CIP */
    RTM_TRY(rtm_plot_gathers(&p.a)); /* its own shape checks: --index is a CIP there */
    goto fail;
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
  RTM_TRY(check_output(&p.a));
  RTM_TRY(pick_snapshot(&p));
  RTM_TRY(rtm_io_read_axes(p.a.file, p.a.dataset, p.index, &p.axes));
  if (p.a.panel)
    RTM_TRY(read_panel(&p));
  else
    RTM_TRY(p.rank >= 3 ? read_slice(&p) : read_gather(&p));
  RTM_TRY(check_finite(&p, figure));
  if (p.rank == 2) rtm_gather_gain(&p.images[0], &p.axes, p.a.gain);
  output_path(&p, name, sizeof name);
  RTM_TRY(rtm_plot_output_begin(name, out, sizeof out, &made));
  if (figure) {
    RTM_TRY(write_figure(&p, out));
  } else {
    if (!p.a.raw && !p.a.out) /* once, so that a user knows why the picture is plain */
      rtm_log_info("plot: this build has no PLplot: a plain PNG, one pixel a sample");
    RTM_TRY(write_png(&p, out));
  }
fail:
  if (out[0]) rtm_plot_output_end(out, made, status);
  for (int k = 0; k < 3; ++k)
    free(p.images[k].values);
  return rtm_status_exit_code(status);
}
