/* hostile_h5 KIND OUT.h5: HDF5 files the robustness suite feeds to plot and validate.
 *   names   float datasets [4][5] at the root and under /traces whose names hold an ESC
 *           sequence, C1 bytes (raw and UTF-8-encoded), invalid UTF-8, and one clean
 *           UTF-8 name (café) that must come through as it is
 *   empty   datasets of no samples: /traces/p [0][10], /traces/q [3][0], /vp [4][0][4],
 *           /snapshots/p [2][4][0][4]
 *   nan     /snapshots/p [2][4][4][4] all NaN, /traces/p [3][10] NaN and Inf, /vp [4][4][4]
 *           with 5 of its 64 cells NaN (the rest 1500 to 1563 m/s)
 *   partial /vp [24][24][24] in chunks of [8][8][8], fill value 2000, only its first chunk
 *           written (1800 m/s): the rest reads as 2000, a valid velocity; a model file's
 *           root attribute spacing (10 m)
 *   gzip    the same /vp compressed (deflate), every chunk written (1800 m/s): whole
 *   gzip_partial  the same compressed, its first chunk alone written
 * Exit 0 written, 1 on any HDF5 failure, 2 usage. */
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* One float dataset of the shape given, filled from `values` (NULL: zeros); its group made. */
static int write_dataset(hid_t file, const char *name, int rank, const hsize_t *dims,
                         const float *values) {
  hsize_t count = 1;
  for (int i = 0; i < rank; ++i)
    count *= dims[i];
  float zeros[1] = {0.0f};
  hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
  hid_t space = H5Screate_simple(rank, dims, NULL);
  int ok = lcpl >= 0 && space >= 0 && H5Pset_create_intermediate_group(lcpl, 1) >= 0;
  hid_t set =
      ok ? H5Dcreate2(file, name, H5T_IEEE_F32LE, space, lcpl, H5P_DEFAULT, H5P_DEFAULT) : -1;
  ok = set >= 0;
  if (ok && count > 0)
    ok = H5Dwrite(set, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values ? values : zeros) >=
         0;
  if (set >= 0) H5Dclose(set);
  if (space >= 0) H5Sclose(space);
  if (lcpl >= 0) H5Pclose(lcpl);
  if (!ok) fprintf(stderr, "hostile_h5: cannot write a dataset [rank %d]\n", rank);
  return ok ? 0 : 1;
}

static int write_names(hid_t file) {
  static const char *const names[] = {
      "/\x1b[31mred\x1b[0m",    /* an SGR colour sequence */
      "/\x1b]0;owned\x07title", /* a window-title OSC, BEL-terminated */
      "/c1\x9b"
      "31mcsi", /* C1 CSI as a raw byte (also invalid UTF-8) */
      "/utf8c1\xc2\x9b"
      "31m",                    /* C1 CSI encoded as UTF-8 (U+009B) */
      "/bad\xff\xfeutf8",       /* bytes that never start a UTF-8 character */
      "/overlong\xc0\xafslash", /* an overlong '/' */
      "/traces/\x1b[2Jclear",   /* clear screen, under /traces */
      "/caf\xc3\xa9",           /* clean UTF-8: printed as it is */
  };
  float values[20];
  for (int i = 0; i < 20; ++i)
    values[i] = 0.25f * (float)(i + 1);
  const hsize_t dims[2] = {4, 5};
  int failed = 0;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i)
    failed |= write_dataset(file, names[i], 2, dims, values);
  return failed;
}

static int write_empty(hid_t file) {
  const hsize_t no_receivers[2] = {0, 10}, no_samples[2] = {3, 0}, no_y[3] = {4, 0, 4},
                no_y_series[4] = {2, 4, 0, 4};
  return write_dataset(file, "/traces/p", 2, no_receivers, NULL) |
         write_dataset(file, "/traces/q", 2, no_samples, NULL) |
         write_dataset(file, "/vp", 3, no_y, NULL) |
         write_dataset(file, "/snapshots/p", 4, no_y_series, NULL);
}

static int write_nan(hid_t file) {
  float snapshots[2 * 64], traces[30], vp[64];
  for (int i = 0; i < 2 * 64; ++i)
    snapshots[i] = NAN;
  for (int i = 0; i < 30; ++i)
    traces[i] = i % 3 ? NAN : (i % 2 ? INFINITY : -INFINITY);
  for (int i = 0; i < 64; ++i)
    vp[i] = 1500.0f + (float)i;
  for (int i = 0; i < 5; ++i)
    vp[7 + 11 * i] = NAN; /* 7, 18, 29, 40, 51: cells of the middle planes too */
  const hsize_t series[4] = {2, 4, 4, 4}, gather[2] = {3, 10}, volume[3] = {4, 4, 4};
  return write_dataset(file, "/snapshots/p", 4, series, snapshots) |
         write_dataset(file, "/traces/p", 2, gather, traces) |
         write_dataset(file, "/vp", 3, volume, vp);
}

static int write_partial(hid_t file, int compressed, int whole) {
  static float values[24 * 24 * 24];
  const hsize_t dims[3] = {24, 24, 24}, chunk_dims[3] = {8, 8, 8}, start[3] = {0, 0, 0};
  const float fill = 2000.0f;
  for (int i = 0; i < 24 * 24 * 24; ++i)
    values[i] = 1800.0f;
  hid_t plist = H5Pcreate(H5P_DATASET_CREATE), space = H5Screate_simple(3, dims, NULL);
  hid_t memory = H5Screate_simple(3, whole ? dims : chunk_dims, NULL);
  int ok = plist >= 0 && space >= 0 && memory >= 0 && H5Pset_chunk(plist, 3, chunk_dims) >= 0 &&
           H5Pset_fill_value(plist, H5T_NATIVE_FLOAT, &fill) >= 0 &&
           (!compressed || H5Pset_deflate(plist, 1) >= 0);
  hid_t set =
      ok ? H5Dcreate2(file, "/vp", H5T_IEEE_F32LE, space, H5P_DEFAULT, plist, H5P_DEFAULT) : -1;
  ok = set >= 0 &&
       (whole || H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, chunk_dims, NULL) >= 0) &&
       H5Dwrite(set, H5T_NATIVE_FLOAT, memory, space, H5P_DEFAULT, values) >= 0;
  if (set >= 0) H5Dclose(set);
  if (memory >= 0) H5Sclose(memory);
  if (space >= 0) H5Sclose(space);
  if (plist >= 0) H5Pclose(plist);
  /* the model file's root attribute spacing: the tiny deck's 10 m */
  const double spacing[3] = {10.0, 10.0, 10.0};
  const hsize_t three = 3;
  hid_t attr_space = H5Screate_simple(1, &three, NULL);
  hid_t attr = attr_space >= 0 ? H5Acreate2(file, "spacing", H5T_IEEE_F64LE, attr_space,
                                            H5P_DEFAULT, H5P_DEFAULT)
                               : -1;
  ok = ok && attr >= 0 && H5Awrite(attr, H5T_NATIVE_DOUBLE, spacing) >= 0;
  if (attr >= 0) H5Aclose(attr);
  if (attr_space >= 0) H5Sclose(attr_space);
  if (!ok) fprintf(stderr, "hostile_h5: cannot write the partial /vp\n");
  return ok ? 0 : 1;
}

int main(int argc, char **argv) {
  if (argc != 3 ||
      (strcmp(argv[1], "names") && strcmp(argv[1], "empty") && strcmp(argv[1], "nan") &&
       strcmp(argv[1], "partial") && strcmp(argv[1], "gzip") && strcmp(argv[1], "gzip_partial"))) {
    fprintf(stderr, "usage: hostile_h5 names|empty|nan|partial|gzip|gzip_partial OUT.h5\n");
    return 2;
  }
  hid_t file = H5Fcreate(argv[2], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (file < 0) {
    fprintf(stderr, "hostile_h5: cannot create %s\n", argv[2]);
    return 1;
  }
  int failed = strcmp(argv[1], "names") == 0     ? write_names(file)
               : strcmp(argv[1], "empty") == 0   ? write_empty(file)
               : strcmp(argv[1], "nan") == 0     ? write_nan(file)
               : strcmp(argv[1], "partial") == 0 ? write_partial(file, 0, 0)
               : strcmp(argv[1], "gzip") == 0    ? write_partial(file, 1, 1)
                                                 : write_partial(file, 1, 0);
  failed |= H5Fclose(file) < 0;
  H5close();
  return failed ? 1 : 0;
}
