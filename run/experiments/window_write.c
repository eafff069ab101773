/* window_write.c - how fast a streamed run's gathers can reach a file (issue 34): 25
 * windows of RECEIVERS x 80 floats (a 472 x 472 receiver plane, 2001 samples: 1.78 GB)
 * written as fwrite calls, then as HDF5 chunks [receivers][80] of one dataset as rtm3d's
 * stream writes them (io/run_file.c), each after the same finiteness pass rtm3d makes
 * (OpenMP), timed apart; with NOFILL set in the environment the dataset's chunks are not
 * filled before their first write (H5D_FILL_TIME_NEVER, as rtm3d's /traces). Usage:
 * window_write DIR [RECEIVERS]. Built and run by window_write.sh. */
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

static int all_finite(const float *values, size_t count) {
  int bad = 0;
#pragma omp parallel for schedule(static) reduction(| : bad)
  for (size_t i = 0; i < count; ++i)
    bad |= !isfinite(values[i]);
  return !bad;
}

int main(int argc, char **argv) {
  if (argc < 2) return fprintf(stderr, "usage: window_write DIR [RECEIVERS]\n"), 2;
  const hsize_t receivers = argc > 2 ? (hsize_t)atol(argv[2]) : 222784, window = 80, n = 2001;
  const int windows = (int)((n + window - 1) / window);
  float *buffer = malloc(receivers * window * sizeof *buffer);
  if (!buffer) return 1;
  for (size_t i = 0; i < receivers * window; ++i)
    buffer[i] = (float)(i % 1000) * 1e-3f;
  char raw[4096], h5[4096];
  snprintf(raw, sizeof raw, "%s/window_write.raw", argv[1]);
  snprintf(h5, sizeof h5, "%s/window_write.h5", argv[1]);
  double start = now();
  FILE *file = fopen(raw, "wb");
  if (!file) return 1;
  for (int k = 0; k < windows; ++k)
    fwrite(buffer, sizeof(float), receivers * (k + 1 < windows ? window : n - k * window), file);
  fclose(file);
  const double raw_s = now() - start;
  remove(raw);
  hid_t out = H5Fcreate(h5, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  hsize_t dims[2] = {receivers, n}, chunk[2] = {receivers, window};
  hid_t space = H5Screate_simple(2, dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 2, chunk);
  if (getenv("NOFILL")) H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER);
  hid_t dataset = H5Dcreate2(out, "p", H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  double check_s = 0.0, write_s = 0.0;
  start = now();
  for (int k = 0; k < windows; ++k) {
    const hsize_t count = (k + 1) * window <= n ? window : n - k * window;
    const hsize_t first[2] = {0, k * window}, size[2] = {receivers, count};
    double t = now();
    if (!all_finite(buffer, receivers * count)) return 1;
    check_s += now() - t;
    hid_t file_space = H5Dget_space(dataset), memory = H5Screate_simple(2, size, NULL);
    H5Sselect_hyperslab(file_space, H5S_SELECT_SET, first, NULL, size, NULL);
    t = now();
    H5Dwrite(dataset, H5T_NATIVE_FLOAT, memory, file_space, H5P_DEFAULT, buffer);
    write_s += now() - t;
    H5Sclose(memory);
    H5Sclose(file_space);
  }
  H5Dclose(dataset);
  H5Fclose(out);
  const double h5_s = now() - start;
  remove(h5);
  const double gb = 4e-9 * (double)receivers * (double)n;
  printf("%.2f GB in %d windows: fwrite %.2f s (%.2f GB/s); hdf5 %.2f s (%.2f GB/s): "
         "finiteness %.2f s, H5Dwrite %.2f s\n",
         gb, windows, raw_s, gb / raw_s, h5_s, gb / h5_s, check_s, write_s);
  free(buffer);
  return 0;
}
