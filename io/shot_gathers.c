/* Shot gathers in run files, written and read back (for migrate):
 *   single-shot layout (rtm3d model with shots.layout = single): /traces/<field>,
 *     /traces/receivers, and the shot's position as attribute source [3] of /traces;
 *   many-shot layout: root attribute shot_count (a scalar int; older files hold a
 *     1-element array, read alike), and per shot k /shots/<k>/source [3],
 *     /shots/<k>/receivers [nrec][3] (units "m"), /shots/<k>/traces/<field> [nrec][nt]
 *     with attribute dt.
 * Both read back as rtm_io_gather_t; a single-shot file is shot 0. Calls nothing of
 * segy.c: which format a path holds is decided there (rtm_io_read_shot), a way alone. */
#include "rtm_io.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rtm_io_impl.h"

/* Names of datasets and groups under "/shots/<shot>" (at most 18 characters) and
 * "/traces": short. */
#define SHOT_NAME_MAX 96

/* ---- writing ---- */

int rtm_output_write_source(rtm_output_t *output, const double source_m[3]) {
  int status = RTM_OK;
  RTM_TRY(rtm_output_group(output, "/traces", &output->traces));
  RTM_TRY(rtm_h5_write_attr_doubles(output->traces, "source", source_m, 3));
fail:
  if (status != RTM_OK)
    rtm_log_error("output file %s: attribute source of /traces", output->partial);
  return status;
}

/* /shots/<shot>/source, written by the shot's first field; a later one must agree. */
static int write_shot_source(rtm_output_t *output, hid_t group, const char *group_name,
                             const double source_m[3]) {
  int status = RTM_OK;
  hid_t dataset = H5I_INVALID_HID;
  htri_t exists;
  RTM_H5_CHECK(exists = H5Lexists(group, "source", H5P_DEFAULT), RTM_ERR_IO, "%s/source",
               group_name);
  if (exists) {
    double written[3];
    RTM_H5_CHECK(dataset = H5Dopen2(group, "source", H5P_DEFAULT), RTM_ERR_IO, "%s/source",
                 group_name);
    RTM_H5_CHECK(H5Dread(dataset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, written),
                 RTM_ERR_IO, "output file %s: reading %s/source", output->partial, group_name);
    if (memcmp(written, source_m, sizeof written) != 0)
      RTM_FAIL(RTM_ERR_INTERNAL,
               "output file %s: %s/source is (%g, %g, %g) m, a field of it says (%g, %g, %g) m",
               output->partial, group_name, written[0], written[1], written[2], source_m[0],
               source_m[1], source_m[2]);
    goto fail;
  }
  const hsize_t dims[1] = {3};
  RTM_TRY(rtm_output_write_metres(output, group, group_name, "source", 1, dims, source_m));
fail:
  rtm_h5_close(&dataset);
  return status;
}

int rtm_output_write_shot(rtm_output_t *output, int shot, const double source_m[3],
                          const char *field, const float *traces, int count, int samples,
                          double dt_s, const double *receivers_m) {
  int status = RTM_OK;
  hid_t shot_group = H5I_INVALID_HID, traces_group = H5I_INVALID_HID;
  char shot_name[SHOT_NAME_MAX], traces_name[SHOT_NAME_MAX];
  if (shot < 0) RTM_FAIL(RTM_ERR_INTERNAL, "output: shot number %d < 0", shot);
  snprintf(shot_name, sizeof shot_name, "/shots/%d", shot);
  snprintf(traces_name, sizeof traces_name, "/shots/%d/traces", shot);
  RTM_TRY(rtm_output_check_gather(traces_name, field, count, samples));
  RTM_TRY(rtm_output_group(output, shot_name, &shot_group));
  RTM_TRY(write_shot_source(output, shot_group, shot_name, source_m));
  /* A shot without receivers (receivers.layout = none) is its source alone. */
  if (count > 0) {
    RTM_TRY(rtm_output_write_receivers(output, shot_group, shot_name, receivers_m, count));
    RTM_TRY(rtm_output_group(output, traces_name, &traces_group));
    RTM_TRY(rtm_output_write_gather(output, traces_group, traces_name, field, traces, count,
                                    samples, dt_s));
  }
  if (shot + 1 > output->shot_count) {
    output->shot_count = shot + 1;
    RTM_TRY(rtm_h5_write_attr_int(output->file, "shot_count", output->shot_count));
  }
fail:
  rtm_h5_close(&traces_group);
  rtm_h5_close(&shot_group);
  return status;
}

/* ---- reading ---- */

/* The shots of an open run file: shot_count of the many-shot layout (*many = 1), or 1 for
 * the single-shot layout's /traces with its source attribute; a file of neither layout is an
 * input error where `required`, else 0 shots. */
static int count_shots(hid_t file, const char *context, int required, int *count, int *many) {
  int status = RTM_OK, present = 0;
  double value = 0.0, source_m[3];
  hid_t traces = H5I_INVALID_HID;
  *count = 0;
  *many = 0;
  RTM_TRY(rtm_h5_read_attr_doubles(file, context, "shot_count", 1, "the number of shots", &value,
                                   &present));
  if (present) {
    if (!(value >= 0.0 && value <= 1e9 && value == floor(value)))
      RTM_FAIL(RTM_ERR_INPUT, "%s: root attribute shot_count = %g is not a count of shots", context,
               value);
    /* a count that disagrees with the gathers stored: export wrote a 0-byte SEG-Y, or the
     * first shots only, with exit 0 (probe W, W3) */
    char past[48];
    snprintf(past, sizeof past, "/shots/%d", (int)value);
    if (value < 1.0)
      RTM_FAIL(RTM_ERR_INPUT, "%s: root attribute shot_count = 0: the file holds no shot to read",
               context);
    if (rtm_h5_path_exists(file, past) > 0)
      RTM_FAIL(RTM_ERR_INPUT,
               "%s: root attribute shot_count = %d, but %s is there: the count does not match "
               "the gathers stored (a damaged file)",
               context, (int)value, past);
    snprintf(past, sizeof past, "/shots/%d", (int)value - 1);
    if (rtm_h5_path_exists(file, past) <= 0)
      RTM_FAIL(RTM_ERR_INPUT,
               "%s: root attribute shot_count = %d, but there is no %s: the count does not "
               "match the gathers stored (a damaged file)",
               context, (int)value, past);
    *count = (int)value;
    *many = 1;
    goto fail;
  }
  if (rtm_h5_path_exists(file, "/traces") > 0) {
    RTM_H5_CHECK(traces = H5Oopen(file, "/traces", H5P_DEFAULT), RTM_ERR_INPUT, "%s: /traces",
                 context);
    RTM_TRY(rtm_h5_read_attr_doubles(traces, context, "source", 3, "the shot's x, y, z in metres",
                                     source_m, &present));
  }
  if (!present && !required) goto fail; /* 0 shots */
  if (!present)
    RTM_FAIL(RTM_ERR_INPUT,
             "%s holds no shot gathers: neither a root attribute shot_count (the many-shot "
             "layout) nor /traces with its attribute source (a single-shot run of rtm3d model)",
             context);
  *count = 1;
fail:
  rtm_h5_close(&traces);
  return status;
}

/* rtm_h5_shot_count, or with `required` 0, rtm_io_run_shots. */
static int file_shots(const char *path, int required, int *count) {
  int status = RTM_OK, many;
  hid_t file = H5I_INVALID_HID;
  char context[RTM_CONFIG_PATH_MAX + 16];
  *count = 0;
  snprintf(context, sizeof context, "run file %s", path);
  RTM_TRY(rtm_h5_open_read(path, "run file", &file));
  RTM_TRY(count_shots(file, context, required, count, &many));
fail:
  rtm_h5_close(&file);
  return status;
}

int rtm_io_run_shots(const char *path, int *count) {
  return file_shots(path, 0, count);
}

int rtm_h5_shot_count(const char *path, int *count) {
  return file_shots(path, 1, count);
}

/* The shot's source: dataset <base>/source of the many-shot layout, attribute source of
 * /traces in the single-shot one. */
static int read_source(hid_t file, const char *context, const char *base, int many,
                       double source_m[3]) {
  int status = RTM_OK, present;
  hid_t traces = H5I_INVALID_HID;
  double *values = NULL;
  char name[SHOT_NAME_MAX];
  if (!many) {
    RTM_H5_CHECK(traces = H5Oopen(file, "/traces", H5P_DEFAULT), RTM_ERR_INPUT, "%s: /traces",
                 context);
    RTM_TRY(rtm_h5_read_attr_doubles(traces, context, "source", 3, "the shot's x, y, z in metres",
                                     source_m, &present));
    goto fail;
  }
  hsize_t dims[1];
  snprintf(name, sizeof name, "%s/source", base);
  RTM_TRY(rtm_h5_read_array(file, context, name, H5T_NATIVE_DOUBLE, sizeof(double), 1, dims,
                            (void **)&values));
  if (dims[0] != 3)
    RTM_FAIL(RTM_ERR_INPUT, "%s: dataset %s holds %llu values, expected 3 (x, y, z in metres)",
             context, name, (unsigned long long)dims[0]);
  memcpy(source_m, values, 3 * sizeof *values);
fail:
  free(values);
  rtm_h5_close(&traces);
  return status;
}

/* Every sample of the gather finite and within RTM_IO_SAMPLE_LIMIT, or an input error
 * naming the first that is not by receiver and sample. */
static int check_samples(const char *context, int shot, const char *traces_name,
                         const rtm_io_gather_t *gather) {
  size_t first;
  const size_t total = (size_t)gather->count * (size_t)gather->samples;
  const size_t bad = rtm_io_find_bad_values(gather->traces, total, RTM_IO_SAMPLE_LIMIT, &first);
  if (bad == 0) return RTM_OK;
  rtm_log_error("%s: shot %d (%s), receiver %zu, sample %zu (from 0) is %g, the first of %zu "
                "such sample%s: recorded samples are finite and below %g in magnitude (a "
                "damaged file?)",
                context, shot, traces_name, first / (size_t)gather->samples,
                first % (size_t)gather->samples, gather->traces[first], bad, bad == 1 ? "" : "s",
                RTM_IO_SAMPLE_LIMIT);
  return RTM_ERR_INPUT;
}

/* <traces_name> [count][samples] with its dt (its samples with samples_too, else its shape
 * alone), and <base>/receivers [count][3]. */
static int read_traces(hid_t file, const char *context, int shot, const char *base,
                       const char *traces_name, int samples_too, rtm_io_gather_t *gather) {
  int status = RTM_OK, present = 0;
  hid_t dataset = H5I_INVALID_HID;
  hsize_t trace_dims[2], receiver_dims[2];
  char receivers_name[SHOT_NAME_MAX];
  snprintf(receivers_name, sizeof receivers_name, "%s/receivers", base);
  RTM_TRY(rtm_h5_read_array(file, context, traces_name, H5T_NATIVE_FLOAT, sizeof(float), 2,
                            trace_dims, samples_too ? (void **)&gather->traces : NULL));
  RTM_H5_CHECK(dataset = H5Dopen2(file, traces_name, H5P_DEFAULT), RTM_ERR_INPUT, "%s: %s", context,
               traces_name);
  RTM_TRY(rtm_h5_read_attr_doubles(dataset, context, "dt", 1, "the sample interval in seconds",
                                   &gather->dt_s, &present));
  if (!present)
    RTM_FAIL(RTM_ERR_INPUT, "%s: dataset %s has no attribute dt (its sample interval, s)", context,
             traces_name);
  if (!(gather->dt_s > 0.0) || !isfinite(gather->dt_s))
    RTM_FAIL(RTM_ERR_INPUT,
             "%s: dataset %s has attribute dt = %g: its sample interval must be a finite number "
             "of seconds > 0",
             context, traces_name, gather->dt_s);
  RTM_TRY(rtm_h5_read_array(file, context, receivers_name, H5T_NATIVE_DOUBLE, sizeof(double), 2,
                            receiver_dims, (void **)&gather->receivers_m));
  if (receiver_dims[0] != trace_dims[0] || receiver_dims[1] != 3)
    RTM_FAIL(RTM_ERR_INPUT,
             "%s: %s is [%llu][%llu], but %s holds %llu traces: expected [%llu][3] positions",
             context, receivers_name, (unsigned long long)receiver_dims[0],
             (unsigned long long)receiver_dims[1], traces_name, (unsigned long long)trace_dims[0],
             (unsigned long long)trace_dims[0]);
  if (trace_dims[0] > (hsize_t)INT_MAX || trace_dims[1] > (hsize_t)INT_MAX)
    RTM_FAIL(RTM_ERR_INPUT, "%s: dataset %s is too large", context, traces_name);
  gather->count = (int)trace_dims[0];
  gather->samples = (int)trace_dims[1];
  if (samples_too) RTM_TRY(check_samples(context, shot, traces_name, gather));
fail:
  rtm_h5_close(&dataset);
  return status;
}

int rtm_h5_read_shot(const char *path, int shot, const char *field, int samples_too,
                     rtm_io_gather_t *gather) {
  int status = RTM_OK, count, many;
  hid_t file = H5I_INVALID_HID;
  char context[RTM_CONFIG_PATH_MAX + 16], base[32], traces_name[SHOT_NAME_MAX];
  memset(gather, 0, sizeof *gather);
  snprintf(context, sizeof context, "run file %s", path);
  RTM_TRY(rtm_output_check_field_name(field));
  RTM_TRY(rtm_h5_open_read(path, "run file", &file));
  RTM_TRY(count_shots(file, context, 1, &count, &many));
  if (many)
    snprintf(base, sizeof base, "/shots/%d", shot);
  else
    snprintf(base, sizeof base, "/traces");
  if (shot < 0 || shot >= count)
    RTM_FAIL(RTM_ERR_INPUT, "%s holds %d shot%s: there is no shot %d (%s)", context, count,
             count == 1 ? "" : "s", shot, many ? base : "a single-shot file holds shot 0 alone");
  if (many && rtm_h5_path_exists(file, base) <= 0)
    RTM_FAIL(RTM_ERR_INPUT, "%s has no group %s (shot_count = %d)", context, base, count);
  if (many)
    snprintf(traces_name, sizeof traces_name, "%s/traces/%s", base, field);
  else
    snprintf(traces_name, sizeof traces_name, "/traces/%s", field);
  RTM_TRY(read_source(file, context, base, many, gather->source_m));
  RTM_TRY(read_traces(file, context, shot, base, traces_name, samples_too, gather));
fail:
  rtm_h5_close(&file);
  if (status != RTM_OK) rtm_io_gather_release(gather);
  return status;
}

void rtm_io_gather_release(rtm_io_gather_t *gather) {
  if (!gather) return;
  free(gather->receivers_m);
  free(gather->traces);
  memset(gather, 0, sizeof *gather);
}
