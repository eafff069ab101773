#define _DEFAULT_SOURCE /* flock, O_CLOEXEC */
/* kernel.* = auto: the table of measured winners and the tune cache (rtm_kernel_choice.h). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rtm_kernel_choice.h"
#include "rtm_status.h"

typedef struct {
  int min_cc;      /* 10 x major + minor; 0: any GPU */
  const char *gpu; /* a whole word of the device's name ("H200"); "": any GPU of min_cc */
  const char *equation, *precision;
  int size_class;
  rtm_kernel_shape_t shape;
  double mcells;        /* what the sweep measured; 0: not measured on such a GPU */
  const char *measured; /* the device and date, or why the row is a guess */
} table_row_t;

/* kernel_table.csv (this folder), turned into rows at configure time (CMakeLists.txt). */
static const table_row_t table[] = {
#include "kernel_table.h"
};

enum { TABLE_ROWS = (int)(sizeof table / sizeof table[0]) };

int rtm_kernel_table_rows(void) {
  return TABLE_ROWS;
}

int rtm_kernel_size_class(const int n[3]) {
  const double cells = (double)n[0] * n[1] * n[2];
  const double edge_log2 = cells > 0.0 ? log2(cells) / 3.0 : 0.0;
  int exponent = (int)lround(edge_log2);
  if (exponent < 6) exponent = 6;
  if (exponent > 11) exponent = 11;
  return 1 << exponent;
}

void rtm_kernel_key_text(const rtm_kernel_key_t *key, char *text, size_t size) {
  snprintf(text, size, "%s | sm_%d | driver %d.%d | %s | %s | %d^3", key->gpu, key->cc,
           key->driver / 1000, key->driver % 1000 / 10, rtm_equation_name(key->equation),
           rtm_precision_name(key->precision), key->size_class);
}

void rtm_kernel_shape_text(const rtm_kernel_shape_t *shape, char *text, size_t size) {
  snprintf(text, size, "%.15s %d %dx%d %d", shape->halo, shape->stages, shape->block[0],
           shape->block[1], shape->zblock);
}

int rtm_kernel_shape_parse(const char *text, rtm_kernel_shape_t *shape) {
  rtm_kernel_shape_t s;
  char tail;
  memset(&s, 0, sizeof s);
  if (sscanf(text, "%15s %d %dx%d %d %c", s.halo, &s.stages, &s.block[0], &s.block[1], &s.zblock,
             &tail) != 5)
    return 0;
  if (strcmp(s.halo, "sync") && strcmp(s.halo, "ldgsts") && strcmp(s.halo, "tma")) return 0;
  if (s.stages < 1 || s.stages > 4 || s.zblock < 0) return 0;
  for (int a = 0; a < 2; ++a)
    if (s.block[a] < 1 || s.block[a] > 1024) return 0;
  *shape = s;
  return 1;
}

int rtm_kernel_max_stages(const char *halo, rtm_equation_t equation) {
  return strcmp(halo, "tma") == 0 && equation == RTM_EQUATION_ISO ? 4 : 3;
}

/* Whether `word` stands in `name` as a word of its own: "H200" in "NVIDIA H200" and "NVIDIA
 * H200 NVL", not in "NVIDIA GH200 480GB". */
static int names_word(const char *name, const char *word) {
  const size_t length = strlen(word);
  for (const char *at = strstr(name, word); at; at = strstr(at + 1, word))
    if ((at == name || at[-1] == ' ') && (at[length] == '\0' || at[length] == ' ')) return 1;
  return 0;
}

/* How far a row is from the key, compared field by field: the equation (vti may take a tti
 * row), the newest compute capability the GPU reaches, the precision (fp16 may take fp32),
 * the size class (log distance), then the device (a row measured on this GPU's kind before
 * one for any GPU of its compute capability). A row for another device is no row. */
typedef struct {
  int equation, cc, precision, size, gpu;
} distance_t;

static int row_distance(const table_row_t *row, const rtm_kernel_key_t *key, distance_t *d) {
  const char *equation = rtm_equation_name(key->equation);
  if (row->min_cc > key->cc) return 0;
  if (row->gpu[0] && !names_word(key->gpu, row->gpu)) return 0;
  if (strcmp(row->equation, equation) == 0)
    d->equation = 0;
  else if (key->equation == RTM_EQUATION_VTI && strcmp(row->equation, "tti") == 0)
    d->equation = 1;
  else
    return 0;
  d->cc = key->cc - row->min_cc;
  d->precision = strcmp(row->precision, rtm_precision_name(key->precision)) != 0;
  d->size = abs((int)lround(log2((double)row->size_class / key->size_class)));
  d->gpu = row->gpu[0] == '\0';
  return 1;
}

static int closer(const distance_t *a, const distance_t *b) {
  if (a->equation != b->equation) return a->equation < b->equation;
  if (a->cc != b->cc) return a->cc < b->cc;
  if (a->precision != b->precision) return a->precision < b->precision;
  if (a->size != b->size) return a->size < b->size;
  return a->gpu < b->gpu;
}

void rtm_kernel_table_lookup(const rtm_kernel_key_t *key, rtm_kernel_shape_t *shape, char *why,
                             size_t size) {
  const table_row_t *best = NULL;
  distance_t best_d = {0, 0, 0, 0, 0};
  for (int i = 0; i < TABLE_ROWS; ++i) {
    distance_t d;
    if (row_distance(&table[i], key, &d) && (!best || closer(&d, &best_d))) {
      best = &table[i];
      best_d = d;
    }
  }
  if (!best) { /* the table has rows for any GPU and each of iso and tti: never here */
    *shape = (rtm_kernel_shape_t){"ldgsts", 2, {32, 16}, 0};
    if (why) snprintf(why, size, "built-in fallback (solver/tuning/kernel_table.csv has no row)");
    return;
  }
  *shape = best->shape;
  if (why) {
    char text[64];
    rtm_kernel_shape_text(&best->shape, text, sizeof text);
    char device[64] = "";
    if (best->gpu[0]) snprintf(device, sizeof device, " %s", best->gpu);
    if (best->mcells > 0.0)
      snprintf(why, size, "table row sm_%d+%s %s %s %d^3 (%s: %.0f MCells/s on %s)", best->min_cc,
               device, best->equation, best->precision, best->size_class, text, best->mcells,
               best->measured);
    else
      snprintf(why, size, "table row sm_%d+%s %s %s %d^3 (%s: %s)", best->min_cc, device,
               best->equation, best->precision, best->size_class, text, best->measured);
  }
}

int rtm_kernel_cache_path(char *path, size_t size) {
  const char *dir = getenv("RTM3D_CACHE_DIR");
  if (dir && dir[0]) return snprintf(path, size, "%s/kernels.ini", dir) < (int)size;
  dir = getenv("XDG_CACHE_HOME");
  if (dir && dir[0]) return snprintf(path, size, "%s/rtm3d/kernels.ini", dir) < (int)size;
  dir = getenv("HOME");
  if (dir && dir[0]) return snprintf(path, size, "%s/.cache/rtm3d/kernels.ini", dir) < (int)size;
  return 0;
}

enum { LINE_MAX_CHARS = 512 };

/* The section name of a "[...]" line (the brackets and a trailing newline removed), or NULL
 * for any other line. */
static const char *section_of(char *line) {
  line[strcspn(line, "\r\n")] = '\0';
  const size_t n = strlen(line);
  if (n < 2 || line[0] != '[' || line[n - 1] != ']') return NULL;
  line[n - 1] = '\0';
  return line + 1;
}

/* "key = value" of a line inside a section: the value, or NULL when the key differs. */
static const char *value_of(const char *line, const char *key) {
  const size_t n = strlen(key);
  if (strncmp(line, key, n) != 0) return NULL;
  line += n;
  while (*line == ' ' || *line == '\t')
    ++line;
  if (*line != '=') return NULL;
  ++line;
  while (*line == ' ' || *line == '\t')
    ++line;
  return line;
}

int rtm_kernel_cache_lookup(const char *path, const rtm_kernel_key_t *key,
                            rtm_kernel_shape_t *shape, char *why, size_t size) {
  char wanted[LINE_MAX_CHARS], line[LINE_MAX_CHARS], mcells[64] = "", tuned[64] = "";
  int inside = 0, found = 0, shape_line = 0, number = 0;
  FILE *f = path ? fopen(path, "r") : NULL;
  if (!f) return 0;
  rtm_kernel_key_text(key, wanted, sizeof wanted);
  rtm_kernel_shape_t s;
  while (fgets(line, sizeof line, f)) {
    ++number;
    const char *name = section_of(line);
    if (name) {
      if (inside) break; /* the next section: ours is over */
      inside = strcmp(name, wanted) == 0;
      continue;
    }
    if (!inside) continue;
    const char *value;
    if ((value = value_of(line, "kernel"))) {
      shape_line = number;
      found = rtm_kernel_shape_parse(value, &s);
    } else if ((value = value_of(line, "mcells"))) {
      snprintf(mcells, sizeof mcells, "%s", value);
    } else if ((value = value_of(line, "tuned"))) {
      snprintf(tuned, sizeof tuned, "%s", value);
    }
  }
  fclose(f);
  if (inside && !found) {
    if (shape_line)
      rtm_log_warning("%s:%d: not a kernel shape (halo stages XxY zblock); ignoring this "
                      "entry (rtm3d tune rewrites it)",
                      path, shape_line);
    else
      rtm_log_warning("%s: section [%s] has no kernel line; ignoring it", path, wanted);
    return 0;
  }
  if (!found) return 0;
  *shape = s;
  if (why) {
    char text[64];
    rtm_kernel_shape_text(&s, text, sizeof text);
    snprintf(why, size, "tune cache %s (%s: %s MCells/s, tuned %s)", path, text,
             mcells[0] ? mcells : "?", tuned[0] ? tuned : "?");
  }
  return 1;
}

/* mkdir -p of the folder that holds `path`. */
static int make_parents(const char *path) {
  char dir[4096];
  if (snprintf(dir, sizeof dir, "%s", path) >= (int)sizeof dir) return -1;
  char *slash = strrchr(dir, '/');
  if (!slash || slash == dir) return 0;
  *slash = '\0';
  for (char *p = dir + 1; *p; ++p) {
    if (*p != '/') continue;
    *p = '\0';
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) return -1;
    *p = '/';
  }
  return mkdir(dir, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

int rtm_kernel_cache_store(const char *path, const rtm_kernel_key_t *key,
                           const rtm_kernel_shape_t *shape, double mcells) {
  int status = RTM_OK;
  char temp[4200], lock_path[4200], wanted[LINE_MAX_CHARS], line[LINE_MAX_CHARS], text[64],
      when[32];
  FILE *in = NULL, *out = NULL;
  int lock = -1;
  if (snprintf(temp, sizeof temp, "%s.%ld.tmp", path, (long)getpid()) >= (int)sizeof temp ||
      snprintf(lock_path, sizeof lock_path, "%s.lock", path) >= (int)sizeof lock_path)
    RTM_FAIL(RTM_ERR_IO, "tune cache %s: the path is too long", path);
  if (make_parents(path) != 0)
    RTM_FAIL(RTM_ERR_IO, "tune cache %s: cannot create its folder: %s", path, strerror(errno));
  /* one writer at a time (tunes of several GPUs at once): the read, rewrite and rename under
   * an exclusive lock of PATH.lock, else a rename drops what another writer added meanwhile */
  lock = open(lock_path, O_CREAT | O_RDWR | O_CLOEXEC, 0644);
  if (lock < 0)
    RTM_FAIL(RTM_ERR_IO, "tune cache %s: cannot open its lock %s: %s", path, lock_path,
             strerror(errno));
  while (flock(lock, LOCK_EX) != 0)
    if (errno != EINTR)
      RTM_FAIL(RTM_ERR_IO, "tune cache %s: cannot lock %s: %s", path, lock_path, strerror(errno));
  out = fopen(temp, "w");
  if (!out) RTM_FAIL(RTM_ERR_IO, "tune cache %s: cannot write %s: %s", path, temp, strerror(errno));
  rtm_kernel_key_text(key, wanted, sizeof wanted);
  in = fopen(path, "r");
  if (!in)
    fprintf(out, "# rtm3d tune: the fastest kernel.* shape measured on this machine, one\n"
                 "# section per GPU, compute capability, driver, equation, model precision\n"
                 "# and size class; kernel = halo stages block_x x block_y zblock.\n"
                 "# kernel.* = auto reads it; delete a section (or the file) to forget.\n");
  int skipping = 0;
  while (in && fgets(line, sizeof line, in)) {
    char copy[LINE_MAX_CHARS];
    snprintf(copy, sizeof copy, "%s", line);
    const char *name = section_of(copy);
    if (name) skipping = strcmp(name, wanted) == 0;
    if (!skipping) fputs(line, out);
  }
  const time_t now = time(NULL);
  struct tm utc;
  gmtime_r(&now, &utc);
  strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &utc);
  rtm_kernel_shape_text(shape, text, sizeof text);
  fprintf(out, "[%s]\nkernel = %s\nmcells = %.0f\ntuned = %s\n", wanted, text, mcells, when);
  /* on the disk before the rename: a crash after it finds the old cache or the new one,
   * never an empty file under the cache's name */
  errno = 0;
  const int write_error = fflush(out) != 0 || ferror(out) ? (errno ? errno : EIO) : 0;
  const int sync_error = write_error ? 0 : rtm_sync_data(fileno(out));
  const int close_error = fclose(out) != 0 ? errno : 0;
  out = NULL;
  if (write_error || close_error)
    RTM_FAIL(RTM_ERR_IO, "tune cache %s: writing %s failed: %s; the cache is as it was", path, temp,
             strerror(write_error ? write_error : close_error));
  if (sync_error)
    RTM_FAIL(RTM_ERR_IO,
             "tune cache %s: cannot put %s on the disk (fdatasync): %s; the cache is as it was",
             path, temp, strerror(sync_error));
  if (rename(temp, path) != 0)
    RTM_FAIL(RTM_ERR_IO, "tune cache %s: cannot replace it: %s", path, strerror(errno));
fail:
  if (in) fclose(in);
  if (out) fclose(out);
  if (status != RTM_OK) remove(temp);
  if (lock >= 0) close(lock); /* and with it the lock */
  return status;
}

void rtm_kernel_choose(const rtm_config_t *cfg, const rtm_kernel_key_t *key, const char *cache_path,
                       rtm_kernel_shape_t *shape, char *why, size_t size) {
  rtm_kernel_shape_t winner;
  char source[1024];
  memset(shape, 0, sizeof *shape); /* the halo's bytes past its end too: shapes compare whole */
  if (!rtm_kernel_cache_lookup(cache_path, key, &winner, source, sizeof source))
    rtm_kernel_table_lookup(key, &winner, source, sizeof source);
  const int auto_halo = strcmp(cfg->kernel.halo, "auto") == 0;
  const int any_auto = auto_halo || cfg->kernel.stages == RTM_CFG_AUTO_INT ||
                       cfg->kernel.block[0] == RTM_CFG_AUTO_INT ||
                       cfg->kernel.block[1] == RTM_CFG_AUTO_INT ||
                       cfg->kernel.zblock == RTM_CFG_AUTO_INT;
  snprintf(shape->halo, sizeof shape->halo, "%s", auto_halo ? winner.halo : cfg->kernel.halo);
  shape->stages = cfg->kernel.stages == RTM_CFG_AUTO_INT ? winner.stages : cfg->kernel.stages;
  /* a winner's stages past what another halo set explicitly has (iso tma's 4 under ldgsts):
   * that halo's most, rather than a refusal of a key left auto */
  const int most = rtm_kernel_max_stages(shape->halo, key->equation);
  if (cfg->kernel.stages == RTM_CFG_AUTO_INT && shape->stages > most) shape->stages = most;
  for (int a = 0; a < 2; ++a)
    shape->block[a] =
        cfg->kernel.block[a] == RTM_CFG_AUTO_INT ? winner.block[a] : cfg->kernel.block[a];
  shape->zblock = cfg->kernel.zblock == RTM_CFG_AUTO_INT ? winner.zblock : cfg->kernel.zblock;
  if (why) snprintf(why, size, "%s", any_auto ? source : "explicit");
}
