#define _DEFAULT_SOURCE /* fsync on a directory's descriptor, O_NOFOLLOW, O_CLOEXEC */
#define _POSIX_C_SOURCE 200809L
/* The journal of a run's commit, DIR/NAME.commit: once every partial file of a run is
 * complete, before its first rename, the run writes (and fsyncs) the list of its renames,
 * the earlier files it removes and the names it links earlier files under while it renames
 * (.replaced); it removes the journal after the last rename and those removals. A run killed
 * in between (SIGKILL) leaves the journal, and the next holder of the name lock finishes
 * the commit: its partials were complete, so the renames left are made (roll forward), and
 * the set is never part one run's and part another's. The journal names files by their
 * suffix after DIR/NAME, and its reader acts only on names of that shape: it touches nothing
 * but rtm3d's own files of that name. Also: a killed run's temporary files of that name
 * (PATH.partial.partial.XXXXXX.partial, a report or a figure written aside of its partial;
 * bench's NAME.json.partial.XXXXXX.json), removed by the next holder. */
#include "rtm_io_impl.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char journal_magic[] = "rtm3d commit journal 1\n";

enum { JOURNAL_MAX = 64 * 1024, SUFFIX_MAX = 256, ENTRIES_MAX = 128 };

int rtm_io_journal_path(const char *lock_path, char *journal, size_t size) {
  const size_t length = strlen(lock_path), tail = strlen(".lock");
  if (length <= tail || strcmp(lock_path + length - tail, ".lock") != 0 ||
      (size_t)snprintf(journal, size, "%.*s.commit", (int)(length - tail), lock_path) >= size) {
    rtm_log_error("the lock %s gives no journal name", lock_path);
    return RTM_ERR_INTERNAL;
  }
  return RTM_OK;
}

/* The folder of `path` ("." when it has none), into dir[size]. */
static void folder_of(const char *path, char *dir, size_t size) {
  const char *slash = strrchr(path, '/');
  if (!slash)
    snprintf(dir, size, ".");
  else
    snprintf(dir, size, "%.*s", slash == path ? 1 : (int)(slash - path), path);
}

/* A rename, or the removal of a name, is on the disk once its folder is synced. */
static void sync_folder(const char *path) {
  char dir[4096 + 16];
  folder_of(path, dir, sizeof dir);
  const int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  if (fsync(fd) != 0) {
    /* a file system that cannot sync a folder: the rename holds for a killed process */
  }
  close(fd);
}

/* Whether `suffix` (what follows DIR/NAME) is a name of the run's: no folder, no line. */
static int plain_suffix(const char *suffix) {
  return suffix[0] && strlen(suffix) < SUFFIX_MAX && !strpbrk(suffix, "/\n");
}

/* The regular file at `path` (no link followed): its size and a 64-bit FNV-1a hash of its
 * first and last MiB (of all of it when smaller), which tells files of one size apart
 * (another run's figure or run file differs in its headers); 0 when it cannot be read. */
static int fingerprint(const char *path, unsigned long long *size, unsigned long long *hash) {
  enum { SAMPLE = 1 << 20 };
  struct stat info;
  const int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return 0;
  unsigned char *buffer = malloc(SAMPLE);
  int ok = buffer && fstat(fd, &info) == 0 && S_ISREG(info.st_mode);
  unsigned long long h = 14695981039346656037ull;
  const off_t length = ok ? info.st_size : 0;
  const off_t starts[2] = {0, length > SAMPLE ? length - SAMPLE : 0};
  for (int part = 0; ok && part < (length > SAMPLE ? 2 : 1); ++part) {
    const size_t want = (size_t)(length - starts[part] < SAMPLE ? length - starts[part] : SAMPLE);
    ok = pread(fd, buffer, want, starts[part]) == (ssize_t)want;
    for (size_t i = 0; ok && i < want; ++i)
      h = (h ^ buffer[i]) * 1099511628211ull;
  }
  free(buffer);
  close(fd);
  *size = (unsigned long long)length;
  *hash = h;
  return ok;
}

int rtm_io_journal_write(const char *journal, const rtm_io_journal_entry_t *entries, int count) {
  static const char *const verbs[] = {"put", "drop", "aside"};
  char partial[4096 + 32];
  const size_t prefix = strlen(journal) - strlen(".commit");
  char *text = malloc(JOURNAL_MAX);
  size_t length = 0;
  if (!text) {
    rtm_log_error("out of memory for the journal %s", journal);
    return RTM_ERR_NOMEM;
  }
  length = (size_t)snprintf(text, JOURNAL_MAX, "%s", journal_magic);
  for (int k = 0; k < count; ++k) {
    const char *path = entries[k].path, *suffix = path + prefix;
    if (strlen(path) <= prefix || strncmp(path, journal, prefix) != 0 || !plain_suffix(suffix) ||
        length + SUFFIX_MAX + 16 >= JOURNAL_MAX) {
      rtm_log_error("%s is no output of the name of %s: not journaled", path, journal);
      free(text);
      return RTM_ERR_INTERNAL;
    }
    /* an aside with the file at its put's name now, the earlier file it links, known by its
     * size and a hash of its first and last MiB (probe G1: a run killed before its link
     * leaves the recovery that file to know; not by its inode, which a file written at the
     * name after a removal may get again, H1, nor its times, which a copy or a coarse clock
     * changes or repeats, H2, I1, I3) */
    char put[4096 + SUFFIX_MAX];
    unsigned long long size = 0, hash = 0;
    snprintf(put, sizeof put, "%s", path);
    char *replaced = strstr(put + prefix, ".replaced");
    if (replaced) *replaced = '\0';
    if (entries[k].verb == RTM_IO_JOURNAL_ASIDE && replaced && fingerprint(put, &size, &hash))
      length += (size_t)snprintf(text + length, JOURNAL_MAX - length, "%s %s %llu %016llx\n",
                                 verbs[entries[k].verb], suffix, size, hash);
    else
      length += (size_t)snprintf(text + length, JOURNAL_MAX - length, "%s %s\n",
                                 verbs[entries[k].verb], suffix);
  }
  /* the journal is whole where it is found: written aside, synced, renamed */
  int status = RTM_OK;
  snprintf(partial, sizeof partial, "%s.partial", journal);
  unlink(partial); /* under the name lock: a killed run's */
  const int fd = open(partial, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  int error = fd < 0 ? errno : 0; /* the first failure's, kept past the calls after it */
  if (!error) {
    const ssize_t wrote = write(fd, text, length);
    error = wrote < 0 ? errno : wrote != (ssize_t)length ? ENOSPC : fsync(fd) != 0 ? errno : 0;
    if (close(fd) != 0 && !error) error = errno;
  }
  if (!error && rename(partial, journal) != 0) error = errno;
  if (error) {
    rtm_log_error("cannot write %s (written as %s, then renamed), the journal of the run's "
                  "renames: %s",
                  journal, partial, strerror(error));
    if (fd >= 0) unlink(partial);
    status = RTM_ERR_IO;
  } else {
    sync_folder(journal);
  }
  free(text);
  return status;
}

void rtm_io_journal_remove(const char *journal) {
  if (unlink(journal) == 0)
    sync_folder(journal);
  else if (errno != ENOENT) /* the next run would take the finished commit for a killed one */
    rtm_log_warning("cannot remove %s, the journal of a commit that is finished: %s; remove it "
                    "by hand",
                    journal, strerror(errno));
}

/* ---- finishing a dead run's commit ---- */

/* A name of the run's outputs, never the lock or the journal themselves. */
static int own_suffix(const char *suffix) {
  return plain_suffix(suffix) && strcmp(suffix, ".lock") != 0 && strncmp(suffix, ".commit", 7) != 0;
}

/* SUFFIX.replaced or SUFFIX.replaced.N: a name an earlier file was linked under. */
static int replaced_suffix(const char *suffix) {
  const char *replaced = strstr(suffix, ".replaced");
  if (!replaced || replaced == suffix) return 0;
  const char *rest = replaced + strlen(".replaced");
  return rest[0] == '\0' ||
         (rest[0] == '.' && rest[1] && strspn(rest + 1, "0123456789") == strlen(rest + 1));
}

int rtm_io_run_bookkeeping_name(const char *path) {
  static const char *const endings[] = {".lock", ".commit", ".partial", ".resume.h5"};
  const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
  const size_t length = strlen(base);
  for (size_t k = 0; k < sizeof endings / sizeof endings[0]; ++k) {
    const size_t n = strlen(endings[k]);
    if (length >= n && strcmp(base + length - n, endings[k]) == 0) return 1;
  }
  /* a file written aside (PATH.partial.XXXXXX.EXT) or linked aside with a number */
  return replaced_suffix(base) || strstr(base, ".partial.") || strstr(base, ".replaced.");
}

typedef struct {
  rtm_io_journal_verb_t verb;
  char path[4096 + SUFFIX_MAX];
  int known; /* an aside's: the earlier file's size and hash (fingerprint) given */
  unsigned long long size, hash;
} entry_t;

/* The names a run's commit drops (an earlier run's files it does not write:
 * rtm_io_outputs_drop): a SEG-Y copy, a migration's figures, a sidecar. No other. */
static int droppable_suffix(const char *suffix) {
  static const char *const droppable[] = {".sgy", "_image_x.png", "_image_y.png", "_image_z.png",
                                          ".xmf"};
  for (size_t k = 0; k < sizeof droppable / sizeof droppable[0]; ++k)
    if (strcmp(suffix, droppable[k]) == 0) return 1;
  return 0;
}

/* What is wrong with the parsed entries as a whole (a `drop` of a name a `put` renames, an
 * `aside` of no `put`'s name, no `put` at all) into why[size], and the line at fault; 0
 * when nothing is. */
static int check_entries(const entry_t *entries, int count, size_t prefix, char *why, size_t size) {
  int puts = 0;
  for (int k = 0; k < count; ++k) {
    const entry_t *e = &entries[k];
    int owner = 0; /* an aside's put */
    puts += e->verb == RTM_IO_JOURNAL_PUT;
    for (int j = 0; e->verb != RTM_IO_JOURNAL_PUT && j < count; ++j) {
      const entry_t *put = &entries[j];
      const size_t length = strlen(put->path);
      if (put->verb != RTM_IO_JOURNAL_PUT) continue;
      if (e->verb == RTM_IO_JOURNAL_DROP && strcmp(put->path, e->path) == 0) {
        snprintf(why, size, "it drops %s, which line %d renames into place", e->path + prefix,
                 j + 2);
        return k + 2;
      }
      owner = owner || (strncmp(e->path, put->path, length) == 0 &&
                        strncmp(e->path + length, ".replaced", 9) == 0);
    }
    if (e->verb == RTM_IO_JOURNAL_ASIDE && !owner) {
      snprintf(why, size, "it keeps %s aside, the earlier file of no name it renames",
               e->path + prefix);
      return k + 2;
    }
  }
  if (!puts) {
    snprintf(why, size, "it lists no rename (no put line)");
    return count + 1;
  }
  return 0;
}

/* The entries of the journal at `journal` into entries[ENTRIES_MAX]; their count, or -1
 * (said, with the line at fault) when it is not a journal rtm3d wrote: a line of another
 * shape, a name not of the name's, a `drop` of a name no run drops (forged or damaged, it
 * would remove NAME.h5: probe E8), a `drop` of a name it renames, no `put`. */
static int read_journal(const char *journal, const char *key, entry_t *entries) {
  const size_t prefix = strlen(journal) - strlen(".commit");
  char *text = malloc(JOURNAL_MAX + 1), why[SUFFIX_MAX + 128] = "";
  int count = 0, line_number = 0;
  /* O_NONBLOCK: a FIFO at the name opens at once (and is refused below), not waiting for a
   * writer (probe E4: model, migrate and makemodel hung there) */
  const int fd = text ? open(journal, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) : -1;
  struct stat info;
  ssize_t got = -1;
  if (fd >= 0 && fstat(fd, &info) == 0 && S_ISREG(info.st_mode))
    got = read(fd, text, JOURNAL_MAX + 1);
  if (fd >= 0) close(fd);
  if (got < 0 || got > JOURNAL_MAX)
    snprintf(why, sizeof why, "it cannot be read, or is no regular file of its size");
  if (!why[0]) {
    text[got] = '\0';
    line_number = 1;
    if (strncmp(text, journal_magic, strlen(journal_magic)) != 0)
      snprintf(why, sizeof why, "it does not start as one");
  }
  for (char *line = why[0] ? NULL : text + strlen(journal_magic); line && *line;) {
    char *end = strchr(line, '\n'), *space = strchr(line, ' ');
    ++line_number;
    if (!end || !space || space > end || count == ENTRIES_MAX) {
      snprintf(why, sizeof why, "a line is not one of a journal");
      break;
    }
    *end = *space = '\0';
    char *suffix = space + 1;
    entry_t *e = &entries[count++];
    e->known = 0;
    char *numbers = strchr(suffix, ' ');
    if (numbers && strcmp(line, "aside") == 0) { /* "aside SUFFIX SIZE HASH" */
      *numbers++ = '\0';
      int used = -1;
      const char *space_at = strchr(numbers, ' ');
      if (!space_at || strspn(numbers, "0123456789") != (size_t)(space_at - numbers) ||
          strlen(space_at + 1) != 16 || strspn(space_at + 1, "0123456789abcdef") != 16 ||
          sscanf(numbers, "%llu %llx%n", &e->size, &e->hash, &used) != 2 || numbers[used] != '\0') {
        snprintf(why, sizeof why,
                 "an aside line's fields are not a size and a 16-digit hexadecimal hash");
        break;
      }
      e->known = 1;
    }
    const int put = strcmp(line, "put") == 0, drop = strcmp(line, "drop") == 0,
              aside = strcmp(line, "aside") == 0;
    e->verb = put ? RTM_IO_JOURNAL_PUT : drop ? RTM_IO_JOURNAL_DROP : RTM_IO_JOURNAL_ASIDE;
    if (!(put || drop || aside) || !own_suffix(suffix) || (aside && !replaced_suffix(suffix))) {
      snprintf(why, sizeof why, "it names a file that is not one of the name's");
      break;
    }
    if (drop && !droppable_suffix(suffix)) {
      snprintf(why, sizeof why,
               "it drops %.*s, a name no run drops (only .sgy, _image_{x,y,z}.png, .xmf)",
               SUFFIX_MAX, suffix);
      break;
    }
    snprintf(e->path, sizeof e->path, "%.*s%s", (int)prefix, journal, suffix);
    line = end + 1;
  }
  if (!why[0]) {
    const int line = check_entries(entries, count, prefix, why, sizeof why);
    if (line) line_number = line;
  }
  free(text);
  if (!why[0]) return count;
  rtm_log_error("%s:%d: not a journal of a run's renames that rtm3d wrote (%s): it is left as "
                "it is, and the name is not used until it is gone; remove it, or choose "
                "another %s",
                journal, line_number, why, key);
  return -1;
}

/* Whether a and b are the same regular file (both exist; a link at either name is no
 * file of a run's: probe G5). */
static int same_inode(const char *a, const char *b) {
  struct stat first, second;
  return lstat(a, &first) == 0 && lstat(b, &second) == 0 && S_ISREG(first.st_mode) &&
         first.st_dev == second.st_dev && first.st_ino == second.st_ino;
}

/* Whether the regular file at `path` is the one an aside entry recorded (its content: a
 * copy of it counts as it). */
static int is_recorded(const char *path, const entry_t *aside) {
  unsigned long long size = 0, hash = 0;
  return aside->known && fingerprint(path, &size, &hash) && size == aside->size &&
         hash == aside->hash;
}

/* The entry of the name the journal links the earlier file at the `put`'s name under
 * (PATH.replaced[.N]); NULL when there was none (no --force, or no earlier file). */
static const entry_t *aside_of(const entry_t *put, const entry_t *entries, int count) {
  const size_t length = strlen(put->path);
  for (int k = 0; k < count; ++k)
    if (entries[k].verb == RTM_IO_JOURNAL_ASIDE &&
        strncmp(entries[k].path, put->path, length) == 0 &&
        strncmp(entries[k].path + length, ".replaced", 9) == 0)
      return &entries[k];
  return NULL;
}

static const char *kept_aside(const entry_t *put, const entry_t *entries, int count) {
  const entry_t *aside = aside_of(put, entries, count);
  return aside ? aside->path : NULL;
}

/* Whether the file at the put's name is the earlier file the killed run saw and replaces:
 * the one its aside entry recorded (linked aside yet or not), or, in a journal without the
 * record, the same file as the aside name. */
static int earlier_at(const entry_t *put, const entry_t *entries, int count) {
  const entry_t *aside = aside_of(put, entries, count);
  if (!aside) return 0;
  return aside->known ? is_recorded(put->path, aside) : same_inode(put->path, aside->path);
}

/* Whether every put that replaces an earlier file (its aside recorded) still holds that
 * earlier file's content at its name: no rename of the commit shows (all partials removed
 * by another hand before the first link; or runs of the same outputs, where finishing
 * changes nothing). */
static int nothing_renamed(const entry_t *entries, int count) {
  int replacing = 0;
  for (int k = 0; k < count; ++k) {
    if (entries[k].verb != RTM_IO_JOURNAL_PUT || !aside_of(&entries[k], entries, count)) continue;
    ++replacing;
    if (!earlier_at(&entries[k], entries, count)) return 0;
  }
  return replacing > 0;
}

/* Whether a put's partial still waits under its own name (a rename the killed run had not
 * made yet: it had not reached its clean-up of the links aside). */
static int renames_pending(const entry_t *entries, int count) {
  char partial[sizeof entries[0].path + 16];
  for (int k = 0; k < count; ++k) {
    if (entries[k].verb != RTM_IO_JOURNAL_PUT) continue;
    snprintf(partial, sizeof partial, "%s.partial", entries[k].path);
    if (access(partial, F_OK) == 0 && !same_inode(partial, entries[k].path)) return 1;
  }
  return 0;
}

/* Whether the commit shows none of its renames yet, as a whole: a partial still waits
 * under its own name, or every name still holds its earlier file (once for the journal:
 * it reads each earlier file's fingerprint). */
static int renames_unmade(const entry_t *entries, int count) {
  return renames_pending(entries, count) || nothing_renamed(entries, count);
}

/* What of a `put` cannot be finished, into why[size]: its partial gone and PATH absent, or
 * still the earlier file (`unmade`: renames_unmade of the journal); CANNOT_FINISH. Or a
 * file at PATH that is not the earlier file the journal records while its partial waits;
 * BLOCKED. FINISHES ("") when it can. */
enum { FINISHES, CANNOT_FINISH, BLOCKED };
static int check_put(const entry_t *put, const entry_t *entries, int count, int unmade, char *why,
                     size_t size) {
  char partial[sizeof put->path + 16];
  struct stat info;
  const char *aside = kept_aside(put, entries, count);
  why[0] = '\0';
  snprintf(partial, sizeof partial, "%s.partial", put->path);
  if (lstat(partial, &info) == 0) {
    if (!S_ISREG(info.st_mode)) {
      snprintf(why, size, "%s is not a regular file", partial);
      return CANNOT_FINISH;
    }
    /* the same file twice: a rename by link and unlink killed between the two (made); else
     * a file at PATH is replaced only when it is the earlier file the journal records
     * (probes F1, H1), not one put there since */
    if (lstat(put->path, &info) == 0 && !same_inode(partial, put->path) &&
        !earlier_at(put, entries, count)) {
      snprintf(why, size, "%s", put->path);
      return BLOCKED;
    }
    return FINISHES;
  }
  if (lstat(put->path, &info) != 0) {
    snprintf(why, size, "%s and %s are both gone", partial, put->path);
    return CANNOT_FINISH;
  }
  /* its partial gone: renamed, unless the earlier file still stands at both names (a file of
   * the same content as the earlier one, a sidecar of the same grid, was renamed), or it was
   * never linked aside while renames are still to come: a run links a file aside before its
   * rename and removes the links only after its last rename, so the partial was removed by
   * another hand (probe J1: the set was reported finished, mixed) */
  struct stat linked;
  if (aside && (same_inode(put->path, aside) || (lstat(aside, &linked) != 0 && unmade))) {
    snprintf(why, size, "%s is gone and %s is still the earlier run's", partial, put->path);
    return CANNOT_FINISH;
  }
  return FINISHES;
}

/* Whether the file at a `drop`'s name is one rtm3d wrote (the checks of --force's drops:
 * rtm_app_drop_other_outputs): a SEG-Y whose text header names the run file NAME.h5
 * (`prefix`: DIR/NAME), a figure with rtm3d's PNG mark, a sidecar of NAME.h5. */
static int dropped_is_rtm3d(const entry_t *drop, size_t prefix) {
  const size_t length = strlen(drop->path);
  char h5[sizeof drop->path + 4];
  snprintf(h5, sizeof h5, "%.*s.h5", (int)prefix, drop->path);
  if (length > 4 && strcmp(drop->path + length - 4, ".sgy") == 0)
    return rtm_segy_written_from(drop->path, h5);
  if (length > 4 && strcmp(drop->path + length - 4, ".xmf") == 0)
    return rtm_xdmf_written_by_rtm3d(drop->path);
  return rtm_png_written_by_rtm3d(drop->path);
}

/* Whether the `aside` entry is the link aside of a put this recovery replaced, seen to be
 * the same file as the put's name before (verified[put]). */
static int aside_verified(const entry_t *aside, const entry_t *entries, int count,
                          const char *verified) {
  for (int k = 0; k < count; ++k)
    if (entries[k].verb == RTM_IO_JOURNAL_PUT && verified[k] &&
        kept_aside(&entries[k], entries, count) == aside->path)
      return 1;
  return 0;
}

/* Whether the file at an `aside` name is one rtm3d wrote at its put's name: a run file (the
 * run's NAME.h5, its resume state), a report (its first key and command_line), a sidecar, a
 * SEG-Y from NAME.h5 (`prefix`: DIR/NAME), a figure with rtm3d's mark. A forged aside of a
 * user's file is none of them (probe F1). */
static int aside_is_rtm3d(const entry_t *aside, size_t prefix) {
  char base[sizeof aside->path], h5[sizeof aside->path + 4];
  snprintf(base, sizeof base, "%s", aside->path);
  char *replaced = strstr(base + prefix, ".replaced");
  if (!replaced) return 0;
  *replaced = '\0';
  const size_t length = strlen(base);
  snprintf(h5, sizeof h5, "%.*s.h5", (int)prefix, aside->path);
  if (length > 3 && strcmp(base + length - 3, ".h5") == 0)
    return rtm_io_run_file_written(aside->path);
  if (length > 4 && strcmp(base + length - 4, ".sgy") == 0)
    return rtm_segy_written_from(aside->path, h5);
  if (length > 4 && strcmp(base + length - 4, ".xmf") == 0)
    return rtm_xdmf_written_by_rtm3d(aside->path);
  if (length > 4 && strcmp(base + length - 4, ".png") == 0)
    return rtm_png_written_by_rtm3d(aside->path);
  if (length > 5 && strcmp(base + length - 5, ".json") == 0)
    return rtm_report_written_by_rtm3d(aside->path);
  return 0;
}

/* The commit of `entries` finished: the renames left made, the files dropped (those rtm3d
 * wrote) and the links aside removed (regular files only); the names of the outputs this
 * call renamed into place into done[size] (probe E9: not those it could not). */
static void roll_forward(const entry_t *entries, int count, size_t prefix, char *done,
                         size_t size) {
  char partial[sizeof entries[0].path + 16];
  char verified[ENTRIES_MAX] = {0}; /* a put whose aside name this call saw linked */
  size_t length = 0;
  done[0] = '\0';
  for (int k = 0; k < count; ++k) {
    const entry_t *e = &entries[k];
    struct stat info;
    if (e->verb != RTM_IO_JOURNAL_PUT) continue;
    snprintf(partial, sizeof partial, "%s.partial", e->path);
    if (lstat(partial, &info) != 0) continue; /* the killed run renamed it */
    if (same_inode(partial, e->path)) {       /* linked, its partial name left */
      unlink(partial);
      continue;
    }
    /* an earlier file the dead run saw was linked aside (--force, check_put: the aside name
     * is the same file): it is replaced, and its aside name, so proven, goes below; with no
     * such link nothing is replaced */
    const int replace = earlier_at(e, entries, count);
    if (replace) verified[k] = 1;
    /* linked aside first, as the killed run would have: a recovery killed after this rename
     * leaves the next one the link that says the rename was made (probe K1) */
    const entry_t *aside = aside_of(e, entries, count);
    struct stat linked;
    if (replace && aside && lstat(aside->path, &linked) != 0 && link(e->path, aside->path) != 0)
      rtm_log_warning("cannot link %s aside as %s: %s", e->path, aside->path, strerror(errno));
    if ((replace ? rename(partial, e->path) : rtm_io_rename_noreplace(partial, e->path)) != 0) {
      rtm_log_warning("cannot rename %s to %s: %s%s", partial, e->path, strerror(errno),
                      errno == EEXIST ? " (a file the killed run did not see; the run's stays "
                                        "as its .partial)"
                                      : "");
      continue;
    }
    const int wrote = snprintf(done + length, size - length, "%s%s", length ? ", " : "", e->path);
    if (wrote > 0 && (size_t)wrote < size - length) length += (size_t)wrote;
  }
  for (int k = 0; k < count; ++k) {
    const entry_t *e = &entries[k];
    struct stat info;
    if (e->verb == RTM_IO_JOURNAL_PUT || lstat(e->path, &info) != 0 || !S_ISREG(info.st_mode))
      continue;
    if (e->verb == RTM_IO_JOURNAL_DROP && !dropped_is_rtm3d(e, prefix))
      rtm_log_warning("%s stays: the journal drops it, but it is no file rtm3d wrote", e->path);
    else if (e->verb == RTM_IO_JOURNAL_ASIDE &&
             (e->known
                  ? !is_recorded(e->path, e)
                  : !aside_verified(e, entries, count, verified) && !aside_is_rtm3d(e, prefix)))
      rtm_log_warning("%s stays: the journal keeps it aside, but this recovery could not see "
                      "that it is the earlier file the killed run replaced, nor a file rtm3d "
                      "wrote (remove it when it is not needed)",
                      e->path);
    else
      unlink(e->path);
  }
}

/* A migration's commit finished: its resume state, which the killed run removed next once
 * its image was in place, removed (under the name's lock it is that run's; probe F5). */
static void drop_finished_state(const char *journal, const entry_t *entries, int count) {
  const size_t prefix = strlen(journal) - strlen(".commit");
  char h5[4096 + 8], state[4096 + 16];
  int image = 0;
  snprintf(h5, sizeof h5, "%.*s.h5", (int)prefix, journal);
  snprintf(state, sizeof state, "%.*s.resume.h5", (int)prefix, journal);
  for (int k = 0; k < count; ++k)
    image = image || (entries[k].verb == RTM_IO_JOURNAL_PUT && strcmp(entries[k].path, h5) == 0);
  struct stat info;
  if (!image || lstat(state, &info) != 0 || !S_ISREG(info.st_mode) ||
      !rtm_io_migration_file_written(h5) || !rtm_io_run_file_written(state))
    return;
  if (unlink(state) == 0)
    rtm_log_warning("removed %s, the resume state of the migration whose commit was finished "
                    "(its image is in place)",
                    state);
}

int rtm_io_journal_recover(const char *lock_path, const char *key, const char *name) {
  char journal[4096 + 32], why[2 * 4096 + 64], done[8192];
  struct stat info;
  if (rtm_io_journal_path(lock_path, journal, sizeof journal) != RTM_OK) return RTM_ERR_INTERNAL;
  if (lstat(journal, &info) != 0) return RTM_OK; /* the usual case: no run died mid-commit */
  entry_t *entries = malloc(ENTRIES_MAX * sizeof *entries);
  if (!entries) {
    rtm_log_error("out of memory reading %s", journal);
    return RTM_ERR_NOMEM;
  }
  const int count = read_journal(journal, key, entries);
  int status = count < 0 ? RTM_ERR_CONFIG : RTM_OK;
  /* every put checked before any rename: one that cannot be made means none is (probe E9) */
  const int unmade = status == RTM_OK && renames_unmade(entries, count);
  for (int k = 0; status == RTM_OK && k < count; ++k) {
    if (entries[k].verb != RTM_IO_JOURNAL_PUT) continue;
    const int verdict = check_put(&entries[k], entries, count, unmade, why, sizeof why);
    if (verdict == CANNOT_FINISH)
      rtm_log_error("%s: a run of %s '%s' was killed while it renamed its outputs into place, "
                    "and its commit cannot be finished: %s. Nothing was changed; the outputs "
                    "of that name may be part of one run and part of another: remove them and "
                    "%s, or choose another %s",
                    journal, key, name, why, journal, key);
    else if (verdict == BLOCKED)
      rtm_log_error("%s: a run of %s '%s' was killed while it renamed its outputs into place, "
                    "its files complete, and %s is not the file that run saw there (a file put "
                    "there since, or a journal damaged; it replaces only the earlier file its "
                    "journal records): none of its renames was made, its "
                    "files stay as .partial and the journal stays. Move %s away and run again "
                    "to finish that commit, or remove %s and that run's .partial files to give "
                    "it up, or choose another %s",
                    journal, key, name, why, why, journal, key);
    if (verdict != FINISHES) status = RTM_ERR_CONFIG;
  }
  if (status == RTM_OK) {
    roll_forward(entries, count, strlen(journal) - strlen(".commit"), done, sizeof done);
    drop_finished_state(journal, entries, count);
    sync_folder(journal);
    rtm_io_journal_remove(journal);
    int asides = 0;
    for (int k = 0; k < count; ++k)
      asides += entries[k].verb == RTM_IO_JOURNAL_ASIDE;
    rtm_log_warning("a run of %s '%s' was killed while it renamed its outputs into place, its "
                    "files complete: its commit is finished (renamed now: %s)%s",
                    key, name, done[0] ? done : "none, the killed run had made them all",
                    asides ? ", and the earlier files it kept aside removed (those it could "
                             "tell for them)"
                           : "");
  }
  free(entries);
  return status;
}

/* ---- a killed run's temporary files ---- */

/* Whether `entry`, a name in the folder, is the file rtm_io_aside_create makes beside
 * NAME<tail> for one of the `tails`: NAME<tail>.partial.XXXXXX<EXT>, EXT the tail's
 * extension (mkstemps' six letters or digits): NAME.json.partial.partial.XXXXXX.partial
 * beside a run's partial report, NAME.json.partial.XXXXXX.json beside bench's report. */
static int run_temp(const char *entry, const char *name, const char *const *tails, int count) {
  const size_t stem = strlen(name);
  if (strncmp(entry, name, stem) != 0) return 0;
  for (int k = 0; k < count; ++k) {
    const size_t tail = strlen(tails[k]);
    const char *rest = entry + stem + tail, *extension = strrchr(tails[k], '.');
    if (strncmp(entry + stem, tails[k], tail) != 0 || strncmp(rest, ".partial.", 9) != 0) continue;
    rest += 9;
    int letters = 0;
    while (letters < 6 && ((rest[letters] >= 'a' && rest[letters] <= 'z') ||
                           (rest[letters] >= 'A' && rest[letters] <= 'Z') ||
                           (rest[letters] >= '0' && rest[letters] <= '9')))
      ++letters;
    if (letters == 6 && strcmp(rest + 6, extension ? extension : "") == 0) return 1;
  }
  return 0;
}

/* Whether `info` is the file at one of `keep` [kept]. */
static int kept_file(const struct stat *info, const char *const *keep, int kept) {
  struct stat other;
  for (int k = 0; k < kept; ++k)
    if (keep[k] && keep[k][0] && stat(keep[k], &other) == 0 && other.st_dev == info->st_dev &&
        other.st_ino == info->st_ino)
      return 1;
  return 0;
}

void rtm_io_remove_run_temps(const char *dir, const char *name, const char *const *tails, int count,
                             const char *const *keep, int kept) {
  DIR *folder = opendir(dir);
  struct dirent *entry;
  char path[4096 + 256];
  while (folder && (entry = readdir(folder))) {
    struct stat info;
    if (!run_temp(entry->d_name, name, tails, count) ||
        (size_t)snprintf(path, sizeof path, "%s/%s", dir, entry->d_name) >= sizeof path ||
        lstat(path, &info) != 0 || !S_ISREG(info.st_mode) || kept_file(&info, keep, kept))
      continue;
    if (unlink(path) == 0)
      rtm_log_warning("removed %s, a temporary file of a run of this name that was killed", path);
  }
  if (folder) closedir(folder);
}
