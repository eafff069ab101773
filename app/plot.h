/* plot.h - what rtm3d plot's files share (cmd_plot.c, cmd_plot_scaling.c, plot_options.c):
 * the options as read from the command line, and the --scaling figure's driver. */
#ifndef RTM_APP_PLOT_H
#define RTM_APP_PLOT_H

#include <stdio.h>

typedef struct {
  const char *file;
  char dataset[512];
  long index;          /* -1: default */
  char axis;           /* 0: default */
  long plane;          /* --slice a=N: a cell index */
  int plane_in_metres; /* --slice a=Xm: plane_m, metres along the axis, instead */
  double plane_m;
  double clip_percentile;
  int clipped; /* --clip given (a model's colours are its range otherwise) */
  const char *out;
  int raw, wiggle, panel;
  char gain[8]; /* none | t2 | agc */
  long at[3];   /* --at X,Y,Z; -1: the centre */
  int size[2];  /* figure pixels */
  int sized;    /* --size given */
} plot_args_t;

/* The usage text of rtm3d plot. */
void rtm_plot_usage(FILE *out);
/* argv into *a, the defaults first; *help 1 for --help (nothing else read). A status. */
int rtm_plot_parse_args(int argc, char **argv, plot_args_t *a, int *help);
/* --size WxH: the figure's pixels, 200x150 to 8000x8000. */
int rtm_plot_parse_size(const char *text, int size[2]);
/* `rtm3d plot --scaling FILE.csv [-o OUT] [--size WxH]` (cmd_plot_scaling.c): run/scaling.sh's
 * CSV as a figure of parallel efficiency against ranks; an exit status. */
int rtm_cmd_plot_scaling(int argc, char **argv);
/* `rtm3d plot FILE /gathers/offset` or `/gathers/angle` (cmd_plot_gathers.c): a migration's
 * common-image gathers, a panel a CIP; the options already read and the output checked. A
 * status. */
int rtm_plot_gathers(const plot_args_t *a);
/* NAME, the figure's name (-o, else the default beside the input), as plot writes it: into
 * `target` the file a link there leads to (rtm_io_output_target: the file replaced, the link
 * kept), the folders leading to it made and counted in *made. A status. */
int rtm_plot_output_begin(const char *name, char *target, size_t size, int *made);
/* After the figure at `target`: where it failed (status not RTM_OK), the folders
 * rtm_plot_output_begin made are removed again (those left empty). */
void rtm_plot_output_end(const char *target, int made, int status);

#endif
