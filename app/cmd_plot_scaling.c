/* rtm3d plot --scaling FILE.csv [-o OUT] [--size WxH]: run/scaling.sh's CSV (columns mode,
 * ranks, efficiency at least; rtm_io_read_scaling) as parallel efficiency against ranks, a
 * line a run, the ideal dashed (io/figure.c's line plot). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot.h"
#include "rtm_io.h"
#include "rtm_status.h"

/* The CSV's lines, strong scaling in blues, weak in reds, the ideal of 1 dashed grey. */
static int draw(const rtm_scaling_t *s, const char *csv, const char *path, const int size[2]) {
  static const int palette[4][3] = {{31, 90, 200}, {200, 40, 40}, {40, 150, 60}, {150, 80, 180}};
  rtm_figure_series_t series[RTM_SCALING_LINES + 1];
  for (int m = 0; m < s->lines; ++m) {
    const int *rgb = palette[(s->strong[m] ? 0 : 1) + 2 * (m / 2 % 2)];
    series[m] = (rtm_figure_series_t){
        s->names[m], s->counts[m], s->x[m], s->y[m], {rgb[0], rgb[1], rgb[2]}, 0};
  }
  const double ideal_x[2] = {0.5, s->x_max + 0.5}, ideal_y[2] = {1.0, 1.0};
  series[s->lines] = (rtm_figure_series_t){"ideal", 2, ideal_x, ideal_y, {150, 150, 150}, 1};
  const double range[4] = {0.5, s->x_max + 0.5, 0.0, s->y_max};
  char title[1200];
  snprintf(title, sizeof title, "parallel efficiency, %s", csv);
  return rtm_figure_lines(path, series, s->lines + 1, range, "ranks", "parallel efficiency", title,
                          size[0], size[1]);
}

int rtm_cmd_plot_scaling(int argc, char **argv) {
  int status = RTM_OK, size[2] = {800, 560}, made = 0;
  const char *csv = NULL, *out = NULL;
  char why[256], path[4096] = ""; /* the figure's file, once named */
  FILE *f = NULL;
  rtm_scaling_t *s = calloc(1, sizeof *s);
  if (!s) RTM_FAIL(RTM_ERR_NOMEM, "out of memory");
  int sized = 0;
  for (int i = 1; i < argc; ++i) {
    /* each option once, as plot's others: a second would silently win */
    if ((strcmp(argv[i], "--scaling") == 0 && csv) ||
        ((strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--output") == 0) && out) ||
        (strcmp(argv[i], "--size") == 0 && sized))
      RTM_FAIL(RTM_ERR_USAGE, "plot --scaling: %s is given twice: give it once", argv[i]);
    if (strcmp(argv[i], "--scaling") == 0 && i + 1 < argc) {
      csv = argv[++i];
    } else if ((strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--output") == 0) && i + 1 < argc) {
      out = argv[++i];
    } else if (strcmp(argv[i], "--size") == 0 && i + 1 < argc) {
      RTM_TRY(rtm_plot_parse_size(argv[++i], size));
      sized = 1;
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
  /* bounded: a FIFO refused rather than waited on */
  if (rtm_text_open(csv, &f, NULL, why, sizeof why) != RTM_OK)
    RTM_FAIL(RTM_ERR_INPUT, "plot: cannot read %s: %s", csv, why);
  RTM_TRY(rtm_io_read_scaling(f, csv, s));
  char name[2048];
  const char *dot = strrchr(csv, '.'), *slash = strrchr(csv, '/');
  if (dot && slash && dot < slash) dot = NULL; /* a dot in a folder's name */
  if (out)
    snprintf(name, sizeof name, "%s", out);
  else
    snprintf(name, sizeof name, "%.*s.png", dot ? (int)(dot - csv) : (int)strlen(csv), csv);
  RTM_TRY(rtm_plot_output_begin(name, path, sizeof path, &made));
  RTM_TRY(draw(s, csv, path, size));
  char text[2][4 * 2048 + 1];
  rtm_escape_text(path, text[0], sizeof text[0]);
  rtm_escape_text(csv, text[1], sizeof text[1]);
  printf("wrote %s (%d mode%s of %s)\n", text[0], s->lines, s->lines == 1 ? "" : "s", text[1]);
fail:
  if (path[0]) rtm_plot_output_end(path, made, status);
  if (f) fclose(f);
  free(s);
  return rtm_status_exit_code(status);
}
