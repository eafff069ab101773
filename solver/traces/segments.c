/* segments.c - the leapfrog dispersion warp (rtm_traces_warp_t) of a trace by overlapping
 * segments whose warps sum to the whole trace's (rtm_traces_dispersion_segments), the
 * building block of warping gathers while they are recorded: the warp is linear, so with a
 * partition of unity w_j (sum_j w_j = 1) W r = sum_j W(w_j r), and W(w_j r) is the pipeline's
 * warp of a short buffer whose time origin is its first sample's absolute time
 * (rtm_traces_output_t.warp_origin_s). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rtm_status.h"
#include "traces_impl.h"

/* Padding of a segment's 2H samples (the cubic interpolation of its spectrum:
 * rtm_traces_input_at); 8 as the whole-trace warp would leave 3e-5 (test_traces_segments). */
#define SEGMENT_PADDING 16
/* Output samples kept past the delay bound on both sides: the interpolation's own spread. */
#define SEGMENT_GUARD 16
/* Padded floats a run at most (as rtm_traces_dispersion). */
#define SEGMENT_FLOATS_A_RUN (1 << 26)

int rtm_traces_segments_layout(rtm_traces_warp_t warp, int n, double dt, int hop, double max_hz,
                               rtm_traces_segments_t *layout) {
  memset(layout, 0, sizeof *layout);
  if ((warp != RTM_TRACES_WARP_FORWARD && warp != RTM_TRACES_WARP_INVERSE) || n <= 0 || hop <= 0 ||
      hop > RTM_TRACES_MAX_LENGTH / (4 * SEGMENT_PADDING) || !(dt > 0.0) || !isfinite(dt) ||
      !(max_hz > 0.0) || !isfinite(max_hz)) {
    rtm_log_error("traces: a segmented warp (%d) of %d samples at %g s, hop %d, up to %g Hz: "
                  "the warp must be forward or inverse, the rest positive",
                  (int)warp, n, dt, hop, max_hz);
    return RTM_ERR_INPUT;
  }
  /* The group delay of an event at time tau is tau / cos(theta) (inverse) or tau cos(a)
   * (forward, sin(a) = theta), theta = pi f dt at the input's f = max_hz. Only delays
   * inside the trace matter, so the largest shift is n (1 - cos): a segment ending at e
   * moves by e (1 / cos - 1) and only n - e of it lands in the trace. */
  const double theta = RTM_TRACES_PI * max_hz * dt;
  double keep = 0.0; /* cos(theta) (inverse) or cos(asin(theta)) (forward); 0: no bound */
  if (warp == RTM_TRACES_WARP_INVERSE && theta < 0.5 * RTM_TRACES_PI) keep = cos(theta);
  if (warp == RTM_TRACES_WARP_FORWARD && theta < 1.0) keep = sqrt(1.0 - theta * theta);
  const int shift = (int)ceil(n * (1.0 - keep)) + SEGMENT_GUARD;
  int fft_length = rtm_traces_warp_fft_length(2 * hop, SEGMENT_PADDING);
  if (fft_length < 2 * hop + shift + SEGMENT_GUARD)
    fft_length = rtm_traces_warp_fft_length(2 * hop + shift + SEGMENT_GUARD, 1);
  /* the window is a circle: what it holds past the segment on the late side (inverse) or
   * the early side (forward) is all kept */
  const int spare = fft_length - 2 * hop - SEGMENT_GUARD;
  layout->hop = hop;
  layout->fft_length = fft_length;
  layout->back = warp == RTM_TRACES_WARP_INVERSE ? SEGMENT_GUARD : spare;
  layout->reach = warp == RTM_TRACES_WARP_INVERSE ? spare : SEGMENT_GUARD;
  layout->segments = n > 1 ? (n - 1 + hop - 1) / hop + 1 : 1;
  return RTM_OK;
}

int rtm_traces_segments_final(const rtm_traces_segments_t *layout, int n, int known) {
  if (known >= n) return n;
  const int final = (known / layout->hop - 1) * layout->hop - layout->back;
  return final > 0 ? final : 0;
}

/* Segment j's input: the traces [rows][n] weighted by w_j (centre j H, 2H long) into the
 * plan's input buffer, 2H samples a row from sample (j - 1) H; rows past `rows` silent. */
static void fill_segment(rtm_traces_plan_t *plan, const float *traces, int rows, int n, int hop,
                         int j) {
  size_t pitch = 0;
  float *in = rtm_traces_input_buffer(plan, &pitch);
  const int first = (j - 1) * hop;
  for (int i = 0; i < plan->desc.n_inputs; ++i)
    for (int m = 0; m < 2 * hop; ++m) {
      const int at = first + m;
      float v = 0.0f;
      if (i < rows && at >= 0 && at < n) {
        const double c = cos(0.5 * RTM_TRACES_PI * (m - hop) / hop);
        v = (float)(c * c * traces[(size_t)i * n + at]);
      }
      in[(size_t)i * pitch + m] = v;
    }
}

/* Adds segment j's warped output, local samples [-back, 2H + reach) of the circular
 * window, into sum [rows][n]. */
static void add_segment(const rtm_traces_plan_t *plan, const rtm_traces_segments_t *layout,
                        int rows, int n, int j, float *sum) {
  const float *y = rtm_traces_result(plan);
  const int N = layout->fft_length, first = (j - 1) * layout->hop;
  for (int i = 0; i < rows; ++i) {
    const float *row = y + rtm_traces_gather_offset(plan, i, 0);
    for (int q = -layout->back; q < 2 * layout->hop + layout->reach; ++q) {
      const int at = first + q;
      if (at >= 0 && at < n) sum[(size_t)i * n + at] += row[(q + N) % N];
    }
  }
}

int rtm_traces_dispersion_segments(const char *backend, rtm_traces_warp_t warp, int count, int n,
                                   double dt, int hop, double max_hz, float *traces) {
  int status = RTM_OK;
  rtm_traces_segments_t layout;
  rtm_traces_plan_t *plan = NULL;
  float *sum = NULL;
  if (warp == RTM_TRACES_WARP_NONE || count == 0) return RTM_OK;
  if (count < 0) RTM_FAIL(RTM_ERR_INPUT, "traces: a segmented warp of %d traces", count);
  RTM_TRY(rtm_traces_segments_layout(warp, n, dt, hop, max_hz, &layout));
  const int N = layout.fft_length;
  int batch = SEGMENT_FLOATS_A_RUN / N;
  if (batch < 1) batch = 1;
  if (batch > count) batch = count;
  rtm_traces_output_t output = {.length = N,
                                .dt_s = dt,
                                .normalisation = RTM_TRACES_NORM_NONE,
                                .warp = warp,
                                .warp_dt_s = dt};
  const rtm_traces_desc_t desc = {.backend = backend,
                                  .device = RTM_TRACES_CURRENT_DEVICE,
                                  .pipeline = RTM_TRACES_STREAMS,
                                  .n_inputs = batch,
                                  .input_length = 2 * hop,
                                  .input_dt_s = dt,
                                  .fft_length = N,
                                  .outputs = &output,
                                  .n_outputs = 1};
  RTM_TRY(rtm_traces_plan_create(&desc, &plan));
  sum = malloc((size_t)batch * (size_t)n * sizeof *sum);
  if (!sum) RTM_FAIL(RTM_ERR_NOMEM, "traces: out of memory for a segmented warp's sums");
  for (int first = 0; first < count; first += batch) {
    float *at = traces + (size_t)first * (size_t)n;
    const int rows = count - first < batch ? count - first : batch;
    memset(sum, 0, (size_t)rows * (size_t)n * sizeof *sum);
    for (int j = 0; j < layout.segments; ++j) {
      output.warp_origin_s = (j - 1) * hop * dt; /* the buffer's first sample */
      RTM_TRY(rtm_traces_plan_update(&plan, &desc));
      fill_segment(plan, at, rows, n, hop, j);
      RTM_TRY(rtm_traces_run(plan, NULL, NULL));
      add_segment(plan, &layout, rows, n, j, sum);
    }
    memcpy(at, sum, (size_t)rows * (size_t)n * sizeof *sum);
  }
fail:
  free(sum);
  rtm_traces_plan_destroy(plan);
  return status;
}
