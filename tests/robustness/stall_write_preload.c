/* stall_write_preload.c - an LD_PRELOAD library for the robustness suite that holds a
 * chosen write for ever, so that a test can SIGKILL a run in the middle of writing a file
 * (one of the versions of a file a run writes again and again), at a point it chose
 * rather than at a moment a race picks:
 *   RTM3D_TEST_STALL_WRITE         comma-separated strings (".resume.h5"): a file whose path
 *                                  holds one, opened for writing, is watched
 *   RTM3D_TEST_STALL_VERSION       K: the writes held are those to watched files after the
 *                                  K-th was created, before the next (default 1)
 *   RTM3D_TEST_STALL_AFTER_WRITES  N of those writes go through, the next is held (default 0)
 *   RTM3D_TEST_STALL_MARKER        created, holding the pid, when the write is held: the
 *                                  test waits for it, then kills
 *   RTM3D_TEST_STALL_PIDS          a folder where every process that loads the library
 *                                  leaves an empty file named by its pid (the ranks under
 *                                  mpirun, to kill)
 *   RTM3D_TEST_STALL_OPEN          comma-separated strings: the first open of a file whose
 *                                  path holds one is held, once it has opened (a point in a
 *                                  run where a test sends a signal; open and openat, not
 *                                  stdio's fopen)
 *   RTM3D_TEST_STALL_RELEASE       a path: a held write or open goes on once it exists (the
 *                                  test sent its signal) rather than waiting to be killed
 * A file is created by an open with O_TRUNC or O_EXCL: an MPI-IO library opens files of its
 * own named after the file (locks, shared memory) with O_CREAT alone, and reopens the file
 * (or opens it on the ranks that did not create it) without either, so that a rank that
 * never creates the file holds none of its writes (K >= 1).
 * Writes are write, pwrite, pwrite64, writev, pwritev (HDF5's sec2 driver calls pwrite, an
 * MPI-IO driver pwrite or pwritev); a held write sleeps until the process is killed, or
 * exits with 125 after RTM3D_TEST_STALL_SECONDS (default 300) so that nothing outlives a
 * test that died. Files written through stdio (fopen) are not watched. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "preload_impl.h"

enum { MAX_FD = 65536 };

typedef int (*open_t)(const char *, int, ...);
typedef int (*openat_t)(int, const char *, int, ...);

static atomic_bool watched[MAX_FD]; /* per descriptor */
static atomic_long versions;        /* watched files created so far */
static atomic_long version_writes;  /* to watched files while versions is as asked */

static long env_number(const char *name, long fallback) {
  const char *text = getenv(name);
  return text && *text ? strtol(text, NULL, 10) : fallback;
}

__attribute__((constructor)) static void leave_pid(void) {
  const char *folder = getenv("RTM3D_TEST_STALL_PIDS");
  char path[4096];
  if (!folder || snprintf(path, sizeof path, "%s/%d", folder, (int)getpid()) >= (int)sizeof path)
    return;
  const int fd = ((open_t)dlsym(RTLD_NEXT, "open"))(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) close(fd);
}

static void maybe_hold_open(const char *path);

/* After a successful open: a watched path opened for writing is watched, and counted
 * when the open creates it anew. */
static int opened(int fd, const char *path, int flags) {
  if (fd < 0 || fd >= MAX_FD) return fd;
  maybe_hold_open(path);
  const int watch =
      (flags & O_ACCMODE) != O_RDONLY && preload_listed("RTM3D_TEST_STALL_WRITE", path);
  if (watch && (flags & (O_TRUNC | O_EXCL))) atomic_fetch_add(&versions, 1);
  atomic_store(&watched[fd], watch);
  return fd;
}

/* The marker, written aside and renamed so that a test never reads it half-written. */
static void write_marker(void) {
  const char *marker = getenv("RTM3D_TEST_STALL_MARKER");
  char aside[4096], pid[32];
  if (!marker || snprintf(aside, sizeof aside, "%s.%d", marker, (int)getpid()) >= (int)sizeof aside)
    return;
  const int fd = ((open_t)dlsym(RTLD_NEXT, "open"))(aside, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return;
  const int length = snprintf(pid, sizeof pid, "%d\n", (int)getpid());
  ssize_t (*real_write)(int, const void *, size_t) = dlsym(RTLD_NEXT, "write");
  const int whole = real_write(fd, pid, (size_t)length) == length;
  close(fd);
  if (whole) rename(aside, marker);
}

/* The marker written, then held until the release file exists or, without one, for ever:
 * until killed, or RTM3D_TEST_STALL_SECONDS have passed (exit 125). */
static void hold(void) {
  write_marker();
  const char *release = getenv("RTM3D_TEST_STALL_RELEASE");
  const long seconds = env_number("RTM3D_TEST_STALL_SECONDS", 300);
  const struct timespec tick = {0, 10 * 1000 * 1000};
  for (long ticks = 0; ticks < seconds * 100; ++ticks) {
    if (release && *release && access(release, F_OK) == 0) return;
    nanosleep(&tick, NULL); /* a signal's handler runs meanwhile */
  }
  fprintf(stderr, "stall_write_preload: held %ld s and never %s\n", seconds,
          release ? "released" : "killed");
  _exit(125);
}

/* Before a write to fd: the held one does not return until released. */
static void maybe_hold(int fd) {
  if (fd < 0 || fd >= MAX_FD || !atomic_load(&watched[fd])) return;
  if (atomic_load(&versions) != env_number("RTM3D_TEST_STALL_VERSION", 1)) return;
  if (atomic_fetch_add(&version_writes, 1) != env_number("RTM3D_TEST_STALL_AFTER_WRITES", 0))
    return;
  hold();
}

/* After an open: the first of a path RTM3D_TEST_STALL_OPEN lists is held. */
static atomic_bool open_held;
static void maybe_hold_open(const char *path) {
  if (!preload_listed("RTM3D_TEST_STALL_OPEN", path) || atomic_exchange(&open_held, 1)) return;
  hold();
}

/* ---- opening: the mode is passed on when the flags need one ---- */

static int needs_mode(int flags) {
  return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE;
}

static int open_as(const char *name, const char *path, int flags, mode_t mode) {
  return opened(((open_t)dlsym(RTLD_NEXT, name))(path, flags, mode), path, flags);
}

static int openat_as(const char *name, int dir, const char *path, int flags, mode_t mode) {
  return opened(((openat_t)dlsym(RTLD_NEXT, name))(dir, path, flags, mode), path, flags);
}

#define MODE_ARGUMENT(flags, mode)                                                                 \
  mode_t mode = 0;                                                                                 \
  if (needs_mode(flags)) {                                                                         \
    va_list arguments;                                                                             \
    va_start(arguments, flags);                                                                    \
    mode = (mode_t)va_arg(arguments, int);                                                         \
    va_end(arguments);                                                                             \
  }

int open(const char *path, int flags, ...) {
  MODE_ARGUMENT(flags, mode)
  return open_as("open", path, flags, mode);
}

int open64(const char *path, int flags, ...) {
  MODE_ARGUMENT(flags, mode)
  return open_as("open64", path, flags, mode);
}

int openat(int dir, const char *path, int flags, ...) {
  MODE_ARGUMENT(flags, mode)
  return openat_as("openat", dir, path, flags, mode);
}

int openat64(int dir, const char *path, int flags, ...) {
  MODE_ARGUMENT(flags, mode)
  return openat_as("openat64", dir, path, flags, mode);
}

int creat(const char *path, mode_t mode) {
  return open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
}

int creat64(const char *path, mode_t mode) {
  return open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
}

int close(int fd) {
  if (fd >= 0 && fd < MAX_FD) atomic_store(&watched[fd], 0);
  return ((int (*)(int))dlsym(RTLD_NEXT, "close"))(fd);
}

/* ---- writing ---- */

ssize_t write(int fd, const void *data, size_t size) {
  maybe_hold(fd);
  return ((ssize_t(*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write"))(fd, data, size);
}

ssize_t pwrite(int fd, const void *data, size_t size, off_t offset) {
  maybe_hold(fd);
  return ((ssize_t(*)(int, const void *, size_t, off_t))dlsym(RTLD_NEXT, "pwrite"))(fd, data, size,
                                                                                    offset);
}

ssize_t pwrite64(int fd, const void *data, size_t size, off64_t offset) {
  maybe_hold(fd);
  return ((ssize_t(*)(int, const void *, size_t, off64_t))dlsym(RTLD_NEXT, "pwrite64"))(
      fd, data, size, offset);
}

ssize_t writev(int fd, const struct iovec *pieces, int count) {
  maybe_hold(fd);
  return ((ssize_t(*)(int, const struct iovec *, int))dlsym(RTLD_NEXT, "writev"))(fd, pieces,
                                                                                  count);
}

ssize_t pwritev(int fd, const struct iovec *pieces, int count, off_t offset) {
  maybe_hold(fd);
  return ((ssize_t(*)(int, const struct iovec *, int, off_t))dlsym(RTLD_NEXT, "pwritev"))(
      fd, pieces, count, offset);
}
