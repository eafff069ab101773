#define _GNU_SOURCE /* O_CLOEXEC, flock */
/* The lock on an output name. A run holds DIR/NAME.lock (flock, exclusive) from before it
 * weighs its outputs until it has renamed them into place, so that a second run given the
 * same output.dir and output.name is refused, naming the first, instead of truncating or
 * removing the first run's NAME.*.partial files. The lock file says which process holds
 * it; it is removed by its holder at the end (a run killed by SIGKILL leaves it, unlocked:
 * the next run takes it over, and finishes its commit if it was killed in the middle of
 * one: commit_journal.c). The lock is advisory: it guards against rtm3d runs, not
 * against other programs. */
#include "rtm_io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rtm_io_impl.h"

/* What the holder wrote into the lock file: "pid P on HOST since TIME", or "" unreadable. */
static void read_holder(int fd, char *holder, size_t size) {
  ssize_t got = pread(fd, holder, size - 1, 0);
  holder[got > 0 ? got : 0] = '\0';
  holder[strcspn(holder, "\n")] = '\0';
  for (char *c = holder; *c; ++c) /* it is a file's text on the terminal: printable only */
    if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f) *c = '?';
}

static void write_holder(int fd) {
  char host[128] = "?", text[256];
  gethostname(host, sizeof host - 1);
  host[sizeof host - 1] = '\0';
  const time_t now = time(NULL);
  struct tm local;
  char when[32] = "?";
  if (localtime_r(&now, &local)) strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &local);
  const int length =
      snprintf(text, sizeof text, "pid %ld on %s since %s\n", (long)getpid(), host, when);
  if (ftruncate(fd, 0) == 0 && pwrite(fd, text, (size_t)length, 0) < 0) {
    /* the text only names the holder in a refusal; the lock holds without it */
  }
}

/* The file at `path` is still the one open as fd (no holder removed it between our open
 * and our lock). */
static int still_linked(int fd, const char *path) {
  struct stat opened, named;
  return fstat(fd, &opened) == 0 && stat(path, &named) == 0 && opened.st_dev == named.st_dev &&
         opened.st_ino == named.st_ino;
}

/* The lock at lock->path taken, its folder there: RTM_OK with lock->fd open, else a status
 * with lock->fd -1 and lock->path cleared (said). */
static int take_lock(const char *dir, const char *name, const char *key, rtm_io_name_lock_t *lock) {
  int status = RTM_OK;
  for (int attempt = 0; attempt < 16; ++attempt) {
    /* a lock file there before: a killed run's (a run that ends removes its own) */
    struct stat before;
    const int existed = lstat(lock->path, &before) == 0;
    /* never through a link planted at the name: it would write into the file it points at */
    const int fd = open(lock->path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0 && errno == ELOOP) {
      rtm_log_error("%s is a symbolic link: rtm3d does not write through links at its lock; "
                    "remove it",
                    lock->path);
      lock->path[0] = '\0';
      return RTM_ERR_CONFIG;
    }
    /* the folder gone since it was made or found: another run of another name that made it
     * failed and removed it, empty (rtm_io_unlock_name); made again, not counted as ours */
    if (fd < 0 && errno == ENOENT && attempt + 1 < 16 &&
        rtm_io_make_parent_dir(lock->path) == RTM_OK)
      continue;
    if (fd < 0) {
      rtm_log_error("cannot create %s (the lock on output.name '%s'): %s", lock->path, name,
                    strerror(errno));
      lock->path[0] = '\0';
      return RTM_ERR_IO;
    }
    const int held = flock(fd, LOCK_EX | LOCK_NB) == 0;
    if (!held) {
      const int error = errno;
      if (error == EWOULDBLOCK) {
        char holder[256];
        read_holder(fd, holder, sizeof holder);
        close(fd);
        rtm_log_error("another run is writing %s '%s' in %s (%s holds %s): wait for it to end, "
                      "or choose another name (%s) or folder",
                      key, name, dir, holder[0] ? holder : "a process", lock->path, key);
        lock->path[0] = '\0'; /* not ours: never removed by this run */
        return RTM_ERR_CONFIG;
      }
      /* a file system without locks (some network mounts): the run goes on unguarded */
      rtm_log_warning("cannot lock %s (%s): two runs given the same output.name there would "
                      "overwrite each other",
                      lock->path, strerror(error));
    }
    struct stat regular;
    const int stated = fstat(fd, &regular) == 0;
    if (stated && !S_ISREG(regular.st_mode)) {
      close(fd);
      rtm_log_error("%s is not a regular file: remove it", lock->path);
      lock->path[0] = '\0';
      return RTM_ERR_CONFIG;
    }
    /* a hard link of another file at the name: the holder's line would be written into that
     * file (probe U, U5) */
    if (stated && regular.st_nlink > 1) {
      close(fd);
      rtm_log_error("%s has other names (a hard link of another file): rtm3d writes its lock "
                    "there and would change that file; remove it",
                    lock->path);
      lock->path[0] = '\0';
      return RTM_ERR_CONFIG;
    }
    if (!still_linked(fd, lock->path)) { /* its holder removed it as we opened it: again */
      close(fd);
      continue;
    }
    write_holder(fd);
    lock->fd = fd;
    lock->held = held;
    lock->taken_over = held && existed;
    /* a run of the name killed in the middle of its commit: finished before the name is used */
    status = held ? rtm_io_journal_recover(lock->path, key, name) : RTM_OK;
    if (status != RTM_OK) rtm_io_unlock_name(lock);
    return status;
  }
  rtm_log_error("cannot take the lock %s: it is replaced faster than it can be held", lock->path);
  lock->path[0] = '\0';
  return RTM_ERR_IO;
}

int rtm_io_lock_name(const char *dir, const char *name, const char *key, rtm_io_name_lock_t *lock) {
  lock->fd = -1;
  lock->held = lock->taken_over = lock->made_dirs = 0;
  lock->path[0] = '\0';
  char path[sizeof lock->path];
  const int length = snprintf(path, sizeof path, "%s/%s.lock", dir, name);
  if (length < 0 || (size_t)length >= sizeof path) {
    rtm_log_error("output path too long: %s/%s.lock", dir, name);
    return RTM_ERR_CONFIG;
  }
  int made = 0;
  int status = rtm_io_make_parent_dir_counted(path, &made);
  if (status != RTM_OK) return status;
  memcpy(lock->path, path, (size_t)length + 1);
  lock->made_dirs = made; /* an unlock after the journal's refusal removes them */
  status = take_lock(dir, name, key, lock);
  if (status != RTM_OK && lock->fd < 0) rtm_io_remove_made_dirs(path, made);
  return status;
}

int rtm_io_lock_in_place(const rtm_io_name_lock_t *lock) {
  return lock->fd >= 0 && still_linked(lock->fd, lock->path);
}

void rtm_io_unlock_name(rtm_io_name_lock_t *lock) {
  if (lock->fd < 0) return;
  /* while still held: a run that opened it meanwhile finds it unlinked. Only the file this
   * run holds: with output.dir moved or replaced by a link during the run (probe U, U3), the
   * name leads to another folder's file. */
  if (rtm_io_lock_in_place(lock)) {
    if (unlink(lock->path) == 0 || errno == ENOENT)
      rtm_io_remove_made_dirs(lock->path, lock->made_dirs); /* where nothing else is there */
    else
      rtm_log_warning("cannot remove %s, this run's lock: %s; it is left (the next run of the "
                      "name takes it over)",
                      lock->path, strerror(errno));
  }
  close(lock->fd);
  lock->fd = -1;
  lock->held = lock->taken_over = lock->made_dirs = 0;
  lock->path[0] = '\0';
}
