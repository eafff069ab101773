/* rtm3d plot FILE /gathers/offset|/gathers/angle [--index K] [--clip PCT] [--size WxH]
 * [-o OUT] [--raw]: a migration's common-image gathers (io/image_gathers.c) as panels side
 * by side, one a common-image point, depth downward against the half-offset hx in metres at
 * hy = 0 (offset) or the incidence angle in degrees (angle), under one colour scale: up to
 * PANELS CIPs spread evenly over the file's list, or CIP K alone (--index K). --raw, or a
 * build without PLplot: the panels in one plain PNG, a blank column between them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "plot.h"
#include "rtm_io.h"
#include "rtm_memory.h"
#include "rtm_status.h"

enum { PANELS = 6 };

typedef struct {
  rtm_io_gathers_info_t info;
  int shown[PANELS], count; /* the CIPs drawn, in the file's order */
  float *panels[PANELS];    /* each [nz][columns] */
  char titles[PANELS][96];
} gathers_plot_t;

/* The options that mean nothing for gathers of this kind, refused by name. */
static int check_options(const plot_args_t *a) {
  const char *option = a->axis      ? "--slice"
                       : a->panel   ? "--panel"
                       : a->wiggle  ? "--wiggle"
                       : a->at[0] >= 0 || a->at[1] >= 0 || a->at[2] >= 0 ? "--at"
                       : strcmp(a->gain, "none") != 0 ? "--gain"
                                                      : NULL;
  if (!option) return RTM_OK;
  rtm_log_error(
      "plot: %s does not apply to %s, a migration's common-image gathers (--index K shows "
      "CIP K alone)",
      option, a->dataset);
  return RTM_ERR_USAGE;
}

/* Up to PANELS CIPs, the first and the last among them, spread evenly; --index K alone. */
static int choose_cips(const plot_args_t *a, gathers_plot_t *g) {
  const int cips = g->info.cips;
  if (a->index >= 0) {
    if (a->index >= cips) {
      rtm_log_error("plot: --index %ld is out of range: %s has %d CIPs (0..%d)", a->index,
                    a->dataset, cips, cips - 1);
      return RTM_ERR_USAGE;
    }
    g->shown[0] = (int)a->index;
    g->count = 1;
    return RTM_OK;
  }
  g->count = cips < PANELS ? cips : PANELS;
  for (int k = 0; k < g->count; ++k)
    g->shown[k] = g->count == 1 ? 0 : (int)lround((double)k * (cips - 1) / (g->count - 1));
  return RTM_OK;
}

/* The panels read, checked: none may be non-finite (a migration never writes one), and
 * all zero would draw as nothing. */
static int read_panels(const plot_args_t *a, gathers_plot_t *g) {
  int status = RTM_OK, nonzero = 0;
  const size_t cells = (size_t)g->info.nz * (size_t)g->info.columns;
  for (int k = 0; k < g->count; ++k) {
    const int c = g->shown[k];
    RTM_TRY(rtm_io_read_gathers_panel(a->file, &g->info, c, &g->panels[k]));
    for (size_t i = 0; i < cells; ++i) {
      if (!isfinite(g->panels[k][i]))
        RTM_FAIL(RTM_ERR_INPUT, "plot: CIP %d of %s in %s holds a value that is not finite", c,
                 a->dataset, a->file);
      nonzero |= g->panels[k][i] != 0.0f;
    }
    snprintf(g->titles[k], sizeof g->titles[k], "CIP %d (%.6g, %.6g) m", c, g->info.cip_x_m[c],
             g->info.cip_y_m[c]);
  }
  if (!nonzero)
    RTM_FAIL(RTM_ERR_INPUT,
             "plot: the gathers of the %d CIP%s shown from %s are all zero: nothing to draw "
             "(a CIP in the absorbing layer, or a migration that imaged nothing)",
             g->count, g->count == 1 ? "" : "s", a->file);
fail:
  return status;
}

/* FILE's stem (without .h5) and .gathers_offset.png or .gathers_angle.png, unless -o names
 * the output. */
static void output_path(const plot_args_t *a, char *out, size_t size) {
  if (a->out) {
    snprintf(out, size, "%s", a->out);
    return;
  }
  const size_t length = strlen(a->file);
  const int h5 = length > 3 && strcmp(a->file + length - 3, ".h5") == 0;
  snprintf(out, size, "%.*s.gathers_%s.png", (int)(h5 ? length - 3 : length), a->file,
           strcmp(a->dataset, "/gathers/angle") == 0 ? "angle" : "offset");
}

/* The panels side by side, each its own axes, one diverging colour scale over them all. */
static int write_figure(const plot_args_t *a, const gathers_plot_t *g, const char *out,
                        const float *all, size_t total) {
  int status = RTM_OK;
  const rtm_io_gathers_info_t *info = &g->info;
  rtm_figure_panel_t panels[PANELS];
  char page_title[1200];
  const int width = 250 + 330 * g->count; /* room for a panel's depth axis and title */
  rtm_figure_style_t style = {.width = a->sized                   ? a->size[0]
                                       : width < RTM_FIGURE_WIDTH ? RTM_FIGURE_WIDTH
                                                                  : width,
                              .height = a->sized ? a->size[1] : RTM_FIGURE_HEIGHT,
                              .bar_label =
                                  g->info.angle ? "A(x, angle)" : "I(x, h), summed over the shots",
                              .page_title = page_title};
  if (info->angle)
    snprintf(page_title, sizeof page_title, "%s %s, incidence angles 0 to %.4g degrees", a->file,
             a->dataset, info->column_step * (info->columns - 1));
  else
    snprintf(page_title, sizeof page_title, "%s %s at hy = 0 (lags of %.6g m)", a->file, a->dataset,
             info->lag_spacing_m[0]);
  for (int k = 0; k < g->count; ++k)
    panels[k] =
        (rtm_figure_panel_t){.values = g->panels[k],
                             .columns = info->columns,
                             .rows = info->nz,
                             .x_first = info->column_first,
                             .x_step = info->column_step,
                             .y_first = info->z_origin_m,
                             .y_step = info->z_spacing_m,
                             .x_label = info->angle ? "angle (degrees)" : "half-offset hx (m)",
                             .y_label = k == 0 ? "depth (m)" : "", /* shared */
                             .title = g->titles[k],
                             .y_down = 1};
  RTM_TRY(rtm_figure_colour_range(all, total, a->clip_percentile, 1, &style));
  if (rtm_mem_host_address_space_left() < RTM_APP_FIGURE_ADDRESS_SPACE)
    RTM_FAIL(RTM_ERR_IO,
             "plot: the gathers are not drawn: under the address-space limit (ulimit -v) too "
             "little is left for PLplot; raise the limit, or --raw writes a plain PNG");
  status = rtm_figure_write(out, panels, g->count, &style);
  if (status != RTM_OK) {
    if (status != RTM_ERR_USAGE) status = RTM_ERR_IO;
    goto fail;
  }
  char shown[4 * 2048 + 1];
  rtm_escape_text(out, shown, sizeof shown);
  printf("wrote %s (%d CIP%s, colours symmetric, %.4g to %.4g)\n", shown, g->count,
         g->count == 1 ? "" : "s", style.lo, style.hi);
fail:
  return status;
}

/* The panels in one image, a zero column between two, as the plain PNG. */
static int write_plain(const plot_args_t *a, const gathers_plot_t *g, const char *out) {
  int status = RTM_OK;
  const int nh = g->info.columns, nz = g->info.nz, width = g->count * (nh + 1) - 1;
  float *image = calloc((size_t)width * (size_t)nz, sizeof *image);
  if (!image) RTM_FAIL(RTM_ERR_NOMEM, "out of memory for the gathers' image");
  for (int k = 0; k < g->count; ++k)
    for (int z = 0; z < nz; ++z)
      memcpy(image + (size_t)z * width + (size_t)k * (nh + 1), g->panels[k] + (size_t)z * nh,
             (size_t)nh * sizeof *image);
  char title[1200];
  snprintf(title, sizeof title, "%s %s at hy = 0, %d CIPs", a->file, a->dataset, g->count);
  status = rtm_png_write(out, image, width, nz, a->clip_percentile, title);
  if (status != RTM_OK) {
    if (status != RTM_ERR_USAGE) status = RTM_ERR_IO;
    goto fail;
  }
  char shown[4 * 2048 + 1];
  rtm_escape_text(out, shown, sizeof shown);
  printf("wrote %s (%d x %d, %d CIP%s of %d %s%s)\n", shown, width, nz, g->count,
         g->count == 1 ? "" : "s", g->info.angle ? nh : g->info.lags,
         g->info.angle ? "angles" : "lags each side",
         g->count == 1 ? "" : ", a blank column between");
fail:
  free(image);
  return status;
}

int rtm_plot_gathers(const plot_args_t *a) {
  int status = RTM_OK;
  gathers_plot_t g;
  float *all = NULL;
  char name[2048], out[4096] = "";
  int made = 0;
  memset(&g, 0, sizeof g);
  RTM_TRY(check_options(a));
  RTM_TRY(rtm_io_read_gathers_info(a->file, a->dataset, &g.info));
  RTM_TRY(choose_cips(a, &g));
  RTM_TRY(read_panels(a, &g));
  output_path(a, name, sizeof name);
  RTM_TRY(rtm_plot_output_begin(name, out, sizeof out, &made));
  if (a->raw || !rtm_figure_available()) {
    if (!a->raw) rtm_log_info("plot: this build has no PLplot: a plain PNG, one pixel a sample");
    RTM_TRY(write_plain(a, &g, out));
  } else {
    const size_t cells = (size_t)g.info.nz * (size_t)g.info.columns;
    all = malloc((size_t)g.count * cells * sizeof *all);
    if (!all) RTM_FAIL(RTM_ERR_NOMEM, "out of memory for the colour range");
    for (int k = 0; k < g.count; ++k)
      memcpy(all + (size_t)k * cells, g.panels[k], cells * sizeof *all);
    RTM_TRY(write_figure(a, &g, out, all, (size_t)g.count * cells));
  }
fail:
  if (out[0]) rtm_plot_output_end(out, made, status);
  free(all);
  for (int k = 0; k < PANELS; ++k)
    free(g.panels[k]);
  rtm_io_gathers_release(&g.info);
  return status;
}
