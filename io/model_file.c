/* HDF5 models: /vp /epsilon /delta /theta /phi [nz][ny][nx] with root attributes
 * spacing = (dx, dy, dz) and origin = (x0, y0, z0) in metres. Each rank reads the
 * hyperslab of its z-range. The arrays are io's own; the app hands them to the solver. */
#include "rtm_io.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>

#include "rtm_io_impl.h"

typedef struct {
  const char *dataset; /* name under the root */
  const char *units;
  rtm_equation_t first_equation; /* the simplest equation that needs it */
} model_parameter_t;

/* indexed by rtm_io_parameter_t */
static const model_parameter_t parameters[RTM_IO_PARAMETERS] = {
    {"vp", "m/s", RTM_EQUATION_ISO},      {"epsilon", "1", RTM_EQUATION_VTI},
    {"delta", "1", RTM_EQUATION_VTI},     {"theta", "degrees", RTM_EQUATION_TTI},
    {"phi", "degrees", RTM_EQUATION_TTI},
};

/* Equations are ordered iso < vti < tti and each needs the parameters of the previous. */
int rtm_io_equation_needs(rtm_equation_t equation, rtm_io_parameter_t parameter) {
  return equation >= parameters[parameter].first_equation;
}

static size_t volume_cells(const rtm_io_volume_t *volume) {
  return (size_t)volume->n[0] * (size_t)volume->n[1] * (size_t)volume->nz_local;
}

static double min_spacing(const rtm_io_volume_t *volume) {
  return fmin(volume->spacing_m[0], fmin(volume->spacing_m[1], volume->spacing_m[2]));
}

void rtm_io_model_release(float *values[RTM_IO_PARAMETERS]) {
  for (int i = 0; i < RTM_IO_PARAMETERS; ++i) {
    free(values[i]);
    values[i] = NULL;
  }
}

/* Relative difference used for spacing and origin checks: files written by other tools
 * round-trip metres through text or single precision, so equality is too strict. */
static int differs(double a, double b, double scale) {
  return fabs(a - b) > 1e-6 * scale;
}

static int check_geometry(hid_t file, const char *path, const rtm_io_volume_t *volume) {
  int status = RTM_OK, present;
  double spacing[3], origin[3];
  char context[RTM_CONFIG_PATH_MAX + 32];
  snprintf(context, sizeof context, "model file %s", path);
  RTM_TRY(rtm_h5_read_attr_doubles(file, context, "spacing", 3, "x, y, z in metres", spacing,
                                   &present));
  if (!present)
    RTM_FAIL(RTM_ERR_INPUT,
             "model file %s has no root attribute 'spacing' (3 doubles: dx, dy, dz in metres)",
             path);
  for (int a = 0; a < 3; ++a)
    if (!(spacing[a] > 0.0) || differs(spacing[a], volume->spacing_m[a], volume->spacing_m[a]))
      RTM_FAIL(RTM_ERR_INPUT,
               "model file %s: attribute spacing = (%.9g, %.9g, %.9g) m differs from the "
               "config's grid.spacing = (%.9g, %.9g, %.9g) m",
               path, spacing[0], spacing[1], spacing[2], volume->spacing_m[0], volume->spacing_m[1],
               volume->spacing_m[2]);
  RTM_TRY(
      rtm_h5_read_attr_doubles(file, context, "origin", 3, "x, y, z in metres", origin, &present));
  if (present) {
    double scale = min_spacing(volume);
    /* a NaN compares false with everything: it would pass differs() unnoticed */
    for (int a = 0; a < 3; ++a)
      if (!isfinite(origin[a]))
        RTM_FAIL(RTM_ERR_INPUT,
                 "model file %s: attribute origin = (%.9g, %.9g, %.9g) m is not finite: the "
                 "file is damaged (the config's grid.ox, oy, oz are (%.9g, %.9g, %.9g) m)",
                 path, origin[0], origin[1], origin[2], volume->origin_m[0], volume->origin_m[1],
                 volume->origin_m[2]);
    for (int a = 0; a < 3; ++a)
      if (differs(origin[a], volume->origin_m[a], scale)) {
        rtm_log_warning("model file %s: attribute origin = (%.9g, %.9g, %.9g) m differs from the "
                        "config's grid.origin = (%.9g, %.9g, %.9g) m; using the config's",
                        path, origin[0], origin[1], origin[2], volume->origin_m[0],
                        volume->origin_m[1], volume->origin_m[2]);
        break;
      }
  }
fail:
  return status;
}

/* The range a model file's /vp must keep: model.vp's, what the deck's constant may (epsilon,
 * delta and the angles have their physical checks in the solver, rtm_anisotropy_check). */
static const rtm_cfg_entry_t *key_of(const char *dataset) {
  if (strcmp(dataset, "vp") != 0) return NULL;
  for (const rtm_cfg_entry_t *row = rtm_config_schema; row->section; ++row)
    if (strcmp(row->section, "model") == 0 && strcmp(row->key, dataset) == 0) return row;
  return NULL;
}

static int check_values(const char *path, const char *dataset, const rtm_io_volume_t *volume,
                        const float *values) {
  const size_t nx = (size_t)volume->n[0], ny = (size_t)volume->n[1];
  const size_t cells = volume_cells(volume);
  const rtm_cfg_entry_t *key = key_of(dataset);
  size_t bad = 0, first = 0, outside = 0, first_outside = 0;
  for (size_t i = 0; i < cells; ++i) {
    if (!isfinite(values[i])) {
      if (bad++ == 0) first = i;
    } else if (key && (values[i] < key->min || values[i] > key->max)) {
      if (outside++ == 0) first_outside = i;
    }
  }
  if (bad > 0) {
    rtm_log_error("model file %s: dataset /%s has %zu non-finite value%s, the first %g at "
                  "[z=%zu][y=%zu][x=%zu]%s",
                  path, dataset, bad, bad == 1 ? "" : "s", values[first],
                  first / (nx * ny) + (size_t)volume->z_offset, first / nx % ny, first % nx,
                  isinf(values[first]) ? " (as float: a value beyond 3.4e38 in a wider type, "
                                         "float64 for one, reads as inf)"
                                       : "");
    return RTM_ERR_INPUT;
  }
  if (outside > 0) {
    char range[64]; /* the schema writes "> 0" as the smallest positive double */
    snprintf(range, sizeof range, "%c%g, %g]", key->min == DBL_TRUE_MIN ? '(' : '[',
             key->min == DBL_TRUE_MIN ? 0.0 : key->min, key->max);
    rtm_log_error("model file %s: dataset /%s has %zu value%s outside %s (the range of "
                  "model.%s), the first %g at [z=%zu][y=%zu][x=%zu]",
                  path, dataset, outside, outside == 1 ? "" : "s", range, dataset,
                  values[first_outside], first_outside / (nx * ny) + (size_t)volume->z_offset,
                  first_outside / nx % ny, first_outside % nx);
    return RTM_ERR_INPUT;
  }
  return RTM_OK;
}

/* A dataset whose storage was never written whole reads HDF5's fill value where it was not
 * (probe D10: a chunked /vp with one chunk of several written ran as a constant 2000 m/s,
 * its fill value): refused, saying so. HDF5 calls a compressed dataset's storage partly
 * allocated whenever it is smaller than its values (probe M, M3), so a chunked one is
 * judged by its chunks: every one of them written. A virtual dataset maps other files,
 * whose absence reads as the fill value too: refused as such (rewrite it as a plain
 * dataset). */
/* A chunked dataset's chunks: how many its shape holds, and how many are written. */
static int count_chunks(hid_t dataset, hid_t plist, const char *path, const char *dataset_path,
                        hsize_t *chunks, hsize_t *written) {
  int status = RTM_OK;
  hid_t space = H5I_INVALID_HID;
  hsize_t dims[H5S_MAX_RANK], chunk[H5S_MAX_RANK];
  RTM_H5_CHECK(space = H5Dget_space(dataset), RTM_ERR_INPUT, "model file %s: dataset %s", path,
               dataset_path);
  const int rank = H5Sget_simple_extent_ndims(space);
  if (rank < 1 || H5Sget_simple_extent_dims(space, dims, NULL) != rank ||
      H5Pget_chunk(plist, rank, chunk) != rank)
    RTM_FAIL(RTM_ERR_INPUT, "model file %s: dataset %s: its chunks cannot be read", path,
             dataset_path);
  *chunks = 1;
  for (int d = 0; d < rank; ++d)
    *chunks *= chunk[d] > 0 ? (dims[d] + chunk[d] - 1) / chunk[d] : 0;
  RTM_H5_CHECK(H5Dget_num_chunks(dataset, space, written), RTM_ERR_INPUT,
               "model file %s: dataset %s: counting its chunks", path, dataset_path);
fail:
  rtm_h5_close(&space);
  return status;
}

static int check_written(hid_t dataset, const char *path, const char *dataset_path) {
  int status = RTM_OK;
  hid_t plist = H5I_INVALID_HID;
  H5D_space_status_t allocation = H5D_SPACE_STATUS_ERROR;
  RTM_H5_CHECK(plist = H5Dget_create_plist(dataset), RTM_ERR_INPUT, "model file %s: dataset %s",
               path, dataset_path);
  if (H5Pget_layout(plist) == H5D_VIRTUAL)
    RTM_FAIL(RTM_ERR_INPUT,
             "model file %s: dataset %s is a virtual dataset (it maps other files, whose "
             "missing parts would read as its fill value): write it as a plain dataset",
             path, dataset_path);
  RTM_H5_CHECK(H5Dget_space_status(dataset, &allocation), RTM_ERR_INPUT,
               "model file %s: dataset %s", path, dataset_path);
  char part[64] = "part of its storage";
  if (allocation == H5D_SPACE_STATUS_PART_ALLOCATED && H5Pget_layout(plist) == H5D_CHUNKED) {
    hsize_t chunks = 0, written = 0;
    RTM_TRY(count_chunks(dataset, plist, path, dataset_path, &chunks, &written));
    if (written == chunks) return RTM_OK; /* compressed: smaller than its values */
    snprintf(part, sizeof part, "%llu of its %llu chunks", (unsigned long long)written,
             (unsigned long long)chunks);
  }
  if (allocation != H5D_SPACE_STATUS_ALLOCATED)
    RTM_FAIL(RTM_ERR_INPUT,
             "model file %s: dataset %s was not written whole (%s written; HDF5 would give its "
             "fill value for the rest): write every value (rtm3d makemodel writes whole "
             "datasets)",
             path, dataset_path,
             allocation == H5D_SPACE_STATUS_NOT_ALLOCATED ? "none of its storage" : part);
fail:
  rtm_h5_close(&plist);
  return status;
}

static int read_parameter(hid_t file, const char *path, const rtm_io_volume_t *volume,
                          rtm_equation_t equation, const char *name, float **values) {
  int status = RTM_OK;
  hid_t dataset = H5I_INVALID_HID, space = H5I_INVALID_HID, type = H5I_INVALID_HID;
  hid_t memory_space = H5I_INVALID_HID;
  char dataset_path[64];
  float *data = NULL;
  snprintf(dataset_path, sizeof dataset_path, "/%s", name);
  *values = NULL;

  int exists = rtm_h5_path_exists(file, dataset_path);
  if (exists < 0) RTM_FAIL(RTM_ERR_INPUT, "model file %s: cannot look up %s", path, dataset_path);
  if (!exists)
    RTM_FAIL(RTM_ERR_INPUT, "model file %s has no dataset %s (physics.equation = %s needs it)",
             path, dataset_path, rtm_equation_name(equation));
  RTM_H5_CHECK(dataset = H5Dopen2(file, dataset_path, H5P_DEFAULT), RTM_ERR_INPUT,
               "model file %s: %s is not a readable dataset", path, dataset_path);
  RTM_H5_CHECK(type = H5Dget_type(dataset), RTM_ERR_INPUT, "model file %s: dataset %s", path,
               dataset_path);
  H5T_class_t type_class = H5Tget_class(type);
  if (type_class != H5T_FLOAT && type_class != H5T_INTEGER)
    RTM_FAIL(RTM_ERR_INPUT, "model file %s: dataset %s is not numeric (float or integer)", path,
             dataset_path);
  RTM_H5_CHECK(space = H5Dget_space(dataset), RTM_ERR_INPUT, "model file %s: dataset %s", path,
               dataset_path);
  int rank = H5Sget_simple_extent_ndims(space);
  hsize_t dims[H5S_MAX_RANK];
  const hsize_t expected[3] = {(hsize_t)volume->n[2], (hsize_t)volume->n[1], (hsize_t)volume->n[0]};
  if (rank < 0 || H5Sget_simple_extent_dims(space, dims, NULL) < 0)
    RTM_FAIL(RTM_ERR_INPUT, "model file %s: cannot read the shape of dataset %s", path,
             dataset_path);
  int shape_ok = rank == 3;
  for (int d = 0; shape_ok && d < 3; ++d)
    shape_ok = dims[d] == expected[d];
  if (!shape_ok) {
    char shape[256] = "";
    size_t used = 0;
    for (int d = 0; d < rank && used < sizeof shape; ++d)
      used += (size_t)snprintf(shape + used, sizeof shape - used, "[%llu]",
                               (unsigned long long)dims[d]);
    RTM_FAIL(RTM_ERR_INPUT,
             "model file %s: dataset %s has shape %s but the grid needs [nz][ny][nx] = "
             "[%d][%d][%d] (grid.n = %d, %d, %d)",
             path, dataset_path, rank == 0 ? "scalar" : shape, volume->n[2], volume->n[1],
             volume->n[0], volume->n[0], volume->n[1], volume->n[2]);
  }

  RTM_TRY(check_written(dataset, path, dataset_path));

  const size_t cells = volume_cells(volume);
  data = malloc(cells * sizeof *data);
  if (!data)
    RTM_FAIL(RTM_ERR_NOMEM, "out of memory reading %s from %s (%zu cells)", dataset_path, path,
             cells);
  hsize_t start[3] = {(hsize_t)volume->z_offset, 0, 0};
  hsize_t count[3] = {(hsize_t)volume->nz_local, expected[1], expected[2]};
  RTM_H5_CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL), RTM_ERR_INPUT,
               "model file %s: selecting z = %d..%d of %s", path, volume->z_offset,
               volume->z_offset + volume->nz_local - 1, dataset_path);
  RTM_H5_CHECK(memory_space = H5Screate_simple(3, count, NULL), RTM_ERR_IO,
               "model file %s: dataset %s", path, dataset_path);
  RTM_H5_CHECK(H5Dread(dataset, H5T_NATIVE_FLOAT, memory_space, space, H5P_DEFAULT, data),
               RTM_ERR_INPUT, "model file %s: reading dataset %s (corrupt?)", path, dataset_path);
  RTM_TRY(check_values(path, name, volume, data));
  *values = data;
  data = NULL;
fail:
  free(data);
  rtm_h5_close(&memory_space);
  rtm_h5_close(&space);
  rtm_h5_close(&type);
  rtm_h5_close(&dataset);
  return status;
}

int rtm_io_read_model(const char *path, const rtm_io_volume_t *volume, rtm_equation_t equation,
                      float *values[RTM_IO_PARAMETERS]) {
  int status = RTM_OK;
  hid_t file = H5I_INVALID_HID;
  for (int i = 0; i < RTM_IO_PARAMETERS; ++i)
    values[i] = NULL;
  RTM_TRY(rtm_h5_open_read(path, "model file", &file));
  RTM_TRY(check_geometry(file, path, volume));
  for (int i = 0; i < RTM_IO_PARAMETERS; ++i)
    if (rtm_io_equation_needs(equation, (rtm_io_parameter_t)i))
      RTM_TRY(read_parameter(file, path, volume, equation, parameters[i].dataset, &values[i]));
  RTM_H5_CHECK(H5Fclose(file), RTM_ERR_INPUT, "model file %s: closing", path);
  file = H5I_INVALID_HID;
fail:
  rtm_h5_close(&file);
  if (status != RTM_OK) rtm_io_model_release(values);
  return status;
}

static int write_parameter(hid_t file, const rtm_io_volume_t *volume, const char *path,
                           const model_parameter_t *parameter, const float *values) {
  int status = RTM_OK;
  hid_t space = H5I_INVALID_HID, dataset = H5I_INVALID_HID;
  const hsize_t dims[3] = {(hsize_t)volume->n[2], (hsize_t)volume->n[1], (hsize_t)volume->n[0]};
  RTM_H5_CHECK(space = H5Screate_simple(3, dims, NULL), RTM_ERR_IO, "model file %s: /%s", path,
               parameter->dataset);
  RTM_H5_CHECK(dataset = H5Dcreate2(file, parameter->dataset, H5T_IEEE_F32LE, space, H5P_DEFAULT,
                                    H5P_DEFAULT, H5P_DEFAULT),
               RTM_ERR_IO, "model file %s: creating /%s", path, parameter->dataset);
  RTM_H5_CHECK(H5Dwrite(dataset, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values),
               RTM_ERR_IO, "model file %s: writing /%s", path, parameter->dataset);
  RTM_TRY(rtm_h5_write_attr_string(dataset, "units", parameter->units));
  RTM_H5_CHECK(H5Dclose(dataset), RTM_ERR_IO, "model file %s: writing /%s", path,
               parameter->dataset);
  dataset = H5I_INVALID_HID;
fail:
  rtm_h5_close(&dataset);
  rtm_h5_close(&space);
  return status;
}

static int write_model(const char *path, const rtm_io_volume_t *volume,
                       const float *const values[RTM_IO_PARAMETERS], int replace) {
  int status = RTM_OK;
  hid_t file = H5I_INVALID_HID, fapl = H5I_INVALID_HID;
  char partial[4096];
  int created = 0, appeared = 0;
  rtm_h5_quiet();
  if (volume->z_offset != 0 || volume->nz_local != volume->n[2])
    RTM_FAIL(RTM_ERR_INTERNAL,
             "rtm_io_write_model needs a whole-volume grid (z = 0..%d), got "
             "z = %d..%d",
             volume->n[2] - 1, volume->z_offset, volume->z_offset + volume->nz_local - 1);
  if (!values[RTM_IO_VP]) RTM_FAIL(RTM_ERR_INTERNAL, "rtm_io_write_model: the model has no vp");
  RTM_TRY(rtm_io_partial_path(path, partial, sizeof partial));
  RTM_TRY(rtm_io_make_parent_dir(path));
  /* a leftover, or a link planted at the name, is removed, never followed: H5Fcreate's
   * truncation would write through a link into the file it points at (the caller holds the
   * name's lock, so the name is ours) */
  if (unlink(partial) != 0 && errno != ENOENT)
    RTM_FAIL(RTM_ERR_IO, "cannot remove %s before writing it: %s", partial, strerror(errno));
  RTM_H5_CHECK(fapl = rtm_h5_create_fapl(), RTM_ERR_IO, "model file %s", path);
  created = 1; /* the name is ours: a create that fails on a full disk may leave the file */
  RTM_H5_CHECK(file = H5Fcreate(partial, H5F_ACC_TRUNC, H5P_DEFAULT, fapl), RTM_ERR_IO,
               "cannot create model file %s", partial);
  RTM_TRY(rtm_h5_write_attr_doubles(file, "spacing", volume->spacing_m, 3));
  RTM_TRY(rtm_h5_write_attr_doubles(file, "origin", volume->origin_m, 3));
  for (int i = 0; i < RTM_IO_PARAMETERS; ++i)
    if (values[i]) RTM_TRY(write_parameter(file, volume, path, &parameters[i], values[i]));
  /* a failed close is not tried again below (probe S: the build before crashed there) */
  const herr_t closed = H5Fclose(file);
  file = H5I_INVALID_HID;
  RTM_H5_CHECK(closed, RTM_ERR_IO, "model file %s: closing", partial);
  if (replace) {
    RTM_TRY(rtm_io_commit_partial(partial, path)); /* synced first */
  } else if (rtm_io_commit_new(partial, path, &appeared) != RTM_OK) {
    if (appeared)
      RTM_FAIL(RTM_ERR_IO,
               "%s appeared while the model was written (another run, program or user wrote "
               "it): it is left as it is and the model written is removed; write it again, "
               "with --force to replace it",
               path);
    status = RTM_ERR_IO;
    goto fail;
  }
  created = 0;
fail:
  rtm_h5_close(&file);
  rtm_h5_close(&fapl);
  if (created) rtm_io_remove_own(partial, "the model written");
  return status;
}

int rtm_io_write_model(const char *path, const rtm_io_volume_t *volume,
                       const float *const values[RTM_IO_PARAMETERS]) {
  return write_model(path, volume, values, 1);
}

int rtm_io_write_model_new(const char *path, const rtm_io_volume_t *volume,
                           const float *const values[RTM_IO_PARAMETERS]) {
  return write_model(path, volume, values, 0);
}
