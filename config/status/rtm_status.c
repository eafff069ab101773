/* rtm_status.c - status codes as words and exit statuses, the log (errors, warnings, notes,
 * the rank prefix), SIGINT/SIGTERM/SIGHUP caught so that a run stops cleanly, the wall clock, and
 * text files opened and read line by line with their faults named (rtm_status.h). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, sigaction, fdopen, O_CLOEXEC */
#include "rtm_status.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t interrupt_signal = 0;

/* The signals that stop a run cleanly: an interrupt, a kill's default, the hang-up of a
 * closed terminal or ssh session, and the warnings batch systems send before they kill a job
 * (SIGUSR1, SIGUSR2, and SIGXCPU at the soft CPU-time limit): each ends the run as SIGTERM
 * does, saving what a migration has finished. */
static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGXCPU};

/* The first stop's signal comes again within this long: the same request, not a second one.
 * GNU timeout sends its signal to the process and then to the process group, and batch
 * systems may signal a job's processes and its group alike; a person's second Ctrl-C comes
 * later. */
static const double REPEAT_S = 1.0;
static double first_stop_s; /* when the first stop came (the handler's alone) */

static void on_interrupt(int signal_number) {
  const double now_s = rtm_wall_seconds(); /* clock_gettime: async-signal-safe, as sigaction */
  if (!interrupt_signal) {
    first_stop_s = now_s;
    interrupt_signal = signal_number;
    return;
  }
  if (signal_number == interrupt_signal && now_s - first_stop_s < REPEAT_S) return;
  /* a second stop, whichever: it ends the process at once, as the signal's default does */
  struct sigaction fallback;
  memset(&fallback, 0, sizeof fallback);
  fallback.sa_handler = SIG_DFL;
  sigemptyset(&fallback.sa_mask);
  sigaction(signal_number, &fallback, NULL);
  raise(signal_number); /* delivered as the handler returns */
}

void rtm_interrupt_install(void) {
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = on_interrupt;
  action.sa_flags = 0; /* kept: the handler tells a second stop from the first's repeat */
  /* one at a time, in the order they come: a stop's handler is not entered within another's */
  sigemptyset(&action.sa_mask);
  for (size_t k = 0; k < sizeof stop_signals / sizeof stop_signals[0]; ++k)
    sigaddset(&action.sa_mask, stop_signals[k]);
  for (size_t k = 0; k < sizeof stop_signals / sizeof stop_signals[0]; ++k) {
    /* nohup's ignored SIGHUP stays ignored (a SIGINT ignored by a script's background job
     * is not: a run there is stopped by kill -INT as in the foreground) */
    struct sigaction before;
    if (stop_signals[k] == SIGHUP && sigaction(SIGHUP, NULL, &before) == 0 &&
        before.sa_handler == SIG_IGN)
      continue;
    sigaction(stop_signals[k], &action, NULL);
  }
  /* a closed pipe on stdout or stderr (rtm3d ... | head) is a failed print, not the end of
   * the run: the outputs are files */
  struct sigaction ignore;
  memset(&ignore, 0, sizeof ignore);
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  sigaction(SIGPIPE, &ignore, NULL);
  rtm_ignore_file_size_signal();
}

void rtm_ignore_file_size_signal(void) {
  /* a file past the size limit (ulimit -f) is a failed write (EFBIG), said and cleaned up
   * after like a full disk, rather than the process killed with its partial files left */
  struct sigaction ignore;
  memset(&ignore, 0, sizeof ignore);
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  sigaction(SIGXFSZ, &ignore, NULL);
}

int rtm_interrupted(void) {
  return (int)interrupt_signal;
}

const char *rtm_interrupt_name(void) {
  switch (interrupt_signal) {
  case SIGTERM: return "SIGTERM";
  case SIGHUP: return "SIGHUP";
  case SIGUSR1: return "SIGUSR1";
  case SIGUSR2: return "SIGUSR2";
  case SIGXCPU: return "SIGXCPU (the CPU-time limit, ulimit -t)";
  default: return "SIGINT";
  }
}

double rtm_wall_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int rtm_sync_data(int fd) {
  if (fdatasync(fd) == 0) return 0;
  return errno == EINVAL || errno == EROFS || errno == ENOTSUP ? 0 : errno;
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

size_t rtm_utf8_length(const char *text) {
  const unsigned char *c = (const unsigned char *)text;
#define CONTINUATION(b) ((b) >= 0x80 && (b) <= 0xbf)
  if (c[0] < 0x80) return 1;
  if (c[0] >= 0xc2 && c[0] <= 0xdf) return CONTINUATION(c[1]) ? 2 : 0;
  if (c[0] >= 0xe0 && c[0] <= 0xef) {
    unsigned char low = c[0] == 0xe0 ? 0xa0 : 0x80, high = c[0] == 0xed ? 0x9f : 0xbf;
    return c[1] >= low && c[1] <= high && CONTINUATION(c[2]) ? 3 : 0;
  }
  if (c[0] >= 0xf0 && c[0] <= 0xf4) {
    unsigned char low = c[0] == 0xf0 ? 0x90 : 0x80, high = c[0] == 0xf4 ? 0x8f : 0xbf;
    return c[1] >= low && c[1] <= high && CONTINUATION(c[2]) && CONTINUATION(c[3]) ? 4 : 0;
  }
  return 0;
#undef CONTINUATION
}

/* A byte or a character a terminal could act on: C0 controls but newline and tab, DEL,
 * and C1 controls, which a UTF-8 terminal reads from U+0080-U+009F (c2 80 - c2 9f). */
static int is_control(const unsigned char *c, size_t length) {
  /* a newline too: text from a user or a file must not start a line of its own (a forged
   * "rtm3d: error:"); a tab cannot */
  if (length == 1) return (c[0] < 0x20 && c[0] != '\t') || c[0] == 0x7f;
  return length == 2 && c[0] == 0xc2 && c[1] <= 0x9f;
}

void rtm_escape_text(const char *in, char *out, size_t size) {
  size_t o = 0;
  if (size == 0) return;
  for (const unsigned char *c = (const unsigned char *)in; *c;) {
    size_t length = rtm_utf8_length((const char *)c);
    if (length == 0 || is_control(c, length)) {
      size_t count = length ? length : 1; /* a malformed sequence: its first byte alone */
      if (o + 4 * count >= size) break;
      for (size_t i = 0; i < count; ++i)
        o += (size_t)snprintf(out + o, size - o, "\\x%02x", c[i]);
      c += count;
    } else {
      if (o + length >= size) break;
      memcpy(out + o, c, length);
      o += length;
      c += length;
    }
  }
  out[o] = '\0';
}

/* The warnings printed so far, by a 64-bit FNV-1a hash of their text: a warning is said once
 * a run however many times its cause is met (a check each propagator makes, each plan of a
 * bench), while warnings that differ in a value are distinct texts and each printed. Full,
 * the table remembers no more and later warnings print every time: none is ever hidden.
 * The log's own state, like the rank: a process has one stderr. A flag guards it against a
 * warning from a thread (the I/O thread, an OpenMP region). */
enum { WARNINGS_REMEMBERED = 256 };
static uint64_t warnings_said[WARNINGS_REMEMBERED];
static int warnings_said_count = 0;
static atomic_flag warnings_lock = ATOMIC_FLAG_INIT;

static uint64_t text_hash(const char *text) {
  uint64_t hash = 14695981039346656037ULL;
  for (const unsigned char *c = (const unsigned char *)text; *c; ++c)
    hash = (hash ^ *c) * 1099511628211ULL;
  return hash;
}

/* 1 the first time `line` is met (it is then remembered), 0 after. */
static int first_time(const char *line) {
  const uint64_t hash = text_hash(line);
  int first = 1;
  while (atomic_flag_test_and_set_explicit(&warnings_lock, memory_order_acquire)) {
  }
  for (int i = 0; i < warnings_said_count && first; ++i)
    first = warnings_said[i] != hash;
  if (first && warnings_said_count < WARNINGS_REMEMBERED)
    warnings_said[warnings_said_count++] = hash;
  atomic_flag_clear_explicit(&warnings_lock, memory_order_release);
  return first;
}

/* The run's warnings as printed (or as they would be under --quiet), the first
 * WARNINGS_KEPT of them, for the run report. */
enum { WARNINGS_KEPT = 16, WARNING_KEPT_CHARS = 512 };
static char warnings_kept[WARNINGS_KEPT][WARNING_KEPT_CHARS];
static int warnings_kept_count, warnings_total;

static void keep_warning(const char *line) {
  while (atomic_flag_test_and_set_explicit(&warnings_lock, memory_order_acquire)) {
  }
  if (warnings_kept_count < WARNINGS_KEPT) { /* cut, if long, at a character's start */
    size_t length = strlen(line);
    if (length >= WARNING_KEPT_CHARS) {
      length = WARNING_KEPT_CHARS - 1;
      while (length > 0 && ((unsigned char)line[length] & 0xC0) == 0x80)
        --length;
    }
    memcpy(warnings_kept[warnings_kept_count], line, length);
    warnings_kept[warnings_kept_count++][length] = '\0';
  }
  ++warnings_total;
  atomic_flag_clear_explicit(&warnings_lock, memory_order_release);
}

int rtm_log_warnings_kept(const char **lines, int size) {
  while (atomic_flag_test_and_set_explicit(&warnings_lock, memory_order_acquire)) {
  }
  const int count = warnings_kept_count < size ? warnings_kept_count : size;
  for (int i = 0; i < count; ++i)
    lines[i] = warnings_kept[i];
  const int total = warnings_total;
  atomic_flag_clear_explicit(&warnings_lock, memory_order_release);
  return total;
}

void rtm_log_forget_warnings(void) {
  while (atomic_flag_test_and_set_explicit(&warnings_lock, memory_order_acquire)) {
  }
  warnings_said_count = 0;
  warnings_kept_count = warnings_total = 0;
  atomic_flag_clear_explicit(&warnings_lock, memory_order_release);
}

/* name_rank: errors, which come from every rank, say which. */
static void log_line(const char *prefix, int name_rank, const char *fmt, va_list args) {
  char raw[4096], line[4096];
  vsnprintf(raw, sizeof raw, fmt, args);
  rtm_escape_text(raw, line, sizeof line);
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

/* Kept for the run report under --quiet too; printed once, unless quiet. */
void rtm_log_warning(const char *fmt, ...) {
  if (log_rank != 0) return;
  char raw[4096], line[4096];
  va_list args;
  va_start(args, fmt);
  vsnprintf(raw, sizeof raw, fmt, args);
  va_end(args);
  rtm_escape_text(raw, line, sizeof line);
  if (!first_time(line)) return;
  keep_warning(line);
  if (!log_quiet) fprintf(stderr, "rtm3d: warning: %s\n", line);
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

/* ---- text files ---- */

static const char *file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (a pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "a special file";
}

int rtm_text_open(const char *path, FILE **file, long long *bytes, char *why, size_t why_size) {
  struct stat info;
  *file = NULL;
  /* O_NONBLOCK: opening a FIFO no one writes to returns at once instead of waiting */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    snprintf(why, why_size, "%s", strerror(errno));
    return RTM_ERR_INPUT;
  }
  if (fstat(fd, &info) != 0) {
    snprintf(why, why_size, "%s", strerror(errno));
    close(fd);
    return RTM_ERR_INPUT;
  }
  if (!S_ISREG(info.st_mode)) {
    snprintf(why, why_size, "%s, not a text file", file_kind(info.st_mode));
    close(fd);
    return RTM_ERR_INPUT;
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  *file = fdopen(fd, "r");
  if (!*file) {
    snprintf(why, why_size, "%s", strerror(errno));
    close(fd);
    return RTM_ERR_INPUT;
  }
  if (bytes) *bytes = (long long)info.st_size;
  return RTM_OK;
}

int rtm_text_read_line(FILE *file, char *line, size_t size, int *got, char *why, size_t why_size) {
  size_t length = 0;
  int c;
  *got = 0;
  while ((c = getc(file)) != EOF && c != '\n') {
    if (c == '\0') {
      snprintf(why, why_size, "a NUL byte at column %zu: binary data (or UTF-16), not text",
               length + 1);
      return RTM_ERR_INPUT;
    }
    if (length + 1 >= size) {
      int next = c == '\r' ? getc(file) : 'x'; /* "\r\n" ending a line that just fits */
      if (next == '\n' || next == EOF) break;
      snprintf(why, why_size, "a line longer than %zu bytes", size - 1);
      return RTM_ERR_INPUT;
    }
    line[length++] = (char)c;
  }
  if (ferror(file)) {
    snprintf(why, why_size, "%s", strerror(errno ? errno : EIO));
    return RTM_ERR_IO;
  }
  if (c == EOF && length == 0) return RTM_OK;
  if (length > 0 && line[length - 1] == '\r') --length;
  line[length] = '\0';
  *got = 1;
  return RTM_OK;
}

double rtm_text_number(const char *text, char **end) {
  const char *at = text;
  while (isspace((unsigned char)*at))
    ++at;
  if (*at == '+' || *at == '-') ++at;
  if (at[0] == '0' && (at[1] == 'x' || at[1] == 'X')) {
    *end = (char *)text;
    return 0.0;
  }
  return strtod(text, end);
}
