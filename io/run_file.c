/* The run output file: root attributes describing the run, /snapshots/<field>
 * [count][nz][ny][nx] with steps and times, /traces/<field> [count][samples] with dt and
 * /traces/receivers [count][3], volumes [nz][ny][nx] at any path. Written as PATH.partial,
 * renamed by a successful close. The shot gathers (shot_gathers.c) are written through the
 * helpers of rtm_io_impl.h. */
#include "rtm_io.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rtm_io_impl.h"

static char *copy_text(const char *text) {
  size_t size = strlen(text) + 1;
  char *copy = malloc(size);
  if (copy) memcpy(copy, text, size);
  return copy;
}

int rtm_output_check_field_name(const char *field) {
  if (!field || !field[0] || strlen(field) >= FIELD_NAME_MAX || strchr(field, '/') ||
      strcmp(field, ".") == 0) {
    rtm_log_error("invalid output field name '%s' (1 to %d characters, no '/')",
                  field ? field : "(null)", FIELD_NAME_MAX - 1);
    return RTM_ERR_INTERNAL;
  }
  return RTM_OK;
}

/* Closes every HDF5 handle; RTM_ERR_IO when any close failed (data not flushed). */
static int close_handles(rtm_output_t *output) {
  int status = RTM_OK;
  for (int i = 0; i < output->field_count; ++i)
    if (rtm_h5_close(&output->fields[i].dataset) != RTM_OK) status = RTM_ERR_IO;
  if (rtm_h5_close(&output->snapshots) != RTM_OK) status = RTM_ERR_IO;
  if (rtm_h5_close(&output->traces) != RTM_OK) status = RTM_ERR_IO;
  if (output->file >= 0 && H5Fclose(output->file) < 0) {
    rtm_h5_report("H5Fclose(output->file)", __FILE__, __LINE__, "closing output file %s",
                  output->partial);
    status = RTM_ERR_IO;
  }
  output->file = H5I_INVALID_HID;
  return status;
}

static void free_output(rtm_output_t *output) {
  for (int i = 0; i < output->field_count; ++i) {
    free(output->fields[i].steps);
    free(output->fields[i].times);
  }
  free(output->fields);
  for (int v = 0; v < output->volume_count; ++v)
    free(output->volumes[v]);
  free(output->volumes);
  free(output->parts_name);
  free(output->parts_written);
  free(output->partial);
  free(output->path);
  free(output);
}

int rtm_output_create(const char *path, const rtm_io_volume_t *volume, const rtm_run_info_t *info,
                      rtm_output_t **output) {
  int status = RTM_OK;
  hid_t fapl = H5I_INVALID_HID;
  rtm_output_t *o = NULL;
  int attempted = 0; /* H5Fcreate was called: o->partial may exist */
  *output = NULL;
  rtm_h5_quiet();
  o = calloc(1, sizeof *o);
  if (!o) RTM_FAIL(RTM_ERR_NOMEM, "out of memory opening output %s", path);
  o->file = o->snapshots = o->traces = H5I_INVALID_HID;
  o->volume = *volume;
  o->path = copy_text(path);
  o->partial = malloc(strlen(path) + sizeof ".partial");
  if (!o->path || !o->partial) RTM_FAIL(RTM_ERR_NOMEM, "out of memory opening output %s", path);
  RTM_TRY(rtm_io_partial_path(path, o->partial, strlen(path) + sizeof ".partial"));
  RTM_TRY(rtm_io_make_parent_dir(path));
  RTM_H5_CHECK(fapl = rtm_h5_create_fapl(), RTM_ERR_IO, "output file %s", path);
  /* under the run's name lock PATH.partial is this run's: a killed run's file or a link
   * planted there goes first, never written through */
  if (unlink(o->partial) != 0 && errno != ENOENT)
    RTM_FAIL(RTM_ERR_IO, "cannot remove %s to write it anew: %s", o->partial, strerror(errno));
  attempted = 1;
  RTM_H5_CHECK(o->file = H5Fcreate(o->partial, H5F_ACC_TRUNC, H5P_DEFAULT, fapl), RTM_ERR_IO,
               "cannot create output file %s", o->partial);
  const rtm_run_info_t none = {0};
  if (!info) info = &none;
  RTM_TRY(rtm_h5_write_attr_string(o->file, "version", info->version));
  RTM_TRY(rtm_h5_write_attr_string(o->file, "git_revision", info->git_revision));
  RTM_TRY(rtm_h5_write_attr_string(o->file, "backend", info->backend));
  RTM_TRY(rtm_h5_write_attr_string(o->file, "device", info->device));
  RTM_TRY(rtm_h5_write_attr_string(o->file, "config", info->config_text));
  rtm_io_provenance_t stamp;
  rtm_io_provenance(&stamp);
  const int format = RTM_IO_FORMAT_VERSION;
  RTM_TRY(rtm_h5_write_attr_ints(o->file, "format_version", &format, 1));
  RTM_TRY(rtm_h5_write_attr_string(o->file, "created", stamp.created));
  RTM_TRY(rtm_h5_write_attr_string(o->file, "host", stamp.host));
  RTM_TRY(rtm_h5_write_attr_string(o->file, "command_line",
                                   info->command_line ? info->command_line : ""));
  RTM_TRY(rtm_h5_write_attr_ints(o->file, "n", volume->n, 3));
  RTM_TRY(rtm_h5_write_attr_doubles(o->file, "spacing", volume->spacing_m, 3));
  RTM_TRY(rtm_h5_write_attr_doubles(o->file, "origin", volume->origin_m, 3));
  *output = o;
  o = NULL;
fail:
  rtm_h5_close(&fapl);
  if (o) {
    close_handles(o);
    /* whatever a failed H5Fcreate (a full disk) or a later step left under that name */
    if (attempted) rtm_io_remove_own(o->partial, "this run's unfinished output");
    free_output(o);
  }
  return status;
}

/* Link creation properties that create the groups leading to a new object. */
static int create_intermediate_groups(rtm_output_t *output, const char *name, hid_t *lcpl) {
  int status = RTM_OK;
  RTM_H5_CHECK(*lcpl = H5Pcreate(H5P_LINK_CREATE), RTM_ERR_IO, "output file %s: %s",
               output->partial, name);
  RTM_H5_CHECK(H5Pset_create_intermediate_group(*lcpl, 1), RTM_ERR_IO, "output file %s: %s",
               output->partial, name);
fail:
  return status;
}

int rtm_output_group(rtm_output_t *output, const char *name, hid_t *group) {
  int status = RTM_OK, exists;
  hid_t lcpl = H5I_INVALID_HID;
  if (*group >= 0) return RTM_OK;
  RTM_H5_CHECK(exists = rtm_h5_path_exists(output->file, name), RTM_ERR_IO,
               "output file %s: group %s", output->partial, name);
  if (exists) {
    RTM_H5_CHECK(*group = H5Gopen2(output->file, name, H5P_DEFAULT), RTM_ERR_IO,
                 "output file %s: opening group %s", output->partial, name);
    goto fail;
  }
  RTM_TRY(create_intermediate_groups(output, name, &lcpl));
  RTM_H5_CHECK(*group = H5Gcreate2(output->file, name, lcpl, H5P_DEFAULT, H5P_DEFAULT), RTM_ERR_IO,
               "output file %s: creating group %s", output->partial, name);
fail:
  rtm_h5_close(&lcpl);
  return status;
}

static snapshot_field_t *find_field(rtm_output_t *output, const char *field) {
  for (int i = 0; i < output->field_count; ++i)
    if (strcmp(output->fields[i].name, field) == 0) return &output->fields[i];
  return NULL;
}

/* One snapshot per chunk, split along z (then y) only when a snapshot exceeds the 4 GiB
 * chunk limit of HDF5; 1 GiB keeps well clear of it. */
static void snapshot_chunk(const rtm_io_volume_t *volume, hsize_t chunk[4]) {
  const hsize_t limit_floats = (hsize_t)1 << 28;
  chunk[0] = 1;
  chunk[1] = (hsize_t)volume->n[2];
  chunk[2] = (hsize_t)volume->n[1];
  chunk[3] = (hsize_t)volume->n[0];
  while (chunk[1] > 1 && chunk[1] * chunk[2] * chunk[3] > limit_floats)
    chunk[1] = (chunk[1] + 1) / 2;
  while (chunk[2] > 1 && chunk[1] * chunk[2] * chunk[3] > limit_floats)
    chunk[2] = (chunk[2] + 1) / 2;
}

static int write_snapshot_attrs(rtm_output_t *output, const snapshot_field_t *field) {
  int status = RTM_OK;
  RTM_TRY(rtm_h5_write_attr_ints(field->dataset, "steps", field->steps, (size_t)field->count));
  RTM_TRY(rtm_h5_write_attr_doubles(field->dataset, "times", field->times, (size_t)field->count));
fail:
  if (status != RTM_OK)
    rtm_log_error("output file %s: attributes of /snapshots/%s", output->partial, field->name);
  return status;
}

int rtm_output_snapshots_begin(rtm_output_t *output, const char *field, int count) {
  int status = RTM_OK;
  hid_t space = H5I_INVALID_HID, dcpl = H5I_INVALID_HID;
  RTM_TRY(rtm_output_check_field_name(field));
  if (count < 1) RTM_FAIL(RTM_ERR_INTERNAL, "/snapshots/%s: count %d < 1", field, count);
  if (find_field(output, field)) RTM_FAIL(RTM_ERR_INTERNAL, "/snapshots/%s declared twice", field);
  RTM_TRY(rtm_output_group(output, "/snapshots", &output->snapshots));

  snapshot_field_t *grown =
      realloc(output->fields, (size_t)(output->field_count + 1) * sizeof *grown);
  if (!grown) RTM_FAIL(RTM_ERR_NOMEM, "out of memory declaring /snapshots/%s", field);
  output->fields = grown;
  snapshot_field_t *f = &output->fields[output->field_count++];
  memset(f, 0, sizeof *f);
  snprintf(f->name, sizeof f->name, "%s", field);
  f->dataset = H5I_INVALID_HID;
  f->count = count;
  f->steps = malloc((size_t)count * sizeof *f->steps);
  f->times = malloc((size_t)count * sizeof *f->times);
  if (!f->steps || !f->times)
    RTM_FAIL(RTM_ERR_NOMEM, "out of memory declaring /snapshots/%s", field);
  for (int i = 0; i < count; ++i) {
    f->steps[i] = -1;
    f->times[i] = NAN;
  }

  const rtm_io_volume_t *g = &output->volume;
  hsize_t dims[4] = {(hsize_t)count, (hsize_t)g->n[2], (hsize_t)g->n[1], (hsize_t)g->n[0]};
  hsize_t chunk[4];
  snapshot_chunk(g, chunk);
  /* Snapshots never written read back as NaN, which `rtm3d validate` refuses; written
   * whole by one writer (rtm_output_expect_whole), their chunks are not filled and
   * rtm_output_finish refuses a series with one never written instead. */
  const float fill = NAN;
  f->unfilled = output->whole && !output->collective;
  RTM_H5_CHECK(space = H5Screate_simple(4, dims, NULL), RTM_ERR_IO, "/snapshots/%s", field);
  RTM_H5_CHECK(dcpl = H5Pcreate(H5P_DATASET_CREATE), RTM_ERR_IO, "/snapshots/%s", field);
  RTM_H5_CHECK(H5Pset_chunk(dcpl, 4, chunk), RTM_ERR_IO, "/snapshots/%s", field);
  RTM_H5_CHECK(H5Pset_fill_value(dcpl, H5T_NATIVE_FLOAT, &fill), RTM_ERR_IO, "/snapshots/%s",
               field);
  if (output->collective || f->unfilled)
    RTM_H5_CHECK(H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER), RTM_ERR_IO, "/snapshots/%s", field);
  RTM_H5_CHECK(f->dataset = H5Dcreate2(output->snapshots, field, H5T_IEEE_F32LE, space, H5P_DEFAULT,
                                       dcpl, H5P_DEFAULT),
               RTM_ERR_IO, "output file %s: creating /snapshots/%s", output->partial, field);
  RTM_TRY(write_snapshot_attrs(output, f));
fail:
  rtm_h5_close(&dcpl);
  rtm_h5_close(&space);
  return status;
}

int rtm_output_select_planes(hid_t dataset, int rank, int index, const rtm_io_volume_t *volume,
                             const char *name, hid_t *file_space, hid_t *memory_space) {
  int status = RTM_OK;
  const int lead = rank - 3; /* 1 for a series, else 0 */
  hsize_t start[4] = {(hsize_t)index, 0, 0, 0};
  hsize_t count[4] = {1, 1, 1, 1};
  start[lead] = (hsize_t)volume->z_offset;
  count[lead] = (hsize_t)volume->nz_local;
  count[lead + 1] = (hsize_t)volume->n[1];
  count[lead + 2] = (hsize_t)volume->n[0];
  RTM_H5_CHECK(*file_space = H5Dget_space(dataset), RTM_ERR_IO, "%s", name);
  RTM_H5_CHECK(H5Sselect_hyperslab(*file_space, H5S_SELECT_SET, start, NULL, count, NULL),
               RTM_ERR_IO, "%s", name);
  RTM_H5_CHECK(*memory_space = H5Screate_simple(rank, count, NULL), RTM_ERR_IO, "%s", name);
fail:
  return status;
}

/* Writes this rank's planes of a volume into dataset: at [index][z_offset...] of a series
 * (rank 4), or at [z_offset...] of a single volume (rank 3). `name` names it in messages.
 * Rank-ordered writes thus compose the volume. */
static int write_local_planes(rtm_output_t *output, hid_t dataset, int rank, int index,
                              const char *name, const float *dense) {
  int status = RTM_OK;
  hid_t file_space = H5I_INVALID_HID, memory_space = H5I_INVALID_HID;
  RTM_TRY(rtm_output_select_planes(dataset, rank, index, &output->volume, name, &file_space,
                                   &memory_space));
  RTM_H5_CHECK(H5Dwrite(dataset, H5T_NATIVE_FLOAT, memory_space, file_space, H5P_DEFAULT, dense),
               RTM_ERR_IO, "output file %s: writing %s", output->partial, name);
fail:
  rtm_h5_close(&memory_space);
  rtm_h5_close(&file_space);
  return status;
}

int rtm_output_set_planes(rtm_output_t *output, int z_offset, int nz) {
  int status = RTM_OK;
  if (z_offset < 0 || nz < 1 || z_offset + nz > output->volume.n[2])
    RTM_FAIL(RTM_ERR_INTERNAL, "output file %s: planes [%d, %d) of a volume of %d", output->partial,
             z_offset, z_offset + nz, output->volume.n[2]);
  output->volume.z_offset = z_offset;
  output->volume.nz_local = nz;
fail:
  return status;
}

/* The declared series `field` with an entry `index`, else RTM_ERR_INTERNAL (NULL). */
static snapshot_field_t *declared_snapshot(rtm_output_t *output, const char *field, int index) {
  snapshot_field_t *f = find_field(output, field ? field : "");
  if (!f)
    rtm_log_error("/snapshots/%s written before rtm_output_snapshots_begin",
                  field ? field : "(null)");
  else if (index < 0 || index >= f->count) {
    rtm_log_error("/snapshots/%s: index %d outside 0..%d", field, index, f->count - 1);
    f = NULL;
  }
  return f;
}

int rtm_output_write_snapshot(rtm_output_t *output, const char *field, int index, int step,
                              double time_s, const float *dense) {
  int status = RTM_OK;
  char name[FIELD_NAME_MAX + 32];
  snapshot_field_t *f = declared_snapshot(output, field, index);
  if (!f) return RTM_ERR_INTERNAL;
  snprintf(name, sizeof name, "/snapshots/%s[%d]", field, index);
  RTM_TRY(write_local_planes(output, f->dataset, 4, index, name, dense));
  f->steps[index] = step;
  f->times[index] = time_s;
  RTM_TRY(write_snapshot_attrs(output, f));
fail:
  return status;
}

/* The dataset [nz][ny][nx] at name, created (NaN where no rank has written) or, when a
 * rank before created it, opened and checked. */
static int open_volume(rtm_output_t *output, const char *name, int unfilled, hid_t *dataset) {
  int status = RTM_OK, exists;
  hid_t space = H5I_INVALID_HID, dcpl = H5I_INVALID_HID, lcpl = H5I_INVALID_HID;
  const rtm_io_volume_t *g = &output->volume;
  hsize_t dims[3] = {(hsize_t)g->n[2], (hsize_t)g->n[1], (hsize_t)g->n[0]}, found[3] = {0, 0, 0};
  RTM_H5_CHECK(exists = rtm_h5_path_exists(output->file, name), RTM_ERR_IO, "output file %s: %s",
               output->partial, name);
  if (exists) {
    RTM_H5_CHECK(*dataset = H5Dopen2(output->file, name, H5P_DEFAULT), RTM_ERR_IO,
                 "output file %s: opening %s", output->partial, name);
    RTM_H5_CHECK(space = H5Dget_space(*dataset), RTM_ERR_IO, "%s", name);
    if (H5Sget_simple_extent_ndims(space) != 3 ||
        H5Sget_simple_extent_dims(space, found, NULL) < 0 || memcmp(found, dims, sizeof dims) != 0)
      RTM_FAIL(RTM_ERR_INTERNAL, "output file %s: %s exists with another shape than [%d][%d][%d]",
               output->partial, name, g->n[2], g->n[1], g->n[0]);
    goto fail;
  }
  const float fill = NAN;
  RTM_H5_CHECK(space = H5Screate_simple(3, dims, NULL), RTM_ERR_IO, "%s", name);
  RTM_H5_CHECK(dcpl = H5Pcreate(H5P_DATASET_CREATE), RTM_ERR_IO, "%s", name);
  RTM_H5_CHECK(H5Pset_fill_value(dcpl, H5T_NATIVE_FLOAT, &fill), RTM_ERR_IO, "%s", name);
  if (output->collective || unfilled)
    RTM_H5_CHECK(H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER), RTM_ERR_IO, "%s", name);
  RTM_TRY(create_intermediate_groups(output, name, &lcpl));
  RTM_H5_CHECK(*dataset =
                   H5Dcreate2(output->file, name, H5T_IEEE_F32LE, space, lcpl, dcpl, H5P_DEFAULT),
               RTM_ERR_IO, "output file %s: creating %s", output->partial, name);
fail:
  rtm_h5_close(&lcpl);
  rtm_h5_close(&dcpl);
  rtm_h5_close(&space);
  return status;
}

/* A volume's path once, for the XDMF sidecar. */
static int remember_volume(rtm_output_t *output, const char *name) {
  for (int v = 0; v < output->volume_count; ++v)
    if (strcmp(output->volumes[v], name) == 0) return RTM_OK;
  char **grown = realloc(output->volumes, (size_t)(output->volume_count + 1) * sizeof *grown);
  if (!grown) return RTM_ERR_NOMEM;
  output->volumes = grown;
  if (!(output->volumes[output->volume_count] = copy_text(name))) return RTM_ERR_NOMEM;
  ++output->volume_count;
  return RTM_OK;
}

/* The volume `name` opened (created on its first write) and named for the sidecar. */
static int declare_volume(rtm_output_t *output, const char *name, hid_t *dataset) {
  int status = RTM_OK;
  if (!name || name[0] != '/' || name[strlen(name) - 1] == '/')
    RTM_FAIL(RTM_ERR_INTERNAL, "output volume name '%s': expected an absolute path such as /image",
             name ? name : "(null)");
  RTM_TRY(open_volume(output, name, 0, dataset));
  RTM_TRY(remember_volume(output, name));
fail:
  return status;
}

/* Whether `name` is the volume declared in parts. */
static int in_parts(const rtm_output_t *output, const char *name) {
  return output->parts_name && strcmp(output->parts_name, name) == 0;
}

/* The planes the next write of the volume in parts carries, marked written: a plane written
 * twice is a writer's error (its parts overlap), refused before the write. */
static int mark_parts(rtm_output_t *output, const char *name) {
  const int first = output->volume.z_offset, end = first + output->volume.nz_local;
  for (int z = first; z < end; ++z)
    if (output->parts_written[z]) {
      rtm_log_error("output file %s: plane %d of %s written twice", output->partial, z, name);
      return RTM_ERR_INTERNAL;
    }
  memset(output->parts_written + first, 1, (size_t)(end - first));
  return RTM_OK;
}

int rtm_output_write_volume(rtm_output_t *output, const char *name, const float *dense) {
  int status = RTM_OK;
  hid_t dataset = H5I_INVALID_HID;
  RTM_TRY(declare_volume(output, name, &dataset));
  if (in_parts(output, name)) RTM_TRY(mark_parts(output, name));
  RTM_TRY(write_local_planes(output, dataset, 3, 0, name, dense));
  rtm_io_start_writeback(output->partial); /* synced at the commit: most of it there by then */
fail:
  rtm_h5_close(&dataset);
  return status;
}

int rtm_output_volume_in_parts(rtm_output_t *output, const char *name) {
  int status = RTM_OK;
  hid_t dataset = H5I_INVALID_HID;
  if (!output->whole || output->collective || output->parts_name)
    RTM_FAIL(RTM_ERR_INTERNAL,
             "output file %s: %s in parts needs one writer and no other volume "
             "in parts",
             output->partial, name ? name : "(null)");
  if (!name || name[0] != '/')
    RTM_FAIL(RTM_ERR_INTERNAL, "output volume name '%s': expected an absolute path such as /image",
             name ? name : "(null)");
  int exists = 0;
  RTM_H5_CHECK(exists = rtm_h5_path_exists(output->file, name), RTM_ERR_IO, "output file %s: %s",
               output->partial, name);
  if (exists)
    RTM_FAIL(RTM_ERR_INTERNAL, "output file %s: %s in parts: it exists already", output->partial,
             name);
  RTM_TRY(open_volume(output, name, 1, &dataset));
  RTM_TRY(remember_volume(output, name));
  output->parts_name = copy_text(name);
  output->parts_written = calloc((size_t)output->volume.n[2], 1);
  if (!output->parts_name || !output->parts_written)
    RTM_FAIL(RTM_ERR_NOMEM, "out of memory for the volume %s of %s in parts", name, output->path);
fail:
  rtm_h5_close(&dataset);
  return status;
}

/* ---- the file let go for a collective write (parallel HDF5) and taken back ---- */

void rtm_output_expect_collective(rtm_output_t *output) {
  output->collective = 1;
}

void rtm_output_expect_whole(rtm_output_t *output) {
  output->whole = 1;
}

void rtm_output_snapshot_path(const char *field, char *path, size_t size) {
  snprintf(path, size, "/snapshots/%s", field);
}

int rtm_output_name_volume(rtm_output_t *output, const char *name) {
  const int status = remember_volume(output, name);
  if (status != RTM_OK)
    rtm_log_error("out of memory naming the volume %s of %s", name, output->path);
  return status;
}

void rtm_output_no_sidecar(rtm_output_t *output) {
  output->no_sidecar = 1;
}

int rtm_output_release_for_volume(rtm_output_t *output, const char *name) {
  hid_t dataset = H5I_INVALID_HID;
  const int status = declare_volume(output, name, &dataset);
  rtm_h5_close(&dataset);
  return status == RTM_OK ? close_handles(output) : status;
}

int rtm_output_release_for_snapshot(rtm_output_t *output, const char *field, int index) {
  if (!declared_snapshot(output, field, index)) return RTM_ERR_INTERNAL;
  return close_handles(output);
}

int rtm_output_reacquire(rtm_output_t *output, const char *field, int index, int step,
                         double time_s) {
  int status = RTM_OK;
  hid_t fapl = H5I_INVALID_HID;
  char name[SNAPSHOT_PATH_MAX];
  rtm_h5_quiet();
  RTM_H5_CHECK(fapl = rtm_h5_create_fapl(), RTM_ERR_IO, "output file %s", output->partial);
  RTM_H5_CHECK(output->file = H5Fopen(output->partial, H5F_ACC_RDWR, fapl), RTM_ERR_IO,
               "output file %s: opening it again after the ranks wrote their slabs",
               output->partial);
  for (int i = 0; i < output->field_count; ++i) {
    rtm_output_snapshot_path(output->fields[i].name, name, sizeof name);
    RTM_H5_CHECK(output->fields[i].dataset = H5Dopen2(output->file, name, H5P_DEFAULT), RTM_ERR_IO,
                 "output file %s: opening %s again", output->partial, name);
  }
  if (field) {
    snapshot_field_t *f = declared_snapshot(output, field, index);
    if (!f) RTM_FAIL(RTM_ERR_INTERNAL, "output file %s", output->partial);
    f->steps[index] = step;
    f->times[index] = time_s;
    RTM_TRY(write_snapshot_attrs(output, f));
  }
fail:
  rtm_h5_close(&fapl);
  return status;
}

int rtm_output_write_receivers(rtm_output_t *output, hid_t group, const char *group_name,
                               const double *position_m, int count) {
  int status = RTM_OK;
  hid_t space = H5I_INVALID_HID, dataset = H5I_INVALID_HID;
  htri_t exists;
  RTM_H5_CHECK(exists = H5Lexists(group, "receivers", H5P_DEFAULT), RTM_ERR_IO, "%s/receivers",
               group_name);
  if (exists) {
    /* Every field of a shot shares the receivers: the first call wrote them. */
    hsize_t dims[2] = {0, 0};
    RTM_H5_CHECK(dataset = H5Dopen2(group, "receivers", H5P_DEFAULT), RTM_ERR_IO, "%s/receivers",
                 group_name);
    RTM_H5_CHECK(space = H5Dget_space(dataset), RTM_ERR_IO, "%s/receivers", group_name);
    RTM_H5_CHECK(H5Sget_simple_extent_dims(space, dims, NULL), RTM_ERR_IO, "%s/receivers",
                 group_name);
    if (dims[0] != (hsize_t)count)
      RTM_FAIL(RTM_ERR_INTERNAL, "%s/receivers holds %llu receivers, a trace set has %d",
               group_name, (unsigned long long)dims[0], count);
    goto fail;
  }
  const hsize_t dims[2] = {(hsize_t)count, 3};
  RTM_TRY(rtm_output_write_metres(output, group, group_name, "receivers", 2, dims, position_m));
fail:
  rtm_h5_close(&dataset);
  rtm_h5_close(&space);
  return status;
}

int rtm_output_write_dataset(rtm_output_t *output, hid_t group, const char *group_name,
                             const char *name, hid_t file_type, hid_t memory_type, int rank,
                             const hsize_t *dims, const void *values, hid_t *dataset) {
  int status = RTM_OK;
  hid_t space = H5I_INVALID_HID;
  *dataset = H5I_INVALID_HID;
  RTM_H5_CHECK(space = H5Screate_simple(rank, dims, NULL), RTM_ERR_IO, "%s/%s", group_name, name);
  RTM_H5_CHECK(*dataset =
                   H5Dcreate2(group, name, file_type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
               RTM_ERR_IO, "output file %s: creating %s/%s", output->partial, group_name, name);
  RTM_H5_CHECK(H5Dwrite(*dataset, memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values), RTM_ERR_IO,
               "output file %s: writing %s/%s", output->partial, group_name, name);
fail:
  rtm_h5_close(&space);
  return status;
}

int rtm_output_write_metres(rtm_output_t *output, hid_t group, const char *group_name,
                            const char *name, int rank, const hsize_t *dims, const double *values) {
  int status = RTM_OK;
  hid_t dataset = H5I_INVALID_HID;
  RTM_TRY(rtm_output_write_dataset(output, group, group_name, name, H5T_IEEE_F64LE,
                                   H5T_NATIVE_DOUBLE, rank, dims, values, &dataset));
  RTM_TRY(rtm_h5_write_attr_string(dataset, "units", "m"));
fail:
  rtm_h5_close(&dataset);
  return status;
}

int rtm_output_write_gather(rtm_output_t *output, hid_t group, const char *group_name,
                            const char *field, const float *traces, int count, int samples,
                            double dt_s) {
  int status = RTM_OK;
  hid_t dataset = H5I_INVALID_HID;
  const hsize_t dims[2] = {(hsize_t)count, (hsize_t)samples};
  RTM_TRY(rtm_output_write_dataset(output, group, group_name, field, H5T_IEEE_F32LE,
                                   H5T_NATIVE_FLOAT, 2, dims, traces, &dataset));
  RTM_TRY(rtm_h5_write_attr_doubles(dataset, "dt", &dt_s, 1));
fail:
  rtm_h5_close(&dataset);
  return status;
}

int rtm_output_check_gather(const char *group_name, const char *field, int count, int samples) {
  int status = RTM_OK;
  RTM_TRY(rtm_output_check_field_name(field));
  if (strcmp(field, "receivers") == 0)
    RTM_FAIL(RTM_ERR_INTERNAL, "%s/receivers: 'receivers' names the receiver positions",
             group_name);
  if (count < 0 || samples < 1)
    RTM_FAIL(RTM_ERR_INTERNAL, "%s/%s: %d traces of %d samples", group_name, field, count, samples);
fail:
  return status;
}

int rtm_output_write_traces(rtm_output_t *output, const char *field, const float *traces, int count,
                            int samples, double dt_s, const double *position_m) {
  int status = RTM_OK;
  RTM_TRY(rtm_output_check_gather("/traces", field, count, samples));
  if (count == 0) return RTM_OK;
  RTM_TRY(rtm_output_group(output, "/traces", &output->traces));
  RTM_TRY(rtm_output_write_gather(output, output->traces, "/traces", field, traces, count, samples,
                                  dt_s));
  if (position_m)
    RTM_TRY(rtm_output_write_receivers(output, output->traces, "/traces", position_m, count));
fail:
  return status;
}

int rtm_output_traces_begin(rtm_output_t *output, const char *field, int count, int samples,
                            int window, double dt_s, const double *position_m) {
  int status = RTM_OK;
  hid_t space = H5I_INVALID_HID, dataset = H5I_INVALID_HID, dcpl = H5I_INVALID_HID;
  RTM_TRY(rtm_output_check_gather("/traces", field, count, samples));
  if (count == 0 || window < 1)
    RTM_FAIL(RTM_ERR_INTERNAL, "/traces/%s: %d receivers, windows of %d samples", field, count,
             window);
  RTM_TRY(rtm_output_group(output, "/traces", &output->traces));
  const hsize_t dims[2] = {(hsize_t)count, (hsize_t)samples};
  const hsize_t chunk[2] = {(hsize_t)count, (hsize_t)(window < samples ? window : samples)};
  RTM_H5_CHECK(space = H5Screate_simple(2, dims, NULL), RTM_ERR_IO, "/traces/%s", field);
  RTM_H5_CHECK(dcpl = H5Pcreate(H5P_DATASET_CREATE), RTM_ERR_IO, "/traces/%s", field);
  RTM_H5_CHECK(H5Pset_chunk(dcpl, 2, chunk), RTM_ERR_IO, "/traces/%s", field);
  /* every chunk is written whole, window by window (a run that stops short removes its
   * file): HDF5 filling each chunk first halved the rate a full receiver plane's windows
   * reached tmpfs (run/experiments/window_write.sh) and set the steps' pace */
  RTM_H5_CHECK(H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER), RTM_ERR_IO, "/traces/%s", field);
  RTM_H5_CHECK(dataset = H5Dcreate2(output->traces, field, H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl,
                                    H5P_DEFAULT),
               RTM_ERR_IO, "output file %s: creating /traces/%s", output->partial, field);
  RTM_TRY(rtm_h5_write_attr_doubles(dataset, "dt", &dt_s, 1));
  if (position_m)
    RTM_TRY(rtm_output_write_receivers(output, output->traces, "/traces", position_m, count));
fail:
  rtm_h5_close(&dcpl);
  rtm_h5_close(&dataset);
  rtm_h5_close(&space);
  return status;
}

/* The window's chunk length when the window ([count][samples] at column `first`) is the
 * dataset's last chunk and fills only its first `samples` columns, and the file is one
 * process's (sec2) with the floats stored as they are in memory; else 0. The extent is looked
 * at first: only the last window asks for the dataset's and the file's properties. */
static hsize_t partial_last_chunk(hid_t file, hid_t dataset, hid_t file_space, int count, int first,
                                  int samples) {
#if H5_VERSION_GE(1, 10, 3) /* H5Dwrite_chunk's first */
  hsize_t dims[2] = {0, 0}, chunk[2] = {0, 0};
  if (H5Sget_simple_extent_dims(file_space, dims, NULL) != 2 || (hsize_t)count != dims[0] ||
      (hsize_t)(first + samples) != dims[1])
    return 0;
  hid_t dcpl = H5Dget_create_plist(dataset), fapl = H5Fget_access_plist(file);
  const int chunked = dcpl >= 0 && H5Pget_layout(dcpl) == H5D_CHUNKED &&
                      H5Pget_chunk(dcpl, 2, chunk) == 2 && H5Pget_nfilters(dcpl) == 0;
  const int own = fapl >= 0 && H5Pget_driver(fapl) == H5FD_SEC2 &&
                  H5Tequal(H5T_NATIVE_FLOAT, H5T_IEEE_F32LE) > 0; /* the bytes as stored */
  rtm_h5_close(&dcpl);
  rtm_h5_close(&fapl);
  const int last = chunked && own && chunk[0] == dims[0] && (hsize_t)first % chunk[1] == 0;
  return last && (hsize_t)samples < chunk[1] ? chunk[1] : 0;
#else
  (void)file, (void)dataset, (void)file_space, (void)count, (void)first, (void)samples;
  return 0;
#endif
}

/* The last chunk, of which the window fills the first `samples` columns of each row, written
 * whole (H5Dwrite_chunk), its columns past the extent zero: HDF5 wrote a part of a chunk too
 * large for its cache as one small write a row, 0.1-0.17 s for a full receiver plane's last
 * window of 1 to 51 samples where a whole 71 MB chunk takes 0.03 s (issue 35,
 * run/experiments/correction_timeline.sh with teardown_stamps.patch, an H200 host's tmpfs).
 * Only where partial_last_chunk found one. */
static int write_last_chunk(const rtm_output_t *output, hid_t dataset, const char *field,
                            const float *values, int count, int first, int samples,
                            hsize_t chunk_samples) {
  int status = RTM_OK;
  const size_t row = (size_t)chunk_samples, bytes = (size_t)count * row * sizeof(float);
  float *whole = malloc(bytes);
  if (!whole) RTM_FAIL(RTM_ERR_NOMEM, "out of memory for the last chunk of /traces/%s", field);
#pragma omp parallel for schedule(static)
  for (int r = 0; r < count; ++r) {
    memcpy(whole + (size_t)r * row, values + (size_t)r * samples, (size_t)samples * sizeof(float));
    memset(whole + (size_t)r * row + samples, 0, (row - (size_t)samples) * sizeof(float));
  }
#if H5_VERSION_GE(1, 10, 3)
  const hsize_t offset[2] = {0, (hsize_t)first};
  RTM_H5_CHECK(H5Dwrite_chunk(dataset, H5P_DEFAULT, 0, offset, bytes, whole), RTM_ERR_IO,
               "output file %s: writing samples [%d, %d) of /traces/%s", output->partial, first,
               first + samples, field);
#else
  (void)dataset;
  RTM_FAIL(RTM_ERR_INTERNAL, "output file %s: no direct chunk write in this HDF5", output->partial);
#endif
fail:
  free(whole);
  return status;
}

int rtm_output_traces_window(rtm_output_t *output, const char *field, const float *values,
                             int count, int first, int samples) {
  int status = RTM_OK;
  hid_t dataset = H5I_INVALID_HID, file_space = H5I_INVALID_HID, memory = H5I_INVALID_HID;
  const hsize_t start[2] = {0, (hsize_t)first}, size[2] = {(hsize_t)count, (hsize_t)samples};
  RTM_TRY(rtm_output_group(output, "/traces", &output->traces)); /* closed by a release */
  RTM_H5_CHECK(dataset = H5Dopen2(output->traces, field, H5P_DEFAULT), RTM_ERR_INTERNAL,
               "/traces/%s was not begun", field);
  RTM_H5_CHECK(file_space = H5Dget_space(dataset), RTM_ERR_IO, "/traces/%s", field);
  const hsize_t chunk_samples =
      partial_last_chunk(output->file, dataset, file_space, count, first, samples);
  if (chunk_samples > 0) {
    RTM_TRY(write_last_chunk(output, dataset, field, values, count, first, samples, chunk_samples));
  } else {
    RTM_H5_CHECK(H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, NULL, size, NULL),
                 RTM_ERR_INTERNAL, "/traces/%s: samples [%d, %d)", field, first, first + samples);
    RTM_H5_CHECK(memory = H5Screate_simple(2, size, NULL), RTM_ERR_IO, "/traces/%s", field);
    RTM_H5_CHECK(H5Dwrite(dataset, H5T_NATIVE_FLOAT, memory, file_space, H5P_DEFAULT, values),
                 RTM_ERR_IO, "output file %s: writing samples [%d, %d) of /traces/%s",
                 output->partial, first, first + samples, field);
  }
  rtm_io_start_writeback(output->partial); /* a shot's window: little is left for the sync */
fail:
  rtm_h5_close(&memory);
  rtm_h5_close(&file_space);
  rtm_h5_close(&dataset);
  return status;
}

/* RTM_ERR_INTERNAL when a snapshot of an unfilled series, or a plane of the volume in parts,
 * was never written: it would read back as whatever the disk held. */
static int output_complete(const rtm_output_t *output) {
  for (int z = 0; output->parts_name && z < output->volume.n[2]; ++z)
    if (!output->parts_written[z]) {
      rtm_log_error("output file %s: plane %d of %s was never written", output->partial, z,
                    output->parts_name);
      return RTM_ERR_INTERNAL;
    }
  for (int i = 0; i < output->field_count; ++i) {
    const snapshot_field_t *f = &output->fields[i];
    for (int k = 0; f->unfilled && k < f->count; ++k)
      if (f->steps[k] < 0) {
        rtm_log_error("output file %s: snapshot %d of /snapshots/%s was never written",
                      output->partial, k, f->name);
        return RTM_ERR_INTERNAL;
      }
  }
  return RTM_OK;
}

int rtm_output_finish(rtm_output_t *output, rtm_io_outputs_t *set) {
  int status = output_complete(output);
  if (close_handles(output) != RTM_OK) status = RTM_ERR_IO;
  if (status == RTM_OK) status = rtm_io_outputs_add_written(set, output->path);
  if (status != RTM_OK) {
    if (!rtm_io_remove_own(output->partial, "this run's unfinished output"))
      rtm_log_error("output file %s was not completed; removed", output->partial);
  } else if (!output->no_sidecar) {
    status = rtm_output_sidecar(output, set);
  }
  free_output(output);
  return status;
}

int rtm_output_close(rtm_output_t *output, int success) {
  if (!output) return RTM_OK;
  if (!success) {
    close_handles(output);
    rtm_io_remove_own(output->partial, "this run's unfinished output");
    free_output(output);
    return RTM_OK;
  }
  rtm_io_outputs_t *set = NULL;
  int status = rtm_io_outputs_create(&set);
  if (status == RTM_OK)
    status = rtm_output_finish(output, set);
  else
    rtm_output_close(output, 0);
  if (status == RTM_OK) status = rtm_io_outputs_commit(set, NULL);
  rtm_io_outputs_free(set); /* a failed finish's partials go */
  return status;
}

/* rtm_io_run_file_written, and when `dataset` is not NULL that dataset at the root too. */
static int run_file_with(const char *path, const char *dataset) {
  static const char *const stamps[] = {"format_version", "created", "command_line"};
  struct stat info;
  if (stat(path, &info) != 0 || !S_ISREG(info.st_mode)) return 0;
  rtm_h5_quiet();
#if H5_VERSION_GE(1, 12, 0)
  const htri_t hdf5 = H5Fis_accessible(path, H5P_DEFAULT);
#else
  const htri_t hdf5 = H5Fis_hdf5(path);
#endif
  hid_t file = hdf5 > 0 ? H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT) : H5I_INVALID_HID;
  int found = file >= 0;
  for (size_t k = 0; found && k < sizeof stamps / sizeof stamps[0]; ++k)
    found = H5Aexists(file, stamps[k]) > 0;
  if (found && dataset) found = H5Lexists(file, dataset, H5P_DEFAULT) > 0;
  rtm_h5_close(&file);
  H5Eclear2(H5E_DEFAULT);
  return found;
}

int rtm_io_run_file_written(const char *path) {
  return run_file_with(path, NULL);
}

int rtm_io_migration_file_written(const char *path) {
  return run_file_with(path, "image");
}
