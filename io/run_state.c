/* The state a long run leaves for its resumption (rtm3d migrate's OUTPUT.resume.h5): a run
 * file whose root carries the counters of the work done and the resolved config it was done
 * under, beside the volumes summed so far. Read back with rtm_io_read_dataset. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rtm_io.h"
#include "rtm_io_impl.h"

int rtm_output_write_count(rtm_output_t *output, const char *name, int value) {
  int status = rtm_h5_write_attr_ints(output->file, name, &value, 1);
  if (status != RTM_OK) rtm_log_error("output file %s: root attribute %s", output->partial, name);
  return status;
}

int rtm_output_write_text(rtm_output_t *output, const char *name, const char *text) {
  int status = rtm_h5_write_attr_string(output->file, name, text);
  if (status != RTM_OK) rtm_log_error("output file %s: root attribute %s", output->partial, name);
  return status;
}

int rtm_output_write_floats(rtm_output_t *output, const char *name, int rank, const size_t *dims,
                            const float *values) {
  int status = RTM_OK;
  hid_t dataset = H5I_INVALID_HID;
  hsize_t extent[4];
  if (rank < 1 || rank > 4 || name[0] != '/' || strchr(name + 1, '/'))
    RTM_FAIL(RTM_ERR_INTERNAL, "output file %s: %s: a root dataset of 1 to 4 dimensions expected",
             output->partial, name);
  for (int d = 0; d < rank; ++d)
    extent[d] = (hsize_t)dims[d];
  RTM_TRY(rtm_output_write_dataset(output, output->file, "", name + 1, H5T_IEEE_F32LE,
                                   H5T_NATIVE_FLOAT, rank, extent, values, &dataset));
fail:
  rtm_h5_close(&dataset);
  return status;
}

/* The fixed-length string attribute `name` of the root of `file` (malloc'd into *text). */
static int read_text_attr(hid_t file, const char *path, const char *name, char **text) {
  int status = RTM_OK;
  hid_t attr = H5I_INVALID_HID, type = H5I_INVALID_HID;
  *text = NULL;
  RTM_H5_CHECK(attr = H5Aopen(file, name, H5P_DEFAULT), RTM_ERR_INPUT, "%s: root attribute %s",
               path, name);
  RTM_H5_CHECK(type = H5Aget_type(attr), RTM_ERR_INPUT, "%s: root attribute %s", path, name);
  const size_t size = H5Tget_size(type);
  if (H5Tget_class(type) != H5T_STRING || size == 0 || H5Tis_variable_str(type) > 0)
    RTM_FAIL(RTM_ERR_INPUT, "%s: root attribute %s is not a fixed-length string", path, name);
  *text = calloc(size + 1, 1);
  if (!*text) RTM_FAIL(RTM_ERR_NOMEM, "out of memory reading %s", path);
  RTM_H5_CHECK(H5Aread(attr, type, *text), RTM_ERR_INPUT, "%s: reading root attribute %s", path,
               name);
fail:
  if (status != RTM_OK) {
    free(*text);
    *text = NULL;
  }
  rtm_h5_close(&type);
  rtm_h5_close(&attr);
  return status;
}

/* `status` of a read from the state at `path`: a failure of the library (metadata whose
 * checksum fails: a bit flipped on the disk) said once more with what to do (a probe: only
 * the attribute being read and HDF5's words were said). */
static int read_whole(const char *path, int status) {
  if (status != RTM_OK)
    rtm_log_error("%s could not be read whole (a damaged file?): remove it to start over", path);
  return status;
}

int rtm_io_read_run_state(const char *path, const char *count_name, int *count, char **config) {
  int status = RTM_OK, present = 0;
  hid_t file = H5I_INVALID_HID;
  double value = 0.0, format = 0.0;
  *config = NULL;
  RTM_TRY(rtm_h5_open_read(path, "run state", &file));
  /* a state this rtm3d can read: its format, its config and its count, each said plainly
   * when missing (a file rtm3d did not write, or one edited by hand) */
  RTM_TRY(read_whole(path, rtm_h5_read_attr_doubles(file, path, "format_version", 1,
                                                    "a format version", &format, &present)));
  if (!present || format != RTM_IO_FORMAT_VERSION)
    RTM_FAIL(RTM_ERR_INPUT,
             "%s is not a state this rtm3d can resume from (format_version %s%g, this build "
             "reads %d): remove it to start over",
             path, present ? "" : "missing: ", present ? format : 0.0, RTM_IO_FORMAT_VERSION);
  const htri_t has_config = H5Aexists(file, "config");
  if (has_config < 0) RTM_TRY(read_whole(path, RTM_ERR_INPUT));
  if (has_config <= 0)
    RTM_FAIL(RTM_ERR_INPUT,
             "%s has no root attribute config (the settings its sums were made with): not a "
             "state rtm3d wrote; remove it to start over",
             path);
  RTM_TRY(read_whole(
      path, rtm_h5_read_attr_doubles(file, path, count_name, 1, "a count", &value, &present)));
  if (!present) RTM_FAIL(RTM_ERR_INPUT, "%s has no root attribute %s", path, count_name);
  if (value != floor(value))
    RTM_FAIL(RTM_ERR_INPUT, "%s: root attribute %s = %g is not a whole number", path,
             count_name, value);
  *count = (int)value;
  RTM_TRY(read_whole(path, read_text_attr(file, path, "config", config)));
fail:
  rtm_h5_close(&file);
  return status;
}

int rtm_io_read_run_text(const char *path, const char *name, char **text) {
  int status = RTM_OK, opened = 0;
  hid_t file = H5I_INVALID_HID;
  *text = NULL;
  RTM_TRY(rtm_h5_open_read(path, "run state", &file));
  opened = 1; /* a failure from here on is the file's contents */
  const htri_t exists = H5Aexists(file, name);
  RTM_H5_CHECK(exists, RTM_ERR_INPUT, "%s: root attribute %s", path, name);
  if (exists > 0) RTM_TRY(read_text_attr(file, path, name, text));
fail:
  if (opened) read_whole(path, status);
  rtm_h5_close(&file);
  return status;
}
