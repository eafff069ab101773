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

/* One CIP: its gather into `in` (row h mod Nh: h = 0 at row 0, the rest zero), the 2D
 * spectrum, and each angle's column of it along kz back to depth. kz in cycles a metre is
 * j / (Nz dz); kh's index is kh Nh dh, none beyond its Nyquist. */
static void transform(const float *offset, int lags, int nz, double dz_over_dh, int angles,
                      double max_angle_deg, int nz_padded, int nh_padded, float *in,
                      fftwf_complex *spectrum, fftwf_complex *column, float *trace,
                      fftwf_plan forward, fftwf_plan inverse, float *angle) {
  const int nkz = nz_padded / 2 + 1;
  memset(in, 0, (size_t)nh_padded * nz_padded * sizeof *in);
  for (int h = -lags; h <= lags; ++h)
    memcpy(in + (size_t)((h + nh_padded) % nh_padded) * nz_padded, offset + (size_t)(h + lags) * nz,
           (size_t)nz * sizeof *in);
  fftwf_execute(forward);
  for (int a = 0; a < angles; ++a) {
    const double theta = angles > 1 ? max_angle_deg * a / (angles - 1) : 0.0;
    const double slope = tan(theta * pi / 180.0);
    for (int j = 0; j < nkz; ++j) {
      const double kh_index = (double)j / nz_padded * dz_over_dh * slope * nh_padded;
      double re = 0.0, im = 0.0;
      if (kh_index <= 0.5 * nh_padded) {
        double re_minus, im_minus;
        spectrum_at(spectrum, nh_padded, nkz, j, -kh_index, &re, &im);
        spectrum_at(spectrum, nh_padded, nkz, j, kh_index, &re_minus, &im_minus);
        re = 0.5 * (re + re_minus);
        im = 0.5 * (im + im_minus);
      }
      column[j][0] = (float)re;
      column[j][1] = (float)im;
    }
    fftwf_execute(inverse);
    for (int z = 0; z < nz; ++z)
      angle[(size_t)a * nz + z] = trace[z] / (float)nz_padded;
  }
}

int rtm_angle_gathers(const float *offset, size_t offset_stride, int cips, int lags, int nz,
                      double dz_m, double dh_m, int angles, double max_angle_deg, float *angle) {
  int status = RTM_OK;
  const int nh = 2 * lags + 1;
  float *in = NULL, *trace = NULL;
  fftwf_complex *spectrum = NULL, *column = NULL;
  fftwf_plan forward = NULL, inverse = NULL;
  if (cips < 0 || lags < 1 || nz < 1 || !(dz_m > 0.0) || !(dh_m > 0.0) || angles < 1 ||
      !(max_angle_deg >= 0.0 && max_angle_deg < 90.0))
    RTM_FAIL(RTM_ERR_INTERNAL,
             "angle gathers: %d CIPs, %d lags, %d depths, dz %g m, dh %g m, %d angles to %g "
             "degrees",
             cips, lags, nz, dz_m, dh_m, angles, max_angle_deg);
  const int nz_padded = next_power_of_two(2 * nz), nh_padded = next_power_of_two(4 * nh);
  const int nkz = nz_padded / 2 + 1;
  in = fftwf_malloc((size_t)nh_padded * nz_padded * sizeof *in);
  spectrum = fftwf_malloc((size_t)nh_padded * nkz * sizeof *spectrum);
  column = fftwf_malloc((size_t)nkz * sizeof *column);
  trace = fftwf_malloc((size_t)nz_padded * sizeof *trace);
  if (!in || !spectrum || !column || !trace)
    RTM_FAIL(RTM_ERR_NOMEM, "out of memory for the angle gathers");
  forward = fftwf_plan_dft_r2c_2d(nh_padded, nz_padded, in, spectrum, FFTW_ESTIMATE);
  inverse = fftwf_plan_dft_c2r_1d(nz_padded, column, trace, FFTW_ESTIMATE);
  if (!forward || !inverse) RTM_FAIL(RTM_ERR_INTERNAL, "angle gathers: FFTW made no plan");
  for (int c = 0; c < cips; ++c)
    transform(offset + (size_t)c * offset_stride, lags, nz, dz_m / dh_m, angles, max_angle_deg,
              nz_padded, nh_padded, in, spectrum, column, trace, forward, inverse,
              angle + (size_t)c * angles * nz);
fail:
  if (forward) fftwf_destroy_plan(forward);
  if (inverse) fftwf_destroy_plan(inverse);
  fftwf_free(in);
  fftwf_free(spectrum);
  fftwf_free(column);
  fftwf_free(trace);
  return status;
}
