#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "rtm_status.h"

#include <stdio.h>
#include <time.h>

double rtm_wall_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int rtm_status_exit_code(int status) {
  switch (status) {
  case RTM_OK: return 0;
  case RTM_ERR_USAGE:
  case RTM_ERR_CONFIG:
  case RTM_ERR_INPUT: return 2;
  default: return 1;
  }
}

const char *rtm_status_name(int status) {
  switch (status) {
  case RTM_OK: return "ok";
  case RTM_ERR_USAGE: return "usage error";
  case RTM_ERR_CONFIG: return "configuration error";
  case RTM_ERR_INPUT: return "input error";
  case RTM_ERR_IO: return "I/O error";
  case RTM_ERR_NOMEM: return "out of memory";
  case RTM_ERR_DEVICE: return "device error";
  case RTM_ERR_UNSUPPORTED: return "unsupported";
  case RTM_ERR_MPI: return "MPI error";
  case RTM_ERR_NUMERIC: return "numerical error";
  default: return "internal error";
  }
}

/* Under MPI (rtm_log_set_rank): the rank and the rank count; size 1 prints as before. */
static int log_rank = 0, log_size = 1;

void rtm_log_set_rank(int rank, int size) {
  log_rank = rank;
  log_size = size > 0 ? size : 1;
}

/* name_rank: errors, which come from every rank, say which. */
static void log_line(const char *prefix, int name_rank, const char *fmt, va_list args) {
  char line[4096];
  vsnprintf(line, sizeof line, fmt, args);
  if (name_rank && log_size > 1)
    fprintf(stderr, "%s[rank %d of %d] %s\n", prefix, log_rank, log_size, line);
  else
    fprintf(stderr, "%s%s\n", prefix, line); /* one write: lines of ranks do not interleave */
}

void rtm_log_error(const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  log_line("rtm3d: error: ", 1, fmt, args);
  va_end(args);
}

void rtm_log_warning(const char *fmt, ...) {
  if (log_rank != 0) return;
  va_list args;
  va_start(args, fmt);
  log_line("rtm3d: warning: ", 0, fmt, args);
  va_end(args);
}

void rtm_log_info(const char *fmt, ...) {
  if (log_rank != 0) return;
  va_list args;
  va_start(args, fmt);
  log_line("rtm3d: ", 0, fmt, args);
  va_end(args);
}

void rtm_log_info_any_rank(const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  log_line("rtm3d: ", 1, fmt, args);
  va_end(args);
}
