/* rtm_test_png.h - reads a PNG back with libpng for the tests: size, RGB pixels, Title text. */
#ifndef RTM_TEST_PNG_H
#define RTM_TEST_PNG_H

#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  int width, height;
  unsigned char *rgb; /* [height][width][3] */
  char title[1024];
  int title_compression; /* PNG_TEXT_COMPRESSION_NONE for tEXt */
} test_png_t;

/* 0 on success. */
static inline int test_png_read(const char *path, test_png_t *image) {
  memset(image, 0, sizeof *image);
  FILE *file = fopen(path, "rb");
  if (!file) return -1;
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
  png_infop info = png_create_info_struct(png);
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_read_struct(&png, &info, NULL);
    fclose(file);
    return -1;
  }
  png_init_io(png, file);
  png_read_png(png, info,
               PNG_TRANSFORM_STRIP_16 | PNG_TRANSFORM_PACKING | PNG_TRANSFORM_STRIP_ALPHA, NULL);
  if (png_get_color_type(png, info) != PNG_COLOR_TYPE_RGB) png_error(png, "not RGB");
  image->width = (int)png_get_image_width(png, info);
  image->height = (int)png_get_image_height(png, info);
  png_bytepp rows = png_get_rows(png, info);
  image->rgb = malloc((size_t)image->width * (size_t)image->height * 3);
  for (int y = 0; y < image->height; ++y)
    memcpy(image->rgb + (size_t)y * (size_t)image->width * 3, rows[y], (size_t)image->width * 3);
  png_textp text = NULL;
  int count = png_get_text(png, info, &text, NULL);
  for (int i = 0; i < count; ++i)
    if (strcmp(text[i].key, "Title") == 0) {
      snprintf(image->title, sizeof image->title, "%s", text[i].text);
      image->title_compression = text[i].compression;
    }
  png_destroy_read_struct(&png, &info, NULL);
  fclose(file);
  return 0;
}

static inline const unsigned char *test_png_pixel(const test_png_t *image, int x, int y) {
  return image->rgb + ((size_t)y * (size_t)image->width + (size_t)x) * 3;
}

static inline int test_png_is(const test_png_t *image, int x, int y, int r, int g, int b) {
  const unsigned char *p = test_png_pixel(image, x, y);
  return p[0] == r && p[1] == g && p[2] == b;
}

#endif
