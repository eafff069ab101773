/* migrate_output.c - what a migration leaves (migrate_run.h): the summed image filtered and
 * checked, with the illumination, into OUTPUT.h5, its planes through the middle as figures
 * (PNG), and the JSON report with the phases reduced over the ranks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h> /* getrlimit */
#include <unistd.h>       /* access */

#include "migrate_run.h"
#include "rtm_memory.h" /* rtm_mem_host_large */
#include "rtm_mpi.h"
#include "rtm_status.h"

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
  if (rtm_mpi_world_size(run->mpi) > 1) return;
  for (size_t i = 0; i < run->local_cells; ++i)
    if (run->slab_image[i] != 0.0f) return;
  const int steps = rtm_migration_steps(run->migration);
  const int step = rtm_migration_imaging_step(run->migration), times = steps / step;
  /* a handful of imaging times is a likelier cause, named first (probe P, P2:
   * imaging_step = steps gave this warning naming only the mute) */
  char few[160] = "";
  if (times < 4)
    snprintf(few, sizeof few,
             "rtm.imaging_step = %d applies the imaging condition only %d time%s in "
             "time.steps = %d (leave it 0, auto); or ",
             step, times, times == 1 ? "" : "s", steps);
  rtm_log_warning("the image is zero everywhere: %sthe observed gathers may be zero, rtm.mute may "
                  "remove every sample of them (rtm.mute_velocity, rtm.mute_taper), or the record "
                  "may end before any reflection returns (time.steps)",
                  few);
}

/* The illumination down each CIP's line, [ncip][nz], whole on rank 0 (as the gathers are),
 * and the largest of the whole volume's: the angle gathers' division. */
static int cip_illumination(migrate_run_t *run, const rtm_gather_plan_t *plan, float **columns,
                            double *largest) {
  int status = RTM_OK;
  const int cips = rtm_gather_plan_cips(plan);
  const size_t nz = (size_t)run->grid.n[2], nx = (size_t)run->grid.n[0];
  const size_t plane = nx * (size_t)run->grid.n[1];
  *columns = calloc((size_t)cips * nz, sizeof **columns);
  if (!*columns) RTM_FAIL(RTM_ERR_NOMEM, "out of memory for the CIPs' illumination");
  float most = 0.0f;
  for (size_t i = 0; i < run->local_cells; ++i)
    most = run->slab_illumination[i] > most ? run->slab_illumination[i] : most;
  *largest = most; /* exact: the largest float of every rank's */
  RTM_TRY(rtm_mpi_allreduce(run->mpi, largest, 1, RTM_MPI_MAX));
  for (int cip = 0; cip < cips; ++cip) {
    int x = 0, y = 0;
    rtm_gather_plan_cip(plan, cip, &x, &y);
    for (int z = 0; z < run->grid.nz_local; ++z)
      (*columns)[(size_t)cip * nz + (size_t)run->grid.z_offset + (size_t)z] =
          run->slab_illumination[(size_t)z * plane + (size_t)y * nx + (size_t)x];
  }
  if (rtm_grid_is_slab(&run->grid)) RTM_TRY(rtm_mpi_sum_to_root(run->mpi, *columns, cips * nz));
fail:
  return status;
}

/* rtm.angles: each CIP's gather at hy = 0 to angles 0 to rtm.angle_max (rtm_angle_gathers),
 * divided by the illumination down its line as the image is (rtm.illumination, its eps of
 * the largest), on rank 0 into run->angle_gathers. Collective (the illumination). */
static int angle_gathers(migrate_run_t *run) {
  int status = RTM_OK;
  float *columns = NULL;
  const rtm_gather_plan_t *plan = rtm_migration_gather_plan(run->migration);
  if (!plan) return RTM_OK;
  double largest = 0.0;
  const double start_s = rtm_wall_seconds();
  const int cips = rtm_gather_plan_cips(plan), nh = 2 * plan->lags + 1, nz = run->grid.n[2];
  const int angles = run->cfg.rtm.angles;
  RTM_TRY(cip_illumination(run, plan, &columns, &largest));
  if (!run->root) goto fail;
  run->angle_gathers = malloc((size_t)cips * angles * nz * sizeof *run->angle_gathers);
  if (!run->angle_gathers) RTM_FAIL(RTM_ERR_NOMEM, "out of memory for the angle gathers");
  RTM_TRY(rtm_angle_gathers(run->gathers_whole + (size_t)plan->lags * nh * nz, (size_t)nh * nh * nz,
                            cips, plan->lags, nz, run->grid.spacing_m[2], run->grid.spacing_m[0],
                            angles, run->cfg.rtm.angle_max_deg, run->angle_gathers));
  /* zero in the absorbing layer's depths, as the image and the offset gathers are (the
   * transform spreads a few samples into them, and the illumination there is small) */
  const double floor = run->cfg.rtm.illumination_eps * largest;
  const int layer = plan->layer;
  for (int cip = 0; cip < cips; ++cip)
    for (int a = 0; a < angles; ++a)
      for (int z = 0; z < nz; ++z) {
        const double denominator = (double)columns[(size_t)cip * nz + z] + floor;
        float *value = &run->angle_gathers[((size_t)cip * angles + a) * nz + z];
        if (z < layer || z >= nz - layer)
          *value = 0.0f;
        else if (run->cfg.rtm.illumination && denominator > 0.0)
          *value = (float)((double)*value / denominator);
      }
  size_t i = 0;
  if (rtm_io_find_bad_values(run->angle_gathers, (size_t)cips * angles * nz, 0.0, &i) > 0)
    RTM_FAIL(RTM_ERR_NUMERIC,
             "/gathers/angle is not finite (%g) at CIP %zu, angle %zu, z %zu: "
             "nothing written",
             run->angle_gathers[i], i / nz / angles, i / nz % angles, i % nz);
fail:
  free(columns);
  run->angles_s = rtm_wall_seconds() - start_s;
  return status;
}

/* rtm.offset_lags: the gathers summed over the shots (run->gather_shot, this rank's planes)
 * whole on rank 0 in run->gathers_whole (rtm_migrate_gathers_to_root: only rank 0 holds the
 * whole array), then checked finite there. One rank's are whole already. */
static int gather_planes(migrate_run_t *run) {
  int status = RTM_OK;
  const rtm_gather_plan_t *plan = rtm_migration_gather_plan(run->migration);
  if (!plan) return RTM_OK;
  const size_t nz = (size_t)run->grid.n[2];
  const size_t count = rtm_gather_plan_cells(plan, (int)nz);
  if (!rtm_grid_is_slab(&run->grid)) {
    run->gathers_whole = run->gather_shot;
  } else {
    float *whole = run->root ? malloc(count * sizeof *whole) : NULL;
    status = rtm_migrate_gathers_to_root(run, run->gather_shot, whole);
    if (status != RTM_OK || !run->root) {
      free(whole);
      goto fail;
    }
    run->gathers_whole = whole;
  }
  size_t i = 0;
  const size_t bad = run->root ? rtm_io_find_bad_values(run->gathers_whole, count, 0.0, &i) : 0;
  if (bad > 0)
    RTM_FAIL(RTM_ERR_NUMERIC,
             "/gathers/offset is not finite (%g) at CIP %zu, lag (%zu, %zu), z %zu, and at %zu "
             "values in all: nothing written",
             run->gathers_whole[i], i / nz / (2 * plan->lags + 1) / (2 * plan->lags + 1),
             i / nz % (2 * plan->lags + 1), i / nz / (2 * plan->lags + 1) % (2 * plan->lags + 1),
             i % nz, bad);
fail:
  return status;
}

/* Rank 0: /gathers/offset into OUTPUT.h5 with their CIP positions and axes. */
static int write_offset_gathers(migrate_run_t *run) {
  int status = RTM_OK;
  const rtm_gather_plan_t *plan = rtm_migration_gather_plan(run->migration);
  if (!plan || !run->root) return RTM_OK;
  const rtm_grid_t *g = &run->whole;
  const int cips = rtm_gather_plan_cips(plan);
  double *positions = malloc(2 * (size_t)cips * sizeof *positions);
  if (!positions) RTM_FAIL(RTM_ERR_NOMEM, "out of memory for %d CIP positions", cips);
  for (int cip = 0; cip < cips; ++cip) {
    int x = 0, y = 0;
    rtm_gather_plan_cip(plan, cip, &x, &y);
    positions[cip] = g->origin_m[0] + x * g->spacing_m[0];
    positions[cips + cip] = g->origin_m[1] + y * g->spacing_m[1];
  }
  const rtm_io_offset_gathers_t gathers = {.cips = cips,
                                           .lags = plan->lags,
                                           .nz = g->n[2],
                                           .cip_x_m = positions,
                                           .cip_y_m = positions + cips,
                                           .lag_spacing_m = {g->spacing_m[0], g->spacing_m[1]},
                                           .z_spacing_m = g->spacing_m[2],
                                           .z_origin_m = g->origin_m[2],
                                           .cip_step = {plan->step[0], plan->step[1]}};
  RTM_TRY(rtm_output_write_offset_gathers(run->output, &gathers, run->gathers_whole));
fail:
  free(positions);
  return status;
}

/* Rank 0: /gathers/angle into OUTPUT.h5. */
static int write_angle_gathers(migrate_run_t *run) {
  const rtm_gather_plan_t *plan = rtm_migration_gather_plan(run->migration);
  if (!plan || !run->root) return RTM_OK;
  const rtm_grid_t *g = &run->whole;
  const rtm_io_angle_gathers_t angle = {.cips = rtm_gather_plan_cips(plan),
                                        .angles = run->cfg.rtm.angles,
                                        .nz = g->n[2],
                                        .angle_max_deg = run->cfg.rtm.angle_max_deg,
                                        .z_spacing_m = g->spacing_m[2],
                                        .z_origin_m = g->origin_m[2],
                                        .illumination = run->cfg.rtm.illumination};
  return rtm_output_write_angle_gathers(run->output, &angle, run->angle_gathers);
}

/* `writer`, its seconds added to run->volumes_s (on one rank the I/O thread's job). */
static int write_timed(migrate_run_t *run, int (*writer)(migrate_run_t *)) {
  const double start_s = rtm_wall_seconds();
  const int status = writer(run);
  run->volumes_s += rtm_wall_seconds() - start_s;
  return status;
}

/* The I/O thread's jobs of the gathers: /gathers/offset while the image is filtered,
 * /gathers/angle behind the image. */
static int write_offset_behind(void *context) {
  return write_timed(context, write_offset_gathers);
}

static int write_angle_behind(void *context) {
  return write_timed(context, write_angle_gathers);
}

/* The illumination into OUTPUT.h5 (the first shot group's ranks call it alike; where that
 * group is one rank, the I/O thread's job while the image is filtered, or during the last
 * shot's backward pass: rtm_migrate_illumination_behind): its seconds added to
 * run->volumes_s. */
static int illumination_slabs(migrate_run_t *run) {
  return rtm_migrate_write_slabs(run, run->output, run->h5_path, "/illumination",
                                 run->slab_illumination);
}

static int write_illumination(void *context) {
  return write_timed(context, illumination_slabs);
}

int rtm_migrate_illumination_behind(void *context) {
  migrate_job_t *job = context;
  migrate_run_t *run = job->run;
  int status = RTM_OK;
  const double start_s = rtm_wall_seconds();
  const int empty = run->sums_empty; /* a run of one shot */
  rtm_sums_add_round(run->slab_illumination, empty ? NULL : run->sums[2],
                     empty ? NULL : run->sums[3], run->slab_illumination, run->local_cells);
  job->seconds = rtm_wall_seconds() - start_s;
  RTM_TRY(check_finite(run, "/illumination", run->slab_illumination));
  /* the sidecar lists /image first, as the run file's readers expect */
  if (run->root) RTM_TRY(rtm_output_name_volume(run->output, "/image"));
  RTM_TRY(write_illumination(run));
fail:
  return status;
}

/* The filtered image into OUTPUT.h5 (as write_illumination; one rank: while the figures are
 * drawn): its seconds added to run->volumes_s. */
static int image_slabs(migrate_run_t *run) {
  return rtm_migrate_write_slabs(run, run->output, run->h5_path, "/image", run->slab_image);
}

static int write_image(void *context) {
  return write_timed(context, image_slabs);
}

/* Parts the filtered image is written in while the rest is filtered (one rank: the I/O
 * thread writes each behind the filter). */
enum { IMAGE_PARTS = 8 };

/* Planes [z_begin, z_begin + nz) of the slab's filtered image (write_image_part's job). */
typedef struct {
  migrate_run_t *run;
  int z_begin, nz;
} image_part_t;

/* One part of /image into OUTPUT.h5 (rtm_output_volume_in_parts): its seconds added to
 * run->volumes_s. */
static int write_image_part(void *context) {
  const image_part_t *part = context;
  migrate_run_t *run = part->run;
  const double start_s = rtm_wall_seconds();
  const size_t plane = (size_t)run->grid.n[0] * (size_t)run->grid.n[1];
  int status = rtm_output_set_planes(run->output, run->grid.z_offset + part->z_begin, part->nz);
  if (status == RTM_OK)
    status = rtm_output_write_volume(run->output, "/image",
                                     run->slab_image + (size_t)part->z_begin * plane);
  /* the planes a later write carries: the slab's again */
  const int reset = rtm_output_set_planes(run->output, run->grid.z_offset, run->grid.nz_local);
  run->volumes_s += rtm_wall_seconds() - start_s;
  return status != RTM_OK ? status : reset;
}

/* The Laplacian over the slab from `scratch` (rtm_image_laplacian_begin's) in IMAGE_PARTS
 * parts. Where `behind` (one rank and its I/O thread, /image declared in parts) each part
 * found finite is queued to be written while the next are filtered (behind the offset gathers'
 * write, when there are gathers), so that the image is in the file soon after the filter and
 * that write end instead of a whole write after them; the first part that is not
 * stops the queueing (the check of the whole image names its cell) and *all_queued stays 0. */
static int filter_in_parts(migrate_run_t *run, const float *scratch, int behind,
                           image_part_t parts[IMAGE_PARTS], long *ticket, int *queued,
                           int *all_queued) {
  int status = RTM_OK;
  const int nz = run->grid.nz_local;
  const size_t plane = (size_t)run->grid.n[0] * (size_t)run->grid.n[1];
  int clean = behind;
  *all_queued = 0;
  for (int p = 0; p < IMAGE_PARTS; ++p) {
    const int z_begin = (int)((long)nz * p / IMAGE_PARTS);
    const int z_end = (int)((long)nz * (p + 1) / IMAGE_PARTS);
    if (z_end == z_begin) continue;
    rtm_image_laplacian_planes(&run->grid, run->cfg.boundary.width_cells, run->slab_image, scratch,
                               z_begin, z_end);
    size_t at = 0;
    if (!clean || rtm_io_find_bad_values(run->slab_image + (size_t)z_begin * plane,
                                         (size_t)(z_end - z_begin) * plane, 0.0, &at) > 0) {
      clean = 0;
      continue;
    }
    parts[p] = (image_part_t){run, z_begin, z_end - z_begin};
    RTM_TRY(rtm_io_worker_submit(run->worker, write_image_part, &parts[p], ticket));
    *queued = 1;
  }
  *all_queued = clean;
fail:
  return status;
}

/* Whether the figures, drawn through PLplot, cairo, pango and fontconfig, would find too
 * little address space under the process's limit (ulimit -v): there those libraries do
 * not fail, they abort the process (GLib-ERROR, SIGSEGV, PLplot's exit) after all the
 * shots, leaving no image. They take about 110 MB beside a small run (14^3 cells: aborts
 * with 104-109 MB left, never with 124 MB or more, cpu build, Debian 12's libraries; on a
 * 40^3 run under ulimit -v 310000 it aborted with 164 MB left: probe E5), and copies of a
 * plane as doubles: RTM_APP_FIGURE_ADDRESS_SPACE and 32 bytes a cell of the largest plane
 * are asked, said with the limit when they are not there. */
static int figures_do_not_fit(const migrate_run_t *run) {
  if (!rtm_figure_available()) return 0; /* the plain PNG: libpng alone */
  const rtm_grid_t *g = &run->grid;
  const size_t wider = g->n[0] > g->n[1] ? (size_t)g->n[0] : (size_t)g->n[1];
  const size_t plane = (size_t)g->n[2] * wider > (size_t)g->n[0] * (size_t)g->n[1]
                           ? (size_t)g->n[2] * wider
                           : (size_t)g->n[0] * (size_t)g->n[1];
  const size_t need = RTM_APP_FIGURE_ADDRESS_SPACE + 32 * plane;
  const size_t left = rtm_mem_host_address_space_left();
  if (left >= need) return 0;
  struct rlimit limit;
  const double limit_mb = getrlimit(RLIMIT_AS, &limit) == 0 ? limit.rlim_cur / 1048576.0 : 0.0;
  rtm_log_warning("migrate: the figures %s/%s_image_{x,y,z}.png are not drawn: under the "
                  "address-space limit (ulimit -v, %.0f MB) %.0f MB are left, and drawing them "
                  "takes about %.0f MB; the image is written all the same: draw its planes "
                  "with 'rtm3d plot %s /image --slice x=%d' (y, z), or raise the limit",
                  run->cfg.output.dir, run->cfg.output.name, limit_mb, left / 1048576.0,
                  need / 1048576.0, run->h5_path, g->n[0] / 2);
  return 1;
}

/* rtm_migrate_write_pngs, timed (run->figures_s). */
static int draw_figures(migrate_run_t *run) {
  const double start_s = rtm_wall_seconds();
  const int status = rtm_migrate_write_pngs(run);
  run->figures_s = rtm_wall_seconds() - start_s;
  return status;
}

/* A job of the I/O thread, when still queued (*queued), waited for once: its status. */
static int wait_once(migrate_run_t *run, int *queued, long ticket) {
  if (!*queued) return RTM_OK;
  *queued = 0;
  return rtm_io_worker_wait(run->worker, ticket);
}

/* The summed image with the filters the config asks for, and the illumination: each rank of
 * the first shot group filters its slab (what the filters need of the others comes from
 * them), rank 0 writes the slabs as they come. Where that group is one rank (one process, or
 * shot groups of one rank each), its I/O thread writes the illumination and the offset
 * gathers while the image is filtered and the angle gathers made, then the image (in parts,
 * behind the filter) and the angle gathers while the figures are drawn: no MPI call is made
 * there. */
int rtm_migrate_write_image(migrate_run_t *run) {
  int status = RTM_OK, drawn = RTM_OK;
  float *scratch = NULL;
  long illumination_ticket = 0, offset_ticket = 0, parts_ticket = 0, image_ticket = 0;
  int illumination_queued = 0, offset_queued = 0, parts_queued = 0, image_queued = 0;
  int in_parts = 0;
  image_part_t parts[IMAGE_PARTS];
  double start_s = rtm_wall_seconds();
  RTM_TRY(rtm_migrate_finish_sums(run));
  if (rtm_mpi_group(run->mpi) != 0) return RTM_OK;
  const int behind = rtm_mpi_size(run->mpi) == 1 && run->worker;
  /* the last shot's illumination taken after its forward pass was checked and written then */
  const int lit = run->illumination_taken;
  if (!lit) RTM_TRY(check_finite(run, "/illumination", run->slab_illumination)); /* unfiltered */
  /* the sidecar lists /image first, as the run file's readers expect, whatever comes first */
  if (run->root && !lit) RTM_TRY(rtm_output_name_volume(run->output, "/image"));
  /* filtered and written in parts: declared before any job of this end is queued (HDF5 is
   * called by one thread at a time) */
  if (behind && run->cfg.rtm.laplacian) {
    RTM_TRY(rtm_io_worker_drain(run->worker));
    RTM_TRY(rtm_output_volume_in_parts(run->output, "/image"));
  }
  if (behind && !lit) {
    RTM_TRY(rtm_io_worker_submit(run->worker, write_illumination, run, &illumination_ticket));
    illumination_queued = 1;
  }
  if (behind && run->gather_cells) {
    /* one rank's gathers are whole: checked, then written while the image is filtered (2 GB
     * at 512^3 with 16 lags a CIP every 16th line, the longest write of the end) */
    RTM_TRY(gather_planes(run));
    RTM_TRY(rtm_io_worker_submit(run->worker, write_offset_behind, run, &offset_ticket));
    offset_queued = 1;
  }
  const double filter_start_s = rtm_wall_seconds();
  if (run->cfg.rtm.illumination)
    RTM_TRY(rtm_image_compensate(run->mpi, run->slab_image, run->slab_illumination,
                                 run->local_cells, run->cfg.rtm.illumination_eps));
  if (run->cfg.rtm.laplacian) {
    /* huge pages: its first touch, the copy of the image into it, faults every 2 MiB */
    scratch = rtm_mem_host_large(rtm_image_laplacian_scratch_cells(&run->grid) * sizeof *scratch);
    if (!scratch) RTM_FAIL(RTM_ERR_NOMEM, "out of memory for the image filter");
    RTM_TRY(rtm_image_laplacian_begin(&run->grid, run->slab_image, scratch));
    RTM_TRY(filter_in_parts(run, scratch, behind, parts, &parts_ticket, &parts_queued, &in_parts));
  }
  run->filter_s = rtm_wall_seconds() - filter_start_s;
  if (!in_parts) RTM_TRY(check_finite(run, "/image", run->slab_image)); /* else part by part */
  warn_if_zero(run);
  /* collective under z-slabs, where rank 0 gathers the planes only now, beside no filter */
  if (!behind) RTM_TRY(gather_planes(run));
  RTM_TRY(angle_gathers(run)); /* collective: the illumination down the CIPs' lines */
  if (run->root) run->figures_skipped = figures_do_not_fit(run);
  if (behind) {
    /* the image (unless written in parts) and the angle gathers on the I/O thread, the
     * figures here meanwhile: both only read the slabs, and the figures call no HDF5 */
    if (!in_parts) {
      RTM_TRY(rtm_io_worker_submit(run->worker, write_image, run, &image_ticket));
      image_queued = 1;
    }
    /* the last job's ticket: waited for, the image's job before it has run too */
    RTM_TRY(rtm_io_worker_submit(run->worker, write_angle_behind, run, &image_ticket));
    image_queued = 1;
    drawn = draw_figures(run);
  } else {
    RTM_TRY(write_image(run)); /* collective: the slabs meet on rank 0 */
    RTM_TRY(write_timed(run, write_offset_gathers));
    RTM_TRY(write_timed(run, write_angle_gathers));
    if (!lit) RTM_TRY(write_illumination(run));
    RTM_TRY(draw_figures(run));
  }
  /* in the order queued, each whatever comes (a job after a failed one returns its status) */
  status = wait_once(run, &illumination_queued, illumination_ticket);
  const int offset_written = wait_once(run, &offset_queued, offset_ticket);
  if (status == RTM_OK) status = offset_written;
  const int parts_written = wait_once(run, &parts_queued, parts_ticket);
  if (status == RTM_OK) status = parts_written;
  const int written = wait_once(run, &image_queued, image_ticket);
  RTM_TRY(status);
  RTM_TRY(written);
  RTM_TRY(drawn);
  RTM_TRY(rtm_app_sync_slabs(&run->grid, run->h5_path)); /* each node's planes, on the disk */
  const double finish_start_s = rtm_wall_seconds();
  if (run->root) {
    status = rtm_output_finish(run->output, run->outputs); /* frees the output either way */
    run->output = NULL;
    RTM_TRY(status);
  }
  run->file_s = run->volumes_s + rtm_wall_seconds() - finish_start_s;
  run->write_s += rtm_wall_seconds() - start_s - run->filter_s - run->figures_s;
fail:
  /* a job still queued on the way out (a failure here) reads the slabs: waited for first */
  wait_once(run, &illumination_queued, illumination_ticket);
  wait_once(run, &offset_queued, offset_ticket);
  wait_once(run, &parts_queued, parts_ticket);
  wait_once(run, &image_queued, image_ticket);
  if (run->gathers_whole != run->gather_shot) free(run->gathers_whole);
  run->gathers_whole = NULL;
  free(run->angle_gathers);
  run->angle_gathers = NULL;
  free(scratch);
  return status;
}

/* One plane of the image into `partial` (PATH's partial file), as `rtm3d plot OUTPUT.h5
 * /image --slice a=N` draws it, with the same figure code: axes in metres, the true aspect,
 * the colours clipped at the 99th percentile of |value| (diverging when a value is
 * negative), a colour bar with its label, the plane's place in the title. A build without
 * PLplot writes the plain PNG of one pixel a cell, titled the same, as plot does. */
static int draw_plane(const migrate_run_t *run, const char *partial,
                      const rtm_figure_image_t *slice) {
  const rtm_grid_t *g = &run->grid;
  rtm_io_axes_t axes = {.has_grid = 1};
  for (int a = 0; a < 3; ++a) {
    axes.spacing_m[a] = g->spacing_m[a];
    axes.origin_m[a] = g->origin_m[a];
  }
  char where[64], title[sizeof run->h5_path + 96];
  rtm_figure_plane_text(&axes, slice->axis, slice->plane, where, sizeof where);
  snprintf(title, sizeof title, "%s /image, %s", run->h5_path, where);
  const size_t cells = (size_t)slice->width * (size_t)slice->height;
  if (!rtm_figure_available())
    return rtm_png_write(partial, slice->values, slice->width, slice->height, 99.0, title);
  rtm_figure_panel_t panel;
  rtm_figure_slice_panel(&axes, slice, &panel);
  panel.title = title;
  rtm_figure_style_t style = {.width = RTM_FIGURE_WIDTH,
                              .height = RTM_FIGURE_HEIGHT,
                              .bar_label = rtm_figure_bar_label("/image", 3),
                              .format = ".png"};
  const int status = rtm_figure_colour_range(slice->values, cells, 99.0, 0, &style);
  return status != RTM_OK ? status : rtm_figure_write(partial, &panel, 1, &style);
}

/* A figure not written (a full disk, a file size limit): what the run leaves, and where the
 * same command starts again. */
static void say_figure_failed(const migrate_run_t *run, const char *path) {
  const int kept = access(run->resume_path, F_OK) == 0;
  rtm_log_error("migrate: %s could not be written: the run removes its outputs (they appear "
                "together or not at all; one that cannot be removed is named); %s%s",
                path, kept ? "the same command resumes from " : "the same command starts over",
                kept ? run->resume_path : "");
}

/* OUTPUT_image_x.png, _y.png, _z.png: the image's planes through the middle of the grid
 * (rtm3d plot draws any other) as figures (draw_plane). Each rank of the first shot group
 * puts in its slab's rows (zeros elsewhere), summed on rank 0, which draws them: the first
 * shot group's ranks call it alike. */
int rtm_migrate_write_pngs(migrate_run_t *run) {
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
    char path[2 * RTM_CONFIG_PATH_MAX + 32], partial[sizeof path + 16];
    int w = 0, h = 0;
    memset(plane, 0, width * height * sizeof *plane);
    if (a < 2)
      rtm_volume_slice(run->slab_image, slab, axis, index, plane + z0 * width, &w, &h);
    else if (index >= z0 && index < z0 + slab[0])
      rtm_volume_slice(run->slab_image, slab, axis, index - z0, plane, &w, &h);
    RTM_TRY(rtm_mpi_sum_to_root(run->mpi, plane, width * height));
    if (!run->root) continue;
    snprintf(path, sizeof path, "%s/%s_image_%c.png", run->cfg.output.dir, run->cfg.output.name,
             axis);
    if (run->figures_skipped) { /* an earlier run's figure is no picture of this image */
      RTM_TRY(rtm_io_outputs_drop(run->outputs, path));
      continue;
    }
    RTM_TRY(rtm_io_outputs_add(run->outputs, path, partial, sizeof partial));
    const rtm_figure_image_t slice = {.values = plane,
                                      .width = (int)width,
                                      .height = (int)height,
                                      .axis = axis,
                                      .plane = (long)index};
    status = draw_plane(run, partial, &slice);
    if (status != RTM_OK) {
      say_figure_failed(run, path);
      goto fail;
    }
  }
fail:
  free(plane);
  return status;
}

/* Under MPI, the ranks' phases (the split steps', the host's wait in the exchanges, the
 * reading and writing) reduced over the ranks for the report. */
int rtm_migrate_reduce_rank_phases(migrate_run_t *run) {
  int status = RTM_OK;
  double seconds[RTM_APP_RANK_PHASES];
  if (rtm_mpi_world_size(run->mpi) == 1) return RTM_OK;
  RTM_TRY(rtm_migration_phase_seconds(run->migration, seconds, &seconds[RTM_PHASE_COUNT]));
  seconds[RTM_PHASE_COUNT + 1] = run->read_s + run->write_s;
  RTM_TRY(rtm_app_reduce_run_timings(run->mpi, seconds, run->shot_seconds, 5 * run->shots.count,
                                     run->rank_timings));
fail:
  return status;
}

int rtm_migrate_write_report(migrate_run_t *run) {
  int status = RTM_OK;
  rtm_mem_ledger_t memory;
  rtm_mem_ledger_init(&memory);
  const int steps = rtm_migration_steps(run->migration);
  const double propagate_s = run->total.forward_s + run->total.backward_s;
  /* two propagations a shot, of the shots this run migrated (a resumed run's earlier ones
   * are in its sums, not its seconds: probe T, T3, reported 6.6x the rate) */
  const int migrated = run->shots.count - run->first_shot;
  const double mcells =
      propagate_s > 0.0 ? 2.0 * (double)run->cells * steps * migrated / propagate_s * 1e-6 : 0.0;
  /* hold_sums: the starts of each shot's sums' copies to the host (run behind the next
   * shot), with the waits for the I/O thread to finish the last add and state;
   * summed_behind: that thread's seconds adding the shots' sums (rtm_sums_add);
   * written_behind: its seconds writing states (one rank, or a first shot group of one
   * rank), both while shots ran */
  enum { OWN_TIMINGS = 11 };
  rtm_timing_t timings[OWN_TIMINGS + 2 + RTM_APP_RANK_TIMINGS] = {
      {"setup", run->setup_end_s - run->start_s},
      {"forward", run->total.forward_s},
      {"backward", run->total.backward_s},
      {"imaging", run->total.imaging_s},
      {"read", run->read_s},
      {"filters", run->filter_s},
      {"figures", run->figures_s},
      {"write", run->write_s},
      {"hold_sums", run->hold_s},
      {"summed_behind", run->summed_s},
      {"written_behind", run->behind_s}};
  /* rtm.offset_lags: the gathers' accumulation, a part of imaging, and their angle gathers,
   * made at the end (before the write) */
  const int own = run->gather_cells ? OWN_TIMINGS + 2 : OWN_TIMINGS;
  timings[OWN_TIMINGS] = (rtm_timing_t){"gathers", run->gathers_s};
  timings[OWN_TIMINGS + 1] = (rtm_timing_t){"angle_gathers", run->angles_s};
  const int timing_count = rtm_mpi_world_size(run->mpi) > 1 ? own + RTM_APP_RANK_TIMINGS : own;
  for (int k = own; k < timing_count; ++k)
    timings[k] = run->rank_timings[k - own];
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
                               .snapshot_format = rtm_migration_snapshot_format(run->migration),
                               .snapshot_round_trip = rtm_migration_snapshot_error(run->migration),
                               .timings = timings,
                               .timing_count = timing_count,
                               .mcells_per_s = mcells,
                               .output_path = run->h5_path,
                               .slab_writes = rtm_app_slab_writes(run->mpi)};
  char json_partial[sizeof run->json_path + 16];
  RTM_TRY(rtm_migration_memory(run->migration, &memory));
  /* --force: a model run's NAME.sgy of the name */
  RTM_TRY(rtm_app_drop_other_outputs(&run->cfg, 1, run->h5_path, run->outputs));
  RTM_TRY(rtm_io_outputs_add(run->outputs, run->json_path, json_partial, sizeof json_partial));
  RTM_TRY(rtm_app_write_report(json_partial, &report, &run->whole, &memory));
  /* the state goes with the commit, once the image is in place and before its journal */
  if (access(run->resume_path, F_OK) == 0)
    RTM_TRY(rtm_io_outputs_retire(run->outputs, run->resume_path));
  const double commit_start_s = rtm_wall_seconds();
  RTM_TRY(rtm_io_outputs_commit(run->outputs, &run->lock)); /* together, or none */
  /* its sync to the disk (mostly the image's file) and its renames, as dd conv=fdatasync */
  if (run->file_s > 0.0) run->file_s += rtm_wall_seconds() - commit_start_s;
  if (rtm_interrupted()) /* after the last shot: the outputs went on, whole */
    rtm_log_info("migrate: %s came while the outputs were written; they are whole",
                 rtm_interrupt_name());
  if (!run->quiet) {
    rtm_log_info("done in %.2f s: forward %.2f s, backward %.2f s, imaging %.2f s, %.1f MCells/s",
                 run->end_s - run->start_s, run->total.forward_s, run->total.backward_s,
                 run->total.imaging_s, mcells);
    if (run->figures_skipped)
      rtm_log_info("wrote %s and %s (no figures: too little address space)", run->h5_path,
                   run->json_path);
    else
      rtm_log_info("wrote %s, %s and %s/%s_image_{x,y,z}.png (%s)", run->h5_path, run->json_path,
                   run->cfg.output.dir, run->cfg.output.name,
                   rtm_figure_available() ? "figures of the planes through the middle"
                                          : "the planes through the middle, one pixel a cell: "
                                            "this build has no PLplot for figures");
    if (run->gather_cells)
      rtm_log_info("the subsurface-offset gathers took %.3g s of the imaging's %.3g s, their "
                   "angle gathers %.3g s",
                   run->gathers_s, run->total.imaging_s, run->angles_s);
    /* the image and the illumination, and the gathers, whose writes file_s counts too */
    const rtm_gather_plan_t *plan = rtm_migration_gather_plan(run->migration);
    const double gathers =
        plan ? (double)rtm_gather_plan_cells(plan, run->grid.n[2]) +
                   (double)rtm_gather_plan_cips(plan) * run->cfg.rtm.angles * run->grid.n[2]
             : 0.0;
    const double gb = (8.0 * (double)run->cells + 4.0 * gathers) / 1e9;
    if (run->file_s > 0.0)
      rtm_log_info("the image%s the illumination%s, %.3g GB, went to the file in %.3g s: %.3g "
                   "GB/s",
                   plan ? "," : " and", plan ? " and the gathers" : "", gb, run->file_s,
                   gb / run->file_s);
  }
fail:
  rtm_mem_ledger_release(&memory);
  return status;
}
