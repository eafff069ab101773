/* rtm3d plot's options: the usage text and the command line read into plot_args_t
 * (plot.h), each value checked as it is read; what needs the dataset's shape to check
 * (ranges, a gather's options on a volume) is cmd_plot.c's. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot.h"
#include "rtm_io.h" /* RTM_FIGURE_WIDTH */
#include "rtm_status.h"

void rtm_plot_usage(FILE *out) {
  fprintf(
      out,
      "usage: rtm3d plot FILE.h5 DATASET [--index K] [--slice a=N|a=Dm | --panel [--at X,Y,Z]]\n"
      "                  [--clip PCT] [--gain none|t2|agc] [--wiggle] [--size WxH] [--raw]\n"
      "                  [-o OUT.png|OUT.svg|OUT.pdf]\n\n"
      "Draws DATASET with axes in metres (and seconds), the data's true aspect, a colour\n"
      "bar with units and a title naming the file, dataset, snapshot time and plane (or a\n"
      "gather's shot position):\n"
      "  snapshots [nsnap][nz][ny][nx]  snapshot K (default the last), one slice\n"
      "  volumes [nz][ny][nx]           (/image, a model file's /vp, ...) one slice\n"
      "  gathers [nrec][nt]             (/traces/p) receivers across, time downward\n"
      "  /gathers/offset                a migration's subsurface-offset gathers: a panel a\n"
      "                                 CIP (6 spread over them, or CIP K with --index K),\n"
      "                                 depth downward against the half-offset hx at hy = 0\n"
      "  /gathers/angle                 its angle gathers alike, against the angle in degrees\n"
      "Signed fields in blue (negative) - white - red (positive), saturating at the PCT\n"
      "percentile of |value|; a model (/vp, /vs, /epsilon, /delta, /theta, /phi) from its\n"
      "least to its largest value (with --clip: its (100 - PCT) to PCT percentiles) and\n"
      "another volume of one sign from its (100 - PCT) to its PCT percentile, both in a\n"
      "dark-to-yellow ramp.\n\n"
      "  --index K        snapshot index, 0 .. nsnap-1 (default nsnap-1); of /gathers/offset\n"
      "                   the CIP\n"
      "  --slice a=N      plane to show by its cell index N: z=N (map view, default\n"
      "                   z = nz/2), y=N or x=N (vertical sections, depth downward)\n"
      "  --slice a=Dm     the same by its place in metres (y=800m): the nearest plane\n"
      "                   (the title says both: y = 800 m (index 40))\n"
      "  --panel          three slices through one cell instead: z (map), y and x sections\n"
      "  --at X,Y,Z       with --panel: that cell's indices (default the centre)\n"
      "  --clip PCT       clip percentile in (0, 100] (default 99; a model's whole range)\n"
      "  --gain G         gathers: none (default), t2 (samples times t^2, late arrivals up)\n"
      "                   or agc (each sample over the RMS of a 0.25 s window)\n"
      "  --wiggle         gathers: a line a trace instead of variable density\n"
      "  --size WxH       the figure's pixels (default 1000x750; not with --raw)\n"
      "  --raw            the plain PNG instead: one pixel a sample, no axes\n"
      "  -o, --output OUT .png, .svg or .pdf (default: beside FILE, e.g.\n"
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

/* --slice a=N (a cell index) or a=Xm (metres along the axis, the file's grid). */
static int parse_slice(const char *text, plot_args_t *a) {
  if (!text || !strchr("xyz", text[0]) || text[0] == '\0' || text[1] != '=') goto refused;
  a->axis = text[0];
  const char *value = text + 2;
  const size_t length = strlen(value);
  if (length > 1 && value[length - 1] == 'm') {
    char *end = NULL;
    a->plane_m = rtm_text_number(value, &end);
    if (end != value + length - 1 || !isfinite(a->plane_m)) goto refused;
    a->plane_in_metres = 1;
    return RTM_OK;
  }
  char *end = NULL;
  a->plane = strtol(value, &end, 10);
  if (end != value && *end == '\0') return RTM_OK;
refused:
  rtm_log_error("plot: --slice needs x=N, y=N or z=N, a cell index, or x=Dm, y=Dm or z=Dm, "
                "metres (got '%s')",
                text ? text : "");
  return RTM_ERR_USAGE;
}

/* A decimal count of digits alone at *text, advanced past it: the count, or -1 when there is
 * none or it has more than 9 digits (sscanf's %d wrapped 4294967496 to 200: a probe). */
static long pixel_count(const char **text) {
  long value = 0;
  int digits = 0;
  for (; **text >= '0' && **text <= '9'; ++*text)
    if (++digits <= 9) value = 10 * value + (**text - '0');
  return digits >= 1 && digits <= 9 ? value : -1;
}

int rtm_plot_parse_size(const char *text, int size[2]) {
  const char *at = text;
  const long w = at ? pixel_count(&at) : -1;
  const long h = at && *at == 'x' ? (++at, pixel_count(&at)) : -1;
  if (!text || *at != '\0' || w < 200 || h < 150 || w > 8000 || h > 8000) {
    rtm_log_error("plot: --size needs WxH pixels, 200x150 to 8000x8000 (got '%s')",
                  text ? text : "");
    return RTM_ERR_USAGE;
  }
  size[0] = (int)w;
  size[1] = (int)h;
  return RTM_OK;
}

int rtm_plot_parse_args(int argc, char **argv, plot_args_t *a, int *help) {
  int status = RTM_OK, positional = 0;
  *help = 0;
  memset(a, 0, sizeof *a);
  a->index = -1;
  a->clip_percentile = 99.0;
  snprintf(a->gain, sizeof a->gain, "none");
  a->at[0] = a->at[1] = a->at[2] = -1;
  a->size[0] = RTM_FIGURE_WIDTH;
  a->size[1] = RTM_FIGURE_HEIGHT;
  /* the options that take a value, each given once: a second would silently win */
  static const char *const once[] = {"--index", "--slice", "--clip", "--gain",
                                     "--at",    "--size",  "-o"};
  const char *given[sizeof once / sizeof once[0]] = {NULL};
  for (int i = 1; i < argc; ++i) {
    const char *arg = argv[i];
    const char *next = i + 1 < argc ? argv[i + 1] : NULL;
    const char *option = strcmp(arg, "--output") == 0 ? "-o" : arg; /* one option */
    for (size_t k = 0; k < sizeof once / sizeof once[0]; ++k) {
      if (strcmp(option, once[k]) != 0) continue;
      if (given[k])
        RTM_FAIL(RTM_ERR_USAGE, "plot: %s is given twice ('%s', then '%s'): give it once", arg,
                 given[k], next ? next : "");
      given[k] = next ? next : "";
    }
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
      *help = 1;
      return RTM_OK;
    } else if (strcmp(arg, "--index") == 0) {
      RTM_TRY(parse_long("--index", next, &a->index));
      if (a->index < 0) RTM_FAIL(RTM_ERR_USAGE, "plot: --index %ld must be >= 0", a->index);
      ++i;
    } else if (strcmp(arg, "--slice") == 0) {
      RTM_TRY(parse_slice(next, a));
      ++i;
    } else if (strcmp(arg, "--clip") == 0) {
      char *end = NULL;
      double pct = next ? rtm_text_number(next, &end) : 0.0;
      if (!next || end == next || *end != '\0' || !(pct > 0.0 && pct <= 100.0))
        RTM_FAIL(RTM_ERR_USAGE, "plot: --clip needs a percentile in (0, 100] (got '%s')",
                 next ? next : "");
      a->clip_percentile = pct;
      a->clipped = 1;
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
      RTM_TRY(rtm_plot_parse_size(next, a->size));
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
  /* options that would be ignored are refused, as --wiggle or --slice are where they do not
   * apply (a probe: --at without --panel drew the centre, exit 0) */
  if (!a->panel && (a->at[0] >= 0 || a->at[1] >= 0 || a->at[2] >= 0))
    RTM_FAIL(RTM_ERR_USAGE, "plot: --at picks the cell of --panel's three planes: give --panel "
                            "too, or --slice a=N for one plane");
  if (a->raw && a->sized)
    RTM_FAIL(RTM_ERR_USAGE, "plot: --size does not apply with --raw, whose PNG has a pixel a "
                            "sample; leave one out");
fail:
  return status;
}

int rtm_plot_output_begin(const char *name, char *target, size_t size, int *made) {
  *made = 0;
  const int status = rtm_io_output_target(name, "plot:", target, size);
  if (status != RTM_OK) return status;
  /* the figure's format follows its file's name: a link fig.svg -> old.png drew a PNG */
  if (strcmp(rtm_io_extension(name), rtm_io_extension(target)) != 0) {
    rtm_log_error("plot: %s is a link to %s: a figure's format follows its file's extension, "
                  "and the two differ; point the link at a file of the name's extension, or "
                  "name the file itself",
                  name, target);
    return RTM_ERR_USAGE;
  }
  return rtm_io_make_parent_dir_counted(target, made);
}

void rtm_plot_output_end(const char *target, int made, int status) {
  if (status != RTM_OK) rtm_io_remove_made_dirs(target, made);
}
