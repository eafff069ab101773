/* A migration's common-image gathers in its run file (rtm_io.h):
 *   /gathers/offset [ncip][nhy][nhx][nz] float32, the subsurface-offset gathers, with
 *     attributes lags (L: nhx = nhy = 2 L + 1, lag index h + L), lag_spacing_m [2] (x, y:
 *     the grid's spacings; a lag of k cells is a half-offset of k spacings), z_spacing_m,
 *     z_origin_m, cip_step [2] (x, y, cells) and units "lag cells";
 *   /gathers/cip_x_m, /gathers/cip_y_m [ncip] float64, each CIP line's position (units "m"). */
#include "rtm_io.h"

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
  hid_t group = H5I_INVALID_HID, space = H5I_INVALID_HID, dataset = H5I_INVALID_HID;
  const hsize_t nh = 2 * (hsize_t)gathers->lags + 1;
  const hsize_t dims[4] = {(hsize_t)gathers->cips, nh, nh, (hsize_t)gathers->nz};
  const hsize_t positions[1] = {(hsize_t)gathers->cips};
  RTM_TRY(rtm_output_group(output, GROUP, &group));
  RTM_H5_CHECK(space = H5Screate_simple(4, dims, NULL), RTM_ERR_IO, GROUP "/offset");
  RTM_H5_CHECK(dataset = H5Dcreate2(group, "offset", H5T_IEEE_F32LE, space, H5P_DEFAULT,
                                    H5P_DEFAULT, H5P_DEFAULT),
               RTM_ERR_IO, "output file %s: creating " GROUP "/offset", output->partial);
  RTM_H5_CHECK(H5Dwrite(dataset, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values),
               RTM_ERR_IO, "output file %s: writing " GROUP "/offset", output->partial);
  RTM_TRY(write_offset_attributes(dataset, gathers));
  RTM_TRY(rtm_output_write_metres(output, group, GROUP, "cip_x_m", 1, positions, gathers->cip_x_m));
  RTM_TRY(rtm_output_write_metres(output, group, GROUP, "cip_y_m", 1, positions, gathers->cip_y_m));
fail:
  if (status != RTM_OK) rtm_log_error("output file %s: the gathers", output->partial);
  rtm_h5_close(&dataset);
  rtm_h5_close(&space);
  rtm_h5_close(&group);
  return status;
}
