/* full_disk_preload.c - an LD_PRELOAD library for the robustness suite: files whose path
 * holds one of the strings in RTM3D_TEST_FULL_DISK (comma-separated, e.g. ".json.partial")
 * opened for writing with fopen (any mode but "r") are opened on /dev/full instead, so that writing
 * them fails with ENOSPC as on a disk that fills at that moment; every other file is opened as
 * asked. A rename whose target holds one of RTM3D_TEST_FAIL_RENAME fails (EIO); one whose
 * target ends with RTM3D_TEST_KILL_RENAME kills the process (SIGKILL) before it is made, a
 * kill at a chosen point of a run's commit rather than at a moment a race picks; one whose
 * target ends with RTM3D_TEST_PLANT_RENAME finds a file ("planted") created there just
 * before it. rename and renameat2 alike. A link whose new name ends with
 * RTM3D_TEST_KILL_LINK, and an unlink or remove of a path ending with RTM3D_TEST_KILL_UNLINK,
 * kill the process before they are made (a commit's links aside, a state's removal). An
 * unlink or remove of a file that is there, at a path ending with RTM3D_TEST_FAIL_UNLINK,
 * fails (EACCES), as in a folder made read-only during the run; an fdatasync of a file whose
 * path ends with RTM3D_TEST_FAIL_SYNC fails (EIO), as where the disk failed the writes
 * after they were taken into the page cache. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "preload_impl.h"

typedef FILE *(*fopen_t)(const char *, const char *);

static FILE *open_as_asked(const char *name, const char *path, const char *mode) {
  fopen_t real = (fopen_t)dlsym(RTLD_NEXT, name);
  const int writes = strchr(mode, 'w') || strchr(mode, 'a') || strchr(mode, '+');
  return real(preload_listed("RTM3D_TEST_FULL_DISK", path) && writes ? "/dev/full" : path, mode);
}

FILE *fopen(const char *path, const char *mode) {
  return open_as_asked("fopen", path, mode);
}

FILE *fopen64(const char *path, const char *mode) {
  return open_as_asked("fopen64", path, mode);
}

typedef int (*rename_t)(const char *, const char *);
typedef int (*renameat2_t)(int, const char *, int, const char *, unsigned int);

/* Whether path ends with the value of the environment variable. */
static int ends_with_env(const char *variable, const char *path) {
  const char *tail = getenv(variable);
  const size_t length = strlen(path), tail_length = tail ? strlen(tail) : 0;
  return tail_length > 0 && length >= tail_length && strcmp(path + length - tail_length, tail) == 0;
}

/* What the test asked of a rename to `to`, before it is made: a kill, a file planted at the
 * target (another process's, put there between a run's look and its rename), a failure
 * (-1, EIO); 0 to go on. */
static int before_rename(const char *to) {
  if (ends_with_env("RTM3D_TEST_KILL_RENAME", to)) raise(SIGKILL);
  if (ends_with_env("RTM3D_TEST_PLANT_RENAME", to)) {
    const int fd = open(to, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd >= 0) {
      if (write(fd, "planted\n", 8) != 8) {
        /* the file is there, which is what counts */
      }
      close(fd);
    }
  }
  if (preload_listed("RTM3D_TEST_FAIL_RENAME", to)) {
    errno = EIO;
    return -1;
  }
  return 0;
}

int rename(const char *from, const char *to) {
  if (before_rename(to) != 0) return -1;
  return ((rename_t)dlsym(RTLD_NEXT, "rename"))(from, to);
}

/* a run's commit without --force renames with RENAME_NOREPLACE */
int renameat2(int from_dir, const char *from, int to_dir, const char *to, unsigned int flags) {
  if (before_rename(to) != 0) return -1;
  return ((renameat2_t)dlsym(RTLD_NEXT, "renameat2"))(from_dir, from, to_dir, to, flags);
}

typedef int (*link_t)(const char *, const char *);
typedef int (*unlink_t)(const char *);

int link(const char *from, const char *to) {
  if (ends_with_env("RTM3D_TEST_KILL_LINK", to)) raise(SIGKILL);
  return ((link_t)dlsym(RTLD_NEXT, "link"))(from, to);
}

typedef int (*sync_t)(int);

int fdatasync(int fd) {
  char link[64], path[4096];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t length = readlink(link, path, sizeof path - 1);
  if (length > 0) {
    path[length] = '\0';
    if (ends_with_env("RTM3D_TEST_FAIL_SYNC", path)) {
      errno = EIO;
      return -1;
    }
  }
  return ((sync_t)dlsym(RTLD_NEXT, "fdatasync"))(fd);
}

/* RTM3D_TEST_FAIL_UNLINK's file, where one is there: -1 with EACCES; else 0. */
static int refused_unlink(const char *path) {
  if (!ends_with_env("RTM3D_TEST_FAIL_UNLINK", path) || access(path, F_OK) != 0) return 0;
  errno = EACCES;
  return -1;
}

int unlink(const char *path) {
  if (ends_with_env("RTM3D_TEST_KILL_UNLINK", path)) raise(SIGKILL);
  if (refused_unlink(path)) return -1;
  return ((unlink_t)dlsym(RTLD_NEXT, "unlink"))(path);
}

int remove(const char *path) {
  if (ends_with_env("RTM3D_TEST_KILL_UNLINK", path)) raise(SIGKILL);
  if (refused_unlink(path)) return -1;
  return ((unlink_t)dlsym(RTLD_NEXT, "remove"))(path);
}
