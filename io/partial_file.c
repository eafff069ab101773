#define _POSIX_C_SOURCE 200809L
/* The PATH.partial convention: every file rtm3d writes is written as PATH.partial and
 * renamed to PATH only once complete, so a failed run never leaves a file that looks
 * finished; and the directories leading to an output path. */
#include "rtm_io_impl.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

int rtm_io_partial_path(const char *path, char *buffer, size_t size) {
  int written = snprintf(buffer, size, "%s.partial", path);
  if (written < 0 || (size_t)written >= size) {
    rtm_log_error("output path too long (%zu characters): %s", strlen(path), path);
    return RTM_ERR_INTERNAL;
  }
  return RTM_OK;
}

int rtm_io_make_parent_dir(const char *path) {
  char dir[4096];
  size_t length = strlen(path);
  if (length >= sizeof dir) {
    rtm_log_error("path too long (%zu characters): %s", length, path);
    return RTM_ERR_IO;
  }
  memcpy(dir, path, length + 1);
  char *slash = strrchr(dir, '/');
  if (!slash || slash == dir) return RTM_OK;
  *slash = '\0';
  for (char *p = dir + 1;; ++p) {
    if (*p != '/' && *p != '\0') continue;
    char saved = *p;
    *p = '\0';
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
      rtm_log_error("cannot create directory %s (for %s): %s", dir, path, strerror(errno));
      return RTM_ERR_IO;
    }
    struct stat info;
    if (stat(dir, &info) != 0 || !S_ISDIR(info.st_mode)) {
      rtm_log_error("cannot create directory %s (for %s): a file of that name exists", dir, path);
      return RTM_ERR_IO;
    }
    *p = saved;
    if (saved == '\0') break;
  }
  return RTM_OK;
}

int rtm_io_commit_partial(const char *partial, const char *path) {
  if (rename(partial, path) != 0) {
    rtm_log_error("cannot rename %s to %s: %s", partial, path, strerror(errno));
    remove(partial);
    return RTM_ERR_IO;
  }
  return RTM_OK;
}
