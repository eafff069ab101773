/* The trace pipeline on the cpu backend (FFTW): resampling against analytic signals,
 * derivative, shift, band-pass, statistics and normalisation, the resampling convenience,
 * option updates, and the refusals of bad input. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "rtm_test_capture.h"

#include "rtm_status.h"
#include "rtm_test_main.h"
#include "rtm_physics.h"
#include "rtm_traces.h"
#include "traces_test_util.h"

/* Float FFTs of a few thousand points round to about 1e-7 relative; the 1e-5 bound
 * leaves room for that and nothing else: a wrong bin, scale, sign or taper is far above it. */
#define PERIODIC_TOLERANCE 1e-5
/* The Ricker wavelet is not band-limited; its spectrum beyond the cut-off tapers is below
 * 1e-4 of the peak in these cases, so 1e-3 holds with margin (the bound). */
#define RICKER_TOLERANCE 1e-3

static rtm_traces_desc_t cpu_desc(int n_inputs, int length, double dt,
                                  const rtm_traces_output_t *outputs, int n_outputs) {
  return tt_desc("cpu", RTM_TRACES_STREAMS, n_inputs, length, dt, 0, outputs, n_outputs);
}

/* The value an output should hold at time t: the signal, evaluated as the output asks. */
typedef double (*answer_t)(const void *signal, double time_s, const rtm_traces_output_t *output);

/* Output m of input i in the plan's gather against `answer` at the output's sample times,
 * over samples [first, last). */
static void check_output(const rtm_traces_plan_t *plan, const float *gather, int i, int m,
                         const rtm_traces_output_t *o, answer_t answer, const void *signal,
                         int first, int last, double tolerance, const char *what) {
  double *want = calloc((size_t)o->length, sizeof *want);
  assert_non_null(want);
  for (int j = first; j < last; ++j)
    want[j] = answer(signal, j * o->dt_s, o);
  tt_assert_rel_l2(gather + rtm_traces_gather_offset(plan, i, m), want, first, last, tolerance,
                   what);
  free(want);
}

/* Tones (tt_tones_t), differentiated and shifted as the output asks. */
static double tones_answer(const void *tones, double time_s, const rtm_traces_output_t *o) {
  return tt_tones_at(tones, time_s, o->derivative, o->shift_s);
}

typedef struct {
  double peak_hz, delay_s;
} wavelet_t;

/* A Ricker wavelet (wavelet_t), for outputs without options. */
static double ricker_answer(const void *signal, double time_s, const rtm_traces_output_t *o) {
  const wavelet_t *w = signal;
  return tt_ricker(time_s, w->peak_hz, w->delay_s);
}

/* Runs a plan and compares every output of every input with tones evaluated at its own
 * sample times (derivative and shift as the output asks), over all its samples. */
static void check_tones(rtm_traces_plan_t *plan, const rtm_traces_desc_t *d,
                        const tt_tones_t *tones, const double *weights) {
  size_t gather_n = rtm_traces_gather_size(plan);
  float *input = malloc((size_t)d->n_inputs * d->input_length * sizeof *input);
  float *gather = malloc(gather_n * sizeof *gather);
  assert_non_null(input);
  assert_non_null(gather);
  for (int i = 0; i < d->n_inputs; ++i)
    for (int j = 0; j < d->input_length; ++j)
      input[(size_t)i * d->input_length + j] =
          (float)tt_tones_at(&tones[i], j * d->input_dt_s, 0, 0.0);
  assert_int_equal(rtm_traces_run(plan, input, gather), RTM_OK);
  for (int i = 0; i < d->n_inputs; ++i) {
    for (int m = 0; m < d->n_outputs; ++m) {
      const rtm_traces_output_t *o = &d->outputs[m];
      tt_tones_t want_tones = tones[i];
      if (weights)
        for (int k = 0; k < want_tones.count; ++k)
          want_tones.amplitude[k] *= weights[k];
      char what[96];
      snprintf(what, sizeof what, "input %d output %d (L %d, dt %.6g s)", i, m, o->length, o->dt_s);
      check_output(plan, gather, i, m, o, tones_answer, &want_tones, 0, o->length,
                   PERIODIC_TOLERANCE, what);
    }
  }
  free(gather);
  free(input);
}

/* Whole cycles in a 1 s window, tones up to 150 Hz: below the 180 Hz start of the cut-off
 * taper of the coarsest output (Nyquist 200 Hz). Five outputs: down- and up-sampling, an
 * odd and a non-power-of-two size, one truncated in time (1200 of 1600 samples). */
static void test_periodic_resampled_to_five_outputs(void **state) {
  (void)state;
  rtm_test_rng_t rng = rtm_test_seed(__func__);
  rtm_traces_output_t out[5] = {{.length = 400, .dt_s = 1.0 / 400},
                                {.length = 500, .dt_s = 1.0 / 500},
                                {.length = 750, .dt_s = 1.0 / 750},
                                {.length = 1200, .dt_s = 1.0 / 1600},
                                {.length = 3000, .dt_s = 1.0 / 3000}};
  rtm_traces_desc_t d = cpu_desc(3, 1000, 1e-3, out, 5);
  tt_tones_t tones[3];
  for (int i = 0; i < 3; ++i)
    tones[i] = tt_random_tones(&rng, 4, 1.0, 150.0);
  rtm_traces_plan_t *plan = NULL;
  assert_int_equal(rtm_traces_plan_create(&d, &plan), RTM_OK);
  assert_int_equal(rtm_traces_fft_groups(plan), 5);
  check_tones(plan, &d, tones, NULL);
  rtm_traces_plan_destroy(plan);
}

/* A Ricker wavelet (not band-limited, not periodic) resampled up and down, compared away
 * from the window's ends; then again with the input zero-padded in time to twice its
 * length, the outputs keeping only part of the longer window. */
static void test_ricker_resampled(void **state) {
  (void)state;
  rtm_test_rng_t rng = rtm_test_seed(__func__);
  const double f_peak = 25.0, dt_in = 4e-3;
  const int n_in = 256;
  const wavelet_t wavelet = {f_peak, rtm_test_uniform(&rng, 0.3, 0.7)};
  rtm_traces_output_t out[4] = {{.length = 1024, .dt_s = 1e-3},
                                {.length = 2048, .dt_s = 0.5e-3},
                                {.length = 512, .dt_s = 2e-3},
                                {.length = 320, .dt_s = 3.2e-3}};
  rtm_traces_output_t padded_out[2] = {{.length = 1500, .dt_s = 1e-3},
                                       {.length = 700, .dt_s = 2.048 / 1000}};
  float input[256];
  for (int j = 0; j < n_in; ++j)
    input[j] = (float)tt_ricker(j * dt_in, f_peak, wavelet.delay_s);

  for (int pass = 0; pass < 2; ++pass) {
    rtm_traces_desc_t d =
        pass == 0 ? cpu_desc(1, n_in, dt_in, out, 4) : cpu_desc(1, n_in, dt_in, padded_out, 2);
    if (pass == 1) d.fft_length = 2 * n_in;
    rtm_traces_plan_t *plan = NULL;
    assert_int_equal(rtm_traces_plan_create(&d, &plan), RTM_OK);
    float *gather = malloc(rtm_traces_gather_size(plan) * sizeof *gather);
    assert_non_null(gather);
    assert_int_equal(rtm_traces_run(plan, input, gather), RTM_OK);
    for (int m = 0; m < d.n_outputs; ++m) {
      const rtm_traces_output_t *o = &d.outputs[m];
      /* away from the ends: the inner 80% of the input's duration */
      double duration = n_in * dt_in;
      int first = (int)ceil(0.1 * duration / o->dt_s);
      int last = (int)floor(0.9 * duration / o->dt_s);
      if (last > o->length) last = o->length;
      char what[64];
      snprintf(what, sizeof what, "pass %d output %d (dt %.4g s)", pass, m, o->dt_s);
      check_output(plan, gather, 0, m, o, ricker_answer, &wavelet, first, last, RICKER_TOLERANCE,
                   what);
    }
    free(gather);
    rtm_traces_plan_destroy(plan);
  }
}

/* i omega and the phase ramp against the analytic derivative and the delayed signal; the
 * shifts are not whole numbers of samples. */
static void test_derivative_and_shift(void **state) {
  (void)state;
  rtm_test_rng_t rng = rtm_test_seed(__func__);
  rtm_traces_output_t out[4] = {
      {.length = 2000, .dt_s = 0.5e-3, .derivative = 1},
      {.length = 500, .dt_s = 2e-3, .shift_s = rtm_test_uniform(&rng, 0.001, 0.05)},
      {.length = 800,
       .dt_s = 1.25e-3,
       .derivative = 1,
       .shift_s = -rtm_test_uniform(&rng, 0.1, 0.3)},
      {.length = 1000, .dt_s = 1e-3, .shift_s = rtm_test_uniform(&rng, 1.2, 2.5)}};
  rtm_traces_desc_t d = cpu_desc(2, 1000, 1e-3, out, 4);
  /* Tones from 20 Hz: the derivative lifts float rounding noise near the 450 Hz cut-off by
   * up to f_cut / f_tone, which stays below 25 this way (errors near 3e-6 at worst). */
  tt_tones_t tones[2] = {tt_random_tones(&rng, 5, 20.0, 150.0),
                         tt_random_tones(&rng, 3, 20.0, 150.0)};
  rtm_traces_plan_t *plan = NULL;
  assert_int_equal(rtm_traces_plan_create(&d, &plan), RTM_OK);
  check_tones(plan, &d, tones, NULL);
  rtm_traces_plan_destroy(plan);
}

/* Trapezoid (30, 40, 80, 100) Hz: tones at 10 and 130 Hz vanish, 60 Hz passes, 35 and
 * 90 Hz sit half-way up and down the cosine ramps (weight 0.5). */
static void test_band_pass(void **state) {
  (void)state;
  rtm_test_rng_t rng = rtm_test_seed(__func__);
  rtm_traces_output_t out[2] = {
      {.length = 500, .dt_s = 2e-3, .band_hz = {30, 40, 80, 100}},
      {.length = 1500, .dt_s = 1.0 / 1500, .band_hz = {30, 40, 80, 100}, .derivative = 1}};
  rtm_traces_desc_t d = cpu_desc(1, 1000, 1e-3, out, 2);
  tt_tones_t tones = tt_random_tones(&rng, 5, 1.0, 150.0);
  const double freqs[5] = {10, 35, 60, 90, 130}, weights[5] = {0, 0.5, 1, 0.5, 0};
  for (int k = 0; k < 5; ++k)
    tones.frequency_hz[k] = freqs[k];
  rtm_traces_plan_t *plan = NULL;
  assert_int_equal(rtm_traces_plan_create(&d, &plan), RTM_OK);
  check_tones(plan, &d, &tones, weights);
  rtm_traces_plan_destroy(plan);
}

/* Peaks and RMS against a double loop over the un-normalised output; the normalised
 * outputs reach peak 1 and RMS 1. Float rounding of y / divisor is 6e-8 relative. Odd
 * sizes (777 in, 311 and 1554 out) exercise FFTW's non-power-of-two paths. */
static void test_stats_and_normalisation(void **state) {
  (void)state;
  rtm_test_rng_t rng = rtm_test_seed(__func__);
  const int n = 777;
  const double dt = 1e-3, window = n * dt;
  rtm_traces_output_t out[6];
  const int lengths[3] = {300, 777, 1500}, sizes[3] = {311, 777, 1554};
  for (int m = 0; m < 6; ++m) {
    memset(&out[m], 0, sizeof out[m]);
    out[m].length = lengths[m % 3];
    out[m].dt_s = window / sizes[m % 3];
    out[m].normalisation =
        m < 3 ? RTM_TRACES_NORM_NONE : (m == 3 ? RTM_TRACES_NORM_PEAK : RTM_TRACES_NORM_RMS);
  }
  out[5].normalisation = RTM_TRACES_NORM_PEAK;
  out[4].normalisation = RTM_TRACES_NORM_RMS;
  rtm_traces_desc_t d = cpu_desc(2, n, dt, out, 6);
  float input[2 * 777];
  for (int j = 0; j < 2 * n; ++j)
    input[j] = (float)rtm_test_uniform(&rng, -3.0, 3.0);
  rtm_traces_plan_t *plan = NULL;
  assert_int_equal(rtm_traces_plan_create(&d, &plan), RTM_OK);
  float *gather = malloc(rtm_traces_gather_size(plan) * sizeof *gather);
  double peaks[12], rms[12];
  assert_non_null(gather);
  assert_int_equal(rtm_traces_run(plan, input, gather), RTM_OK);
  assert_int_equal(rtm_traces_stats(plan, peaks, rms), RTM_OK);
  for (int i = 0; i < 2; ++i) {
    for (int m = 0; m < 6; ++m) {
      int o = i * 6 + m;
      tt_check_output_stats(peaks[o], rms[o], gather + rtm_traces_gather_offset(plan, i, m),
                            out[m].length, out[m].normalisation, 1e-6);
      /* the same output size normalised or not: the stats describe the same signal */
      if (m >= 3) tt_assert_close(peaks[o], peaks[i * 6 + m - 3], 1e-12 * peaks[o]);
    }
  }
  free(gather);
  rtm_traces_plan_destroy(plan);
}

/* The convenience: 4 ms from 1 ms (1001 samples, a window padded to 1004), 1 ms from
 * 2.5 ms (ratio 2/5), on Ricker wavelets away from the ends; an irrational ratio is
 * refused. */
static void test_resample_convenience(void **state) {
  (void)state;
  rtm_test_rng_t rng = rtm_test_seed(__func__);
  const struct {
    int n_in;
    double dt_in;
    int n_out;
    double dt_out;
  } cases[2] = {{1001, 1e-3, 251, 4e-3}, {400, 2.5e-3, 1000, 1e-3}};
  for (int c = 0; c < 2; ++c) {
    const int count = 3;
    double delay[3], f_peak = 15.0;
    float *in = malloc((size_t)count * cases[c].n_in * sizeof *in);
    float *out = malloc((size_t)count * cases[c].n_out * sizeof *out);
    double *want = malloc((size_t)cases[c].n_out * sizeof *want);
    assert_true(in && out && want);
    for (int i = 0; i < count; ++i) {
      delay[i] = rtm_test_uniform(&rng, 0.3, 0.7);
      for (int j = 0; j < cases[c].n_in; ++j)
        in[(size_t)i * cases[c].n_in + j] = (float)tt_ricker(j * cases[c].dt_in, f_peak, delay[i]);
    }
    assert_int_equal(rtm_traces_resample("cpu", count, cases[c].n_in, cases[c].dt_in, in,
                                         cases[c].n_out, cases[c].dt_out, out),
                     RTM_OK);
    for (int i = 0; i < count; ++i) {
      for (int j = 0; j < cases[c].n_out; ++j)
        want[j] = tt_ricker(j * cases[c].dt_out, f_peak, delay[i]);
      int first = cases[c].n_out / 10, last = cases[c].n_out - cases[c].n_out / 10;
      char what[32];
      snprintf(what, sizeof what, "case %d trace %d", c, i);
      tt_assert_rel_l2(out + (size_t)i * cases[c].n_out, want, first, last, RICKER_TOLERANCE, what);
    }
    free(want);
    free(out);
    free(in);
  }
  float in[64] = {1.0f}, out[64];
  assert_int_equal(rtm_traces_resample("cpu", 1, 64, 1e-3, in, 40, 1e-3 * sqrt(2.0), out),
                   RTM_ERR_UNSUPPORTED);
  assert_int_equal(rtm_traces_resample("cpu", 1, 64, 1e-3, in, 0, 1e-3, out), RTM_ERR_INPUT);
  assert_int_equal(rtm_traces_resample("cpu", 1, 64, -1e-3, in, 64, 1e-3, out), RTM_ERR_INPUT);
}

/* New options with the same sizes keep the plan; new sizes rebuild it. */
static void test_update(void **state) {
  (void)state;
  rtm_test_rng_t rng = rtm_test_seed(__func__);
  rtm_traces_output_t out[2] = {{.length = 500, .dt_s = 2e-3}, {.length = 1000, .dt_s = 1e-3}};
  rtm_traces_desc_t d = cpu_desc(1, 1000, 1e-3, out, 2);
  tt_tones_t tones = tt_random_tones(&rng, 4, 20.0, 150.0); /* from 20 Hz: derivative below */
  rtm_traces_plan_t *plan = NULL;
  assert_int_equal(rtm_traces_plan_create(&d, &plan), RTM_OK);
  check_tones(plan, &d, &tones, NULL);
  rtm_traces_plan_t *before = plan;
  out[0].shift_s = 0.0371;
  out[1].derivative = 1;
  assert_int_equal(rtm_traces_plan_update(&plan, &d), RTM_OK);
  assert_ptr_equal(plan, before);
  check_tones(plan, &d, &tones, NULL);
  out[1].length = 1600;
  out[1].dt_s = 1.0 / 1600;
  assert_int_equal(rtm_traces_plan_update(&plan, &d), RTM_OK);
  assert_ptr_not_equal(plan, before);
  check_tones(plan, &d, &tones, NULL);
  rtm_traces_plan_destroy(plan);
}

static int create_status(rtm_traces_desc_t d) {
  rtm_traces_plan_t *plan = NULL;
  int status = rtm_traces_plan_create(&d, &plan);
  assert_true(status == RTM_OK || plan == NULL);
  rtm_traces_plan_destroy(plan);
  return status;
}

/* The bad-input tests start from one good plan: one input of 1000 samples at 1 ms (a 1 s
 * window) to one output of 500 samples at 2 ms. */
static const rtm_traces_output_t good = {.length = 500, .dt_s = 2e-3};

/* Zero or negative counts, lengths and intervals of the input, a window shorter than the
 * input, no outputs and an unknown backend are refused. */
static void test_bad_description(void **state) {
  (void)state;
  rtm_traces_output_t o = good;
  rtm_traces_desc_t d = cpu_desc(1, 1000, 1e-3, &o, 1);
  assert_int_equal(create_status(d), RTM_OK);

  rtm_traces_desc_t bad = d;
  bad.n_inputs = 0;
  assert_int_equal(create_status(bad), RTM_ERR_INPUT);
  const int lengths[] = {0, -5};
  for (size_t k = 0; k < sizeof lengths / sizeof lengths[0]; ++k) {
    bad = d;
    bad.input_length = lengths[k];
    assert_int_equal(create_status(bad), RTM_ERR_INPUT);
  }
  const double intervals[] = {0.0, -1e-3, NAN};
  for (size_t k = 0; k < sizeof intervals / sizeof intervals[0]; ++k) {
    bad = d;
    bad.input_dt_s = intervals[k];
    assert_int_equal(create_status(bad), RTM_ERR_INPUT);
  }
  bad = d;
  bad.fft_length = 999; /* shorter than the input */
  assert_int_equal(create_status(bad), RTM_ERR_INPUT);
  bad = d;
  bad.n_outputs = 0;
  assert_int_equal(create_status(bad), RTM_ERR_INPUT);
  bad = d;
  bad.backend = "quantum";
  assert_int_equal(create_status(bad), RTM_ERR_CONFIG);
}

/* Outputs of zero or negative length or interval, longer than the window, with band corners
 * out of order or an unknown normalisation are refused. */
static void test_bad_outputs(void **state) {
  (void)state;
  rtm_traces_output_t o = good;
  rtm_traces_desc_t d = cpu_desc(1, 1000, 1e-3, &o, 1);
  const int lengths[] = {0, -3, 501}; /* the 1 s window holds 500 samples at 2 ms */
  for (size_t k = 0; k < sizeof lengths / sizeof lengths[0]; ++k) {
    o = good;
    o.length = lengths[k];
    assert_int_equal(create_status(d), RTM_ERR_INPUT);
  }
  const double intervals[] = {0.0, -2e-3};
  for (size_t k = 0; k < sizeof intervals / sizeof intervals[0]; ++k) {
    o = good;
    o.dt_s = intervals[k];
    assert_int_equal(create_status(d), RTM_ERR_INPUT);
  }
  o = good;
  o.band_hz[0] = 50;
  o.band_hz[1] = 40;
  o.band_hz[2] = 80;
  o.band_hz[3] = 100;
  assert_int_equal(create_status(d), RTM_ERR_INPUT);
  o = good;
  o.normalisation = (rtm_traces_norm_t)7;
  assert_int_equal(create_status(d), RTM_ERR_INPUT);
}

/* A window that is no whole number of output samples is refused naming the output; an
 * output Nyquist far above the input's is accepted with a warning, 1.5 times it without. */
static void test_window_and_bandwidth_messages(void **state) {
  (void)state;
  rtm_traces_output_t o = good;
  rtm_traces_desc_t d = cpu_desc(1, 1000, 1e-3, &o, 1);
  capture_t cap;
  o.dt_s = 1.3e-3; /* 769.23 samples in the 1 s window */
  assert_int_equal(captured(&cap, create_status(d)), RTM_ERR_INPUT);
  assert_non_null(strstr(cap.text, "output 0"));
  assert_non_null(strstr(cap.text, "not a whole number"));

  o = good;
  o.length = 4000;
  o.dt_s = 0.25e-3; /* Nyquist 2000 Hz from an input of 500 Hz: accepted, with a warning */
  assert_int_equal(captured(&cap, create_status(d)), RTM_OK);
  assert_non_null(strstr(cap.text, "warning"));
  assert_non_null(strstr(cap.text, "cannot invent bandwidth"));
  o.length = 1500;
  o.dt_s = 1.0 / 1500; /* 1.5x: no warning */
  assert_int_equal(captured(&cap, create_status(d)), RTM_OK);
  assert_null(strstr(cap.text, "warning"));
}

/* 4096 inputs of 2^26 samples, a terabyte of input alone: refused, in GiB. */
static void test_too_large_for_the_host(void **state) {
  (void)state;
  rtm_traces_output_t o = good;
  rtm_traces_desc_t d = cpu_desc(4096, 1 << 26, 1e-3, &o, 1);
  o.length = 1 << 25;
  o.dt_s = 2e-3;
  capture_t cap;
  assert_int_equal(captured(&cap, create_status(d)), RTM_ERR_NOMEM);
  assert_non_null(strstr(cap.text, "GiB"));
}

static void test_parse_pipeline(void **state) {
  (void)state;
  rtm_traces_pipeline_t p;
  assert_int_equal(rtm_traces_parse_pipeline("graph", &p), RTM_OK);
  assert_int_equal(p, RTM_TRACES_GRAPH);
  assert_int_equal(rtm_traces_parse_pipeline("streams", &p), RTM_OK);
  assert_int_equal(p, RTM_TRACES_STREAMS);
  assert_int_equal(rtm_traces_parse_pipeline("graphs", &p), RTM_ERR_CONFIG);
}

/* The cpu backend has no graph: asking for its node count is refused. */
/* Spectrum of rtm_ricker(t, f, delay) with a = (pi f)^2: sqrt(pi / a) w^2 / (2 a)
 * exp(-w^2 / (4 a)), times exp(-i w delay). */
static double ricker_amplitude(double omega, double frequency) {
  const double a = TT_PI * TT_PI * frequency * frequency;
  return sqrt(TT_PI / a) * omega * omega / (2.0 * a) * exp(-omega * omega / (4.0 * a));
}

/* The leapfrog warps against a direct quadrature of their definition (rtm_traces.h), the
 * input's spectrum X(w) = R(w) exp(-i w delay) taken at the warped frequency: forward
 * y(t) = (1 / pi) int_0^{pi/dt} R(psi(w)) cos(w t - psi(w) delay) dw with psi(w) = (2 / dt)
 * sin(w dt / 2); inverse y(t) = (1 / pi) int_0^{2/dt} R(psi^-1(v)) cos(v t - psi^-1(v) delay)
 * dv; and the two in turn give the wavelet back. A 20 Hz Ricker at dt = 2 ms (the warp moves
 * it by several percent), n samples padded 8x (rtm_traces_dispersion), early in the trace
 * and at its end, where the spectrum turns fastest about the trace's middle; and 273
 * samples, which pad to an odd length (2187 = 3^7). */
static void check_dispersion_warps(double delay, int n) {
  enum { N = 400, QUADRATURE = 200000 };
  const double dt = 0.002, frequency = 20.0;
  float x[N], forward[N], inverse[N];
  double exact_forward[N], exact_inverse[N];
  assert_true(n <= N);
  for (int i = 0; i < n; ++i)
    x[i] = forward[i] = inverse[i] = (float)rtm_ricker(i * dt, frequency, delay);
  for (int i = 0; i < n; ++i) {
    const double t = i * dt;
    double fsum = 0.0, isum = 0.0;
    const double dw = TT_PI / dt / QUADRATURE, dv = 2.0 / dt / QUADRATURE;
    for (int q = 0; q < QUADRATURE; ++q) {
      const double w = (q + 0.5) * dw, v = (q + 0.5) * dv;
      const double psi = 2.0 / dt * sin(w * dt / 2.0), back = 2.0 / dt * asin(v * dt / 2.0);
      fsum += ricker_amplitude(psi, frequency) * cos(w * t - psi * delay) * dw;
      isum += ricker_amplitude(back, frequency) * cos(v * t - back * delay) * dv;
    }
    exact_forward[i] = fsum / TT_PI;
    exact_inverse[i] = isum / TT_PI;
  }
  assert_int_equal(rtm_traces_dispersion("cpu", RTM_TRACES_WARP_FORWARD, 1, n, dt, forward),
                   RTM_OK);
  assert_int_equal(rtm_traces_dispersion("cpu", RTM_TRACES_WARP_INVERSE, 1, n, dt, inverse),
                   RTM_OK);
  double ef = 0.0, ei = 0.0, moved = 0.0, norm = 0.0;
  for (int i = 0; i < n; ++i) {
    ef += (forward[i] - exact_forward[i]) * (forward[i] - exact_forward[i]);
    ei += (inverse[i] - exact_inverse[i]) * (inverse[i] - exact_inverse[i]);
    moved += (exact_forward[i] - x[i]) * (exact_forward[i] - x[i]);
    norm += (double)x[i] * x[i];
  }
  printf("dispersion warps, %d samples, delay %g s: forward %.2e, inverse %.2e from the "
         "quadrature; the warp "
         "moves the wavelet by %.3f\n",
         n, delay, sqrt(ef / norm), sqrt(ei / norm), sqrt(moved / norm));
  assert_true(sqrt(moved / norm) > 0.02); /* a warp that did nothing would fail below */
  assert_true(sqrt(ef / norm) < RICKER_TOLERANCE);
  assert_true(sqrt(ei / norm) < RICKER_TOLERANCE);
  assert_int_equal(rtm_traces_dispersion("cpu", RTM_TRACES_WARP_INVERSE, 1, n, dt, forward),
                   RTM_OK);
  double round_trip = 0.0;
  for (int i = 0; i < n; ++i)
    round_trip += (forward[i] - x[i]) * (forward[i] - x[i]);
  printf("  forward then inverse: %.2e\n", sqrt(round_trip / norm));
  assert_true(sqrt(round_trip / norm) < RICKER_TOLERANCE);
}

static void test_dispersion_warps(void **state) {
  (void)state;
  check_dispersion_warps(0.3, 400);
  check_dispersion_warps(0.72, 400);
  check_dispersion_warps(0.3, 273);
}

static void test_cpu_has_no_graph(void **state) {
  (void)state;
  rtm_traces_output_t o = {.length = 100, .dt_s = 1e-3};
  rtm_traces_desc_t d = cpu_desc(1, 100, 1e-3, &o, 1);
  rtm_traces_plan_t *plan = NULL;
  size_t nodes = 1, expected = 1;
  assert_int_equal(rtm_traces_plan_create(&d, &plan), RTM_OK);
  assert_int_equal(rtm_traces_graph_node_count(plan, &nodes, &expected), RTM_ERR_UNSUPPORTED);
  assert_int_equal(nodes, 0);
  rtm_traces_plan_destroy(plan);
}

RTM_TEST_MAIN(cmocka_unit_test(test_periodic_resampled_to_five_outputs),
              cmocka_unit_test(test_ricker_resampled), cmocka_unit_test(test_derivative_and_shift),
              cmocka_unit_test(test_band_pass), cmocka_unit_test(test_stats_and_normalisation),
              cmocka_unit_test(test_resample_convenience), cmocka_unit_test(test_update),
              cmocka_unit_test(test_bad_description), cmocka_unit_test(test_bad_outputs),
              cmocka_unit_test(test_window_and_bandwidth_messages),
              cmocka_unit_test(test_too_large_for_the_host), cmocka_unit_test(test_parse_pipeline),
              cmocka_unit_test(test_cpu_has_no_graph), cmocka_unit_test(test_dispersion_warps))
