/* Report-quality figures through PLplot (rtm_io.h, "figures"): panels of images (or wiggle
 * traces) with axes in their units, the true aspect of the data, a title each, and one
 * colour bar with its label; PNG, SVG or PDF by the file's extension (PLplot's cairo
 * drivers), each checked whole before it is renamed into place (PLplot reports no failed
 * write). Without PLplot at configure time rtm_figure_available says 0 and the caller
 * falls back to the plain PNG (png.c). */
#define _GNU_SOURCE /* mkstemp, P_tmpdir */
#include "rtm_io.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h> /* dup */

#include "rtm_io_impl.h"
#include "rtm_status.h"

#ifndef RTM3D_HAVE_PLPLOT

int rtm_figure_available(void) {
  return 0;
}

int rtm_figure_lines(const char *path, const rtm_figure_series_t *series, int count,
                     const double range[4], const char *x_label, const char *y_label,
                     const char *title, int width, int height) {
  (void)series;
  (void)count;
  (void)range;
  (void)x_label;
  (void)y_label;
  (void)title;
  (void)width;
  (void)height;
  rtm_log_error("%s: figures need PLplot, which this build lacks", path);
  return RTM_ERR_UNSUPPORTED;
}

int rtm_figure_check_temporary(const char *figures) {
  (void)figures;
  return RTM_OK; /* no PLplot: no table of drivers to write */
}

int rtm_figure_write(const char *path, const rtm_figure_panel_t *panels, int count,
                     const rtm_figure_style_t *style) {
  (void)panels;
  (void)count;
  (void)style;
  rtm_log_error("%s: figures need PLplot, which this build lacks (install libplplot-dev and "
                "plplot-driver-cairo, configure again)",
                path);
  return RTM_ERR_UNSUPPORTED;
}

#else
#include <plplot.h>

int rtm_figure_available(void) {
  return 1;
}

/* Text from a file (a dataset's or a file's name) for PLplot: controls and bytes that are
 * not UTF-8 as \xNN, as every message has them (PLplot printed a malformed title raw to
 * the terminal and dropped it: issue 32, M2), then PLplot's escape character '#' doubled. */
static void escaped(const char *text, char *out, size_t size) {
  char safe[1024];
  size_t n = 0;
  rtm_escape_text(text ? text : "", safe, sizeof safe);
  for (const char *c = safe; *c && n + 2 < size; ++c) {
    if (*c == '#') out[n++] = '#';
    out[n++] = *c;
  }
  out[n] = '\0';
}

static const char *device_for(const char *path) {
  const char *dot = strrchr(path, '.');
  if (!dot) return NULL;
  if (strcmp(dot, ".png") == 0) return "pngcairo";
  if (strcmp(dot, ".svg") == 0) return "svgcairo";
  if (strcmp(dot, ".pdf") == 0) return "pdfcairo";
  return NULL;
}

/* Colour map 1: blue - white - red around zero (signed fields), or a dark-blue to yellow
 * ramp close to viridis (models, images of one sign). */
static void set_colours(int diverging) {
  if (diverging) {
    const PLFLT at[3] = {0.0, 0.5, 1.0}, r[3] = {0.05, 1.0, 0.75}, g[3] = {0.2, 1.0, 0.05},
                b[3] = {0.75, 1.0, 0.05};
    plscmap1l(1, 3, at, r, g, b, NULL);
  } else {
    const PLFLT at[5] = {0.0, 0.25, 0.5, 0.75, 1.0}, r[5] = {0.27, 0.23, 0.13, 0.37, 0.99},
                g[5] = {0.0, 0.32, 0.57, 0.79, 0.91}, b[5] = {0.33, 0.55, 0.55, 0.38, 0.14};
    plscmap1l(1, 5, at, r, g, b, NULL);
  }
}

static void draw_panel(const rtm_figure_panel_t *p, const rtm_figure_style_t *style, double left,
                       double right) {
  const double x0 = p->x_first - 0.5 * p->x_step, x1 = x0 + p->columns * p->x_step;
  const double y0 = p->y_first - 0.5 * p->y_step, y1 = y0 + p->rows * p->y_step;
  /* the data's own aspect when both axes are lengths; else the space given */
  const double aspect = p->same_units ? fabs((y1 - y0) / (x1 - x0)) : 0.0;
  plvpas(left, right, 0.14, 0.86, aspect);
  if (p->y_down)
    plwind(x0, x1, y1, y0);
  else
    plwind(x0, x1, y0, y1);
  if (!p->wiggle) {
    PLFLT **grid = NULL;
    plAlloc2dGrid(&grid, p->columns, p->rows);
    for (int i = 0; i < p->columns; ++i)
      for (int j = 0; j < p->rows; ++j) {
        double v = p->values[(size_t)j * p->columns + i];
        if (!isfinite(v)) v = style->lo; /* never transparent */
        grid[i][j] = v < style->lo ? style->lo : v > style->hi ? style->hi : v;
      }
    plimagefr((PLFLT_MATRIX)grid, p->columns, p->rows, x0, x1, y0, y1, style->lo, style->hi,
              style->lo, style->hi, NULL, NULL);
    plFree2dGrid(grid, p->columns, p->rows);
  } else {
    /* one line a trace (a column), deflected by up to 1.5 trace spacings at the clip */
    PLFLT *xs = malloc((size_t)p->rows * sizeof *xs), *ys = malloc((size_t)p->rows * sizeof *ys);
    const double scale = style->hi > 0.0 ? 1.5 * p->x_step / style->hi : 0.0;
    plcol0(1);
    for (int i = 0; xs && ys && i < p->columns; ++i) {
      for (int j = 0; j < p->rows; ++j) {
        double v = p->values[(size_t)j * p->columns + i];
        if (!isfinite(v)) v = 0.0;
        v = v < style->lo ? style->lo : v > style->hi ? style->hi : v;
        xs[j] = p->x_first + i * p->x_step + scale * v;
        ys[j] = p->y_first + j * p->y_step;
      }
      plline(p->rows, xs, ys);
    }
    free(xs);
    free(ys);
  }
  char x_label[256], y_label[256], title[512];
  escaped(p->x_label, x_label, sizeof x_label);
  escaped(p->y_label, y_label, sizeof y_label);
  escaped(p->title, title, sizeof title);
  plcol0(1);
  plbox("bcnst", 0.0, 0, "bcnstv", 0.0, 0);
  pllab(x_label, y_label, "");
  plmtex("t", 1.2, 0.5, 0.5, title);
}

static void draw_colour_bar(const rtm_figure_style_t *style) {
  char label[256];
  escaped(style->bar_label, label, sizeof label);
  PLFLT width = 0.0, height = 0.0;
  const PLINT label_opts[1] = {PL_COLORBAR_LABEL_RIGHT};
  const char *labels[1] = {label};
  const char *axis_opts[1] = {"bcvtm"};
  const PLFLT ticks[1] = {0.0};
  const PLINT sub_ticks[1] = {0}, n_values[1] = {2};
  PLFLT range[2] = {style->lo, style->hi};
  const PLFLT *values[1] = {range};
  plcol0(1);
  plcolorbar(&width, &height, PL_COLORBAR_IMAGE | PL_COLORBAR_BOUNDING_BOX,
             PL_POSITION_RIGHT | PL_POSITION_OUTSIDE | PL_POSITION_VIEWPORT, 0.03, 0.0, 0.03, 0.9,
             0, 1, 1, 0.0, 0.0, 0, 0.0, 1, label_opts, labels, 1, axis_opts, ticks, sub_ticks,
             n_values, (PLFLT_MATRIX)values);
}

/* The page: the device for the extension (of `format`, else of PATH), white background,
 * black ink, the size; drawn into `aside` (rtm_io_aside_create), checked and renamed over
 * PATH by close_page. */
/* Whether `wanted` more file descriptors can be opened now (each taken and given back). */
static int descriptors_free(int wanted) {
  int taken[64], count = 0;
  if (wanted > 64) wanted = 64;
  while (count < wanted && (taken[count] = dup(STDERR_FILENO)) >= 0)
    ++count;
  for (int k = 0; k < count; ++k)
    close(taken[k]);
  return count == wanted;
}

/* Whether PLplot's temporary folder (TMPDIR, else P_tmpdir) takes a file of a few kB: PLplot
 * writes its table of drivers there at plinit and, when it cannot, ends the process itself
 * ("No device drivers found", exit 1) with the run's partial files left (probe T, T2: a full
 * TMPDIR, ulimit -f 0; every command ignores SIGXFSZ, so a file size limit fails the write). */
static int temporary_folder_ok(const char *path, const char *tail) {
  const char *folder = getenv("TMPDIR");
  if (!folder || !folder[0]) folder = P_tmpdir;
  char name[4096];
  snprintf(name, sizeof name, "%s/rtm3d_figure.XXXXXX", folder);
  const int fd = mkstemp(name);
  char block[8192];
  memset(block, ' ', sizeof block);
  const int wrote = fd >= 0 && write(fd, block, sizeof block) == (ssize_t)sizeof block;
  const int saved = errno;
  if (fd >= 0) {
    close(fd);
    unlink(name);
  }
  if (wrote) return 1;
  const int why = fd >= 0 ? saved : errno;
  rtm_log_error("%s: not drawn: the figure library writes a table of its drivers into the "
                "temporary folder %s, where a file cannot be written (%s): %s%s",
                path, folder, strerror(why),
                why == EFBIG ? "raise the file size limit (ulimit -f)"
                             : "free space there, or set TMPDIR to a folder where files can be "
                               "written",
                tail);
  return 0;
}

int rtm_figure_check_temporary(const char *figures) {
  return temporary_folder_ok(figures, " (nothing is run: they would fail after all its work)")
             ? RTM_OK
             : RTM_ERR_IO;
}

static int open_page(const char *path, const char *format, char *aside, size_t size, int width,
                     int height) {
  const char *device = device_for(format ? format : path);
  if (!device) {
    rtm_log_error("%s: a figure is .png, .svg or .pdf", path);
    return RTM_ERR_USAGE;
  }
  /* PLplot opens its drivers' folder, their libraries and fonts; without the descriptors it
   * falls back to asking for a device on stdin, which would wait for ever on a terminal */
  if (!descriptors_free(24)) {
    rtm_log_error("%s: too few file descriptors are left to draw a figure (ulimit -n): raise "
                  "the limit (64 or more is usual), or write the plain PNG (plot --raw)",
                  path);
    return RTM_ERR_IO;
  }
  if (!temporary_folder_ok(path, "")) return RTM_ERR_IO;
  if (rtm_io_make_parent_dir(path) != RTM_OK) return RTM_ERR_IO; /* as the plain PNG does */
  const int status = rtm_io_aside_create(path, aside, size);
  if (status != RTM_OK) return status;
  /* the file handed to PLplot open, not its name: plsfnam reads "%n" in a name as a family
   * of files' member number and wrote elsewhere (probe R, R1: output.name = a%n lost a
   * finished migration at its figures); plend closes it */
  FILE *page = fopen(aside, "wb");
  if (!page) {
    rtm_log_error("cannot open %s: %s", aside, strerror(errno));
    remove(aside);
    return RTM_ERR_IO;
  }
  plsdev(device);
  plsfile(page);
  plspage(0.0, 0.0, width, height, 0, 0);
  plscolbg(255, 255, 255);
  plscol0(0, 255, 255, 255);
  plscol0(1, 0, 0, 0);
  plinit();
  pladv(0);
  return RTM_OK;
}

/* ---- is the file PLplot wrote whole? Its drivers ignore failed writes (a full disk, a file
 * size limit), so a figure cut short would otherwise be renamed over PATH as complete. ---- */

/* The `size` bytes of FILE from `offset` into `bytes`; 0 when they are not all there. */
static int read_at(FILE *file, long offset, unsigned char *bytes, size_t size) {
  return fseek(file, offset, SEEK_SET) == 0 && fread(bytes, 1, size, file) == size;
}

static unsigned long big_endian(const unsigned char *b) {
  return (unsigned long)b[0] << 24 | (unsigned long)b[1] << 16 | (unsigned long)b[2] << 8 | b[3];
}

/* PNG: the signature, then chunks (length, type, data, CRC) that walk exactly to the end of
 * the file, the last one IEND. */
static const char *png_cut(FILE *file, long size) {
  static const unsigned char signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  unsigned char head[8];
  if (!read_at(file, 0, head, 8) || memcmp(head, signature, 8) != 0) return "no PNG signature";
  long at = 8;
  while (at + 12 <= size) {
    if (!read_at(file, at, head, 8)) return "a chunk cannot be read";
    const unsigned long length = big_endian(head);
    if (length > 0x7fffffffUL || (long)length > size - at - 12) return "a chunk is cut short";
    at += 12 + (long)length;
    if (memcmp(head + 4, "IEND", 4) == 0) return at == size ? NULL : "bytes after IEND";
  }
  return "no IEND chunk";
}

/* The last bytes of FILE (up to size - 1) into `tail`, NUL-ended, trailing white space cut. */
static size_t read_tail(FILE *file, long size, char *tail, size_t capacity) {
  size_t n = (size_t)size < capacity - 1 ? (size_t)size : capacity - 1;
  if (!read_at(file, size - (long)n, (unsigned char *)tail, n)) n = 0;
  while (n > 0 && strchr(" \t\r\n", tail[n - 1]))
    --n;
  tail[n] = '\0';
  return n;
}

/* SVG: ends with its closing tag. */
static const char *svg_cut(FILE *file, long size) {
  char tail[64];
  const size_t n = read_tail(file, size, tail, sizeof tail);
  return n >= 6 && strcmp(tail + n - 6, "</svg>") == 0 ? NULL : "no closing </svg>";
}

/* PDF: %PDF- first; %%EOF last, after a startxref whose offset is inside the file and finds
 * the cross-reference there (a table or a stream object): bytes lost before it move it. */
static const char *pdf_cut(FILE *file, long size) {
  char tail[256], at_xref[8] = "";
  unsigned char head[5];
  if (!read_at(file, 0, head, 5) || memcmp(head, "%PDF-", 5) != 0) return "no %PDF- header";
  const size_t n = read_tail(file, size, tail, sizeof tail);
  const char *start = strstr(tail, "startxref");
  if (n < 5 || strcmp(tail + n - 5, "%%EOF") != 0 || !start) return "no startxref and %%EOF";
  const long offset = strtol(start + 9, NULL, 10);
  if (offset <= 0 || offset >= size || !read_at(file, offset, (unsigned char *)at_xref, 4))
    return "startxref points outside the file";
  if (memcmp(at_xref, "xref", 4) != 0 && !(at_xref[0] >= '1' && at_xref[0] <= '9'))
    return "startxref does not point at the cross-reference";
  return NULL;
}

/* NULL when `aside`, a figure in the format of `extension`, is whole; else what is wrong. */
static const char *figure_cut(const char *aside, const char *extension) {
  FILE *file = fopen(aside, "rb");
  if (!file) return "it cannot be read back";
  const char *why = fseek(file, 0, SEEK_END) == 0 ? NULL : "it cannot be read back";
  const long size = why ? 0 : ftell(file);
  if (!why && size <= 0) why = "it is empty";
  if (!why && strcmp(extension, ".png") == 0) why = png_cut(file, size);
  if (!why && strcmp(extension, ".svg") == 0) why = svg_cut(file, size);
  if (!why && strcmp(extension, ".pdf") == 0) why = pdf_cut(file, size);
  fclose(file);
  return why;
}

/* The page ended and its file, checked whole (figure_cut), renamed over PATH; a file cut
 * short is removed and PATH left as it was. */
static int close_page(const char *path, const char *format, const char *aside) {
  plend();
  const char *extension = strrchr(format ? format : path, '.');
  /* rtm3d's mark in a PNG (a --force run removes only figures it finds it in) */
  const int png = extension && strcmp(extension, ".png") == 0;
  const char *why = figure_cut(aside, extension);
  if (!why && png && rtm_png_mark(aside) != RTM_OK) why = "rtm3d's mark could not be added";
  if (!why && png) why = figure_cut(aside, extension); /* the rewrite whole too */
  if (why) {
    rtm_log_error("%s: the figure could not be written whole (%s): is the disk full, or a file "
                  "size limit (ulimit -f) reached?",
                  path, why);
    remove(aside);
    return RTM_ERR_IO;
  }
  return rtm_io_commit_partial(aside, path);
}

int rtm_figure_lines(const char *path, const rtm_figure_series_t *series, int count,
                     const double range[4], const char *x_label, const char *y_label,
                     const char *title, int width, int height) {
  char aside[4096 + 32];
  int status = open_page(path, NULL, aside, sizeof aside, width, height);
  if (status != RTM_OK) return status;
  char x_text[256], y_text[256], title_text[512];
  escaped(x_label, x_text, sizeof x_text);
  escaped(y_label, y_text, sizeof y_text);
  escaped(title, title_text, sizeof title_text);
  plschr(0.0, 0.9);
  plvpor(0.12, 0.95, 0.14, 0.88);
  plwind(range[0], range[1], range[2], range[3]);
  plcol0(1);
  plbox("bcnstg", 0.0, 0, "bcnstvg", 0.0, 0);
  pllab(x_text, y_text, title_text);
  for (int s = 0; s < count && s < 12; ++s) {
    plscol0(2 + s, series[s].rgb[0], series[s].rgb[1], series[s].rgb[2]);
    plcol0(2 + s);
    plwidth(2.0);
    pllsty(series[s].dashed ? 2 : 1);
    plline(series[s].count, series[s].x, series[s].y);
    if (!series[s].dashed)
      plstring(series[s].count, series[s].x, series[s].y, "#(840)"); /* filled circles */
    /* the legend: a short line and the name, bottom right, one row a series */
    const double lx0 = range[0] + 0.55 * (range[1] - range[0]);
    const double ly = range[2] + (0.06 + 0.06 * (count - 1 - s)) * (range[3] - range[2]);
    const PLFLT lx[2] = {lx0, lx0 + 0.08 * (range[1] - range[0])}, lys[2] = {ly, ly};
    plline(2, lx, lys);
    char name[128];
    escaped(series[s].name, name, sizeof name);
    plcol0(1);
    plptex(lx[1] + 0.02 * (range[1] - range[0]), ly, 1.0, 0.0, 0.0, name);
  }
  pllsty(1);
  plwidth(1.0);
  return close_page(path, NULL, aside);
}

int rtm_figure_write(const char *path, const rtm_figure_panel_t *panels, int count,
                     const rtm_figure_style_t *style) {
  if (count < 1 || !(style->hi > style->lo)) {
    rtm_log_error("%s: no panel, or an empty colour range [%g, %g]", path, style->lo, style->hi);
    return RTM_ERR_INTERNAL;
  }
  for (int k = 0; k < count; ++k)
    if (panels[k].columns < 1 || panels[k].rows < 1) { /* an empty figure would look drawn */
      rtm_log_error("%s: panel %d has %d x %d samples: nothing to draw", path, k + 1,
                    panels[k].columns, panels[k].rows);
      return RTM_ERR_INPUT;
    }
  char aside[4096 + 32];
  const int status =
      open_page(path, style->format, aside, sizeof aside, style->width, style->height);
  if (status != RTM_OK) return status;
  set_colours(style->diverging);
  /* the panels side by side in [0.09, 0.84] of the page, the colour bar right of the last;
   * smaller letters the more panels share the page; beyond three (plot's gathers) the gaps
   * share 0.2 of it, so that the panels keep a width */
  const double from = 0.09, to = 0.84;
  const double gap = count > 3 ? 0.2 / (count - 1) : count > 1 ? 0.08 : 0.0;
  const double each = (to - from - gap * (count - 1)) / count;
  plschr(0.0, count > 1 ? 0.65 : 0.9);
  for (int k = 0; k < count; ++k)
    draw_panel(&panels[k], style, from + k * (each + gap), from + k * (each + gap) + each);
  draw_colour_bar(style);
  if (style->page_title) {
    char title[512];
    escaped(style->page_title, title, sizeof title);
    plvpor(0.0, 1.0, 0.0, 1.0);
    plschr(0.0, 0.9);
    plmtex("t", -2.0, 0.5, 0.5, title);
  }
  return close_page(path, style->format, aside);
}
#endif
