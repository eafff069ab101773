/* rtm_status.h - status codes, checking macros and log output shared by every module.
 *
 * Every function that can fail returns an int status (RTM_OK on success). Libraries
 * report what went wrong through rtm_log_error() at the place it happened and return a
 * code; they never exit. The application maps codes to exit statuses with
 * rtm_status_exit_code(): usage and configuration errors exit 2, everything else 1. */
#ifndef RTM_STATUS_H
#define RTM_STATUS_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
  RTM_OK = 0,
  RTM_ERR_USAGE = 1,       /* bad command line */
  RTM_ERR_CONFIG = 2,      /* bad config deck or value: exit 2 */
  RTM_ERR_INPUT = 3,       /* bad input file (model, receiver list): exit 2 */
  RTM_ERR_IO = 4,          /* file system or HDF5 failure at run time */
  RTM_ERR_NOMEM = 5,       /* an allocation failed or would not fit */
  RTM_ERR_DEVICE = 6,      /* CUDA, driver, cuFFT or CUB failure */
  RTM_ERR_UNSUPPORTED = 7, /* a feature the build or the device does not have */
  RTM_ERR_MPI = 8,         /* an MPI call failed */
  RTM_ERR_NUMERIC = 9,     /* instability, NaN, a check that failed */
  RTM_ERR_INTERNAL = 10,   /* a broken invariant: a bug */
  RTM_ERR_INTERRUPTED = 11 /* SIGINT, SIGTERM or SIGHUP stopped the run between two steps */
};

/* Process exit status for a status code: 0, 2 (usage, config, input), 128 + the signal for
 * RTM_ERR_INTERRUPTED (130 SIGINT, 143 SIGTERM, 129 SIGHUP), or 1. */
int rtm_status_exit_code(int status);
const char *rtm_status_name(int status);

/* Log lines go to stderr with a fixed prefix ("rtm3d: error: ", "rtm3d: warning: ",
 * "rtm3d: "). Under MPI with more than one rank (rtm_log_set_rank, called once at start),
 * errors come from every rank and name it ("[rank 2 of 4]"); warnings and information come
 * from rank 0 alone, which says what every rank would. */
void rtm_log_set_rank(int rank, int size);
/* --quiet: from now on warnings and info lines are dropped; errors still print. */
void rtm_log_set_quiet(int quiet);
/* A warning is printed once a run: rtm_log_warning drops a line it has already printed
 * (the same text; one that differs in a value is another warning). rtm_log_forget_warnings
 * starts afresh (a test that expects a warning again). */
void rtm_log_forget_warnings(void);
/* The run's distinct warnings so far (kept under --quiet too): up to `size` of them into
 * lines (valid until the next warning); returns how many there were in all. */
int rtm_log_warnings_kept(const char **lines, int size);

/* SIGINT, SIGTERM and SIGHUP (and the batch systems' warnings SIGUSR1, SIGUSR2, SIGXCPU),
 * once rtm_interrupt_install has run (model, migrate, accuracy, bench under mpirun), set a
 * flag instead of ending the process (a SIGHUP the process was started ignoring, as under
 * nohup, stays ignored): a propagation stops before its next step (rtm_propagator_step
 * returns RTM_ERR_INTERRUPTED) and the command cleans up as after any failure (no output
 * file left; exit 128 + the signal). A second signal ends the process at once. SIGPIPE is
 * ignored from then on in those commands (a closed pipe on the terminal's side is a failed
 * print). rtm_interrupted: the signal, 0 none; rtm_interrupt_name: its name ("SIGINT" if
 * none). */
void rtm_interrupt_install(void);
/* SIGXFSZ ignored (every command, from main; rtm_interrupt_install too): a write past
 * `ulimit -f` fails with EFBIG into the writer's checks, which remove its partial file,
 * instead of the process dying of the signal with it left (exit 153). */
void rtm_ignore_file_size_signal(void);
int rtm_interrupted(void);
const char *rtm_interrupt_name(void);
void rtm_log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void rtm_log_warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void rtm_log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* An info line from whichever rank calls it (a shot group's own lines), its rank named. */
void rtm_log_info_any_rank(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The length in bytes of the well-formed UTF-8 character that text starts with (RFC 3629:
 * no overlong forms, no surrogates, nothing above U+10FFFF), 1 for ASCII, 0 when text
 * starts none (a stray or cut byte). text ends in a NUL, which stops the test before any
 * byte beyond it is read. */
size_t rtm_utf8_length(const char *text);

/* Text from a file or a user made safe for a terminal, into out[size] (always ended by a
 * NUL): control bytes (C0 but tab, DEL), C1 controls (0x80-0x9f, raw or as
 * UTF-8 U+0080-U+009F) and bytes that are not part of well-formed UTF-8 are written \xNN;
 * valid UTF-8 text passes unchanged. What does not fit is left off at a character or
 * escape boundary. Every rtm_log_* line goes through it. */
void rtm_escape_text(const char *in, char *out, size_t size);

/* Text files a user names (a deck, a list of points), read with bounds: never a wait on a
 * FIFO, never an endless read of a device, never a line cut in two.
 * rtm_text_open: opens path for reading if it is a regular file and stores its size in
 * *bytes (unless NULL), for the caller's cap; otherwise (a directory, a FIFO, /dev/zero,
 * a missing file) returns RTM_ERR_INPUT with the reason in why ("a directory, not a text
 * file"). */
int rtm_text_open(const char *path, FILE **file, long long *bytes, char *why, size_t why_size);
/* Reads the next line into line[size], without its "\n" or "\r\n"; *got = 0 at the end of
 * the file. A line of size bytes or more or a NUL byte (binary data, UTF-16) returns
 * RTM_ERR_INPUT, a read error RTM_ERR_IO, the reason in why (a NUL's column given); the
 * caller names file:line and stops reading. */
int rtm_text_read_line(FILE *file, char *line, size_t size, int *got, char *why, size_t why_size);

/* strtod for the numbers people write (decks, points files, model descriptions, options):
 * decimal only. strtod also reads C's hexadecimal forms ("0x10" is 16, "0x1p3" is 8), which
 * no one means in a deck: there nothing is read (*end = text), and the caller says the value
 * is not a number. */
double rtm_text_number(const char *text, char **end);

/* Seconds on a monotonic clock, for the phases' timings. */
double rtm_wall_seconds(void);

/* fdatasync(fd) for a name about to promise the file complete (a rename): 0 when its data is
 * on the disk or the file system keeps no such promise (EINVAL, EROFS, ENOTSUP: a special
 * file system's, nothing to wait for), else the errno (EIO, ENOSPC, EDQUOT ...). */
int rtm_sync_data(int fd);

/* Runs expr; on a non-zero status stores it in `status` and jumps to `fail`. */
#define RTM_TRY(expr)                                                                              \
  do {                                                                                             \
    status = (expr);                                                                               \
    if (status != RTM_OK) goto fail;                                                               \
  } while (0)

/* Logs a formatted error, stores code in `status` and jumps to `fail`. */
#define RTM_FAIL(code, ...)                                                                        \
  do {                                                                                             \
    rtm_log_error(__VA_ARGS__);                                                                    \
    status = (code);                                                                               \
    goto fail;                                                                                     \
  } while (0)

#ifdef __cplusplus
}
#endif

#endif
