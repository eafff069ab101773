/* rtm_io_impl.h - private helpers of the io module: HDF5 call checking, small attribute
 * helpers, the PATH.partial convention and directory creation. Not part of the public API. */
#ifndef RTM_IO_IMPL_H
#define RTM_IO_IMPL_H

#include <stddef.h>

#include <hdf5.h>

#include "rtm_status.h"

/* Runs an HDF5 call whose result (herr_t, htri_t or hid_t) is negative on failure. On
 * failure logs the context (printf-style, at least a format), the call text, the source
 * file and line and HDF5's innermost reason, stores `code` in `status` and jumps to
 * `fail`. */
#define RTM_H5_CHECK(call, code, ...)                                                              \
  do {                                                                                             \
    if ((call) < 0) {                                                                              \
      rtm_h5_report(#call, __FILE__, __LINE__, __VA_ARGS__);                                       \
      status = (code);                                                                             \
      goto fail;                                                                                   \
    }                                                                                              \
  } while (0)

void rtm_h5_report(const char *call, const char *source_file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Turns off HDF5's own error stack printing so that our messages are the ones the user
 * sees. Called at every public entry point of the module (cheap, idempotent). */
void rtm_h5_quiet(void);

/* Closes an id of any kind when it is valid and resets it; returns the close status. */
int rtm_h5_close(hid_t *id);

/* Opens an existing file read-only. A missing file, a file that is not HDF5 (or whose
 * signature is damaged) and a file HDF5 cannot open are RTM_ERR_INPUT errors naming the
 * path and `what` ("model file", "run file", ...). */
int rtm_h5_open_read(const char *path, const char *what, hid_t *file);

/* 1 when every component of an absolute or root-relative path exists, 0 when one does
 * not, negative on an HDF5 failure. */
int rtm_h5_path_exists(hid_t file, const char *path);

/* Attributes on an object: a scalar fixed-length UTF-8 string (NULL writes ""), and 1D
 * arrays of doubles and ints. */
int rtm_h5_write_attr_string(hid_t object, const char *name, const char *value);
int rtm_h5_write_attr_doubles(hid_t object, const char *name, const double *values, size_t count);
int rtm_h5_write_attr_ints(hid_t object, const char *name, const int *values, size_t count);

/* File access properties for files we create: strong close (H5Fclose closes whatever is
 * still open, so a failure path cannot leak the file) and the 1.8 object format, which
 * allows attributes larger than 64 KiB (the resolved config text). */
hid_t rtm_h5_create_fapl(void);

/* "PATH.partial" into buffer; RTM_ERR_INTERNAL when it does not fit. */
int rtm_io_partial_path(const char *path, char *buffer, size_t size);
/* Creates the directories leading to path (mkdir -p of its parent). */
int rtm_io_make_parent_dir(const char *path);
/* Renames PATH.partial to PATH; on failure removes the partial file. */
int rtm_io_commit_partial(const char *partial, const char *path);

#endif
