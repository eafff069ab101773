/* traces.c - the trace pipeline's backend-independent part: validation of the description,
 * the buffer layout (groups of equal inverse FFT size), dispatch to the FFTW or CUDA
 * backend, and the resampling convenience. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtm_status.h"
#include "traces_impl.h"

static const rtm_traces_backend_t *const backends[] = {
    &rtm_traces_fftw,
#ifdef RTM3D_HAVE_CUDA
    &rtm_traces_cuda,
#endif
};
enum { BACKEND_COUNT = (int)(sizeof backends / sizeof backends[0]) };

/* Window mismatch allowed between P dt_out and fft_length dt_in, in output samples: at the
 * window's end a time error of 1e-6 samples, a phase error below 1e-5 rad at Nyquist. */
#define WINDOW_TOLERANCE_SAMPLES 1e-6

int rtm_traces_parse_pipeline(const char *name, rtm_traces_pipeline_t *pipeline) {
  if (name && strcmp(name, "graph") == 0) {
    *pipeline = RTM_TRACES_GRAPH;
    return RTM_OK;
  }
  if (name && strcmp(name, "streams") == 0) {
    *pipeline = RTM_TRACES_STREAMS;
    return RTM_OK;
  }
  rtm_log_error("traces.pipeline: unknown value '%s' (known: graph, streams)",
                name ? name : "(null)");
  return RTM_ERR_CONFIG;
}

const char *rtm_traces_pipeline_name(rtm_traces_pipeline_t pipeline) {
  return pipeline == RTM_TRACES_STREAMS ? "streams" : "graph";
}

const char *rtm_traces_backend_for(const char *backend) {
  return backend && strcmp(backend, "cuda") == 0 ? "cuda" : "cpu";
}

static const rtm_traces_backend_t *find_backend(const char *name) {
  for (int i = 0; i < BACKEND_COUNT; ++i)
    if (name && strcmp(backends[i]->name, name) == 0) return backends[i];
  return NULL;
}

/* P = fft_length * input_dt / dt as a whole number, or -1 when it is not one. */
static long long output_fft_size(int fft_length, double input_dt, double dt) {
  double p = (double)fft_length * input_dt / dt;
  double rounded = floor(p + 0.5);
  if (!(fabs(p - rounded) <= WINDOW_TOLERANCE_SAMPLES)) return -1;
  return (long long)rounded;
}

static int validate_output(const rtm_traces_desc_t *desc, int fft_length, int m,
                           long long *fft_size) {
  const rtm_traces_output_t *o = &desc->outputs[m];
  double window_s = fft_length * desc->input_dt_s;
  if (o->length <= 0 || o->length > RTM_TRACES_MAX_LENGTH) {
    rtm_log_error("traces: output %d: length %d must be in [1, %d]", m, o->length,
                  RTM_TRACES_MAX_LENGTH);
    return RTM_ERR_INPUT;
  }
  if (!(o->dt_s > 0.0) || !isfinite(o->dt_s)) {
    rtm_log_error("traces: output %d: sample interval %g s must be positive and finite", m,
                  o->dt_s);
    return RTM_ERR_INPUT;
  }
  long long p = output_fft_size(fft_length, desc->input_dt_s, o->dt_s);
  if (p < 0) {
    rtm_log_error("traces: output %d: the window T = %d x %g s = %.9g s is %.6f samples at "
                  "dt %g s, not a whole number; choose dt = T / P for a whole P",
                  m, fft_length, desc->input_dt_s, window_s, window_s / o->dt_s, o->dt_s);
    return RTM_ERR_INPUT;
  }
  if (p < 1 || p > RTM_TRACES_MAX_LENGTH) {
    rtm_log_error("traces: output %d: the window T = %.9g s is %lld samples at dt %g s; "
                  "it must be in [1, %d]",
                  m, window_s, p, o->dt_s, RTM_TRACES_MAX_LENGTH);
    return RTM_ERR_INPUT;
  }
  if (o->length > p) {
    rtm_log_error("traces: output %d: length %d exceeds the window T = %.9g s, which holds "
                  "%lld samples at dt %g s; raise fft_length (zero-padding in time)",
                  m, o->length, window_s, p, o->dt_s);
    return RTM_ERR_INPUT;
  }
  const double *b = o->band_hz;
  int band_on = b[0] != 0.0 || b[1] != 0.0 || b[2] != 0.0 || b[3] != 0.0;
  if (band_on) {
    for (int i = 0; i < 4; ++i)
      if (!(b[i] >= 0.0) || !isfinite(b[i])) {
        rtm_log_error("traces: output %d: band corner %d = %g Hz must be finite and >= 0", m, i + 1,
                      b[i]);
        return RTM_ERR_INPUT;
      }
    if (!(b[0] <= b[1] && b[1] <= b[2] && b[2] <= b[3] && b[0] < b[3])) {
      rtm_log_error("traces: output %d: band corners %g, %g, %g, %g Hz must satisfy "
                    "f1 <= f2 <= f3 <= f4 and f1 < f4",
                    m, b[0], b[1], b[2], b[3]);
      return RTM_ERR_INPUT;
    }
  }
  if (!isfinite(o->shift_s) || !isfinite(o->warp_origin_s)) {
    rtm_log_error("traces: output %d: shift %g s and warp origin %g s must be finite", m,
                  o->shift_s, o->warp_origin_s);
    return RTM_ERR_INPUT;
  }
  if (o->warp < RTM_TRACES_WARP_NONE || o->warp > RTM_TRACES_WARP_INVERSE) {
    rtm_log_error("traces: output %d: unknown warp %d (none, forward, inverse)", m, (int)o->warp);
    return RTM_ERR_INPUT;
  }
  if (o->warp != RTM_TRACES_WARP_NONE && (!(o->warp_dt_s > 0.0) || !isfinite(o->warp_dt_s))) {
    rtm_log_error("traces: output %d: the warp's dt %g s must be positive and finite", m,
                  o->warp_dt_s);
    return RTM_ERR_INPUT;
  }
  if (o->normalisation < RTM_TRACES_NORM_NONE || o->normalisation > RTM_TRACES_NORM_RMS) {
    rtm_log_error("traces: output %d: unknown normalisation %d (none, peak, rms)", m,
                  (int)o->normalisation);
    return RTM_ERR_INPUT;
  }
  *fft_size = p;
  return RTM_OK;
}

static int validate_desc(const rtm_traces_desc_t *desc, int *fft_length) {
  if (!desc->backend || !find_backend(desc->backend)) {
    rtm_log_error("traces: unknown backend '%s' (known: cpu%s)",
                  desc->backend ? desc->backend : "(null)",
#ifdef RTM3D_HAVE_CUDA
                  ", cuda"
#else
                  "; this build has no CUDA"
#endif
    );
    return RTM_ERR_CONFIG;
  }
  if (desc->pipeline != RTM_TRACES_GRAPH && desc->pipeline != RTM_TRACES_STREAMS) {
    rtm_log_error("traces: unknown pipeline %d (graph, streams)", (int)desc->pipeline);
    return RTM_ERR_CONFIG;
  }
  if (desc->n_inputs <= 0) {
    rtm_log_error("traces: %d input traces; at least 1 is needed", desc->n_inputs);
    return RTM_ERR_INPUT;
  }
  if (desc->input_length <= 0 || desc->input_length > RTM_TRACES_MAX_LENGTH) {
    rtm_log_error("traces: input length %d must be in [1, %d]", desc->input_length,
                  RTM_TRACES_MAX_LENGTH);
    return RTM_ERR_INPUT;
  }
  if (!(desc->input_dt_s > 0.0) || !isfinite(desc->input_dt_s)) {
    rtm_log_error("traces: input sample interval %g s must be positive and finite",
                  desc->input_dt_s);
    return RTM_ERR_INPUT;
  }
  int n = desc->fft_length ? desc->fft_length : desc->input_length;
  if (n < desc->input_length || n > RTM_TRACES_MAX_LENGTH) {
    rtm_log_error("traces: fft_length %d must be 0 or in [input length %d, %d]", desc->fft_length,
                  desc->input_length, RTM_TRACES_MAX_LENGTH);
    return RTM_ERR_INPUT;
  }
  if (desc->n_outputs <= 0 || !desc->outputs) {
    rtm_log_error("traces: %d output traces per input; at least 1 is needed", desc->n_outputs);
    return RTM_ERR_INPUT;
  }
  if ((long long)desc->n_inputs * desc->n_outputs > INT32_MAX) {
    rtm_log_error("traces: %d inputs x %d outputs is more than %d traces", desc->n_inputs,
                  desc->n_outputs, INT32_MAX);
    return RTM_ERR_NOMEM;
  }
  if (!(desc->taper_fraction >= 0.0 && desc->taper_fraction < 1.0)) {
    rtm_log_error("traces: taper_fraction %g must be in [0, 1) (0 = default 0.1)",
                  desc->taper_fraction);
    return RTM_ERR_INPUT;
  }
  if (desc->streams < 0 || desc->streams > 64) {
    rtm_log_error("traces: streams %d must be in [0, 64] (0 = default 16)", desc->streams);
    return RTM_ERR_INPUT;
  }
  *fft_length = n;
  return RTM_OK;
}

static size_t align_up(size_t n) {
  return (n + RTM_TRACES_ALIGN_ELEMS - 1) / RTM_TRACES_ALIGN_ELEMS * RTM_TRACES_ALIGN_ELEMS;
}

/* a * b + c in size_t, or SIZE_MAX on overflow. */
static size_t mul_add(size_t a, size_t b, size_t c) {
  if (b && a > (SIZE_MAX - c) / b) return SIZE_MAX;
  return a * b + c;
}

size_t rtm_traces_layout_bytes(const rtm_traces_plan_t *plan) {
  size_t total = 0;
  size_t terms[6] = {
      mul_add(mul_add((size_t)plan->desc.n_inputs, (size_t)plan->fft_length, 0), sizeof(float), 0),
      mul_add(plan->spectrum_in_elems, 2 * sizeof(float), 0),
      mul_add(plan->spectrum_out_elems, 2 * sizeof(float), 0),
      mul_add(plan->real_elems, sizeof(float), 0),
      mul_add(plan->gather_elems, sizeof(float), 0),
      mul_add((size_t)plan->n_traces, sizeof(rtm_traces_trace_t) + 4 * sizeof(double), 0)};
  for (int i = 0; i < 6; ++i) {
    if (terms[i] == SIZE_MAX || total > SIZE_MAX - terms[i]) return SIZE_MAX;
    total += terms[i];
  }
  return total;
}

/* Groups the traces by inverse FFT size and fills every offset (see traces_impl.h). The
 * gather is [input][output]; a group holds its traces in that order, contiguously. */
static int build_layout(rtm_traces_plan_t *plan, const long long *fft_size) {
  int status = RTM_OK;
  const rtm_traces_desc_t *d = &plan->desc;
  int M = d->n_outputs, N = plan->fft_length;
  int *group_of_output = NULL;
  plan->n_traces = d->n_inputs * M;
  plan->traces = calloc((size_t)plan->n_traces, sizeof *plan->traces);
  plan->groups = calloc((size_t)M, sizeof *plan->groups);
  group_of_output = calloc((size_t)M, sizeof *group_of_output);
  plan->peaks = calloc((size_t)plan->n_traces, sizeof(double));
  plan->rms = calloc((size_t)plan->n_traces, sizeof(double));
  if (!plan->traces || !plan->groups || !group_of_output || !plan->peaks || !plan->rms)
    RTM_FAIL(RTM_ERR_NOMEM, "traces: no host memory for the layout of %d traces", plan->n_traces);

  for (int m = 0; m < M; ++m) {
    int g = 0;
    while (g < plan->n_groups && plan->groups[g].fft_size != fft_size[m])
      ++g;
    if (g == plan->n_groups) plan->groups[plan->n_groups++].fft_size = (int)fft_size[m];
    group_of_output[m] = g;
    plan->groups[g].count += d->n_inputs;
  }
  size_t spectrum = 0, real = 0;
  for (int g = 0; g < plan->n_groups; ++g) {
    rtm_traces_group_t *gr = &plan->groups[g];
    gr->spectrum_offset = (long long)spectrum;
    gr->real_offset = (long long)real;
    spectrum = align_up(mul_add((size_t)gr->count, (size_t)(gr->fft_size / 2 + 1), spectrum));
    real = align_up(mul_add((size_t)gr->count, (size_t)gr->fft_size, real));
    if (spectrum >= SIZE_MAX / 16 || real >= SIZE_MAX / 16)
      RTM_FAIL(RTM_ERR_NOMEM, "traces: the inverse FFT buffers overflow the address space");
  }
  plan->spectrum_out_elems = spectrum;
  plan->real_elems = real;
  plan->spectrum_in_elems = mul_add((size_t)d->n_inputs, (size_t)(N / 2 + 1), 0);

  plan->gather_per_input = 0;
  for (int m = 0; m < M; ++m)
    plan->gather_per_input += (size_t)d->outputs[m].length;
  plan->gather_elems = mul_add((size_t)d->n_inputs, plan->gather_per_input, 0);

  int *slot = calloc((size_t)plan->n_groups, sizeof *slot);
  if (!slot) RTM_FAIL(RTM_ERR_NOMEM, "traces: no host memory for the layout");
  double taper = d->taper_fraction > 0.0 ? d->taper_fraction : 0.1;
  double window_s = N * d->input_dt_s;
  double nyquist_in = 0.5 / d->input_dt_s;
  for (int i = 0; i < d->n_inputs; ++i) {
    size_t prefix = 0;
    for (int m = 0; m < M; ++m) {
      const rtm_traces_output_t *o = &d->outputs[m];
      int g = group_of_output[m];
      const rtm_traces_group_t *gr = &plan->groups[g];
      rtm_traces_trace_t *t = &plan->traces[(size_t)i * M + m];
      int s = slot[g]++;
      t->spectrum_in_offset = (long long)i * (N / 2 + 1);
      t->spectrum_out_offset = gr->spectrum_offset + (long long)s * (gr->fft_size / 2 + 1);
      t->real_offset = gr->real_offset + (long long)s * gr->fft_size;
      t->gather_offset = (long long)(i * plan->gather_per_input + prefix);
      prefix += (size_t)o->length;
      t->bins_in = N / 2 + 1;
      t->fft_in = N;
      t->bins_out = gr->fft_size / 2 + 1;
      t->fft_size = gr->fft_size;
      t->length = o->length;
      t->group = g;
      t->df_hz = 1.0 / window_s;
      /* The output's Nyquist from its FFT size, so that bin P/2 sits exactly on it. */
      double nyquist_out = 0.5 * gr->fft_size / window_s;
      t->cutoff_hz = nyquist_in < nyquist_out ? nyquist_in : nyquist_out;
      t->taper_start_hz = (1.0 - taper) * t->cutoff_hz;
      t->scale = 1.0 / N;
      t->turn = 2.0 * RTM_TRACES_PI * 0.5 * (d->input_length - 1) / N;
      t->turn_cos = cos(t->turn);
      t->turn_sin = sin(t->turn);
    }
  }
  free(slot);
  free(group_of_output);
  return RTM_OK;
fail:
  free(group_of_output);
  return status;
}

/* Copies the per-output options into every trace of the layout. */
static void apply_options(rtm_traces_plan_t *plan) {
  int M = plan->desc.n_outputs;
  for (int o = 0; o < plan->n_traces; ++o) {
    const rtm_traces_output_t *out = &plan->outputs[o % M];
    rtm_traces_trace_t *t = &plan->traces[o];
    t->derivative = out->derivative != 0;
    t->normalisation = (int)out->normalisation;
    t->band_on = out->band_hz[0] != 0.0 || out->band_hz[1] != 0.0 || out->band_hz[2] != 0.0 ||
                 out->band_hz[3] != 0.0;
    for (int i = 0; i < 4; ++i)
      t->band_hz[i] = out->band_hz[i];
    t->shift_s = out->shift_s;
    t->warp = (int)out->warp;
    t->warp_dt_s = out->warp_dt_s;
    t->warp_origin_s = out->warp_origin_s;
  }
}

static void warn_bandwidth(const rtm_traces_plan_t *plan) {
  const rtm_traces_desc_t *d = &plan->desc;
  double nyquist_in = 0.5 / d->input_dt_s, worst = 0.0;
  int count = 0, first = -1;
  for (int m = 0; m < d->n_outputs; ++m) {
    double ratio = (0.5 / d->outputs[m].dt_s) / nyquist_in;
    if (ratio > RTM_TRACES_NYQUIST_WARN_RATIO) {
      if (first < 0) first = m;
      ++count;
      if (ratio > worst) worst = ratio;
    }
  }
  if (count)
    rtm_log_warning("traces: %d of %d outputs (first: output %d) have a Nyquist frequency up "
                    "to %.3gx the input's %g Hz: resampling cannot invent bandwidth, they hold "
                    "nothing above %g Hz",
                    count, d->n_outputs, first, worst, nyquist_in, nyquist_in);
}

void rtm_traces_plan_destroy(rtm_traces_plan_t *plan) {
  if (!plan) return;
  if (plan->backend && plan->state) plan->backend->destroy(plan);
  free(plan->outputs);
  free(plan->traces);
  free(plan->groups);
  free(plan->peaks);
  free(plan->rms);
  free(plan);
}

int rtm_traces_plan_create(const rtm_traces_desc_t *desc, rtm_traces_plan_t **out) {
  int status = RTM_OK, fft_length = 0;
  long long *fft_size = NULL;
  rtm_traces_plan_t *plan = NULL;
  *out = NULL;
  RTM_TRY(validate_desc(desc, &fft_length));
  if (desc->device_io &&
      (strcmp(desc->backend, "cuda") != 0 || desc->pipeline != RTM_TRACES_STREAMS))
    RTM_FAIL(RTM_ERR_INPUT, "traces: device_io plans run on cuda's streams pipeline, not %s's %s",
             desc->backend, rtm_traces_pipeline_name(desc->pipeline));
  fft_size = calloc((size_t)desc->n_outputs, sizeof *fft_size);
  plan = calloc(1, sizeof *plan);
  if (!fft_size || !plan) RTM_FAIL(RTM_ERR_NOMEM, "traces: no host memory for a plan");
  for (int m = 0; m < desc->n_outputs; ++m)
    RTM_TRY(validate_output(desc, fft_length, m, &fft_size[m]));

  plan->desc = *desc;
  plan->outputs = malloc((size_t)desc->n_outputs * sizeof *plan->outputs);
  if (!plan->outputs) RTM_FAIL(RTM_ERR_NOMEM, "traces: no host memory for a plan");
  memcpy(plan->outputs, desc->outputs, (size_t)desc->n_outputs * sizeof *plan->outputs);
  plan->desc.outputs = plan->outputs;
  snprintf(plan->backend_name, sizeof plan->backend_name, "%s", desc->backend);
  plan->desc.backend = plan->backend_name;
  plan->fft_length = fft_length;
  plan->input_pitch = fft_length; /* a backend that pads on the device narrows it */
  plan->backend = find_backend(desc->backend);
  warn_bandwidth(plan);
  RTM_TRY(build_layout(plan, fft_size));
  apply_options(plan);
  RTM_TRY(plan->backend->create(plan));
  free(fft_size);
  *out = plan;
  return RTM_OK;
fail:
  free(fft_size);
  rtm_traces_plan_destroy(plan);
  return status;
}

/* Same backend, pipeline, counts and output sizes: the layout and the FFT plans hold. */
static int same_shape(const rtm_traces_plan_t *plan, const rtm_traces_desc_t *d) {
  const rtm_traces_desc_t *p = &plan->desc;
  int n = d->fft_length ? d->fft_length : d->input_length;
  if (!d->backend || strcmp(p->backend, d->backend) != 0 || p->pipeline != d->pipeline ||
      p->n_inputs != d->n_inputs || p->input_length != d->input_length ||
      p->input_dt_s != d->input_dt_s || plan->fft_length != n || p->n_outputs != d->n_outputs ||
      p->taper_fraction != d->taper_fraction || p->streams != d->streams ||
      p->device != d->device || p->device_io != d->device_io || !d->outputs)
    return 0;
  for (int m = 0; m < d->n_outputs; ++m)
    if (p->outputs[m].length != d->outputs[m].length || p->outputs[m].dt_s != d->outputs[m].dt_s)
      return 0;
  return 1;
}

int rtm_traces_plan_update(rtm_traces_plan_t **plan, const rtm_traces_desc_t *desc) {
  int status = RTM_OK, fft_length = 0;
  long long fft_size = 0;
  if (!*plan || !same_shape(*plan, desc)) {
    rtm_traces_plan_t *fresh = NULL;
    RTM_TRY(rtm_traces_plan_create(desc, &fresh));
    rtm_traces_plan_destroy(*plan);
    *plan = fresh;
    return RTM_OK;
  }
  RTM_TRY(validate_desc(desc, &fft_length));
  for (int m = 0; m < desc->n_outputs; ++m)
    RTM_TRY(validate_output(desc, fft_length, m, &fft_size));
  memcpy((*plan)->outputs, desc->outputs, (size_t)desc->n_outputs * sizeof *desc->outputs);
  (*plan)->desc.ledger = desc->ledger;
  apply_options(*plan);
  RTM_TRY((*plan)->backend->update_options(*plan));
fail:
  return status;
}

float *rtm_traces_input_buffer(rtm_traces_plan_t *plan, size_t *pitch) {
  if (pitch) *pitch = (size_t)plan->input_pitch;
  return plan->backend->input_buffer(plan);
}

const float *rtm_traces_result(const rtm_traces_plan_t *plan) {
  return plan->backend->result(plan);
}

int rtm_traces_run(rtm_traces_plan_t *plan, const float *inputs, float *gather) {
  int status = RTM_OK;
  if (plan->desc.device_io)
    RTM_FAIL(RTM_ERR_INPUT,
             "traces: a device_io plan runs on device memory (rtm_traces_run_device)");
  if (inputs) {
    float *staging = plan->backend->input_buffer(plan);
    for (int i = 0; i < plan->desc.n_inputs; ++i)
      memcpy(staging + (size_t)i * plan->input_pitch, inputs + (size_t)i * plan->desc.input_length,
             (size_t)plan->desc.input_length * sizeof(float));
  }
  RTM_TRY(plan->backend->run(plan));
  if (gather) memcpy(gather, plan->backend->result(plan), plan->gather_elems * sizeof(float));
fail:
  return status;
}

size_t rtm_traces_gather_size(const rtm_traces_plan_t *plan) {
  return plan->gather_elems;
}

size_t rtm_traces_gather_offset(const rtm_traces_plan_t *plan, int input, int output) {
  return (size_t)plan->traces[(size_t)input * plan->desc.n_outputs + output].gather_offset;
}

int rtm_traces_stats(const rtm_traces_plan_t *plan, double *peaks, double *rms) {
  size_t bytes = (size_t)plan->n_traces * sizeof(double);
  if (peaks) memcpy(peaks, plan->peaks, bytes);
  if (rms) memcpy(rms, plan->rms, bytes);
  return RTM_OK;
}

int rtm_traces_graph_node_count(const rtm_traces_plan_t *plan, size_t *nodes, size_t *expected) {
  *nodes = 0;
  *expected = 0;
  if (!plan->backend->node_count) {
    rtm_log_error("traces: the %s backend builds no graph", plan->backend->name);
    return RTM_ERR_UNSUPPORTED;
  }
  return plan->backend->node_count(plan, nodes, expected);
}

int rtm_traces_fft_groups(const rtm_traces_plan_t *plan) {
  return plan->n_groups;
}

void rtm_traces_describe(const rtm_traces_plan_t *plan, char *text, size_t size) {
  plan->backend->describe(plan, text, size);
}

static int is_smooth(int n) {
  static const int primes[4] = {2, 3, 5, 7};
  for (int i = 0; i < 4; ++i)
    while (n % primes[i] == 0)
      n /= primes[i];
  return n == 1;
}

static int length_taken(const int *lengths, int count, int n) {
  for (int i = 0; i < count; ++i)
    if (lengths[i] == n) return 1;
  return 0;
}

int rtm_traces_spread_lengths(int count, int min_length, int max_length, int *lengths) {
  if (count <= 0 || min_length <= 0 || max_length < min_length ||
      max_length > RTM_TRACES_MAX_LENGTH || (long long)max_length - min_length + 1 < count) {
    rtm_log_error("traces: cannot spread %d distinct lengths over [%d, %d]", count, min_length,
                  max_length);
    return RTM_ERR_INPUT;
  }
  for (int m = 0; m < count; ++m) {
    double t = count > 1 ? (double)m / (count - 1) : 0.0;
    int target = (int)floor(min_length * pow((double)max_length / min_length, t) + 0.5);
    int chosen = 0;
    /* the nearest free smooth size within 3% of the target, else the nearest free size */
    for (int pass = 0; pass < 2 && !chosen; ++pass) {
      int reach = pass == 0 ? target / 32 + 1 : max_length - min_length;
      for (int step = 0; step <= reach && !chosen; ++step) {
        int candidates[2] = {target - step, target + step};
        for (int c = 0; c < 2 && !chosen; ++c) {
          int n = candidates[c];
          if (n < min_length || n > max_length || length_taken(lengths, m, n)) continue;
          if (pass == 1 || is_smooth(n)) chosen = n;
        }
      }
    }
    lengths[m] = chosen;
  }
  return RTM_OK;
}

/* Smallest window T = N dt_in = P dt_out with N >= n_in and P >= n_out. Within any q
 * consecutive P one is a multiple of q, so the search finds every ratio p/q, q <= 4096. */
static int find_common_window(int n_in, double dt_in, int n_out, double dt_out, int *fft_length,
                              int *fft_size) {
  double ratio = dt_out / dt_in;
  double first = ceil((double)n_in / ratio - 1e-9);
  long long p0 = first > n_out ? (long long)first : n_out;
  for (long long p = p0; p < p0 + 4096 && p <= RTM_TRACES_MAX_LENGTH; ++p) {
    double n = (double)p * ratio;
    double rounded = floor(n + 0.5);
    if (fabs(n - rounded) <= WINDOW_TOLERANCE_SAMPLES && rounded >= n_in &&
        rounded <= RTM_TRACES_MAX_LENGTH) {
      *fft_length = (int)rounded;
      *fft_size = (int)p;
      return 1;
    }
  }
  return 0;
}

int rtm_traces_resample_possible(int n_in, double dt_in, int n_out, double dt_out) {
  int fft_length = 0, fft_size = 0;
  return n_in > 0 && n_out > 0 && dt_in > 0.0 && dt_out > 0.0 && isfinite(dt_in) &&
         isfinite(dt_out) && find_common_window(n_in, dt_in, n_out, dt_out, &fft_length, &fft_size);
}

static int common_window(int n_in, double dt_in, int n_out, double dt_out, int *fft_length,
                         int *fft_size) {
  double ratio = dt_out / dt_in;
  if (find_common_window(n_in, dt_in, n_out, dt_out, fft_length, fft_size)) return RTM_OK;
  rtm_log_error("traces: resampling from dt %g s to %g s: their ratio %.12g is not a ratio "
                "of integers p/q with q <= 4096, so no window holds a whole number of "
                "samples at both; choose the output interval as such a multiple of the input's",
                dt_in, dt_out, ratio);
  return RTM_ERR_UNSUPPORTED;
}

int rtm_traces_run_device(rtm_traces_plan_t *plan, const float *in, size_t in_pitch, int rows,
                          float *out, size_t out_pitch) {
  const rtm_traces_desc_t *d = &plan->desc;
  if (!plan->backend->run_device || d->n_outputs != 1 || rows < 0 || rows > d->n_inputs ||
      in_pitch < (size_t)d->input_length || out_pitch < (size_t)d->outputs[0].length ||
      d->outputs[0].normalisation != RTM_TRACES_NORM_NONE || plan->n_groups != 1) {
    rtm_log_error("traces: a %s plan of %d inputs x %d outputs cannot run %d rows in device "
                  "memory (one output a input, not normalised, on a GPU)",
                  plan->backend_name, d->n_inputs, d->n_outputs, rows);
    return RTM_ERR_UNSUPPORTED;
  }
  return rows ? plan->backend->run_device(plan, in, in_pitch, rows, out, out_pitch) : RTM_OK;
}

static int is_smooth(int n);

int rtm_traces_warp_fft_length(int n, int padding) {
  int fft_length = padding * n, power = 1;
  while (power < fft_length)
    power *= 2;
  if (power <= fft_length + fft_length / 4) return power;
  while (!is_smooth(fft_length))
    ++fft_length;
  return fft_length;
}

/* The dispersion warp's plan (rtm_traces_dispersion): one output a trace, batches of
 * *batch traces, the inputs padded from `padding` n (8 for rtm_traces_dispersion; the cubic
 * interpolation about the trace's middle: rtm_traces_input_at) to the next power of two when
 * it is at most 25% longer, else
 * to the next 2-3-5-7-smooth length. On an H100 a batch of 2080 R2C and
 * C2R transforms took 2.43 ms at 16 x 2001 = 32016 = 2^4 3 23 29, 0.84 ms at 32256 = 2^9 3^2 7
 * and 0.53 ms at 32768 (run/experiments/cufft_jit.sh). device_io: run on device memory. */
static int dispersion_plan(const char *backend, rtm_traces_warp_t warp, int count, int n, double dt,
                           int padding, int device_io, rtm_traces_plan_t **plan, int *batch) {
  int status = RTM_OK;
  /* floats a run at most */
  enum { PADDED_FLOATS_A_RUN = 1 << 26 };
  if (n <= 0 || count <= 0 || padding < 1 || (long long)n * padding > RTM_TRACES_MAX_LENGTH / 2)
    RTM_FAIL(RTM_ERR_INPUT, "traces: a dispersion warp of %d traces of %d samples", count, n);
  const int fft_length = rtm_traces_warp_fft_length(n, padding);
  const rtm_traces_output_t output = {.length = n,
                                      .dt_s = dt,
                                      .normalisation = RTM_TRACES_NORM_NONE,
                                      .warp = warp,
                                      .warp_dt_s = dt};
  *batch = PADDED_FLOATS_A_RUN / fft_length;
  if (*batch < 1) *batch = 1;
  if (*batch > count) *batch = count;
  const rtm_traces_desc_t desc = {.backend = backend,
                                  .device = RTM_TRACES_CURRENT_DEVICE,
                                  .pipeline = RTM_TRACES_STREAMS,
                                  .n_inputs = *batch,
                                  .input_length = n,
                                  .input_dt_s = dt,
                                  .fft_length = fft_length,
                                  .outputs = &output,
                                  .n_outputs = 1,
                                  .device_io = device_io};
  RTM_TRY(rtm_traces_plan_create(&desc, plan)); /* one plan for every batch */
fail:
  return status;
}

int rtm_traces_dispersion_device(rtm_traces_warp_t warp, int count, int n, size_t pitch, double dt,
                                 float *traces) {
  return rtm_traces_dispersion_device_padded(warp, count, n, pitch, dt, RTM_TRACES_WARP_PADDING,
                                             traces);
}

int rtm_traces_dispersion_device_padded(rtm_traces_warp_t warp, int count, int n, size_t pitch,
                                        double dt, int padding, float *traces) {
  int status = RTM_OK, batch = 0;
  rtm_traces_plan_t *plan = NULL;
  if (warp == RTM_TRACES_WARP_NONE || count == 0) return RTM_OK;
  RTM_TRY(dispersion_plan("cuda", warp, count, n, dt, padding, 1, &plan, &batch));
  for (int first = 0; first < count; first += batch) {
    float *at = traces + (size_t)first * pitch;
    const int rows = count - first < batch ? count - first : batch;
    RTM_TRY(rtm_traces_run_device(plan, at, pitch, rows, at, pitch));
  }
fail:
  rtm_traces_plan_destroy(plan);
  return status;
}

#ifndef RTM3D_HAVE_CUDA
int rtm_traces_current_device(void) {
  return -1;
}

int rtm_traces_use_device(int device) {
  (void)device;
  return RTM_OK;
}
#endif

int rtm_traces_dispersion(const char *backend, rtm_traces_warp_t warp, int count, int n, double dt,
                          float *traces) {
  return rtm_traces_dispersion_padded(backend, warp, count, n, dt, RTM_TRACES_WARP_PADDING, traces);
}

int rtm_traces_dispersion_padded(const char *backend, rtm_traces_warp_t warp, int count, int n,
                                 double dt, int padding, float *traces) {
  int status = RTM_OK, batch = 0;
  rtm_traces_plan_t *plan = NULL;
  float *last = NULL; /* a last, partial batch, padded with silent traces */
  if (warp == RTM_TRACES_WARP_NONE || count == 0) return RTM_OK;
  RTM_TRY(dispersion_plan(backend, warp, count, n, dt, padding, 0, &plan, &batch));
  for (int first = 0; first < count; first += batch) {
    float *at = traces + (size_t)first * (size_t)n;
    const int inputs = count - first < batch ? count - first : batch;
    if (inputs == batch) {
      RTM_TRY(rtm_traces_run(plan, at, at));
      continue;
    }
    last = calloc((size_t)batch * (size_t)n, sizeof *last);
    if (!last) RTM_FAIL(RTM_ERR_NOMEM, "traces: out of memory for the warp's last batch");
    memcpy(last, at, (size_t)inputs * (size_t)n * sizeof *last);
    RTM_TRY(rtm_traces_run(plan, last, last));
    memcpy(at, last, (size_t)inputs * (size_t)n * sizeof *last);
  }
fail:
  free(last);
  rtm_traces_plan_destroy(plan);
  return status;
}

int rtm_traces_resample(const char *backend, int count, int n_in, double dt_in, const float *in,
                        int n_out, double dt_out, float *out) {
  int status = RTM_OK, fft_length = 0, fft_size = 0;
  rtm_traces_plan_t *plan = NULL;
  if (n_in <= 0 || n_out <= 0 || count <= 0 || !(dt_in > 0.0) || !(dt_out > 0.0) ||
      !isfinite(dt_in) || !isfinite(dt_out))
    RTM_FAIL(RTM_ERR_INPUT,
             "traces: resampling %d traces of %d samples at %g s to %d samples "
             "at %g s: counts, lengths and intervals must be positive",
             count, n_in, dt_in, n_out, dt_out);
  RTM_TRY(common_window(n_in, dt_in, n_out, dt_out, &fft_length, &fft_size));
  rtm_traces_output_t output = {.length = n_out,
                                .dt_s = fft_length * dt_in / fft_size,
                                .normalisation = RTM_TRACES_NORM_NONE};
  rtm_traces_desc_t desc = {.backend = backend,
                            .device = RTM_TRACES_CURRENT_DEVICE,
                            .pipeline = RTM_TRACES_STREAMS,
                            .n_inputs = count,
                            .input_length = n_in,
                            .input_dt_s = dt_in,
                            .fft_length = fft_length,
                            .outputs = &output,
                            .n_outputs = 1};
  RTM_TRY(rtm_traces_plan_create(&desc, &plan));
  RTM_TRY(rtm_traces_run(plan, in, out));
fail:
  rtm_traces_plan_destroy(plan);
  return status;
}
