/* The state a long run leaves for its resumption (rtm3d migrate's OUTPUT.resume.h5): a run
 * file whose root carries the counters of the work done and the resolved config it was done
 * under, beside the volumes summed so far. Read back with rtm_io_read_dataset. */
#include <stdlib.h>
#include <string.h>

#include "rtm_io.h"
#include "rtm_io_impl.h"

int rtm_output_write_count(rtm_output_t *output, const char *name, int value) {
  int status = rtm_h5_write_attr_ints(output->file, name, &value, 1);
  if (status != RTM_OK) rtm_log_error("output file %s: root attribute %s", output->partial, name);
  return status;
}

int rtm_io_read_run_state(const char *path, const char *count_name, int *count, char **config) {
  int status = RTM_OK, present = 0;
  hid_t file = H5I_INVALID_HID, attr = H5I_INVALID_HID, type = H5I_INVALID_HID;
  double value = 0.0;
  *config = NULL;
  RTM_TRY(rtm_h5_open_read(path, "run state", &file));
  RTM_TRY(rtm_h5_read_attr_doubles(file, path, count_name, 1, "a count", &value, &present));
  if (!present) RTM_FAIL(RTM_ERR_INPUT, "%s has no root attribute %s", path, count_name);
  *count = (int)value;
  RTM_H5_CHECK(attr = H5Aopen(file, "config", H5P_DEFAULT), RTM_ERR_INPUT,
               "%s: root attribute config", path);
  RTM_H5_CHECK(type = H5Aget_type(attr), RTM_ERR_INPUT, "%s: root attribute config", path);
  const size_t size = H5Tget_size(type);
  if (H5Tget_class(type) != H5T_STRING || size == 0 || H5Tis_variable_str(type) > 0)
    RTM_FAIL(RTM_ERR_INPUT, "%s: root attribute config is not a fixed-length string", path);
  *config = calloc(size + 1, 1);
  if (!*config) RTM_FAIL(RTM_ERR_NOMEM, "out of memory reading %s", path);
  RTM_H5_CHECK(H5Aread(attr, type, *config), RTM_ERR_INPUT, "%s: reading root attribute config",
               path);
fail:
  if (status != RTM_OK) {
    free(*config);
    *config = NULL;
  }
  rtm_h5_close(&type);
  rtm_h5_close(&attr);
  rtm_h5_close(&file);
  return status;
}
