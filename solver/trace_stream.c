/* trace_stream.c - a run's gathers streamed to the file while the steps run (rtm_gathers.h):
 * window k of the recorded traces is copied out by the stepping thread into slot k % S
 * (S = RTM_TRACE_SLOTS), behind the queued steps, once window k - S, the slot's last, is in
 * the file; the writer thread this file starts writes each window through the caller's
 * callback once its copy has landed, so that the steps go on being queued while a window
 * is written. The file is touched by one thread at a time (file_lock: the caller's other
 * writes, the snapshots, take it too). */
#include <pthread.h>
#include <stdlib.h>

#include "rtm_gathers.h"
#include "rtm_mpi.h"
#include "rtm_status.h"
#include "rtm_traces.h"

struct rtm_trace_stream {
  rtm_propagator_t *prop;
  int samples;                     /* of each trace: steps + 1 */
  int window, next, windows;       /* samples a window; the next to copy; how many */
  float *slot[2][RTM_TRACE_SLOTS]; /* page-locked, [field][slot] */
  size_t slot_bytes;
  rtm_trace_stream_write_t write; /* the caller's file */
  void *context;
  const char *unstable_hint;
  pthread_t thread;
  int started;
  pthread_mutex_t lock; /* copied, written, stop, status */
  pthread_cond_t changed;
  pthread_mutex_t file_lock;
  int copied;  /* windows [0, copied) are queued to be copied out */
  int written; /* windows [0, written) are in the file */
  int stop;    /* no more windows will come: write what is copied, then end */
  int abandon; /* the run failed: end without writing what is left */
  int status;  /* the writer's first failure */
};

int rtm_trace_stream_create(rtm_propagator_t *prop, const rtm_trace_sampling_t *plan,
                            int window_samples, rtm_trace_stream_t **stream) {
  int status = RTM_OK;
  const int receivers = prop->receivers.count;
  *stream = NULL;
  if (!prop->backend->copy_traces || rtm_mpi_world_size(prop->grid.mpi) > 1 || plan->resample ||
      rtm_dispersion_corrects_recorded(prop->dispersion) || receivers == 0)
    return RTM_OK;
  long window = (64L << 20) / (4L * receivers);
  if (window < 32) window = 32;
  if (window_samples > 0) window = window_samples;
  if (window >= plan->samples) return RTM_OK; /* one window: nothing to overlap */
  if ((double)receivers * (double)window * 4.0 > 2e9) return RTM_OK; /* HDF5's chunk limit */
  rtm_trace_stream_t *s = calloc(1, sizeof *s);
  if (!s) return RTM_OK; /* written after the run */
  s->prop = prop;
  s->samples = plan->samples;
  s->slot_bytes = (size_t)receivers * (size_t)window * sizeof(float);
  for (int f = RTM_FIELD_P; f <= RTM_FIELD_Q; ++f)
    for (int k = 0; k < RTM_TRACE_SLOTS && (prop->trace_fields & RTM_FIELD_BIT(f)); ++k) {
      float *slot = rtm_mem_host_large(s->slot_bytes);
      if (!slot || rtm_mem_host_pin(slot, s->slot_bytes, "streamed traces") != RTM_OK) {
        free(slot);
        rtm_trace_stream_destroy(s); /* the slots made so far */
        return RTM_OK;               /* written after the run, as without a device */
      }
      s->slot[f][k] = slot;
    }
  *stream = s;
  /* the device's room for a window, now rather than at the first window */
  const rtm_field_t field =
      prop->trace_fields & RTM_FIELD_BIT(RTM_FIELD_P) ? RTM_FIELD_P : RTM_FIELD_Q;
  RTM_TRY(prop->backend->copy_traces(prop->state, field, 0, (int)window, NULL, 0));
  s->window = (int)window;
  s->windows = (int)((plan->samples + window - 1) / window);
fail:
  return status;
}

int rtm_trace_stream_window(const rtm_trace_stream_t *stream) {
  return stream->window;
}

/* Window k's samples [first, first + count): `window` of them, fewer in the last. */
static int window_span(const rtm_trace_stream_t *s, int k, int *first) {
  *first = k * s->window;
  return *first + s->window <= s->samples ? s->window : s->samples - *first;
}

/* Window k of each recorded field from the device into slot k % S, queued behind the steps
 * so far. */
static int copy_window(rtm_trace_stream_t *s, int k) {
  int status = RTM_OK, first = 0;
  rtm_propagator_t *prop = s->prop;
  const int count = window_span(s, k, &first);
  for (int f = RTM_FIELD_P; f <= RTM_FIELD_Q; ++f)
    if (prop->trace_fields & RTM_FIELD_BIT(f))
      RTM_TRY(prop->backend->copy_traces(prop->state, (rtm_field_t)f, first, count,
                                         s->slot[f][k % RTM_TRACE_SLOTS], k % RTM_TRACE_SLOTS));
fail:
  return status;
}

/* Window k of each recorded field from its slot into the file, checked first (the writer
 * thread's work). */
static int write_window(rtm_trace_stream_t *s, int k) {
  int status = RTM_OK, first = 0;
  const rtm_propagator_t *prop = s->prop;
  const int receivers = prop->receivers.count, count = window_span(s, k, &first);
  for (int f = RTM_FIELD_P; f <= RTM_FIELD_Q; ++f) {
    if (!(prop->trace_fields & RTM_FIELD_BIT(f))) continue;
    const float *window = s->slot[f][k % RTM_TRACE_SLOTS];
    if (!rtm_values_finite(window, (size_t)receivers * (size_t)count))
      RTM_FAIL(RTM_ERR_NUMERIC,
               "the recorded traces of %s are not finite by %.4g s: the run is unstable%s",
               rtm_field_name((rtm_field_t)f), (first + count - 1) * prop->dt_s, s->unstable_hint);
    RTM_TRY(s->write(s->context, (rtm_field_t)f, window, receivers, first, count));
  }
fail:
  return status;
}

/* The writer thread: each window once its copy has landed, until told to stop with nothing
 * left, told to abandon the rest, or at its first failure. */
static void *writer_main(void *arg) {
  rtm_trace_stream_t *s = arg;
  for (;;) {
    pthread_mutex_lock(&s->lock);
    while (s->written == s->copied && !s->stop && !s->abandon)
      pthread_cond_wait(&s->changed, &s->lock);
    const int k = s->written, done = s->written == s->copied || s->abandon;
    pthread_mutex_unlock(&s->lock);
    if (done) return NULL;
    int status = s->prop->backend->wait_traces(s->prop->state, k % RTM_TRACE_SLOTS);
    if (status == RTM_OK) {
      pthread_mutex_lock(&s->file_lock);
      status = write_window(s, k);
      pthread_mutex_unlock(&s->file_lock);
    }
    pthread_mutex_lock(&s->lock);
    if (status == RTM_OK)
      s->written = k + 1;
    else
      s->status = status;
    pthread_cond_broadcast(&s->changed);
    pthread_mutex_unlock(&s->lock);
    if (status != RTM_OK) return NULL;
  }
}

int rtm_trace_stream_start(rtm_trace_stream_t *s, rtm_trace_stream_write_t write, void *context,
                           const char *unstable_hint) {
  s->write = write;
  s->context = context;
  s->unstable_hint = unstable_hint;
  pthread_mutex_init(&s->lock, NULL);
  pthread_mutex_init(&s->file_lock, NULL);
  pthread_cond_init(&s->changed, NULL);
  if (pthread_create(&s->thread, NULL, writer_main, s) != 0) {
    pthread_cond_destroy(&s->changed);
    pthread_mutex_destroy(&s->file_lock);
    pthread_mutex_destroy(&s->lock);
    rtm_log_error("could not start the thread that writes the gathers during the run");
    return RTM_ERR_NOMEM;
  }
  s->started = 1;
  return RTM_OK;
}

int rtm_trace_stream_stop(rtm_trace_stream_t *s, int abandon) {
  if (!s || !s->started) return RTM_OK;
  pthread_mutex_lock(&s->lock);
  s->stop = 1;
  s->abandon = abandon;
  pthread_cond_broadcast(&s->changed);
  pthread_mutex_unlock(&s->lock);
  pthread_join(s->thread, NULL);
  s->started = 0;
  pthread_cond_destroy(&s->changed);
  pthread_mutex_destroy(&s->file_lock);
  pthread_mutex_destroy(&s->lock);
  return s->status;
}

int rtm_trace_stream_step(rtm_trace_stream_t *s, int it) {
  int status = RTM_OK;
  pthread_mutex_lock(&s->lock); /* a writer's failure stops the run at the next step */
  status = s->status;
  pthread_mutex_unlock(&s->lock);
  if (status != RTM_OK) goto fail;
  while (s->next < s->windows) {
    const int k = s->next;
    int first = 0;
    const int count = window_span(s, k, &first);
    const int last = first + count - 1;  /* its last sample */
    if (it >= 0 && last > it + 1) break; /* step it recorded sample it + 1 */
    pthread_mutex_lock(&s->lock);
    while (s->written < k - RTM_TRACE_SLOTS + 1 && s->status == RTM_OK)
      pthread_cond_wait(&s->changed, &s->lock);
    status = s->status;
    pthread_mutex_unlock(&s->lock);
    if (status != RTM_OK) goto fail;
    RTM_TRY(copy_window(s, k));
    pthread_mutex_lock(&s->lock);
    s->copied = k + 1;
    pthread_cond_broadcast(&s->changed);
    pthread_mutex_unlock(&s->lock);
    ++s->next;
  }
fail:
  return status;
}

int rtm_trace_stream_finish(rtm_trace_stream_t *s) {
  int status = RTM_OK;
  RTM_TRY(rtm_trace_stream_step(s, -1));
  RTM_TRY(rtm_trace_stream_stop(s, 0));
fail:
  return status;
}

void rtm_trace_stream_lock(rtm_trace_stream_t *s) {
  if (s && s->started) pthread_mutex_lock(&s->file_lock);
}

void rtm_trace_stream_unlock(rtm_trace_stream_t *s) {
  if (s && s->started) pthread_mutex_unlock(&s->file_lock);
}

void rtm_trace_stream_destroy(rtm_trace_stream_t *s) {
  if (!s) return;
  rtm_trace_stream_stop(s, 1);
  for (int f = 0; f < 2; ++f)
    for (int k = 0; k < RTM_TRACE_SLOTS; ++k)
      if (s->slot[f][k]) {
        rtm_mem_host_unpin(s->slot[f][k]);
        free(s->slot[f][k]);
      }
  free(s);
}
