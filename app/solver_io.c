/* The wiring between io's arrays and the solver's structs (solver_io.h). */
#define _GNU_SOURCE /* statvfs, sched_getaffinity */
#include "solver_io.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "rtm_mpi.h"
#include "rtm_propagator.h"
#include "rtm_status.h"

rtm_io_volume_t rtm_app_volume(const rtm_grid_t *grid) {
  rtm_io_volume_t volume = {.z_offset = grid->z_offset, .nz_local = grid->nz_local};
  for (int a = 0; a < 3; ++a) {
    volume.n[a] = grid->n[a];
    volume.spacing_m[a] = grid->spacing_m[a];
    volume.origin_m[a] = grid->origin_m[a];
  }
  return volume;
}

/* rtm_mpi_write_slabs' writer on rank 0: one slab of the target into its output. */
typedef struct {
  rtm_output_t *output;
  const rtm_app_slab_target_t *target;
} slab_writer_t;

static int write_slab(void *context, int z_offset, int nz, const float *planes) {
  const slab_writer_t *w = context;
  const rtm_app_slab_target_t *t = w->target;
  int status = rtm_output_set_planes(w->output, z_offset, nz);
  if (status != RTM_OK) return status;
  if (t->index >= 0)
    return rtm_output_write_snapshot(w->output, t->name, t->index, t->step, t->time_s, planes);
  return rtm_output_write_volume(w->output, t->name, planes);
}

/* Whether the slabs of `mpi`'s ranks go to a file collectively (parallel HDF5). */
static int collective_slabs(const rtm_mpi_t *mpi) {
  return rtm_io_parallel() && rtm_mpi_size(mpi) > 1;
}

int rtm_app_write_slabs(const rtm_grid_t *grid, rtm_output_t *output, const char *path,
                        const rtm_app_slab_target_t *target, const float *slab, float *buffer) {
  int status = RTM_OK, again = RTM_OK;
  if (!collective_slabs(grid->mpi)) {
    slab_writer_t writer = {output, target};
    return rtm_mpi_write_slabs(grid, slab, buffer, write_slab, &writer);
  }
  const int root = rtm_mpi_rank(grid->mpi) == 0, snapshot = target->index >= 0;
  if (root)
    RTM_TRY(snapshot ? rtm_output_release_for_snapshot(output, target->name, target->index)
                     : rtm_output_release_for_volume(output, target->name));
  const rtm_io_volume_t volume = rtm_app_volume(grid);
  status = rtm_io_write_planes_collective(path, target->name, target->index, &volume, slab,
                                          rtm_mpi_slab_communicator(grid->mpi));
  if (root)
    again = rtm_output_reacquire(output, snapshot ? target->name : NULL, target->index,
                                 target->step, target->time_s);
  if (status == RTM_OK) status = again;
fail:
  return status;
}

int rtm_app_sync_slabs(const rtm_grid_t *grid, const char *path) {
  int status = RTM_OK;
  if (!collective_slabs(grid->mpi)) return RTM_OK;
  double failed = rtm_mpi_rank(grid->mpi) != 0 && rtm_io_sync_partial(path) != RTM_OK;
  RTM_TRY(rtm_mpi_allreduce(grid->mpi, &failed, 1, RTM_MPI_MAX));
  if (failed > 0.0)
    RTM_FAIL(RTM_ERR_IO,
             "%s: a rank's planes of it did not reach the disk (that rank's error above): the "
             "file is not put in place",
             path);
fail:
  return status;
}

int rtm_app_create_output(const char *path, const rtm_io_volume_t *volume, const rtm_mpi_t *mpi,
                          const rtm_run_info_t *info, rtm_output_t **output) {
  const int status = rtm_output_create(path, volume, info, output);
  if (status == RTM_OK && collective_slabs(mpi)) rtm_output_expect_collective(*output);
  if (status == RTM_OK && rtm_mpi_size(mpi) == 1) rtm_output_expect_whole(*output);
  return status;
}

const char *rtm_app_slab_writes(const rtm_mpi_t *mpi) {
  if (rtm_mpi_size(mpi) == 1) return NULL;
  return collective_slabs(mpi) ? "collective (parallel HDF5)" : "rank 0, in rank order";
}

size_t rtm_app_slab_buffer_cells(const rtm_grid_t *grid) {
  if (rtm_mpi_size(grid->mpi) == 1 || collective_slabs(grid->mpi)) return 0;
  return rtm_mpi_largest_slab_cells(grid);
}

static int read_model_file(const char *path, const rtm_grid_t *grid, rtm_equation_t equation,
                           rtm_model_t *model) {
  int status = RTM_OK;
  float *values[RTM_IO_PARAMETERS];
  const rtm_io_volume_t volume = rtm_app_volume(grid);
  RTM_TRY(rtm_io_read_model(path, &volume, equation, values));
  *model = (rtm_model_t){.vp = values[RTM_IO_VP],
                         .epsilon = values[RTM_IO_EPSILON],
                         .delta = values[RTM_IO_DELTA],
                         .theta_deg = values[RTM_IO_THETA],
                         .phi_deg = values[RTM_IO_PHI]};
  status = rtm_model_update_range(model, grid);
  if (status != RTM_OK) {
    rtm_log_error("in model file %s", path);
    rtm_model_release(model);
  }
fail:
  return status;
}

/* On a z-slab the range of the whole model (dt and the layer follow vp_max, the sampling
 * warning vp_min): the same on every rank, as one rank would find it. */
static int range_over_ranks(const rtm_grid_t *grid, rtm_model_t *model) {
  int status = RTM_OK;
  double lowest = model->vp_min, highest[2] = {model->vp_max, model->epsilon_max};
  if (!rtm_grid_is_slab(grid)) return RTM_OK;
  RTM_TRY(rtm_mpi_allreduce(grid->mpi, &lowest, 1, RTM_MPI_MIN));
  RTM_TRY(rtm_mpi_allreduce(grid->mpi, highest, 2, RTM_MPI_MAX));
  model->vp_min = lowest;
  model->vp_max = highest[0];
  model->epsilon_max = highest[1];
fail:
  return status;
}

/* A launcher that binds each rank to one core (Open MPI's default for two ranks) leaves the
 * host's work (the model's parameters and coefficients, the trace pipeline) one thread a
 * rank: 93 s of set-up for a 1500^3 tti volume on two H200s of a 32-core machine, 13.5 s
 * with --bind-to none (run/results/mpi.md). Said once, by rank 0, with the remedy. */
/* The CPUs of a list such as "0-3,8,10-11" (cpuset files); 0 when it is not one. */
static long count_cpu_list(const char *list) {
  long count = 0;
  while (*list && *list != '\n') {
    char *end = NULL;
    const long first = strtol(list, &end, 10);
    long last = first;
    if (end == list || first < 0) return 0;
    if (*end == '-') {
      list = end + 1;
      last = strtol(list, &end, 10);
      if (end == list || last < first) return 0;
    }
    count += last - first + 1;
    list = *end == ',' ? end + 1 : end;
  }
  return count;
}

long rtm_app_job_cpus(void) {
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  char line[512], path[640], cpus[4096];
  long found = 0;
  FILE *cgroup = fopen("/proc/self/cgroup", "r");
  while (cgroup && !found && fgets(line, sizeof line, cgroup)) {
    line[strcspn(line, "\n")] = '\0';
    const char *v1 = strstr(line, ":cpuset:");
    if (strncmp(line, "0::", 3) == 0)
      snprintf(path, sizeof path, "/sys/fs/cgroup%s/cpuset.cpus.effective", line + 3);
    else if (v1)
      snprintf(path, sizeof path, "/sys/fs/cgroup/cpuset%s/cpuset.effective_cpus", v1 + 8);
    else
      continue;
    FILE *file = fopen(path, "r");
    if (file && fgets(cpus, sizeof cpus, file)) found = count_cpu_list(cpus);
    if (file) fclose(file);
  }
  if (cgroup) fclose(cgroup);
  return found > 0 && (online <= 0 || found < online) ? found : online;
}

static void warn_narrow_binding(const rtm_mpi_t *mpi) {
  cpu_set_t set;
  const long online = rtm_app_job_cpus();
  const int ranks = rtm_mpi_local_size(mpi);
  if (sched_getaffinity(0, sizeof set, &set) != 0 || online <= 0) return;
  const int usable = CPU_COUNT(&set), share = (int)(online / ranks);
  if (usable >= share || usable >= 8) return; /* its share of the node, or threads enough */
  rtm_log_warning("this rank may run on %d of the %ld CPUs the job has on this node (%d ranks "
                  "on it): the host's "
                  "work (the model's set-up, the traces) has %d thread%s; bind each rank to its "
                  "share (mpirun --bind-to none, or --map-by slot:PE=%d; srun "
                  "--cpus-per-task=%d)",
                  usable, online, ranks, usable, usable > 1 ? "s" : "", share, share);
}

int rtm_app_slab(rtm_grid_t *grid, rtm_mpi_t *mpi, int align) {
  int status = RTM_OK, z_offset = 0, nz_local = 0;
  grid->mpi = mpi;
  rtm_mpi_set_slab_align(mpi, align);
  if (rtm_mpi_size(mpi) == 1) return RTM_OK;
  warn_narrow_binding(mpi);
  RTM_TRY(rtm_mpi_slab_aligned(grid->n[2], rtm_mpi_size(mpi), rtm_mpi_rank(mpi), align, &z_offset,
                               &nz_local));
  RTM_TRY(rtm_grid_set_z_range(grid, z_offset, nz_local));
fail:
  return status;
}

/* A run whose model takes a gigabyte or more spends seconds reading or making it and
 * setting up its propagator before the first line of progress (21 s for 1500^3 tti on two
 * H200s): said before it starts. */
static void announce_set_up(const rtm_config_t *cfg, const rtm_grid_t *grid) {
  const int parameters = rtm_model_parameter_count(cfg->physics.equation);
  const double model_gb = rtm_model_bytes(cfg, grid) * 1e-9;
  if (model_gb < 1.0) return;
  rtm_log_info("set-up: %s %d parameter volume%s (%.3g GB%s), then %.3g GB of fields and "
               "coefficients a propagator%s",
               cfg->model.file[0] ? "reading" : "making", parameters, parameters > 1 ? "s" : "",
               model_gb, rtm_grid_is_slab(grid) ? " a rank" : "",
               rtm_propagator_bytes(cfg, grid) * 1e-9, rtm_grid_is_slab(grid) ? " and rank" : "");
}

static int load_model(const rtm_config_t *cfg, const rtm_grid_t *grid, rtm_preflight_t what,
                      rtm_model_t *model) {
  int status = RTM_OK;
  char where[RTM_CONFIG_ORIGIN_MAX];
  *model = (rtm_model_t){0};                          /* empty on every failure */
  RTM_TRY(rtm_propagator_preflight(cfg, grid, what)); /* a volume too large fails here */
  /* a file that is not there said with the deck's line of the key (a probe: the path alone) */
  if (cfg->model.file[0] && access(cfg->model.file, R_OK) != 0)
    RTM_FAIL(RTM_ERR_INPUT, "%s: cannot open model file %s (model.file): %s",
             rtm_config_origin(cfg, "model.file", where, sizeof where), cfg->model.file,
             strerror(errno));
  if (what == RTM_PREFLIGHT_RUN) announce_set_up(cfg, grid);
  if (cfg->model.file[0])
    RTM_TRY(read_model_file(cfg->model.file, grid, cfg->physics.equation, model));
  else
    RTM_TRY(rtm_model_from_constants(cfg, grid, model));
  RTM_TRY(range_over_ranks(grid, model));
  /* a large model takes seconds: a signal in them heard before more is set up */
  RTM_TRY(
      rtm_propagator_interrupted(cfg->model.file[0] ? "reading the model" : "making the model"));
fail:
  if (status != RTM_OK) rtm_model_release(model);
  return status;
}

int rtm_app_load_model(const rtm_config_t *cfg, const rtm_grid_t *grid, rtm_model_t *model) {
  char where[RTM_CONFIG_ORIGIN_MAX];
  /* model.description is makemodel's (probe T, T5: a model run with it and no model.file ran
   * the deck's constant model without a word; with model.file, one deck serves both) */
  if (cfg->model.description[0] && !cfg->model.file[0])
    rtm_log_warning("%s: model.description = %s is read by 'rtm3d makemodel' only, which writes "
                    "model.file from it; with no model.file this run takes the deck's constant "
                    "model.* values",
                    rtm_config_origin(cfg, "model.description, model.file", where, sizeof where),
                    cfg->model.description);
  return load_model(cfg, grid, RTM_PREFLIGHT_RUN, model);
}

double rtm_app_text_hash(const char *text, size_t length) {
  uint32_t hash = 2166136261u; /* FNV-1a */
  for (size_t i = 0; i < length; ++i)
    hash = (hash ^ (unsigned char)text[i]) * 16777619u;
  return (double)hash;
}

int rtm_app_load_run_model(const rtm_config_t *cfg, const rtm_grid_t *grid, rtm_mpi_t *mpi,
                           rtm_model_t *model) {
  int status = RTM_OK;
  char before[160] = "", after[160] = "";
  const int read = cfg->model.file[0] != '\0';
  if (read) rtm_io_file_stamp(cfg->model.file, before, sizeof before);
  RTM_TRY(rtm_app_load_model(cfg, grid, model));
  if (!read) return RTM_OK;
  /* each rank read its slab through an open of its own: a file renamed over model.file
   * meanwhile (makemodel --force) gave ranks of two models, exit 0 (a probe); the stamps'
   * hashes compared by two reductions */
  rtm_io_file_stamp(cfg->model.file, after, sizeof after);
  const double mine =
      before[0] && strcmp(before, after) == 0 ? rtm_app_text_hash(before, strlen(before)) : -1.0;
  double range[2] = {mine, -mine}; /* the least and, negated, the largest */
  RTM_TRY(rtm_mpi_world_allreduce(mpi, range, 2, RTM_MPI_MIN));
  if (range[0] >= 0.0 && range[0] == -range[1]) return RTM_OK;
  RTM_FAIL(RTM_ERR_IO,
           "model.file = %s changed while the run read it (its inode, size, mtime or ctime%s): "
           "the model could come from two files, so nothing is run; run again once the file "
           "is final",
           cfg->model.file, mine < 0.0 ? "" : ", on another rank: the ranks read different files");
fail:
  if (status != RTM_OK) rtm_model_release(model);
  return status;
}

int rtm_app_load_model_values(const rtm_config_t *cfg, const rtm_grid_t *grid, rtm_model_t *model) {
  return load_model(cfg, grid, RTM_PREFLIGHT_MODEL, model);
}

int rtm_app_write_report(const char *path, const rtm_report_t *report, const rtm_grid_t *grid,
                         const rtm_mem_ledger_t *ledger) {
  int status = RTM_OK;
  const int count = ledger ? ledger->count : 0;
  const rtm_io_volume_t volume = rtm_app_volume(grid);
  rtm_report_allocation_t *rows = NULL;
  if (count > 0) {
    rows = malloc((size_t)count * sizeof *rows);
    if (!rows) RTM_FAIL(RTM_ERR_NOMEM, "out of memory for the run report");
  }
  for (int i = 0; i < count; ++i) {
    const rtm_mem_record_t *r = &ledger->records[i];
    rows[i] = (rtm_report_allocation_t){r->label, r->strategy, r->bytes, r->reserved_bytes,
                                        r->compressed};
  }
  rtm_report_t filled = *report;
  filled.volume = &volume;
  filled.allocations = rows;
  filled.allocation_count = count;
  filled.allocation_total_bytes = ledger ? ledger->total_bytes : 0;
  status = rtm_report_write_json(path, &filled);
fail:
  free(rows);
  return status;
}

static int rank_timings(rtm_mpi_t *mpi, const double seconds[RTM_APP_RANK_PHASES],
                        rtm_timing_t timings[RTM_APP_RANK_TIMINGS]) {
  int status = RTM_OK;
  static const char *const names[RTM_APP_RANK_TIMINGS] = {"edge_planes_min",   "edge_planes_mean",
                                                          "edge_planes_max",   "interior_min",
                                                          "interior_mean",     "interior_max",
                                                          "copy_out_min",      "copy_out_mean",
                                                          "copy_out_max",      "copy_in_min",
                                                          "copy_in_mean",      "copy_in_max",
                                                          "halo_exchange_min", "halo_exchange_mean",
                                                          "halo_exchange_max", "io_min",
                                                          "io_mean",           "io_max"};
  double least[RTM_APP_RANK_PHASES], most[RTM_APP_RANK_PHASES], sum[RTM_APP_RANK_PHASES];
  for (int p = 0; p < RTM_APP_RANK_PHASES; ++p)
    least[p] = most[p] = sum[p] = seconds[p];
  RTM_TRY(rtm_mpi_world_allreduce(mpi, least, RTM_APP_RANK_PHASES, RTM_MPI_MIN));
  RTM_TRY(rtm_mpi_world_allreduce(mpi, most, RTM_APP_RANK_PHASES, RTM_MPI_MAX));
  RTM_TRY(rtm_mpi_world_allreduce(mpi, sum, RTM_APP_RANK_PHASES, RTM_MPI_SUM));
  for (int p = 0; p < RTM_APP_RANK_PHASES; ++p) {
    const double value[3] = {least[p], sum[p] / rtm_mpi_world_size(mpi), most[p]};
    for (int k = 0; k < 3; ++k)
      timings[3 * p + k] = (rtm_timing_t){names[3 * p + k], value[k]};
  }
fail:
  return status;
}

int rtm_app_reduce_run_timings(rtm_mpi_t *mpi, const double seconds[RTM_APP_RANK_PHASES],
                               double *shot_values, int count,
                               rtm_timing_t timings[RTM_APP_RANK_TIMINGS]) {
  int status = RTM_OK;
  if (rtm_mpi_world_size(mpi) == 1) return RTM_OK;
  if (rtm_mpi_groups(mpi) > 1) /* each shot's figures are its group's: the file's rank gets them */
    RTM_TRY(rtm_mpi_world_allreduce(mpi, shot_values, count, RTM_MPI_MAX));
  RTM_TRY(rank_timings(mpi, seconds, timings));
fail:
  return status;
}

int rtm_app_check_disk(const char *dir, double bytes, const char *advice) {
  char path[4096];
  struct statvfs fs;
  snprintf(path, sizeof path, "%s", dir && dir[0] ? dir : ".");
  while (statvfs(path, &fs) != 0) { /* not created yet: the nearest parent that exists */
    if (strcmp(path, ".") == 0 || strcmp(path, "/") == 0) return RTM_OK; /* nothing to weigh */
    char *slash = strrchr(path, '/');
    if (!slash)
      snprintf(path, sizeof path, ".");
    else
      slash[slash == path] = '\0'; /* "a/b" -> "a", "/a" -> "/" */
  }
  const double free_bytes = (double)fs.f_bavail * (double)fs.f_frsize;
  if (bytes <= free_bytes) return RTM_OK;
  rtm_log_error("the outputs need about %.3g GB in %s, where %.3g GB are free: %s", bytes * 1e-9,
                dir, free_bytes * 1e-9, advice);
  return RTM_ERR_IO;
}

/* `path` as the file system will resolve it once the folders a run makes exist: the
 * longest leading part that exists resolved (realpath: links, "..", "."), the rest taken
 * word by word, ".." dropping the word before (a folder the run makes is no link). Probe T
 * (T1): output.dir = D/new/.. wrote over D's files, its run's inputs, as the comparison of
 * paths that did not exist yet saw two names. 0 when it does not fit. */
static int resolved_path(const char *path, char *out, size_t size) {
  char head[4096], rest[4096] = "";
  if (snprintf(head, sizeof head, "%s", path[0] ? path : ".") >= (int)sizeof head) return 0;
  char *real = NULL;
  while (!(real = realpath(head, NULL))) { /* the missing tail moved to rest */
    if (strcmp(head, ".") == 0 || strcmp(head, "/") == 0) return 0; /* a folder gone */
    char *slash = strrchr(head, '/');
    char moved[4096];
    if (snprintf(moved, sizeof moved, "%s%s%s", slash ? slash + 1 : head, rest[0] ? "/" : "",
                 rest) >= (int)sizeof moved)
      return 0;
    snprintf(rest, sizeof rest, "%s", moved);
    if (!slash)
      snprintf(head, sizeof head, ".");
    else if (slash == head)
      snprintf(head, sizeof head, "/");
    else
      *slash = '\0';
  }
  const int fits = snprintf(out, size, "%s", real) < (int)size;
  free(real);
  for (char *word = strtok(rest, "/"); fits && word; word = strtok(NULL, "/")) {
    const size_t length = strlen(out);
    if (strcmp(word, ".") == 0) continue;
    if (strcmp(word, "..") == 0) {
      char *slash = strrchr(out, '/');
      if (slash) slash[slash == out] = '\0'; /* "/a/b" -> "/a", "/a" -> "/" */
      continue;
    }
    if (snprintf(out + length, size - length, "%s%s", length > 1 ? "/" : "", word) >=
        (int)(size - length))
      return 0;
  }
  return fits;
}

int rtm_app_check_overwrite(const rtm_config_t *cfg, const char *path, const char *key) {
  struct stat info;
  char resolved[4096];
  /* stat, not fopen: a FIFO there would block the open until a writer came; a path through
   * a folder not made yet (D/new/../NAME) as it will resolve */
  if (cfg->output.overwrite ||
      (stat(path, &info) != 0 &&
       !(resolved_path(path, resolved, sizeof resolved) && stat(resolved, &info) == 0)))
    return RTM_OK;
  rtm_log_error("%s exists: a run does not replace an earlier one's output; pass --force (or "
                "set output.overwrite = true) to replace it, or choose another %s",
                path, key);
  return RTM_ERR_CONFIG;
}

int rtm_app_check_replaceable(const char *key, const char *path) {
  struct stat info;
  /* a link to nothing reads as absent to stat, yet the name is taken: the run's final
   * rename would refuse it after all the work, or replace a user's link unasked */
  if (lstat(path, &info) == 0 && S_ISLNK(info.st_mode) && stat(path, &info) != 0) {
    rtm_log_error("%s = %s is a symbolic link to nothing (a dangling link), a name this run "
                  "writes: remove the link or choose another name",
                  key, path);
    return RTM_ERR_CONFIG;
  }
  if (stat(path, &info) != 0 || S_ISREG(info.st_mode)) return RTM_OK;
  rtm_log_error("%s = %s exists and is not a regular file (a device, a FIFO or a folder): rtm3d "
                "writes and replaces files only; remove it or choose another name",
                key, path);
  return RTM_ERR_CONFIG;
}

int rtm_app_same_file(const char *a, const char *b) {
  struct stat first, second;
  if (stat(a, &first) == 0 && stat(b, &second) == 0)
    return first.st_dev == second.st_dev && first.st_ino == second.st_ino;
  char resolved_a[4096], resolved_b[4096];
  if (resolved_path(a, resolved_a, sizeof resolved_a) &&
      resolved_path(b, resolved_b, sizeof resolved_b))
    return strcmp(resolved_a, resolved_b) == 0;
  return strcmp(a, b) == 0;
}

/* `output`, a file the run writes (first as `partial` where that is not NULL), against
 * every input of `inputs` [count]. */
static int check_output_apart(const char *output, const char *partial, const rtm_app_file_t *inputs,
                              int count) {
  const char *written = partial ? partial : output;
  for (int k = 0; k < count; ++k) {
    if (!inputs[k].path || !inputs[k].path[0] || !rtm_app_same_file(inputs[k].path, written))
      continue;
    rtm_log_error("%s = %s is also an output of this run (%s%s%s): the run would replace its "
                  "own input; choose another output.name or output.dir (or give %s another "
                  "name)",
                  inputs[k].key, inputs[k].path, output, partial ? ", written as " : "",
                  partial ? partial : "", inputs[k].key);
    return RTM_ERR_CONFIG;
  }
  return RTM_OK;
}

/* The files a run reads (`reads`: RTM_APP_READS_*), each with its key, into inputs
 * [RTM_APP_INPUTS]; a path NULL where the run does not read that one. */
enum { RTM_APP_INPUTS = 6 };
static void run_inputs(const rtm_config_t *cfg, unsigned reads,
                       rtm_app_file_t inputs[RTM_APP_INPUTS]) {
  const rtm_app_file_t all[RTM_APP_INPUTS] = {
      {"the deck", cfg->path},
      {"model.file", reads & RTM_APP_READS_MODEL ? cfg->model.file : NULL},
      {"model.description", reads & RTM_APP_READS_DESCRIPTION ? cfg->model.description : NULL},
      {"rtm.observed", reads & RTM_APP_READS_OBSERVED ? cfg->rtm.observed : NULL},
      {"shots.file", cfg->shots.layout == RTM_SHOTS_FILE ? cfg->shots.file : NULL},
      {"receivers.file", cfg->receivers.layout == RTM_RECEIVERS_FILE ? cfg->receivers.file : NULL}};
  memcpy(inputs, all, sizeof all);
}

int rtm_app_check_inputs_kept(const rtm_config_t *cfg, unsigned reads, const char *const *outputs,
                              int count) {
  rtm_app_file_t inputs[RTM_APP_INPUTS];
  run_inputs(cfg, reads, inputs);
  const int input_count = RTM_APP_INPUTS;
  char partial[2 * RTM_CONFIG_PATH_MAX + 48];
  for (int i = 0; i < count; ++i) {
    /* the name the run writes first (PATH.partial, removed at its start) is written too */
    int status = check_output_apart(outputs[i], NULL, inputs, input_count);
    if (status == RTM_OK && rtm_io_partial_path(outputs[i], partial, sizeof partial) == RTM_OK)
      status = check_output_apart(outputs[i], partial, inputs, input_count);
    if (status != RTM_OK) return status;
  }
  return RTM_OK;
}

/* Whether text ends with suffix. */
static int ends_with(const char *text, const char *suffix) {
  const size_t length = strlen(text), tail = strlen(suffix);
  return length >= tail && strcmp(text + length - tail, suffix) == 0;
}

/* The names a model or migrate run writes (NAME.lock, then NAME.h5 and the rest) into
 * `names` [RTM_APP_RUN_OUTPUTS][size]; their count. */
enum { RTM_APP_RUN_OUTPUTS = 10 };
static int run_outputs(const rtm_config_t *cfg, int migrate,
                       char (*names)[2 * RTM_CONFIG_PATH_MAX + 16]) {
  /* NAME.commit: the commit's journal, written as NAME.commit.partial (probe U, U2: an input
   * at that name was removed by the run) */
  static const char *const both[] = {".lock", ".h5", ".json", ".xmf", ".commit"};
  static const char *const of_migrate[] = {".resume.h5", "_image_x.png", "_image_y.png",
                                           "_image_z.png"};
  const size_t size = sizeof names[0];
  int count = 0;
  for (size_t k = 0; k < sizeof both / sizeof both[0]; ++k)
    snprintf(names[count++], size, "%s/%s%s", cfg->output.dir, cfg->output.name, both[k]);
  for (size_t k = 0; migrate && k < sizeof of_migrate / sizeof of_migrate[0]; ++k)
    snprintf(names[count++], size, "%s/%s%s", cfg->output.dir, cfg->output.name, of_migrate[k]);
  if (!migrate && cfg->output.segy)
    snprintf(names[count++], size, "%s/%s.sgy", cfg->output.dir, cfg->output.name);
  return count;
}

int rtm_app_claim_output(const rtm_config_t *cfg, const rtm_mpi_t *mpi, const char *path,
                         int migrate, rtm_io_name_lock_t *lock) {
  char outputs[RTM_APP_RUN_OUTPUTS][2 * RTM_CONFIG_PATH_MAX + 16];
  const char *listed[RTM_APP_RUN_OUTPUTS];
  lock->fd = -1;
  /* before the lock, which is itself a file the run writes */
  const int count = run_outputs(cfg, migrate, outputs);
  for (int k = 0; k < count; ++k)
    listed[k] = outputs[k];
  const unsigned reads = RTM_APP_READS_MODEL | (migrate ? RTM_APP_READS_OBSERVED : 0);
  int status = rtm_app_check_inputs_kept(cfg, reads, listed, count);
  if (status != RTM_OK) return status;
  if (rtm_mpi_world_rank(mpi) == 0) {
    status = rtm_io_lock_name(cfg->output.dir, cfg->output.name, "output.name", lock);
    if (status != RTM_OK) return status;
    /* again, now that the lock fixes the folder (rtm_io_outputs_commit refuses a folder
     * other than the lock's): output.dir replaced by a link to an input's folder between the
     * check above and the lock would lead the outputs onto the input (probe U, U3) */
    status = rtm_app_check_inputs_kept(cfg, reads, listed, count);
    if (status != RTM_OK) return status;
    /* a killed run's report or figure temps (written aside of their partials, under names
     * of their own; bench's report aside of NAME.json, probe E12) go, whatever command this
     * run is. Not NAME_image_x.png's own: a plot -o writes aside of it without the lock. */
    static const char *const written_aside[] = {".json.partial", "_image_x.png.partial",
                                                "_image_y.png.partial", "_image_z.png.partial",
                                                ".json"};
    /* only where a killed run's lock was taken over: a file of the user's at such a name,
     * with no run killed, is no temp of a run (probe F4) */
    if (lock->taken_over) {
      rtm_app_file_t inputs[RTM_APP_INPUTS];
      const char *kept[RTM_APP_INPUTS];
      run_inputs(cfg, reads, inputs);
      for (int k = 0; k < RTM_APP_INPUTS; ++k)
        kept[k] = inputs[k].path;
      rtm_io_remove_run_temps(cfg->output.dir, cfg->output.name, written_aside,
                              (int)(sizeof written_aside / sizeof written_aside[0]), kept,
                              RTM_APP_INPUTS);
      /* a migration killed within a resume save (between the link of the earlier state as
       * NAME.resume.h5.replaced and its removal) left that link: the earlier state, or a
       * second name of the one in place; a full state (1 GB at 512^3) no run would remove
       * (probe E6). Removed when it is a state rtm3d wrote or a link of the one in place. */
      char replaced[2 * RTM_CONFIG_PATH_MAX + 32], state[2 * RTM_CONFIG_PATH_MAX + 32];
      struct stat info, current;
      const int named = (size_t)snprintf(replaced, sizeof replaced, "%s/%s.resume.h5.replaced",
                                         cfg->output.dir, cfg->output.name) < sizeof replaced &&
                        (size_t)snprintf(state, sizeof state, "%s/%s.resume.h5", cfg->output.dir,
                                         cfg->output.name) < sizeof state;
      const int regular = named && lstat(replaced, &info) == 0 && S_ISREG(info.st_mode);
      const int linked = regular && lstat(state, &current) == 0 && info.st_dev == current.st_dev &&
                         info.st_ino == current.st_ino;
      if (regular && (linked || rtm_io_run_file_written(replaced)) && unlink(replaced) == 0)
        rtm_log_warning("removed %s, the earlier resume state a run of this name killed while "
                        "saving its state left",
                        replaced);
    }
  }
  /* a model run over a name whose migration stopped: its state would sit beside this run's
   * outputs, and a migrate --force of the name later would take them for its set (probe F2);
   * --force or not, as bench and makemodel refuse it */
  if (status == RTM_OK && !migrate && rtm_mpi_world_rank(mpi) == 0) {
    char state[2 * RTM_CONFIG_PATH_MAX + 16];
    struct stat info;
    if ((size_t)snprintf(state, sizeof state, "%s/%s.resume.h5", cfg->output.dir,
                         cfg->output.name) < sizeof state &&
        lstat(state, &info) == 0 && S_ISREG(info.st_mode) && rtm_io_run_file_written(state)) {
      rtm_log_error("output.name '%s': %s is the resume state of a stopped migration of that "
                    "name (--force or not, model does not replace a migration's work): resume "
                    "it with rtm3d migrate, remove it, or choose another output.name",
                    cfg->output.name, state);
      status = RTM_ERR_CONFIG;
    }
  }
  /* a folder, device or FIFO at an output's name would stop the run at its final rename,
   * after all its work: refused now, --force or not */
  for (int k = 0; status == RTM_OK && k < count; ++k)
    status = rtm_app_check_replaceable("output.name", outputs[k]);
  /* the run file first, then the run's other files: none replaced without --force (the
   * lock is this run's own, a resume state the run's to resume from) */
  if (status == RTM_OK) status = rtm_app_check_overwrite(cfg, path, "output.name");
  for (int k = 0; status == RTM_OK && k < count; ++k)
    if (strcmp(outputs[k], path) != 0 && !ends_with(outputs[k], ".lock") &&
        !ends_with(outputs[k], ".resume.h5"))
      status = rtm_app_check_overwrite(cfg, outputs[k], "output.name");
  return status;
}

/* Whether `path` is a file of an earlier rtm3d run of the name: a SEG-Y whose text header
 * says rtm3d wrote it from the run file `h5_path`, a figure carrying rtm3d's PNG mark. */
static int written_by_rtm3d(const char *path, const char *h5_path) {
  return ends_with(path, ".sgy") ? rtm_segy_written_from(path, h5_path)
                                 : rtm_png_written_by_rtm3d(path);
}

int rtm_app_drop_other_outputs(const rtm_config_t *cfg, int migrate, const char *h5_path,
                               rtm_io_outputs_t *set) {
  static const char *const figures[] = {"_image_x.png", "_image_y.png", "_image_z.png"};
  const char *others[4]; /* NAME.sgy and the figures */
  int count = 0;
  if (!cfg->output.overwrite) return RTM_OK;                  /* the claim found none of them */
  if (migrate || !cfg->output.segy) others[count++] = ".sgy"; /* a model run's copy */
  for (int k = 0; !migrate && k < 3; ++k)
    others[count++] = figures[k]; /* a migration's */
  char path[2 * RTM_CONFIG_PATH_MAX + 32], dropped[4 * sizeof path] = "";
  size_t length = 0;
  for (int k = 0; k < count; ++k) {
    struct stat info;
    snprintf(path, sizeof path, "%s/%s%s", cfg->output.dir, cfg->output.name, others[k]);
    if (lstat(path, &info) != 0) continue;
    if (!S_ISREG(info.st_mode) || !written_by_rtm3d(path, h5_path)) {
      const int segy = ends_with(path, ".sgy");
      rtm_log_warning("%s stays: it is not a %s rtm3d wrote%s%s, so not this run's to remove "
                      "(this run writes no file of that name)",
                      path, segy ? "SEG-Y file" : "figure", segy ? " from " : "",
                      segy ? h5_path : "");
      continue;
    }
    const int status = rtm_io_outputs_drop(set, path);
    if (status != RTM_OK) return status;
    const int n =
        snprintf(dropped + length, sizeof dropped - length, "%s%s", length ? ", " : "", path);
    if (n > 0 && (size_t)n < sizeof dropped - length) length += (size_t)n;
  }
  if (length)
    rtm_log_warning("--force: this run removes %s, an earlier run's files of output.name '%s' "
                    "that rtm3d wrote and this run does not write (they would sit beside its "
                    "outputs as if they were of this run)",
                    dropped, cfg->output.name);
  return RTM_OK;
}

/* A model or migrate run NAME's files beside its run file NAME.h5, by the ending of their
 * names, what each is, and whether rtm_app_refuse_other_runs looks for it (not the report
 * NAME.json, which bench writes itself, nor the journal NAME.commit, which a taker of the
 * name's lock finishes). */
static const struct {
  const char *ending, *what;
  int looked_for;
} run_files[] = {{".h5", "run file", 1},
                 {".json", "report", 0},
                 {".xmf", "XDMF sidecar", 1},
                 {".sgy", "SEG-Y gathers", 1},
                 {".resume.h5", "resume state", 1},
                 {"_image_x.png", "x-plane figure", 1},
                 {"_image_y.png", "y-plane figure", 1},
                 {"_image_z.png", "z-plane figure", 1},
                 {".commit", "commit journal", 0}};

int rtm_app_run_member(const char *file, char *run_file, size_t size, const char **what) {
  const size_t length = strlen(file);
  for (size_t k = 1; k < sizeof run_files / sizeof run_files[0]; ++k) { /* past NAME.h5 */
    const size_t tail = strlen(run_files[k].ending);
    if (length <= tail || strcmp(file + length - tail, run_files[k].ending) != 0) continue;
    if ((size_t)snprintf(run_file, size, "%.*s.h5", (int)(length - tail), file) >= size) continue;
    if (!rtm_io_run_file_written(run_file)) continue;
    *what = run_files[k].what;
    return 1;
  }
  return 0;
}

int rtm_app_refuse_other_runs(const char *dir, const char *name, const char *key,
                              const char *writes) {
  char h5[2 * RTM_CONFIG_PATH_MAX + 16], path[2 * RTM_CONFIG_PATH_MAX + 32];
  char found[4 * sizeof path] = "";
  size_t length = 0;
  snprintf(h5, sizeof h5, "%s/%s.h5", dir, name);
  for (size_t k = 0; k < sizeof run_files / sizeof run_files[0]; ++k) {
    const char *ending = run_files[k].ending;
    struct stat info;
    snprintf(path, sizeof path, "%s/%s%s", dir, name, ending);
    if (!run_files[k].looked_for || lstat(path, &info) != 0 || !S_ISREG(info.st_mode)) continue;
    /* only what rtm3d provably wrote: a file of the user's at such a name is no run's */
    const int rtm3d = strcmp(ending, ".h5") == 0          ? rtm_io_run_file_written(path)
                      : strcmp(ending, ".xmf") == 0       ? rtm_xdmf_written_by_rtm3d(path)
                      : strcmp(ending, ".resume.h5") == 0 ? 1 /* a name only a migration writes */
                                                          : written_by_rtm3d(path, h5);
    if (!rtm3d) continue;
    const int n = snprintf(found + length, sizeof found - length, "%s%s", length ? ", " : "", path);
    if (n > 0 && (size_t)n < sizeof found - length) length += (size_t)n;
  }
  if (!length) return RTM_OK;
  rtm_log_error("%s '%s': rtm3d wrote %s for a model or migrate run of that name, and %s "
                "(--force or not: a run's files are one set): remove them, or choose another %s",
                key, name, found, writes, key);
  return RTM_ERR_CONFIG;
}

void rtm_app_remove_made(void *context) {
  /* the abort ends this process before its cleanup: what this run made goes first, the
   * lock last (a disk that filled keeps no partial file holding its space) */
  const rtm_app_made_t *made = context;
  rtm_io_outputs_discard(*made->outputs);
  char partial[2 * RTM_CONFIG_PATH_MAX + 16];
  if (*made->output && rtm_io_partial_path(made->path, partial, sizeof partial) == RTM_OK)
    unlink(partial); /* the file may still be open: the abort closes it */
  rtm_io_unlock_name(made->lock);
}
