#define _POSIX_C_SOURCE 200809L /* access, stat's st_mtim */
/* rtm3d migrate CONFIG: reverse-time migration of the observed gathers of rtm.observed, one
 * shot after another (solver/rtm/rtm_migration.h), into /image and /illumination of the
 * run's HDF5 file, with the JSON run report beside it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app.h"
#include "progress.h"
#include "rtm_io.h"
#include "rtm_migration.h"
#include "rtm_mpi.h"
#include "rtm_physics.h"
#include "rtm_status.h"
#include "rtm_traces.h" /* rtm_dispersion_check_migration */
#include "rtm_version.h"
#include "solver_io.h"

static void usage(FILE *out) {
  fprintf(out, "usage: rtm3d migrate CONFIG [--set section.key=value ...] [--quiet] [--force]\n\n"
               "Reverse-time migration: for each shot of the acquisition ([shots], [receivers])\n"
               "the source wavefield is propagated forward and brought back in the backward pass\n"
               "as rtm.reconstruction says: snapshots every rtm.imaging_step steps, boundary (its\n"
               "shell every step, the rest rebuilt backwards), checkpoint (recomputed from\n"
               "rtm.checkpoints states), or auto (the default: the fastest that fits memory,\n"
               "within memory.limit_gb when set; the run says which and why),\n"
               "the observed gather of rtm.observed (an HDF5 file as 'rtm3d model' writes\n"
               "it: /shots/<k>/..., or /traces/... for one shot) is back-propagated from its\n"
               "receivers, and the image I += S R is summed over the shots. Writes OUTPUT.h5\n"
               "(/image and /illumination [nz][ny][nx]; /shots/<k>/image with rtm.shot_images),\n"
               "OUTPUT_image_x.png, _y.png, _z.png (its planes through the middle of the grid)\n"
               "and OUTPUT.json (timings per phase and shot, recomputed steps, MCells/s, the\n"
               "reconstruction with its memory estimated and taken, every buffer), where OUTPUT = "
               "output.dir/output.name. The file's shots must be the\n"
               "acquisition's (positions, receivers); gathers at another sample interval are\n"
               "resampled to the modelling dt.\n\n"
               "After every shot but the last the sums so far go to OUTPUT.resume.h5\n"
               "(atomically): a run that stops resumes there when started again with the same\n"
               "config, and ends with the image an uninterrupted run gives, bit for bit; another\n"
               "config is refused, naming the key that changed. (Not with rtm.shot_images.)\n\n"
               "  --set k=v         override one key of the deck (repeatable)\n"
               "  --max-shots=N     migrate at most N shots in this run, then stop (exit 0) with\n"
               "                    the state saved for the next run to resume\n"
               "  --quiet           errors alone: no progress, warnings or summary\n"
               "  --force           replace OUTPUT.h5 when it exists (output.overwrite = true)\n\n"
               "'rtm3d help-config' lists every key ([rtm] for the migration's own).\n");
}

/* The state of one migration run, shared by its phases. */
typedef struct {
  rtm_config_t cfg;
  int quiet;
  rtm_grid_t grid;
  rtm_model_t model;
  rtm_shots_t shots;
  rtm_migration_t *migration;
  double dt_s; /* the modelling dt (time.dt, or auto from the model), before the migration */
  char device[256];
  char h5_path[2 * RTM_CONFIG_PATH_MAX], json_path[2 * RTM_CONFIG_PATH_MAX];
  char resume_path[2 * RTM_CONFIG_PATH_MAX];
  int first_shot; /* shots before it are in the resumed sums */
  int stopped;    /* --max-shots ended the run before the last shot */
  int shot_limit; /* --max-shots: shots to migrate in this run; 0 = all */
  char *config_text;
  char *inputs; /* the input files' fingerprints when the run began (input_fingerprints) */
  rtm_run_info_t info;
  rtm_output_t *output;
  rtm_io_name_lock_t lock;   /* rank 0: output.dir/output.name held from set-up to the end */
  rtm_io_outputs_t *outputs; /* rank 0: the files written, renamed together at the end */
  int root;                  /* rank 0 (or the only rank): it writes the files */
  int shot_lines;            /* a line per shot: each shot group's first rank, unless --quiet */
  rtm_grid_t whole;          /* the grid's whole z-range (grid: this rank's slab under MPI) */
  size_t cells;              /* of the whole grid */
  size_t local_cells;        /* of this rank's slab */
  /* this rank's slabs of the image, the illumination and (rtm.shot_images) one shot's image,
   * dense interior, on the host: no rank holds the whole volume (the files are written slab
   * by slab, rtm_app_write_slabs, the filters work on slabs) */
  float *slab_image, *slab_illumination, *slab_shot;
  float *slab_buffer; /* rank 0 under MPI: another rank's slab on its way to the file */
  rtm_progress_t progress;
  int shot;           /* the one being migrated, for the progress line */
  int shots_migrated; /* by this rank in this run, before the one being migrated */
  double start_s, setup_end_s, end_s;
  rtm_shot_timing_t total;
  double read_s, write_s;
  rtm_timing_t rank_timings[RTM_APP_RANK_TIMINGS]; /* under MPI: the phases over the ranks */
  /* [5][shot count]: forward, backward, imaging, I/O seconds of each shot, and the steps the
   * reconstruction recomputed */
  double *shot_seconds;
} migrate_run_t;

static int wants_help(int argc, char **argv) {
  for (int i = 1; i < argc; ++i)
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) return 1;
  return 0;
}

/* The observed file holds as many shots as the acquisition has. */
static int check_shot_count(const migrate_run_t *run) {
  int status = RTM_OK, count = 0;
  RTM_TRY(rtm_io_shot_count(run->cfg.rtm.observed, &count));
  if (count != run->shots.count)
    RTM_FAIL(RTM_ERR_INPUT,
             "rtm.observed = %s holds %d shot(s) but the acquisition of the config has %d "
             "(shots.layout and its keys must describe the shots that were recorded)",
             run->cfg.rtm.observed, count, run->shots.count);
fail:
  return status;
}

/* --max-shots=N, the one option of migrate beyond the shared ones. */
/* --max-shots N (main splits --max-shots=N into the two): taken out of argv before the
 * shared parser reads the rest, *argc shortened. */
static int take_max_shots(migrate_run_t *run, int *argc, char **argv) {
  int kept = 0;
  for (int i = 0; i < *argc; ++i) {
    if (i == 0 || strcmp(argv[i], "--max-shots") != 0) {
      argv[kept++] = argv[i];
      continue;
    }
    const char *text = i + 1 < *argc ? argv[i + 1] : "";
    char *end = NULL;
    const long value = strtol(text, &end, 10);
    if (end == text || *end != '\0' || value < 1 || value > 1000000000L) {
      rtm_log_error("migrate: --max-shots '%s': expected a positive integer", text);
      return RTM_ERR_USAGE;
    }
    run->shot_limit = (int)value;
    ++i;
  }
  *argc = kept;
  return RTM_OK;
}

static int parse_options(char **argv, const int *extra, int extra_count) {
  if (extra_count == 0) return RTM_OK;
  rtm_log_error("migrate: unknown option '%s' (see 'rtm3d migrate --help')", argv[extra[0]]);
  return RTM_ERR_USAGE;
}

static int preflight_shots(const migrate_run_t *run);

static int set_up(migrate_run_t *run, int argc, char **argv) {
  int status = RTM_OK, extra[4], extra_count = 4;
  rtm_config_t *cfg = &run->cfg;
  RTM_TRY(take_max_shots(run, &argc, argv));
  RTM_TRY(rtm_app_load_config(argc, argv, cfg, &run->quiet, extra, &extra_count));
  RTM_TRY(parse_options(argv, extra, extra_count));
  snprintf(run->h5_path, sizeof run->h5_path, "%s/%s.h5", cfg->output.dir, cfg->output.name);
  RTM_TRY(rtm_app_claim_output(cfg, run->h5_path, &run->lock)); /* before any work */
  if (cfg->rtm.shot_images && run->shot_limit > 0)
    RTM_FAIL(RTM_ERR_USAGE,
             "migrate: --max-shots stops a run to resume it later, and rtm.shot_images writes "
             "each shot's image into the final file, which a stopped run does not write: drop "
             "one of them");
  if (!cfg->rtm.observed[0])
    RTM_FAIL(RTM_ERR_CONFIG,
             "%s: migrate needs rtm.observed, the HDF5 file of the recorded "
             "gathers (rtm3d model writes one)",
             cfg->path[0] ? cfg->path : "configuration");
  RTM_TRY(rtm_dispersion_check_migration(cfg));
  RTM_TRY(rtm_grid_init(&run->grid, cfg->grid.n, cfg->grid.spacing_m, cfg->grid.origin_m));
  run->whole = run->grid;
  RTM_TRY(rtm_mpi_split_groups(cfg->mpi.shot_groups)); /* refused alike on every rank */
  run->root = rtm_mpi_world_rank() == 0;
  run->shot_lines = !run->quiet && rtm_mpi_rank() == 0;
  run->quiet = run->quiet || !run->root; /* one progress line, rank 0's */
  RTM_TRY(rtm_app_slab(&run->grid));
  RTM_TRY(rtm_shots_init(cfg, &run->grid, &run->shots));
  RTM_TRY(check_shot_count(run));
  if (cfg->mpi.shot_groups > run->shots.count)
    RTM_FAIL(RTM_ERR_CONFIG,
             "%s: mpi.shot_groups = %d for %d shots would leave groups idle: at most %d", cfg->path,
             cfg->mpi.shot_groups, run->shots.count, run->shots.count);
  if (cfg->mpi.shot_groups > 1 && cfg->rtm.shot_images)
    RTM_FAIL(RTM_ERR_UNSUPPORTED,
             "%s: rtm.shot_images with mpi.shot_groups = %d is not implemented (each shot's image "
             "would travel to the first rank): set one of them off",
             cfg->path, cfg->mpi.shot_groups);
  RTM_TRY(rtm_app_load_model(cfg, &run->grid, &run->model));
  RTM_TRY(rtm_resolve_dt(cfg, &run->model, &run->grid, &run->dt_s));
  /* the gathers before the migration takes its memory: a wrong file is refused at once */
  RTM_TRY(preflight_shots(run));
  RTM_TRY(rtm_migration_create(cfg, &run->grid, &run->model, &run->migration));
  rtm_migration_describe(run->migration, run->device, sizeof run->device);
  snprintf(run->h5_path, sizeof run->h5_path, "%s/%s.h5", cfg->output.dir, cfg->output.name);
  snprintf(run->json_path, sizeof run->json_path, "%s/%s.json", cfg->output.dir, cfg->output.name);
  snprintf(run->resume_path, sizeof run->resume_path, "%s/%s.resume.h5", cfg->output.dir,
           cfg->output.name);
  run->config_text = rtm_config_echo_string(cfg);
  if (!run->config_text) RTM_FAIL(RTM_ERR_NOMEM, "out of memory");
  run->cells = rtm_grid_interior_cells(&run->whole);
  run->local_cells = rtm_grid_interior_cells(&run->grid);
  run->slab_image = calloc(run->local_cells, sizeof *run->slab_image);
  run->slab_illumination = calloc(run->local_cells, sizeof *run->slab_illumination);
  if (!run->slab_image || !run->slab_illumination)
    RTM_FAIL(RTM_ERR_NOMEM, "out of memory for the %zu-cell slab of the image", run->local_cells);
  const size_t largest = rtm_app_slab_buffer_cells(&run->grid);
  if (run->root && largest > 0) {
    run->slab_buffer = malloc(largest * sizeof *run->slab_buffer);
    if (!run->slab_buffer)
      RTM_FAIL(RTM_ERR_NOMEM, "out of memory for a %zu-cell slab of the image", largest);
  }
fail:
  return status;
}

/* The first line where two resolved configs differ, as "section.key = A there, B here". */
static void describe_change(const char *saved, const char *now, char *text, size_t size) {
  char section[128] = "";
  snprintf(text, size, "the config text differs");
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

/* A saved volume of the resume file is [nz][ny][nx] of the grid. */
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

/* One line of input_fingerprints: "PATH\tsize=..\tmtime=..\tinode=..\n", or
 * "PATH\tmissing\n". st_dev is left out: the same file on a shared file system has another
 * device number on another node, where a requeued job may resume. */
static void append_fingerprint(char *text, size_t size, const char *path) {
  struct stat info;
  const size_t used = strlen(text);
  if (stat(path, &info) != 0)
    snprintf(text + used, size - used, "%s\tmissing\n", path);
  else
    snprintf(text + used, size - used, "%s\tsize=%lld\tmtime=%lld.%09ld\tinode=%llu\n", path,
             (long long)info.st_size, (long long)info.st_mtim.tv_sec, (long)info.st_mtim.tv_nsec,
             (unsigned long long)info.st_ino);
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
  const size_t size = (size_t)count * (RTM_CONFIG_PATH_MAX + 96) + 1;
  run->inputs = calloc(size, 1);
  if (!run->inputs) RTM_FAIL(RTM_ERR_NOMEM, "out of memory");
  for (int i = 0; i < count; ++i)
    append_fingerprint(run->inputs, size, paths[i]);
fail:
  return status;
}

/* The saved fingerprints against the current ones: the first file that differs is named.
 * The config being the same, both list the same paths in the same order. */
static int check_inputs(const migrate_run_t *run, const char *saved) {
  int status = RTM_OK;
  const char *now = run->inputs;
  while (*saved || *now) {
    const size_t saved_length = strcspn(saved, "\n"), now_length = strcspn(now, "\n");
    if (saved_length != now_length || memcmp(saved, now, saved_length) != 0) {
      const int path_length = (int)strcspn(saved, "\t\n");
      RTM_FAIL(RTM_ERR_INPUT,
               "%.*s changed since %s was saved (size/mtime): remove the state to start over, "
               "or restore the file",
               path_length, saved, run->resume_path);
    }
    saved += saved_length + (saved[saved_length] == '\n');
    now += now_length + (now[now_length] == '\n');
  }
fail:
  return status;
}

/* A run stopped after some shots left OUTPUT.resume.h5: the sums so far come back, and the
 * run goes on from the next shot, when the config is the one they were made under and the
 * input files are the ones they were read from. */
static int resume_if_interrupted(migrate_run_t *run) {
  int status = RTM_OK, done = 0;
  char *saved = NULL, *saved_inputs = NULL, change[512];
  rtm_dataset_t image = {0}, illumination = {0};
  RTM_TRY(input_fingerprints(run));
  FILE *exists = fopen(run->resume_path, "rb");
  if (!exists) return RTM_OK;
  fclose(exists);
  if (run->cfg.rtm.shot_images)
    RTM_FAIL(RTM_ERR_CONFIG,
             "%s holds a stopped run's state, but rtm.shot_images runs do not "
             "resume: remove it to start over",
             run->resume_path);
  RTM_TRY(rtm_io_read_run_state(run->resume_path, "completed_shots", &done, &saved));
  if (strcmp(saved, run->config_text) != 0) {
    describe_change(saved, run->config_text, change, sizeof change);
    RTM_FAIL(RTM_ERR_CONFIG,
             "%s was written by a run with another config (%s): resume with the same config, "
             "or remove it to start over",
             run->resume_path, change);
  }
  /* a state saved by an rtm3d before this record has no "inputs": it resumes as it did */
  RTM_TRY(rtm_io_read_run_text(run->resume_path, "inputs", &saved_inputs));
  if (saved_inputs) RTM_TRY(check_inputs(run, saved_inputs));
  if (done < 0 || done > run->shots.count)
    RTM_FAIL(RTM_ERR_INPUT, "%s: completed_shots = %d, but the acquisition has %d shots",
             run->resume_path, done, run->shots.count);
  RTM_TRY(check_saved_shape(run, "/image"));
  RTM_TRY(check_saved_shape(run, "/illumination"));
  /* every rank of the first shot group reads its slab of the saved sums (the other groups
   * start from zero: their sums are added to the first's at the end) */
  if (rtm_mpi_group() == 0) {
    const size_t first = (size_t)run->grid.z_offset, planes = (size_t)run->grid.nz_local;
    RTM_TRY(rtm_io_read_dataset_rows(run->resume_path, "/image", first, planes, &image));
    RTM_TRY(
        rtm_io_read_dataset_rows(run->resume_path, "/illumination", first, planes, &illumination));
    /* sums that are not finite would give an image of NaN after hours of shots */
    if (rtm_io_check_finite(run->resume_path, "/image", &image, first) != RTM_OK ||
        rtm_io_check_finite(run->resume_path, "/illumination", &illumination, first) != RTM_OK)
      RTM_FAIL(RTM_ERR_INPUT, "%s cannot be resumed: remove it to start the migration over",
               run->resume_path);
    RTM_TRY(rtm_migration_load(run->migration, image.data, illumination.data));
  }
  run->first_shot = done;
  if (!run->quiet)
    rtm_log_info("migrate: resuming after shot %d of %d (%s)", done, run->shots.count,
                 run->resume_path);
fail:
  rtm_dataset_release(&image);
  rtm_dataset_release(&illumination);
  free(saved_inputs);
  free(saved);
  return status;
}

/* After a shot: the sums so far and the shots they hold into OUTPUT.resume.h5, written
 * aside and renamed, so that a stop at any moment leaves the last complete state. */
/* The sums so far, the image and / or the illumination, into this rank's slabs (every rank
 * calls it alike). With shot groups each group's sums are added slab by slab into the first
 * group's (rtm_mpi_groups_sum), which writes them. */
static int read_sums(migrate_run_t *run, int image, int illumination) {
  int status = RTM_OK;
  RTM_TRY(rtm_migration_read(run->migration, image ? run->slab_image : NULL,
                             illumination ? run->slab_illumination : NULL));
  if (image) RTM_TRY(rtm_mpi_groups_sum(run->slab_image, run->local_cells));
  if (illumination) RTM_TRY(rtm_mpi_groups_sum(run->slab_illumination, run->local_cells));
fail:
  return status;
}

/* This rank's slab of the volume `name` into the file at `path`, whose output rank 0 holds
 * (`output`, NULL on the others): the first shot group's ranks call it alike. */
static int write_slabs(migrate_run_t *run, rtm_output_t *output, const char *path, const char *name,
                       const float *slab) {
  const rtm_app_slab_target_t volume = {name, -1, 0, 0.0};
  return rtm_app_write_slabs(&run->grid, output, path, &volume, slab, run->slab_buffer);
}

static int save_state(migrate_run_t *run, int completed) {
  int status = RTM_OK;
  rtm_output_t *state = NULL;
  const rtm_io_volume_t volume = rtm_app_volume(&run->whole);
  RTM_TRY(read_sums(run, 1, 1));
  if (rtm_mpi_group() != 0) return RTM_OK;
  if (run->root) {
    RTM_TRY(rtm_app_create_output(run->resume_path, &volume, &run->info, &state));
    rtm_output_no_sidecar(state); /* rtm3d's own file, not one to view */
    RTM_TRY(rtm_output_write_count(state, "completed_shots", completed));
    RTM_TRY(rtm_output_write_text(state, "inputs", run->inputs));
  }
  RTM_TRY(write_slabs(run, state, run->resume_path, "/image", run->slab_image));
  RTM_TRY(write_slabs(run, state, run->resume_path, "/illumination", run->slab_illumination));
  if (run->root) {
    status = rtm_output_close(state, 1);
    state = NULL;
  }
fail:
  if (state) rtm_output_close(state, 0);
  return status;
}

/* OUTPUT.h5 with the run's provenance, and the host volumes. */
static int open_output(migrate_run_t *run) {
  int status = RTM_OK;
  const rtm_config_t *cfg = &run->cfg;
  run->info =
      (rtm_run_info_t){RTM3D_VERSION, RTM3D_GIT_REVISION, rtm_migration_backend(run->migration),
                       run->device,   run->config_text,   rtm_app_command_line()};
  const rtm_io_volume_t volume = rtm_app_volume(&run->whole);
  run->shot_seconds = calloc(5 * (size_t)run->shots.count, sizeof *run->shot_seconds);
  if (!run->shot_seconds) RTM_FAIL(RTM_ERR_NOMEM, "out of memory for %d shots", run->shots.count);
  if (cfg->rtm.shot_images) {
    run->slab_shot = calloc(run->local_cells, sizeof *run->slab_shot);
    if (!run->slab_shot)
      RTM_FAIL(RTM_ERR_NOMEM, "out of memory for the %zu-cell slab of a shot's image",
               run->local_cells);
  }
  if (run->root) {
    /* the outputs' size, weighed before the first shot: the image and the illumination; each
     * shot's image (rtm.shot_images) or the resume state (two volumes, twice while a new
     * state replaces the last); the figures, the report and the metadata (1 MB) */
    const double volume_bytes = 4.0 * (double)run->cells;
    const double kept = cfg->rtm.shot_images ? run->shots.count : run->shots.count > 1 ? 4.0 : 0.0;
    RTM_TRY(rtm_app_check_disk(cfg->output.dir, (2.0 + kept) * volume_bytes + 1e6,
                               "set output.dir on a larger disk, or migrate a smaller grid"));
    RTM_TRY(rtm_app_create_output(run->h5_path, &volume, &run->info, &run->output));
  }
fail:
  return status;
}

/* Shot `shot`'s gather as read, for the checks and the resampling (rtm_migration.h). */
static rtm_observed_gather_t observed_gather(int shot, const rtm_io_gather_t *gather) {
  return (rtm_observed_gather_t){shot,          gather->count,    gather->samples,
                                 gather->dt_s,  gather->traces,   gather->source_m,
                                 gather->receivers_m};
}

/* Every shot of the file checked before the migration is set up: present, recorded where the
 * acquisition says, long enough. (Each gather is read again when its turn comes.) */
static int preflight_shots(const migrate_run_t *run) {
  int status = RTM_OK;
  rtm_io_gather_t gather = {0};
  for (int shot = 0; shot < run->shots.count; ++shot) {
    RTM_TRY(rtm_io_read_shot(run->cfg.rtm.observed, shot, "p", &gather));
    const rtm_observed_gather_t observed = observed_gather(shot, &gather);
    RTM_TRY(rtm_observed_check(&run->cfg, &run->grid, run->dt_s,
                               run->shots.source_m + 3 * (size_t)shot, &observed));
    rtm_io_gather_release(&gather);
  }
fail:
  rtm_io_gather_release(&gather);
  return status;
}

static void report_progress(void *context, int steps_done) {
  migrate_run_t *run = context;
  const int per_shot = 2 * rtm_migration_steps(run->migration);
  const int done = run->shots_migrated * per_shot + steps_done;
  /* the rate of steps done, not queued; a failure to wait shows at the next step's call */
  if (rtm_progress_due(&run->progress, done)) (void)rtm_migration_wait(run->migration);
  rtm_progress_update(&run->progress, done);
}

/* Reads, checks, resamples and mutes shot `shot`'s gather, then migrates it. */
static int migrate_shot(migrate_run_t *run, int shot) {
  int status = RTM_OK;
  rtm_io_gather_t gather = {0};
  float *observed = NULL;
  rtm_shot_timing_t timing;
  const rtm_config_t *cfg = &run->cfg;
  const double *source = run->shots.source_m + 3 * (size_t)shot;
  double start_s = rtm_wall_seconds();
  RTM_TRY(rtm_io_read_shot(cfg->rtm.observed, shot, "p", &gather));
  const rtm_observed_gather_t read = observed_gather(shot, &gather);
  RTM_TRY(rtm_observed_check(cfg, &run->grid, run->dt_s, source, &read));
  RTM_TRY(rtm_observed_at_modelling_dt(cfg, rtm_migration_backend(run->migration), run->dt_s,
                                       &read, &observed));
  rtm_migration_prepare(run->migration, source, gather.receivers_m, gather.count, observed);
  const double read_s = rtm_wall_seconds() - start_s;
  run->read_s += read_s;
  run->shot = shot;
  char label[64];
  snprintf(label, sizeof label, "shot %d/%d", shot + 1, run->shots.count);
  rtm_progress_label(&run->progress, label);
  RTM_TRY(rtm_migration_shot(run->migration, source, gather.receivers_m, gather.count, observed,
                             report_progress, run, &timing));
  run->total.forward_s += timing.forward_s;
  run->total.backward_s += timing.backward_s;
  run->total.imaging_s += timing.imaging_s;
  const int shots = run->shots.count;
  run->shot_seconds[shot] = timing.forward_s;
  run->shot_seconds[shots + shot] = timing.backward_s;
  run->shot_seconds[2 * shots + shot] = timing.imaging_s;
  run->shot_seconds[3 * shots + shot] = read_s;
  run->shot_seconds[4 * shots + shot] = (double)timing.recomputed_steps;
  char who[32] = "";
  if (rtm_mpi_groups() > 1) snprintf(who, sizeof who, "group %d: ", rtm_mpi_group());
  if (run->shot_lines)
    rtm_log_info_any_rank(
        "migrate: %sshot %d/%d in %.3g s (forward %.3g, backward %.3g, imaging %.3g, "
        "read %.3g)",
        who, shot + 1, shots, timing.forward_s + timing.backward_s + timing.imaging_s + read_s,
        timing.forward_s, timing.backward_s, timing.imaging_s, read_s);
fail:
  free(observed);
  rtm_io_gather_release(&gather);
  return status;
}

/* rtm.shot_images: each shot's image written on its own, the run's summed on the host, each
 * rank its slab. */
static int keep_shot_image(migrate_run_t *run, int shot) {
  int status = RTM_OK;
  char name[64];
  double start_s = rtm_wall_seconds();
  RTM_TRY(rtm_migration_read(run->migration, run->slab_shot, NULL));
  for (size_t i = 0; i < run->local_cells; ++i)
    run->slab_image[i] += run->slab_shot[i];
  snprintf(name, sizeof name, "/shots/%d/image", shot);
  RTM_TRY(write_slabs(run, run->output, run->h5_path, name, run->slab_shot));
  RTM_TRY(rtm_migration_clear(run->migration));
  run->write_s += rtm_wall_seconds() - start_s;
  run->shot_seconds[3 * run->shots.count + shot] += rtm_wall_seconds() - start_s;
fail:
  return status;
}

static int migrate_shots(migrate_run_t *run) {
  int status = RTM_OK;
  const int steps = rtm_migration_steps(run->migration);
  if (!run->quiet)
    rtm_log_info("migrate: %d x %d x %d cells, %d shot(s) of %d steps of %.4g ms, imaging every "
                 "%d steps, backend %s%s%s",
                 run->grid.n[0], run->grid.n[1], run->grid.n[2], run->shots.count, steps,
                 rtm_migration_dt(run->migration) * 1e3, rtm_migration_imaging_step(run->migration),
                 run->info.backend, run->device[0] ? " on " : "", run->device);
  run->setup_end_s = rtm_wall_seconds();
  int last = run->shots.count;
  if (run->shot_limit > 0 && run->first_shot + run->shot_limit < last)
    last = run->first_shot + run->shot_limit;
  /* the shots of this run, G at a time with G shot groups (group g takes the round's g-th):
   * a resumed one's ETA counts only what is left, the first group's */
  const int groups = rtm_mpi_groups();
  rtm_progress_begin(&run->progress, 2 * steps * ((last - run->first_shot + groups - 1) / groups),
                     (double)run->cells, run->quiet);
  for (int round = run->first_shot; round < last; round += groups) {
    const int shot = round + rtm_mpi_group();
    if (shot < last) {
      RTM_TRY(migrate_shot(run, shot));
      ++run->shots_migrated;
    }
    if (run->cfg.rtm.shot_images) {
      RTM_TRY(keep_shot_image(run, shot));
    } else if (round + groups < last || last < run->shots.count) {
      /* every rank: the sums are collective; after the acquisition's last shot the image
       * follows at once (a 1280^3 one-shot migration wrote 17 GB of state for nothing),
       * but a run stopped by --max-shots saves its last round too */
      const double start_s = rtm_wall_seconds();
      RTM_TRY(save_state(run, round + groups < last ? round + groups : last));
      if (shot < last) {
        run->write_s += rtm_wall_seconds() - start_s;
        run->shot_seconds[3 * run->shots.count + shot] += rtm_wall_seconds() - start_s;
      }
    }
  }
  rtm_progress_end(&run->progress);
  run->stopped = last < run->shots.count;
fail:
  return status;
}

/* A non-finite value in this rank's slab of the image or the illumination stops the run
 * before anything is written (an image of NaN is no result): its cell named. */
static int check_finite(const migrate_run_t *run, const char *name, const float *slab) {
  const size_t nx = (size_t)run->grid.n[0], ny = (size_t)run->grid.n[1];
  size_t i = 0;
  const size_t count = rtm_io_find_bad_values(slab, run->local_cells, 0.0, &i);
  if (count > 0) {
    rtm_log_error("%s is not finite (%g) at cell x %zu, y %zu, z %zu, and at %zu cells in all: "
                  "nothing written (the observed gathers and the velocity model are the usual "
                  "causes)",
                  name, slab[i], i % nx, i / nx % ny, i / (nx * ny) + (size_t)run->grid.z_offset,
                  count);
    return RTM_ERR_NUMERIC;
  }
  return RTM_OK;
}

/* An image of zeros everywhere is no image: said (one rank: under MPI a slab of zeros is no
 * sign), with the usual causes, rather than written as if it were one. */
static void warn_if_zero(const migrate_run_t *run) {
  if (rtm_mpi_world_size() > 1) return;
  for (size_t i = 0; i < run->local_cells; ++i)
    if (run->slab_image[i] != 0.0f) return;
  rtm_log_warning("the image is zero everywhere: rtm.mute may remove every sample of the "
                  "gathers (rtm.mute_velocity, rtm.mute_taper), or the record may end before any "
                  "reflection returns (time.steps)");
}

/* The summed image with the filters the config asks for, and the illumination: each rank of
 * the first shot group filters its slab (what the filters need of the others comes from
 * them), rank 0 writes the slabs as they come. */
static int write_image(migrate_run_t *run) {
  int status = RTM_OK;
  float *scratch = NULL;
  double start_s = rtm_wall_seconds();
  RTM_TRY(read_sums(run, !run->cfg.rtm.shot_images, 1));
  if (rtm_mpi_group() != 0) return RTM_OK;
  if (run->cfg.rtm.illumination)
    RTM_TRY(rtm_image_compensate(run->slab_image, run->slab_illumination, run->local_cells,
                                 run->cfg.rtm.illumination_eps));
  if (run->cfg.rtm.laplacian) {
    scratch = malloc(rtm_image_laplacian_scratch_cells(&run->grid) * sizeof *scratch);
    if (!scratch) RTM_FAIL(RTM_ERR_NOMEM, "out of memory for the image filter");
    RTM_TRY(
        rtm_image_laplacian(&run->grid, run->cfg.boundary.width_cells, run->slab_image, scratch));
  }
  RTM_TRY(check_finite(run, "/image", run->slab_image));
  warn_if_zero(run);
  RTM_TRY(check_finite(run, "/illumination", run->slab_illumination));
  RTM_TRY(write_slabs(run, run->output, run->h5_path, "/image", run->slab_image));
  RTM_TRY(write_slabs(run, run->output, run->h5_path, "/illumination", run->slab_illumination));
  if (run->root) {
    status = rtm_output_finish(run->output, run->outputs); /* frees the output either way */
    run->output = NULL;
    RTM_TRY(status);
  }
  run->write_s += rtm_wall_seconds() - start_s;
fail:
  free(scratch);
  return status;
}

/* OUTPUT_image_x.png, _y.png, _z.png: the image's planes through the middle of the grid
 * (rtm3d plot draws any other), clipped at the 99th percentile of |value|. Each rank of the
 * first shot group puts in its slab's rows (zeros elsewhere), summed on rank 0, which draws
 * them: the first shot group's ranks call it alike. */
static int write_pngs(migrate_run_t *run) {
  int status = RTM_OK;
  const rtm_grid_t *g = &run->grid;
  const size_t n[3] = {(size_t)g->n[0], (size_t)g->n[1], (size_t)g->n[2]};
  const size_t slab[3] = {(size_t)g->nz_local, n[1], n[0]}, z0 = (size_t)g->z_offset;
  /* the slices: x [nz][ny], y [nz][nx], z [ny][nx] */
  const size_t wider = n[0] > n[1] ? n[0] : n[1];
  const size_t largest_plane = n[2] * wider > n[0] * n[1] ? n[2] * wider : n[0] * n[1];
  float *plane = malloc(largest_plane * sizeof *plane);
  if (!plane) RTM_FAIL(RTM_ERR_NOMEM, "out of memory for the image's PNG slices");
  for (int a = 0; a < 3; ++a) {
    const char axis = "xyz"[a];
    const size_t index = n[a] / 2;
    /* an x or y slice is [nz][ny or nx], its rows z; a z slice one rank's plane */
    const size_t width = a == 0 ? n[1] : n[0], height = a == 2 ? n[1] : n[2];
    char path[2 * RTM_CONFIG_PATH_MAX + 32], partial[sizeof path + 16], title[128];
    int w = 0, h = 0;
    memset(plane, 0, width * height * sizeof *plane);
    if (a < 2)
      rtm_volume_slice(run->slab_image, slab, axis, index, plane + z0 * width, &w, &h);
    else if (index >= z0 && index < z0 + slab[0])
      rtm_volume_slice(run->slab_image, slab, axis, index - z0, plane, &w, &h);
    RTM_TRY(rtm_mpi_sum_to_root(plane, width * height));
    if (!run->root) continue;
    snprintf(path, sizeof path, "%s/%s_image_%c.png", run->cfg.output.dir, run->cfg.output.name,
             axis);
    snprintf(title, sizeof title, "rtm3d migrate: /image at %c = %zu (%g m)", axis, index,
             g->origin_m[a] + (double)index * g->spacing_m[a]);
    RTM_TRY(rtm_io_outputs_add(run->outputs, path, partial, sizeof partial));
    RTM_TRY(rtm_png_write(partial, plane, (int)width, (int)height, 99.0, title));
  }
fail:
  free(plane);
  return status;
}

/* Under MPI, the ranks' phases (the split steps', the host's wait in the exchanges, the
 * reading and writing) reduced over the ranks for the report. */
static int reduce_rank_phases(migrate_run_t *run) {
  int status = RTM_OK;
  double seconds[RTM_APP_RANK_PHASES];
  if (rtm_mpi_world_size() == 1) return RTM_OK;
  if (rtm_mpi_groups() > 1) /* each shot's figures are its group's: the file's rank gets them */
    RTM_TRY(rtm_mpi_world_allreduce(run->shot_seconds, 5 * run->shots.count, RTM_MPI_MAX));
  RTM_TRY(rtm_migration_phase_seconds(run->migration, seconds, &seconds[RTM_PHASE_COUNT]));
  seconds[RTM_PHASE_COUNT + 1] = run->read_s + run->write_s;
  RTM_TRY(rtm_app_rank_timings(seconds, run->rank_timings));
fail:
  return status;
}

static int write_report(migrate_run_t *run) {
  int status = RTM_OK;
  rtm_mem_ledger_t memory;
  rtm_mem_ledger_init(&memory);
  const int steps = rtm_migration_steps(run->migration);
  const double propagate_s = run->total.forward_s + run->total.backward_s;
  /* two propagations a shot */
  const double mcells =
      propagate_s > 0.0 ? 2.0 * (double)run->cells * steps * run->shots.count / propagate_s * 1e-6
                        : 0.0;
  rtm_timing_t timings[6 + RTM_APP_RANK_TIMINGS] = {{"setup", run->setup_end_s - run->start_s},
                                                    {"forward", run->total.forward_s},
                                                    {"backward", run->total.backward_s},
                                                    {"imaging", run->total.imaging_s},
                                                    {"read", run->read_s},
                                                    {"write", run->write_s}};
  const int timing_count = rtm_mpi_world_size() > 1 ? 6 + RTM_APP_RANK_TIMINGS : 6;
  for (int k = 6; k < timing_count; ++k)
    timings[k] = run->rank_timings[k - 6];
  const int shots = run->shots.count;
  const rtm_report_shot_values_t shot_values[5] = {
      {"forward_s", run->shot_seconds},
      {"backward_s", run->shot_seconds + shots},
      {"imaging_s", run->shot_seconds + 2 * shots},
      {"io_s", run->shot_seconds + 3 * shots},
      {"recomputed_steps", run->shot_seconds + 4 * shots}};
  size_t estimate = 0, measured = 0;
  int on_device = 0;
  rtm_migration_store_bytes(run->migration, &estimate, &measured, &on_device);
  const rtm_report_t report = {.command = "migrate",
                               .shot_count = shots,
                               .shot_values = shot_values,
                               .shot_value_count = 5,
                               .info = &run->info,
                               .steps = steps,
                               .dt_s = rtm_migration_dt(run->migration),
                               .model_precision =
                                   rtm_precision_name(rtm_config_model_precision(&run->cfg)),
                               .reconstruction = rtm_migration_reconstruction(run->migration),
                               .reconstruction_estimate_bytes = estimate,
                               .reconstruction_measured_bytes = measured,
                               .reconstruction_measured_in = on_device ? "device" : "host",
                               .timings = timings,
                               .timing_count = timing_count,
                               .mcells_per_s = mcells,
                               .output_path = run->h5_path,
                               .slab_writes = rtm_app_slab_writes()};
  char json_partial[sizeof run->json_path + 16];
  RTM_TRY(rtm_migration_memory(run->migration, &memory));
  RTM_TRY(rtm_io_outputs_add(run->outputs, run->json_path, json_partial, sizeof json_partial));
  RTM_TRY(rtm_app_write_report(json_partial, &report, &run->whole, &memory));
  RTM_TRY(rtm_io_outputs_commit(run->outputs)); /* the files appear together, or none */
  remove(run->resume_path);                     /* the image is complete, and in place */
  if (!run->quiet) {
    rtm_log_info("done in %.2f s: forward %.2f s, backward %.2f s, imaging %.2f s, %.1f MCells/s",
                 run->end_s - run->start_s, run->total.forward_s, run->total.backward_s,
                 run->total.imaging_s, mcells);
    rtm_log_info("wrote %s, %s and %s/%s_image_{x,y,z}.png", run->h5_path, run->json_path,
                 run->cfg.output.dir, run->cfg.output.name);
  }
fail:
  rtm_mem_ledger_release(&memory);
  return status;
}

static void release_run(migrate_run_t *run) {
  if (run->output) rtm_output_close(run->output, 0);
  rtm_io_outputs_free(run->outputs); /* a failed run's partial files */
  rtm_io_unlock_name(&run->lock);
  rtm_migration_destroy(run->migration);
  rtm_shots_release(&run->shots);
  rtm_model_release(&run->model);
  free(run->shot_seconds);
  free(run->slab_shot);
  free(run->slab_illumination);
  free(run->slab_image);
  free(run->slab_buffer);
  free(run->config_text);
  free(run->inputs);
}

int rtm_cmd_migrate(int argc, char **argv) {
  if (wants_help(argc, argv)) {
    usage(stdout);
    return 0;
  }
  int status = RTM_OK;
  migrate_run_t *run = calloc(1, sizeof *run);
  if (!run) RTM_FAIL(RTM_ERR_NOMEM, "out of memory");
  run->lock.fd = -1;
  RTM_TRY(rtm_io_outputs_create(&run->outputs));
  run->start_s = rtm_wall_seconds();
  RTM_TRY(set_up(run, argc, argv));
  RTM_TRY(resume_if_interrupted(run));
  RTM_TRY(open_output(run));
  RTM_TRY(migrate_shots(run));
  if (run->stopped) {
    if (!run->quiet)
      rtm_log_info("migrate: stopped after shot %d of %d (--max-shots); run again to resume from "
                   "%s",
                   run->first_shot + run->shot_limit, run->shots.count, run->resume_path);
    goto fail; /* status RTM_OK: no image yet, the state saved */
  }
  RTM_TRY(write_image(run));
  if (rtm_mpi_group() == 0) RTM_TRY(write_pngs(run));
  run->end_s = rtm_wall_seconds();
  RTM_TRY(reduce_rank_phases(run));
  if (run->root) RTM_TRY(write_report(run));
fail:
  if (status == RTM_ERR_INTERRUPTED && run && run->root && access(run->resume_path, F_OK) == 0)
    rtm_log_info("migrate: the sums of the shots saved so far are kept in %s: the same command "
                 "resumes there",
                 run->resume_path);
  rtm_mpi_fail_fast(status); /* before the propagators' collective release */
  if (run) release_run(run);
  free(run);
  return rtm_status_exit_code(status);
}
