/* A migration's common-image gathers in its run file (rtm_io.h):
 *   /gathers/offset [ncip][nhy][nhx][nz] float32, the subsurface-offset gathers, with
 *     attributes lags (L: nhx = nhy = 2 L + 1, lag index h + L), lag_spacing_m [2] (x, y:
 *     the grid's spacings; a lag of k cells is a half-offset of k spacings), z_spacing_m,
 *     z_origin_m, cip_step [2] (x, y, cells) and axes "cip, hy, hx, z";
 *   /gathers/angle [ncip][nangle][nz] float32, the angle gathers, with attributes
 *     angle_max_deg, z_spacing_m, z_origin_m, illumination (1: divided) and axes;
 *   /gathers/cip_x_m, /gathers/cip_y_m [ncip] float64, each CIP line's position (units "m");
 * written at a migration's end, and read back a CIP at a time for rtm3d plot's panels. */
#include "rtm_io.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rtm_io_impl.h"

#define GROUP "/gathers"

static int write_offset_attributes(hid_t dataset, const rtm_io_offset_gathers_t *gathers) {
  int status = RTM_OK;
  RTM_TRY(rtm_h5_write_attr_int(dataset, "lags", gathers->lags));
  RTM_TRY(rtm_h5_write_attr_doubles(dataset, "lag_spacing_m", gathers->lag_spacing_m, 2));
  RTM_TRY(rtm_h5_write_attr_doubles(dataset, "z_spacing_m", &gathers->z_spacing_m, 1));
  RTM_TRY(rtm_h5_write_attr_doubles(dataset, "z_origin_m", &gathers->z_origin_m, 1));
  RTM_TRY(rtm_h5_write_attr_ints(dataset, "cip_step", gathers->cip_step, 2));
  RTM_TRY(rtm_h5_write_attr_string(dataset, "axes", "cip, hy, hx, z"));
fail:
  return status;
}

int rtm_output_write_offset_gathers(rtm_output_t *output, const rtm_io_offset_gathers_t *gathers,
                                    const float *values) {
  int status = RTM_OK;
  hid_t group = H5I_INVALID_HID, dataset = H5I_INVALID_HID;
  const hsize_t nh = 2 * (hsize_t)gathers->lags + 1;
  const hsize_t dims[4] = {(hsize_t)gathers->cips, nh, nh, (hsize_t)gathers->nz};
  const hsize_t positions[1] = {(hsize_t)gathers->cips};
  RTM_TRY(rtm_output_group(output, GROUP, &group));
  RTM_TRY(rtm_output_write_dataset(output, group, GROUP, "offset", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT,
                                   4, dims, values, &dataset));
  RTM_TRY(write_offset_attributes(dataset, gathers));
  RTM_TRY(rtm_output_write_metres(output, group, GROUP, "cip_x_m", 1, positions, gathers->cip_x_m));
  RTM_TRY(rtm_output_write_metres(output, group, GROUP, "cip_y_m", 1, positions, gathers->cip_y_m));
fail:
  if (status != RTM_OK) rtm_log_error("output file %s: the gathers", output->partial);
  rtm_h5_close(&dataset);
  rtm_h5_close(&group);
  return status;
}

int rtm_output_write_angle_gathers(rtm_output_t *output, const rtm_io_angle_gathers_t *gathers,
                                   const float *values) {
  int status = RTM_OK;
  hid_t group = H5I_INVALID_HID, dataset = H5I_INVALID_HID;
  const hsize_t dims[3] = {(hsize_t)gathers->cips, (hsize_t)gathers->angles, (hsize_t)gathers->nz};
  RTM_TRY(rtm_output_group(output, GROUP, &group));
  RTM_TRY(rtm_output_write_dataset(output, group, GROUP, "angle", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT,
                                   3, dims, values, &dataset));
  RTM_TRY(rtm_h5_write_attr_doubles(dataset, "angle_max_deg", &gathers->angle_max_deg, 1));
  RTM_TRY(rtm_h5_write_attr_doubles(dataset, "z_spacing_m", &gathers->z_spacing_m, 1));
  RTM_TRY(rtm_h5_write_attr_doubles(dataset, "z_origin_m", &gathers->z_origin_m, 1));
  RTM_TRY(rtm_h5_write_attr_int(dataset, "illumination", gathers->illumination));
  RTM_TRY(rtm_h5_write_attr_string(dataset, "axes", "cip, angle, z"));
fail:
  if (status != RTM_OK) rtm_log_error("output file %s: the angle gathers", output->partial);
  rtm_h5_close(&dataset);
  rtm_h5_close(&group);
  return status;
}

/* One numeric attribute of `name`, `count` values, required. */
static int required_attribute(hid_t dataset, const char *context, const char *name,
                              const char *attribute, size_t count, const char *meaning,
                              double *values) {
  int status = RTM_OK, present = 0;
  RTM_TRY(rtm_h5_read_attr_doubles(dataset, context, attribute, count, meaning, values, &present));
  if (!present)
    RTM_FAIL(RTM_ERR_INPUT, "%s: %s has no attribute %s (%s)", context, name, attribute, meaning);
fail:
  return status;
}

/* The CIPs' positions, cips of each. */
static int read_positions(hid_t file, const char *context, rtm_io_gathers_info_t *info) {
  int status = RTM_OK;
  static const char *const names[2] = {GROUP "/cip_x_m", GROUP "/cip_y_m"};
  double **into[2] = {&info->cip_x_m, &info->cip_y_m};
  for (int a = 0; a < 2; ++a) {
    hsize_t positions = 0;
    RTM_TRY(rtm_h5_read_array(file, context, names[a], H5T_NATIVE_DOUBLE, sizeof(double), 1,
                              &positions, (void **)into[a]));
    if (positions != (hsize_t)info->cips)
      RTM_FAIL(RTM_ERR_INPUT, "%s: %s holds %llu positions for %d CIPs", context, names[a],
               (unsigned long long)positions, info->cips);
    /* a panel's title names its place: a damaged one was drawn as "nan m" (probe, exit 0) */
    for (int c = 0; c < info->cips; ++c)
      if (!isfinite((*into[a])[c]))
        RTM_FAIL(RTM_ERR_INPUT, "%s: %s[%d] = %g: a CIP's position must be finite", context,
                 names[a], c, (*into[a])[c]);
  }
fail:
  return status;
}

/* The offset gathers' attributes against their shape [cips][nh][nh][nz]. */
static int offset_axes(hid_t dataset, const char *context, const char *name, const hsize_t *dims,
                       rtm_io_gathers_info_t *info) {
  int status = RTM_OK;
  double lags = 0.0;
  RTM_TRY(
      required_attribute(dataset, context, name, "lags", 1, "L, the largest lag in cells", &lags));
  RTM_TRY(required_attribute(dataset, context, name, "lag_spacing_m", 2, "x, y in metres",
                             info->lag_spacing_m));
  if (!(lags >= 1.0) || lags != (double)(int)lags || dims[1] != 2 * (hsize_t)lags + 1 ||
      dims[2] != dims[1])
    RTM_FAIL(RTM_ERR_INPUT,
             "%s: %s is [%llu][%llu][%llu][%llu], which its attribute lags = %g does not "
             "describe",
             context, name, (unsigned long long)dims[0], (unsigned long long)dims[1],
             (unsigned long long)dims[2], (unsigned long long)dims[3], lags);
  /* the panel's lag axis: 0, negative or not finite drew blank panels, exit 0 (probe) */
  for (int a = 0; a < 2; ++a)
    if (!(info->lag_spacing_m[a] > 0.0 && isfinite(info->lag_spacing_m[a])))
      RTM_FAIL(RTM_ERR_INPUT,
               "%s: %s has lag_spacing_m = %g, %g: a lag axis needs finite spacings > 0 (the "
               "grid's, in metres)",
               context, name, info->lag_spacing_m[0], info->lag_spacing_m[1]);
  info->lags = (int)lags;
  info->columns = 2 * info->lags + 1;
  info->column_first = -info->lags * info->lag_spacing_m[0];
  info->column_step = info->lag_spacing_m[0];
fail:
  return status;
}

int rtm_io_read_gathers_info(const char *path, const char *dataset, rtm_io_gathers_info_t *info) {
  int status = RTM_OK;
  hid_t file = H5I_INVALID_HID, set = H5I_INVALID_HID, space = H5I_INVALID_HID;
  hsize_t dims[4] = {0, 0, 0, 0};
  char context[4200];
  memset(info, 0, sizeof *info);
  info->angle = strcmp(dataset, GROUP "/angle") == 0;
  const int rank = info->angle ? 3 : 4;
  snprintf(context, sizeof context, "run file %s", path);
  RTM_TRY(rtm_h5_open_read(path, "run file", &file));
  RTM_H5_CHECK(set = H5Dopen2(file, dataset, H5P_DEFAULT), RTM_ERR_INPUT,
               "%s has no %s (a migration with rtm.offset_lags > 0 writes it)", context, dataset);
  RTM_H5_CHECK(space = H5Dget_space(set), RTM_ERR_INPUT, "%s: %s", context, dataset);
  if (H5Sget_simple_extent_ndims(space) != rank ||
      H5Sget_simple_extent_dims(space, dims, NULL) != rank || dims[0] < 1 || dims[0] > 1000000 ||
      dims[rank - 1] < 1 || dims[rank - 1] > 1000000)
    RTM_FAIL(RTM_ERR_INPUT, "%s: %s is not %s", context, dataset,
             info->angle ? "[ncip][nangle][nz]" : "[ncip][nhy][nhx][nz]");
  RTM_TRY(
      required_attribute(set, context, dataset, "z_spacing_m", 1, "metres", &info->z_spacing_m));
  RTM_TRY(required_attribute(set, context, dataset, "z_origin_m", 1, "metres", &info->z_origin_m));
  /* the panel's depth axis: a damaged one drew an empty panel, exit 0 (probe X, X4) */
  if (!(info->z_spacing_m > 0.0 && isfinite(info->z_spacing_m) && isfinite(info->z_origin_m) &&
        fabs(info->z_origin_m) <= RTM_IO_ORIGIN_CELLS * info->z_spacing_m))
    RTM_FAIL(RTM_ERR_INPUT,
             "%s: %s has z_spacing_m = %g and z_origin_m = %g: a depth axis needs a finite "
             "spacing > 0 and an origin within 2^29 spacings of 0",
             context, dataset, info->z_spacing_m, info->z_origin_m);
  info->cips = (int)dims[0];
  info->nz = (int)dims[rank - 1];
  if (info->angle) {
    double angle_max = 0.0;
    RTM_TRY(required_attribute(set, context, dataset, "angle_max_deg", 1, "degrees", &angle_max));
    if (dims[1] < 1 || dims[1] > 100000 || !(angle_max > 0.0 && angle_max < 90.0))
      RTM_FAIL(RTM_ERR_INPUT,
               "%s: %s holds %llu angles to %g degrees (attribute angle_max_deg): an angle "
               "panel needs 1 to 100000 angles up to a largest angle between 0 and 90 "
               "degrees, not included (migrate's rtm.angle_max: 1 to 89)",
               context, dataset, (unsigned long long)dims[1], angle_max);
    info->columns = (int)dims[1];
    info->column_step = info->columns > 1 ? angle_max / (info->columns - 1) : 1.0;
  } else {
    RTM_TRY(offset_axes(set, context, dataset, dims, info));
  }
  RTM_TRY(read_positions(file, context, info));
fail:
  rtm_h5_close(&space);
  rtm_h5_close(&set);
  rtm_h5_close(&file);
  if (status != RTM_OK) rtm_io_gathers_release(info);
  return status;
}

void rtm_io_gathers_release(rtm_io_gathers_info_t *info) {
  free(info->cip_x_m);
  free(info->cip_y_m);
  info->cip_x_m = info->cip_y_m = NULL;
}

int rtm_io_read_gathers_panel(const char *path, const rtm_io_gathers_info_t *info, int cip,
                              float **panel) {
  int status = RTM_OK;
  hid_t file = H5I_INVALID_HID, dataset = H5I_INVALID_HID, space = H5I_INVALID_HID;
  hid_t memory = H5I_INVALID_HID;
  const int columns = info->columns, nz = info->nz;
  const char *name = info->angle ? GROUP "/angle" : GROUP "/offset";
  float *slice = malloc((size_t)columns * (size_t)nz * sizeof *slice);
  *panel = malloc((size_t)columns * (size_t)nz * sizeof **panel);
  if (!slice || !*panel) RTM_FAIL(RTM_ERR_NOMEM, "out of memory for a CIP's gather");
  if (cip < 0 || cip >= info->cips) RTM_FAIL(RTM_ERR_INTERNAL, "CIP %d of %d", cip, info->cips);
  /* offset: [cip][hy = 0][hx][z]; angle: [cip][angle][z] */
  const hsize_t offset_start[4] = {(hsize_t)cip, (hsize_t)info->lags, 0, 0};
  const hsize_t offset_count[4] = {1, 1, (hsize_t)columns, (hsize_t)nz};
  const hsize_t angle_start[3] = {(hsize_t)cip, 0, 0};
  const hsize_t angle_count[3] = {1, (hsize_t)columns, (hsize_t)nz};
  const hsize_t flat[2] = {(hsize_t)columns, (hsize_t)nz};
  RTM_TRY(rtm_h5_open_read(path, "run file", &file));
  RTM_H5_CHECK(dataset = H5Dopen2(file, name, H5P_DEFAULT), RTM_ERR_INPUT, "run file %s: %s", path,
               name);
  RTM_H5_CHECK(space = H5Dget_space(dataset), RTM_ERR_INPUT, "run file %s", path);
  RTM_H5_CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, info->angle ? angle_start : offset_start,
                                   NULL, info->angle ? angle_count : offset_count, NULL),
               RTM_ERR_INPUT, "run file %s: CIP %d of %s", path, cip, name);
  RTM_H5_CHECK(memory = H5Screate_simple(2, flat, NULL), RTM_ERR_INPUT, "run file %s", path);
  RTM_H5_CHECK(H5Dread(dataset, H5T_NATIVE_FLOAT, memory, space, H5P_DEFAULT, slice), RTM_ERR_INPUT,
               "run file %s: reading CIP %d of %s", path, cip, name);
  for (int c = 0; c < columns; ++c) /* [column][z] to rows z, columns c */
    for (int z = 0; z < nz; ++z)
      (*panel)[(size_t)z * columns + c] = slice[(size_t)c * nz + z];
fail:
  free(slice);
  if (status != RTM_OK) {
    free(*panel);
    *panel = NULL;
  }
  rtm_h5_close(&memory);
  rtm_h5_close(&space);
  rtm_h5_close(&dataset);
  rtm_h5_close(&file);
  return status;
}
