#include "rtm_status.h"

#include <stdio.h>

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

static void log_line(const char *prefix, const char *fmt, va_list args) {
  fputs(prefix, stderr);
  vfprintf(stderr, fmt, args);
  fputc('\n', stderr);
}

void rtm_log_error(const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  log_line("rtm3d: error: ", fmt, args);
  va_end(args);
}

void rtm_log_warning(const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  log_line("rtm3d: warning: ", fmt, args);
  va_end(args);
}

void rtm_log_info(const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  log_line("rtm3d: ", fmt, args);
  va_end(args);
}
