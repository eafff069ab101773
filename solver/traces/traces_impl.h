/* traces_impl.h - private to the trace pipeline: the plan, its layout, the backend table
 * and the spectrum-spreading factor shared by the FFTW loops and the CUDA kernels. Plain C
 * (included by .c and .cu files). */
#ifndef RTM_TRACES_IMPL_H
#define RTM_TRACES_IMPL_H

#include <math.h>
#include <stddef.h>

#include "rtm_traces.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __CUDACC__
#define RTM_TRACES_HD __host__ __device__
#else
#define RTM_TRACES_HD
#endif

#define RTM_TRACES_PI 3.14159265358979323846
/* Output Nyquist over input Nyquist above which a warning says no bandwidth is invented. */
#define RTM_TRACES_NYQUIST_WARN_RATIO 2.0
/* Largest length or FFT size: keeps every per-trace index an int. */
#define RTM_TRACES_MAX_LENGTH (1 << 28)
/* Group offsets are rounded to this many elements (256-byte alignment for complex). */
#define RTM_TRACES_ALIGN_ELEMS 64

/* One output trace of one input: where its data sit and how its spectrum is made. POD,
 * copied as is to the device. Offsets count elements (complex or float). */
typedef struct {
  long long spectrum_in_offset;  /* complex: its input's R2C output */
  long long spectrum_out_offset; /* complex: its C2R input */
  long long real_offset;         /* float: its C2R output (P samples) */
  long long gather_offset;       /* float: its place in the gather */
  int bins_in;                   /* fft_length / 2 + 1 */
  int fft_in;                    /* fft_length: bins past bins_in mirror those below */
  int bins_out;                  /* P / 2 + 1 */
  int fft_size;                  /* P */
  int length;                    /* samples kept */
  int group;                     /* inverse FFT group (one per distinct P) */
  int derivative;
  int normalisation; /* rtm_traces_norm_t */
  int band_on;
  double df_hz;          /* 1 / T: bin spacing of both spectra */
  double cutoff_hz;      /* fc = min(input Nyquist, output Nyquist) */
  double taper_start_hz; /* (1 - taper_fraction) fc */
  double band_hz[4];
  double shift_s;
  double scale;         /* 1 / fft_length */
  int warp;             /* rtm_traces_warp_t */
  double warp_dt_s;     /* its leapfrog dt */
  double warp_origin_s; /* absolute time of the input's first sample (rtm_traces_output_t) */
  /* the warp's turn a bin about the input's middle sample, (input_length - 1) / 2:
   * turn = 2 pi centre / N, and its cosine and sine (formed once at layout) */
  double turn, turn_cos, turn_sin;
} rtm_traces_trace_t;

typedef struct {
  int fft_size;              /* P */
  int count;                 /* traces batched in this group */
  int stream;                /* cuda worker stream that runs it */
  long long spectrum_offset; /* complex: first trace's C2R input */
  long long real_offset;     /* float: first trace's C2R output */
} rtm_traces_group_t;

struct rtm_traces_backend;

struct rtm_traces_plan {
  rtm_traces_desc_t desc;       /* desc.outputs points at outputs below */
  rtm_traces_output_t *outputs; /* owned copy */
  char backend_name[16];
  const struct rtm_traces_backend *backend;
  void *state;     /* backend-private */
  int fft_length;  /* N: forward FFT size */
  int input_pitch; /* floats between inputs in input_buffer: N, or input_length where the
                      backend pads on the device (cuda) */
  int n_traces;    /* n_inputs * n_outputs, gather order */
  int n_groups;
  rtm_traces_trace_t *traces;
  rtm_traces_group_t *groups;
  size_t spectrum_in_elems;  /* complex, all inputs */
  size_t spectrum_out_elems; /* complex, all groups (aligned) */
  size_t real_elems;         /* float, all groups (aligned) */
  size_t gather_per_input;   /* float: sum of output lengths */
  size_t gather_elems;       /* float: n_inputs * gather_per_input */
  double *peaks, *rms;       /* [n_traces] of the last run */
};

/* A backend fills state; the layout above is ready before create is called. */
typedef struct rtm_traces_backend {
  const char *name;
  int (*create)(rtm_traces_plan_t *plan);
  /* The per-trace options changed (sizes did not): refresh what the runs read. */
  int (*update_options)(rtm_traces_plan_t *plan);
  float *(*input_buffer)(rtm_traces_plan_t *plan);
  /* Runs the pipeline on the input buffer; leaves the gather in result() and the stats
   * in plan->peaks / plan->rms. */
  int (*run)(rtm_traces_plan_t *plan);
  const float *(*result)(const rtm_traces_plan_t *plan);
  /* The pipeline on `rows` (at most n_inputs) inputs in the device memory of the plan's GPU,
   * in[i * in_pitch + j], into that memory: out[i * out_pitch + j], the first `length`
   * samples of input i's one output, not normalised (rtm_traces_run_device checks the
   * plan); in and out may be the same. Waits for it. NULL where there is no device (fftw). */
  int (*run_device)(rtm_traces_plan_t *plan, const float *in, size_t in_pitch, int rows, float *out,
                    size_t out_pitch);
  int (*node_count)(const rtm_traces_plan_t *plan, size_t *nodes, size_t *expected);
  void (*describe)(const rtm_traces_plan_t *plan, char *text, size_t size);
  void (*destroy)(rtm_traces_plan_t *plan);
} rtm_traces_backend_t;

extern const rtm_traces_backend_t rtm_traces_fftw;
#ifdef RTM3D_HAVE_CUDA
extern const rtm_traces_backend_t rtm_traces_cuda;
#endif

/* The FFT length of a warp of n samples padded `padding` times: padding n, up to the next
 * power of two when that is at most 25% longer, else up to the next 2-3-5-7-smooth length. */
int rtm_traces_warp_fft_length(int n, int padding);
/* The padding of rtm_traces_dispersion's inputs (the spectrum's samples per cycle of its
 * phase about the middle, at the trace's ends). */
enum { RTM_TRACES_WARP_PADDING = 8 };
/* rtm_traces_dispersion with the inputs padded `padding` times instead (its cubic
 * interpolation's error falls as padding^-4: warp_band.c builds its band at 16). */
int rtm_traces_dispersion_padded(const char *backend, rtm_traces_warp_t warp, int count, int n,
                                 double dt, int padding, float *traces);
/* rtm_traces_dispersion_device with the inputs padded `padding` times. */
int rtm_traces_dispersion_device_padded(rtm_traces_warp_t warp, int count, int n, size_t pitch,
                                        double dt, int padding, float *traces);
#ifdef RTM3D_HAVE_CUDA
/* rtm_traces_dispersion_padded on cuda of count host traces [count][n], through a device
 * copy of them (traces_gpu.c): the plan's device path, without its pinned staging and the
 * eager run a host plan makes at creation (the same numbers). */
int rtm_traces_cuda_dispersion_staged(rtm_traces_warp_t warp, int count, int n, double dt,
                                      int padding, float *traces);
#endif

/* Bytes the buffers of the layout take (inputs, both spectra, C2R output, gather, stats);
 * backends add their own (work areas, staging). */
size_t rtm_traces_layout_bytes(const rtm_traces_plan_t *plan);

/* Cosine taper of the cut-off: 1 up to f_start, 0 from f_cut on. */
static inline RTM_TRACES_HD double rtm_traces_cutoff_taper(double f, double f_start, double f_cut) {
  if (f <= f_start) return 1.0;
  if (f >= f_cut) return 0.0;
  return 0.5 * (1.0 + cos(RTM_TRACES_PI * (f - f_start) / (f_cut - f_start)));
}

/* Band-pass trapezoid with cosine ramps: 0 at f <= f1 and f >= f4, 1 on [f2, f3]. */
static inline RTM_TRACES_HD double rtm_traces_band_taper(double f, const double band[4]) {
  if (f <= band[0] || f >= band[3]) return 0.0;
  if (f < band[1]) return 0.5 * (1.0 - cos(RTM_TRACES_PI * (f - band[0]) / (band[1] - band[0])));
  if (f <= band[2]) return 1.0;
  return 0.5 * (1.0 + cos(RTM_TRACES_PI * (f - band[2]) / (band[3] - band[2])));
}

/* Complex factor of bin k: Y_k = factor * X_k (see rtm_traces.h, stage 2). */
static inline RTM_TRACES_HD void rtm_traces_bin_factor(const rtm_traces_trace_t *t, int k,
                                                       double *re, double *im) {
  double f = k * t->df_hz;
  double w = t->scale * rtm_traces_cutoff_taper(f, t->taper_start_hz, t->cutoff_hz);
  if (t->band_on) w *= rtm_traces_band_taper(f, t->band_hz);
  double fr = w, fi = 0.0;
  if (t->derivative) { /* i omega */
    fi = w * 2.0 * RTM_TRACES_PI * f;
    fr = 0.0;
  }
  if (t->shift_s != 0.0) { /* exp(-i omega shift) */
    double phase = -2.0 * RTM_TRACES_PI * f * t->shift_s;
    double c = cos(phase), s = sin(phase);
    double r = fr * c - fi * s;
    fi = fr * s + fi * c;
    fr = r;
  }
  *re = fr;
  *im = fi;
}

/* Input spectrum value for output bin k (x: the input's bins_in complex values, interleaved
 * re, im): bin k itself, or, warped (rtm_traces_warp_t), the input at the warped frequency
 * by cubic (4-point Lagrange) interpolation between bins, the bins below 0 and past
 * fft_length / 2 the conjugates of their mirrors (a real input), 0 where the inverse warp
 * has no source (pi f dt >= 1). The interpolation runs on the spectrum with the input's
 * middle sample taken as time 0 (X_b exp(2 pi i b centre / N), the delay put back after):
 * an input of n samples padded to N then turns its spectrum by at most pi n / N a bin
 * rather than 2 pi n / N, and the cubic follows it more closely at 8x padding than it did
 * the untouched spectrum at 16x (a Ricker against a quadrature of the warp: 2e-6 early in
 * the trace and 2e-4 at its end, against 8e-6 and 3e-4: test_traces_cpu). */
static inline RTM_TRACES_HD void rtm_traces_input_at(const rtm_traces_trace_t *t, const float *x,
                                                     int k, double *re, double *im) {
  *re = *im = 0.0;
  if (t->warp == RTM_TRACES_WARP_NONE) {
    if (k < t->bins_in) {
      *re = x[2 * k];
      *im = x[2 * k + 1];
    }
    return;
  }
  const double a = RTM_TRACES_PI * k * t->df_hz * t->warp_dt_s; /* pi f dt */
  if (t->warp == RTM_TRACES_WARP_INVERSE && a >= 1.0) return;
  const double f_in =
      (t->warp == RTM_TRACES_WARP_FORWARD ? sin(a) : asin(a)) / (RTM_TRACES_PI * t->warp_dt_s);
  const double u = f_in / t->df_hz;
  const int j = (int)floor(u);
  const double s = u - j;
  /* Lagrange weights of nodes j - 1, j, j + 1, j + 2 at j + s */
  const double w[4] = {-s * (s - 1.0) * (s - 2.0) / 6.0, (s + 1.0) * (s - 1.0) * (s - 2.0) / 2.0,
                       -(s + 1.0) * s * (s - 2.0) / 2.0, (s + 1.0) * s * (s - 1.0) / 6.0};
  /* node b's weight turned by exp(2 pi i (b - u) centre / N): b - u = n - 1 - s */
  const double c0 = cos(-(1.0 + s) * t->turn), s0 = sin(-(1.0 + s) * t->turn);
  const double cd = t->turn_cos, sd = t->turn_sin;
  double cr = c0, ci = s0;
  for (int n = 0; n < 4; ++n) {
    const int b = j - 1 + n;
    const int mirrored = b < 0 || b >= t->bins_in; /* X[-b] = X[N - b] = conj(X[b]) */
    const int m = b < 0 ? -b : b >= t->bins_in ? t->fft_in - b : b;
    if (m >= 0 && m < t->bins_in) {
      const double xr = x[2 * m], xi = mirrored ? -x[2 * m + 1] : x[2 * m + 1];
      *re += w[n] * (xr * cr - xi * ci);
      *im += w[n] * (xr * ci + xi * cr);
    }
    const double next = cr * cd - ci * sd;
    ci = cr * sd + ci * cd;
    cr = next;
  }
  if (t->warp_origin_s != 0.0) { /* origin 0 skips it: today's numbers bit for bit */
    /* X_local(f) = X_abs(f) exp(2 pi i f t0) (x_local(t) = x_abs(t + t0), FFTW's e^{-i}
     * forward), so Y_local(f) = Y_abs(f) exp(2 pi i f t0) = X_abs(f_in) exp(2 pi i f t0)
     * = X_local(f_in) exp(2 pi i (f - f_in) t0) */
    const double phase = 2.0 * RTM_TRACES_PI * (k * t->df_hz - f_in) * t->warp_origin_s;
    const double c = cos(phase), sn = sin(phase), r = *re * c - *im * sn;
    *im = *re * sn + *im * c;
    *re = r;
  }
}

/* Normalisation divisor of a trace from its peak and RMS; 1 when none or silent. */
static inline RTM_TRACES_HD double rtm_traces_norm_divisor(int normalisation, double peak,
                                                           double rms) {
  double d = normalisation == RTM_TRACES_NORM_PEAK  ? peak
             : normalisation == RTM_TRACES_NORM_RMS ? rms
                                                    : 1.0;
  return d > 0.0 ? d : 1.0;
}

/* ---- CUDA launchers (traces_cuda.cu); streams are cudaStream_t ---- */
#ifdef RTM3D_HAVE_CUDA
/* Per-trace peak and energy as reduced by CUB. */
typedef struct {
  double energy; /* sum of y^2 */
  float peak;    /* max |y| */
} rtm_traces_peak_energy_t;

int rtm_traces_cuda_spread(const rtm_traces_trace_t *d_traces, int n_traces,
                           const void *d_spectrum_in, void *d_spectrum_out, void *stream);
/* Temporary storage bytes of rtm_traces_cuda_reduce for n_traces segments. */
int rtm_traces_cuda_reduce_bytes(int n_traces, size_t *bytes);
int rtm_traces_cuda_reduce(const rtm_traces_trace_t *d_traces, int n_traces, const float *d_real,
                           rtm_traces_peak_energy_t *d_peak_energy, void *d_temp, size_t temp_bytes,
                           void *stream);
/* gather[t.gather_offset + j] = real[t.real_offset + j] / divisor; stats[2 i] = peak,
 * stats[2 i + 1] = rms. */
int rtm_traces_cuda_merge(const rtm_traces_trace_t *d_traces, int n_traces, const float *d_real,
                          const rtm_traces_peak_energy_t *d_peak_energy, float *d_gather,
                          double *d_stats, void *stream);
#endif

#ifdef __cplusplus
}
#endif

#endif
