/* The trace pipeline on the cuda backend, graph and streams, against the FFTW reference:
 * outputs, statistics, replays with new inputs, the captured graph's node count, option and
 * size updates, the resampling convenience, and sizes beyond the device. Exits 77 (skipped)
 * without a CUDA device. */
#define _POSIX_C_SOURCE 200809L
#include <cuda_runtime_api.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "rtm_status.h"
#include "rtm_test_main.h"
#include "rtm_traces.h"
#include "traces_test_util.h"

/* cuFFT and FFTW round differently; both are within about 1e-7 relative of the exact
 * transform, so the 1e-5 per output trace leaves a factor of 50 and catches any
 * wrong bin, offset, factor or stale buffer. */
#define GPU_CPU_TOLERANCE 1e-5
/* Peak and RMS from CUB against a double loop over the same float samples: the peak is
 * exact, the energy is summed in double on both sides; 1e-6 is the bound. */
#define STATS_TOLERANCE 1e-6

/* The benchmark's shape: one 1024-sample input, n outputs spread over [128, 8192] covering
 * the same 1.024 s window, with every option somewhere. */
static rtm_traces_output_t *talk_outputs(int n) {
  int *lengths = malloc((size_t)n * sizeof *lengths);
  rtm_traces_output_t *out = calloc((size_t)n, sizeof *out);
  assert_true(lengths && out);
  assert_int_equal(rtm_traces_spread_lengths(n, 128, 8192, lengths), RTM_OK);
  for (int m = 0; m < n; ++m) {
    out[m].length = lengths[m] - (m % 3 == 2 ? lengths[m] / 7 : 0); /* some truncated */
    out[m].dt_s = 1.024 / lengths[m];
    if (m % 5 == 1) {
      const double band[4] = {5, 10, 120, 200};
      memcpy(out[m].band_hz, band, sizeof band);
    }
    out[m].derivative = m % 5 == 2 || m % 11 == 3;
    if (m % 5 == 3 || m % 11 == 3) out[m].shift_s = 0.0137 * m;
    out[m].normalisation = m % 5 == 4   ? RTM_TRACES_NORM_PEAK
                           : m % 7 == 0 ? RTM_TRACES_NORM_RMS
                                        : RTM_TRACES_NORM_NONE;
  }
  free(lengths);
  return out;
}

/* Every output trace of gpu against cpu, by its own relative L2. */
static void compare_gathers(const rtm_traces_plan_t *gpu, const rtm_traces_plan_t *cpu,
                            const float *g, const float *c, const rtm_traces_desc_t *d,
                            const char *what) {
  double worst = 0.0;
  int worst_i = 0, worst_m = 0;
  for (int i = 0; i < d->n_inputs; ++i)
    for (int m = 0; m < d->n_outputs; ++m) {
      size_t at = rtm_traces_gather_offset(gpu, i, m);
      assert_int_equal(at, rtm_traces_gather_offset(cpu, i, m));
      double err = tt_rel_l2_f(g + at, c + at, (size_t)d->outputs[m].length);
      if (!(err <= worst)) {
        worst = err;
        worst_i = i;
        worst_m = m;
      }
    }
  printf("# %s: worst output rel L2 vs FFTW %.3g (input %d output %d)\n", what, worst, worst_i,
         worst_m);
  if (!(worst <= GPU_CPU_TOLERANCE))
    fail_msg("%s: input %d output %d differs from FFTW by %.3g", what, worst_i, worst_m, worst);
}

/* Stats of the plan's last run against a double loop over its gather (see rtm_traces.h:
 * stats describe the signal before normalisation). */
static void check_stats(const rtm_traces_plan_t *plan, const float *gather,
                        const rtm_traces_desc_t *d) {
  int n = d->n_inputs * d->n_outputs;
  double *peaks = malloc((size_t)n * sizeof *peaks), *rms = malloc((size_t)n * sizeof *rms);
  assert_true(peaks && rms);
  assert_int_equal(rtm_traces_stats(plan, peaks, rms), RTM_OK);
  for (int i = 0; i < d->n_inputs; ++i)
    for (int m = 0; m < d->n_outputs; ++m) {
      const int o = i * d->n_outputs + m;
      tt_check_output_stats(peaks[o], rms[o], gather + rtm_traces_gather_offset(plan, i, m),
                            d->outputs[m].length, d->outputs[m].normalisation, STATS_TOLERANCE);
    }
  free(rms);
  free(peaks);
}

static void fill_noise(rtm_test_rng_t *rng, float *x, size_t n) {
  for (size_t j = 0; j < n; ++j)
    x[j] = (float)rtm_test_uniform(rng, -1.0, 1.0);
}

/* Fresh noise through both plans into want (cpu) and got (cuda), then every output of the
 * cuda plan against the cpu one. */
static void run_both_and_compare(rtm_traces_plan_t *gpu, rtm_traces_plan_t *cpu,
                                 const rtm_traces_desc_t *d, rtm_test_rng_t *rng, float *input,
                                 float *want, float *got, const char *what) {
  fill_noise(rng, input, (size_t)d->n_inputs * d->input_length);
  assert_int_equal(rtm_traces_run(cpu, input, want), RTM_OK);
  assert_int_equal(rtm_traces_run(gpu, input, got), RTM_OK);
  compare_gathers(gpu, cpu, got, want, d, what);
}

/* Runs the same description on cpu and on cuda (graph and streams, several stream counts),
 * twice with fresh inputs: the second run proves that a replay reads the new input. */
static void check_against_fftw(const rtm_traces_desc_t *base, rtm_test_rng_t *rng,
                               const char *name) {
  rtm_traces_desc_t cpu_d = *base;
  cpu_d.backend = "cpu";
  rtm_traces_plan_t *cpu = NULL;
  assert_int_equal(rtm_traces_plan_create(&cpu_d, &cpu), RTM_OK);
  size_t gather_n = rtm_traces_gather_size(cpu);
  size_t input_n = (size_t)base->n_inputs * base->input_length;
  float *input = malloc(input_n * sizeof *input);
  float *want = malloc(gather_n * sizeof *want), *got = malloc(gather_n * sizeof *got);
  assert_true(input && want && got);
  const struct {
    rtm_traces_pipeline_t pipeline;
    int streams;
  } variants[3] = {{RTM_TRACES_GRAPH, 0}, {RTM_TRACES_STREAMS, 0}, {RTM_TRACES_GRAPH, 8}};
  for (int v = 0; v < 3; ++v) {
    rtm_traces_desc_t d = *base;
    d.backend = "cuda";
    d.pipeline = variants[v].pipeline;
    d.streams = variants[v].streams;
    rtm_traces_plan_t *gpu = NULL;
    assert_int_equal(rtm_traces_plan_create(&d, &gpu), RTM_OK);
    char text[512];
    rtm_traces_describe(gpu, text, sizeof text);
    printf("# %s\n", text);
    assert_int_equal(rtm_traces_gather_size(gpu), gather_n);
    for (int run = 0; run < 2; ++run) {
      char what[128];
      snprintf(what, sizeof what, "%s %s streams %d run %d", name,
               rtm_traces_pipeline_name(d.pipeline), d.streams, run);
      memset(got, 0xff, gather_n * sizeof *got); /* NaN: every sample must be written */
      run_both_and_compare(gpu, cpu, &d, rng, input, want, got, what);
      check_stats(gpu, got, &d);
      /* the pinned result is the gather just copied out */
      assert_memory_equal(rtm_traces_result(gpu), got, gather_n * sizeof *got);
    }
    rtm_traces_plan_destroy(gpu);
  }
  free(got);
  free(want);
  free(input);
  rtm_traces_plan_destroy(cpu);
}

static void test_talk_case_matches_fftw(void **state) {
  (void)state;
  rtm_test_rng_t rng = rtm_test_seed(__func__);
  rtm_traces_output_t *out = talk_outputs(100);
  rtm_traces_desc_t d = tt_desc("cuda", RTM_TRACES_GRAPH, 1, 1024, 1e-3, 0, out, 100);
  check_against_fftw(&d, &rng, "1 x 1024 -> 100 outputs");
  free(out);
}

/* Many inputs, zero-padding in time (1000 samples in a 1200-sample window), truncated
 * outputs, an odd size and several outputs per size (batched inverse FFTs). */
static void test_batched_padded_matches_fftw(void **state) {
  (void)state;
  rtm_test_rng_t rng = rtm_test_seed(__func__);
  const int sizes[7] = {240, 600, 1200, 2400, 3600, 999, 600};
  const int lengths[7] = {200, 600, 1000, 2400, 3000, 999, 550};
  rtm_traces_output_t out[7];
  memset(out, 0, sizeof out);
  for (int m = 0; m < 7; ++m) {
    out[m].length = lengths[m];
    out[m].dt_s = 1.2 / sizes[m];
  }
  out[1].derivative = 1;
  out[2].shift_s = -0.0421;
  out[3].normalisation = RTM_TRACES_NORM_RMS;
  out[6].normalisation = RTM_TRACES_NORM_PEAK;
  const double band[4] = {0, 20, 60, 90};
  memcpy(out[4].band_hz, band, sizeof band);
  rtm_traces_desc_t d = tt_desc("cuda", RTM_TRACES_GRAPH, 37, 1000, 1e-3, 1200, out, 7);
  check_against_fftw(&d, &rng, "37 x 1000 (fft 1200) -> 7 outputs");
}

/* The captured graph holds every node: ours and each library call's, counted alone. A
 * cuFFT or CUB call that ran outside the capture would leave it short. */
static void test_graph_node_count(void **state) {
  (void)state;
  rtm_traces_output_t *out = talk_outputs(100);
  rtm_traces_desc_t d = tt_desc("cuda", RTM_TRACES_GRAPH, 1, 1024, 1e-3, 0, out, 100);
  rtm_traces_plan_t *plan = NULL;
  size_t nodes = 0, expected = 0;
  assert_int_equal(rtm_traces_plan_create(&d, &plan), RTM_OK);
  assert_int_equal(rtm_traces_graph_node_count(plan, &nodes, &expected), RTM_OK);
  int groups = rtm_traces_fft_groups(plan);
  printf("# graph nodes %zu, expected %zu (%d inverse FFT sizes)\n", nodes, expected, groups);
  assert_int_equal(groups, 100);
  /* at least: 2 copies, spread, merge, the forward FFT, one per group, the reduction */
  assert_true(expected >= (size_t)(4 + 1 + groups + 1));
  assert_int_equal(nodes, expected);
  rtm_traces_plan_destroy(plan);

  d.pipeline = RTM_TRACES_STREAMS;
  assert_int_equal(rtm_traces_plan_create(&d, &plan), RTM_OK);
  assert_int_equal(rtm_traces_graph_node_count(plan, &nodes, &expected), RTM_ERR_UNSUPPORTED);
  rtm_traces_plan_destroy(plan);
  free(out);
}

/* New options keep the captured graph (same plan, same nodes) and take effect on the next
 * replay; new sizes rebuild it. Checked against FFTW each time. */
static void test_update_keeps_or_rebuilds_graph(void **state) {
  (void)state;
  rtm_test_rng_t rng = rtm_test_seed(__func__);
  rtm_traces_output_t out[3] = {{.length = 500, .dt_s = 2e-3},
                                {.length = 1000, .dt_s = 1e-3},
                                {.length = 3000, .dt_s = 1.0 / 3000}};
  rtm_traces_desc_t d = tt_desc("cuda", RTM_TRACES_GRAPH, 4, 1000, 1e-3, 0, out, 3);
  rtm_traces_desc_t c = d;
  c.backend = "cpu";
  rtm_traces_plan_t *gpu = NULL, *cpu = NULL;
  float input[4000];
  float *want = malloc(4 * 4500 * sizeof(float)), *got = malloc(4 * 4500 * sizeof(float));
  assert_true(want && got);
  size_t nodes0 = 0, nodes = 0, expected = 0;
  assert_int_equal(rtm_traces_plan_create(&d, &gpu), RTM_OK);
  assert_int_equal(rtm_traces_graph_node_count(gpu, &nodes0, &expected), RTM_OK);
  for (int step = 0; step < 3; ++step) {
    rtm_traces_plan_t *before = gpu;
    if (step == 1) { /* options only */
      out[0].shift_s = 0.25;
      out[1].derivative = 1;
      out[2].normalisation = RTM_TRACES_NORM_PEAK;
    } else if (step == 2) { /* a new size */
      out[2].length = 1600;
      out[2].dt_s = 1.0 / 1600;
    }
    if (step > 0) {
      assert_int_equal(rtm_traces_plan_update(&gpu, &d), RTM_OK);
      assert_int_equal(rtm_traces_graph_node_count(gpu, &nodes, &expected), RTM_OK);
      assert_int_equal(nodes, expected);
      if (step == 1) {
        assert_ptr_equal(gpu, before);
        assert_int_equal(nodes, nodes0);
      } else {
        assert_ptr_not_equal(gpu, before);
      }
    }
    rtm_traces_plan_destroy(cpu);
    cpu = NULL;
    assert_int_equal(rtm_traces_plan_create(&c, &cpu), RTM_OK);
    char what[64];
    snprintf(what, sizeof what, "update step %d", step);
    run_both_and_compare(gpu, cpu, &d, &rng, input, want, got, what);
  }
  rtm_traces_plan_destroy(cpu);
  rtm_traces_plan_destroy(gpu);
  free(got);
  free(want);
}

/* The convenience the app uses for gathers: cuda equals cpu. */
static void test_resample_matches_fftw(void **state) {
  (void)state;
  rtm_test_rng_t rng = rtm_test_seed(__func__);
  const int count = 50, n_in = 1001, n_out = 251;
  float *in = malloc((size_t)count * n_in * sizeof *in);
  float *want = malloc((size_t)count * n_out * sizeof *want);
  float *got = malloc((size_t)count * n_out * sizeof *got);
  assert_true(in && want && got);
  fill_noise(&rng, in, (size_t)count * n_in);
  assert_int_equal(rtm_traces_resample("cpu", count, n_in, 1e-3, in, n_out, 4e-3, want), RTM_OK);
  assert_int_equal(rtm_traces_resample("cuda", count, n_in, 1e-3, in, n_out, 4e-3, got), RTM_OK);
  for (int i = 0; i < count; ++i) {
    double err = tt_rel_l2_f(got + (size_t)i * n_out, want + (size_t)i * n_out, (size_t)n_out);
    if (!(err <= GPU_CPU_TOLERANCE)) fail_msg("trace %d: rel L2 %.3g vs FFTW", i, err);
  }
  free(got);
  free(want);
  free(in);
}

/* The leapfrog dispersion warps (forward, inverse) on cuFFT against FFTW, on noise (every
 * bin's interpolation weighs in). */
static void test_dispersion_matches_fftw(void **state) {
  (void)state;
  rtm_test_rng_t rng = rtm_test_seed(__func__);
  const int count = 40, n = 700;
  float *want = malloc((size_t)count * n * sizeof *want);
  float *got = malloc((size_t)count * n * sizeof *got);
  assert_true(want && got);
  for (int warp = RTM_TRACES_WARP_FORWARD; warp <= RTM_TRACES_WARP_INVERSE; ++warp) {
    fill_noise(&rng, want, (size_t)count * n);
    memcpy(got, want, (size_t)count * n * sizeof *got);
    assert_int_equal(rtm_traces_dispersion("cpu", (rtm_traces_warp_t)warp, count, n, 2e-3, want),
                     RTM_OK);
    assert_int_equal(rtm_traces_dispersion("cuda", (rtm_traces_warp_t)warp, count, n, 2e-3, got),
                     RTM_OK);
    for (int i = 0; i < count; ++i) {
      double err = tt_rel_l2_f(got + (size_t)i * n, want + (size_t)i * n, (size_t)n);
      if (!(err <= GPU_CPU_TOLERANCE))
        fail_msg("warp %d, trace %d: rel L2 %.3g vs FFTW", warp, i, err);
    }
  }
  free(got);
  free(want);
}

/* The warp run where the traces are (device memory, rows `pitch` apart) gives the numbers of
 * the same warp run through host memory, bit for bit: the same plan, batches and cuFFT
 * calls; enough traces for two batches, the second partial. */
static void test_dispersion_device_matches_host(void **state) {
  (void)state;
  rtm_test_rng_t rng = rtm_test_seed(__func__);
  const int count = 13000, n = 700; /* batches of 2^26 / (8 n) = 11983 traces */
  const size_t pitch = n + 5, values = (size_t)count * n;
  float *want = malloc(values * sizeof *want), *got = malloc(values * sizeof *got);
  float *device = NULL;
  assert_true(want && got);
  assert_int_equal(cudaMalloc((void **)&device, (size_t)count * pitch * sizeof(float)),
                   cudaSuccess);
  for (int warp = RTM_TRACES_WARP_FORWARD; warp <= RTM_TRACES_WARP_INVERSE; ++warp) {
    fill_noise(&rng, want, values);
    assert_int_equal(cudaMemcpy2D(device, pitch * sizeof(float), want, n * sizeof(float),
                                  n * sizeof(float), (size_t)count, cudaMemcpyHostToDevice),
                     cudaSuccess);
    assert_int_equal(rtm_traces_dispersion("cuda", (rtm_traces_warp_t)warp, count, n, 2e-3, want),
                     RTM_OK);
    assert_int_equal(
        rtm_traces_dispersion_device((rtm_traces_warp_t)warp, count, n, pitch, 2e-3, device),
        RTM_OK);
    assert_int_equal(cudaMemcpy2D(got, n * sizeof(float), device, pitch * sizeof(float),
                                  n * sizeof(float), (size_t)count, cudaMemcpyDeviceToHost),
                     cudaSuccess);
    for (int i = 0; i < count; ++i)
      if (memcmp(got + (size_t)i * n, want + (size_t)i * n, (size_t)n * sizeof *got) != 0)
        fail_msg("warp %d, trace %d: the device run differs from the host run", warp, i);
  }
  cudaFree(device);
  free(got);
  free(want);
}

/* Sizes beyond the device are refused before any allocation. */
static void test_too_large_for_device(void **state) {
  (void)state;
  rtm_traces_output_t o = {.length = 1 << 25, .dt_s = 2e-3};
  rtm_traces_desc_t d = tt_desc("cuda", RTM_TRACES_GRAPH, 4096, 1 << 26, 1e-3, 0, &o, 1);
  rtm_traces_plan_t *plan = NULL;
  assert_int_equal(rtm_traces_plan_create(&d, &plan), RTM_ERR_NOMEM);
  assert_null(plan);
}

RTM_TEST_MAIN_CUDA("test_traces_gpu", NULL, NULL, cmocka_unit_test(test_talk_case_matches_fftw),
                   cmocka_unit_test(test_batched_padded_matches_fftw),
                   cmocka_unit_test(test_graph_node_count),
                   cmocka_unit_test(test_update_keeps_or_rebuilds_graph),
                   cmocka_unit_test(test_resample_matches_fftw),
                   cmocka_unit_test(test_dispersion_matches_fftw),
                   cmocka_unit_test(test_dispersion_device_matches_host),
                   cmocka_unit_test(test_too_large_for_device))
