#define _POSIX_C_SOURCE 200809L
/* HDF5 calls of the io module: error reports naming the call and HDF5's reason, quiet
 * error stacks, opening files for reading, existence checks, attributes, file access
 * properties. */
#include "rtm_io_impl.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- error reporting ---- */

typedef struct {
  char text[256];
  int found;
} h5_reason_t;

/* Walking upward visits the most specific error first: that one says what went wrong
 * ("unable to find a valid file signature", "object 'vp' doesn't exist"). */
static herr_t first_reason(unsigned n, const H5E_error2_t *error, void *data) {
  h5_reason_t *reason = data;
  (void)n;
  if (!reason->found && error->desc && error->desc[0]) {
    snprintf(reason->text, sizeof reason->text, "%s", error->desc);
    reason->found = 1;
  }
  return 0;
}

/* Last two path components of __FILE__ ("io/model_file.c"), which is what a reader of the
 * message can find in the source tree. */
static const char *short_source_name(const char *source_file) {
  const char *last = strrchr(source_file, '/');
  if (!last) return source_file;
  const char *p = last;
  while (p > source_file && p[-1] != '/')
    --p;
  return p > source_file ? p : source_file;
}

/* A reason from the file driver ("file write failed: time = ..., errno = 28, error message =
 * 'No space left on device', buf = ...") shortened to its cause, and a full disk named as
 * such: the rest of that text (addresses, sizes) helps no user. */
static void system_cause(h5_reason_t *reason) {
  const char *errno_at = strstr(reason->text, "errno = ");
  const char *message = strstr(reason->text, "error message = '");
  if (!errno_at || !message) return;
  const int code = atoi(errno_at + strlen("errno = "));
  message += strlen("error message = '");
  const size_t length = strcspn(message, "'");
  char cause[256];
  if (code == ENOSPC || code == EDQUOT)
    snprintf(cause, sizeof cause,
             "the disk is full (%.*s, errno %d): free space there or write to a larger "
             "disk (output.dir, or model.file for makemodel)",
             (int)length, message, code);
  else
    snprintf(cause, sizeof cause, "%.*s (errno %d)", (int)length, message, code);
  snprintf(reason->text, sizeof reason->text, "%s", cause);
}

void rtm_h5_report(const char *call, const char *source_file, int line, const char *fmt, ...) {
  char context[1024];
  va_list args;
  va_start(args, fmt);
  vsnprintf(context, sizeof context, fmt, args);
  va_end(args);
  h5_reason_t reason = {"", 0};
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, first_reason, &reason);
  H5Eclear2(H5E_DEFAULT);
  system_cause(&reason);
  rtm_log_error("%s: HDF5 call %s failed at %s:%d%s%s", context, call,
                short_source_name(source_file), line, reason.found ? ": " : "", reason.text);
}

void rtm_io_startup(void) {
  /* no cleanup at exit: after a failed H5Fclose (a full disk) HDF5 1.10's own atexit
   * closing of that file crashes; every file rtm3d opens is closed explicitly */
  H5dont_atexit();
}

void rtm_h5_quiet(void) {
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

int rtm_h5_close(hid_t *id) {
  herr_t result = 0;
  if (*id >= 0) {
    switch (H5Iget_type(*id)) {
    case H5I_FILE: result = H5Fclose(*id); break;
    case H5I_GROUP: result = H5Gclose(*id); break;
    case H5I_DATASET: result = H5Dclose(*id); break;
    case H5I_DATASPACE: result = H5Sclose(*id); break;
    case H5I_DATATYPE: result = H5Tclose(*id); break;
    case H5I_ATTR: result = H5Aclose(*id); break;
    case H5I_GENPROP_LST: result = H5Pclose(*id); break;
    default: result = H5Oclose(*id); break;
    }
  }
  *id = H5I_INVALID_HID;
  return result < 0 ? RTM_ERR_IO : RTM_OK;
}

/* ---- files ---- */

int rtm_h5_check_input_path(const char *path, const char *what) {
  int status = RTM_OK;
  struct stat info;
  /* a missing path is left to the opener, which names it in its own words */
  if (stat(path, &info) != 0) return RTM_OK;
  /* opening a FIFO for reading waits for a writer for ever, and a device never ends */
  if (!S_ISREG(info.st_mode))
    RTM_FAIL(
        RTM_ERR_INPUT,
        "%s %s is not a regular file (a FIFO, a device or a folder): rtm3d reads its inputs from "
        "regular files",
        what, path);
fail:
  return status;
}

/* Whether another process holds an exclusive lock on `path` (HDF5's while a run writes the
 * file): a shared one cannot be had at once. */
static int held_by_another(const char *path) {
  const int fd = open(path, O_RDONLY);
  if (fd < 0) return 0;
  const int held = flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  close(fd); /* drops the shared lock, if it was had */
  return held;
}

int rtm_h5_open_read(const char *path, const char *what, hid_t *file) {
  int status = RTM_OK;
  struct stat info;
  *file = H5I_INVALID_HID;
  rtm_h5_quiet();
  if (stat(path, &info) != 0)
    RTM_FAIL(RTM_ERR_INPUT, "cannot open %s %s: %s", what, path, strerror(errno));
  RTM_TRY(rtm_h5_check_input_path(path, what));
  FILE *probe = fopen(path, "rb");
  if (!probe) RTM_FAIL(RTM_ERR_INPUT, "cannot read %s %s: %s", what, path, strerror(errno));
  fclose(probe);
#if H5_VERSION_GE(1, 12, 0)
  htri_t is_hdf5 = H5Fis_accessible(path, H5P_DEFAULT);
#else
  htri_t is_hdf5 = H5Fis_hdf5(path);
#endif
  if (is_hdf5 <= 0) {
    H5Eclear2(H5E_DEFAULT);
    RTM_FAIL(RTM_ERR_INPUT,
             "%s %s is not an HDF5 file (no valid HDF5 signature: wrong file, "
             "or the file is corrupt or truncated)",
             what, path);
  }
  *file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (*file < 0 && held_by_another(path)) { /* probe N, N3: it was called corrupt */
    H5Eclear2(H5E_DEFAULT);
    RTM_FAIL(RTM_ERR_INPUT,
             "cannot open %s %s: another process holds it (HDF5's lock: a run still writing "
             "it, whose NAME.h5 appears when it finishes); read it after",
             what, path);
  }
  RTM_H5_CHECK(*file, RTM_ERR_INPUT, "cannot open %s %s (corrupt?)", what, path);
fail:
  return status;
}

int rtm_h5_path_exists(hid_t file, const char *path) {
  char partial[1024];
  size_t length = strlen(path);
  if (length == 0 || length >= sizeof partial) return 0;
  /* H5Lexists needs every intermediate group to exist, so test the components in turn. */
  for (size_t i = 1; i <= length; ++i) {
    if (i < length && path[i] != '/') continue;
    if (i == 1 && path[0] == '/') continue;
    memcpy(partial, path, i);
    partial[i] = '\0';
    htri_t exists = H5Lexists(file, partial, H5P_DEFAULT);
    if (exists <= 0) return exists < 0 ? -1 : 0;
  }
  return 1;
}

/* ---- attributes ---- */

static int write_attr(hid_t object, const char *name, hid_t type, hid_t space, const void *data) {
  int status = RTM_OK;
  hid_t attr = H5I_INVALID_HID;
  htri_t exists;
  RTM_H5_CHECK(exists = H5Aexists(object, name), RTM_ERR_IO, "attribute %s", name);
  if (exists) RTM_H5_CHECK(H5Adelete(object, name), RTM_ERR_IO, "attribute %s", name);
  RTM_H5_CHECK(attr = H5Acreate2(object, name, type, space, H5P_DEFAULT, H5P_DEFAULT), RTM_ERR_IO,
               "attribute %s", name);
  RTM_H5_CHECK(H5Awrite(attr, type, data), RTM_ERR_IO, "attribute %s", name);
fail:
  if (rtm_h5_close(&attr) != RTM_OK && status == RTM_OK) status = RTM_ERR_IO;
  return status;
}

int rtm_h5_write_attr_string(hid_t object, const char *name, const char *value) {
  int status = RTM_OK;
  hid_t type = H5I_INVALID_HID, space = H5I_INVALID_HID;
  if (!value) value = "";
  /* size includes the terminator so that NULLTERM readers see the whole text */
  RTM_H5_CHECK(type = H5Tcopy(H5T_C_S1), RTM_ERR_IO, "attribute %s", name);
  RTM_H5_CHECK(H5Tset_size(type, strlen(value) + 1), RTM_ERR_IO, "attribute %s", name);
  RTM_H5_CHECK(H5Tset_strpad(type, H5T_STR_NULLTERM), RTM_ERR_IO, "attribute %s", name);
  RTM_H5_CHECK(H5Tset_cset(type, H5T_CSET_UTF8), RTM_ERR_IO, "attribute %s", name);
  RTM_H5_CHECK(space = H5Screate(H5S_SCALAR), RTM_ERR_IO, "attribute %s", name);
  RTM_TRY(write_attr(object, name, type, space, value));
fail:
  rtm_h5_close(&space);
  rtm_h5_close(&type);
  return status;
}

static int write_attr_array(hid_t object, const char *name, hid_t type, const void *values,
                            size_t count) {
  int status = RTM_OK;
  hid_t space = H5I_INVALID_HID;
  hsize_t dims[1] = {count};
  RTM_H5_CHECK(space = H5Screate_simple(1, dims, NULL), RTM_ERR_IO, "attribute %s", name);
  RTM_TRY(write_attr(object, name, type, space, values));
fail:
  rtm_h5_close(&space);
  return status;
}

int rtm_h5_write_attr_doubles(hid_t object, const char *name, const double *values, size_t count) {
  return write_attr_array(object, name, H5T_NATIVE_DOUBLE, values, count);
}

int rtm_h5_write_attr_ints(hid_t object, const char *name, const int *values, size_t count) {
  return write_attr_array(object, name, H5T_NATIVE_INT, values, count);
}

int rtm_h5_write_attr_int(hid_t object, const char *name, int value) {
  int status = RTM_OK;
  hid_t space = H5I_INVALID_HID;
  RTM_H5_CHECK(space = H5Screate(H5S_SCALAR), RTM_ERR_IO, "attribute %s", name);
  RTM_TRY(write_attr(object, name, H5T_NATIVE_INT, space, &value));
fail:
  rtm_h5_close(&space);
  return status;
}

int rtm_h5_read_attr_doubles(hid_t object, const char *context, const char *name, size_t count,
                             const char *meaning, double *values, int *present) {
  int status = RTM_OK;
  hid_t attr = H5I_INVALID_HID, space = H5I_INVALID_HID, type = H5I_INVALID_HID;
  htri_t exists;
  *present = 0;
  RTM_H5_CHECK(exists = H5Aexists(object, name), RTM_ERR_INPUT, "%s: attribute %s", context, name);
  if (!exists) goto fail;
  RTM_H5_CHECK(attr = H5Aopen(object, name, H5P_DEFAULT), RTM_ERR_INPUT, "%s: attribute %s",
               context, name);
  RTM_H5_CHECK(space = H5Aget_space(attr), RTM_ERR_INPUT, "%s: attribute %s", context, name);
  RTM_H5_CHECK(type = H5Aget_type(attr), RTM_ERR_INPUT, "%s: attribute %s", context, name);
  hssize_t points = H5Sget_simple_extent_npoints(space);
  H5T_class_t type_class = H5Tget_class(type);
  const int numeric = type_class == H5T_FLOAT || type_class == H5T_INTEGER, one = points == 1;
  const char *held = numeric ? (one ? "number" : "numbers")
                     : type_class == H5T_STRING
                         ? (one ? "string" : "strings")
                         : (one ? "value of a non-numeric type" : "values of a non-numeric type");
  if (points != (hssize_t)count || !numeric)
    RTM_FAIL(RTM_ERR_INPUT, "%s: attribute %s must hold %zu number%s (%s), found %lld %s", context,
             name, count, count == 1 ? "" : "s", meaning, (long long)points, held);
  RTM_H5_CHECK(H5Aread(attr, H5T_NATIVE_DOUBLE, values), RTM_ERR_INPUT, "%s: reading attribute %s",
               context, name);
  *present = 1;
fail:
  rtm_h5_close(&type);
  rtm_h5_close(&space);
  rtm_h5_close(&attr);
  return status;
}

/* ---- datasets ---- */

int rtm_h5_read_array(hid_t file, const char *context, const char *name, hid_t memory_type,
                      size_t element_size, int rank, hsize_t *dims, void **data) {
  int status = RTM_OK, found_rank;
  hid_t dataset = H5I_INVALID_HID, space = H5I_INVALID_HID, type = H5I_INVALID_HID;
  if (data) *data = NULL;
  if (rtm_h5_path_exists(file, name) <= 0)
    RTM_FAIL(RTM_ERR_INPUT, "%s has no dataset %s", context, name);
  RTM_H5_CHECK(dataset = H5Dopen2(file, name, H5P_DEFAULT), RTM_ERR_INPUT,
               "%s: %s is not a dataset", context, name);
  RTM_H5_CHECK(type = H5Dget_type(dataset), RTM_ERR_INPUT, "%s: dataset %s", context, name);
  H5T_class_t type_class = H5Tget_class(type);
  RTM_H5_CHECK(space = H5Dget_space(dataset), RTM_ERR_INPUT, "%s: dataset %s", context, name);
  RTM_H5_CHECK(found_rank = H5Sget_simple_extent_ndims(space), RTM_ERR_INPUT, "%s: dataset %s",
               context, name);
  if ((type_class != H5T_FLOAT && type_class != H5T_INTEGER) || found_rank != rank)
    RTM_FAIL(RTM_ERR_INPUT, "%s: dataset %s is not a numeric array of rank %d (found rank %d%s)",
             context, name, rank, found_rank,
             type_class != H5T_FLOAT && type_class != H5T_INTEGER ? ", not numeric" : "");
  RTM_H5_CHECK(H5Sget_simple_extent_dims(space, dims, NULL), RTM_ERR_INPUT, "%s: dataset %s",
               context, name);
  if (!data) goto fail; /* its shape alone */
  size_t elements = 1;
  for (int i = 0; i < rank; ++i)
    elements *= (size_t)dims[i];
  *data = malloc((elements ? elements : 1) * element_size);
  if (!*data) RTM_FAIL(RTM_ERR_NOMEM, "%s: out of memory reading %s", context, name);
  if (elements)
    RTM_H5_CHECK(H5Dread(dataset, memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, *data), RTM_ERR_INPUT,
                 "%s: reading dataset %s (corrupt?)", context, name);
fail:
  if (status != RTM_OK && data) {
    free(*data);
    *data = NULL;
  }
  rtm_h5_close(&type);
  rtm_h5_close(&space);
  rtm_h5_close(&dataset);
  return status;
}

hid_t rtm_h5_create_fapl(void) {
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  if (fapl < 0) return fapl;
#if H5_VERSION_GE(1, 10, 2)
  H5F_libver_t low = H5F_LIBVER_V18;
#else
  H5F_libver_t low = H5F_LIBVER_LATEST;
#endif
  /* no sieve buffer: HDF5 held a small dataset's values there and wrote them when the
   * dataset was closed, where a full disk's error is easily lost (probe S, S2: makemodel
   * wrote a model of zeros onto a full tmpfs and said so, exit 0); without it a failed
   * write fails its H5Dwrite */
  if (H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG) < 0 ||
      H5Pset_libver_bounds(fapl, low, H5F_LIBVER_LATEST) < 0 ||
      H5Pset_sieve_buf_size(fapl, 0) < 0) {
    H5Pclose(fapl);
    return H5I_INVALID_HID;
  }
  return fapl;
}
