/* angle_gathers.c - a subsurface-offset gather I(z, h) to an angle gather A(z, theta)
 * (rtm_imaging.h), in the (kz, kh) domain (Sava and Fomel 2003): with h the half-offset of
 * I(x, h) = sum S(x - h) R(x + h), a reflection at incidence angle theta is the line
 * z = z0 + h tan(theta) (or - h tan(theta), the shot on the other side), whose 2D spectrum
 * lies on kh = -kz tan(theta); A(kz, theta) reads I(kz, kh) there, both signs averaged,
 * and an inverse FFT along kz gives A(z, theta). FFTW (fftw3f) on the host: the gather padded
 * to twice its depths (no wrap-around) and four times its lags (kh read between finer
 * samples, linearly), h = 0 at index 0, the negative lags wrapped to the end. A gather
 * focused at h = 0 gives the same trace at every angle: its depths, divided by Nz. */
#include <fftw3.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rtm_imaging.h"
#include "rtm_status.h"

static const double pi = 3.14159265358979323846;

static int next_power_of_two(int n) {
  int p = 1;
  while (p < n)
    p *= 2;
  return p;
}

/* I(kz, kh) at kz index j and fractional kh index q (wrapped, Nh samples), linearly. */
static void spectrum_at(const fftwf_complex *spectrum, int nh_padded, int nkz, int j, double q,
                        double *re, double *im) {
  const double at = q < 0.0 ? q + nh_padded : q;
  const int lo = (int)floor(at) % nh_padded, hi = (lo + 1) % nh_padded;
  const double w = at - floor(at);
  const float *a = spectrum[(size_t)lo * nkz + j], *b = spectrum[(size_t)hi * nkz + j];
  *re = (1.0 - w) * a[0] + w * b[0];
  *im = (1.0 - w) * a[1] + w * b[1];
}

/* One thread's arrays for transform(): aligned as FFTW's plans were made for. */
typedef struct {
  float *in, *trace;
  fftwf_complex *spectrum, *column;
} buffers_t;

static int buffers_make(buffers_t *b, int nz_padded, int nh_padded) {
  const int nkz = nz_padded / 2 + 1;
  b->in = fftwf_malloc((size_t)nh_padded * nz_padded * sizeof *b->in);
  b->spectrum = fftwf_malloc((size_t)nh_padded * nkz * sizeof *b->spectrum);
  b->column = fftwf_malloc((size_t)nkz * sizeof *b->column);
  b->trace = fftwf_malloc((size_t)nz_padded * sizeof *b->trace);
  return b->in && b->spectrum && b->column && b->trace ? RTM_OK : RTM_ERR_NOMEM;
}

static void buffers_free(buffers_t *b) {
  fftwf_free(b->in);
  fftwf_free(b->spectrum);
  fftwf_free(b->column);
  fftwf_free(b->trace);
}

/* One CIP: its gather into the thread's `in` (row h mod Nh: h = 0 at row 0, the rest zero),
 * the 2D spectrum, and each angle's column of it along kz back to depth. kz in cycles a
 * metre is j / (Nz dz); kh's index is kh Nh dh, none beyond its Nyquist. */
static void transform(const float *offset, int lags, int nz, double dz_over_dh, int angles,
                      double max_angle_deg, int nz_padded, int nh_padded, buffers_t *b,
                      fftwf_plan forward, fftwf_plan inverse, float *angle) {
  const int nkz = nz_padded / 2 + 1;
  memset(b->in, 0, (size_t)nh_padded * nz_padded * sizeof *b->in);
  for (int h = -lags; h <= lags; ++h)
    memcpy(b->in + (size_t)((h + nh_padded) % nh_padded) * nz_padded,
           offset + (size_t)(h + lags) * nz, (size_t)nz * sizeof *b->in);
  fftwf_execute_dft_r2c(forward, b->in, b->spectrum);
  for (int a = 0; a < angles; ++a) {
    const double theta = angles > 1 ? max_angle_deg * a / (angles - 1) : 0.0;
    const double slope = tan(theta * pi / 180.0);
    for (int j = 0; j < nkz; ++j) {
      const double kh_index = (double)j / nz_padded * dz_over_dh * slope * nh_padded;
      double re = 0.0, im = 0.0;
      if (kh_index <= 0.5 * nh_padded) {
        double re_minus, im_minus;
        spectrum_at(b->spectrum, nh_padded, nkz, j, -kh_index, &re, &im);
        spectrum_at(b->spectrum, nh_padded, nkz, j, kh_index, &re_minus, &im_minus);
        re = 0.5 * (re + re_minus);
        im = 0.5 * (im + im_minus);
      }
      b->column[j][0] = (float)re;
      b->column[j][1] = (float)im;
    }
    fftwf_execute_dft_c2r(inverse, b->column, b->trace);
    for (int z = 0; z < nz; ++z)
      angle[(size_t)a * nz + z] = b->trace[z] / (float)nz_padded;
  }
}

int rtm_angle_gathers(const float *offset, size_t offset_stride, int cips, int lags, int nz,
                      double dz_m, double dh_m, int angles, double max_angle_deg, float *angle) {
  int status = RTM_OK;
  const int nh = 2 * lags + 1;
  buffers_t planned = {0};
  fftwf_plan forward = NULL, inverse = NULL;
  if (cips < 0 || lags < 1 || nz < 1 || !(dz_m > 0.0) || !(dh_m > 0.0) || angles < 1 ||
      !(max_angle_deg >= 0.0 && max_angle_deg < 90.0))
    RTM_FAIL(RTM_ERR_INTERNAL,
             "angle gathers: %d CIPs, %d lags, %d depths, dz %g m, dh %g m, %d angles to %g "
             "degrees",
             cips, lags, nz, dz_m, dh_m, angles, max_angle_deg);
  const int nz_padded = next_power_of_two(2 * nz), nh_padded = next_power_of_two(4 * nh);
  if (buffers_make(&planned, nz_padded, nh_padded) != RTM_OK)
    RTM_FAIL(RTM_ERR_NOMEM, "out of memory for the angle gathers");
  /* the plans made once, here (FFTW's planner is not thread-safe); each thread executes them
   * on arrays of its own (fftwf_execute_dft_*: thread-safe, the same alignment) */
  forward =
      fftwf_plan_dft_r2c_2d(nh_padded, nz_padded, planned.in, planned.spectrum, FFTW_ESTIMATE);
  inverse = fftwf_plan_dft_c2r_1d(nz_padded, planned.column, planned.trace, FFTW_ESTIMATE);
  if (!forward || !inverse) RTM_FAIL(RTM_ERR_INTERNAL, "angle gathers: FFTW made no plan");
  int failed = 0;
#ifdef _OPENMP
#pragma omp parallel reduction(| : failed)
#endif
  {
    buffers_t own = {0};
    failed = buffers_make(&own, nz_padded, nh_padded) != RTM_OK;
#ifdef _OPENMP
#pragma omp for schedule(dynamic)
#endif
    for (int c = 0; c < cips; ++c)
      if (!failed)
        transform(offset + (size_t)c * offset_stride, lags, nz, dz_m / dh_m, angles, max_angle_deg,
                  nz_padded, nh_padded, &own, forward, inverse, angle + (size_t)c * angles * nz);
    buffers_free(&own);
  }
  if (failed) RTM_FAIL(RTM_ERR_NOMEM, "out of memory for the angle gathers");
fail:
  if (forward) fftwf_destroy_plan(forward);
  if (inverse) fftwf_destroy_plan(inverse);
  buffers_free(&planned);
  return status;
}
