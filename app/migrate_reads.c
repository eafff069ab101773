/* migrate_reads.c - a migration's observed gathers read ahead (migrate_run.h): while a shot
 * propagates, the run's I/O thread reads the gather of the next shot its group migrates, so
 * that the shot after it starts without waiting for the file. */
#include "migrate_run.h"
#include "rtm_status.h"

/* The I/O thread's job. Its status stays in the slot, not the queue's: a gather that cannot
 * be read fails the run when its shot comes, but the state saved behind the shot before it
 * is still written. */
static int read_gather(void *context) {
  migrate_read_t *read = context;
  read->status = rtm_io_read_shot(read->path, read->shot, "p", &read->gather);
  return RTM_OK;
}

/* The gather read ahead, if any, dropped (once its job has run: the job owns it till then;
 * with no thread left, it has). */
static int drop_read(migrate_run_t *run) {
  migrate_read_t *read = &run->read;
  if (read->shot < 0) return RTM_OK;
  const int status = run->worker ? rtm_io_worker_wait(run->worker, read->ticket) : RTM_OK;
  rtm_io_gather_release(&read->gather);
  read->shot = -1;
  return status;
}

int rtm_migrate_read_ahead(migrate_run_t *run, int shot) {
  int status = RTM_OK;
  migrate_read_t *read = &run->read;
  if (read->shot == shot) return RTM_OK;
  RTM_TRY(drop_read(run));
  read->path = run->cfg.rtm.observed;
  read->shot = shot;
  RTM_TRY(rtm_io_worker_submit(run->worker, read_gather, read, &read->ticket));
fail:
  return status;
}

int rtm_migrate_take_gather(migrate_run_t *run, int shot, rtm_io_gather_t *gather) {
  int status = RTM_OK;
  migrate_read_t *read = &run->read;
  RTM_TRY(rtm_migrate_read_ahead(run, shot));
  RTM_TRY(rtm_io_worker_wait(run->worker, read->ticket));
  if (read->status != RTM_OK) {
    status = read->status;
    rtm_io_gather_release(&read->gather);
    read->shot = -1;
    goto fail;
  }
  *gather = read->gather; /* the caller's now */
  read->gather = (rtm_io_gather_t){0};
  read->shot = -1;
fail:
  return status;
}

void rtm_migrate_release_reads(migrate_run_t *run) {
  (void)drop_read(run);
}
