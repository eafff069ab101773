/* rtm_gathers.h - a shot's gathers on their way from the propagator to the file, whose
 * writing the caller supplies (a callback: the solver holds no file).
 *
 * After the run (gathers.c): the traces each rank recorded summed on its group's first
 * rank, checked, warped for time dispersion (rtm_dispersion_correct_recorded) and resampled
 * to output.trace_dt there (rtm_gathers_collect); with shot groups the groups' first ranks
 * send their shot's gathers to the file's rank, which writes a round of shots in shot order
 * (rtm_gathers_write_round).
 *
 * While the run steps (trace_stream.c): windows of the recorded traces copied from the
 * device into page-locked slots behind the queued steps, and handed as jobs to the caller's
 * queue (its I/O thread), which writes them while the next steps run (rtm_trace_stream_t). */
#ifndef RTM_GATHERS_H
#define RTM_GATHERS_H

#include <stddef.h>

#include "rtm_mpi.h"
#include "rtm_propagator.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How a shot's traces are written: the propagator records `samples` (steps + 1) at its dt,
 * the file gets trace_samples of trace_dt each (resampled through the trace pipeline when
 * `resample`, output.trace_dt differing from dt). */
typedef struct {
  int samples, trace_samples, resample;
  double trace_dt;
} rtm_trace_sampling_t;

/* The sampling output.trace_dt (NAN: the modelling dt) asks of prop's traces; refused now,
 * before the propagation, when the gathers would not fit rank 0's memory or the ratio of
 * the intervals cannot be reached (a dry run of one trace). */
int rtm_gathers_plan(const rtm_propagator_t *prop, double trace_dt_s, rtm_trace_sampling_t *plan);

/* One shot's gathers as its group's first rank holds them: the source, the receivers and,
 * for each field receivers.fields asks for, count x trace_samples samples. */
typedef struct {
  int count;       /* receivers */
  unsigned fields; /* RTM_FIELD_BIT mask */
  double source_m[3];
  double *position_m; /* [count][3] */
  float *samples;     /* [fields present][count][trace_samples] */
} rtm_shot_gathers_t;

void rtm_gathers_release(rtm_shot_gathers_t *gathers);

/* The shot just propagated: its traces summed on the group's first rank (rtm_mpi_rank 0),
 * checked (not finite: RTM_ERR_NUMERIC, unstable_hint appended), warped as
 * time.dispersion_correction says, where they are recorded when the backend can, and
 * resampled, into `gathers` (the other ranks' stays empty). Collective over the group;
 * *correct_s grows by the seconds of the dispersion warps. */
int rtm_gathers_collect(const rtm_propagator_t *prop, const rtm_trace_sampling_t *plan,
                        const char *unstable_hint, rtm_shot_gathers_t *gathers, double *correct_s);

/* Writes shot `shot`'s gathers into the caller's file (the file's rank calls it), now or
 * later: it may take them, leaving *gathers empty (a writer of its own thread). */
typedef int (*rtm_gathers_write_t)(void *context, int shot, rtm_shot_gathers_t *gathers);

/* Round `round` of shot groups (group g holds shot round G + g, of shot_count, `mpi`'s
 * groups): the file's rank (world rank 0) hands `write` its own group's (`own`, which the
 * writer may take) and receives the other groups' from their first ranks, which send
 * theirs, in shot order. Every rank calls it; the messages stay on the caller's thread. */
int rtm_gathers_write_round(rtm_mpi_t *mpi, const rtm_trace_sampling_t *plan, int round,
                            int shot_count, rtm_shot_gathers_t *own, rtm_gathers_write_t write,
                            void *context);

/* ---- streamed while the steps run (trace_stream.c) ---- */
typedef struct rtm_trace_stream rtm_trace_stream_t;

/* The caller's queue of jobs, run one after another on a thread of its own (the run's I/O
 * thread; the solver starts none): submit queues job(context) and gives its ticket; wait
 * returns once the job of `ticket` and those before it have run, with the first failed
 * job's status (ticket -1, no job's: at once, the failures so far). */
typedef int (*rtm_job_t)(void *context);
typedef struct {
  void *queue;
  int (*submit)(void *queue, rtm_job_t job, void *context, long *ticket);
  int (*wait)(void *queue, long ticket);
} rtm_job_queue_t;

/* Writes `count` samples from `first` of the `receivers` traces of `field`, [receivers]
 * [count], into the caller's file; called by a job on the queue's thread. */
typedef int (*rtm_trace_stream_write_t)(void *context, rtm_field_t field, const float *window,
                                        int receivers, int first, int count);

/* A stream of prop's traces in windows of window_samples (0: about 64 MB of them, at least
 * 32), or *stream = NULL when they go to the file after the run instead: a backend that
 * cannot copy windows out, several ranks, no receivers, resampled traces, a single window
 * (nothing to overlap), a window beyond HDF5's chunk limit, or no page-locked memory for the
 * slots. With a time-dispersion correction of the recorded traces the windows leave the
 * device corrected by the warp's band (rtm_traces_band_t: within 2e-5 of the exact warp, where
 * the whole-trace warp written after a run is 1e-4 off), each once its raw samples to the band's
 * lag past it are recorded; where the band cannot be made (traces too long, a band too near the
 * warp's end, a backend without set_trace_band) the run says why and its traces are warped whole
 * after it. Windows are then a multiple of RTM_TRACES_BAND_ROWS. The device's room for a window is
 * asked now; on failure *stream may still be set (rtm_trace_stream_destroy it). prop must outlive
 * the stream's jobs. */
int rtm_trace_stream_create(rtm_propagator_t *prop, const rtm_trace_sampling_t *plan,
                            int window_samples, rtm_trace_stream_t **stream);
/* Samples a window holds (the file's chunk along time). */
int rtm_trace_stream_window(const rtm_trace_stream_t *stream);
/* Seconds spent making and loading the warp's band (0 without a correction), the making by
 * a job on the queue beside the first steps: the stream's share of the run's time-dispersion
 * correction (its products run on the copy stream, beside the steps). After finish. */
double rtm_trace_stream_correct_seconds(const rtm_trace_stream_t *stream);
/* The stepping thread's seconds waiting for a slot's last window to be written (the
 * writer behind the steps), and the jobs' seconds checking and writing windows. After
 * finish. */
void rtm_trace_stream_seconds(const rtm_trace_stream_t *stream, double *waited_s,
                              double *written_s);
/* Windows go to `write` as jobs on `queue` (copied) from now on; a window whose values are
 * not finite fails its job (RTM_ERR_NUMERIC, unstable_hint appended). With a correction the
 * warp's band is made by a first job, on the GPU current here, while the first steps run,
 * and loaded before the first window. Before the first step. */
int rtm_trace_stream_start(rtm_trace_stream_t *stream, rtm_trace_stream_write_t write,
                           void *context, const char *unstable_hint, const rtm_job_queue_t *queue);
/* After step `it`: every window whose samples are recorded copied out and queued to be
 * written (a slot's copy waits for the job of the slot's last window). A failed job stops
 * the run here. */
int rtm_trace_stream_step(rtm_trace_stream_t *stream, int it);
/* After the loop: the windows left copied out, and every window's job waited for. */
int rtm_trace_stream_finish(rtm_trace_stream_t *stream);
/* Frees the slots: after the propagator is destroyed (its destroy waits for the copies into
 * them) and the queue has run the stream's jobs. NULL is a no-op. */
void rtm_trace_stream_destroy(rtm_trace_stream_t *stream);

#ifdef __cplusplus
}
#endif

#endif
