/* rtm_traces.h - solver/traces, the trace pipeline (traces.c: validation and layout;
 * traces_fftw.c: the CPU reference; traces_gpu.c, traces_cuda.cu: cuFFT + CUB under a CUDA
 * graph): one or more input traces spread to many output traces
 * of other lengths and sample intervals, on the GPU (cuFFT + CUB, optionally captured once
 * as a CUDA graph and replayed) or on the CPU (FFTW, the reference).
 *
 * Stages, identical on both backends:
 *   1. X = R2C(x): forward real FFT of every input, zero-padded in time to fft_length
 *      samples (window T = fft_length * input_dt);
 *   2. spread: output bin k of output m has frequency f = k / T, the same as input bin k, so
 *        Y_k = X_k / fft_length * C(f) * B(f) * (i 2 pi f if derivative) * exp(-i 2 pi f shift)
 *      C is a cosine taper from 1 at (1 - taper_fraction) fc to 0 at fc, with
 *      fc = min(input Nyquist, output Nyquist); B the optional band-pass trapezoid;
 *   3. y = C2R(Y) of size P = T / dt_m per output (one plan per distinct P, outputs of one
 *      size batched); the output keeps the first `length` <= P samples;
 *   4. per output: peak |y| and RMS (sqrt of the mean of y^2, summed in double);
 *   5. normalisation (none, peak -> 1, RMS -> 1) and merge of every output into one gather
 *      [input][output][length_m].
 *
 * Resampling rule: an output covers the window of the (zero-padded) input, so its
 * P = fft_length * input_dt / dt_m must be a whole number (within 1e-6 samples); length
 * may be shorter than P (truncation in time). The 1 / fft_length scale keeps the amplitude
 * of a sinusoid; a sinusoid with a whole number of cycles in T and a frequency below the
 * taper of both Nyquists is reproduced exactly (to float rounding). The shift is circular
 * over T. An output whose Nyquist is more than twice the input's draws a warning: nothing
 * above the input's Nyquist can come back. */
#ifndef RTM_TRACES_H
#define RTM_TRACES_H

#include <stddef.h>

#include "rtm_config.h"
#include "rtm_memory.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  RTM_TRACES_NORM_NONE = 0,
  RTM_TRACES_NORM_PEAK, /* divide by the peak |y|: the output's peak becomes 1 */
  RTM_TRACES_NORM_RMS   /* divide by the RMS: the output's RMS becomes 1 */
} rtm_traces_norm_t;

/* A frequency warp of the input spectrum (stage 2), for a leapfrog's time dispersion
 * (Koene, Robertsson, Broggini and Andersson 2018, Geophys. J. Int. 213(1)): the second-order
 * time step dt turns the equation's omega^2 into psi(omega)^2, psi = (2 / dt) sin(omega dt /
 * 2), so a leapfrog run at frequency omega gives the exact response at psi(omega).
 *   FORWARD: output frequency f takes the input at sin(pi f dt) / (pi dt): a source wavelet
 *            warped so, the run's output at omega is the exact output at psi(omega);
 *   INVERSE: output frequency f takes the input at asin(pi f dt) / (pi dt) (0 above
 *            1 / (pi dt)): recorded traces back from psi(omega) to omega.
 * The input spectrum is interpolated between bins (cubic, about the input's middle sample),
 * so the input should be zero-padded (fft_length) well past its length:
 * rtm_traces_dispersion pads 8x or a little more (a power of two or the next 2-3-5-7-smooth
 * length). */
typedef enum {
  RTM_TRACES_WARP_NONE = 0,
  RTM_TRACES_WARP_FORWARD,
  RTM_TRACES_WARP_INVERSE
} rtm_traces_warp_t;

typedef enum {
  RTM_TRACES_GRAPH = 0, /* capture the pipeline once as a CUDA graph, replay it per run */
  RTM_TRACES_STREAMS    /* launch every stage directly on the streams, each run */
} rtm_traces_pipeline_t;

/* One output trace (the same list applies to every input). */
typedef struct {
  int length;        /* samples kept, 1 <= length <= P */
  double dt_s;       /* sample interval; P = fft_length * input_dt / dt_s whole */
  double band_hz[4]; /* f1 <= f2 <= f3 <= f4, f1 < f4: 0 below f1, cosine ramp up to
                        f2, 1 to f3, cosine ramp down to 0 at f4; all 0 = off */
  int derivative;    /* non-zero: time derivative (multiply by i omega) */
  double shift_s;    /* delay: y(t) = x(t - shift), circular over the window */
  rtm_traces_norm_t normalisation;
  rtm_traces_warp_t warp; /* before the other factors; NONE = off */
  double warp_dt_s;       /* the leapfrog's dt the warp undoes or anticipates */
  double warp_origin_s;   /* absolute time of the input's first sample: the warp dilates
                             time about 0, so a piece of a longer trace (a segment,
                             rtm_traces_dispersion_segments) warps as in place; 0 = the
                             input starts at time 0 */
} rtm_traces_output_t;

/* rtm_traces_desc_t.device: the CUDA device current on the calling thread when the plan is
 * made (a run's backend leaves its rank's GPU current) */
enum { RTM_TRACES_CURRENT_DEVICE = -1 };

typedef struct {
  const char *backend;            /* "cpu" (FFTW) or "cuda" */
  rtm_traces_pipeline_t pipeline; /* cuda only; cpu ignores it */
  int n_inputs;                   /* input traces per run */
  int input_length;               /* samples per input trace */
  double input_dt_s;
  int fft_length;                     /* 0 = input_length; larger zero-pads the inputs in time */
  const rtm_traces_output_t *outputs; /* copied by plan_create */
  int n_outputs;                      /* output traces per input */
  double taper_fraction;              /* width of the cut-off taper over fc; 0 = 0.1 */
  int streams;                        /* cuda: concurrent streams for the inverse FFTs; 0 = 16 */
  int device;               /* cuda ordinal; RTM_TRACES_CURRENT_DEVICE: the caller's current one */
  rtm_mem_ledger_t *ledger; /* may be NULL */
  int device_io;            /* cuda, streams: runs on device memory only (rtm_traces_run_device):
                               no host staging, no eager run at creation */
} rtm_traces_desc_t;

typedef struct rtm_traces_plan rtm_traces_plan_t;

/* Validates the description (errors name the output and the value), lays out the buffers,
 * makes every FFT plan and allocates everything; for pipeline = graph the graph is
 * captured here, after one eager run that loads every module. Sizes that cannot fit in
 * memory are refused before any allocation, naming the bytes needed and available. */
int rtm_traces_plan_create(const rtm_traces_desc_t *desc, rtm_traces_plan_t **plan);

/* Makes *plan serve desc: with the same backend, pipeline, counts and sizes only the
 * per-output options (band, derivative, shift, normalisation) are replaced and a captured
 * graph is kept (it reads them from device memory); otherwise the plan is rebuilt. */
int rtm_traces_plan_update(rtm_traces_plan_t **plan, const rtm_traces_desc_t *desc);

void rtm_traces_plan_destroy(rtm_traces_plan_t *plan);

/* One run. inputs: [n_inputs][input_length] host samples, or NULL to use what the caller
 * wrote into rtm_traces_input_buffer(). gather: [n_inputs][sum of output lengths] host
 * samples, or NULL to leave the result in rtm_traces_result() only. */
int rtm_traces_run(rtm_traces_plan_t *plan, const float *inputs, float *gather);

/* The plan's input staging buffer (pinned host memory for cuda): input i starts at
 * i * *pitch floats; samples past input_length stay zero and must be left so. */
float *rtm_traces_input_buffer(rtm_traces_plan_t *plan, size_t *pitch);
/* The gather of the last run (pinned host memory for cuda); valid until the next run. */
const float *rtm_traces_result(const rtm_traces_plan_t *plan);

/* Samples in one run's gather, and where output m of input i starts in it. */
size_t rtm_traces_gather_size(const rtm_traces_plan_t *plan);
size_t rtm_traces_gather_offset(const rtm_traces_plan_t *plan, int input, int output);

/* Peak |y| and RMS of each output of the last run, before normalisation, in gather order
 * [input][output]. Either array may be NULL. */
int rtm_traces_stats(const rtm_traces_plan_t *plan, double *peaks, double *rms);

/* pipeline = graph: nodes of the captured graph (cudaGraphGetNodes) and the count it
 * should have: 4 own nodes (input copy, spread, merge, result copy) plus what each
 * library call (the forward FFT, every inverse FFT group, the CUB reduction) leaves when
 * captured alone. A library call that escaped the capture makes nodes < expected.
 * RTM_ERR_UNSUPPORTED for cpu or streams. */
int rtm_traces_graph_node_count(const rtm_traces_plan_t *plan, size_t *nodes, size_t *expected);

/* Distinct inverse FFT sizes (one plan each). */
int rtm_traces_fft_groups(const rtm_traces_plan_t *plan);

/* One line naming the backend, device and layout, for logs and benchmarks. */
void rtm_traces_describe(const rtm_traces_plan_t *plan, char *text, size_t size);

/* count distinct lengths spread geometrically over [min_length, max_length], each the
 * nearest free 2-3-5-7-smooth size (the sizes FFT libraries run fastest) when one is near,
 * else the nearest free integer: the benchmark's "outputs between 128 and 8192". */
int rtm_traces_spread_lengths(int count, int min_length, int max_length, int *lengths);

/* "graph" | "streams"; anything else is RTM_ERR_CONFIG naming the known values. */
int rtm_traces_parse_pipeline(const char *name, rtm_traces_pipeline_t *pipeline);
const char *rtm_traces_pipeline_name(rtm_traces_pipeline_t pipeline);

/* The trace backend ("cuda" or "cpu") for traces recorded by the propagation backend
 * `backend` (its name): the GPU's traces are processed where they were recorded. */
const char *rtm_traces_backend_for(const char *backend);

/* The leapfrog time-dispersion warp (rtm_traces_warp_t) of count traces [count][n] at dt,
 * in place, the inputs zero-padded to 8 n in time or a little more, to a length the FFTs run
 * fast at (a power of two or a 2-3-5-7-smooth length; against a quadrature of the warp's
 * definition a Ricker is off by 2e-6 early in the trace and 2e-4 at its end:
 * test_traces_cpu), in batches of one plan. The pipeline's
 * cut-off taper (the top 10% below Nyquist) applies to the warped spectrum too. */
int rtm_traces_dispersion(const char *backend, rtm_traces_warp_t warp, int count, int n, double dt,
                          float *traces);
/* The same warp of count traces in the current GPU's memory (trace i at traces + i pitch,
 * n samples), in place, batch by batch on the device: the numbers of
 * rtm_traces_dispersion("cuda", ...) without the trips through host memory. Waits for it. */
int rtm_traces_dispersion_device(rtm_traces_warp_t warp, int count, int n, size_t pitch, double dt,
                                 float *traces);
/* ---- the same warp by segments (segments.c), for gathers warped while recorded ---- */
/* Segment j (0 <= j < segments) is the trace times w_j(i) = cos^2(pi/2 (i - j H) / H) for
 * |i - j H| < H (sum_j w_j = 1), a buffer of 2H samples from sample (j - 1) H warped with
 * that sample's time as its origin in a window of fft_length samples; its output,
 * samples [(j - 1) H - back, (j + 1) H + reach), is added into the result. The warp moves
 * an event at time tau by tau (1 / cos(pi f dt) - 1) later (inverse) or tau (1 - cos(a)),
 * sin(a) = pi f dt, earlier (forward): back and reach cover that for every f <= max_hz
 * within the trace (n (1 - cos) at most), plus a guard; content above max_hz moving
 * farther wraps round the window. Segment j can run once raw samples [0, (j + 1) H) are
 * known; rtm_traces_segments_final says which samples are then final. */
typedef struct {
  int hop;        /* H */
  int segments;   /* ceil((n - 1) / H) + 1 */
  int fft_length; /* one segment's window */
  int back;       /* output samples kept before a segment's buffer */
  int reach;      /* output samples kept after it */
} rtm_traces_segments_t;
int rtm_traces_segments_layout(rtm_traces_warp_t warp, int n, double dt, int hop, double max_hz,
                               rtm_traces_segments_t *layout);
/* Output samples [0, returned) are final once raw samples [0, known) are and every segment
 * they allow has run: (known / H - 1) H - back, or n once known >= n. */
int rtm_traces_segments_final(const rtm_traces_segments_t *layout, int n, int known);
/* rtm_traces_dispersion of count traces [count][n] at dt by segments of hop H (the
 * layout above), in place. Segments are padded 16x (8x leaves 1-2e-5). Against the
 * whole-trace warp padded 64x (no interpolation error left), 2001 samples at 2 ms, 20 Hz
 * Rickers, max_hz 80: late arrivals (3.3-3.9 s) 8e-6 inverse and 4e-6 forward at H = 64
 * (2.6 peak periods), 2e-6 at H = 128, 4e-5 at H = 32 (a shorter window's wider spectrum
 * reaches frequencies the warp moves past its window); traces of 12 arrivals 1e-6 at
 * H = 64. rtm_traces_dispersion (8x) is itself 2e-4 off there, so the two differ by that.
 * FFT work 3.2x the whole-trace warp's at H = 64 (33 windows of 2048 against one of 16384),
 * 3.6x at 128 (test_traces_segments). */
int rtm_traces_dispersion_segments(const char *backend, rtm_traces_warp_t warp, int count, int n,
                                   double dt, int hop, double max_hz, float *traces);
/* ---- the same warp as one banded matrix (warp_band.c), for gathers corrected while recorded ----
 * The warp of traces of n samples is one linear map W of a trace, the same for every trace.
 * Its band: W' = W P, P a low pass (a Blackman-windowed sinc, 64 samples each side) whose
 * pass band holds the traces' band (limit_hz: the source wavelet's, rtm_traces_band_limit_hz),
 * W' built by the warp of P's columns on `backend` (padded 16x: 16 times below the 8x
 * warp's interpolation error) and each row cut, within the columns the low pass and the warp's
 * move can reach, to where its entries reach 1e-4 of its largest before its sample and
 * 1e-5 after it. Rows come in groups of RTM_TRACES_BAND_ROWS that
 * share their columns (a row's entries outside its own cut are zeros), so that a group's
 * coefficients are one dense block. Corrected sample k needs raw samples up to k + lag only
 * (the inverse warp delays, the low pass reaches 64 samples ahead): a run's gathers can be
 * corrected and written while it steps. Against the exact warp, Rickers at 10 Hz, 2 ms,
 * 2001 samples: 2e-5 relative L2, where rtm_traces_dispersion (8x) is 6e-5 to 1.2e-4 off
 * (test_traces_band); a run's iso traces 1.9e-5 against 1.5e-4. Lag 72, 209 multiply-adds
 * a corrected sample. */
enum { RTM_TRACES_BAND_ROWS = 16, RTM_TRACES_BAND_MAX_SAMPLES = 8192 };
/* The inverse warp's band's lag at most (the low pass's reach and a guard): what a stream
 * waits for while its band is being made. */
enum { RTM_TRACES_BAND_MAX_LAG = 72 };
typedef struct {
  int n;             /* samples a trace */
  int groups;        /* ceil(n / RTM_TRACES_BAND_ROWS); rows past n are zeros */
  int lag;           /* a group's last column minus its last row, at most: raw samples needed
                        past the last corrected one */
  int max_width;     /* the widest group's columns */
  int *first;        /* [groups] first column of group g */
  int *width;        /* [groups] its columns */
  long long *offset; /* [groups + 1] where group g's block starts in coef */
  float *coef;       /* group g: coef[offset[g] + c ROWS + j] = W'[g ROWS + j][first[g] + c] */
  double limit_hz;   /* the pass band's edge */
  double cutoff_hz;  /* the low pass's cut-off */
} rtm_traces_band_t;
/* The band of `warp` for traces of n samples at dt whose content lies below limit_hz.
 * RTM_ERR_UNSUPPORTED, saying why, when n > RTM_TRACES_BAND_MAX_SAMPLES (W' is built as an
 * n x n matrix) or the low pass would reach the inverse warp's end at 1 / (pi dt) (the
 * caller then warps whole traces). */
/* 1 when rtm_traces_band_build can make the band, else 0 with why (if not NULL) saying why;
 * logs nothing. */
int rtm_traces_band_supported(rtm_traces_warp_t warp, int n, double dt, double limit_hz, char *why,
                              size_t why_size);
int rtm_traces_band_build(const char *backend, rtm_traces_warp_t warp, int n, double dt,
                          double limit_hz, rtm_traces_band_t *band);
void rtm_traces_band_release(rtm_traces_band_t *band);
/* The CUDA device current on the calling thread (-1 in a build without CUDA), and that
 * device made current on another thread (a no-op for -1): a band made on a thread of the
 * caller's, on the GPU its run uses. */
int rtm_traces_current_device(void);
int rtm_traces_use_device(int device);
/* The highest frequency at which the spectrum of wavelet[n] at dt reaches 1e-5 of its peak
 * (a Ricker: 3.9 times its peak frequency). */
double rtm_traces_band_limit_hz(const float *wavelet, int n, double dt);
/* The C reference of the band's product: out[r][s] = corrected sample first + s of trace r
 * (traces[r pitch + m], m < n), s < count, first a multiple of RTM_TRACES_BAND_ROWS; each
 * sum over the group's columns in order with fmaf, as the GPU's kernel adds them. */
void rtm_traces_band_apply(const rtm_traces_band_t *band, const float *traces, size_t pitch,
                           int receivers, int first, int count, float *out);
/* A plan's run on inputs in its GPU's memory (in[i * in_pitch + j], `rows` of them, at most
 * desc.n_inputs) into that memory (out[i * out_pitch + j], each input's output's `length`
 * samples; out may be in): plans of one output a input, not normalised, on cuda; otherwise
 * RTM_ERR_UNSUPPORTED. Waits for it. */
int rtm_traces_run_device(rtm_traces_plan_t *plan, const float *in, size_t in_pitch, int rows,
                          float *out, size_t out_pitch);
/* Resamples count traces [count][n_in] at dt_in to [count][n_out] at dt_out, batched in
 * one run of a streams pipeline. The window is the smallest T >= max(n_in dt_in,
 * n_out dt_out) that is a whole number of samples at both intervals: the inputs are
 * zero-padded in time to T and the outputs keep the first n_out samples. The ratio
 * dt_out / dt_in must therefore be a ratio of integers (p/q with q <= 4096); otherwise
 * RTM_ERR_UNSUPPORTED says so. */
int rtm_traces_resample(const char *backend, int count, int n_in, double dt_in, const float *in,
                        int n_out, double dt_out, float *out);
/* 1 when rtm_traces_resample can take n_in samples at dt_in to n_out at dt_out (a common
 * window exists), else 0; logs nothing, for callers that name the input at fault. */
int rtm_traces_resample_possible(int n_in, double dt_in, int n_out, double dt_out);

/* ---- time.dispersion_correction (dispersion.c: what each mode warps, in one place) ---- */
/* The source wavelet [samples] at dt before a run: warped forward with full, else left. */
int rtm_dispersion_warp_wavelet(rtm_dispersion_correction_t mode, int samples, double dt_s,
                                float *wavelet);
/* Whether the mode warps the recorded traces after a run (traces, full). */
int rtm_dispersion_corrects_recorded(rtm_dispersion_correction_t mode);
/* count recorded traces [count][samples] at dt, warped back to the true frequencies
 * (INVERSE) on `pipeline` ("cpu" or "cuda") when the mode asks; in place. */
int rtm_dispersion_correct_recorded(rtm_dispersion_correction_t mode, const char *pipeline,
                                    int count, int samples, double dt_s, float *traces);
/* The same, the traces in the current GPU's memory (trace i at traces + i pitch). */
int rtm_dispersion_correct_recorded_device(rtm_dispersion_correction_t mode, int count, int samples,
                                           size_t pitch, double dt_s, float *traces);
/* A migration's observed gather [count][samples] at the modelling dt, warped forward like
 * the source wavelet with full (the receiver side's sources), else left; in place. */
int rtm_dispersion_warp_observed(rtm_dispersion_correction_t mode, const char *pipeline, int count,
                                 int samples, double dt_s, float *traces);
/* A migration refuses traces (it records no traces to warp), naming the deck. */
int rtm_dispersion_check_migration(const rtm_config_t *cfg);

#ifdef __cplusplus
}
#endif

#endif
