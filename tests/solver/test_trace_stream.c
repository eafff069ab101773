/* test_trace_stream - gathers streamed while the steps run (rtm_gathers.h) on a cpu
 * propagator given a device-like copy of its traces: each window's copy lands only when its
 * slot is waited for (wait_traces), and the slot reads as NaN until then, so a window written
 * before its copy has landed fails the run. Written as jobs on an I/O worker (io/), the
 * windows equal the traces read after the run bit for bit, for windows that do and do not
 * divide the trace, one sample and several slot turns, and p and q (tti); a window whose
 * write fails stops the run with its status and nothing after it is written. */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rtm_gathers.h"
#include "rtm_io.h"
#include "rtm_status.h"
#include "rtm_test_main.h"

enum { STEPS = 50, SAMPLES = STEPS + 1 };

/* The device-like copies: a copy of window [first, first + count) is taken from the cpu
 * traces when queued (they are final by then) and put into `host` when its slot is waited
 * for. */
typedef struct {
  const rtm_backend_t *cpu;
  int receivers;
  float *staged[2][RTM_TRACE_SLOTS]; /* [field][slot]: the copy not yet landed */
  float *host[2][RTM_TRACE_SLOTS];
  size_t values[2][RTM_TRACE_SLOTS];
  float *traces; /* [receivers][SAMPLES]: read_traces' */
} fake_device_t;

static fake_device_t device;

static int fake_copy_traces(void *state, rtm_field_t field, int first, int count, float *host,
                            int slot) {
  if (!host) return RTM_OK; /* room for a window: nothing to make */
  const size_t values = (size_t)device.receivers * (size_t)count;
  assert_null(device.staged[field][slot]); /* the slot's last copy has landed */
  float *staged = malloc(values * sizeof *staged);
  assert_non_null(staged);
  assert_int_equal(device.cpu->read_traces(state, field, device.traces), RTM_OK);
  for (int r = 0; r < device.receivers; ++r)
    memcpy(staged + (size_t)r * count, device.traces + (size_t)r * SAMPLES + first,
           (size_t)count * sizeof *staged);
  for (size_t i = 0; i < values; ++i)
    host[i] = NAN; /* not landed yet */
  device.staged[field][slot] = staged;
  device.host[field][slot] = host;
  device.values[field][slot] = values;
  return RTM_OK;
}

static int fake_wait_traces(void *state, int slot) {
  (void)state;
  for (int f = 0; f < 2; ++f) {
    if (!device.staged[f][slot]) continue;
    memcpy(device.host[f][slot], device.staged[f][slot], device.values[f][slot] * sizeof(float));
    free(device.staged[f][slot]);
    device.staged[f][slot] = NULL;
  }
  return RTM_OK;
}

/* What the file would get: [field][receivers][SAMPLES], and which writes came. */
typedef struct {
  float *traces[2];
  int receivers;
  int writes, fail_at; /* the write numbered fail_at (from 0) fails; -1: none */
  pthread_t stepping;
  int on_stepping_thread;
} sink_t;

static int write_window(void *context, rtm_field_t field, const float *window, int receivers,
                        int first, int count) {
  sink_t *sink = context;
  if (pthread_equal(pthread_self(), sink->stepping)) sink->on_stepping_thread = 1;
  if (sink->writes++ == sink->fail_at) {
    rtm_log_error("the test's write of samples %d to %d fails", first, first + count - 1);
    return RTM_ERR_IO;
  }
  assert_int_equal(receivers, sink->receivers);
  for (int r = 0; r < receivers; ++r)
    memcpy(sink->traces[field] + (size_t)r * SAMPLES + first, window + (size_t)r * count,
           (size_t)count * sizeof(float));
  return RTM_OK;
}

static int submit_job(void *queue, rtm_job_t job, void *context, long *ticket) {
  return rtm_io_worker_submit(queue, job, context, ticket);
}

static int wait_job(void *queue, long ticket) {
  return rtm_io_worker_wait(queue, ticket);
}

/* 24 x 22 x 20 cells, a patch of 9 x 5 receivers; tti records p and q. */
static void make_propagator(rtm_equation_t equation, rtm_config_t *cfg, rtm_grid_t *grid,
                            rtm_model_t *model, rtm_propagator_t *prop) {
  static const char *const deck[] = {"grid.nx=24",
                                     "grid.ny=22",
                                     "grid.nz=20",
                                     "time.steps=50",
                                     "boundary.width=4",
                                     "source.frequency=15",
                                     "source.x=110",
                                     "source.y=100",
                                     "source.z=90",
                                     "backend.name=cpu",
                                     "receivers.layout=patch",
                                     "receivers.x_count=9",
                                     "receivers.x_step=15",
                                     "receivers.y_count=5",
                                     "receivers.z=40"};
  static const char *const tti[] = {"physics.equation=tti", "model.epsilon=0.2", "model.delta=0.1",
                                    "model.theta=30", "receivers.fields=p,q"};
  rtm_config_defaults(cfg);
  for (size_t i = 0; i < sizeof deck / sizeof *deck; ++i)
    assert_int_equal(rtm_config_set(cfg, deck[i]), RTM_OK);
  for (size_t i = 0; equation == RTM_EQUATION_TTI && i < sizeof tti / sizeof *tti; ++i)
    assert_int_equal(rtm_config_set(cfg, tti[i]), RTM_OK);
  /* a warp needs whole traces: only uncorrected gathers are streamed */
  assert_int_equal(rtm_config_set(cfg, "time.dispersion_correction=none"), RTM_OK);
  assert_int_equal(cfg->time.steps, STEPS);
  assert_int_equal(rtm_grid_init(grid, cfg->grid.n, cfg->grid.spacing_m, cfg->grid.origin_m),
                   RTM_OK);
  assert_int_equal(rtm_model_from_constants(cfg, grid, model), RTM_OK);
  assert_int_equal(rtm_propagator_create(cfg, grid, model, prop), RTM_OK);
}

/* Whether host memory can be page-locked: a CUDA build on a machine without a device
 * cannot, and streams nothing there (the gathers are written after the run). */
static int can_pin(void) {
  float *probe = malloc(4096);
  assert_non_null(probe);
  const int pinned = rtm_mem_host_pin(probe, 4096, "a probe") == RTM_OK;
  if (pinned) rtm_mem_host_unpin(probe);
  free(probe);
  return pinned;
}

/* One run streamed in windows of `window` samples (the write numbered fail_at failing);
 * returns the run's status and checks what reached the sink. */
static int stream_run(rtm_equation_t equation, int window, int fail_at) {
  rtm_config_t cfg;
  rtm_grid_t grid;
  rtm_model_t model;
  rtm_propagator_t prop;
  make_propagator(equation, &cfg, &grid, &model, &prop);
  rtm_backend_t fake = *prop.backend; /* the cpu backend with a device's trace copies */
  fake.copy_traces = fake_copy_traces;
  fake.wait_traces = fake_wait_traces;
  memset(&device, 0, sizeof device);
  device.cpu = prop.backend;
  device.receivers = prop.receivers.count;
  device.traces = malloc((size_t)device.receivers * SAMPLES * sizeof(float));
  assert_non_null(device.traces);
  prop.backend = &fake;

  rtm_trace_sampling_t plan;
  assert_int_equal(rtm_gathers_plan(&prop, NAN, &plan), RTM_OK);
  rtm_trace_stream_t *stream = NULL;
  assert_int_equal(rtm_trace_stream_create(&prop, &plan, window, &stream), RTM_OK);
  assert_non_null(stream);
  rtm_io_worker_t *worker = NULL;
  assert_int_equal(rtm_io_worker_create(&worker), RTM_OK);
  const rtm_job_queue_t queue = {worker, submit_job, wait_job};
  sink_t sink = {{NULL, NULL}, device.receivers, 0, fail_at, pthread_self(), 0};
  for (int f = 0; f < 2; ++f)
    if (prop.trace_fields & RTM_FIELD_BIT(f)) {
      sink.traces[f] = calloc((size_t)device.receivers * SAMPLES, sizeof(float));
      assert_non_null(sink.traces[f]);
    }
  assert_int_equal(rtm_trace_stream_start(stream, write_window, &sink, "", &queue), RTM_OK);

  int status = RTM_OK;
  for (int it = 0; it < STEPS && status == RTM_OK; ++it) {
    status = rtm_propagator_step(&prop, it, RTM_FORWARD);
    if (status == RTM_OK) status = rtm_trace_stream_step(stream, it);
  }
  if (status == RTM_OK) status = rtm_trace_stream_finish(stream);
  rtm_io_worker_destroy(worker); /* the jobs left run first */
  assert_false(sink.on_stepping_thread);

  const int windows = (SAMPLES + window - 1) / window;
  const int fields = rtm_field_count(prop.trace_fields);
  assert_int_equal(fields, equation == RTM_EQUATION_TTI ? 2 : 1);
  if (fail_at < 0) {
    assert_int_equal(status, RTM_OK);
    assert_int_equal(sink.writes, windows * fields);
    for (int f = 0; f < 2; ++f) {
      if (!sink.traces[f]) continue;
      assert_int_equal(fake.read_traces(prop.state, (rtm_field_t)f, device.traces), RTM_OK);
      assert_memory_equal(sink.traces[f], device.traces,
                          (size_t)device.receivers * SAMPLES * sizeof(float));
    }
  } else {
    assert_int_equal(sink.writes, fail_at + 1); /* none after the failed one */
  }
  rtm_propagator_destroy(&prop);
  rtm_trace_stream_destroy(stream);
  for (int f = 0; f < 2; ++f)
    for (int k = 0; k < RTM_TRACE_SLOTS; ++k)
      free(device.staged[f][k]); /* a failed run's copies that never landed */
  free(sink.traces[0]);
  free(sink.traces[1]);
  free(device.traces);
  rtm_model_release(&model);
  return status;
}

static void test_windows_equal_the_traces(void **unused) {
  (void)unused;
  if (!can_pin()) skip();
  assert_int_equal(stream_run(RTM_EQUATION_ISO, 7, -1), RTM_OK);  /* 8 windows, the last 2 */
  assert_int_equal(stream_run(RTM_EQUATION_ISO, 17, -1), RTM_OK); /* 3 that divide 51 */
  assert_int_equal(stream_run(RTM_EQUATION_ISO, 1, -1), RTM_OK);  /* 51: many slot turns */
}

static void test_p_and_q(void **unused) {
  (void)unused;
  if (!can_pin()) skip();
  assert_int_equal(stream_run(RTM_EQUATION_TTI, 10, -1), RTM_OK);
}

static void test_a_failed_write_stops_the_run(void **unused) {
  (void)unused;
  if (!can_pin()) skip();
  assert_int_equal(stream_run(RTM_EQUATION_ISO, 5, 2), RTM_ERR_IO);
  assert_int_equal(stream_run(RTM_EQUATION_ISO, 5, 10), RTM_ERR_IO); /* the last window */
}

RTM_TEST_MAIN(cmocka_unit_test(test_windows_equal_the_traces), cmocka_unit_test(test_p_and_q),
              cmocka_unit_test(test_a_failed_write_stops_the_run))
