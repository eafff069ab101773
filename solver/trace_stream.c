/* trace_stream.c - a run's gathers streamed to the file while the steps run (rtm_gathers.h):
 * window k of the recorded traces is copied out by the stepping thread into slot k % S
 * (S = RTM_TRACE_SLOTS), behind the queued steps (corrected for time dispersion on the way
 * by the warp's band, once the band's lag past it is recorded; the band is made by the
 * queue's first job while the first steps run, queued one at a time), and handed as a job to the
 * caller's queue (the run's I/O thread), which writes it through the caller's callback once its
 * copy has landed, so that the steps go on being queued while a window is written. The copy of
 * window k waits for the job of window k - S, the slot's last. The stream starts no thread: the
 * queue runs one job at a time, and the caller makes its other writes of the file (the
 * snapshots) with no job queued. */
#include <stdatomic.h>
#include <stdlib.h>

#include "rtm_gathers.h"
#include "rtm_mpi.h"
#include "rtm_status.h"
#include "rtm_traces.h"

/* The samples a corrected window holds at most: two groups of the band's rows. */
enum { CORRECTED_WINDOW = 2 * RTM_TRACES_BAND_ROWS };

/* The job that writes one window: the I/O thread's until the stepping thread has waited for
 * it (ticket). */
typedef struct {
  struct rtm_trace_stream *stream;
  int window; /* k */
  int queued;
  long ticket;
} window_job_t;

struct rtm_trace_stream {
  rtm_propagator_t *prop;
  int samples;                     /* of each trace: steps + 1 */
  int window, next, windows;       /* samples a window; the next to copy; how many */
  int lag;                         /* raw samples past a window its copy waits for (band) */
  double correct_s;                /* finding the pass band, making and loading the band */
  double limit_hz;                 /* the band's pass band (0: no band) */
  int device;                      /* the GPU the band is made on: the run's */
  int band_queued;                 /* the job making the band, not yet waited for */
  atomic_int band_ended;           /* that job has ended (made the band or failed) */
  long band_ticket;
  rtm_traces_band_t band;          /* made by that job, loaded by the stepping thread */
  double waited_s;                 /* the stepping thread's waits for a slot's last job */
  double written_s;                /* the jobs' seconds checking and writing windows */
  float *slot[2][RTM_TRACE_SLOTS]; /* page-locked, [field][slot] */
  size_t slot_bytes;
  rtm_trace_stream_write_t write; /* the caller's file */
  void *context;
  const char *unstable_hint;
  rtm_job_queue_t queue;             /* the caller's: runs the jobs one at a time */
  window_job_t job[RTM_TRACE_SLOTS]; /* of the window each slot holds */
};

/* With a correction of the recorded traces: whether the backend can correct windows with
 * the warp's band and the band can be made for this run (else a note, and no stream). */
static int band_possible(const rtm_propagator_t *prop, int samples, double *limit_hz) {
  char why[200] = "the backend corrects no windows";
  *limit_hz = prop->wavelets ? rtm_traces_band_limit_hz(prop->wavelets, samples, prop->dt_s) : 0.0;
  if (prop->backend->set_trace_band && *limit_hz > 0.0 &&
      rtm_traces_band_supported(RTM_TRACES_WARP_INVERSE, samples, prop->dt_s, *limit_hz, why,
                                sizeof why))
    return 1;
  rtm_log_info("gathers: written after the run, warped whole for time dispersion (%s)", why);
  return 0;
}

/* The queue's job that makes the band on the traces' backend, on the run's GPU, while the
 * first steps run (the band's cuFFT warp and its cut take a few tens of ms); its time added
 * to s->correct_s. */
static int make_band(void *context) {
  int status = RTM_OK;
  rtm_trace_stream_t *s = context;
  const rtm_propagator_t *prop = s->prop;
  const double start_s = rtm_wall_seconds();
  RTM_TRY(rtm_traces_use_device(s->device));
  RTM_TRY(rtm_traces_band_build(rtm_traces_backend_for(prop->backend->name),
                                RTM_TRACES_WARP_INVERSE, s->samples, prop->dt_s, s->limit_hz,
                                &s->band));
  if (s->band.lag > s->lag)
    RTM_FAIL(RTM_ERR_INTERNAL, "gathers: the warp's band lags %d samples, more than %d",
             s->band.lag, s->lag);
  s->correct_s += rtm_wall_seconds() - start_s;
fail:
  atomic_store_explicit(&s->band_ended, 1, memory_order_release);
  return status;
}

/* Before the first window: the band's job waited for and the band loaded into the
 * propagator's backend (on the stepping thread, which owns the backend). */
static int load_band(rtm_trace_stream_t *s) {
  int status = RTM_OK;
  const rtm_traces_band_t *band = &s->band;
  s->band_queued = 0;
  RTM_TRY(s->queue.wait(s->queue.queue, s->band_ticket));
  const double start_s = rtm_wall_seconds();
  RTM_TRY(s->prop->backend->set_trace_band(s->prop->state, band));
  s->correct_s += rtm_wall_seconds() - start_s;
  rtm_log_info("gathers: streamed, corrected for time dispersion on the GPU by the warp's band "
               "(below %.3g Hz, %.0f samples a corrected one, %d samples behind the steps; made "
               "in %.2f s beside the first steps)",
               band->limit_hz,
               band->offset[band->groups] / (double)RTM_TRACES_BAND_ROWS / band->groups, s->lag,
               s->correct_s);
fail:
  rtm_traces_band_release(&s->band);
  return status;
}

int rtm_trace_stream_create(rtm_propagator_t *prop, const rtm_trace_sampling_t *plan,
                            int window_samples, rtm_trace_stream_t **stream) {
  int status = RTM_OK;
  const int receivers = prop->receivers.count;
  const int corrected = rtm_dispersion_corrects_recorded(prop->dispersion);
  double limit_hz = 0.0, limit_s = 0.0;
  *stream = NULL;
  if (!prop->backend->copy_traces || rtm_mpi_world_size(prop->grid.mpi) > 1 || plan->resample ||
      receivers == 0)
    return RTM_OK;
  long window = (64L << 20) / (4L * receivers);
  if (window < 32) window = 32;
  /* corrected, the last lag + window samples of every trace wait for the last step, and are
   * written after it: short windows shorten that tail (a full receiver plane, 2000 steps, on
   * an H200: the write after the last step 20 ms longer than uncorrected at 48 samples, 8
   * ms at 32, 50 ms at 80; run/experiments/band_cost_probe.sh, VARIANTS full_w32 ...).
   * Gathers of one window stay unstreamed, warped whole after the run. */
  if (corrected && window < plan->samples && window > CORRECTED_WINDOW) window = CORRECTED_WINDOW;
  if (window_samples > 0) window = window_samples;
  if (corrected) /* whole groups of the band's rows */
    window = (window + RTM_TRACES_BAND_ROWS - 1) / RTM_TRACES_BAND_ROWS * RTM_TRACES_BAND_ROWS;
  if (window >= plan->samples) return RTM_OK; /* one window: nothing to overlap */
  if ((double)receivers * (double)window * 4.0 > 2e9) return RTM_OK; /* HDF5's chunk limit */
  if (corrected) {
    limit_s = rtm_wall_seconds();
    if (!band_possible(prop, plan->samples, &limit_hz)) return RTM_OK;
    limit_s = rtm_wall_seconds() - limit_s;
  }
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
  s->correct_s = limit_s; /* finding the pass band's edge: the correction's too */
  if (corrected) {        /* the band is made by rtm_trace_stream_start's job */
    s->limit_hz = limit_hz;
    s->lag = RTM_TRACES_BAND_MAX_LAG;
    s->device = rtm_traces_current_device();
  }
  /* the device's room for a window, now rather than at the first window */
  const rtm_field_t field =
      prop->trace_fields & RTM_FIELD_BIT(RTM_FIELD_P) ? RTM_FIELD_P : RTM_FIELD_Q;
  RTM_TRY(prop->backend->copy_traces(prop->state, field, 0, (int)window, NULL, 0));
  s->window = (int)window;
  s->windows = (int)((plan->samples + window - 1) / window);
fail:
  return status;
}

double rtm_trace_stream_correct_seconds(const rtm_trace_stream_t *stream) {
  return stream ? stream->correct_s : 0.0;
}

void rtm_trace_stream_seconds(const rtm_trace_stream_t *stream, double *waited_s,
                              double *written_s) {
  *waited_s = stream ? stream->waited_s : 0.0;
  *written_s = stream ? stream->written_s : 0.0;
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

/* The I/O thread's job: window k of each recorded field, once its copy has landed, from its
 * slot into the file, checked first. */
static int write_window(void *context) {
  int status = RTM_OK, first = 0;
  const window_job_t *job = context;
  rtm_trace_stream_t *s = job->stream;
  const rtm_propagator_t *prop = s->prop;
  const int k = job->window, receivers = prop->receivers.count;
  const int count = window_span(s, k, &first);
  RTM_TRY(prop->backend->wait_traces(prop->state, k % RTM_TRACE_SLOTS));
  const double start_s = rtm_wall_seconds();
  for (int f = RTM_FIELD_P; f <= RTM_FIELD_Q; ++f) {
    if (!(prop->trace_fields & RTM_FIELD_BIT(f))) continue;
    const float *window = s->slot[f][k % RTM_TRACE_SLOTS];
    if (!rtm_values_finite(window, (size_t)receivers * (size_t)count))
      RTM_FAIL(RTM_ERR_NUMERIC,
               "the recorded traces of %s are not finite by %.4g s: the run is unstable%s",
               rtm_field_name((rtm_field_t)f), (first + count - 1) * prop->dt_s, s->unstable_hint);
    RTM_TRY(s->write(s->context, (rtm_field_t)f, window, receivers, first, count));
  }
  s->written_s += rtm_wall_seconds() - start_s; /* one job at a time */
fail:
  return status;
}

int rtm_trace_stream_start(rtm_trace_stream_t *s, rtm_trace_stream_write_t write, void *context,
                           const char *unstable_hint, const rtm_job_queue_t *queue) {
  s->write = write;
  s->context = context;
  s->unstable_hint = unstable_hint;
  s->queue = *queue;
  if (s->limit_hz > 0.0) {
    const int status = s->queue.submit(s->queue.queue, make_band, s, &s->band_ticket);
    if (status != RTM_OK) return status;
    s->band_queued = 1;
  }
  return RTM_OK;
}

/* The slot's last window, if any, written (its job waited for): the slot is free. */
static int free_slot(rtm_trace_stream_t *s, window_job_t *job) {
  if (!job->queued) return RTM_OK;
  job->queued = 0;
  const double start_s = rtm_wall_seconds();
  const int status = s->queue.wait(s->queue.queue, job->ticket);
  s->waited_s += rtm_wall_seconds() - start_s;
  return status;
}

int rtm_trace_stream_step(rtm_trace_stream_t *s, int it) {
  int status = RTM_OK;
  /* a failed write stops the run at the next step (no job has ticket -1: at once) */
  RTM_TRY(s->queue.wait(s->queue.queue, -1));
  /* the band still being made: the windows wait in the device's traces and the steps go on,
   * one queued at a time (waiting for the band at the first window left the GPU idle once
   * the steps queued so far had run, 23 ms of a full receiver plane's run on an H200; the
   * band's own synchronous calls wait for every step queued, so a queue left to grow made
   * it take 0.39 s instead of 0.13: issue 35) */
  if (s->band_queued && it >= 0 && !atomic_load_explicit(&s->band_ended, memory_order_acquire))
    return s->prop->backend->synchronize ? s->prop->backend->synchronize(s->prop->state) : RTM_OK;
  while (s->next < s->windows) {
    const int k = s->next;
    int first = 0;
    const int count = window_span(s, k, &first);
    /* its last sample, and the last raw one it needs (the band's lag past it) */
    const int last = first + count - 1;
    const int needed = last + s->lag < s->samples - 1 ? last + s->lag : s->samples - 1;
    if (it >= 0 && needed > it + 1) break; /* step it recorded sample it + 1 */
    window_job_t *job = &s->job[k % RTM_TRACE_SLOTS];
    if (s->band_queued) RTM_TRY(load_band(s));
    RTM_TRY(free_slot(s, job));
    RTM_TRY(copy_window(s, k));
    *job = (window_job_t){s, k, 0, 0};
    RTM_TRY(s->queue.submit(s->queue.queue, write_window, job, &job->ticket));
    job->queued = 1;
    ++s->next;
  }
fail:
  return status;
}

int rtm_trace_stream_finish(rtm_trace_stream_t *s) {
  int status = RTM_OK;
  RTM_TRY(rtm_trace_stream_step(s, -1));
  for (int k = 0; k < RTM_TRACE_SLOTS; ++k)
    RTM_TRY(free_slot(s, &s->job[k]));
fail:
  return status;
}

void rtm_trace_stream_destroy(rtm_trace_stream_t *s) {
  if (!s) return;
  rtm_traces_band_release(&s->band); /* made, never loaded: a run stopped early */
  for (int f = 0; f < 2; ++f)
    for (int k = 0; k < RTM_TRACE_SLOTS; ++k)
      if (s->slot[f][k]) {
        rtm_mem_host_unpin(s->slot[f][k]);
        free(s->slot[f][k]);
      }
  free(s);
}
