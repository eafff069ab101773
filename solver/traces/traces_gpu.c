/* traces_gpu.c - host side of the CUDA trace pipeline: cuFFT plans (one R2C batched over
 * the inputs, one C2R per distinct output size batched over the outputs of that size), work
 * areas given explicitly, streams forked and joined with events, and the two ways to run:
 *
 *   streams  every run enqueues the stages (about one launch per inverse FFT group);
 *   graph    the same enqueue is captured once (stream capture on the origin stream, the
 *            worker streams forked into it), instantiated, uploaded, and each run is one
 *            cudaGraphLaunch. New inputs go into the same pinned staging buffer, which the
 *            graph's first node copies to the device; the per-output options live in device
 *            memory, so changing them needs no new capture.
 *
 * Everything the capture uses (plans, work areas, CUB temporary storage, buffers) is made
 * before it; nothing allocates or synchronizes inside it. */
#include <cuda_runtime.h>
#include <cufft.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtm_cuda_check.h"
#include "rtm_cuda_driver.h"
#include "rtm_status.h"
#include "traces_impl.h"

/* Worker streams, hence independent branches of the graph. On an H100 the talk's case
 * (100 inverse FFTs of batch 1) replays in 166, 124 and 101 us with 4, 8 and 16. */
#define DEFAULT_STREAMS 16

static const char *cufft_error_name(cufftResult r) {
  switch (r) {
  case CUFFT_SUCCESS: return "CUFFT_SUCCESS";
  case CUFFT_INVALID_PLAN: return "CUFFT_INVALID_PLAN";
  case CUFFT_ALLOC_FAILED: return "CUFFT_ALLOC_FAILED";
  case CUFFT_INVALID_TYPE: return "CUFFT_INVALID_TYPE";
  case CUFFT_INVALID_VALUE: return "CUFFT_INVALID_VALUE";
  case CUFFT_INTERNAL_ERROR: return "CUFFT_INTERNAL_ERROR";
  case CUFFT_EXEC_FAILED: return "CUFFT_EXEC_FAILED";
  case CUFFT_SETUP_FAILED: return "CUFFT_SETUP_FAILED";
  case CUFFT_INVALID_SIZE: return "CUFFT_INVALID_SIZE";
  case CUFFT_UNALIGNED_DATA: return "CUFFT_UNALIGNED_DATA";
  case CUFFT_NO_WORKSPACE: return "CUFFT_NO_WORKSPACE";
  case CUFFT_NOT_IMPLEMENTED: return "CUFFT_NOT_IMPLEMENTED";
  case CUFFT_NOT_SUPPORTED: return "CUFFT_NOT_SUPPORTED";
  default: return "cuFFT error";
  }
}

#define CUFFT_TRY(call)                                                                            \
  do {                                                                                             \
    cufftResult cufft_res_ = (call);                                                               \
    if (cufft_res_ != CUFFT_SUCCESS) {                                                             \
      rtm_log_error("%s:%d: %s failed: %s (%d)", __FILE__, __LINE__, #call,                        \
                    cufft_error_name(cufft_res_), (int)cufft_res_);                                \
      status = cufft_res_ == CUFFT_ALLOC_FAILED ? RTM_ERR_NOMEM : RTM_ERR_DEVICE;                  \
      goto fail;                                                                                   \
    }                                                                                              \
  } while (0)

typedef struct {
  int device;
  char device_name[256];
  int n_workers;       /* worker streams for the inverse FFTs */
  cudaStream_t origin; /* input copy, R2C, spread, reduce, merge, result copy */
  cudaStream_t *workers;
  cudaEvent_t fork;
  cudaEvent_t *joins; /* [n_workers] */
  cufftHandle forward;
  cufftHandle *inverse; /* [n_groups] */
  int forward_made;
  int *inverse_made;
  int *order;                      /* groups, largest first: the enqueue order */
  rtm_allocation_t d_input;        /* float [n_inputs][fft_length] */
  rtm_allocation_t d_spectrum_in;  /* cufftComplex [n_inputs][fft_length / 2 + 1] */
  rtm_allocation_t d_spectrum_out; /* cufftComplex, groups */
  rtm_allocation_t d_real;         /* float, groups */
  rtm_allocation_t d_result;       /* gather floats, then (peak, rms) doubles per trace */
  rtm_allocation_t d_traces;       /* rtm_traces_trace_t [n_traces] */
  rtm_allocation_t d_peak_energy;  /* rtm_traces_peak_energy_t [n_traces] */
  rtm_allocation_t d_temp;         /* CUB temporary storage */
  rtm_allocation_t *work;          /* cuFFT work areas: [0] origin, [1 + w] worker w */
  size_t temp_bytes;
  size_t stats_offset; /* bytes from the start of the result to the stats */
  size_t result_bytes;
  rtm_allocation_t h_input_pinned;  /* staging, float [n_inputs][input_length] */
  rtm_allocation_t h_result_pinned; /* mirror of d_result */
  float *h_input;                   /* = h_input_pinned.ptr */
  void *h_result;                   /* = h_result_pinned.ptr */
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  size_t nodes, expected_nodes;
} cuda_state_t;

static void cuda_destroy(rtm_traces_plan_t *plan) {
  cuda_state_t *s = plan->state;
  if (!s) return;
  cudaSetDevice(s->device);
  if (s->origin) cudaStreamSynchronize(s->origin);
  if (s->exec) cudaGraphExecDestroy(s->exec);
  if (s->graph) cudaGraphDestroy(s->graph);
  if (s->inverse_made)
    for (int g = 0; g < plan->n_groups; ++g)
      if (s->inverse_made[g]) cufftDestroy(s->inverse[g]);
  if (s->forward_made) cufftDestroy(s->forward);
  if (s->work)
    for (int w = 0; w <= s->n_workers; ++w)
      rtm_mem_free(&s->work[w]);
  rtm_mem_free(&s->d_temp);
  rtm_mem_free(&s->d_peak_energy);
  rtm_mem_free(&s->d_traces);
  rtm_mem_free(&s->d_result);
  rtm_mem_free(&s->d_real);
  rtm_mem_free(&s->d_spectrum_out);
  rtm_mem_free(&s->d_spectrum_in);
  rtm_mem_free(&s->d_input);
  rtm_mem_free(&s->h_result_pinned);
  rtm_mem_free(&s->h_input_pinned);
  if (s->joins)
    for (int w = 0; w < s->n_workers; ++w)
      if (s->joins[w]) cudaEventDestroy(s->joins[w]);
  if (s->fork) cudaEventDestroy(s->fork);
  if (s->workers)
    for (int w = 0; w < s->n_workers; ++w)
      if (s->workers[w]) cudaStreamDestroy(s->workers[w]);
  if (s->origin) cudaStreamDestroy(s->origin);
  free(s->joins);
  free(s->workers);
  free(s->work);
  free(s->order);
  free(s->inverse_made);
  free(s->inverse);
  free(s);
  plan->state = NULL;
}

/* Refuses what cannot fit in the device's free memory, before allocating it. */
static int check_device_memory(const rtm_traces_plan_t *plan, const cuda_state_t *s,
                               size_t extra_bytes) {
  int status = RTM_OK;
  size_t free_bytes = 0, total_bytes = 0;
  size_t layout = rtm_traces_layout_bytes(plan);
  RTM_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (layout == (size_t)-1 || layout + extra_bytes < layout || layout + extra_bytes > free_bytes)
    RTM_FAIL(RTM_ERR_NOMEM,
             "traces: %d inputs x %d samples to %d outputs need %.3g GiB of device memory "
             "(inputs, spectra, inverse FFTs, gather%s); device %d (%s) has %.3g GiB free of "
             "%.3g GiB",
             plan->desc.n_inputs, plan->desc.input_length, plan->desc.n_outputs,
             layout == (size_t)-1 ? INFINITY : (double)(layout + extra_bytes) / 1073741824.0,
             extra_bytes ? ", FFT work areas" : "", s->device, s->device_name,
             free_bytes / 1073741824.0, total_bytes / 1073741824.0);
fail:
  return status;
}

/* Longest-processing-time assignment of the inverse FFT groups to the worker streams, work
 * counted as count * P; the enqueue order is largest first so the long FFTs start early. */
static void assign_streams(rtm_traces_plan_t *plan, cuda_state_t *s) {
  double *load = calloc((size_t)s->n_workers, sizeof *load);
  for (int g = 0; g < plan->n_groups; ++g)
    s->order[g] = g;
  for (int i = 1; i < plan->n_groups; ++i) { /* insertion sort, descending work */
    int g = s->order[i], j = i;
    double work = (double)plan->groups[g].count * plan->groups[g].fft_size;
    while (j > 0 &&
           (double)plan->groups[s->order[j - 1]].count * plan->groups[s->order[j - 1]].fft_size <
               work) {
      s->order[j] = s->order[j - 1];
      --j;
    }
    s->order[j] = g;
  }
  for (int i = 0; i < plan->n_groups; ++i) {
    rtm_traces_group_t *gr = &plan->groups[s->order[i]];
    int best = i % s->n_workers;
    if (load)
      for (int w = 0; w < s->n_workers; ++w)
        if (load[w] < load[best]) best = w;
    gr->stream = best;
    if (load) load[best] += (double)gr->count * gr->fft_size;
  }
  free(load);
}

/* Stages 1 to 3 on the inputs in d_input: forward FFT, spread, the inverse FFTs on the
 * worker streams joined back into the origin stream. */
static int enqueue_transforms(rtm_traces_plan_t *plan) {
  int status = RTM_OK;
  cuda_state_t *s = plan->state;
  cufftComplex *spectrum_out = s->d_spectrum_out.ptr;
  float *real = s->d_real.ptr;
  CUFFT_TRY(cufftExecR2C(s->forward, s->d_input.ptr, s->d_spectrum_in.ptr));
  RTM_TRY(rtm_traces_cuda_spread(s->d_traces.ptr, plan->n_traces, s->d_spectrum_in.ptr,
                                 spectrum_out, s->origin));
  RTM_CUDA_TRY(cudaEventRecord(s->fork, s->origin));
  for (int w = 0; w < s->n_workers; ++w)
    RTM_CUDA_TRY(cudaStreamWaitEvent(s->workers[w], s->fork, 0));
  for (int i = 0; i < plan->n_groups; ++i) {
    const rtm_traces_group_t *gr = &plan->groups[s->order[i]];
    CUFFT_TRY(cufftExecC2R(s->inverse[s->order[i]], spectrum_out + gr->spectrum_offset,
                           real + gr->real_offset));
  }
  for (int w = 0; w < s->n_workers; ++w) {
    RTM_CUDA_TRY(cudaEventRecord(s->joins[w], s->workers[w]));
    RTM_CUDA_TRY(cudaStreamWaitEvent(s->origin, s->joins[w], 0));
  }
fail:
  return status;
}

/* The pipeline, enqueued on the streams: run directly (streams) or captured (graph). */
static int enqueue(rtm_traces_plan_t *plan) {
  int status = RTM_OK;
  cuda_state_t *s = plan->state;
  float *real = s->d_real.ptr;
  const size_t row = (size_t)plan->desc.input_length * sizeof(float);

  /* the inputs only: their zero-padding to fft_length stays on the device (zero-filled at
   * allocation; the forward FFT is out of place) */
  RTM_CUDA_TRY(cudaMemcpy2DAsync(s->d_input.ptr, (size_t)plan->fft_length * sizeof(float),
                                 s->h_input, row, row, (size_t)plan->desc.n_inputs,
                                 cudaMemcpyHostToDevice, s->origin));
  RTM_TRY(enqueue_transforms(plan));
  RTM_TRY(rtm_traces_cuda_reduce(s->d_traces.ptr, plan->n_traces, real, s->d_peak_energy.ptr,
                                 s->d_temp.ptr, s->temp_bytes, s->origin));
  RTM_TRY(rtm_traces_cuda_merge(s->d_traces.ptr, plan->n_traces, real, s->d_peak_energy.ptr,
                                s->d_result.ptr,
                                (double *)((char *)s->d_result.ptr + s->stats_offset), s->origin));
  RTM_CUDA_TRY(cudaMemcpyAsync(s->h_result, s->d_result.ptr, s->result_bytes,
                               cudaMemcpyDeviceToHost, s->origin));
fail:
  return status;
}

/* Ends a capture left open by a failure, so that the stream can be used again. */
static void abort_capture(cudaStream_t stream) {
  enum cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &capturing) == cudaSuccess &&
      capturing != cudaStreamCaptureStatusNone) {
    cudaGraph_t graph = NULL;
    cudaStreamEndCapture(stream, &graph);
    if (graph) cudaGraphDestroy(graph);
  }
  cudaGetLastError();
}

/* Ends a capture and counts its nodes; a library call that left none ran outside it. */
static int end_solo_capture(cudaStream_t stream, const char *what, size_t *count) {
  int status = RTM_OK;
  cudaGraph_t graph = NULL;
  RTM_CUDA_TRY(cudaStreamEndCapture(stream, &graph));
  RTM_CUDA_TRY(cudaGraphGetNodes(graph, NULL, count));
  if (*count == 0)
    RTM_FAIL(RTM_ERR_INTERNAL,
             "traces: %s left no node in a stream capture: it ran outside "
             "its stream",
             what);
fail:
  if (graph) cudaGraphDestroy(graph);
  return status;
}

/* Nodes the whole graph must have: 4 of ours (input copy, spread, merge, result copy) plus
 * what each library call leaves when captured alone on its own stream. */
static int count_expected_nodes(rtm_traces_plan_t *plan, size_t *expected) {
  int status = RTM_OK;
  cuda_state_t *s = plan->state;
  cudaStream_t capturing = NULL;
  size_t count = 0, total = 4;
  char what[96];

  capturing = s->origin;
  RTM_CUDA_TRY(cudaStreamBeginCapture(capturing, cudaStreamCaptureModeThreadLocal));
  CUFFT_TRY(cufftExecR2C(s->forward, s->d_input.ptr, s->d_spectrum_in.ptr));
  capturing = NULL;
  RTM_TRY(end_solo_capture(s->origin, "cufftExecR2C", &count));
  total += count;
  for (int g = 0; g < plan->n_groups; ++g) {
    const rtm_traces_group_t *gr = &plan->groups[g];
    capturing = s->workers[gr->stream];
    RTM_CUDA_TRY(cudaStreamBeginCapture(capturing, cudaStreamCaptureModeThreadLocal));
    CUFFT_TRY(cufftExecC2R(s->inverse[g],
                           (cufftComplex *)s->d_spectrum_out.ptr + gr->spectrum_offset,
                           (float *)s->d_real.ptr + gr->real_offset));
    capturing = NULL;
    snprintf(what, sizeof what, "cufftExecC2R of size %d x %d", gr->fft_size, gr->count);
    RTM_TRY(end_solo_capture(s->workers[gr->stream], what, &count));
    total += count;
  }
  capturing = s->origin;
  RTM_CUDA_TRY(cudaStreamBeginCapture(capturing, cudaStreamCaptureModeThreadLocal));
  RTM_TRY(rtm_traces_cuda_reduce(s->d_traces.ptr, plan->n_traces, s->d_real.ptr,
                                 s->d_peak_energy.ptr, s->d_temp.ptr, s->temp_bytes, s->origin));
  capturing = NULL;
  RTM_TRY(end_solo_capture(s->origin, "cub::DeviceSegmentedReduce", &count));
  total += count;
  *expected = total;
  return RTM_OK;
fail:
  if (capturing) abort_capture(capturing);
  return status;
}

static int capture_graph(rtm_traces_plan_t *plan) {
  int status = RTM_OK;
  cuda_state_t *s = plan->state;
  RTM_TRY(count_expected_nodes(plan, &s->expected_nodes));
  RTM_CUDA_TRY(cudaStreamBeginCapture(s->origin, cudaStreamCaptureModeThreadLocal));
  status = enqueue(plan);
  if (status != RTM_OK) {
    abort_capture(s->origin);
    goto fail;
  }
  RTM_CUDA_TRY(cudaStreamEndCapture(s->origin, &s->graph));
  RTM_CUDA_TRY(cudaGraphGetNodes(s->graph, NULL, &s->nodes));
  RTM_CUDA_TRY(cudaGraphInstantiate(&s->exec, s->graph, 0));
  RTM_CUDA_TRY(cudaGraphUpload(s->exec, s->origin));
  RTM_CUDA_TRY(cudaStreamSynchronize(s->origin));
fail:
  return status;
}

static int make_plans(rtm_traces_plan_t *plan, cuda_state_t *s, size_t *work_bytes) {
  int status = RTM_OK;
  long long n = plan->fft_length;
  size_t bytes = 0;
  CUFFT_TRY(cufftCreate(&s->forward));
  s->forward_made = 1;
  CUFFT_TRY(cufftSetAutoAllocation(s->forward, 0));
  CUFFT_TRY(cufftMakePlanMany64(s->forward, 1, &n, NULL, 1, 0, NULL, 1, 0, CUFFT_R2C,
                                plan->desc.n_inputs, &bytes));
  CUFFT_TRY(cufftSetStream(s->forward, s->origin));
  work_bytes[0] = bytes;
  for (int g = 0; g < plan->n_groups; ++g) {
    const rtm_traces_group_t *gr = &plan->groups[g];
    long long p = gr->fft_size;
    CUFFT_TRY(cufftCreate(&s->inverse[g]));
    s->inverse_made[g] = 1;
    CUFFT_TRY(cufftSetAutoAllocation(s->inverse[g], 0));
    CUFFT_TRY(cufftMakePlanMany64(s->inverse[g], 1, &p, NULL, 1, 0, NULL, 1, 0, CUFFT_C2R,
                                  gr->count, &bytes));
    CUFFT_TRY(cufftSetStream(s->inverse[g], s->workers[gr->stream]));
    if (bytes > work_bytes[1 + gr->stream]) work_bytes[1 + gr->stream] = bytes;
  }
fail:
  return status;
}

static int alloc_in(const char *strategy, rtm_traces_plan_t *plan, size_t bytes, const char *label,
                    rtm_allocation_t *out) {
  cuda_state_t *s = plan->state;
  rtm_mem_request_t request = {.device = s->device, .require_compression = 0};
  return rtm_mem_alloc(strategy, bytes ? bytes : 1, label, &request, plan->desc.ledger, out);
}

static int alloc_device(rtm_traces_plan_t *plan, size_t bytes, const char *label,
                        rtm_allocation_t *out) {
  return alloc_in("device", plan, bytes, label, out);
}

static int cuda_create(rtm_traces_plan_t *plan) {
  int status = RTM_OK, count = 0;
  char why[512];
  const rtm_traces_desc_t *d = &plan->desc;
  size_t *work_bytes = NULL, work_total = 0;
  struct cudaDeviceProp prop;
  cuda_state_t *s = calloc(1, sizeof *s);
  if (!s) RTM_FAIL(RTM_ERR_NOMEM, "traces: no host memory for the cuda state");
  plan->state = s;
  if (rtm_cuda_device_count(&count, why, sizeof why) != RTM_OK)
    RTM_FAIL(RTM_ERR_UNSUPPORTED, "traces: backend cuda: no CUDA device: %s", why);
  s->device = d->device;
  if (s->device == RTM_TRACES_CURRENT_DEVICE) RTM_CUDA_TRY(cudaGetDevice(&s->device));
  if (s->device < 0 || s->device >= count)
    RTM_FAIL(RTM_ERR_INPUT, "traces: device %d does not exist (this machine has %d CUDA device%s)",
             s->device, count, count == 1 ? "" : "s");
  RTM_CUDA_TRY(cudaSetDevice(s->device));
  RTM_CUDA_TRY(cudaGetDeviceProperties(&prop, s->device));
  snprintf(s->device_name, sizeof s->device_name, "%s", prop.name);
  RTM_TRY(check_device_memory(plan, s, 0));

  s->n_workers = d->streams ? d->streams : DEFAULT_STREAMS;
  if (s->n_workers > plan->n_groups) s->n_workers = plan->n_groups;
  s->workers = calloc((size_t)s->n_workers, sizeof *s->workers);
  s->joins = calloc((size_t)s->n_workers, sizeof *s->joins);
  s->work = calloc((size_t)s->n_workers + 1, sizeof *s->work);
  work_bytes = calloc((size_t)s->n_workers + 1, sizeof *work_bytes);
  s->inverse = calloc((size_t)plan->n_groups, sizeof *s->inverse);
  s->inverse_made = calloc((size_t)plan->n_groups, sizeof *s->inverse_made);
  s->order = calloc((size_t)plan->n_groups, sizeof *s->order);
  if (!s->workers || !s->joins || !s->work || !work_bytes || !s->inverse || !s->inverse_made ||
      !s->order)
    RTM_FAIL(RTM_ERR_NOMEM, "traces: no host memory for the cuda state");
  RTM_CUDA_TRY(cudaStreamCreateWithFlags(&s->origin, cudaStreamNonBlocking));
  RTM_CUDA_TRY(cudaEventCreateWithFlags(&s->fork, cudaEventDisableTiming));
  for (int w = 0; w < s->n_workers; ++w) {
    RTM_CUDA_TRY(cudaStreamCreateWithFlags(&s->workers[w], cudaStreamNonBlocking));
    RTM_CUDA_TRY(cudaEventCreateWithFlags(&s->joins[w], cudaEventDisableTiming));
  }
  assign_streams(plan, s);
  RTM_TRY(make_plans(plan, s, work_bytes));
  RTM_TRY(rtm_traces_cuda_reduce_bytes(plan->n_traces, &s->temp_bytes));
  for (int w = 0; w <= s->n_workers; ++w)
    work_total += work_bytes[w];
  RTM_TRY(check_device_memory(plan, s, work_total + s->temp_bytes));

  size_t input_bytes = (size_t)d->n_inputs * plan->fft_length * sizeof(float);
  s->stats_offset = (plan->gather_elems * sizeof(float) + 7) / 8 * 8;
  s->result_bytes = s->stats_offset + (size_t)plan->n_traces * 2 * sizeof(double);
  RTM_TRY(alloc_device(plan, input_bytes, "traces input", &s->d_input));
  RTM_TRY(alloc_device(plan, plan->spectrum_in_elems * sizeof(cufftComplex), "traces input spectra",
                       &s->d_spectrum_in));
  RTM_TRY(alloc_device(plan, plan->spectrum_out_elems * sizeof(cufftComplex),
                       "traces output spectra", &s->d_spectrum_out));
  RTM_TRY(alloc_device(plan, plan->real_elems * sizeof(float), "traces inverse FFTs", &s->d_real));
  RTM_TRY(alloc_device(plan, s->result_bytes, "traces gather", &s->d_result));
  RTM_TRY(alloc_device(plan, (size_t)plan->n_traces * sizeof(rtm_traces_trace_t), "traces layout",
                       &s->d_traces));
  RTM_TRY(alloc_device(plan, (size_t)plan->n_traces * sizeof(rtm_traces_peak_energy_t),
                       "traces peak and energy", &s->d_peak_energy));
  RTM_TRY(alloc_device(plan, s->temp_bytes, "traces CUB temporary", &s->d_temp));
  for (int w = 0; w <= s->n_workers; ++w)
    RTM_TRY(alloc_device(plan, work_bytes[w], "traces cuFFT work area", &s->work[w]));
  CUFFT_TRY(cufftSetWorkArea(s->forward, s->work[0].ptr));
  for (int g = 0; g < plan->n_groups; ++g)
    CUFFT_TRY(cufftSetWorkArea(s->inverse[g], s->work[1 + plan->groups[g].stream].ptr));

  plan->input_pitch = d->input_length; /* dense on the host, padded by the copy */
  RTM_CUDA_TRY(cudaMemcpy(s->d_traces.ptr, plan->traces,
                          (size_t)plan->n_traces * sizeof(rtm_traces_trace_t),
                          cudaMemcpyHostToDevice));
  if (d->device_io) { /* no host side, and nothing to capture */
    free(work_bytes);
    return RTM_OK;
  }
  RTM_TRY(alloc_in("pinned", plan, (size_t)d->n_inputs * d->input_length * sizeof(float),
                   "traces input staging", &s->h_input_pinned));
  RTM_TRY(alloc_in("pinned", plan, s->result_bytes, "traces gather staging", &s->h_result_pinned));
  s->h_input = s->h_input_pinned.ptr;
  s->h_result = s->h_result_pinned.ptr;

  /* One eager run loads every module and lets cuFFT and CUB finish their lazy set-up
   * outside any capture. */
  RTM_TRY(enqueue(plan));
  RTM_CUDA_TRY(cudaStreamSynchronize(s->origin));
  if (d->pipeline == RTM_TRACES_GRAPH) RTM_TRY(capture_graph(plan));
  free(work_bytes);
  return RTM_OK;
fail:
  free(work_bytes);
  cuda_destroy(plan);
  return status;
}

static int cuda_update_options(rtm_traces_plan_t *plan) {
  int status = RTM_OK;
  cuda_state_t *s = plan->state;
  RTM_CUDA_TRY(cudaSetDevice(s->device));
  RTM_CUDA_TRY(cudaStreamSynchronize(s->origin));
  RTM_CUDA_TRY(cudaMemcpy(s->d_traces.ptr, plan->traces,
                          (size_t)plan->n_traces * sizeof(rtm_traces_trace_t),
                          cudaMemcpyHostToDevice));
fail:
  return status;
}

static float *cuda_input_buffer(rtm_traces_plan_t *plan) {
  return ((cuda_state_t *)plan->state)->h_input;
}

static const float *cuda_result(const rtm_traces_plan_t *plan) {
  return ((const cuda_state_t *)plan->state)->h_result;
}

static int cuda_run(rtm_traces_plan_t *plan) {
  int status = RTM_OK;
  cuda_state_t *s = plan->state;
  RTM_CUDA_TRY(cudaSetDevice(s->device));
  if (s->exec)
    RTM_CUDA_TRY(cudaGraphLaunch(s->exec, s->origin));
  else
    RTM_TRY(enqueue(plan));
  RTM_CUDA_TRY(cudaStreamSynchronize(s->origin));
  const double *stats = (const double *)((const char *)s->h_result + s->stats_offset);
  for (int o = 0; o < plan->n_traces; ++o) {
    plan->peaks[o] = stats[2 * (size_t)o];
    plan->rms[o] = stats[2 * (size_t)o + 1];
  }
fail:
  return status;
}

/* Device to device: the inputs into d_input's padded rows, the transforms, and the kept
 * samples of each output (one a input, one group: rows fft_size apart in d_real) out; no
 * reduction or merge (the plan is not normalised: the merge would multiply by 1). */
static int cuda_run_device(rtm_traces_plan_t *plan, const float *in, size_t in_pitch, int rows,
                           float *out, size_t out_pitch) {
  int status = RTM_OK;
  cuda_state_t *s = plan->state;
  const rtm_traces_trace_t *t = &plan->traces[0];
  const size_t row = (size_t)plan->desc.input_length * sizeof(float);
  RTM_CUDA_TRY(cudaSetDevice(s->device));
  RTM_CUDA_TRY(cudaMemcpy2DAsync(s->d_input.ptr, (size_t)plan->fft_length * sizeof(float), in,
                                 in_pitch * sizeof(float), row, (size_t)rows,
                                 cudaMemcpyDeviceToDevice, s->origin));
  RTM_TRY(enqueue_transforms(plan));
  RTM_CUDA_TRY(cudaMemcpy2DAsync(
      out, out_pitch * sizeof(float), (const float *)s->d_real.ptr + t->real_offset,
      (size_t)t->fft_size * sizeof(float), (size_t)t->length * sizeof(float), (size_t)rows,
      cudaMemcpyDeviceToDevice, s->origin));
  RTM_CUDA_TRY(cudaStreamSynchronize(s->origin));
fail:
  return status;
}

static int cuda_node_count(const rtm_traces_plan_t *plan, size_t *nodes, size_t *expected) {
  const cuda_state_t *s = plan->state;
  if (!s->graph) {
    rtm_log_error("traces: the streams pipeline builds no graph (traces.pipeline = graph does)");
    return RTM_ERR_UNSUPPORTED;
  }
  *nodes = s->nodes;
  *expected = s->expected_nodes;
  return RTM_OK;
}

static void cuda_describe(const rtm_traces_plan_t *plan, char *text, size_t size) {
  const cuda_state_t *s = plan->state;
  snprintf(text, size,
           "cuda (device %d, %s): pipeline %s, %d inputs x %d samples (fft %d), "
           "%d outputs each, %d inverse FFT sizes on %d streams",
           s->device, s->device_name, rtm_traces_pipeline_name(plan->desc.pipeline),
           plan->desc.n_inputs, plan->desc.input_length, plan->fft_length, plan->desc.n_outputs,
           plan->n_groups, s->n_workers);
}

const rtm_traces_backend_t rtm_traces_cuda = {
    .name = "cuda",
    .create = cuda_create,
    .update_options = cuda_update_options,
    .input_buffer = cuda_input_buffer,
    .run = cuda_run,
    .result = cuda_result,
    .run_device = cuda_run_device,
    .node_count = cuda_node_count,
    .describe = cuda_describe,
    .destroy = cuda_destroy,
};

int rtm_traces_cuda_dispersion_staged(rtm_traces_warp_t warp, int count, int n, double dt,
                                      int padding, float *traces) {
  int status = RTM_OK;
  float *device = NULL;
  const size_t bytes = (size_t)count * (size_t)n * sizeof(float);
  RTM_CUDA_TRY(cudaMalloc((void **)&device, bytes));
  RTM_CUDA_TRY(cudaMemcpy(device, traces, bytes, cudaMemcpyHostToDevice));
  RTM_TRY(rtm_traces_dispersion_device_padded(warp, count, n, (size_t)n, dt, padding, device));
  RTM_CUDA_TRY(cudaMemcpy(traces, device, bytes, cudaMemcpyDeviceToHost));
fail:
  cudaFree(device);
  return status;
}

int rtm_traces_current_device(void) {
  int device = -1;
  return cudaGetDevice(&device) == cudaSuccess ? device : -1;
}

int rtm_traces_use_device(int device) {
  int status = RTM_OK;
  if (device >= 0) RTM_CUDA_TRY(cudaSetDevice(device));
fail:
  return status;
}
