/* run/scaling.sh's CSV read into the lines of a figure (rtm_io.h, "what a figure shows"):
 * parallel efficiency against ranks, a line a run (or a mode), for rtm3d plot --scaling. */
#define _POSIX_C_SOURCE 200809L /* strtok_r */
#include "rtm_io.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rtm_status.h"

/* The header's columns: their indexes, -1 where absent (run is optional). */
typedef struct {
  int mode, run, ranks, efficiency;
} columns_t;

static int read_header(char **fields, int n, const char *path, columns_t *at) {
  int status = RTM_OK;
  *at = (columns_t){-1, -1, -1, -1};
  for (int k = 0; k < n; ++k) {
    if (strcmp(fields[k], "mode") == 0) at->mode = k;
    if (strcmp(fields[k], "run") == 0) at->run = k;
    if (strcmp(fields[k], "ranks") == 0) at->ranks = k;
    if (strcmp(fields[k], "efficiency") == 0) at->efficiency = k;
  }
  if (at->mode < 0 || at->ranks < 0 || at->efficiency < 0)
    RTM_FAIL(RTM_ERR_INPUT, "%s:1: needs the columns mode, ranks and efficiency", path);
fail:
  return status;
}

/* One row into its line, the line added at its run's (or mode's) first row. */
static int add_row(char **fields, int n, const columns_t *at, const char *path, int number,
                   rtm_scaling_t *s) {
  int status = RTM_OK;
  if (n <= at->mode || n <= at->ranks || n <= at->efficiency)
    RTM_FAIL(RTM_ERR_INPUT, "%s:%d: %d fields, too few", path, number, n);
  char *end = NULL, *end2 = NULL;
  const double ranks = strtod(fields[at->ranks], &end);
  const double efficiency = strtod(fields[at->efficiency], &end2);
  if (end == fields[at->ranks] || *end || end2 == fields[at->efficiency] || *end2)
    RTM_FAIL(RTM_ERR_INPUT, "%s:%d: ranks '%s' and efficiency '%s' must be numbers", path, number,
             fields[at->ranks], fields[at->efficiency]);
  if (!(ranks > 0.0) || !isfinite(ranks))
    RTM_FAIL(RTM_ERR_INPUT, "%s:%d: ranks '%s' must be a positive count", path, number,
             fields[at->ranks]);
  if (!isfinite(efficiency))
    RTM_FAIL(RTM_ERR_INPUT, "%s:%d: efficiency '%s' is not finite", path, number,
             fields[at->efficiency]);
  /* a line a run (run/scaling.sh names each: 512_nccl_strong), else a mode */
  const char *key = at->run >= 0 && at->run < n ? fields[at->run] : fields[at->mode];
  int m = 0;
  while (m < s->lines && strcmp(s->names[m], key) != 0)
    ++m;
  if (m == s->lines) {
    if (s->lines == RTM_SCALING_LINES) RTM_FAIL(RTM_ERR_INPUT, "%s: more than %d lines", path, m);
    snprintf(s->names[s->lines], sizeof s->names[0], "%s", key);
    s->strong[s->lines++] = strcmp(fields[at->mode], "strong") == 0;
  }
  if (s->counts[m] == RTM_SCALING_ROWS)
    RTM_FAIL(RTM_ERR_INPUT, "%s: more than %d rows a mode", path, RTM_SCALING_ROWS);
  s->x[m][s->counts[m]] = ranks;
  s->y[m][s->counts[m]++] = efficiency;
  if (ranks > s->x_max) s->x_max = ranks;
  if (efficiency * 1.05 > s->y_max) s->y_max = efficiency * 1.05;
fail:
  return status;
}

int rtm_io_read_scaling(FILE *file, const char *path, rtm_scaling_t *s) {
  int status = RTM_OK, number = 0;
  char line[1024], why[256];
  columns_t at = {-1, -1, -1, -1};
  s->x_max = 1.0;
  s->y_max = 1.1;
  for (;;) {
    /* bounded: a NUL byte or an over-long line refused naming file:line rather than cut
     * into rows that were never written */
    int got = 0;
    status = rtm_text_read_line(file, line, sizeof line, &got, why, sizeof why);
    if (status != RTM_OK) RTM_FAIL(status, "%s:%d: %s", path, number + 1, why);
    if (!got) break;
    ++number;
    char *fields[32], *save = NULL;
    int n = 0;
    for (char *cell = strtok_r(line, ",", &save); cell && n < 32; cell = strtok_r(NULL, ",", &save))
      fields[n++] = cell;
    if (number == 1)
      RTM_TRY(read_header(fields, n, path, &at));
    else
      RTM_TRY(add_row(fields, n, &at, path, number, s));
  }
  if (s->lines == 0) RTM_FAIL(RTM_ERR_INPUT, "%s: no rows", path);
fail:
  return status;
}
