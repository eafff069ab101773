/* progress.c - the progress line of a long run (progress.h): self-updating on a terminal,
 * a log line every 10% or 30 s otherwise. */
#define _POSIX_C_SOURCE 200809L
#include "progress.h"

#include <unistd.h>

#include "rtm_status.h"

void rtm_progress_begin(rtm_progress_t *progress, int total_steps, double cells_per_step,
                        int quiet) {
  progress->out = stderr;
  progress->total_steps = total_steps;
  progress->cells_per_step = cells_per_step;
  progress->start_s = rtm_wall_seconds();
  progress->last_print_s = progress->start_s;
  progress->last_decile = 0;
  progress->is_terminal = isatty(fileno(stderr));
  progress->quiet = quiet;
  progress->label[0] = '\0';
}

void rtm_progress_label(rtm_progress_t *progress, const char *label) {
  snprintf(progress->label, sizeof progress->label, "%s", label);
}

static void format_duration(double seconds, char *text, size_t size) {
  long s = (long)(seconds + 0.5);
  if (s >= 3600)
    snprintf(text, size, "%ld:%02ld:%02ld", s / 3600, (s / 60) % 60, s % 60);
  else
    snprintf(text, size, "%02ld:%02ld", s / 60, s % 60);
}

int rtm_progress_due(const rtm_progress_t *progress, int steps_done) {
  if (progress->quiet || progress->total_steps <= 0) return 0;
  const double now = rtm_wall_seconds();
  const int decile = (int)(10L * steps_done / progress->total_steps);
  if (steps_done >= progress->total_steps) return 1;
  if (progress->is_terminal) return now - progress->last_print_s >= 0.2;
  return decile != progress->last_decile || now - progress->last_print_s >= 30.0;
}

void rtm_progress_update(rtm_progress_t *progress, int steps_done) {
  if (!rtm_progress_due(progress, steps_done)) return;
  double now = rtm_wall_seconds(), elapsed = now - progress->start_s;
  int decile = (int)(10L * steps_done / progress->total_steps);
  progress->last_print_s = now;
  progress->last_decile = decile;
  double rate = elapsed > 0.0 ? steps_done / elapsed : 0.0;
  char eta[32];
  format_duration(rate > 0.0 ? (progress->total_steps - steps_done) / rate : 0.0, eta, sizeof eta);
  double mcells = rate * progress->cells_per_step * 1e-6;
  fprintf(progress->out, "%s%s%sstep %d/%d  %3d%%  ETA %s  %.1f MCells/s%s",
          progress->is_terminal ? "\r" : "rtm3d: ", progress->label, progress->label[0] ? ": " : "",
          steps_done, progress->total_steps, (int)(100L * steps_done / progress->total_steps), eta,
          mcells, progress->is_terminal ? "   " : "\n");
  fflush(progress->out);
}

void rtm_progress_end(rtm_progress_t *progress) {
  if (!progress->quiet && progress->is_terminal) fputc('\n', progress->out);
}
