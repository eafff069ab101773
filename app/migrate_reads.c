/* migrate_reads.c - a migration's observed gathers read ahead (migrate_run.h): while a shot
 * propagates, the run's I/O thread reads the gather of the next shot its group migrates and
 * makes it ready (checked, resampled, warped for time dispersion, muted, its receiver side
 * made), so that the shot after it starts without waiting for the file, the warp or the
 * taps. */
#include <stdlib.h>

#include "migrate_run.h"
#include "rtm_status.h"

rtm_observed_gather_t rtm_migrate_observed_gather(int shot, const rtm_io_gather_t *gather) {
  return (rtm_observed_gather_t){shot,           gather->count,    gather->samples,    gather->dt_s,
                                 gather->traces, gather->source_m, gather->receivers_m};
}

/* The gather read made ready to inject, on the migration's device where the warp runs there
 * (a thread of its own starts on device 0): checked, at the modelling dt, muted and
 * phase-corrected, then the receiver side made of it (the adjoint taps, the gather reversed),
 * so that the shot starts with its host work done. */
static int prepare_gather(migrate_read_t *read) {
  int status = RTM_OK;
  const migrate_run_t *run = read->run;
  const double *source = run->shots.source_m + 3 * (size_t)read->shot;
  const rtm_io_gather_t *g = &read->gather;
  const rtm_observed_gather_t gather = rtm_migrate_observed_gather(read->shot, g);
  float *observed = NULL;
  RTM_TRY(rtm_migration_use_device(run->migration));
  RTM_TRY(rtm_observed_check(&run->cfg, &run->grid, run->dt_s, source, &gather));
  RTM_TRY(rtm_observed_at_modelling_dt(&run->cfg, rtm_migration_backend(run->migration), run->dt_s,
                                       &gather, &observed));
  rtm_migration_prepare(run->migration, source, read->mute_velocity, g->receivers_m, g->count,
                        observed);
  RTM_TRY(
      rtm_migration_receiver_side(run->migration, g->receivers_m, g->count, observed, &read->side));
fail:
  free(observed);
  return status;
}

/* The I/O thread's job. Its status stays in the slot, not the queue's: a gather that cannot
 * be read or made ready fails the run when its shot comes, but the state saved behind the
 * shot before it is still written. */
static int read_gather(void *context) {
  migrate_read_t *read = context;
  read->status = rtm_io_read_shot(read->run->cfg.rtm.observed, read->shot, "p", &read->gather);
  if (read->status == RTM_OK) read->status = rtm_migrate_check_observed(read->run);
  if (read->status == RTM_OK) read->status = prepare_gather(read);
  rtm_io_gather_release(&read->gather); /* in the side now */
  return RTM_OK;
}

/* The side made ahead, if any, dropped (once its job has run: the job owns it till then;
 * with no thread left, it has). */
static int drop_read(migrate_run_t *run) {
  migrate_read_t *read = &run->read;
  if (read->shot < 0) return RTM_OK;
  const int status = run->worker ? rtm_io_worker_wait(run->worker, read->ticket) : RTM_OK;
  rtm_receiver_side_destroy(read->side);
  read->side = NULL;
  read->shot = -1;
  return status;
}

int rtm_migrate_read_ahead(migrate_run_t *run, int shot) {
  int status = RTM_OK;
  migrate_read_t *read = &run->read;
  if (read->shot == shot) return RTM_OK;
  RTM_TRY(drop_read(run));
  read->run = run;
  read->shot = shot;
  /* here, not in the job: vp at the source is a collective on z-slabs, and MPI is called
   * from this thread alone (from the I/O thread it crashed a 6-rank run in MPI_Testall) */
  read->mute_velocity =
      rtm_migration_mute_velocity(run->migration, run->shots.source_m + 3 * (size_t)shot);
  RTM_TRY(rtm_io_worker_submit(run->worker, read_gather, read, &read->ticket));
fail:
  return status;
}

int rtm_migrate_take_side(migrate_run_t *run, int shot, rtm_receiver_side_t **side) {
  int status = RTM_OK;
  migrate_read_t *read = &run->read;
  *side = NULL;
  RTM_TRY(rtm_migrate_read_ahead(run, shot));
  RTM_TRY(rtm_io_worker_wait(run->worker, read->ticket));
  status = read->status;
  *side = status == RTM_OK ? read->side : NULL; /* the caller's now */
  if (status != RTM_OK) rtm_receiver_side_destroy(read->side);
  read->side = NULL;
  read->shot = -1;
fail:
  return status;
}

void rtm_migrate_release_reads(migrate_run_t *run) {
  (void)drop_read(run);
}
