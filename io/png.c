/* PNG slices with a symmetric red-white-blue colormap: value / clip in [-1, 1] maps
 * -1 -> blue (0, 0, 255), 0 -> white, +1 -> red (255, 0, 0), linearly in between; values
 * beyond the clip saturate and non-finite values are black. */
#include "rtm_io.h"

#include <errno.h>
#include <math.h>
#include <png.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include "rtm_io_impl.h"

static void swap_float(float *a, float *b) {
  float t = *a;
  *a = *b;
  *b = t;
}

/* Quickselect (nth_element): rtm_io.h. Median of three pivots keep sorted and constant
 * inputs linear on average. */
float rtm_select_kth(float *values, size_t count, size_t k) {
  size_t lo = 0, hi = count - 1;
  while (hi > lo) {
    size_t mid = lo + (hi - lo) / 2;
    if (values[mid] < values[lo]) swap_float(&values[mid], &values[lo]);
    if (values[hi] < values[lo]) swap_float(&values[hi], &values[lo]);
    if (values[hi] < values[mid]) swap_float(&values[hi], &values[mid]);
    float pivot = values[mid];
    size_t i = lo, j = hi;
    while (i <= j) {
      while (values[i] < pivot)
        ++i;
      while (values[j] > pivot)
        --j;
      if (i <= j) {
        swap_float(&values[i], &values[j]);
        ++i;
        if (j == 0) break;
        --j;
      }
    }
    if (k <= j)
      hi = j;
    else if (k >= i)
      lo = i;
    else
      break;
  }
  return values[k];
}

int rtm_png_clip_value(const float *values, size_t count, double clip_percentile, double *clip) {
  if (!(clip_percentile > 0.0 && clip_percentile <= 100.0)) {
    rtm_log_error("clip percentile %g must be in (0, 100]", clip_percentile);
    return RTM_ERR_USAGE;
  }
  float *magnitude = malloc((count ? count : 1) * sizeof *magnitude);
  if (!magnitude) {
    rtm_log_error("out of memory choosing the clip of %zu values", count);
    return RTM_ERR_NOMEM;
  }
  size_t finite = 0;
  for (size_t i = 0; i < count; ++i)
    if (isfinite(values[i])) magnitude[finite++] = fabsf(values[i]);
  *clip = 1.0;
  if (finite > 0) {
    /* the smallest |value| that at least clip_percentile % of the values do not exceed */
    double rank = ceil(clip_percentile / 100.0 * (double)finite) - 1.0;
    size_t k = rank < 0.0 ? 0 : (size_t)rank;
    if (k >= finite) k = finite - 1;
    double level = rtm_select_kth(magnitude, finite, k);
    if (level > 0.0) *clip = level;
  }
  free(magnitude);
  return RTM_OK;
}

static void colour(float value, double clip, png_byte rgb[3]) {
  if (!isfinite(value)) {
    rgb[0] = rgb[1] = rgb[2] = 0;
    return;
  }
  double t = value / clip;
  if (t > 1.0) t = 1.0;
  if (t < -1.0) t = -1.0;
  png_byte fade = (png_byte)lround(255.0 * (1.0 - fabs(t)));
  rgb[0] = t >= 0.0 ? 255 : fade;
  rgb[1] = fade;
  rgb[2] = t <= 0.0 ? 255 : fade;
}

/* tEXt is Latin-1: converts UTF-8 (the "±" of our titles) when every character fits.
 * Returns 0 when one does not, and the caller uses an iTXt chunk instead. */
static int utf8_to_latin1(const char *text, char *out, size_t size) {
  size_t used = 0;
  for (const unsigned char *c = (const unsigned char *)text; *c; ++c) {
    unsigned code = *c;
    if (code >= 0x80) {
      if ((code == 0xc2 || code == 0xc3) && (c[1] & 0xc0) == 0x80) {
        code = ((code & 0x1f) << 6) | (c[1] & 0x3f);
        ++c;
      } else {
        return 0;
      }
    }
    if (used + 1 >= size) return 0;
    out[used++] = (char)code;
  }
  out[used] = '\0';
  return 1;
}

static void png_error_handler(png_structp png, png_const_charp message) {
  char *buffer = png_get_error_ptr(png);
  snprintf(buffer, 256, "%s", message);
  png_longjmp(png, 1);
}

static void png_warning_handler(png_structp png, png_const_charp message) {
  (void)png;
  (void)message;
}

/* Encodes the image into an open file. libpng reports errors by longjmp, so this function
 * keeps to locals that are set before setjmp and never changed after it. */
static int encode(FILE *file, const float *values, int width, int height, double clip,
                  const char *title, png_bytep row, char *message) {
  char latin1_title[1024];
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, message, png_error_handler,
                                            png_warning_handler);
  png_infop info = png ? png_create_info_struct(png) : NULL;
  if (!png || !info) {
    snprintf(message, 256, "out of memory");
    if (png) png_destroy_write_struct(&png, NULL);
    return RTM_ERR_NOMEM;
  }
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    return RTM_ERR_IO;
  }
  png_init_io(png, file);
  png_set_IHDR(png, info, (png_uint_32)width, (png_uint_32)height, 8, PNG_COLOR_TYPE_RGB,
               PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  if (title && title[0]) {
    png_text text;
    memset(&text, 0, sizeof text);
    text.key = "Title";
    if (utf8_to_latin1(title, latin1_title, sizeof latin1_title)) {
      text.compression = PNG_TEXT_COMPRESSION_NONE;
      text.text = latin1_title;
    } else {
      text.compression = PNG_ITXT_COMPRESSION_NONE;
      text.text = (char *)title;
    }
    png_set_text(png, info, &text, 1);
  }
  png_write_info(png, info);
  for (int y = 0; y < height; ++y) {
    const float *source = values + (size_t)y * (size_t)width;
    for (int x = 0; x < width; ++x)
      colour(source[x], clip, row + 3 * (size_t)x);
    png_write_row(png, row);
  }
  png_write_end(png, info);
  png_destroy_write_struct(&png, &info);
  return RTM_OK;
}

/* The likely cause of a failed write, for the message. */
static const char *full_disk_hint(int error) {
  return error == ENOSPC  ? " (the disk is full)"
         : error == EFBIG ? " (a file size limit: ulimit -f)"
                          : "";
}

int rtm_png_write(const char *path, const float *values, int width, int height,
                  double clip_percentile, const char *title) {
  int status = RTM_OK;
  FILE *file = NULL;
  png_bytep row = NULL;
  char message[256] = "", aside[4096 + 32] = "";
  double clip;
  if (width < 1 || height < 1)
    RTM_FAIL(RTM_ERR_USAGE, "cannot write %s: image size %d x %d (need at least 1 x 1)", path,
             width, height);
  RTM_TRY(rtm_png_clip_value(values, (size_t)width * (size_t)height, clip_percentile, &clip));
  row = malloc((size_t)width * 3);
  if (!row) RTM_FAIL(RTM_ERR_NOMEM, "out of memory writing %s", path);
  RTM_TRY(rtm_io_make_parent_dir(path));
  RTM_TRY(rtm_io_aside_create(path, aside, sizeof aside)); /* PATH is replaced only when whole */
  file = fopen(aside, "wb");
  if (!file) RTM_FAIL(RTM_ERR_IO, "cannot write %s: %s", aside, strerror(errno));
  errno = 0;
  status = encode(file, values, width, height, clip, title, row, message);
  if (status != RTM_OK)
    RTM_FAIL(status, "cannot write %s: libpng: %s (%s)%s", path, message,
             errno ? strerror(errno) : "no system error", full_disk_hint(errno));
  /* a write the stream failed (its error flag) or its last one at the close */
  int close_failed = ferror(file) != 0;
  close_failed = fclose(file) != 0 || close_failed;
  file = NULL;
  if (close_failed)
    RTM_FAIL(RTM_ERR_IO, "cannot write %s: %s%s", path, errno ? strerror(errno) : "a write failed",
             full_disk_hint(errno));
  status = rtm_io_commit_partial(aside, path);
  aside[0] = '\0'; /* renamed, or removed by the failed commit */
fail:
  if (file) fclose(file);
  if (aside[0]) remove(aside);
  free(row);
  return status;
}

/* Copies plane `plane` of a [nz][ny][nx] volume across `axis` into a row-major image:
 * z: rows y, columns x; y: rows z, columns x; x: rows z, columns y. */
void rtm_volume_slice(const float *volume, const size_t dims[3], char axis, size_t plane,
                      float *image, int *width, int *height) {
  const size_t nz = dims[0], ny = dims[1], nx = dims[2];
  if (axis == 'z') {
    memcpy(image, volume + plane * ny * nx, ny * nx * sizeof *image);
    *width = (int)nx;
    *height = (int)ny;
  } else if (axis == 'y') {
    for (size_t z = 0; z < nz; ++z)
      memcpy(image + z * nx, volume + (z * ny + plane) * nx, nx * sizeof *image);
    *width = (int)nx;
    *height = (int)nz;
  } else {
    for (size_t z = 0; z < nz; ++z)
      for (size_t y = 0; y < ny; ++y)
        image[z * ny + y] = volume[(z * ny + y) * nx + plane];
    *width = (int)ny;
    *height = (int)nz;
  }
}
