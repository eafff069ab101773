/* rtm3d migrate CONFIG: reverse-time migration of the observed gathers of rtm.observed, one
 * shot after another (solver/rtm/rtm_migration.h), into /image and /illumination of the
 * run's HDF5 file, with the JSON run report beside it. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "migrate_run.h"
#include "rtm_memory.h" /* the host slabs */
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
               "it: /shots/<k>/..., or /traces/... for one shot; or a SEG-Y file, .sgy or\n"
               ".segy, as 'rtm3d export' writes it) is back-propagated from its receivers,\n"
               "and the image I += S R is summed over the shots. Writes OUTPUT.h5\n"
               "(/image and /illumination [nz][ny][nx]; /shots/<k>/image with rtm.shot_images;\n"
               "with rtm.offset_lags > 0 the subsurface-offset gathers\n"
               "/gathers/offset [ncip][nhy][nhx][nz] at the CIP lines of rtm.cip_x_step and\n"
               "rtm.cip_y_step, with /gathers/cip_x_m and cip_y_m, and their angle gathers\n"
               "/gathers/angle [ncip][rtm.angles][nz]),\n"
               "OUTPUT_image_x.png, _y.png, _z.png (its planes through the middle of the grid)\n"
               "and OUTPUT.json (timings per phase and shot, recomputed steps, MCells/s, the\n"
               "reconstruction with its memory estimated and taken, every buffer), where\n"
               "OUTPUT = output.dir/output.name. The file's shots must be the acquisition's\n"
               "(positions, receivers); gathers at another sample interval are resampled to\n"
               "the modelling dt.\n\n"
               "After the first shot that ends rtm.resume_every seconds (default 600; 0 = every\n"
               "shot) after the start or the last save, the sums so far go to OUTPUT.resume.h5\n"
               "(atomically; never after the last shot, always when --max-shots stops the run):\n"
               "a run that stops resumes there when started again with the same config (the\n"
               "cadence may differ), and ends with the image an uninterrupted run gives, bit for\n"
               "bit; the shots after the last save are migrated again. On one rank SIGINT or\n"
               "SIGTERM saves the shots ended before it. Another config is refused, naming\n"
               "the key that changed. backend.name, rtm.reconstruction, its snapshot\n"
               "precision and zfp rate compare as auto resolved them; other keys as\n"
               "written (time.dt = auto, rtm.imaging_step = 0 resume as auto and 0, not\n"
               "as the values they stood for); paths as the files they name. Keys that\n"
               "cannot change the sums may differ (memory.limit_gb, the image's filters,\n"
               "mpi.shot_groups: docs/migration.md). With rtm.offset_lags the gathers'\n"
               "sums are saved too. (Not with rtm.shot_images.)\n\n"
               "  --set k=v         override one key of the deck (repeatable)\n"
               "  --max-shots=N     migrate at most N shots in this run, then stop (exit 0) with\n"
               "                    the state saved for the next run to resume\n"
               "  --quiet, -q       errors alone: no progress, warnings or summary\n"
               "  --force           replace OUTPUT.h5 when it exists (output.overwrite = true)\n\n"
               "'rtm3d help-config' lists every key ([rtm] for the migration's own).\n");
}

static int wants_help(int argc, char **argv) {
  for (int i = 1; i < argc; ++i)
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) return 1;
  return 0;
}

/* The illumination sums the source wavefield squared over the imaging steps and the shots:
 * near the source the wavefield is about |A| / (4 pi h) one cell away (config_validate.c's
 * check_amplitude, which bounds A itself), so A^2 / (4 pi h)^2 times up to (steps + 1) shots
 * terms, with a margin of 100 for the source's own cell, must stay under float32's largest
 * number. The image scales with A, so a smaller one loses nothing. */
static int check_amplitude(const migrate_run_t *run) {
  char where[RTM_CONFIG_ORIGIN_MAX];
  const rtm_config_t *cfg = &run->cfg;
  const double *h = cfg->grid.spacing_m;
  const double h_min = fmin(h[0], fmin(h[1], h[2]));
  const double terms = ((double)cfg->time.steps + 1.0) * run->shots.count;
  const double pi = 3.14159265358979323846;
  const double limit = 4.0 * pi * h_min * sqrt((double)FLT_MAX / (100.0 * terms));
  /* and the square of the wavefield at the volume's far corner kept at float32's full
   * precision (probe N, N1: 1e-30 gave an illumination underflowed to zero, an image 1e65
   * off, with exit 0) */
  const double diagonal = rtm_config_volume_diagonal_m(cfg);
  const double least = 4.0 * pi * diagonal * sqrt(RTM_FLOAT_FULL_PRECISION);
  if (fabs(cfg->source.amplitude) < least) {
    rtm_log_error("%s: source.amplitude = %g: migrate sums the source wavefield squared (the "
                  "illumination) and images its products with the receiver wavefield, and at "
                  "the volume's far corner (r = %.4g m) that wavefield is about |amplitude| / "
                  "(4 pi r) = %.3g, whose square falls below %.3g, where float32 loses "
                  "precision and then gives zero: the image would be wrong or zero; it scales "
                  "with the amplitude, so |source.amplitude| >= %.3g (1 is usual) loses nothing",
                  rtm_config_origin(cfg, "source.amplitude", where, sizeof where),
                  cfg->source.amplitude, diagonal,
                  fabs(cfg->source.amplitude) / (4.0 * pi * diagonal), RTM_FLOAT_FULL_PRECISION,
                  least);
    return RTM_ERR_CONFIG;
  }
  if (fabs(cfg->source.amplitude) <= limit) return RTM_OK;
  rtm_log_error("%s: source.amplitude = %g: migrate sums the source wavefield squared (the "
                "illumination) over up to %.0f time steps of %d shots, and near the source "
                "that wavefield is about |amplitude| / (4 pi h_min) = %.3g: the sums would pass "
                "float32's largest number; the image scales with the amplitude, so "
                "|source.amplitude| <= %.3g (1 is usual) loses nothing",
                rtm_config_origin(cfg, "source.amplitude", where, sizeof where),
                cfg->source.amplitude, (double)cfg->time.steps + 1.0, run->shots.count,
                fabs(cfg->source.amplitude) / (4.0 * pi * h_min), limit);
  return RTM_ERR_CONFIG;
}

/* The observed file holds as many shots as the acquisition has. */
static int check_shot_count(const migrate_run_t *run) {
  int status = RTM_OK, count = 0;
  RTM_TRY(rtm_io_shot_count(run->cfg.rtm.observed, &count));
  if (count != run->shots.count)
    RTM_FAIL(RTM_ERR_INPUT,
             "rtm.observed = %s holds %d shot%s but the acquisition of the config has %d "
             "(shots.layout and its keys must describe the shots that were recorded)",
             run->cfg.rtm.observed, count, count == 1 ? "" : "s", run->shots.count);
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
      rtm_log_error("migrate: --max-shots '%s': expected a whole number from 1 to 1000000000",
                    text);
      return RTM_ERR_USAGE;
    }
    if (run->shot_limit > 0) { /* a second would silently win */
      rtm_log_error("migrate: --max-shots is given twice: give it once");
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

/* This rank's slabs: one shot's image and illumination as they leave the device, page-locked
 * later under a GPU (rtm_migrate_pin_slabs), and the sums over the shots (float pairs,
 * zeroed where the first shot reaches them). */
static int alloc_slabs(migrate_run_t *run) {
  int status = RTM_OK;
  const size_t bytes = run->local_cells * sizeof(float);
  run->slab_image = rtm_mem_host_large(bytes);
  run->slab_illumination = rtm_mem_host_large(bytes);
  int missing = !run->slab_image || !run->slab_illumination;
  for (int v = 0; v < 4; ++v) {
    run->sums[v] = rtm_mem_host_large(bytes);
    missing = missing || !run->sums[v];
  }
  run->sums_empty = 1;
  if (missing)
    RTM_FAIL(RTM_ERR_NOMEM,
             "out of memory for the %zu-cell slabs of the image (6 volumes on the host: a "
             "shot's image and illumination, and their sums over the shots as float pairs, "
             "%.3g GB)",
             run->local_cells, 6.0 * (double)bytes / 1e9);
fail:
  return status;
}

static int set_up(migrate_run_t *run, int argc, char **argv) {
  char where[RTM_CONFIG_ORIGIN_MAX];
  int status = RTM_OK, extra[4], extra_count = 4;
  rtm_config_t *cfg = &run->cfg;
  RTM_TRY(take_max_shots(run, &argc, argv));
  RTM_TRY(rtm_app_load_config(argc, argv, cfg, &run->quiet, extra, &extra_count));
  rtm_mpi_set_timeout(run->mpi, cfg->mpi.timeout_s); /* how long a rank waits for another */
  RTM_TRY(rtm_app_check_same_deck(cfg, run->mpi));
  RTM_TRY(parse_options(argv, extra, extra_count));
  snprintf(run->h5_path, sizeof run->h5_path, "%s/%s.h5", cfg->output.dir, cfg->output.name);
  if (cfg->rtm.shot_images && run->shot_limit > 0)
    RTM_FAIL(RTM_ERR_USAGE,
             "migrate: --max-shots stops a run to resume it later, and rtm.shot_images writes "
             "each shot's image into the final file, which a stopped run does not write: drop "
             "one of them");
  if (!cfg->rtm.observed[0])
    RTM_FAIL(RTM_ERR_CONFIG,
             "%s: migrate needs rtm.observed, the file of the recorded gathers (HDF5 as "
             "rtm3d model writes it, or SEG-Y)",
             rtm_config_origin(cfg, "rtm.observed", where, sizeof where));
  /* model's key, which a migration does not use (a probe: it wrote no .sgy without a word) */
  if (cfg->output.segy)
    rtm_log_warning("%s: output.segy = true is ignored: it writes a model run's gathers as "
                    "NAME.sgy, and migrate writes no gathers (rtm3d export converts a run "
                    "file's)",
                    rtm_config_origin(cfg, "output.segy", where, sizeof where));
  RTM_TRY(rtm_dispersion_check_migration(cfg));
  RTM_TRY(rtm_grid_init(&run->grid, cfg->grid.n, cfg->grid.spacing_m, cfg->grid.origin_m));
  RTM_TRY(rtm_check_deck_dt(cfg, &run->grid));
  run->whole = run->grid;
  RTM_TRY(rtm_app_split_groups(cfg, run->mpi)); /* refused alike on every rank */
  run->root = rtm_mpi_world_rank(run->mpi) == 0;
  run->shot_lines = !run->quiet && rtm_mpi_rank(run->mpi) == 0;
  run->quiet = run->quiet || !run->root; /* one progress line, rank 0's */
  RTM_TRY(rtm_app_slab(&run->grid, run->mpi, rtm_migration_slab_planes()));
  RTM_TRY(rtm_shots_init(cfg, &run->grid, &run->shots));
  RTM_TRY(check_amplitude(run));
  RTM_TRY(check_shot_count(run));
  if (cfg->mpi.shot_groups > run->shots.count)
    RTM_FAIL(RTM_ERR_CONFIG,
             "%s: mpi.shot_groups = %d for %d shots would leave groups idle: at most %d",
             rtm_config_origin(cfg, "mpi.shot_groups", where, sizeof where), cfg->mpi.shot_groups,
             run->shots.count, run->shots.count);
  /* a combination of keys, refused before any work: a configuration error (exit 2), as the
   * others (probe W, W4: it exited 1, a failure a script would retry) */
  if (cfg->mpi.shot_groups > 1 && cfg->rtm.shot_images)
    RTM_FAIL(RTM_ERR_CONFIG,
             "%s: rtm.shot_images with mpi.shot_groups = %d is not implemented (each shot's image "
             "would travel to the first rank): set one of them off",
             rtm_config_origin(cfg, "rtm.shot_images, mpi.shot_groups", where, sizeof where),
             cfg->mpi.shot_groups);
  /* an abort of the job (a failure on any rank, the watchdog) leaves nothing the run made */
  run->lock.fd = -1;
  run->made = (rtm_app_made_t){&run->lock, &run->outputs, &run->output, run->h5_path};
  if (run->root) rtm_mpi_on_abort(run->mpi, rtm_app_remove_made, &run->made);
  /* the deck's errors said, the output is claimed before any work */
  RTM_TRY(rtm_app_claim_output(cfg, run->mpi, run->h5_path, 1, &run->lock));
  /* the figures' temporary folder, which PLplot needs at the end: looked at before the shots
   * (a probe: a TMPDIR that cannot take a file failed the run after all of them) */
  if (run->root) {
    char figures[2 * RTM_CONFIG_PATH_MAX + 32];
    snprintf(figures, sizeof figures, "%s/%s_image_{x,y,z}.png", cfg->output.dir, cfg->output.name);
    RTM_TRY(rtm_figure_check_temporary(figures));
  }
  /* without --force no file at the run's names is replaced, one that appears meanwhile either */
  if (!cfg->output.overwrite) rtm_io_outputs_replace_none(run->outputs);
  RTM_TRY(rtm_app_load_run_model(cfg, &run->grid, run->mpi, &run->model));
  RTM_TRY(rtm_resolve_dt(cfg, &run->model, &run->grid, &run->dt_s));
  /* the gathers before the migration takes its memory: a wrong file is refused at once */
  RTM_TRY(preflight_shots(run));
  {
    /* alloc_slabs' six volumes (a shot's image and illumination, their float-pair sums), and
     * the first rank's buffer of the slabs it writes: beside a store in host memory */
    const size_t local = rtm_grid_interior_cells(&run->grid) * sizeof(float);
    const size_t buffer = run->root ? rtm_app_slab_buffer_cells(&run->grid) * sizeof(float) : 0;
    RTM_TRY(rtm_migration_create_beside(cfg, &run->grid, &run->model, 6 * local + buffer,
                                        "the image's host slabs and sums", &run->migration));
  }
  rtm_migration_describe(run->migration, run->device, sizeof run->device);
  snprintf(run->json_path, sizeof run->json_path, "%s/%s.json", cfg->output.dir, cfg->output.name);
  snprintf(run->resume_path, sizeof run->resume_path, "%s/%s.resume.h5", cfg->output.dir,
           cfg->output.name);
  run->config_text = rtm_config_echo_string(cfg);
  if (!run->config_text) RTM_FAIL(RTM_ERR_NOMEM, "out of memory");
  run->cells = rtm_grid_interior_cells(&run->whole);
  run->local_cells = rtm_grid_interior_cells(&run->grid);
  RTM_TRY(alloc_slabs(run));
  RTM_TRY(rtm_migrate_alloc_gathers(run));
  const size_t largest = rtm_app_slab_buffer_cells(&run->grid);
  if (run->root && largest > 0) {
    run->slab_buffer = malloc(largest * sizeof *run->slab_buffer);
    if (!run->slab_buffer)
      RTM_FAIL(RTM_ERR_NOMEM, "out of memory for a %zu-cell slab of the image", largest);
  }
fail:
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
  if (run->root) {
    /* the outputs' size, weighed before the first shot: the image and the illumination; each
     * shot's image (rtm.shot_images) or the resume state (four volumes and the gathers' two
     * sums, twice while a new state replaces the last); the gathers and their angle
     * gathers; the figures, the report and the metadata (1 MB) */
    const double volume_bytes = 4.0 * (double)run->cells;
    const int states = !cfg->rtm.shot_images && run->shots.count > 1;
    const double kept = cfg->rtm.shot_images ? run->shots.count : states ? 8.0 : 0.0;
    const rtm_gather_plan_t *plan = rtm_migration_gather_plan(run->migration);
    const double gather_bytes = plan ? 4.0 * rtm_gather_plan_cells(plan, run->grid.n[2]) : 0.0;
    const double angle_bytes =
        plan ? 4.0 * rtm_gather_plan_cips(plan) * cfg->rtm.angles * run->grid.n[2] : 0.0;
    const double outputs = (2.0 + kept) * volume_bytes + (1.0 + 4.0 * states) * gather_bytes;
    RTM_TRY(rtm_app_check_disk(cfg->output.dir, outputs + angle_bytes + 1e6,
                               "set output.dir on a larger disk, or migrate a smaller grid"));
    RTM_TRY(rtm_app_create_output(run->h5_path, &volume, run->mpi, &run->info, &run->output));
  }
fail:
  return status;
}

/* Every shot of the file checked before the migration is set up: present, recorded where the
 * acquisition says, long enough; the first shot's samples too (finite, their largest within
 * float32's reach). The others' samples are read and checked when their turn comes
 * (rtm_migrate_read_ahead): a survey's file is not read twice, nor all of it before the
 * first step. */
static int preflight_shots(const migrate_run_t *run) {
  int status = RTM_OK;
  rtm_io_gather_t gather = {0};
  for (int shot = 0; shot < run->shots.count; ++shot) {
    RTM_TRY(shot == 0 ? rtm_io_read_shot(run->cfg.rtm.observed, shot, "p", &gather)
                      : rtm_io_read_shot_geometry(run->cfg.rtm.observed, shot, "p", &gather));
    const rtm_observed_gather_t observed = rtm_migrate_observed_gather(shot, &gather);
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

/* Takes shot `shot`'s receiver side made ready, then migrates it; the gather of shot `next`
 * (-1: none), the group's next, is read and made ready meanwhile. */
static int migrate_shot(migrate_run_t *run, int shot, int next) {
  int status = RTM_OK;
  rtm_receiver_side_t *side = NULL;
  rtm_shot_timing_t timing;
  const double *source = run->shots.source_m + 3 * (size_t)shot;
  double start_s = rtm_wall_seconds();
  /* read, checked, resampled, warped and made the receiver side on the I/O thread while the
   * shot before propagated */
  status = rtm_migrate_take_side(run, shot, &side);
  if (status == RTM_ERR_INPUT) run->refused_shot = shot;
  RTM_TRY(status);
  if (next >= 0) RTM_TRY(rtm_migrate_read_ahead(run, next)); /* while this one propagates */
  const double read_s = rtm_wall_seconds() - start_s;
  run->read_s += read_s;
  char label[64];
  snprintf(label, sizeof label, "shot %d/%d", shot + 1, run->shots.count);
  rtm_progress_label(&run->progress, label);
  /* one rank: the acquisition's last shot's illumination written during its backward pass,
   * where it is whole before it (the end then writes the image alone) */
  const int last = shot == run->shots.count - 1 && rtm_mpi_world_size(run->mpi) == 1 &&
                   !run->cfg.rtm.shot_images && run->worker;
  rtm_migration_on_lit(run->migration, last ? rtm_migrate_take_illumination : NULL, run);
  RTM_TRY(rtm_migration_shot_side(run->migration, source, &side, report_progress, run, &timing));
  run->total.forward_s += timing.forward_s;
  run->total.backward_s += timing.backward_s;
  run->total.imaging_s += timing.imaging_s;
  run->gathers_s += timing.gathers_s;
  const int shots = run->shots.count;
  run->shot_seconds[shot] = timing.forward_s;
  run->shot_seconds[shots + shot] = timing.backward_s;
  run->shot_seconds[2 * shots + shot] = timing.imaging_s;
  run->shot_seconds[3 * shots + shot] = read_s;
  run->shot_seconds[4 * shots + shot] = (double)timing.recomputed_steps;
  char who[32] = "";
  if (rtm_mpi_groups(run->mpi) > 1)
    snprintf(who, sizeof who, "group %d: ", rtm_mpi_group(run->mpi));
  if (run->shot_lines)
    rtm_log_info_any_rank(
        "migrate: %sshot %d/%d in %.3g s (forward %.3g, backward %.3g, imaging %.3g, "
        "read %.3g)",
        who, shot + 1, shots, timing.forward_s + timing.backward_s + timing.imaging_s + read_s,
        timing.forward_s, timing.backward_s, timing.imaging_s, read_s);
fail:
  rtm_receiver_side_destroy(side);
  return status;
}

/* rtm.shot_images: each shot's image, taken into the host slab (rtm_migrate_take_shot),
 * written on its own, each rank its slab. */
static int keep_shot_image(migrate_run_t *run, int shot) {
  int status = RTM_OK;
  char name[64];
  double start_s = rtm_wall_seconds();
  RTM_TRY(rtm_migrate_settle_saves(run)); /* landed and added; HDF5 is free */
  snprintf(name, sizeof name, "/shots/%d/image", shot);
  RTM_TRY(rtm_migrate_write_slabs(run, run->output, run->h5_path, name, run->slab_image));
  run->write_s += rtm_wall_seconds() - start_s;
  run->shot_seconds[3 * run->shots.count + shot] += rtm_wall_seconds() - start_s;
fail:
  return status;
}

/* rtm.offset_lags: what the gathers are and what they take. */
static void say_gathers(const migrate_run_t *run) {
  const rtm_gather_plan_t *plan = rtm_migration_gather_plan(run->migration);
  if (!plan || run->quiet) return;
  const size_t held = rtm_migration_gathers_held_bytes(run->migration);
  char beside[128] = "";
  if (held) /* rank 0's, as every rank of a group holds its planes' */
    snprintf(beside, sizeof beside, ", and imaging steps held beside them on the GPU, %.3g GB",
             held / 1e9);
  rtm_log_info("migrate: subsurface-offset gathers at %d x %d CIP lines (every %d and %d cells), "
               "lags -%d..%d cells in x and y, %.3g GB%s; their sums are saved in the resume "
               "state beside the image's",
               plan->count[0], plan->count[1], plan->step[0], plan->step[1], plan->lags, plan->lags,
               rtm_gather_plan_cells(plan, run->grid.n[2]) * sizeof(float) / 1e9, beside);
}

static int migrate_shots(migrate_run_t *run) {
  int status = RTM_OK;
  const int steps = rtm_migration_steps(run->migration);
  const double taper_s = rtm_end_taper_seconds(&run->cfg, rtm_migration_dt(run->migration));
  char taper[64] = "the record's end not tapered";
  if (taper_s > 0.0)
    snprintf(taper, sizeof taper, "the record's last %.3g ms tapered", taper_s * 1e3);
  if (!run->quiet)
    rtm_log_info("migrate: %d x %d x %d cells, %d shot%s of %d steps of %.4g ms, imaging every "
                 "%d steps, %s, backend %s%s%s",
                 run->grid.n[0], run->grid.n[1], run->grid.n[2], run->shots.count,
                 run->shots.count == 1 ? "" : "s", steps, rtm_migration_dt(run->migration) * 1e3,
                 rtm_migration_imaging_step(run->migration), taper, run->info.backend,
                 run->device[0] ? " on " : "", run->device);
  say_gathers(run);
  run->setup_end_s = rtm_wall_seconds();
  int last = run->shots.count;
  if (run->shot_limit > 0 && run->first_shot + run->shot_limit < last)
    last = run->first_shot + run->shot_limit;
  /* the shots of this run, G at a time with G shot groups (group g takes the round's g-th):
   * a resumed one's ETA counts only what is left, the first group's */
  const int groups = rtm_mpi_groups(run->mpi);
  /* the first gather read, then the slabs page-locked, while the first shot propagates */
  if (run->first_shot + rtm_mpi_group(run->mpi) < last)
    RTM_TRY(rtm_migrate_read_ahead(run, run->first_shot + rtm_mpi_group(run->mpi)));
  RTM_TRY(rtm_migrate_pin_slabs(run));
  rtm_progress_begin(&run->progress, 2 * steps * ((last - run->first_shot + groups - 1) / groups),
                     (double)run->cells, run->quiet);
  for (int round = run->first_shot; round < last; round += groups) {
    const int shot = round + rtm_mpi_group(run->mpi);
    const int completed = round + groups < last ? round + groups : last;
    if (shot < last) {
      RTM_TRY(migrate_shot(run, shot, shot + groups < last ? shot + groups : -1));
      ++run->shots_migrated;
      /* its sums to the host behind the next shot, added there by the I/O thread */
      const double start_s = rtm_wall_seconds();
      RTM_TRY(rtm_migrate_take_shot(run, completed));
      run->shot_seconds[3 * run->shots.count + shot] += rtm_wall_seconds() - start_s;
    }
    if (run->cfg.rtm.shot_images) {
      RTM_TRY(keep_shot_image(run, shot));
    } else if (round + groups < last || last < run->shots.count) {
      /* every rank: a save is collective; after the acquisition's last shot the image
       * follows at once (a 1280^3 one-shot migration wrote 17 GB of state for nothing),
       * but a run stopped by --max-shots saves its last round; the others every
       * rtm.resume_every seconds (a 512^3 state took 1.25 s of a 3.5 s shot on an H200) */
      int due = 1;
      RTM_TRY(rtm_migrate_save_due(run, round + groups >= last, &due));
      if (due) RTM_TRY(rtm_migrate_save(run, completed));
    }
  }
  RTM_TRY(rtm_migrate_settle_saves(run)); /* the last state written, the slabs free */
  rtm_progress_end(&run->progress);
  run->stopped = last < run->shots.count;
fail:
  return status;
}

static void release_run(migrate_run_t *run) {
  rtm_io_worker_destroy(run->worker); /* its jobs run first: they use what follows */
  run->worker = NULL;
  rtm_migrate_release_reads(run); /* a gather read ahead and not taken */
  if (run->output) rtm_output_close(run->output, 0);
  rtm_io_outputs_free(run->outputs); /* a failed run's partial files */
  rtm_io_unlock_name(&run->lock);
  rtm_migration_destroy(run->migration);
  rtm_shots_release(&run->shots);
  rtm_model_release(&run->model);
  free(run->shot_seconds);
  for (int v = 0; v < 4; ++v)
    free(run->sums[v]);
  if (run->gathers_pinned) rtm_mem_host_unpin(run->gather_shot);
  free(run->gather_shot);
  free(run->gather_sums[0]);
  free(run->gather_sums[1]);
  if (run->pinned) {
    rtm_mem_host_unpin(run->slab_image);
    rtm_mem_host_unpin(run->slab_illumination);
  }
  free(run->slab_illumination);
  free(run->slab_image);
  free(run->slab_buffer);
  free(run->config_text);
  free(run->inputs);
  free(run->resume_config);
}

int rtm_cmd_migrate(int argc, char **argv, rtm_mpi_t *mpi) {
  if (wants_help(argc, argv)) {
    usage(stdout);
    return 0;
  }
  int status = RTM_OK;
  migrate_run_t *run = calloc(1, sizeof *run);
  if (!run) RTM_FAIL(RTM_ERR_NOMEM, "out of memory");
  run->mpi = mpi;
  run->lock.fd = -1;
  run->read.shot = -1;
  run->refused_shot = -1;
  RTM_TRY(rtm_io_outputs_create(&run->outputs));
  run->start_s = rtm_wall_seconds();
  run->last_save_s = run->start_s; /* rtm.resume_every counts from the run's start */
  RTM_TRY(set_up(run, argc, argv));
  RTM_TRY(rtm_migrate_resume(run));
  RTM_TRY(open_output(run));
  RTM_TRY(rtm_io_worker_create(&run->worker));
  RTM_TRY(migrate_shots(run));
  if (run->stopped) {
    if (!run->quiet)
      rtm_log_info("migrate: stopped after shot %d of %d (--max-shots; %d state save%s, %.3g "
                   "s; the shots' sums taken to the host %d time%s, %.3g s); run again to resume "
                   "from %s",
                   run->first_shot + run->shot_limit, run->shots.count, run->saves,
                   run->saves == 1 ? "" : "s", run->write_s, run->holds, run->holds == 1 ? "" : "s",
                   run->hold_s, run->resume_path);
    goto fail; /* status RTM_OK: no image yet, the state saved */
  }
  RTM_TRY(rtm_migrate_write_image(run)); /* and its figures */
  run->end_s = rtm_wall_seconds();
  RTM_TRY(rtm_migrate_reduce_rank_phases(run));
  if (run->root) RTM_TRY(rtm_migrate_write_report(run));
fail:
  if (status == RTM_ERR_INTERRUPTED && run && run->root) {
    (void)rtm_migrate_save_held(run); /* one rank: the shots ended since the last save */
    rtm_migrate_say_interrupted(run);
  }
  if (status == RTM_ERR_INPUT && run) rtm_migrate_drop_refused_state(run);
  /* before the propagators' collective release */
  rtm_mpi_fail_fast(mpi, status); /* an abort runs rtm_app_remove_made first */
  rtm_mpi_on_abort(mpi, NULL, NULL); /* the run's record is freed below */
  if (run) release_run(run);
  free(run);
  return rtm_status_exit_code(status);
}
