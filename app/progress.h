/* progress.h - progress of a long run: on a terminal one self-updating line (step,
 * percent, ETA, MCells/s); otherwise a log line every 10% or every 30 s. A run of many
 * shots counts the steps of all of them and labels the line with the current shot. */
#ifndef RTM_PROGRESS_H
#define RTM_PROGRESS_H

#include <stdio.h>

typedef struct {
  FILE *out;
  int total_steps;
  double cells_per_step;
  double start_s;
  double last_print_s;
  int last_decile;
  int is_terminal;
  int quiet;
  char label[64]; /* printed before the step count ("shot 2/5"); empty for none */
} rtm_progress_t;

void rtm_progress_begin(rtm_progress_t *progress, int total_steps, double cells_per_step,
                        int quiet);
/* Whether rtm_progress_update(progress, steps_done) would print now: a caller whose steps
 * run ahead of the host (a GPU's queue) waits for them first, so that the rate and ETA
 * count steps done, not steps queued (the first lines of a 1500^3 run read 41 TCells/s). */
int rtm_progress_due(const rtm_progress_t *progress, int steps_done);
void rtm_progress_update(rtm_progress_t *progress, int steps_done);
/* Sets the label of the lines that follow. */
void rtm_progress_label(rtm_progress_t *progress, const char *label);
void rtm_progress_end(rtm_progress_t *progress);

#endif
