/* cmd_bench_traces.c - `rtm3d bench --traces`: the trace pipeline alone, graph replay against
 * plain stream launches, on the case of the reference talk (one 1024-sample input, 100
 * outputs between 128 and 8192 samples) or a batched one. Times are host wall-clock per
 * run (input copy, pipeline, result in pinned memory, synchronised), median of many runs
 * after a warm-up; the run ends with a check of the last result against FFTW. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "app.h"
#include "rtm_status.h"
#include "rtm_traces.h"
#ifdef RTM3D_HAVE_CUDA_BACKEND
#include "rtm_cuda_bench.h"
#endif

/* Largest relative L2 difference per output trace from FFTW that passes (see the tests). */
#define CHECK_TOLERANCE 1e-5

typedef struct {
  int inputs, input_length, outputs, min_length, max_length, replays, warmup, streams, device;
  int run_graph, run_streams, check;
  const char *backend;
} bench_options_t;

typedef struct {
  double median_us, p10_us, p90_us;
  size_t nodes, expected_nodes;
  int have_nodes;
} bench_result_t;

static void usage(FILE *out) {
  fprintf(out,
          "usage: rtm3d bench --traces [--inputs N] [--input-length N] [--outputs M]\n"
          "                   [--min-length N] [--max-length N] [--replays K] [--warmup K]\n"
          "                   [--pipeline graph|streams|both] [--streams S] [--device D]\n"
          "                   [--backend cuda|cpu] [--no-check]\n\n"
          "Times the trace pipeline: N input traces (1 ms samples) spread to M outputs each,\n"
          "lengths spread geometrically over [min, max] on the input's window. Defaults: the\n"
          "reference talk's case, 1 x 1024 -> 100 outputs in [128, 8192], 1000 replays after\n"
          "50 warm-up runs, both pipelines. Ends with a check against FFTW (exit 1 if off).\n");
}

static int parse_int(const char *option, const char *text, int min, int *value) {
  char *end = NULL;
  errno = 0;
  long v = text ? strtol(text, &end, 10) : 0;
  if (!text || *end != '\0' || errno || v < min || v > 1L << 30) {
    rtm_log_error("bench --traces: %s needs an integer >= %d, not '%s'", option, min,
                  text ? text : "(missing)");
    return RTM_ERR_USAGE;
  }
  *value = (int)v;
  return RTM_OK;
}

/* The field an option with an integer value fills, and its least value; NULL for any
 * other option. */
static int *integer_option(bench_options_t *o, const char *name, int *min) {
  const struct {
    const char *name;
    int min;
    int *value;
  } options[] = {{"--inputs", 1, &o->inputs},         {"--input-length", 2, &o->input_length},
                 {"--outputs", 1, &o->outputs},       {"--min-length", 2, &o->min_length},
                 {"--max-length", 2, &o->max_length}, {"--replays", 1, &o->replays},
                 {"--warmup", 0, &o->warmup},         {"--streams", 1, &o->streams},
                 {"--device", 0, &o->device}};
  for (size_t k = 0; k < sizeof options / sizeof options[0]; ++k)
    if (strcmp(name, options[k].name) == 0) {
      *min = options[k].min;
      return options[k].value;
    }
  return NULL;
}

static int parse_options(int argc, char **argv, bench_options_t *o, int *help) {
  int status = RTM_OK;
  *o = (bench_options_t){.inputs = 1,
                         .input_length = 1024,
                         .outputs = 100,
                         .min_length = 128,
                         .max_length = 8192,
                         .replays = 1000,
                         .warmup = 50,
                         .run_graph = 1,
                         .run_streams = 1,
                         .check = 1,
#ifdef RTM3D_HAVE_CUDA
                         .backend = "cuda"
#else
                         .backend = "cpu"
#endif
  };
  *help = 0;
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--traces") == 0) continue;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      *help = 1;
      return RTM_OK;
    }
    if (strcmp(a, "--no-check") == 0) {
      o->check = 0;
      continue;
    }
    int min = 0;
    int *integer = integer_option(o, a, &min);
    if (!integer && strcmp(a, "--backend") != 0 && strcmp(a, "--pipeline") != 0)
      RTM_FAIL(RTM_ERR_USAGE,
               "bench --traces: unknown option '%s' (see 'rtm3d bench --traces --help')", a);
    if (!next) RTM_FAIL(RTM_ERR_USAGE, "bench --traces: %s needs a value", a);
    ++i;
    if (integer)
      RTM_TRY(parse_int(a, next, min, integer));
    else if (strcmp(a, "--backend") == 0)
      o->backend = next;
    else {
      o->run_graph = strcmp(next, "graph") == 0 || strcmp(next, "both") == 0;
      o->run_streams = strcmp(next, "streams") == 0 || strcmp(next, "both") == 0;
      if (!o->run_graph && !o->run_streams)
        RTM_FAIL(RTM_ERR_USAGE, "bench --traces: --pipeline takes graph, streams or both, not '%s'",
                 next);
    }
  }
  if (o->min_length > o->max_length)
    RTM_FAIL(RTM_ERR_USAGE, "bench --traces: --min-length %d is above --max-length %d",
             o->min_length, o->max_length);
fail:
  return status;
}

static double now_us(void) {
  return 1e6 * rtm_wall_seconds();
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static int time_pipeline(const bench_options_t *o, rtm_traces_desc_t desc,
                         rtm_traces_pipeline_t pipeline, const float *input, float *result,
                         bench_result_t *r) {
  int status = RTM_OK;
  rtm_traces_plan_t *plan = NULL;
  double *times = malloc((size_t)o->replays * sizeof *times);
  if (!times) RTM_FAIL(RTM_ERR_NOMEM, "bench --traces: no memory for %d timings", o->replays);
  desc.pipeline = pipeline;
  RTM_TRY(rtm_traces_plan_create(&desc, &plan));
  char text[512];
  rtm_traces_describe(plan, text, sizeof text);
  printf("%s\n", text);
  memset(r, 0, sizeof *r);
  if (pipeline == RTM_TRACES_GRAPH && strcmp(desc.backend, "cuda") == 0) {
    RTM_TRY(rtm_traces_graph_node_count(plan, &r->nodes, &r->expected_nodes));
    r->have_nodes = 1;
  }
  size_t pitch = 0;
  float *staging = rtm_traces_input_buffer(plan, &pitch);
  for (int i = 0; i < desc.n_inputs; ++i)
    memcpy(staging + (size_t)i * pitch, input + (size_t)i * desc.input_length,
           (size_t)desc.input_length * sizeof *input);
  for (int k = 0; k < o->warmup; ++k)
    RTM_TRY(rtm_traces_run(plan, NULL, NULL));
  for (int k = 0; k < o->replays; ++k) {
    double t0 = now_us();
    RTM_TRY(rtm_traces_run(plan, NULL, NULL));
    times[k] = now_us() - t0;
  }
  qsort(times, (size_t)o->replays, sizeof *times, compare_doubles);
  r->median_us = times[o->replays / 2];
  r->p10_us = times[o->replays / 10];
  r->p90_us = times[(o->replays * 9) / 10];
  memcpy(result, rtm_traces_result(plan), rtm_traces_gather_size(plan) * sizeof *result);
fail:
  rtm_traces_plan_destroy(plan);
  free(times);
  return status;
}

/* The FFTW result of the same input, and the plan that knows its layout. */
static int reference_gather(rtm_traces_desc_t desc, const float *input, rtm_traces_plan_t **plan,
                            float **want) {
  int status = RTM_OK;
  desc.backend = "cpu";
  RTM_TRY(rtm_traces_plan_create(&desc, plan));
  *want = malloc(rtm_traces_gather_size(*plan) * sizeof **want);
  if (!*want) RTM_FAIL(RTM_ERR_NOMEM, "bench --traces: no memory for the reference gather");
  RTM_TRY(rtm_traces_run(*plan, input, *want));
fail:
  return status;
}

/* Worst relative L2 difference per output trace between got and want. */
static double worst_difference(const rtm_traces_plan_t *plan, const rtm_traces_desc_t *desc,
                               const float *got, const float *want) {
  double worst = 0.0;
  for (int i = 0; i < desc->n_inputs; ++i)
    for (int m = 0; m < desc->n_outputs; ++m) {
      size_t at = rtm_traces_gather_offset(plan, i, m);
      double num = 0.0, den = 0.0;
      for (int j = 0; j < desc->outputs[m].length; ++j) {
        double d = (double)got[at + j] - want[at + j];
        num += d * d;
        den += (double)want[at + j] * want[at + j];
      }
      double err = den > 0.0 ? sqrt(num / den) : sqrt(num);
      if (!(err <= worst)) worst = err;
    }
  return worst;
}

static const rtm_traces_pipeline_t pipelines[2] = {RTM_TRACES_GRAPH, RTM_TRACES_STREAMS};

/* One bench: the case, its buffers and what each of the pipelines measured. */
typedef struct {
  bench_options_t o;
  int *lengths;
  rtm_traces_output_t *outputs;
  float *input;
  rtm_traces_desc_t desc;
  size_t gather_n; /* samples in one result: every input's outputs */
  float *result, *want;
  rtm_traces_plan_t *reference;
  bench_result_t results[2];
  double worst[2];
  int ran[2];
} traces_bench_t;

/* Fresh noise in [-1, 1): never zeros, which would hide unwritten outputs. */
static void fill_noise(float *input, size_t count) {
  unsigned long long seed = (unsigned long long)time(NULL) | 1ULL;
  for (size_t j = 0; j < count; ++j) {
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    input[j] = (float)((double)(seed >> 11) / 4503599627370496.0 - 1.0);
  }
}

/* The output lengths spread over [min, max] on the input's window, the input noise and
 * the pipeline's description of them. */
static int make_case(traces_bench_t *t) {
  int status = RTM_OK;
  const bench_options_t *o = &t->o;
  const double dt = 1e-3, window = o->input_length * dt;
  t->lengths = malloc((size_t)o->outputs * sizeof *t->lengths);
  t->outputs = calloc((size_t)o->outputs, sizeof *t->outputs);
  t->input = malloc((size_t)o->inputs * o->input_length * sizeof *t->input);
  if (!t->lengths || !t->outputs || !t->input)
    RTM_FAIL(RTM_ERR_NOMEM, "bench --traces: out of memory");
  RTM_TRY(rtm_traces_spread_lengths(o->outputs, o->min_length, o->max_length, t->lengths));
  for (int m = 0; m < o->outputs; ++m) {
    t->outputs[m].length = t->lengths[m];
    t->outputs[m].dt_s = window / t->lengths[m];
  }
  fill_noise(t->input, (size_t)o->inputs * o->input_length);
  t->desc = (rtm_traces_desc_t){.backend = o->backend,
                                .n_inputs = o->inputs,
                                .input_length = o->input_length,
                                .input_dt_s = dt,
                                .outputs = t->outputs,
                                .n_outputs = o->outputs,
                                .streams = o->streams,
                                .device = o->device};
fail:
  return status;
}

/* Times each pipeline asked for and, unless --no-check, compares its last result with
 * the FFTW one. */
static int run_pipelines(traces_bench_t *t) {
  int status = RTM_OK;
  const bench_options_t *o = &t->o;
  printf("bench --traces: %d inputs x %d samples -> %d outputs each, lengths %d..%d, "
         "%d replays after %d warm-up runs\n",
         o->inputs, o->input_length, o->outputs, t->lengths[0], t->lengths[o->outputs - 1],
         o->replays, o->warmup);
  fflush(stdout);
  for (int m = 0; m < o->outputs; ++m)
    t->gather_n += (size_t)t->lengths[m];
  t->gather_n *= (size_t)o->inputs;
  t->result = malloc(t->gather_n * sizeof *t->result);
  if (!t->result) RTM_FAIL(RTM_ERR_NOMEM, "bench --traces: out of memory");
  int wanted[2] = {o->run_graph, o->run_streams};
  if (strcmp(o->backend, "cpu") == 0) { /* one cpu path, whichever pipeline was asked for */
    wanted[0] = 1;
    wanted[1] = 0;
  }
  if (o->check) RTM_TRY(reference_gather(t->desc, t->input, &t->reference, &t->want));
  for (int p = 0; p < 2; ++p) {
    if (!wanted[p]) continue;
    RTM_TRY(time_pipeline(o, t->desc, pipelines[p], t->input, t->result, &t->results[p]));
    if (o->check) t->worst[p] = worst_difference(t->reference, &t->desc, t->result, t->want);
    t->ran[p] = 1;
  }
fail:
  return status;
}

static const char *pipeline_label(const traces_bench_t *t, int p) {
  return strcmp(t->o.backend, "cpu") == 0 ? "cpu" : rtm_traces_pipeline_name(pipelines[p]);
}

static void print_results(const traces_bench_t *t) {
  const bench_options_t *o = &t->o;
  printf("\n%-9s %11s %11s %11s %13s %14s\n", "pipeline", "median_us", "p10_us", "p90_us",
         "inputs/s", "outputs/s");
  for (int p = 0; p < 2; ++p) {
    if (!t->ran[p]) continue;
    const bench_result_t *r = &t->results[p];
    printf("%-9s %11.1f %11.1f %11.1f %13.4g %14.4g\n", pipeline_label(t, p), r->median_us,
           r->p10_us, r->p90_us, o->inputs * 1e6 / r->median_us,
           (double)o->inputs * o->outputs * 1e6 / r->median_us);
  }
  if (t->ran[0] && t->results[0].have_nodes)
    printf("graph nodes: %zu (expected %zu)\n", t->results[0].nodes, t->results[0].expected_nodes);
  /* Every run copies the inputs in and the gather and stats out: a floor set by PCIe. */
  double h2d = (double)o->inputs * o->input_length * sizeof(float);
  double d2h =
      (double)t->gather_n * sizeof(float) + (double)o->inputs * o->outputs * 2 * sizeof(double);
  for (int p = 0; p < 2; ++p)
    if (t->ran[p] && strcmp(o->backend, "cuda") == 0)
      printf("%s: %.3g MB in + %.3g MB out per run = %.3g GB/s of host transfers at the median\n",
             rtm_traces_pipeline_name(pipelines[p]), h2d / 1e6, d2h / 1e6,
             (h2d + d2h) / (t->results[p].median_us * 1e3));
  if (t->ran[0] && t->ran[1])
    printf("graph speed-up over streams: %.2fx\n",
           t->results[1].median_us / t->results[0].median_us);
}

/* A line for each pipeline that ran; RTM_ERR_NUMERIC when one is off FFTW. */
static int check_results(const traces_bench_t *t) {
  int pass = 1;
  for (int p = 0; p < 2; ++p) {
    if (!t->ran[p]) continue;
    int ok = t->worst[p] <= CHECK_TOLERANCE;
    printf("check %s against FFTW: worst output rel L2 %.3g (tolerance %g): %s\n",
           pipeline_label(t, p), t->worst[p], CHECK_TOLERANCE, ok ? "PASS" : "FAIL");
    pass = pass && ok;
  }
  return pass ? RTM_OK : RTM_ERR_NUMERIC;
}

int rtm_cmd_bench_traces(int argc, char **argv) {
  int status = RTM_OK, help = 0;
  traces_bench_t t;
  memset(&t, 0, sizeof t);
  RTM_TRY(parse_options(argc, argv, &t.o, &help));
  if (help) {
    usage(stdout);
    return 0;
  }
#ifdef RTM3D_HAVE_CUDA_BACKEND
  if (strcmp(t.o.backend, "cuda") == 0) { /* no GPU: bench CONFIG's message, before any work */
    char device[512];
    int hopper = 0;
    RTM_TRY(rtm_bench_describe_device(t.o.device, device, sizeof device, &hopper));
  }
#endif
  RTM_TRY(make_case(&t));
  RTM_TRY(run_pipelines(&t));
  print_results(&t);
  if (t.o.check) RTM_TRY(check_results(&t));
fail:
  rtm_traces_plan_destroy(t.reference);
  free(t.want);
  free(t.result);
  free(t.input);
  free(t.outputs);
  free(t.lengths);
  return rtm_status_exit_code(status);
}
