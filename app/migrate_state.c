#define _XOPEN_SOURCE 700 /* realpath */
/* migrate_state.c - the sums of a migration between its shots (migrate_run.h): read over
 * the shot groups, written slab by slab, saved after a shot to OUTPUT.resume.h5 when
 * rtm.resume_every seconds have passed and, when a stopped run starts again, resumed from it
 * once its config and input files are checked to be the ones the sums were made with. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h> /* access */

#include "migrate_run.h"
#include "rtm_imaging.h" /* rtm_sums_add */
#include "rtm_memory.h"  /* rtm_mem_host_large */
#include "rtm_mpi.h"
#include "rtm_status.h"

/* The datasets of the resume state, in the order of run->sums. */
static const char *const sum_names[4] = {"/image", "/image_lo", "/illumination",
                                         "/illumination_lo"};
/* With rtm.offset_lags, the gathers' sums beside them, in the order of run->gather_sums:
 * [ncip][nh][nh][nz] as /gathers/offset is. */
static const char *const gather_sum_names[2] = {"/gather_sums", "/gather_sums_lo"};

/* The value of `key` in [section] of echoed config text into `value` ("" when absent). */
static void echoed_value(const char *text, const char *section, const char *key, char *value,
                         size_t size) {
  const size_t section_length = strlen(section), key_length = strlen(key);
  int inside = 0;
  value[0] = '\0';
  for (const char *line = text; *line;) {
    const size_t end = strcspn(line, "\n");
    if (line[0] == '[')
      inside = end == section_length + 2 && strncmp(line + 1, section, section_length) == 0;
    else if (inside && strncmp(line, key, key_length) == 0 &&
             strncmp(line + key_length, " = ", 3) == 0) {
      snprintf(value, size, "%.*s", (int)(end - key_length - 3), line + key_length + 3);
      return;
    }
    line += end + (line[end] == '\n');
  }
}

/* Keys added since states were first saved, with the value that the builds before each
 * had without the key: at that value the key is left out of the record (resume_config), so
 * that those builds' states resume; a state without it resumed at another value is said to
 * need that one (describe_change). The record's end taper: 2026-12-02. */
static const struct {
  const char *section, *key, *before;
} added_keys[] = {{"rtm", "end_taper", "0"}};

/* The added keys at their earlier value dropped from a config text (resume_config's record,
 * or the echo an earlier build's state is compared with). */
static void drop_added_keys_at_before(char *text) {
  for (size_t i = 0; i < sizeof added_keys / sizeof added_keys[0]; ++i) {
    char value[64], name[128];
    echoed_value(text, added_keys[i].section, added_keys[i].key, value, sizeof value);
    if (strcmp(value, added_keys[i].before) != 0) continue;
    snprintf(name, sizeof name, "%s.%s", added_keys[i].section, added_keys[i].key);
    const char *const keys[] = {name};
    rtm_config_drop_keys(text, keys, 1);
  }
}

/* The first line where two resolved configs differ, as "section.key was A there and is B
 * now"; an added key the state's record lacks (added_keys) as such, with the value that
 * resumes it. */
static void describe_change(const char *saved_text, const char *now_text, char *text, size_t size) {
  const char *saved = saved_text, *now = now_text;
  char section[128] = "";
  snprintf(text, size, "the config text differs");
  for (size_t i = 0; i < sizeof added_keys / sizeof added_keys[0]; ++i) {
    char there[64], here[64];
    echoed_value(saved_text, added_keys[i].section, added_keys[i].key, there, sizeof there);
    echoed_value(now_text, added_keys[i].section, added_keys[i].key, here, sizeof here);
    if (there[0] || !here[0]) continue;
    snprintf(text, size,
             "%s.%s is %s now and not in the state's record: a build before the key wrote it, "
             "or this one with the key at %s, as those builds had it; resume with --set "
             "%s.%s=%s",
             added_keys[i].section, added_keys[i].key, here, added_keys[i].before,
             added_keys[i].section, added_keys[i].key, added_keys[i].before);
    return;
  }
  while (*saved || *now) {
    const size_t saved_length = strcspn(saved, "\n"), now_length = strcspn(now, "\n");
    if (saved[0] == '[')
      snprintf(section, sizeof section, "%.*s", (int)strcspn(saved + 1, "]"), saved + 1);
    if (saved_length != now_length || strncmp(saved, now, saved_length) != 0) {
      const size_t key_length = strcspn(saved, " =");
      if (key_length < saved_length && strncmp(saved, now, key_length + 3) == 0)
        snprintf(text, size, "%s.%.*s was %.*s there and is %.*s now", section, (int)key_length,
                 saved, (int)(saved_length - key_length - 3), saved + key_length + 3,
                 (int)(now_length - key_length - 3), now + key_length + 3);
      else
        snprintf(text, size, "\"%.*s\" there, \"%.*s\" now", (int)saved_length, saved,
                 (int)now_length, now);
      return;
    }
    saved += saved_length + (saved[saved_length] == '\n');
    now += now_length + (now[now_length] == '\n');
  }
}

/* A path as the file system resolves it (links, "./", the working folder), where it does;
 * as written where it does not (a file since removed is then told by its fingerprint). */
static void resolve_path(char *path, size_t size) {
  char *resolved = path[0] ? realpath(path, NULL) : NULL;
  if (resolved && strlen(resolved) < size) snprintf(path, size, "%s", resolved);
  free(resolved);
}

/* The keys that cannot change the sums a state holds: the room the run may take and the
 * codec's cost auto weighs (they weigh on the sums only through the reconstruction auto
 * picks, compared as resolved, and the count of checkpoints, whose recomputed states are the
 * stored ones to the bit; a state of a build before the cost's key resumes), the filters
 * applied to the summed image at the end (never to the sums), the angle gathers made from
 * the summed offset gathers at the end, and the shot groups (a state
 * holds every group's sums added, after the first completed_shots shots). */
static const char *const resume_free_keys[] = {
    "memory.limit_gb", "rtm.snapshot_codec_steps", "rtm.illumination", "rtm.illumination_eps",
    "rtm.laplacian",   "mpi.shot_groups",          "rtm.angles",       "rtm.angle_max"};
/* Without gathers (rtm.offset_lags = 0) their keys change no sum: dropped, so that a state
 * of a build before them resumes. With gathers they count: the state holds their sums. */
static const char *const gather_keys[] = {"rtm.offset_lags", "rtm.cip_x_step", "rtm.cip_y_step"};
/* The codec's rate changes the sums only where the snapshots are zfp: dropped otherwise, so
 * that a state of a build before it resumes. */
static const char *const codec_keys[] = {"rtm.snapshot_rate"};

/* With zfp snapshots the sums depend on the codec's format too (solver/grid/rtm_codec.h):
 * a line of its own, so that a state of a build whose codec coded each block to a fixed
 * number of bits (before 2026-11-30) is refused, not resumed into another codec's image. */
static const char codec_format[] = "[codec]\nformat = slabs coded to a common level\n";

static int append_codec_format(migrate_run_t *run) {
  const size_t length = strlen(run->resume_config);
  char *longer = realloc(run->resume_config, length + sizeof codec_format);
  if (!longer) return RTM_ERR_NOMEM;
  memcpy(longer + length, codec_format, sizeof codec_format);
  run->resume_config = longer;
  return RTM_OK;
}

/* The config as it bears on the sums, which a state records (root attribute resume_config)
 * and a resumed run must match: the resolved deck with the values auto stood for
 * (backend.name, rtm.reconstruction) and the paths resolved (another spelling of the same
 * file, a link to it or to its folder, is the same file), less the pacing keys
 * (rtm_config_drop_pacing) and resume_free_keys. */
static int resume_config(migrate_run_t *run) {
  int status = RTM_OK;
  rtm_config_t *cfg = malloc(sizeof *cfg);
  if (!cfg) RTM_FAIL(RTM_ERR_NOMEM, "out of memory");
  *cfg = run->cfg;
  snprintf(cfg->backend.name, sizeof cfg->backend.name, "%s",
           rtm_migration_backend(run->migration));
  const char *reconstruction = rtm_migration_reconstruction(run->migration);
  cfg->rtm.reconstruction = strcmp(reconstruction, "boundary") == 0     ? RTM_RECONSTRUCT_BOUNDARY
                            : strcmp(reconstruction, "checkpoint") == 0 ? RTM_RECONSTRUCT_CHECKPOINT
                                                                        : RTM_RECONSTRUCT_SNAPSHOTS;
  cfg->rtm.snapshot_precision = rtm_migration_snapshot_precision(run->migration);
  cfg->rtm.snapshot_rate = rtm_migration_snapshot_rate(run->migration);
  cfg->path[0] = '\0'; /* the deck's name: its keys are all in the text */
  char *const paths[] = {cfg->output.dir,        cfg->rtm.observed, cfg->model.file,
                         cfg->model.description, cfg->shots.file,   cfg->receivers.file};
  for (size_t i = 0; i < sizeof paths / sizeof paths[0]; ++i)
    resolve_path(paths[i], RTM_CONFIG_PATH_MAX);
  run->resume_config = rtm_config_echo_string(cfg);
  if (!run->resume_config) RTM_FAIL(RTM_ERR_NOMEM, "out of memory");
  rtm_config_drop_pacing(run->resume_config);
  rtm_config_drop_keys(run->resume_config, resume_free_keys,
                       sizeof resume_free_keys / sizeof resume_free_keys[0]);
  if (run->cfg.rtm.offset_lags == 0)
    rtm_config_drop_keys(run->resume_config, gather_keys,
                         sizeof gather_keys / sizeof gather_keys[0]);
  drop_added_keys_at_before(run->resume_config);
  if (cfg->rtm.snapshot_precision != RTM_PRECISION_ZFP)
    rtm_config_drop_keys(run->resume_config, codec_keys, sizeof codec_keys / sizeof codec_keys[0]);
  else
    RTM_TRY(append_codec_format(run));
fail:
  free(cfg);
  return status;
}

/* A slab's digest: for each of its planes two 32-bit hashes (two seeds) of the plane's float
 * bits and its global index, summed over the planes and over the shot group's ranks as
 * doubles (exact: below 2^53 for any grid). A value edited or damaged in the file, or planes
 * swapped, changes it; where the slabs are cut between ranks does not. */
static int slab_digest(const migrate_run_t *run, const float *slab, size_t first, size_t planes,
                       double digest[2]) {
  const size_t plane = (size_t)run->whole.n[0] * (size_t)run->whole.n[1];
  double sum0 = 0.0, sum1 = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : sum0, sum1)
  for (size_t k = 0; k < planes; ++k) {
    uint32_t h0 = 0x811c9dc5u ^ (uint32_t)(first + k), h1 = 0x9e3779b9u + (uint32_t)(first + k);
    const float *values = slab + k * plane;
    for (size_t i = 0; i < plane; ++i) {
      uint32_t bits;
      memcpy(&bits, values + i, sizeof bits);
      h0 = (h0 ^ bits) * 0x01000193u;
      h1 = (h1 + bits) * 0x85ebca6bu;
      h1 ^= h1 >> 13;
    }
    sum0 += (double)h0;
    sum1 += (double)h1;
  }
  digest[0] = sum0;
  digest[1] = sum1;
  return rtm_mpi_allreduce(run->mpi, digest, 2, RTM_MPI_SUM);
}

/* The gathers' digest, as slab_digest's for the volumes: this rank's planes of a float-pair
 * half [traces][nz_local] (run->gather_sums) hashed a depth at a time, each depth's two
 * 32-bit hashes summed over the traces modulo 2^32 (exact in any order, so the threads' split
 * does not count), mixed with its global index and summed over the depths and the ranks as
 * doubles. Where the slabs are cut does not change it; a value or two depths swapped do. */
static int gathers_digest(const migrate_run_t *run, const float *values, double digest[2]) {
  const size_t nz_local = (size_t)run->grid.nz_local, traces = run->gather_cells / nz_local;
  const size_t first = (size_t)run->grid.z_offset;
  enum { DEPTHS = 16 }; /* a thread's depths at a time: a cache line of each trace */
  const long blocks = (long)((nz_local + DEPTHS - 1) / DEPTHS);
  double sum0 = 0.0, sum1 = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : sum0, sum1)
  for (long b = 0; b < blocks; ++b) {
    const size_t k0 = (size_t)b * DEPTHS, k1 = k0 + DEPTHS < nz_local ? k0 + DEPTHS : nz_local;
    uint32_t sums[2][DEPTHS] = {{0}};
    for (size_t t = 0; t < traces; ++t)
      for (size_t k = k0; k < k1; ++k) {
        uint32_t bits;
        memcpy(&bits, values + t * nz_local + k, sizeof bits);
        uint32_t h0 = (bits ^ (uint32_t)t * 0x9e3779b1u) * 0x85ebca6bu;
        uint32_t h1 = (bits + (uint32_t)t * 0x01000193u) * 0xc2b2ae35u;
        sums[0][k - k0] += h0 ^ (h0 >> 15);
        sums[1][k - k0] += h1 ^ (h1 >> 13);
      }
    for (size_t k = k0; k < k1; ++k) {
      sum0 += (double)((sums[0][k - k0] ^ (uint32_t)(first + k)) * 0x01000193u);
      sum1 += (double)((sums[1][k - k0] + (uint32_t)(first + k)) * 0x85ebca6bu);
    }
  }
  digest[0] = sum0;
  digest[1] = sum1;
  return rtm_mpi_allreduce(run->mpi, digest, 2, RTM_MPI_SUM);
}

/* FNV-1a of the record of the input files (run->inputs) without its paths, which a resume
 * may spell another way (resume_config): what each line says after its first tab. */
static unsigned long long inputs_hash(const char *inputs) {
  unsigned long long hash = 14695981039346656037ull;
  int in_path = 1;
  for (const char *c = inputs; c && *c; ++c) {
    if (*c == '\n') in_path = 1;
    if (!in_path) hash = (hash ^ (unsigned char)*c) * 1099511628211ull;
    if (*c == '\t') in_path = 0;
  }
  return hash;
}

/* The text saved beside the sums: the shots they hold, the digests of the four volumes (the
 * image's and the illumination's float pairs, rtm_sums_add), of the record of the input
 * files (so that an edit of the record alone is seen) and, with gathers, of their sums. */
static int sums_digest_text(const migrate_run_t *run, int completed, float *const sums[4],
                            size_t first, size_t planes, char *text, size_t size) {
  int status = RTM_OK;
  double digest[4][2], gathers[2][2];
  for (int v = 0; v < 4; ++v)
    RTM_TRY(slab_digest(run, sums[v], first, planes, digest[v]));
  int used =
      snprintf(text, size,
               "completed_shots=%d image=%.0f,%.0f image_lo=%.0f,%.0f "
               "illumination=%.0f,%.0f illumination_lo=%.0f,%.0f inputs=%016llx",
               completed, digest[0][0], digest[0][1], digest[1][0], digest[1][1], digest[2][0],
               digest[2][1], digest[3][0], digest[3][1], inputs_hash(run->inputs));
  if (run->gather_cells == 0) goto fail;
  for (int v = 0; v < 2; ++v)
    RTM_TRY(gathers_digest(run, run->gather_sums[v], gathers[v]));
  if (used > 0 && (size_t)used < size)
    snprintf(text + used, size - (size_t)used, " gathers=%.0f,%.0f gathers_lo=%.0f,%.0f",
             gathers[0][0], gathers[0][1], gathers[1][0], gathers[1][1]);
fail:
  return status;
}

/* A saved volume of the resume file is [nz][ny][nx] of the grid. */
/* Whether `digest` is whole in the form states of the float sums had (before 2026-11-28):
 * completed_shots, image, illumination and inputs alone. Any other text that is not today's
 * is a digest damaged, which the comparison with the sums refuses as such (probe M, M4: a
 * damaged digest was called an earlier rtm3d's). */
static int is_float_sums_digest(const char *digest) {
  int completed = 0, end = 0;
  double a = 0.0, b = 0.0, c = 0.0, d = 0.0;
  unsigned long long inputs = 0;
  return sscanf(digest, "completed_shots=%d image=%lf,%lf illumination=%lf,%lf inputs=%16llx%n",
                &completed, &a, &b, &c, &d, &inputs, &end) == 6 &&
         digest[end] == '\0';
}

static int check_saved_shape(const migrate_run_t *run, const char *name) {
  int status = RTM_OK, rank = 0;
  size_t dims[4];
  RTM_TRY(rtm_io_dataset_shape(run->resume_path, name, &rank, dims));
  if (rank != 3 || dims[0] != (size_t)run->whole.n[2] || dims[1] != (size_t)run->whole.n[1] ||
      dims[2] != (size_t)run->whole.n[0])
    RTM_FAIL(RTM_ERR_INPUT, "%s: the saved %s is not [%d][%d][%d], the grid's", run->resume_path,
             name, run->whole.n[2], run->whole.n[1], run->whole.n[0]);
fail:
  return status;
}

/* One line of input_fingerprints: "PATH\tsize=..\tmtime=..\tctime=..\tinode=..\n", or
 * "PATH\tmissing\n". The change time cannot be set back by a user (touch -r sets the mtime,
 * and the ctime to now): a file rewritten in place with its size and mtime put back is seen
 * (probe D6); a chmod, a link or a rename changes it too, and a state is then refused,
 * conservatively. st_dev is left out: the same file on a shared file system has another
 * device number on another node, where a requeued job may resume. */
static void append_fingerprint(char *text, size_t size, const char *path) {
  char stamp[160]; /* rtm_io_file_stamp's, within the 192 bytes a path has beside it */
  const size_t used = strlen(text);
  snprintf(text + used, size - used, "%s\t%s\n", path,
           rtm_io_file_stamp(path, stamp, sizeof stamp) ? stamp : "missing");
}

/* The files whose contents the sums depend on, beyond the config text: the observed gathers,
 * the model, the acquisition's position lists. Rewriting one (rtm3d model or makemodel
 * --force writes aside and renames) changes its size, mtime or inode, so a state saved
 * before cannot be resumed with it. model.description only feeds makemodel, which writes
 * model.file. Taken when the run begins, so that the states it saves record the inputs as
 * they were when their shots were read. */
static int input_fingerprints(migrate_run_t *run) {
  int status = RTM_OK;
  const rtm_config_t *cfg = &run->cfg;
  const char *paths[4];
  int count = 0;
  paths[count++] = cfg->rtm.observed;
  if (cfg->model.file[0]) paths[count++] = cfg->model.file;
  if (cfg->shots.layout == RTM_SHOTS_FILE && cfg->shots.file[0]) paths[count++] = cfg->shots.file;
  if (cfg->receivers.layout == RTM_RECEIVERS_FILE && cfg->receivers.file[0])
    paths[count++] = cfg->receivers.file;
  const size_t size = (size_t)count * (RTM_CONFIG_PATH_MAX + 192) + 1;
  run->inputs = calloc(size, 1);
  if (!run->inputs) RTM_FAIL(RTM_ERR_NOMEM, "out of memory");
  for (int i = 0; i < count; ++i)
    append_fingerprint(run->inputs, size, paths[i]);
fail:
  return status;
}

int rtm_migrate_check_observed(const migrate_run_t *run) {
  int status = RTM_OK;
  char now[RTM_CONFIG_PATH_MAX + 192] = "";
  if (!run->inputs) return RTM_OK; /* before the run began */
  append_fingerprint(now, sizeof now, run->cfg.rtm.observed);
  /* probe Q (Q2): rtm3d model --force of the same name during a one-rank migration made the
   * later shots' image from the new gathers, exit 0 */
  if (strncmp(now, run->inputs, strcspn(run->inputs, "\n") + 1) != 0)
    RTM_FAIL(RTM_ERR_IO,
             "rtm.observed = %s changed while the migration read it (its size, mtime, ctime or "
             "inode differ from when the run began): the shots read so far came from the file "
             "as it was, so nothing is written; rerun once the file is final",
             run->cfg.rtm.observed);
fail:
  return status;
}

/* Which of a fingerprint's fields (size, mtime, ctime, inode) differ between `saved` and
 * `now` (the text after their paths, to the line's end), listed into `text`; "missing" when
 * the file is gone. */
static void changed_fields(const char *saved, size_t saved_length, const char *now,
                           size_t now_length, char *text, size_t size) {
  static const char *const fields[] = {"size", "mtime", "ctime", "inode"};
  text[0] = '\0';
  if (strncmp(now, "\tmissing", now_length) == 0 && now_length == strlen("\tmissing")) {
    snprintf(text, size, "it is missing");
    return;
  }
  size_t used = 0;
  for (size_t k = 0; k < sizeof fields / sizeof fields[0]; ++k) {
    char key[16];
    snprintf(key, sizeof key, "\t%s=", fields[k]);
    const char *a = strstr(saved, key), *b = strstr(now, key);
    const int a_in = a && (size_t)(a - saved) < saved_length,
              b_in = b && (size_t)(b - now) < now_length;
    const size_t a_value = a_in ? strcspn(a + 1, "\t\n") : 0,
                 b_value = b_in ? strcspn(b + 1, "\t\n") : 0;
    if (a_in && b_in && a_value == b_value && memcmp(a, b, a_value + 1) == 0) continue;
    const int n = snprintf(text + used, size - used, "%s%s", used ? ", " : "its ", fields[k]);
    if (n > 0 && (size_t)n < size - used) used += (size_t)n;
  }
  char *last = strrchr(text, ','); /* "its ctime, inode" -> "its ctime and inode" */
  if (last && used + 4 < size) {
    memmove(last + 4, last + 1, strlen(last + 1) + 1);
    memcpy(last, " and", 4);
    used += 3;
  }
  if (used && used + 8 < size) snprintf(text + used, size - used, " differ");
}

/* The saved fingerprints against the current ones: the first file that differs is named.
 * The config being the same, both list the same files in the same order, perhaps spelled
 * another way (resume_config): what follows the path is compared. */
static int check_inputs(const migrate_run_t *run, const char *saved) {
  int status = RTM_OK;
  const char *now = run->inputs;
  while (*saved || *now) {
    const size_t saved_length = strcspn(saved, "\n"), now_length = strcspn(now, "\n");
    const size_t saved_path = strcspn(saved, "\t\n"), now_path = strcspn(now, "\t\n");
    if (saved_length - saved_path != now_length - now_path ||
        memcmp(saved + saved_path, now + now_path, saved_length - saved_path) != 0) {
      const int path_length = (int)saved_path;
      if (path_length == 0 || saved[path_length] != '\t')
        RTM_FAIL(RTM_ERR_INPUT,
                 "%s: its record of the input files (root attribute inputs) is empty or "
                 "damaged, so they cannot be checked: remove the state to start over",
                 run->resume_path);
      /* a change time cannot be set back, nor an inode: "restore the file" was advice no one
       * could take (a probe: an identical copy renamed over the file) */
      char what[64];
      changed_fields(saved + saved_path, saved_length - saved_path, now + now_path,
                     now_length - now_path, what, sizeof what);
      RTM_FAIL(RTM_ERR_INPUT,
               "%.*s changed since %s was saved (%s): the saved sums came from the file as it "
               "was, and a copy, a rename, a chmod or a touch changes these too, so the state "
               "cannot be resumed with it; remove the state to start over",
               path_length, saved, run->resume_path, what[0] ? what : "its record differs");
    }
    saved += saved_length + (saved[saved_length] == '\n');
    now += now_length + (now[now_length] == '\n');
  }
fail:
  return status;
}

/* The state's config against this run's: the resolved one (resume_config) where the state
 * records it; in a state of an earlier build, which does not, the echoed text less the
 * pacing keys, as that build compared it. A state of another shot-group count resumes (its
 * sums are every group's, after a prefix of the shots), said in a line. */
static int check_config(const migrate_run_t *run, char *saved) {
  int status = RTM_OK;
  char *saved_resolved = NULL, *now = NULL, change[512];
  RTM_TRY(rtm_io_read_run_text(run->resume_path, "resume_config", &saved_resolved));
  if (saved_resolved) {
    now = strdup(run->resume_config);
  } else {
    now = strdup(run->config_text);
    rtm_config_drop_pacing(saved); /* a state resumes under another rtm.resume_every */
    if (now) rtm_config_drop_pacing(now);
    if (now) drop_added_keys_at_before(now);
  }
  if (!now) RTM_FAIL(RTM_ERR_NOMEM, "out of memory");
  const char *then = saved_resolved ? saved_resolved : saved;
  if (strcmp(then, now) != 0) {
    describe_change(then, now, change, sizeof change);
    RTM_FAIL(RTM_ERR_CONFIG,
             "%s was written by a run with another config (%s): resume with the same config, "
             "or remove it to start over",
             run->resume_path, change);
  }
  char groups[32];
  echoed_value(saved, "mpi", "shot_groups", groups, sizeof groups);
  if (groups[0] && atoi(groups) != run->cfg.mpi.shot_groups && !run->quiet)
    rtm_log_info("migrate: %s was saved under mpi.shot_groups = %s and resumes under %d: the "
                 "shots are summed in another order, as float pairs: the image matches the "
                 "uninterrupted run's but where a cell's sum cancels far below its terms, by "
                 "an ulp",
                 run->resume_path, groups, run->cfg.mpi.shot_groups);
fail:
  free(saved_resolved);
  free(now);
  return status;
}

/* rtm.offset_lags: this rank's depths of the gathers' saved sums (gather_sum_names) into
 * run->gather_sums, each dataset checked to be the plan's shape and read in one hyperslab
 * (no rank reads the others' depths), then checked finite. */
static int read_gather_sums(migrate_run_t *run) {
  int status = RTM_OK, rank = 0;
  const rtm_gather_plan_t *plan = rtm_migration_gather_plan(run->migration);
  const size_t cips = (size_t)rtm_gather_plan_cips(plan), nh = 2 * (size_t)plan->lags + 1;
  const size_t nz = (size_t)run->whole.n[2], nz_local = (size_t)run->grid.nz_local;
  const size_t first = (size_t)run->grid.z_offset;
  for (int v = 0; v < 2; ++v) {
    const char *name = gather_sum_names[v];
    size_t dims[4], at = 0;
    RTM_TRY(rtm_io_dataset_shape(run->resume_path, name, &rank, dims));
    if (rank != 4 || dims[0] != cips || dims[1] != nh || dims[2] != nh || dims[3] != nz)
      RTM_FAIL(RTM_ERR_INPUT,
               "%s: the saved %s is not [%zu][%zu][%zu][%zu], the gathers' of rtm.offset_lags = "
               "%d at these CIP lines",
               run->resume_path, name, cips, nh, nh, nz, plan->lags);
    rtm_dataset_t saved = {0};
    RTM_TRY(rtm_io_read_dataset_depths(run->resume_path, name, first, nz_local, &saved));
    const size_t bad = rtm_io_find_bad_values(saved.data, run->gather_cells, 0.0, &at);
    if (bad == 0) memcpy(run->gather_sums[v], saved.data, run->gather_cells * sizeof(float));
    const float value = bad ? saved.data[at] : 0.0f;
    rtm_dataset_release(&saved);
    if (bad > 0) /* the element named as the whole array counts it */
      RTM_FAIL(RTM_ERR_INPUT,
               "%s: dataset %s holds %g at [%zu][%zu][%zu][%zu], the first of %zu non-finite "
               "value%s among this rank's depths: the file is damaged",
               run->resume_path, name, value, at / nz_local / nh / nh, at / nz_local / nh % nh,
               at / nz_local % nh, first + at % nz_local, bad, bad == 1 ? "" : "s");
  }
fail:
  return status;
}

/* A run stopped after some shots left OUTPUT.resume.h5: the sums so far come back, and the
 * run goes on from the next shot, when the config is the one they were made under and the
 * input files are the ones they were read from. */
int rtm_migrate_resume(migrate_run_t *run) {
  int status = RTM_OK, done = 0;
  char *saved = NULL, *saved_inputs = NULL, *saved_digest = NULL;
  RTM_TRY(input_fingerprints(run));
  RTM_TRY(resume_config(run));
  /* whether there is a state to resume, rank 0's answer for all: a rank that saw none
   * while the others read it would skip the collectives they then wait in */
  FILE *exists = run->root ? fopen(run->resume_path, "rb") : NULL;
  double found = exists != NULL;
  if (exists) fclose(exists);
  RTM_TRY(rtm_mpi_world_allreduce(run->mpi, &found, 1, RTM_MPI_MAX));
  if (!(found > 0.0)) return RTM_OK;
  if (run->cfg.rtm.shot_images)
    RTM_FAIL(RTM_ERR_CONFIG,
             "%s holds a stopped run's state, but rtm.shot_images runs do not "
             "resume: remove it to start over",
             run->resume_path);
  RTM_TRY(rtm_io_read_run_state(run->resume_path, "completed_shots", &done, &saved));
  RTM_TRY(check_config(run, saved));
  /* the record of the input files, and below the digest of the sums: a state without them
   * was edited (states of the builds before them no longer match the config either) */
  RTM_TRY(rtm_io_read_run_text(run->resume_path, "inputs", &saved_inputs));
  if (!saved_inputs)
    RTM_FAIL(RTM_ERR_INPUT,
             "%s has no record of its input files (root attribute inputs): not a state this "
             "rtm3d can check; remove it to start the migration over",
             run->resume_path);
  RTM_TRY(check_inputs(run, saved_inputs));
  if (done < 0 || done > run->shots.count)
    RTM_FAIL(RTM_ERR_INPUT, "%s: completed_shots = %d, but the acquisition has %d shots",
             run->resume_path, done, run->shots.count);
  /* the sums as float pairs since 2026-11-28; a state of the float sums before cannot be
   * resumed bit for bit */
  RTM_TRY(rtm_io_read_run_text(run->resume_path, "sums_digest", &saved_digest));
  if (saved_digest && is_float_sums_digest(saved_digest))
    RTM_FAIL(RTM_ERR_INPUT,
             "%s holds the sums of an earlier rtm3d, in float alone (no /image_lo): this one "
             "sums the shots as float pairs and cannot go on from them to the image an "
             "uninterrupted run gives; remove it to start the migration over",
             run->resume_path);
  for (int v = 0; v < 4; ++v)
    RTM_TRY(check_saved_shape(run, sum_names[v]));
  /* every rank of the first shot group reads its slab of the saved sums (the other groups
   * start from zero: their sums are added to the first's at a save and at the end) */
  if (rtm_mpi_group(run->mpi) == 0) {
    const size_t first = (size_t)run->grid.z_offset, planes = (size_t)run->grid.nz_local;
    const size_t bytes = run->local_cells * sizeof(float);
    for (int v = 0; v < 4; ++v) {
      rtm_dataset_t saved_sum = {0};
      status = rtm_io_read_dataset_rows(run->resume_path, sum_names[v], first, planes, &saved_sum);
      /* sums that are not finite would give an image of NaN after hours of shots */
      if (status == RTM_OK &&
          rtm_io_check_finite(run->resume_path, sum_names[v], &saved_sum, first) != RTM_OK)
        status = RTM_ERR_INPUT;
      if (status == RTM_OK) memcpy(run->sums[v], saved_sum.data, bytes);
      rtm_dataset_release(&saved_sum);
      if (status == RTM_ERR_INPUT)
        RTM_FAIL(RTM_ERR_INPUT, "%s cannot be resumed: remove it to start the migration over",
                 run->resume_path);
      RTM_TRY(status);
    }
    run->sums_empty = 0;
    if (run->gather_cells) {
      status = read_gather_sums(run);
      if (status == RTM_ERR_INPUT)
        RTM_FAIL(RTM_ERR_INPUT, "%s cannot be resumed: remove it to start the migration over",
                 run->resume_path);
      RTM_TRY(status);
      run->gathers_empty = 0;
    }
    /* the sums as saved: a state edited or damaged since (a finite value changed, the shot
     * count rewritten) would resume to a wrong image without a word */
    char digest[512];
    RTM_TRY(sums_digest_text(run, done, run->sums, first, planes, digest, sizeof digest));
    if (!saved_digest || strcmp(digest, saved_digest) != 0)
      RTM_FAIL(RTM_ERR_INPUT,
               "%s: its sums or shot count do not match the digest saved with them (the file "
               "was edited or damaged%s): remove it to start the migration over",
               run->resume_path, saved_digest ? "" : "; its digest is missing");
  }
  run->first_shot = done;
  run->saved_shots = done;
  if (!run->quiet)
    rtm_log_info("migrate: resuming after shot %d of %d (%s)", done, run->shots.count,
                 run->resume_path);
fail:
  free(saved_inputs);
  free(saved_digest);
  free(saved);
  return status;
}

/* This rank's slab of the volume `name` into the file at `path`, whose output rank 0 holds
 * (`output`, NULL on the others): the first shot group's ranks call it alike. */
int rtm_migrate_write_slabs(migrate_run_t *run, rtm_output_t *output, const char *path,
                            const char *name, const float *slab) {
  const rtm_app_slab_target_t volume = {name, -1, 0, 0.0};
  return rtm_app_write_slabs(&run->grid, output, path, &volume, slab, run->slab_buffer);
}

/* Whether this round saves the state, alike on every rank: a rank that saved alone would
 * wait in the collective sums and writes for ever. */
int rtm_migrate_save_due(migrate_run_t *run, int forced, int *due) {
  const double every_s = run->cfg.rtm.resume_every_s;
  *due = 1;
  if (forced || every_s <= 0.0) return RTM_OK; /* no clock to agree on */
  /* world rank 0's clock decides; the others add 0 */
  double passed = run->root && rtm_wall_seconds() - run->last_save_s >= every_s ? 1.0 : 0.0;
  const int status = rtm_mpi_world_allreduce(run->mpi, &passed, 1, RTM_MPI_MAX);
  *due = passed > 0.0;
  return status;
}

/* The sums zeroed where no shot has reached them yet (posix_memalign's memory is not). */
static void ensure_sums(migrate_run_t *run) {
  if (!run->sums_empty) return;
  rtm_sums_start(run->sums[0], run->sums[1], NULL, run->local_cells);
  rtm_sums_start(run->sums[2], run->sums[3], NULL, run->local_cells);
  run->sums_empty = 0;
}

/* The gathers' sums zeroed where they hold no shot (a later group's, once the groups' met). */
static void ensure_gather_sums(migrate_run_t *run) {
  if (!run->gathers_empty) return;
  rtm_sums_start(run->gather_sums[0], run->gather_sums[1], NULL, run->gather_cells);
  run->gathers_empty = 0;
}

/* One shot's image and illumination, landed in the host slabs, into the sums. */
static void add_landed_shot(migrate_run_t *run) {
  const size_t cells = run->local_cells;
  if (run->sums_empty) { /* the first shot's sums are its own */
    rtm_sums_start(run->sums[0], run->sums[1], run->slab_image, cells);
    rtm_sums_start(run->sums[2], run->sums[3],
                   run->illumination_taken ? NULL : run->slab_illumination, cells);
    run->sums_empty = 0;
    return;
  }
  rtm_sums_add(run->sums[0], run->sums[1], run->slab_image, cells);
  if (!run->illumination_taken) /* else the slab holds the final illumination */
    rtm_sums_add(run->sums[2], run->sums[3], run->slab_illumination, cells);
}

static void merge_pairs(float *hi, float *lo, const float *other_hi, const float *other_lo,
                        size_t count, void *context) {
  (void)context;
  rtm_sums_merge(hi, lo, other_hi, other_lo, count);
}

/* Every rank alike, no job of the I/O thread under way: the groups' sums added into the
 * first group's (in group order), the others' emptied. */
static int combine_groups(migrate_run_t *run) {
  int status = RTM_OK;
  if (rtm_mpi_groups(run->mpi) == 1) return RTM_OK;
  ensure_sums(run);
  /* mpi.transport = staged: as messages, as the planes */
  const int shared = run->cfg.mpi.transport != RTM_TRANSPORT_STAGED;
  RTM_TRY(rtm_mpi_groups_combine(run->mpi, run->sums[0], run->sums[1], run->local_cells, shared,
                                 merge_pairs, NULL));
  RTM_TRY(rtm_mpi_groups_combine(run->mpi, run->sums[2], run->sums[3], run->local_cells, shared,
                                 merge_pairs, NULL));
  if (run->gather_cells) {
    ensure_gather_sums(run);
    RTM_TRY(rtm_mpi_groups_combine(run->mpi, run->gather_sums[0], run->gather_sums[1],
                                   run->gather_cells, shared, merge_pairs, NULL));
  }
  if (rtm_mpi_group(run->mpi) != 0) { /* in the first group's now */
    run->sums_empty = 1;
    run->gathers_empty = run->gather_cells > 0;
  }
fail:
  return status;
}

/* rtm_mpi_write_slabs' writer on rank 0: a rank's planes of a gathers' array, [traces][nz] of
 * its z-range, into the whole array [traces][nz]. */
typedef struct {
  float *whole;
  size_t traces, nz;
} gather_planes_t;

static int place_gather_planes(void *context, int z_offset, int nz, const float *planes) {
  const gather_planes_t *g = context;
  for (size_t t = 0; t < g->traces; ++t)
    memcpy(g->whole + t * g->nz + (size_t)z_offset, planes + t * (size_t)nz,
           (size_t)nz * sizeof *planes);
  return RTM_OK;
}

int rtm_migrate_gathers_to_root(migrate_run_t *run, const float *planes, float *whole) {
  int status = RTM_OK;
  float *buffer = NULL;
  const rtm_gather_plan_t *plan = rtm_migration_gather_plan(run->migration);
  const size_t traces = run->gather_cells / (size_t)run->grid.nz_local;
  const size_t nz = (size_t)run->whole.n[2];
  rtm_grid_t lines = run->grid; /* the traces as a slab's planes: [nz_local][1][traces] */
  if (traces > (size_t)INT_MAX) /* alike on every rank */
    RTM_FAIL(RTM_ERR_CONFIG,
             "rtm.offset_lags = %d at %zu CIPs: %zu lag traces are too many to gather under "
             "z-slabs: fewer rtm.offset_lags, or larger rtm.cip_x_step and rtm.cip_y_step",
             plan->lags, (size_t)rtm_gather_plan_cips(plan), traces);
  lines.n[0] = (int)traces;
  lines.n[1] = 1;
  double missing = 0.0; /* rank 0's arrays, agreed: the others would send into none */
  if (run->root) {
    buffer = malloc(rtm_mpi_largest_slab_cells(&lines) * sizeof *buffer);
    missing = !whole || !buffer;
  }
  RTM_TRY(rtm_mpi_allreduce(run->mpi, &missing, 1, RTM_MPI_MAX));
  if (missing > 0.0)
    RTM_FAIL(RTM_ERR_NOMEM,
             "out of memory on rank 0 for the gathers whole (%.3g GB): fewer rtm.offset_lags, "
             "or larger rtm.cip_x_step and rtm.cip_y_step",
             traces * nz * sizeof *whole / 1e9);
  gather_planes_t into = {whole, traces, nz};
  RTM_TRY(rtm_mpi_write_slabs(&lines, planes, buffer, place_gather_planes, &into));
fail:
  free(buffer);
  return status;
}

/* rtm.offset_lags: the gathers' float-pair sums into the state (`state`, rank 0's) as
 * gather_sum_names [ncip][nh][nh][nz], whole on rank 0 (rtm_migrate_gathers_to_root: every
 * bit kept, as the digest needs; one rank's sums are whole already). */
static int write_gather_sums(migrate_run_t *run, rtm_output_t *state) {
  int status = RTM_OK;
  float *whole = NULL;
  const rtm_gather_plan_t *plan = rtm_migration_gather_plan(run->migration);
  const size_t nh = 2 * (size_t)plan->lags + 1, nz = (size_t)run->whole.n[2];
  const size_t dims[4] = {(size_t)rtm_gather_plan_cips(plan), nh, nh, nz};
  const int slabs = rtm_grid_is_slab(&run->grid);
  if (slabs && run->root) whole = malloc(dims[0] * nh * nh * nz * sizeof *whole);
  for (int v = 0; v < 2; ++v) {
    if (slabs) RTM_TRY(rtm_migrate_gathers_to_root(run, run->gather_sums[v], whole));
    if (run->root)
      RTM_TRY(rtm_output_write_floats(state, gather_sum_names[v], 4, dims,
                                      slabs ? whole : run->gather_sums[v]));
  }
fail:
  free(whole);
  return status;
}

/* The sums after `completed` shots into OUTPUT.resume.h5, written aside and renamed, so that
 * a stop at any moment leaves the last complete state (the first shot group's ranks call it
 * alike; where that group is one rank, its I/O thread: no MPI call is made then). Touches no
 * field of the run but the sums' zeroing: the caller counts the save. */
static int write_state(migrate_run_t *run, int completed) {
  int status = RTM_OK;
  rtm_output_t *state = NULL;
  char digest[512];
  const rtm_io_volume_t volume = rtm_app_volume(&run->whole);
  if (run->illumination_taken && completed >= run->shots.count) /* the sums lack its light */
    RTM_FAIL(RTM_ERR_INTERNAL, "migrate: no state is saved after the last shot, whose "
                               "illumination went into the image's file alone");
  ensure_sums(run);
  ensure_gather_sums(run);
  /* sums that are not finite are no state to resume from: the last one saved is kept (the
   * ranks of the group agree, so that none waits in the writes for the others) */
  size_t at = 0;
  double bad = 0.0;
  for (int v = 0; v < 4; ++v)
    bad = bad > 0.0 || rtm_io_find_bad_values(run->sums[v], run->local_cells, 0.0, &at) > 0;
  for (int v = 0; v < 2 && run->gather_cells; ++v)
    bad = bad > 0.0 || rtm_io_find_bad_values(run->gather_sums[v], run->gather_cells, 0.0, &at) > 0;
  RTM_TRY(rtm_mpi_allreduce(run->mpi, &bad, 1, RTM_MPI_MAX));
  if (bad > 0.0)
    RTM_FAIL(RTM_ERR_NUMERIC,
             "the image, illumination or gathers summed over %d shot%s are not finite: not "
             "saved to %s (the state saved before, if any, is kept); the observed gathers or "
             "the model are the usual causes",
             completed, completed == 1 ? "" : "s", run->resume_path);
  RTM_TRY(sums_digest_text(run, completed, run->sums, (size_t)run->grid.z_offset,
                           (size_t)run->grid.nz_local, digest, sizeof digest));
  if (run->root) {
    RTM_TRY(rtm_app_create_output(run->resume_path, &volume, run->mpi, &run->info, &state));
    rtm_output_no_sidecar(state); /* rtm3d's own file, not one to view */
    RTM_TRY(rtm_output_write_count(state, "completed_shots", completed));
    RTM_TRY(rtm_output_write_text(state, "inputs", run->inputs));
    RTM_TRY(rtm_output_write_text(state, "resume_config", run->resume_config));
    RTM_TRY(rtm_output_write_text(state, "sums_digest", digest));
  }
  for (int v = 0; v < 4; ++v)
    RTM_TRY(rtm_migrate_write_slabs(run, state, run->resume_path, sum_names[v], run->sums[v]));
  if (run->gather_cells) RTM_TRY(write_gather_sums(run, state));
  RTM_TRY(rtm_app_sync_slabs(&run->grid, run->resume_path)); /* each node's, before the rename */
  /* output.dir moved or replaced by a link since the lock was taken: the state's name leads
   * to another folder's file (probe U, U3) */
  if (run->root && run->lock.fd >= 0 && !rtm_io_lock_in_place(&run->lock))
    RTM_FAIL(RTM_ERR_IO,
             "%s is no longer the lock this run holds: its folder was moved, removed or "
             "replaced while the run ran; the state is not saved at %s, whose name may now lead "
             "to another file",
             run->lock.path, run->resume_path);
  if (run->root) {
    status = rtm_output_close(state, 1);
    state = NULL;
  }
fail:
  if (state) rtm_output_close(state, 0);
  return status;
}

/* A save of the sums after `completed` shots is in OUTPUT.resume.h5. */
static void count_save(migrate_run_t *run, int completed) {
  run->saved_shots = completed;
  ++run->saves;
}

/* rtm.offset_lags: a shot's gathers, landed in run->gather_shot, into their float-pair
 * sums. */
static void add_landed_gathers(migrate_run_t *run) {
  if (!run->gather_shot) return;
  if (run->gathers_empty) /* the first, or a later group's after the groups' met: its own */
    rtm_sums_start(run->gather_sums[0], run->gather_sums[1], run->gather_shot, run->gather_cells);
  else
    rtm_sums_add(run->gather_sums[0], run->gather_sums[1], run->gather_shot, run->gather_cells);
  run->gathers_empty = 0;
}

/* The I/O thread's job: a shot's sums (and gathers), once their copies have landed, added to
 * the run's. */
static int add_behind(void *context) {
  migrate_job_t *job = context;
  const double start_s = rtm_wall_seconds();
  const int status = rtm_migration_hold_wait(job->run->migration); /* landed, layer zero */
  if (status == RTM_OK) {
    add_landed_shot(job->run);
    add_landed_gathers(job->run);
  }
  job->seconds = rtm_wall_seconds() - start_s;
  return status;
}

/* The I/O thread's job: the sums, the shot before's added, into OUTPUT.resume.h5. */
static int save_behind(void *context) {
  migrate_job_t *job = context;
  const double start_s = rtm_wall_seconds();
  const int status = write_state(job->run, job->completed);
  job->seconds = rtm_wall_seconds() - start_s;
  return status;
}

/* The I/O thread's job: the host slabs (and the gathers' array) page-locked (faulted in
 * first, rtm_mem_host_pin), from the migration's device, behind the first shot; memory that
 * cannot be locked is used as it is. */
static int pin_slabs(void *context) {
  migrate_run_t *run = context;
  int status = RTM_OK;
  const size_t bytes = run->local_cells * sizeof(float);
  RTM_TRY(rtm_migration_pin_host(run->migration, run->slab_image, run->slab_illumination, bytes,
                                 &run->pinned));
  if (!run->pinned)
    rtm_log_warning("the image's host slabs (2 x %.3g GB) could not be page-locked: each "
                    "shot's sums reach them while the GPU waits",
                    bytes / 1e9);
  if (!run->gather_shot) goto fail;
  RTM_TRY(rtm_migration_pin_gathers(run->migration, run->gather_shot, &run->gathers_pinned));
  if (!run->gathers_pinned)
    rtm_log_warning("the gathers' host array (%.3g GB) could not be page-locked: each shot's "
                    "gathers reach it while the GPU waits",
                    run->gather_cells * sizeof(float) / 1e9);
fail:
  return status;
}

int rtm_migrate_pin_slabs(migrate_run_t *run) {
  if (strcmp(rtm_migration_backend(run->migration), "cuda") != 0) return RTM_OK;
  run->pin_queued = 1;
  return rtm_io_worker_submit(run->worker, pin_slabs, run, &run->pin_ticket);
}

/* `job`, when queued, waited for: its status; the stepping thread's wait counts as write. */
static int wait_for_job(migrate_run_t *run, migrate_job_t *job, double *seconds) {
  if (!job->queued) return RTM_OK;
  const double start_s = rtm_wall_seconds();
  job->queued = 0;
  const int status = rtm_io_worker_wait(run->worker, job->ticket);
  run->write_s += rtm_wall_seconds() - start_s;
  *seconds += job->seconds;
  return status;
}

/* The slabs' page-locking, when queued, waited for. */
static int wait_for_pin(migrate_run_t *run) {
  if (!run->pin_queued) return RTM_OK;
  run->pin_queued = 0;
  return rtm_io_worker_wait(run->worker, run->pin_ticket);
}

/* The jobs of the I/O thread on the slabs and the sums, if any, waited for, and a save
 * counted: both are free. */
static int wait_for_jobs(migrate_run_t *run) {
  int status = RTM_OK;
  RTM_TRY(wait_for_pin(run));
  /* the older first: a save queued behind the last shot's add, before this shot's add */
  const int saved = run->save.queued;
  status = wait_for_job(run, &run->save, &run->behind_s);
  if (saved && status == RTM_OK) count_save(run, run->save.completed);
  if (saved && status != RTM_OK) /* said last: the thread's error came while the steps went on */
    rtm_log_error("migrate: stopped: the sums after shot %d could not be saved to %s (the "
                  "error above)%s",
                  run->save.completed, run->resume_path,
                  run->saved_shots > 0 ? "; the state saved before is kept" : "");
  RTM_TRY(status);
  RTM_TRY(wait_for_job(run, &run->add, &run->summed_s));
  /* the last shot's illumination, queued after the shot before's add */
  RTM_TRY(wait_for_job(run, &run->lit, &run->summed_s));
fail:
  return status;
}

int rtm_migrate_settle_saves(migrate_run_t *run) {
  int status = RTM_OK;
  RTM_TRY(wait_for_jobs(run));
  RTM_TRY(rtm_io_worker_drain(run->worker)); /* a gather read ahead: no HDF5 call under way */
fail:
  return status;
}

int rtm_migrate_alloc_gathers(migrate_run_t *run) {
  int status = RTM_OK;
  const rtm_gather_plan_t *plan = rtm_migration_gather_plan(run->migration);
  if (!plan) return RTM_OK;
  run->gather_cells = rtm_gather_plan_cells(plan, run->grid.nz_local);
  /* as the image's sums: on huge pages, not zeroed (the first shot's add starts them), so
   * that the I/O thread's first add faults 2 MiB at a time, not 4 KiB */
  run->gather_shot = rtm_mem_host_large(run->gather_cells * sizeof(float));
  for (int v = 0; v < 2; ++v)
    run->gather_sums[v] = rtm_mem_host_large(run->gather_cells * sizeof(float));
  run->gathers_empty = 1;
  if (!run->gather_shot || !run->gather_sums[0] || !run->gather_sums[1])
    RTM_FAIL(RTM_ERR_NOMEM,
             "out of memory for the gathers' sums (3 x %.3g GB): fewer rtm.offset_lags, or "
             "larger rtm.cip_x_step and rtm.cip_y_step",
             run->gather_cells * sizeof(float) / 1e9);
fail:
  return status;
}

int rtm_migrate_take_shot(migrate_run_t *run, int completed) {
  int status = RTM_OK;
  const double start_s = rtm_wall_seconds();
  /* the I/O thread done with the slabs and the sums */
  RTM_TRY(wait_for_jobs(run));
  /* the sums' and the gathers' copies behind the next shot's steps, added by the I/O thread
   * once they land (add_behind) */
  RTM_TRY(rtm_migration_hold(run->migration, run->slab_image,
                             run->illumination_taken ? NULL : run->slab_illumination,
                             run->gather_shot));
  RTM_TRY(rtm_migration_clear(run->migration)); /* after the copy, before the next imaging */
  run->add = (migrate_job_t){run, completed, 1, 0, 0.0};
  RTM_TRY(rtm_io_worker_submit(run->worker, add_behind, &run->add, &run->add.ticket));
  run->held_shots = completed;
  ++run->holds;
fail:
  run->hold_s += rtm_wall_seconds() - start_s;
  return status;
}

int rtm_migrate_take_illumination(void *context) {
  migrate_run_t *run = context;
  int status = RTM_OK;
  const double start_s = rtm_wall_seconds();
  /* the shot before's add done: the slab free, the sums whole (a save queued behind that add
   * only reads the sums, as the job below does: not waited for, the GPU would idle) */
  RTM_TRY(wait_for_pin(run));
  RTM_TRY(wait_for_job(run, &run->add, &run->summed_s));
  RTM_TRY(rtm_migration_read(run->migration, NULL, run->slab_illumination));
  run->lit = (migrate_job_t){run, run->shots.count, 0, 0, 0.0};
  RTM_TRY(rtm_io_worker_submit(run->worker, rtm_migrate_illumination_behind, &run->lit,
                               &run->lit.ticket));
  run->lit.queued = 1;
  run->illumination_taken = 1;
fail:
  run->hold_s += rtm_wall_seconds() - start_s;
  return status;
}

/* The state written by the I/O thread, behind the add queued before it and ahead of the
 * next: the stepping thread waits for it before the next shot's sums reach the slabs. */
static int queue_save(migrate_run_t *run, int completed) {
  run->save = (migrate_job_t){run, completed, 1, 0, 0.0};
  const int status = rtm_io_worker_submit(run->worker, save_behind, &run->save, &run->save.ticket);
  run->last_save_s = rtm_wall_seconds(); /* the cadence counts from the save's start */
  return status;
}

int rtm_migrate_save(migrate_run_t *run, int completed) {
  int status = RTM_OK;
  const double start_s = rtm_wall_seconds();
  if (rtm_mpi_world_size(run->mpi) == 1) return queue_save(run, completed);
  /* the collectives stay on the stepping thread: the sums settled, the groups' added */
  RTM_TRY(rtm_migrate_settle_saves(run));
  RTM_TRY(combine_groups(run));
  /* a first group of one rank writes with no MPI call (its slab is the volume): behind the
   * next shots, as one rank does; the other groups go on at once */
  if (rtm_mpi_group(run->mpi) == 0 && rtm_mpi_size(run->mpi) == 1) {
    RTM_TRY(queue_save(run, completed));
    goto fail;
  }
  if (rtm_mpi_group(run->mpi) == 0) RTM_TRY(write_state(run, completed));
  run->last_save_s = rtm_wall_seconds();
  count_save(run, completed);
fail:
  run->write_s += rtm_wall_seconds() - start_s;
  return status;
}

int rtm_migrate_finish_sums(migrate_run_t *run) {
  int status = RTM_OK;
  RTM_TRY(rtm_migrate_settle_saves(run));
  RTM_TRY(combine_groups(run));
  if (rtm_mpi_group(run->mpi) != 0) return RTM_OK;
  ensure_sums(run);
  rtm_sums_round(run->slab_image, run->sums[0], run->sums[1], run->local_cells);
  if (!run->illumination_taken) /* else rounded and written already */
    rtm_sums_round(run->slab_illumination, run->sums[2], run->sums[3], run->local_cells);
  if (run->gather_cells) {
    ensure_gather_sums(run);
    rtm_sums_round(run->gather_shot, run->gather_sums[0], run->gather_sums[1], run->gather_cells);
  }
fail:
  return status;
}

/* After SIGINT or SIGTERM on world rank 0: the jobs under way finished, then, on one rank,
 * the sums, when they hold shots the last save does not, into OUTPUT.resume.h5. */
int rtm_migrate_save_held(migrate_run_t *run) {
  int status = RTM_OK;
  /* stopped in its set-up: no sums, no thread yet */
  if (!run->migration || !run->worker ||
      run->cfg.rtm.shot_images) /* no state holds the shots' images: such a run does not resume */
    return RTM_OK;
  /* a state under way finished (shot groups: the first group's I/O thread writes it), so
   * that the run says what is saved; on several ranks a save is collective, not made here */
  RTM_TRY(rtm_migrate_settle_saves(run));
  if (rtm_mpi_world_size(run->mpi) > 1) return RTM_OK;
  if (run->held_shots <= run->saved_shots) return RTM_OK;
  RTM_TRY(write_state(run, run->held_shots));
  count_save(run, run->held_shots);
fail:
  return status;
}

void rtm_migrate_drop_refused_state(migrate_run_t *run) {
  if (run->refused_shot < 0 || !run->root) return;
  (void)rtm_migrate_settle_saves(run); /* no save under way */
  if (run->saved_shots <= 0 || access(run->resume_path, F_OK) != 0) return;
  if (run->first_shot > 0) {
    rtm_log_info("migrate: %s holds the sums of the first %d shots, read from rtm.observed as "
                 "it is; once shot %d is repaired the file is another input, which that state "
                 "does not resume: remove it and run again",
                 run->resume_path, run->saved_shots, run->refused_shot);
    return;
  }
  if (remove(run->resume_path) == 0)
    rtm_log_info("migrate: removed %s, this run's sums of the first %d shots: once shot %d is "
                 "repaired rtm.observed is another input, which they would not resume",
                 run->resume_path, run->saved_shots, run->refused_shot);
}

/* A signal stopped the run within a shot, whose partial sums are not saved: what the last
 * save holds (a state resumed and not saved since holds the resumed shots). */
void rtm_migrate_say_interrupted(const migrate_run_t *run) {
  if (run->saved_shots > 0 && access(run->resume_path, F_OK) == 0)
    rtm_log_info("migrate: the sums of the first %d of %d shots are kept in %s: the same "
                 "command resumes there, migrating the shots after them again",
                 run->saved_shots, run->shots.count, run->resume_path);
  else if (run->cfg.rtm.shot_images) /* probe Y, Y2: a state was kept that resume refused */
    rtm_log_info("migrate: a run with rtm.shot_images keeps no state (each shot's image is "
                 "not kept in one): the same command starts over");
  else if (rtm_mpi_world_size(run->mpi) == 1 || run->cfg.rtm.resume_every_s <= 0.0)
    rtm_log_info("migrate: no shot had ended, nothing is kept: the same command starts over");
  else
    rtm_log_info("migrate: no shot's sums were saved (under several ranks a save comes after "
                 "a shot once rtm.resume_every = %g s have passed): the same command starts over",
                 run->cfg.rtm.resume_every_s);
}
