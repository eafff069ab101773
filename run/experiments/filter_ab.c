/* run/experiments/filter_ab.c - the image's Laplacian of this tree (rtm_image_laplacian)
 * against an earlier revision's (its solver/rtm/filters.c with the function renamed
 * old_laplacian, compiled beside this file by filter_ab.sh): the floats of both on random
 * volumes of three shapes (rows that end a vector short, a cube, a slab of a volume) and
 * three box widths, counted cell by cell, then both timed on 256^3 three times. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rtm_grid.h"
#include "rtm_imaging.h"

int old_laplacian(const rtm_grid_t *grid, int width, float *image, float *scratch);

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* xorshift64: values in [-1, 1), every 97th scaled to 1e-30 (subnormal products) */
static void fill(float *values, size_t count, unsigned long long *x) {
  for (size_t i = 0; i < count; ++i) {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    const double u = (double)(*x >> 11) / 9007199254740992.0 * 2.0 - 1.0;
    values[i] = (float)u * (i % 97 == 0 ? 1e-30f : 1.0f);
  }
}

int main(void) {
  static const int shapes[][3] = {{203, 77, 45}, {64, 64, 64}, {37, 41, 29}};
  static const int widths[] = {0, 3, 20};
  const double spacing_m[3] = {10.0, 12.5, 7.0};
  unsigned long long x = 88172645463325252ULL;
  size_t differ = 0;
  for (int c = 0; c < 3; ++c)
    for (int w = 0; w < 3; ++w) {
      rtm_grid_t grid;
      if (rtm_grid_init(&grid, shapes[c], spacing_m, NULL) != 0) return 2;
      if (c == 2 && rtm_grid_set_z_range(&grid, 5, 20) != 0) return 2; /* a slab */
      const size_t cells = rtm_grid_interior_cells(&grid);
      const size_t scratch_cells = rtm_image_laplacian_scratch_cells(&grid);
      float *old = malloc(cells * sizeof *old), *new = malloc(cells * sizeof *new);
      float *scratch = calloc(scratch_cells, sizeof *scratch);
      if (!old || !new || !scratch) return 2;
      fill(old, cells, &x);
      memcpy(new, old, cells * sizeof *new);
      if (old_laplacian(&grid, widths[w], old, scratch) != 0) return 2;
      memset(scratch, 0, scratch_cells * sizeof *scratch);
      if (rtm_image_laplacian(&grid, widths[w], new, scratch) != 0) return 2;
      size_t d = 0;
      for (size_t i = 0; i < cells; ++i)
        d += memcmp(&old[i], &new[i], sizeof *old) != 0;
      printf("%d x %d x %d, width %d: %zu of %zu cells differ\n", shapes[c][0], shapes[c][1],
             grid.nz_local, widths[w], d, cells);
      differ += d;
      free(old), free(new), free(scratch);
    }
  const int n[3] = {256, 256, 256};
  rtm_grid_t grid;
  if (rtm_grid_init(&grid, n, spacing_m, NULL) != 0) return 2;
  const size_t cells = rtm_grid_interior_cells(&grid);
  float *image = malloc(cells * sizeof *image);
  float *scratch = calloc(rtm_image_laplacian_scratch_cells(&grid), sizeof *scratch);
  if (!image || !scratch) return 2;
  fill(image, cells, &x);
  for (int round = 0; round < 3; ++round) {
    const double t0 = now_s();
    old_laplacian(&grid, 20, image, scratch);
    const double t1 = now_s();
    rtm_image_laplacian(&grid, 20, image, scratch);
    printf("256^3, width 20: old %.3f s, new %.3f s\n", t1 - t0, now_s() - t1);
  }
  free(image), free(scratch);
  return differ == 0 ? 0 : 1;
}
