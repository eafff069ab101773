#define _POSIX_C_SOURCE 200809L /* pthread_sigmask, sigset_t */
/* io_worker.c - a run's I/O thread (rtm_io.h): jobs run one after another in the order they
 * were queued, on one thread that takes no SIGINT or SIGTERM (the stepping thread sees them,
 * and a write is never cut short by one), so that a run's files are written and its next
 * inputs read while its steps go on. A job's status is kept until it is waited for; after a
 * job fails, the ones queued behind it are not run and return the same status. */
#include <pthread.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include <signal.h>
#include <stdlib.h>

#include "rtm_io.h"
#include "rtm_io_impl.h" /* rtm_h5_quiet */
#include "rtm_status.h"

/* jobs queued at once (a submit past it waits): a migration's end queues the illumination,
 * the offset gathers and 8 parts of the image while it filters, then the angle gathers */
enum { QUEUE = 16 };

struct rtm_io_worker {
  pthread_t thread;
  int started;
  pthread_mutex_t lock;
  pthread_cond_t changed;
  rtm_io_job_t job[QUEUE];
  void *context[QUEUE];
  long queued; /* tickets [0, queued) were handed out; job t sits at t % QUEUE */
  long done;   /* tickets [0, done) have run (or were skipped after a failure) */
  int status;  /* the first failed job's */
  int stop;
  int threads; /* the creator's OpenMP threads, which its jobs' loops take too */
};

static void *work(void *argument) {
  rtm_io_worker_t *w = argument;
  int quiet = 0;
#ifdef _OPENMP
  /* OpenMP's thread count is a thread's setting: the creator's share of the node's cores
   * (app/main.c) holds here too, or the sums' adds would take every core */
  if (w->threads > 0) omp_set_num_threads(w->threads);
#endif
  pthread_mutex_lock(&w->lock);
  for (;;) {
    while (w->done == w->queued && !w->stop)
      pthread_cond_wait(&w->changed, &w->lock);
    if (w->done == w->queued) break; /* stopped, and nothing is left */
    const long ticket = w->done;
    const rtm_io_job_t job = w->job[ticket % QUEUE];
    void *context = w->context[ticket % QUEUE];
    const int failed = w->status != RTM_OK;
    pthread_mutex_unlock(&w->lock);
    /* a thread-safe HDF5 keeps an error stack a thread, printing by default: silenced here,
     * with the first job, when the queue's rule keeps the other threads out of HDF5 (at
     * the thread's start a parallel HDF5, not thread-safe, failed beside the caller's
     * calls) */
    if (!failed && !quiet) {
      rtm_h5_quiet();
      quiet = 1;
    }
    const int status = failed ? RTM_OK : job(context);
    pthread_mutex_lock(&w->lock);
    if (status != RTM_OK && w->status == RTM_OK) w->status = status;
    w->done = ticket + 1;
    pthread_cond_broadcast(&w->changed);
  }
  pthread_mutex_unlock(&w->lock);
  return NULL;
}

int rtm_io_worker_create(rtm_io_worker_t **worker) {
  int status = RTM_OK;
  sigset_t blocked, previous;
  rtm_io_worker_t *w = calloc(1, sizeof *w);
  *worker = NULL;
  if (!w) RTM_FAIL(RTM_ERR_NOMEM, "out of memory for the I/O thread");
  pthread_mutex_init(&w->lock, NULL);
  pthread_cond_init(&w->changed, NULL);
#ifdef _OPENMP
  w->threads = omp_get_max_threads();
#endif
  /* the thread inherits the mask: signals stay with the thread that checks for them */
  sigemptyset(&blocked);
  sigaddset(&blocked, SIGINT);
  sigaddset(&blocked, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &blocked, &previous);
  const int error = pthread_create(&w->thread, NULL, work, w);
  pthread_sigmask(SIG_SETMASK, &previous, NULL);
  if (error != 0) {
    rtm_io_worker_destroy(w);
    RTM_FAIL(RTM_ERR_IO, "could not start the I/O thread (error %d)", error);
  }
  w->started = 1;
  *worker = w;
fail:
  return status;
}

int rtm_io_worker_submit(rtm_io_worker_t *w, rtm_io_job_t job, void *context, long *ticket) {
  pthread_mutex_lock(&w->lock);
  while (w->queued - w->done >= QUEUE)
    pthread_cond_wait(&w->changed, &w->lock);
  w->job[w->queued % QUEUE] = job;
  w->context[w->queued % QUEUE] = context;
  *ticket = w->queued++;
  pthread_cond_broadcast(&w->changed);
  pthread_mutex_unlock(&w->lock);
  return RTM_OK;
}

int rtm_io_worker_wait(rtm_io_worker_t *w, long ticket) {
  pthread_mutex_lock(&w->lock);
  while (w->done <= ticket && w->done < w->queued)
    pthread_cond_wait(&w->changed, &w->lock);
  const int status = w->status;
  pthread_mutex_unlock(&w->lock);
  return status;
}

int rtm_io_worker_drain(rtm_io_worker_t *w) {
  if (!w) return RTM_OK;
  pthread_mutex_lock(&w->lock);
  const long last = w->queued - 1;
  pthread_mutex_unlock(&w->lock);
  return rtm_io_worker_wait(w, last);
}

void rtm_io_worker_destroy(rtm_io_worker_t *w) {
  if (!w) return;
  if (w->started) {
    pthread_mutex_lock(&w->lock);
    w->stop = 1; /* the queued jobs run first: each owns its context until it has run */
    pthread_cond_broadcast(&w->changed);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->thread, NULL);
  }
  pthread_cond_destroy(&w->changed);
  pthread_mutex_destroy(&w->lock);
  free(w);
}
