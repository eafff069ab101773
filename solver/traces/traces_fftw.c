/* traces_fftw.c - the trace pipeline on the CPU with FFTW (fftw3f): the reference of the
 * CUDA pipeline and the path of the cpu backend. Same stages, same layout, same factor per
 * bin (traces_impl.h); plain loops written for clarity. */
#define _POSIX_C_SOURCE 200809L
#include <fftw3.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rtm_status.h"
#include "traces_impl.h"

typedef struct {
  rtm_allocation_t input;        /* float [n_inputs][fft_length], zero tails */
  rtm_allocation_t spectrum_in;  /* complex [n_inputs][fft_length / 2 + 1] */
  rtm_allocation_t spectrum_out; /* complex, groups of [count][P / 2 + 1] */
  rtm_allocation_t real;         /* float, groups of [count][P] */
  rtm_allocation_t gather;       /* float [n_inputs][sum of lengths] */
  fftwf_plan forward;
  fftwf_plan *inverse; /* [n_groups] */
} fftw_state_t;

/* FFTW's planner (making and destroying plans) is not thread-safe, and two threads may
 * plan at once: a migration's I/O thread warps the next shot's gather while the stepping
 * thread warps the shot's wavelet. Plans are made and destroyed under this lock; running
 * them is safe. */
static pthread_mutex_t planner = PTHREAD_MUTEX_INITIALIZER;

static void fftw_destroy(rtm_traces_plan_t *plan) {
  fftw_state_t *s = plan->state;
  if (!s) return;
  pthread_mutex_lock(&planner);
  if (s->inverse) {
    for (int g = 0; g < plan->n_groups; ++g)
      if (s->inverse[g]) fftwf_destroy_plan(s->inverse[g]);
    free(s->inverse);
  }
  if (s->forward) fftwf_destroy_plan(s->forward);
  pthread_mutex_unlock(&planner);
  rtm_mem_free(&s->gather);
  rtm_mem_free(&s->real);
  rtm_mem_free(&s->spectrum_out);
  rtm_mem_free(&s->spectrum_in);
  rtm_mem_free(&s->input);
  free(s);
  plan->state = NULL;
}

/* Refuses a layout larger than the machine's physical memory before allocating it (an
 * overcommitting kernel would accept it and fail later, somewhere else). */
static int check_host_memory(const rtm_traces_plan_t *plan) {
  size_t needed = rtm_traces_layout_bytes(plan);
  long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);
  double physical = pages > 0 && page_size > 0 ? (double)pages * (double)page_size : 0.0;
  if (needed == (size_t)-1 || (physical > 0.0 && (double)needed > physical)) {
    rtm_log_error("traces: %d inputs x %d samples to %d outputs need %.3g GiB of host memory "
                  "(inputs, spectra, inverse FFTs, gather); this machine has %.3g GiB",
                  plan->desc.n_inputs, plan->desc.input_length, plan->desc.n_outputs,
                  needed == (size_t)-1 ? INFINITY : needed / 1073741824.0, physical / 1073741824.0);
    return RTM_ERR_NOMEM;
  }
  return RTM_OK;
}

static int fftw_create(rtm_traces_plan_t *plan) {
  int status = RTM_OK;
  const rtm_traces_desc_t *d = &plan->desc;
  int N = plan->fft_length;
  RTM_TRY(check_host_memory(plan));
  fftw_state_t *s = calloc(1, sizeof *s);
  if (!s) RTM_FAIL(RTM_ERR_NOMEM, "traces: no host memory for the cpu state");
  plan->state = s;
  s->inverse = calloc((size_t)plan->n_groups, sizeof *s->inverse);
  if (!s->inverse) RTM_FAIL(RTM_ERR_NOMEM, "traces: no host memory for the cpu state");

  rtm_mem_ledger_t *ledger = d->ledger;
  RTM_TRY(rtm_mem_alloc("host", (size_t)d->n_inputs * N * sizeof(float), "traces input", NULL,
                        ledger, &s->input));
  RTM_TRY(rtm_mem_alloc("host", plan->spectrum_in_elems * sizeof(fftwf_complex),
                        "traces input spectra", NULL, ledger, &s->spectrum_in));
  RTM_TRY(rtm_mem_alloc("host", plan->spectrum_out_elems * sizeof(fftwf_complex),
                        "traces output spectra", NULL, ledger, &s->spectrum_out));
  RTM_TRY(rtm_mem_alloc("host", plan->real_elems * sizeof(float), "traces inverse FFTs", NULL,
                        ledger, &s->real));
  RTM_TRY(rtm_mem_alloc("host", plan->gather_elems * sizeof(float), "traces gather", NULL, ledger,
                        &s->gather));

  /* FFTW_ESTIMATE: planning leaves the arrays alone and takes no measurable time. */
  pthread_mutex_lock(&planner);
  s->forward = fftwf_plan_many_dft_r2c(1, &N, d->n_inputs, s->input.ptr, NULL, 1, N,
                                       s->spectrum_in.ptr, NULL, 1, N / 2 + 1, FFTW_ESTIMATE);
  for (int g = 0; s->forward && g < plan->n_groups; ++g) {
    const rtm_traces_group_t *gr = &plan->groups[g];
    int P = gr->fft_size;
    fftwf_complex *in = (fftwf_complex *)s->spectrum_out.ptr + gr->spectrum_offset;
    float *out = (float *)s->real.ptr + gr->real_offset;
    s->inverse[g] = fftwf_plan_many_dft_c2r(1, &P, gr->count, in, NULL, 1, P / 2 + 1, out, NULL, 1,
                                            P, FFTW_ESTIMATE | FFTW_DESTROY_INPUT);
  }
  pthread_mutex_unlock(&planner);
  if (!s->forward)
    RTM_FAIL(RTM_ERR_INTERNAL, "traces: FFTW made no r2c plan of size %d x %d", N, d->n_inputs);
  for (int g = 0; g < plan->n_groups; ++g)
    if (!s->inverse[g])
      RTM_FAIL(RTM_ERR_INTERNAL, "traces: FFTW made no c2r plan of size %d x %d",
               plan->groups[g].fft_size, plan->groups[g].count);
  return RTM_OK;
fail:
  fftw_destroy(plan);
  return status;
}

static int fftw_update_options(rtm_traces_plan_t *plan) {
  (void)plan; /* the loops read plan->traces each run */
  return RTM_OK;
}

static float *fftw_input_buffer(rtm_traces_plan_t *plan) {
  return ((fftw_state_t *)plan->state)->input.ptr;
}

static const float *fftw_result(const rtm_traces_plan_t *plan) {
  return ((const fftw_state_t *)plan->state)->gather.ptr;
}

static int fftw_run(rtm_traces_plan_t *plan) {
  fftw_state_t *s = plan->state;
  const fftwf_complex *spectrum_in = s->spectrum_in.ptr;
  fftwf_complex *spectrum_out = s->spectrum_out.ptr;
  const float *real = s->real.ptr;
  float *gather = s->gather.ptr;

  fftwf_execute(s->forward);
  for (int o = 0; o < plan->n_traces; ++o) {
    const rtm_traces_trace_t *t = &plan->traces[o];
    const fftwf_complex *x = spectrum_in + t->spectrum_in_offset;
    fftwf_complex *y = spectrum_out + t->spectrum_out_offset;
    for (int k = 0; k < t->bins_out; ++k) {
      double re = 0.0, im = 0.0, xr = 0.0, xi = 0.0;
      if (k < t->bins_in) rtm_traces_bin_factor(t, k, &re, &im);
      rtm_traces_input_at(t, (const float *)x, k, &xr, &xi);
      y[k][0] = (float)(xr * re - xi * im);
      y[k][1] = (float)(xr * im + xi * re);
    }
  }
  for (int g = 0; g < plan->n_groups; ++g)
    fftwf_execute(s->inverse[g]);
  for (int o = 0; o < plan->n_traces; ++o) {
    const rtm_traces_trace_t *t = &plan->traces[o];
    const float *y = real + t->real_offset;
    double peak = 0.0, energy = 0.0;
    for (int j = 0; j < t->length; ++j) {
      double v = y[j];
      if (fabs(v) > peak) peak = fabs(v);
      energy += v * v;
    }
    double rms = sqrt(energy / t->length);
    float scale = (float)(1.0 / rtm_traces_norm_divisor(t->normalisation, peak, rms));
    float *out = gather + t->gather_offset;
    for (int j = 0; j < t->length; ++j)
      out[j] = y[j] * scale;
    plan->peaks[o] = peak;
    plan->rms[o] = rms;
  }
  return RTM_OK;
}

static void fftw_describe(const rtm_traces_plan_t *plan, char *text, size_t size) {
  snprintf(text, size,
           "cpu (FFTW %s): %d inputs x %d samples (fft %d), %d outputs each, "
           "%d inverse FFT sizes",
           fftwf_version, plan->desc.n_inputs, plan->desc.input_length, plan->fft_length,
           plan->desc.n_outputs, plan->n_groups);
}

const rtm_traces_backend_t rtm_traces_fftw = {
    .name = "cpu",
    .create = fftw_create,
    .update_options = fftw_update_options,
    .input_buffer = fftw_input_buffer,
    .run = fftw_run,
    .result = fftw_result,
    .node_count = NULL,
    .describe = fftw_describe,
    .destroy = fftw_destroy,
};
