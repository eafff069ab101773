/* full_disk_preload.c - an LD_PRELOAD library for the robustness suite: files whose path
 * holds one of the strings in RTM3D_TEST_FULL_DISK (comma-separated, e.g. ".json.partial")
 * opened for writing with fopen (any mode but "r") are opened on /dev/full instead, so that writing
 * them fails with ENOSPC as on a disk that fills at that moment; every other file is opened as
 * asked. A rename whose target holds one of RTM3D_TEST_FAIL_RENAME fails (EIO); one whose
 * target ends with RTM3D_TEST_KILL_RENAME kills the process (SIGKILL) before it is made, a
 * kill at a chosen point of a run's commit rather than at a moment a race picks. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int rename(const char *from, const char *to) {
  const char *kill_at = getenv("RTM3D_TEST_KILL_RENAME");
  const size_t length = strlen(to), tail = kill_at ? strlen(kill_at) : 0;
  if (tail > 0 && length >= tail && strcmp(to + length - tail, kill_at) == 0) raise(SIGKILL);
  if (preload_listed("RTM3D_TEST_FAIL_RENAME", to)) {
    errno = EIO;
    return -1;
  }
  return ((rename_t)dlsym(RTLD_NEXT, "rename"))(from, to);
}
