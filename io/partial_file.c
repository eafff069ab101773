#define _GNU_SOURCE /* mkstemps, renameat2, sync_file_range */
/* The PATH.partial convention: every file rtm3d writes is written as PATH.partial and
 * renamed to PATH only once complete, so a failed run never leaves a file that looks
 * finished; a run's outputs renamed together (rtm_io_outputs_t, journaled under a name
 * lock: commit_journal.c); and the directories
 * leading to an output path. */
#include "rtm_io_impl.h"

#include <errno.h>
#include <fcntl.h> /* AT_FDCWD */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int rtm_io_partial_path(const char *path, char *buffer, size_t size) {
  int written = snprintf(buffer, size, "%s.partial", path);
  if (written < 0 || (size_t)written >= size) {
    rtm_log_error("output path too long (%zu characters): %s", strlen(path), path);
    return RTM_ERR_INTERNAL;
  }
  return RTM_OK;
}

int rtm_io_make_parent_dir(const char *path) {
  int made;
  return rtm_io_make_parent_dir_counted(path, &made);
}

int rtm_io_make_parent_dir_counted(const char *path, int *made) {
  char dir[4096];
  *made = 0;
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
    if (p[-1] == '/') { /* an empty name between two slashes (a//b): no folder */
      if (*p == '\0') break;
      continue;
    }
    char saved = *p;
    *p = '\0';
    if (mkdir(dir, 0777) == 0) {
      ++*made; /* the last folders only: one that existed below ours is not ours */
    } else if (errno == EEXIST) {
      *made = 0;
    } else {
      rtm_log_error("cannot create directory %s (for %s): %s", dir, path, strerror(errno));
      rtm_io_remove_made_dirs(dir, *made); /* the folders above it this call made */
      *made = 0;
      return RTM_ERR_IO;
    }
    struct stat info, link;
    if (stat(dir, &info) != 0 || !S_ISDIR(info.st_mode)) {
      /* the path is the user's to fix (output.dir and the like): a configuration error */
      if (lstat(dir, &link) == 0 && S_ISLNK(link.st_mode) && stat(dir, &info) != 0)
        rtm_log_error("cannot create directory %s (for %s): it is a symbolic link to nothing "
                      "(a dangling link): point it at a folder or remove it",
                      dir, path);
      else
        rtm_log_error("cannot create directory %s (for %s): a file of that name exists", dir,
                      path);
      return RTM_ERR_CONFIG;
    }
    *p = saved;
    if (saved == '\0') break;
  }
  return RTM_OK;
}

void rtm_io_remove_made_dirs(const char *path, int made) {
  char dir[4096];
  const size_t length = strlen(path);
  if (made <= 0 || length >= sizeof dir) return;
  memcpy(dir, path, length + 1);
  for (int level = 0; level < made; ++level) {
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir) return;
    *slash = '\0';
    if (rmdir(dir) != 0) return; /* not empty (the run's outputs, another's files): it stays */
  }
}

int rtm_io_file_stamp(const char *path, char *text, size_t size) {
  struct stat info;
  if (stat(path, &info) != 0) return 0;
  snprintf(text, size, "size=%lld\tmtime=%lld.%09ld\tctime=%lld.%09ld\tinode=%llu",
           (long long)info.st_size, (long long)info.st_mtim.tv_sec, (long)info.st_mtim.tv_nsec,
           (long long)info.st_ctim.tv_sec, (long)info.st_ctim.tv_nsec,
           (unsigned long long)info.st_ino);
  return 1;
}

/* Whether PATH is itself a partial file (PATH.partial): a file of an output set, which the
 * set's commit puts on the disk before its journal. */
static int is_partial_name(const char *path) {
  const size_t length = strlen(path), tail = strlen(".partial");
  return length > tail && strcmp(path + length - tail, ".partial") == 0;
}

/* PARTIAL renamed over PATH, on the disk first when `sync`; on failure PARTIAL removed. */
static int commit(const char *partial, const char *path, int sync) {
  if (sync && rtm_io_sync_file(partial) != RTM_OK) {
    rtm_io_remove_own(partial, "this run's unfinished output");
    return RTM_ERR_IO;
  }
  if (rename(partial, path) != 0) {
    rtm_log_error("cannot rename %s to %s: %s", partial, path, strerror(errno));
    rtm_io_remove_own(partial, "this run's unfinished output");
    return RTM_ERR_IO;
  }
  return RTM_OK;
}

int rtm_io_commit_partial(const char *partial, const char *path) {
  /* on the disk before a final name says it is complete; a set's partial waits for the set */
  return commit(partial, path, !is_partial_name(path));
}

int rtm_io_commit_new(const char *partial, const char *path, int *appeared) {
  *appeared = 0;
  if (rtm_io_sync_file(partial) != RTM_OK) return RTM_ERR_IO; /* on the disk before its name */
  if (rtm_io_rename_noreplace(partial, path) == 0) return RTM_OK;
  if (errno == EEXIST)
    *appeared = 1;
  else
    rtm_log_error("cannot rename %s to %s: %s", partial, path, strerror(errno));
  return RTM_ERR_IO;
}

/* PATH opened to read, only where it is a regular file (never a link; a FIFO put at the
 * name does not hold the open: O_NONBLOCK): the descriptor, else -1 with errno (EINVAL for
 * another kind of file). */
static int open_regular(const char *path) {
  const int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  struct stat info;
  if (fd < 0) return -1;
  const int error = fstat(fd, &info) != 0 ? errno : !S_ISREG(info.st_mode) ? EINVAL : 0;
  if (error == 0) return fd;
  close(fd);
  errno = error;
  return -1;
}

int rtm_io_sync_file(const char *path) {
  const int fd = open_regular(path);
  if (fd < 0) {
    rtm_log_error("cannot open %s to put its data on the disk: %s", path,
                  errno == EINVAL ? "it is not a regular file" : strerror(errno));
    return RTM_ERR_IO;
  }
  const int error = rtm_sync_data(fd);
  if (error) rtm_log_error("cannot put %s on the disk (fdatasync): %s", path, strerror(error));
  close(fd);
  return error ? RTM_ERR_IO : RTM_OK;
}

void rtm_io_start_writeback(const char *path) {
#ifdef SYNC_FILE_RANGE_WRITE
  const int fd = open_regular(path);
  if (fd < 0) return;
  (void)sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE); /* a hint: its failure costs time */
  close(fd);
#else
  (void)path;
#endif
}

int rtm_io_remove_own(const char *path, const char *what) {
  if (remove(path) == 0 || errno == ENOENT) return 0;
  rtm_log_error("cannot remove %s, %s: %s; it is left (remove it by hand)", path, what,
                strerror(errno)); /* part of a failure: said under --quiet too */
  return 1;
}

int rtm_io_rename_noreplace(const char *from, const char *to) {
#ifdef RENAME_NOREPLACE
  if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0) return 0;
  if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP) return -1; /* EEXIST among them */
#endif
  /* link never replaces either; a file system without hard links (EPERM, ENOTSUP) last
   * falls back on a look and a rename, which leaves a race of a moment open */
  if (link(from, to) == 0) {
    unlink(from); /* left (it cannot be): a second name of the file put in place */
    return 0;
  }
  if (errno == EEXIST) return -1;
  struct stat info;
  if (lstat(to, &info) == 0) {
    errno = EEXIST;
    return -1;
  }
  return rename(from, to);
}

const char *rtm_io_extension(const char *path) {
  const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
  const char *dot = strrchr(base, '.');
  return dot && dot != base ? dot : "";
}

int rtm_io_output_target(const char *path, const char *what, char *target, size_t size) {
  struct stat info;
  char *resolved = NULL;
  if (lstat(path, &info) == 0 && S_ISLNK(info.st_mode)) {
    if (stat(path, &info) != 0) {
      rtm_log_error("%s %s: %s: point it at a file or remove it", what, path,
                    errno == ENOENT ? "a symbolic link to nothing (a dangling link)"
                                    : strerror(errno));
      return RTM_ERR_USAGE;
    }
    /* a file's link followed to the file; /dev/stdout and its kind stay PATH */
    if (S_ISREG(info.st_mode) && !(resolved = realpath(path, NULL))) {
      rtm_log_error("%s %s: cannot follow the link: %s", what, path, strerror(errno));
      return RTM_ERR_IO;
    }
  }
  const char *chosen = resolved ? resolved : path;
  const int written = snprintf(target, size, "%s", chosen);
  free(resolved);
  if (written < 0 || (size_t)written >= size) {
    rtm_log_error("%s %s: the path is too long (%d characters)", what, path, written);
    return RTM_ERR_USAGE;
  }
  return RTM_OK;
}

int rtm_io_aside_create(const char *path, char *aside, size_t size) {
  struct stat info;
  if (stat(path, &info) == 0 && !S_ISREG(info.st_mode)) {
    rtm_log_error("%s is not a regular file: rtm3d writes and replaces files only", path);
    return RTM_ERR_USAGE;
  }
  /* the extension kept last: a figure's device follows it */
  const char *extension = rtm_io_extension(path);
  const int written = snprintf(aside, size, "%s.partial.XXXXXX%s", path, extension);
  if (written < 0 || (size_t)written >= size) {
    rtm_log_error("output path too long (%zu characters): %s", strlen(path), path);
    return RTM_ERR_INTERNAL;
  }
  const int fd = mkstemps(aside, (int)strlen(extension)); /* a new name: never another's */
  if (fd < 0) {
    rtm_log_error("cannot create a file beside %s: %s", path, strerror(errno));
    return RTM_ERR_IO;
  }
  const mode_t mask = umask(0); /* mkstemps makes it 0600: the umask's usual mode instead */
  umask(mask);
  const int changed = fchmod(fd, 0666 & ~mask);
  close(fd);
  if (changed != 0) {
    rtm_log_error("cannot set the mode of %s: %s", aside, strerror(errno));
    remove(aside);
    return RTM_ERR_IO;
  }
  return RTM_OK;
}

int rtm_io_sync_partial(const char *path) {
  char partial[4096 + 16];
  const int status = rtm_io_partial_path(path, partial, sizeof partial);
  return status != RTM_OK ? status : rtm_io_sync_file(partial);
}

/* The standard stream (stdout, stderr) whose file PATH is, else NULL: `--csv /dev/stdout` with
 * the output sent to a file goes through the stream, after what it holds, not through a
 * second open that would empty the file under it. */
static FILE *standard_stream_at(const char *path) {
  FILE *const streams[2] = {stdout, stderr};
  struct stat target, stream;
  if (stat(path, &target) != 0) return NULL;
  for (int k = 0; k < 2; ++k)
    if (fstat(fileno(streams[k]), &stream) == 0 && stream.st_dev == target.st_dev &&
        stream.st_ino == target.st_ino)
      return streams[k];
  return NULL;
}

/* The standard stream PATH leads to when PATH is not itself a regular file (/dev/stdout, a
 * link to stdout's file), else NULL: a file named as itself is replaced, as any other. */
static FILE *standard_stream_through(const char *path) {
  struct stat info;
  if (lstat(path, &info) != 0 || S_ISREG(info.st_mode)) return NULL;
  return standard_stream_at(path);
}

/* Whether TARGET (rtm_io_output_target's) is written in place: a stream there (a terminal, a
 * FIFO, a device), or a link to one. */
static int written_in_place(const char *target) {
  struct stat info;
  if (stat(target, &info) != 0) return 0; /* absent: made aside */
  return !S_ISREG(info.st_mode) && !S_ISDIR(info.st_mode);
}

int rtm_io_aside_probe(const char *path, const char *what) {
  char aside[4096 + 32], target[4096];
  if (standard_stream_through(path)) return RTM_OK;
  int status = rtm_io_output_target(path, what, target, sizeof target);
  if (status != RTM_OK) return status;
  if (written_in_place(target)) {
    if (access(target, W_OK) == 0) return RTM_OK;
    rtm_log_error("%s %s: cannot write it: %s; nothing is run", what, path, strerror(errno));
    return RTM_ERR_IO;
  }
  status = rtm_io_aside_create(target, aside, sizeof aside);
  if (status != RTM_OK) {
    rtm_log_error("%s %s: the file could not be written there; nothing is run", what, path);
    return status;
  }
  rtm_io_remove_own(aside, "a file made to see that the output can be written");
  return RTM_OK;
}

int rtm_io_write_text_aside(const char *path, const char *what,
                            void (*write)(FILE *out, const void *data), const void *data) {
  char aside[4096 + 32], target[4096];
  FILE *const standard = standard_stream_through(path);
  int status = standard ? RTM_OK : rtm_io_output_target(path, what, target, sizeof target);
  /* a stream: nothing to replace whole, written in place as it goes */
  const int in_place = standard || (status == RTM_OK && written_in_place(target));
  if (status == RTM_OK && !in_place) status = rtm_io_aside_create(target, aside, sizeof aside);
  if (status != RTM_OK) {
    rtm_log_error("%s %s: not written", what, path);
    return status;
  }
  const char *into = standard ? path : in_place ? target : aside;
  FILE *out = standard ? standard : fopen(into, "w");
  int error = out ? 0 : errno;
  if (out) {
    errno = 0; /* what a failed write of the stream leaves: said below */
    write(out, data);
    error = fflush(out) != 0 || ferror(out) ? (errno ? errno : EIO) : 0;
    if (!standard && fclose(out) != 0 && !error) error = errno;
  }
  if (error) {
    rtm_log_error("%s %s: writing %s failed: %s", what, path, into, strerror(error));
    if (!in_place) rtm_io_remove_own(aside, "this run's unfinished output");
    return RTM_ERR_IO;
  }
  if (in_place) return RTM_OK;
  status = commit(aside, target, 1); /* on the disk, then renamed over the target */
  if (status != RTM_OK) rtm_log_error("%s %s: not written", what, path);
  return status;
}

/* ---- a run's outputs, renamed into place together ---- */

/* One output: its final name, and what the commit does with it. */
typedef struct {
  char *path;
  int drop;     /* no partial: PATH, an earlier run's, is removed at the commit */
  char *backup; /* during the commit: the name the earlier PATH is linked as (a new name) */
} output_t;

struct rtm_io_outputs {
  int count;
  output_t *outputs;
  int replace_none; /* rtm_io_outputs_replace_none: no file at an output's name is replaced */
  char *retire;     /* rtm_io_outputs_retire: removed after the renames, before the journal */
};

int rtm_io_outputs_create(rtm_io_outputs_t **set) {
  *set = calloc(1, sizeof **set);
  if (!*set) {
    rtm_log_error("out of memory");
    return RTM_ERR_NOMEM;
  }
  return RTM_OK;
}

static int outputs_append(rtm_io_outputs_t *set, const char *path, int drop) {
  output_t *grown = realloc(set->outputs, (size_t)(set->count + 1) * sizeof *grown);
  if (grown) set->outputs = grown;
  char *copy = grown ? strdup(path) : NULL;
  if (!copy) {
    rtm_log_error("out of memory listing the output %s", path);
    return RTM_ERR_NOMEM;
  }
  set->outputs[set->count++] = (output_t){copy, drop, NULL};
  return RTM_OK;
}

int rtm_io_outputs_add(rtm_io_outputs_t *set, const char *path, char *partial, size_t size) {
  int status = rtm_io_partial_path(path, partial, size);
  if (status != RTM_OK) return status;
  /* under the run's name lock PATH.partial is this run's name: whatever is there (a killed
   * run's file, a link planted there) goes, so that nothing is written through it */
  if (unlink(partial) != 0 && errno != ENOENT) {
    rtm_log_error("cannot remove %s to write it anew: %s", partial, strerror(errno));
    return RTM_ERR_IO;
  }
  return outputs_append(set, path, 0);
}

void rtm_io_outputs_replace_none(rtm_io_outputs_t *set) {
  set->replace_none = 1;
}

int rtm_io_outputs_add_written(rtm_io_outputs_t *set, const char *path) {
  return outputs_append(set, path, 0);
}

int rtm_io_outputs_drop(rtm_io_outputs_t *set, const char *path) {
  return outputs_append(set, path, 1);
}

static void outputs_clear(rtm_io_outputs_t *set) {
  for (int i = 0; i < set->count; ++i) {
    free(set->outputs[i].path);
    free(set->outputs[i].backup);
  }
  set->count = 0;
  free(set->retire);
  set->retire = NULL;
}

/* PATH with a suffix (.partial) into buffer; 0 when it does not fit. */
static int suffixed(const char *path, const char *suffix, char *buffer, size_t size) {
  const int written = snprintf(buffer, size, "%s%s", path, suffix);
  return written >= 0 && (size_t)written < size;
}

/* Every output can be put in place: its name free or a file (a folder or a device there
 * would stop the renames half-way). */
static int check_targets(const rtm_io_outputs_t *set) {
  for (int i = 0; i < set->count; ++i) {
    const output_t *o = &set->outputs[i];
    struct stat info;
    if (o->drop || lstat(o->path, &info) != 0) continue;
    if (!(S_ISREG(info.st_mode) || S_ISLNK(info.st_mode))) {
      rtm_log_error("%s exists and is not a file: the run's outputs cannot be put in place",
                    o->path);
      return RTM_ERR_IO;
    }
  }
  return RTM_OK;
}

/* After a failure at rename `done`: the outputs renamed before it give way to the earlier
 * files kept aside (or are removed), the partials and links left go. Returns the partial
 * files not found at their names; *left counts the files that could not be removed (each
 * named by rtm_io_remove_own). */
static int roll_back(const rtm_io_outputs_t *set, int done, int *left) {
  char partial[4096 + 16];
  int missing = 0;
  *left = 0;
  for (int k = 0; k < set->count; ++k) {
    const output_t *o = &set->outputs[k];
    if (o->drop) continue;
    if (k >= done) {
      if (suffixed(o->path, ".partial", partial, sizeof partial)) {
        struct stat info;
        if (lstat(partial, &info) != 0 && errno == ENOENT)
          ++missing;
        else
          *left += rtm_io_remove_own(partial, "this run's unfinished output");
      }
      if (o->backup)
        *left += rtm_io_remove_own(o->backup, "a second name of an earlier run's file");
    } else if (o->backup) {
      if (rename(o->backup, o->path) != 0) { /* the earlier file back in place of the run's */
        rtm_log_error("cannot put the earlier %s back from %s: %s; it is there (put it back "
                      "by hand)",
                      o->path, o->backup, strerror(errno));
        ++*left;
      }
    } else {
      *left += rtm_io_remove_own(o->path, "this run's output, not complete without the others");
    }
  }
  return missing;
}

/* A name to link the earlier PATH under while the renames run: PATH.replaced, or
 * PATH.replaced.N where that name is taken (a file of that name that this run did not
 * make, a user's, stays); NULL when there is no earlier file or no free name. Chosen before
 * the journal that lists it; linked (keep_aside) after. */
static char *aside_name(const char *path) {
  char backup[4096 + 32];
  struct stat info;
  if (lstat(path, &info) != 0) return NULL;
  for (int n = 0; n < 100; ++n) {
    const int written = n ? snprintf(backup, sizeof backup, "%s.replaced.%d", path, n)
                          : snprintf(backup, sizeof backup, "%s.replaced", path);
    if (written < 0 || (size_t)written >= sizeof backup) return NULL;
    if (lstat(backup, &info) != 0 && errno == ENOENT) return strdup(backup);
  }
  return NULL;
}

/* The earlier PATH linked as o->backup (link never replaces: a name taken since it was
 * chosen leaves the earlier file unguarded, o->backup NULL). */
static void keep_aside(output_t *o) {
  if (o->backup && link(o->path, o->backup) != 0) {
    free(o->backup);
    o->backup = NULL;
  }
}

/* The journal of the commit (commit_journal.c), when the run's name lock is held: its path
 * into journal[size] ("" without one) once written. */
static int write_journal(const rtm_io_outputs_t *set, const rtm_io_name_lock_t *lock, char *journal,
                         size_t size) {
  journal[0] = '\0';
  if (!lock || !lock->held) return RTM_OK;
  rtm_io_journal_entry_t *entries = malloc((size_t)(2 * set->count + 1) * sizeof *entries);
  if (!entries) {
    rtm_log_error("out of memory for the journal of the run's renames");
    return RTM_ERR_NOMEM;
  }
  int count = 0;
  for (int k = 0; k < set->count; ++k) {
    const output_t *o = &set->outputs[k];
    entries[count++] =
        (rtm_io_journal_entry_t){o->drop ? RTM_IO_JOURNAL_DROP : RTM_IO_JOURNAL_PUT, o->path};
    if (o->backup) entries[count++] = (rtm_io_journal_entry_t){RTM_IO_JOURNAL_ASIDE, o->backup};
  }
  int status = rtm_io_journal_path(lock->path, journal, size);
  if (status == RTM_OK) status = rtm_io_journal_write(journal, entries, count);
  if (status != RTM_OK) journal[0] = '\0';
  free(entries);
  return status;
}

/* An earlier run's file that this run does not replace, removed after the renames: only a
 * regular file (never a link, a device, a FIFO or a folder planted at the name). */
static void remove_dropped(const char *path) {
  struct stat info;
  if (lstat(path, &info) != 0) return;
  if (!S_ISREG(info.st_mode))
    rtm_log_warning("%s stays: it is not a regular file, and a run removes only files", path);
  else if (remove(path) != 0)
    rtm_log_warning("cannot remove %s, an earlier run's file: %s", path, strerror(errno));
}

/* A set that replaces nothing (rtm_io_outputs_replace_none) stopped by `found`, a file at
 * one of its names that was not there when the run claimed them (a user's, another
 * command's: an export or a plot finished meanwhile): its complete partials are kept, under
 * the names the message gives with the commands that put them in place, and the set is
 * emptied (nothing of it is removed). */
/* `text` quoted for a POSIX shell ('...', a quote in it as '\''), into out[size]; the
 * commands a message gives are pasted into one (probe E10: an output.dir of "q;touch x;"
 * ran touch). */
static void shell_quoted(const char *text, char *out, size_t size) {
  size_t n = 0;
  if (size < 3) {
    if (size) out[0] = '\0';
    return;
  }
  out[n++] = '\'';
  for (const char *c = text; *c && n + 5 < size; ++c) {
    if (*c == '\'') {
      memcpy(out + n, "'\\''", 4);
      n += 4;
    } else {
      out[n++] = *c;
    }
  }
  out[n++] = '\'';
  out[n] = '\0';
}

static int stop_for(rtm_io_outputs_t *set, const char *found) {
  char partials[4096], moves[8192];
  size_t have = 0, moved = 0;
  partials[0] = moves[0] = '\0';
  for (int k = 0; k < set->count; ++k) {
    const output_t *o = &set->outputs[k];
    if (o->drop) continue;
    int n = snprintf(partials + have, sizeof partials - have, "%s%s.partial", have ? ", " : "",
                     o->path);
    if (n > 0 && (size_t)n < sizeof partials - have) have += (size_t)n;
    char partial[4096 + 16], from[2 * 4096 + 48], to[2 * 4096 + 48];
    snprintf(partial, sizeof partial, "%s.partial", o->path);
    shell_quoted(partial, from, sizeof from);
    shell_quoted(o->path, to, sizeof to);
    /* "--": a name that begins with - (a relative output.dir "-odd") is no option of mv */
    n = snprintf(moves + moved, sizeof moves - moved, "%smv -n -- %s %s", moved ? "; " : "", from,
                 to);
    if (n > 0 && (size_t)n < sizeof moves - moved) moved += (size_t)n;
  }
  /* a state these outputs make obsolete stays too: said, or it would sit beside them */
  char retire[4096 + 160] = "";
  struct stat info;
  if (set->retire && lstat(set->retire, &info) == 0)
    snprintf(retire, sizeof retire,
             " Then remove %s, the state they make obsolete (or, %s moved away, run the same "
             "command again: it resumes from that state and puts its outputs in place).",
             set->retire, found);
  rtm_log_error("%s appeared while the run ran (it was not there when the run claimed its output "
                "names), and a run without --force replaces no file: none of the run's outputs "
                "was put in place. They are complete, kept as %s: move %s away (it is not this "
                "run's), then put them in place with: %s.%s (A later run of this name, or one "
                "with --force, removes them.)",
                found, partials, found, moves, retire);
  outputs_clear(set);
  return RTM_ERR_IO;
}

/* A set that replaces nothing: the first of its names (a drop's too) where a file is now
 * (the claim found none: rtm_io_outputs_replace_none); NULL when every name is free. */
static const char *name_taken(const rtm_io_outputs_t *set) {
  struct stat info;
  for (int k = 0; set->replace_none && k < set->count; ++k)
    if (lstat(set->outputs[k].path, &info) == 0) return set->outputs[k].path;
  return NULL;
}

/* A set that replaces nothing, whose rename `done` found its name taken since name_taken
 * looked: the outputs renamed before it back to their partials (they are the run's own,
 * just put there), so that stop_for keeps them all. */
static void put_back(const rtm_io_outputs_t *set, int done) {
  char partial[4096 + 16];
  for (int k = 0; k < done; ++k) {
    const output_t *o = &set->outputs[k];
    if (!o->drop && suffixed(o->path, ".partial", partial, sizeof partial))
      rename(o->path, partial);
  }
}

/* output.dir was moved, removed or replaced (a link to another folder) since the run took its
 * lock there: its names now lead elsewhere, perhaps to an input (probe U, U3), so nothing is
 * renamed, and nothing removed by name (a .partial name there is not the run's file). */
static int stop_for_moved_folder(rtm_io_outputs_t *set, const rtm_io_name_lock_t *lock) {
  rtm_log_error("%s is no longer the lock this run holds: its folder was moved, removed or "
                "replaced while the run ran, so the run's output names may lead to other files "
                "(an input among them). None of the run's outputs was put in place; they stay as "
                ".partial files in the folder they were written into. Run again with an "
                "output.dir that nothing changes during the run.",
                lock->path);
  outputs_clear(set);
  return RTM_ERR_IO;
}

int rtm_io_outputs_commit(rtm_io_outputs_t *set, const rtm_io_name_lock_t *lock) {
  char partial[4096 + 16], journal[4096 + 32] = "", taken[4096];
  if (lock && lock->fd >= 0 && !rtm_io_lock_in_place(lock)) return stop_for_moved_folder(set, lock);
  int status = check_targets(set), i = 0;
  /* every output's data on the disk before the journal names it (else a node lost after the
   * renames could leave torn files in place of complete ones; a resume state too), and
   * before a stop below calls them complete */
  for (int k = 0; status == RTM_OK && k < set->count; ++k)
    if (!set->outputs[k].drop &&
        suffixed(set->outputs[k].path, ".partial", partial, sizeof partial))
      status = rtm_io_sync_file(partial);
  /* without --force the claim found every name free: a file there now appeared meanwhile,
   * and is not the run's to replace or remove (all of the outputs appear, or none) */
  const char *found = status == RTM_OK ? name_taken(set) : NULL;
  if (found) {
    snprintf(taken, sizeof taken, "%s", found);
    return stop_for(set, taken);
  }
  /* an earlier run's file stays linked aside until every rename is done, so that a failure
   * half-way puts it back (--force promises the earlier files when a run fails); the
   * journal, written before the first rename and the first link, lets the next run of the
   * name finish the renames of a run killed among them */
  for (int k = 0; status == RTM_OK && k < set->count; ++k) {
    output_t *o = &set->outputs[k];
    if (!o->drop) o->backup = aside_name(o->path);
  }
  if (status == RTM_OK) status = write_journal(set, lock, journal, sizeof journal);
  for (int k = 0; status != RTM_OK && k < set->count; ++k) { /* named, never linked */
    free(set->outputs[k].backup);
    set->outputs[k].backup = NULL;
  }
  for (int k = 0; status == RTM_OK && k < set->count; ++k)
    if (!set->outputs[k].drop) keep_aside(&set->outputs[k]);
  for (; status == RTM_OK && i < set->count; ++i) {
    const output_t *o = &set->outputs[i];
    if (o->drop) continue;
    const int fits = suffixed(o->path, ".partial", partial, sizeof partial);
    const int renamed = !fits               ? -1
                        : set->replace_none ? rtm_io_rename_noreplace(partial, o->path)
                                            : rename(partial, o->path);
    if (renamed != 0 && fits && set->replace_none && errno == EEXIST) {
      /* a file put there since name_taken looked */
      if (journal[0]) rtm_io_journal_remove(journal);
      put_back(set, i);
      snprintf(taken, sizeof taken, "%s", o->path);
      return stop_for(set, taken);
    }
    if (renamed != 0) {
      rtm_log_error("cannot rename %s to %s: %s", partial, o->path, strerror(errno));
      status = RTM_ERR_IO;
      break; /* outputs [0, i) are in place */
    }
  }
  if (status != RTM_OK) { /* none or all */
    if (journal[0]) rtm_io_journal_remove(journal); /* undone here, not finished by the next */
    int left = 0;
    const int missing = roll_back(set, i, &left);
    /* probe R, R3: output.dir renamed during the run, its .partial files went with it */
    rtm_log_error("the run's outputs were removed%s (none is complete without the others)%s%s; "
                  "%s",
                  missing ? " where they were found" : "",
                  missing ? "; those not found at their names (a folder moved or renamed during "
                            "the run) keep them as .partial files"
                          : "",
                  left ? "; the files named above are as said there" : "",
                  left ? "an earlier run's files are as they were unless named above"
                       : "an earlier run's files are as they were");
    outputs_clear(set);
    return status;
  }
  for (int k = 0; k < set->count; ++k) {
    const output_t *o = &set->outputs[k];
    if (o->drop && !set->replace_none) /* replacing nothing, it found no file there */
      remove_dropped(o->path);
    else if (o->backup && unlink(o->backup) != 0)
      rtm_log_warning("cannot remove %s, the earlier %s this run replaced: %s; remove it by hand",
                      o->backup, o->path, strerror(errno));
  }
  /* while the journal stands (probe G4) */
  if (set->retire && remove(set->retire) != 0 && errno != ENOENT)
    rtm_log_warning("cannot remove %s, which this run's outputs make obsolete: %s; remove it by "
                    "hand",
                    set->retire, strerror(errno));
  if (journal[0]) rtm_io_journal_remove(journal);
  outputs_clear(set);
  return RTM_OK;
}

int rtm_io_outputs_retire(rtm_io_outputs_t *set, const char *path) {
  free(set->retire);
  set->retire = strdup(path);
  if (set->retire) return RTM_OK;
  rtm_log_error("out of memory");
  return RTM_ERR_NOMEM;
}

void rtm_io_outputs_discard(rtm_io_outputs_t *set) {
  if (!set) return;
  int left = 0;
  roll_back(set, 0, &left); /* nothing renamed: every partial goes (those left are named) */
  outputs_clear(set);
}

void rtm_io_outputs_free(rtm_io_outputs_t *set) {
  if (!set) return;
  rtm_io_outputs_discard(set);
  free(set->outputs);
  free(set);
}
