/* rtm_io_impl.h - private helpers of the io module: HDF5 call checking, small attribute
 * helpers, the PATH.partial convention and directory creation. Not part of the public API. */
#ifndef RTM_IO_IMPL_H
#define RTM_IO_IMPL_H

#include <stddef.h>

#include <hdf5.h>

#include "rtm_io.h"
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

/* RTM_ERR_INPUT, naming `what` and path, when path exists and is not a regular file (a
 * FIFO, on which an open waits for a writer for ever, a device, a folder); RTM_OK when it
 * is one or does not exist (the opener reports a missing file). Every opener of an input
 * HDF5 file calls it before H5Fopen; rtm_h5_open_read does. */
int rtm_h5_check_input_path(const char *path, const char *what);

/* Opens an existing file read-only. A missing file, a file that is not HDF5 (or whose
 * signature is damaged), a path that is not a regular file (rtm_h5_check_input_path) and a
 * file HDF5 cannot open are RTM_ERR_INPUT errors naming the path and `what` ("model file",
 * "run file", ...). */
int rtm_h5_open_read(const char *path, const char *what, hid_t *file);

/* 1 when every component of an absolute or root-relative path exists, 0 when one does
 * not, negative on an HDF5 failure. */
int rtm_h5_path_exists(hid_t file, const char *path);

/* Attributes on an object: a scalar fixed-length UTF-8 string (NULL writes ""), 1D arrays
 * of doubles and ints, and a scalar int (a count, which h5py then reads as a number, not a
 * 1-element array: range(f.attrs["shot_count"]) works). */
int rtm_h5_write_attr_string(hid_t object, const char *name, const char *value);
int rtm_h5_write_attr_doubles(hid_t object, const char *name, const double *values, size_t count);
int rtm_h5_write_attr_ints(hid_t object, const char *name, const int *values, size_t count);
int rtm_h5_write_attr_int(hid_t object, const char *name, int value);

/* File access properties for files we create: strong close (H5Fclose closes whatever is
 * still open, so a failure path cannot leak the file) and the 1.8 object format, which
 * allows attributes larger than 64 KiB (the resolved config text). */
hid_t rtm_h5_create_fapl(void);

/* Reads attribute `name` of object as `count` doubles (integers convert; a scalar counts as
 * one value, so count 1 reads a scalar and a 1-element array alike). *present = 0, and
 * RTM_OK, when there is no such attribute; one of another size or a non-numeric type is an
 * RTM_ERR_INPUT error naming `context` ("model file PATH"), the attribute and what it should
 * hold (`meaning`: "x, y, z in metres"). */
int rtm_h5_read_attr_doubles(hid_t object, const char *context, const char *name, size_t count,
                             const char *meaning, double *values, int *present);

/* Reads the whole numeric dataset `name` (an absolute path) of file, which must have `rank`
 * dimensions, as memory_type (elements of element_size bytes) into a malloc'd *data; dims
 * receives its extents (data NULL: the extents alone, nothing read). A missing dataset, another
 * rank or a non-numeric type is an RTM_ERR_INPUT error naming `context` ("run file PATH") and the
 * dataset. */
int rtm_h5_read_array(hid_t file, const char *context, const char *name, hid_t memory_type,
                      size_t element_size, int rank, hsize_t *dims, void **data);

/* ---- provenance (provenance.c): what the run file and the report record of their writing */
#define RTM_IO_FORMAT_VERSION 1 /* the layout of run files and reports: docs/design.md "Files" */
typedef struct {
  char created[32]; /* UTC, ISO 8601: 2026-11-25T17:00:00Z */
  char host[256];
} rtm_io_provenance_t;
void rtm_io_provenance(rtm_io_provenance_t *provenance);

/* ---- the run output file (run_file.c), which shot_gathers.c writes into too ---- */
#define FIELD_NAME_MAX 64
/* The dataset of snapshot series `field`, as rtm_output_snapshots_begin makes it in the
 * /snapshots group: "/snapshots/<field>" (path: SNAPSHOT_PATH_MAX bytes). */
#define SNAPSHOT_PATH_MAX (FIELD_NAME_MAX + 16)
void rtm_output_snapshot_path(const char *field, char *path, size_t size);

typedef struct {
  char name[FIELD_NAME_MAX];
  hid_t dataset;
  int count;
  int *steps;    /* -1 until written */
  double *times; /* NAN until written */
  int unfilled;  /* its chunks not filled with NaN first: each must be written to finish */
} snapshot_field_t;

struct rtm_output {
  char *path;
  char *partial;
  hid_t file;
  hid_t snapshots; /* groups, created on first use */
  hid_t traces;
  rtm_io_volume_t volume;
  snapshot_field_t *fields;
  int field_count;
  int shot_count; /* the many-shot layout: 1 + the highest shot written, 0 for none */
  char **volumes; /* the paths rtm_output_write_volume wrote ("/image"), for the sidecar */
  int volume_count;
  int collective; /* rtm_output_expect_collective: datasets made without a NaN fill */
  int whole;      /* rtm_output_expect_whole: snapshot series made without it */
  int no_sidecar; /* rtm_output_no_sidecar: closed without NAME.xmf */
  /* rtm_output_volume_in_parts: the volume made without a fill, and which of its planes
   * were written (n[2] flags) */
  char *parts_name;
  unsigned char *parts_written;
};

/* NAME.xmf beside a completed NAME.h5 with snapshots or volumes (xdmf.c): ParaView and VisIt
 * read the volumes through it with their spacing and origin. Written as NAME.xmf.partial and
 * listed in `set`; for traces alone, none (an earlier run's NAME.xmf is dropped). */
int rtm_output_sidecar(const rtm_output_t *output, rtm_io_outputs_t *set);

/* The planes [volume->z_offset, + volume->nz_local) of `dataset` selected in *file_space,
 * and their dense [nz][ny][nx] shape in *memory_space: of entry `index` of a series
 * [count][nz][ny][nx] (rank 4), or of a single volume [nz][ny][nx] (rank 3). `name` names
 * the dataset in messages. */
int rtm_output_select_planes(hid_t dataset, int rank, int index, const rtm_io_volume_t *volume,
                             const char *name, hid_t *file_space, hid_t *memory_space);

/* A field name fit for a dataset name: 1 to FIELD_NAME_MAX - 1 characters, no '/'. */
int rtm_output_check_field_name(const char *field);
/* Opens the group at the absolute path `name` into *group unless *group is already open;
 * creates it, and the groups leading to it, when the file lacks it. */
int rtm_output_group(rtm_output_t *output, const char *name, hid_t *group);
/* A gather's arguments: a field name other than "receivers", count >= 0, samples >= 1;
 * group_name ("/traces") names it in the message. */
int rtm_output_check_gather(const char *group_name, const char *field, int count, int samples);
/* <group>/<name>, a dataset of `rank` dimensions `dims` stored as file_type, written whole
 * from `values` (memory_type); *dataset is left open for the caller's attributes (close it
 * with rtm_h5_close, on failure too). group_name names the group in messages ("" for the
 * root). */
int rtm_output_write_dataset(rtm_output_t *output, hid_t group, const char *group_name,
                             const char *name, hid_t file_type, hid_t memory_type, int rank,
                             const hsize_t *dims, const void *values, hid_t *dataset);
/* <group>/<field> [count][samples] float32 with attribute dt. */
int rtm_output_write_gather(rtm_output_t *output, hid_t group, const char *group_name,
                            const char *field, const float *traces, int count, int samples,
                            double dt_s);
/* <group>/receivers [count][3] float64, units "m"; when a field before wrote them, only
 * checks that the count agrees. */
int rtm_output_write_receivers(rtm_output_t *output, hid_t group, const char *group_name,
                               const double *position_m, int count);
/* <group>/<name>: positions in metres, float64 of `rank` dims, with attribute units "m". */
int rtm_output_write_metres(rtm_output_t *output, hid_t group, const char *group_name,
                            const char *name, int rank, const hsize_t *dims, const double *values);

/* Creates the directories leading to path (mkdir -p of its parent). */
int rtm_io_make_parent_dir(const char *path);
/* Adds the tEXt chunk "Software: rtm3d" after the IHDR of the PNG at PATH (rewritten in
 * place: a figure drawn aside by PLplot, before its check and rename); rtm_png_written_by_rtm3d
 * finds it. RTM_ERR_IO when PATH is no PNG or cannot be rewritten (the caller says so). */
int rtm_png_mark(const char *path);
/* Renames `from` to `to` only while no file is at `to` (renameat2's RENAME_NOREPLACE, else
 * link and unlink, else a look and a rename): 0, or -1 with errno (EEXIST: a file is there). */
int rtm_io_rename_noreplace(const char *from, const char *to);
/* Renames PATH.partial to PATH, its data on the disk first (rtm_io_sync_file) unless PATH is
 * itself an output set's partial file (the set's commit syncs it); on failure removes the
 * partial file. */
int rtm_io_commit_partial(const char *partial, const char *path);
/* PARTIAL's data on the disk (rtm_io_sync_file), then renamed to PATH only while no file is
 * there (rtm_io_rename_noreplace): a name a run may write but never replaces. RTM_OK; else
 * RTM_ERR_IO with PARTIAL left for the caller to remove: a failed sync or rename is said
 * here, but where PATH appeared meanwhile (EEXIST) *appeared is set and nothing is said (the
 * caller knows what the name is and what to do). */
int rtm_io_commit_new(const char *partial, const char *path, int *appeared);
/* PATH's data on the disk (fdatasync) before a name that promises it (a rename, a journal)
 * is made, so that a node lost after it cannot leave a torn file under that name; a file
 * system without the promise (EINVAL, EROFS, ENOTSUP) passes. RTM_ERR_IO, said, on failure:
 * the write did not reach the disk (EIO, ENOSPC, EDQUOT on a network file system), or PATH
 * is no regular file (a FIFO or a link put there: never opened to wait on). */
int rtm_io_sync_file(const char *path);
/* PATH's dirty pages sent to the disk now, without waiting (Linux's sync_file_range; nothing
 * elsewhere): a large output written in pieces is then mostly there when rtm_io_sync_file
 * waits for it. */
void rtm_io_start_writeback(const char *path);
/* A file of a failed run's (`what`: "this run's unfinished output", ...) removed; where it
 * cannot be (a folder made read-only, a file system gone), an error names it and why, so that
 * no run says it left nothing while it did. No file there is no failure. Returns 1 when the
 * file is left, else 0. */
int rtm_io_remove_own(const char *path, const char *what);
/* ---- the journal of a run's commit (commit_journal.c) ----
 * DIR/NAME.commit, beside the name lock DIR/NAME.lock: what a run's commit does, written
 * once every partial file is complete and before the first rename, removed after the last
 * step; the next holder of the lock finishes the commit of a run killed in between. */
typedef enum {
  RTM_IO_JOURNAL_PUT,
  RTM_IO_JOURNAL_DROP,
  RTM_IO_JOURNAL_ASIDE
} rtm_io_journal_verb_t;
/* PUT: PATH.partial renamed to PATH; DROP: PATH, an earlier run's, removed; ASIDE: PATH, a
 * link to an earlier file kept while the renames run, removed. */
typedef struct {
  rtm_io_journal_verb_t verb;
  const char *path;
} rtm_io_journal_entry_t;
/* DIR/NAME.lock -> DIR/NAME.commit into journal[size]. */
int rtm_io_journal_path(const char *lock_path, char *journal, size_t size);
/* The journal of `entries` [count], every path DIR/NAME<suffix>, written whole (aside,
 * fsynced, renamed) at `journal`: RTM_ERR_IO when it cannot be. */
int rtm_io_journal_write(const char *journal, const rtm_io_journal_entry_t *entries, int count);
void rtm_io_journal_remove(const char *journal);
/* Under the lock at `lock_path`, just taken: a journal there is a killed run's, and its
 * commit is finished (and said, naming `key` and `name`). RTM_ERR_CONFIG, naming what was
 * found and changing nothing, when it cannot be (a partial gone) or the file is not a
 * journal rtm3d wrote. */
int rtm_io_journal_recover(const char *lock_path, const char *key, const char *name);

/* PATH listed in `set` with its PATH.partial already written by this run (the run file,
 * created by rtm_output_create): rtm_io_outputs_add would remove it. */
int rtm_io_outputs_add_written(rtm_io_outputs_t *set, const char *path);

/* ---- shots of a run file (shot_gathers.c): rtm_io_shot_count and rtm_io_read_shot
 * (segy.c, which chooses the format) for an HDF5 run file ---- */
int rtm_h5_shot_count(const char *path, int *count);
/* samples_too 0: rtm_io_read_shot_geometry's part alone */
int rtm_h5_read_shot(const char *path, int shot, const char *field, int samples_too,
                     rtm_io_gather_t *gather);

#endif
