/* What a figure of a dataset shows, chosen before it is drawn (rtm_io.h, "what a figure
 * shows"): the planes of a volume cut from the file, a gather turned receivers across and
 * time down, the gains a gather takes (t^2, AGC), the colour range (a percentile clip of
 * |value| for signed fields, the low and high percentiles of a volume of one sign, a
 * model's whole range), the colour bar's label from the dataset's name, and a slice's
 * place and axes in metres. rtm3d plot and migrate's planes compose these into figure.c's
 * panels or png.c's plain image. */
#include "rtm_io.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtm_status.h"

int rtm_io_read_slices(const char *path, const char *name, long index, const size_t volume[3],
                       int count, rtm_figure_image_t *images) {
  int status = RTM_OK;
  rtm_dataset_t data;
  memset(&data, 0, sizeof data);
  RTM_TRY(index >= 0 ? rtm_io_read_dataset_entry(path, name, (size_t)index, &data)
                     : rtm_io_read_dataset(path, name, &data));
  for (int k = 0; k < count; ++k) {
    rtm_figure_image_t *image = &images[k];
    const size_t extent = volume[image->axis == 'z' ? 0 : image->axis == 'y' ? 1 : 2];
    image->values = malloc(volume[0] * volume[1] * volume[2] / extent * sizeof *image->values);
    if (!image->values) RTM_FAIL(RTM_ERR_NOMEM, "out of memory for a slice of %s", name);
    rtm_volume_slice(data.data, volume, image->axis, (size_t)image->plane, image->values,
                     &image->width, &image->height);
  }
fail:
  rtm_dataset_release(&data);
  return status;
}

int rtm_io_read_gather_image(const char *path, const char *name, rtm_figure_image_t *image) {
  int status = RTM_OK;
  rtm_dataset_t data;
  memset(&data, 0, sizeof data);
  RTM_TRY(rtm_io_read_dataset(path, name, &data));
  const size_t nrec = data.dims[0], nt = data.dims[1];
  image->values = malloc(nrec * nt * sizeof *image->values);
  if (!image->values) RTM_FAIL(RTM_ERR_NOMEM, "out of memory for %s", name);
  for (size_t t = 0; t < nt; ++t)
    for (size_t r = 0; r < nrec; ++r)
      image->values[t * nrec + r] = data.data[r * nt + t];
  image->width = (int)nrec;
  image->height = (int)nt;
fail:
  rtm_dataset_release(&data);
  return status;
}

/* agc: each sample over the RMS of its trace in [k - half, k + half], a running sum of
 * squares down each column; the image unscaled when out of memory. */
static void automatic_gain(float *values, int nrec, int nt, int half) {
  float *out = malloc((size_t)nrec * nt * sizeof *out);
  if (!out) return;
  for (int r = 0; r < nrec; ++r) {
    double sum = 0.0; /* running sum of squares over [k - half, k + half] */
    for (int k = 0; k <= half && k < nt; ++k)
      sum += (double)values[(size_t)k * nrec + r] * values[(size_t)k * nrec + r];
    for (int k = 0; k < nt; ++k) {
      const int lo = k - half < 0 ? 0 : k - half, hi = k + half >= nt ? nt - 1 : k + half;
      const double rms = sqrt(fmax(sum, 0.0) / (hi - lo + 1));
      out[(size_t)k * nrec + r] = rms > 0.0 ? (float)(values[(size_t)k * nrec + r] / rms) : 0.0f;
      if (k + half + 1 < nt) {
        const double v = values[(size_t)(k + half + 1) * nrec + r];
        sum += v * v;
      }
      if (k - half >= 0) {
        const double v = values[(size_t)(k - half) * nrec + r];
        sum -= v * v;
      }
    }
  }
  memcpy(values, out, (size_t)nrec * nt * sizeof *out);
  free(out);
}

void rtm_gather_gain(rtm_figure_image_t *gather, const rtm_io_axes_t *axes, const char *gain) {
  const int nrec = gather->width, nt = gather->height;
  const double dt = axes->has_dt ? axes->dt_s : 1.0;
  if (strcmp(gain, "t2") == 0) {
    for (int k = 0; k < nt; ++k)
      for (int r = 0; r < nrec; ++r)
        gather->values[(size_t)k * nrec + r] *= (float)((k * dt) * (k * dt));
  } else if (strcmp(gain, "agc") == 0) {
    /* the half window in samples, in double first: a dt of 1e-11 s asks for 1.25e10 */
    const double half_wanted = axes->has_dt ? ceil(0.125 / dt) : 12.0;
    const int half = half_wanted < 1.0 ? 1 : half_wanted > nt ? nt : (int)half_wanted;
    automatic_gain(gather->values, nrec, nt, half);
  }
}

int rtm_figure_colour_range(const float *values, size_t count, double clip_percentile,
                            int signed_field, rtm_figure_style_t *style) {
  int status = RTM_OK, negative = 0;
  size_t finite = 0;
  for (size_t i = 0; i < count; ++i)
    if (isfinite(values[i])) {
      ++finite;
      negative |= values[i] < 0.0f;
    }
  style->diverging = signed_field || negative;
  if (style->diverging) {
    double clip = 0.0;
    RTM_TRY(rtm_png_clip_value(values, count, clip_percentile, &clip));
    style->lo = -clip;
    style->hi = clip;
    return RTM_OK;
  }
  float *kept = malloc((finite + 1) * sizeof *kept);
  if (!kept) RTM_FAIL(RTM_ERR_NOMEM, "out of memory for the colour range");
  size_t n = 0;
  for (size_t i = 0; i < count; ++i)
    if (isfinite(values[i])) kept[n++] = values[i];
  const double pct = clip_percentile / 100.0; /* two order statistics, no sort */
  style->lo = n ? rtm_select_kth(kept, n, (size_t)floor((1.0 - pct) * (double)(n - 1))) : 0.0;
  style->hi = n ? rtm_select_kth(kept, n, (size_t)ceil(pct * (double)(n - 1))) : 1.0;
  if (!(style->hi > style->lo))
    style->hi = style->lo + (style->lo != 0.0 ? fabs(style->lo) * 1e-3 : 1.0);
  free(kept);
fail:
  return status;
}

const char *rtm_figure_bar_label(const char *dataset, int rank) {
  const char *name = strrchr(dataset, '/');
  name = name ? name + 1 : dataset;
  if (strcmp(name, "vp") == 0 || strcmp(name, "vs") == 0) return "velocity (m/s)";
  if (strcmp(name, "theta") == 0 || strcmp(name, "phi") == 0) return "angle (degrees)";
  if (strcmp(name, "epsilon") == 0 || strcmp(name, "delta") == 0) return "Thomsen parameter (1)";
  if (strcmp(name, "image") == 0) return "image (cross-correlation, arbitrary units)";
  if (strcmp(name, "illumination") == 0) return "illumination (arbitrary units)";
  if (rank == 2) return "amplitude (source units)";
  return "wavefield (source units)";
}

void rtm_figure_plane_text(const rtm_io_axes_t *axes, char axis, long plane, char *text,
                           size_t size) {
  const int plane_axis = axis == 'x' ? 0 : axis == 'y' ? 1 : 2;
  if (axes->has_grid)
    snprintf(text, size, "%c = %g m (index %ld)", axis,
             axes->origin_m[plane_axis] + plane * axes->spacing_m[plane_axis], plane);
  else
    snprintf(text, size, "%c index %ld", axis, plane);
}

int rtm_figure_plane_at(const rtm_io_axes_t *axes, char axis, double metres, size_t extent,
                        long *plane, int *exact) {
  const int a = axis == 'x' ? 0 : axis == 'y' ? 1 : 2;
  const double cells = (metres - axes->origin_m[a]) / axes->spacing_m[a];
  /* half a cell beyond either end still rounds onto the volume's first or last plane (lround
   * takes -0.5 away from zero, to -1: the first plane instead, never one before it) */
  if (!(cells >= -0.5 && cells < (double)extent - 0.5)) return 0;
  *plane = cells <= 0.0 ? 0 : lround(cells);
  *exact = fabs(cells - (double)*plane) <= 1e-3;
  return 1;
}

int rtm_figure_is_model(const char *dataset) {
  static const char *const parameters[] = {"vp", "vs", "epsilon", "delta", "theta", "phi"};
  const char *name = strrchr(dataset, '/');
  name = name ? name + 1 : dataset;
  for (size_t k = 0; k < sizeof parameters / sizeof parameters[0]; ++k)
    if (strcmp(name, parameters[k]) == 0) return 1;
  return 0;
}

void rtm_figure_value_range(const float *values, size_t count, rtm_figure_style_t *style) {
  double lo = INFINITY, hi = -INFINITY;
  for (size_t i = 0; i < count; ++i)
    if (isfinite(values[i])) {
      lo = fmin(lo, values[i]);
      hi = fmax(hi, values[i]);
    }
  if (!(lo <= hi)) lo = hi = 0.0; /* none finite: refused before, by the caller's check */
  style->diverging = 0;
  style->lo = lo;
  /* a constant model: a range around its value, as rtm_figure_colour_range gives one */
  style->hi = hi > lo ? hi : lo + (lo != 0.0 ? fabs(lo) * 1e-3 : 1.0);
}

void rtm_figure_slice_panel(const rtm_io_axes_t *axes, const rtm_figure_image_t *slice,
                            rtm_figure_panel_t *panel) {
  const int have = axes->has_grid;
  const char axis = slice->axis;
  /* image columns and rows of each plane (rtm_volume_slice): z: x, y; y: x, z; x: y, z */
  const int column_axis = axis == 'x' ? 1 : 0, row_axis = axis == 'z' ? 1 : 2;
  static const char *const with_metres[3] = {"x (m)", "y (m)", "depth z (m)"};
  static const char *const with_cells[3] = {"x (cells)", "y (cells)", "depth z (cells)"};
  *panel = (rtm_figure_panel_t){
      .values = slice->values,
      .columns = slice->width,
      .rows = slice->height,
      .x_first = have ? axes->origin_m[column_axis] : 0.0,
      .x_step = have ? axes->spacing_m[column_axis] : 1.0,
      .y_first = have ? axes->origin_m[row_axis] : 0.0,
      .y_step = have ? axes->spacing_m[row_axis] : 1.0,
      .x_label = (have ? with_metres : with_cells)[column_axis],
      .y_label = (have ? with_metres : with_cells)[row_axis],
      .same_units = 1,
      .y_down = axis != 'z',
  };
}
