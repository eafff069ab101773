/* model_writes.c - a modelling run's gathers written behind (model_run.h): each shot's
 * gathers are moved into one of two slots and written by the run's I/O thread while the next
 * shot propagates; a slot is used again once the write of the shot it held has ended. The
 * same thread writes a single shot's streamed windows (rtm_model_job_queue). */
#include <string.h>

#include "model_run.h"
#include "rtm_status.h"

/* The I/O thread's job: a shot's gathers into the file. */
static int write_behind(void *context) {
  model_write_t *write = context;
  const double start_s = rtm_wall_seconds();
  const int status = rtm_model_write_shot(write->run, write->shot, &write->gathers);
  write->seconds = rtm_wall_seconds() - start_s;
  return status;
}

/* The slot's write, if any, waited for and counted; its gathers freed. */
static int settle(model_run_t *run, model_write_t *write) {
  if (!write->queued) return RTM_OK;
  const int status = rtm_io_worker_wait(run->worker, write->ticket);
  write->queued = 0;
  run->behind_s += write->seconds;
  rtm_gathers_release(&write->gathers);
  return status;
}

int rtm_model_queue_shot(void *context, int shot, rtm_shot_gathers_t *gathers) {
  int status = RTM_OK;
  model_run_t *run = context;
  model_write_t *write = &run->writes[run->writes_queued % MODEL_WRITES];
  RTM_TRY(settle(run, write));
  *write = (model_write_t){run, shot, *gathers, 1, 0, 0.0};
  memset(gathers, 0, sizeof *gathers); /* the slot's now */
  ++run->writes_queued;
  RTM_TRY(rtm_io_worker_submit(run->worker, write_behind, write, &write->ticket));
fail:
  return status;
}

int rtm_model_check_writes(model_run_t *run) {
  /* no job has ticket -1: the wait returns at once, with the first failure's status */
  return rtm_io_worker_wait(run->worker, -1);
}

int rtm_model_settle_writes(model_run_t *run) {
  int status = RTM_OK;
  for (int k = 0; k < MODEL_WRITES; ++k) {
    const int settled = settle(run, &run->writes[k]);
    if (status == RTM_OK) status = settled;
  }
  return status;
}

void rtm_model_release_writes(model_run_t *run) {
  for (int k = 0; k < MODEL_WRITES; ++k)
    rtm_gathers_release(&run->writes[k].gathers);
}

static int submit_job(void *queue, rtm_job_t job, void *context, long *ticket) {
  return rtm_io_worker_submit(queue, job, context, ticket);
}

static int wait_job(void *queue, long ticket) {
  return rtm_io_worker_wait(queue, ticket); /* ticket -1: at once, no job has it */
}

rtm_job_queue_t rtm_model_job_queue(model_run_t *run) {
  return (rtm_job_queue_t){run->worker, submit_job, wait_job};
}
