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

/* The tEXt chunk that marks a PNG as rtm3d's ("Software", a registered keyword): written by
 * rtm_png_write and added to PLplot's figures (rtm_png_mark); a --force run removes an
 * earlier run's figure only when it finds it. */
static const char software_key[] = "Software", software_text[] = "rtm3d";

static const unsigned char png_signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

static void put_big_endian(unsigned char *b, unsigned long value) {
  b[0] = (unsigned char)(value >> 24);
  b[1] = (unsigned char)(value >> 16);
  b[2] = (unsigned char)(value >> 8);
  b[3] = (unsigned char)value;
}

static unsigned long get_big_endian(const unsigned char *b) {
  return (unsigned long)b[0] << 24 | (unsigned long)b[1] << 16 | (unsigned long)b[2] << 8 | b[3];
}

/* PNG's CRC-32 (ISO 3309, polynomial 0xedb88320, reflected) of a chunk's type and data. */
static unsigned long png_crc(const unsigned char *bytes, size_t count) {
  unsigned long crc = 0xffffffffUL;
  for (size_t i = 0; i < count; ++i) {
    crc ^= bytes[i];
    for (int bit = 0; bit < 8; ++bit)
      crc = crc & 1 ? 0xedb88320UL ^ (crc >> 1) : crc >> 1;
  }
  return crc ^ 0xffffffffUL;
}

int rtm_png_mark(const char *path) {
  enum { IHDR_END = 8 + 8 + 13 + 4, MARK_MAX = 64 * 1024 * 1024 };
  unsigned char chunk[12 + sizeof software_key + sizeof software_text];
  const size_t data = sizeof software_key + sizeof software_text - 1; /* key NUL text */
  int status = RTM_ERR_IO;
  FILE *file = fopen(path, "rb");
  unsigned char *bytes = NULL;
  long size = -1;
  if (file && fseek(file, 0, SEEK_END) == 0) size = ftell(file);
  if (size > IHDR_END && size < MARK_MAX && fseek(file, 0, SEEK_SET) == 0 &&
      (bytes = malloc((size_t)size)) && fread(bytes, 1, (size_t)size, file) == (size_t)size &&
      memcmp(bytes, png_signature, 8) == 0 && memcmp(bytes + 12, "IHDR", 4) == 0)
    status = RTM_OK;
  if (file) fclose(file);
  if (status == RTM_OK) { /* after IHDR, which must come first */
    put_big_endian(chunk, (unsigned long)data);
    memcpy(chunk + 4, "tEXt", 4);
    memcpy(chunk + 8, software_key, sizeof software_key);
    memcpy(chunk + 8 + sizeof software_key, software_text, sizeof software_text - 1);
    put_big_endian(chunk + 8 + data, png_crc(chunk + 4, 4 + data));
    file = fopen(path, "wb");
    const int written =
        file && fwrite(bytes, 1, IHDR_END, file) == IHDR_END &&
        fwrite(chunk, 1, 12 + data, file) == 12 + data &&
        fwrite(bytes + IHDR_END, 1, (size_t)size - IHDR_END, file) == (size_t)size - IHDR_END;
    if (!file || fclose(file) != 0 || !written) status = RTM_ERR_IO;
  }
  free(bytes);
  return status;
}

int rtm_png_written_by_rtm3d(const char *path) {
  unsigned char head[8], text[sizeof software_key + sizeof software_text];
  int found = 0;
  FILE *file = fopen(path, "rb");
  if (!file) return 0;
  if (fread(head, 1, 8, file) == 8 && memcmp(head, png_signature, 8) == 0) {
    /* the chunks before the image data: the marker is among them */
    for (int chunks = 0; !found && chunks < 64 && fread(head, 1, 8, file) == 8; ++chunks) {
      const unsigned long length = get_big_endian(head);
      if (memcmp(head + 4, "IDAT", 4) == 0 || memcmp(head + 4, "IEND", 4) == 0 ||
          length > 0x7fffffffUL)
        break;
      if (memcmp(head + 4, "tEXt", 4) == 0 && length == sizeof text - 1 &&
          fread(text, 1, length, file) == length) {
        found = memcmp(text, software_key, sizeof software_key) == 0 &&
                memcmp(text + sizeof software_key, software_text, sizeof software_text - 1) == 0;
        if (fseek(file, 4, SEEK_CUR) != 0) break;
      } else if (fseek(file, (long)length + 4, SEEK_CUR) != 0) {
        break;
      }
    }
  }
  fclose(file);
  return found;
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
  png_text text[2];
  memset(text, 0, sizeof text);
  text[0] = (png_text){.compression = PNG_TEXT_COMPRESSION_NONE,
                       .key = (char *)software_key,
                       .text = (char *)software_text}; /* rtm_png_written_by_rtm3d */
  if (title && title[0]) {
    text[1].key = "Title";
    if (utf8_to_latin1(title, latin1_title, sizeof latin1_title)) {
      text[1].compression = PNG_TEXT_COMPRESSION_NONE;
      text[1].text = latin1_title;
    } else {
      text[1].compression = PNG_ITXT_COMPRESSION_NONE;
      text[1].text = (char *)title;
    }
  }
  png_set_text(png, info, text, title && title[0] ? 2 : 1);
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
