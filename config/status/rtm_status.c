#define _POSIX_C_SOURCE 200809L /* clock_gettime, sigaction */
#include "rtm_status.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static volatile sig_atomic_t interrupt_signal = 0;

static void on_interrupt(int signal_number) {
  interrupt_signal = signal_number;
  /* the next SIGINT or SIGTERM, whichever, ends the process */
  struct sigaction fallback;
  memset(&fallback, 0, sizeof fallback);
  fallback.sa_handler = SIG_DFL;
  sigemptyset(&fallback.sa_mask);
  sigaction(SIGINT, &fallback, NULL);
  sigaction(SIGTERM, &fallback, NULL);
}

void rtm_interrupt_install(void) {
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = on_interrupt;
  action.sa_flags = 0; /* the handler puts both back to the default */
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, NULL);
  sigaction(SIGTERM, &action, NULL);
}

int rtm_interrupted(void) {
  return (int)interrupt_signal;
}

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
  case RTM_ERR_INTERRUPTED: return 128 + (interrupt_signal ? (int)interrupt_signal : SIGINT);
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
  case RTM_ERR_INTERRUPTED: return "interrupted";
  default: return "internal error";
  }
}

/* Under MPI (rtm_log_set_rank): the rank and the rank count; size 1 prints as before. */
static int log_rank = 0, log_size = 1;
static int log_quiet = 0; /* --quiet: errors alone */

void rtm_log_set_quiet(int quiet) {
  log_quiet = quiet;
}

void rtm_log_set_rank(int rank, int size) {
  log_rank = rank;
  log_size = size > 0 ? size : 1;
}

/* Control bytes other than newline and tab (a deck of binary garbage echoed in a message)
 * as \xNN, in place into `out` of `size` bytes. */
static void escape_controls(const char *in, char *out, size_t size) {
  size_t o = 0;
  for (const unsigned char *c = (const unsigned char *)in; *c && o + 5 < size; ++c) {
    if ((*c < 0x20 && *c != '\n' && *c != '\t') || *c == 0x7f)
      o += (size_t)snprintf(out + o, size - o, "\\x%02x", *c);
    else
      out[o++] = (char)*c;
  }
  out[o] = '\0';
}

/* name_rank: errors, which come from every rank, say which. */
static void log_line(const char *prefix, int name_rank, const char *fmt, va_list args) {
  char raw[4096], line[4096];
  vsnprintf(raw, sizeof raw, fmt, args);
  escape_controls(raw, line, sizeof line);
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
  if (log_rank != 0 || log_quiet) return;
  va_list args;
  va_start(args, fmt);
  log_line("rtm3d: warning: ", 0, fmt, args);
  va_end(args);
}

void rtm_log_info(const char *fmt, ...) {
  if (log_rank != 0 || log_quiet) return;
  va_list args;
  va_start(args, fmt);
  log_line("rtm3d: ", 0, fmt, args);
  va_end(args);
}

void rtm_log_info_any_rank(const char *fmt, ...) {
  if (log_quiet) return;
  va_list args;
  va_start(args, fmt);
  log_line("rtm3d: ", 1, fmt, args);
  va_end(args);
}
