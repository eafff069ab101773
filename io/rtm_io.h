/* rtm_io.h - HDF5 models and run outputs, the JSON run report, PNG slices, datasets and
 * their comparison.
 *
 * io reads and writes arrays and metadata it owns (io -> config only): a volume is
 * described by rtm_io_volume_t, a model by its parameter arrays, the report's memory
 * section by rows; app/ hands them to and from the solver.
 *
 * Layouts (docs/design.md "Files"):
 *   model:  /vp /epsilon /delta /theta /phi  [nz][ny][nx] float32, root attrs spacing[3], origin[3]
 *   output: root attrs version, git_revision, backend, device, config (resolved text);
 *           /snapshots/<field> [nsnap][nz][ny][nx] with attrs steps[nsnap], times[nsnap];
 *           /traces/<field> [nrec][nt] with attr dt; /traces/receivers [nrec][3];
 *           /traces attr source [3] (the shot's position)
 *   many shots (rtm3d model with shots.layout grid or file): root attr shot_count; per
 *           shot k = 0, 1, ...: /shots/<k>/source [3], /shots/<k>/receivers [nrec][3],
 *           /shots/<k>/traces/<field> [nrec][nt] with attr dt; and for migrate /image,
 *           /illumination [nz][ny][nx] (and /shots/<k>/image on request; with
 *           rtm.offset_lags /gathers/offset [ncip][nhy][nhx][nz], /gathers/cip_x_m, cip_y_m)
 * An output file is written as PATH.partial and renamed to PATH only by a successful
 * rtm_output_close() or, with the run's other outputs, rtm_io_outputs_commit(): a failed run
 * never leaves a file that looks finished. */
#ifndef RTM_IO_H
#define RTM_IO_H

#include <stddef.h>
#include <stdio.h>

#include "rtm_config.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- volumes ---- */
/* What a file says of the grid: global interior cells and spacing and origin in metres
 * (x, y, z), and the z-range [z_offset, z_offset + nz_local) this process reads or
 * writes. Arrays of a volume are dense [nz_local][ny][nx] float32, x fastest. */
typedef struct {
  int n[3];
  double spacing_m[3];
  double origin_m[3];
  int z_offset;
  int nz_local;
} rtm_io_volume_t;

/* ---- model files ---- */
/* The parameters of a model file, in the order of this enum: /vp (m/s), /epsilon, /delta,
 * /theta and /phi (degrees, the symmetry axis's tilt from vertical and azimuth). */
typedef enum {
  RTM_IO_VP = 0,
  RTM_IO_EPSILON,
  RTM_IO_DELTA,
  RTM_IO_THETA,
  RTM_IO_PHI,
  RTM_IO_PARAMETERS
} rtm_io_parameter_t;

/* 1 when the equation needs the parameter (iso: vp; vti: + epsilon, delta; tti: all). */
int rtm_io_equation_needs(rtm_equation_t equation, rtm_io_parameter_t parameter);
/* Reads the parameters the equation needs, each a malloc'd dense array of the volume's
 * z-range; the others are left NULL. Missing datasets, shapes that differ from the volume,
 * a spacing that differs from it, non-finite values: errors naming file and dataset
 * (RTM_ERR_INPUT), and then every array is NULL. */
int rtm_io_read_model(const char *path, const rtm_io_volume_t *volume, rtm_equation_t equation,
                      float *values[RTM_IO_PARAMETERS]);
/* Writes every non-NULL parameter of a whole volume (z_offset 0, nz_local = n[2]), aside,
 * then renamed to `path`, replacing a file there. */
int rtm_io_write_model(const char *path, const rtm_io_volume_t *volume,
                       const float *const values[RTM_IO_PARAMETERS]);
/* The same, replacing nothing: a file that appeared at `path` while it was written (the
 * caller saw none) stays, the model written is removed, RTM_ERR_IO naming it. */
int rtm_io_write_model_new(const char *path, const rtm_io_volume_t *volume,
                           const float *const values[RTM_IO_PARAMETERS]);
/* Frees the arrays and sets them to NULL. */
void rtm_io_model_release(float *values[RTM_IO_PARAMETERS]);

/* ---- run output ---- */
typedef struct {
  const char *version;
  const char *git_revision;
  const char *backend;
  const char *device;
  const char *config_text;
  const char *command_line; /* how the run was started (may be NULL) */
} rtm_run_info_t;

typedef struct rtm_output rtm_output_t;

int rtm_output_create(const char *path, const rtm_io_volume_t *volume, const rtm_run_info_t *info,
                      rtm_output_t **output);
/* Declares /snapshots/<field> with room for `count` snapshots. */
int rtm_output_snapshots_begin(rtm_output_t *output, const char *field, int count);
/* The planes [z_offset, z_offset + nz) of the volume that the following snapshot and volume
 * writes carry (dense [nz][ny][nx] arrays): at creation the volume's own z-range; a writer
 * that writes other ranks' slabs for them (rtm_mpi_write_slabs) sets each in turn. */
int rtm_output_set_planes(rtm_output_t *output, int z_offset, int nz);
/* Writes snapshot `index` (dense [nz][ny][nx]) taken at `step`, time `time_s`. */
int rtm_output_write_snapshot(rtm_output_t *output, const char *field, int index, int step,
                              double time_s, const float *dense);
/* Writes /traces/<field> [count][samples] with dt, and /traces/receivers [count][3]. */
int rtm_output_write_traces(rtm_output_t *output, const char *field, const float *traces, int count,
                            int samples, double dt_s, const double *position_m);
/* /traces/<field> written while the run goes on: begun with its shape, dt and receivers
 * (chunks of `window` samples of every receiver), then filled window by window with
 * [count][samples] blocks at sample `first`. The same dataset a whole write gives. */
int rtm_output_traces_begin(rtm_output_t *output, const char *field, int count, int samples,
                            int window, double dt_s, const double *position_m);
int rtm_output_traces_window(rtm_output_t *output, const char *field, const float *values,
                             int count, int first, int samples);
/* The single-shot layout's source position: attribute source [3] of /traces. */
int rtm_output_write_source(rtm_output_t *output, const double source_m[3]);
/* Shot `shot` of a many-shot file: /shots/<shot>/source, /shots/<shot>/receivers (written
 * with the first field of the shot) and /shots/<shot>/traces/<field> with dt; the root
 * attribute shot_count follows the highest shot written. count 0 (a shot without
 * receivers) writes its source alone. */
int rtm_output_write_shot(rtm_output_t *output, int shot, const double source_m[3],
                          const char *field, const float *traces, int count, int samples,
                          double dt_s, const double *receivers_m);
/* A volume [nz][ny][nx] at `name` (an absolute path such as "/image" or "/shots/3/image";
 * groups created as needed), this rank's planes at its z-offset. */
int rtm_output_write_volume(rtm_output_t *output, const char *name, const float *dense);
/* A new volume at `name` that its one writer (rtm_output_expect_whole, not collective)
 * writes in parts: rtm_output_set_planes, then rtm_output_write_volume, for each (a part
 * written while the next is made). Made without a NaN fill, which HDF5 would write over the
 * whole volume before its first part (a second write of it): a write that would write a
 * plane again is refused, and rtm_output_finish refuses the file unless every plane was
 * written. One such volume a file. */
int rtm_output_volume_in_parts(rtm_output_t *output, const char *name);
/* A migration's subsurface-offset gathers: /gathers/offset [cips][2 lags + 1][2 lags + 1][nz]
 * (float32; cip, hy, hx, z with z fastest) with their lags, lag spacing (x, y), depth axis
 * and CIP steps as attributes, and /gathers/cip_x_m, /gathers/cip_y_m [cips], the CIP lines'
 * positions. `values` is the whole array (rank 0 writes it; io/image_gathers.c). */
typedef struct {
  int cips, lags, nz;
  const double *cip_x_m, *cip_y_m;
  double lag_spacing_m[2];
  double z_spacing_m, z_origin_m;
  int cip_step[2];
} rtm_io_offset_gathers_t;
int rtm_output_write_offset_gathers(rtm_output_t *output, const rtm_io_offset_gathers_t *gathers,
                                    const float *values);
/* The angle gathers made from them: /gathers/angle [cips][angles][nz] float32 with the
 * attributes angle_max_deg, z_spacing_m, z_origin_m, illumination (1: divided by it as the
 * image is) and axes ("cip, angle, z"); rank 0. */
typedef struct {
  int cips, angles, nz;
  double angle_max_deg, z_spacing_m, z_origin_m;
  int illumination;
} rtm_io_angle_gathers_t;
int rtm_output_write_angle_gathers(rtm_output_t *output, const rtm_io_angle_gathers_t *gathers,
                                   const float *values);
/* What a figure of a migration's gathers needs from its run file, for `dataset`
 * "/gathers/offset" (panels at hy = 0: columns the half-offsets hx, 2 lags + 1 of them, from
 * -lags lag spacings) or "/gathers/angle" (columns the angles, 0 to angle_max_deg): the
 * CIPs, depths and columns, the axes, and the CIPs' positions (cip_x_m, cip_y_m: malloc'd
 * [cips], freed by rtm_io_gathers_release). A file without them, or whose attributes do not
 * match the dataset's shape, is an RTM_ERR_INPUT error naming the file. */
typedef struct {
  int angle; /* 1: /gathers/angle */
  int cips, nz, columns;
  double column_first, column_step; /* metres (hx) or degrees */
  double z_spacing_m, z_origin_m;
  int lags; /* offset gathers */
  double lag_spacing_m[2];
  double *cip_x_m, *cip_y_m;
} rtm_io_gathers_info_t;
int rtm_io_read_gathers_info(const char *path, const char *dataset, rtm_io_gathers_info_t *info);
void rtm_io_gathers_release(rtm_io_gathers_info_t *info);
/* CIP `cip`'s panel as a row-major image of nz rows (depth) and info->columns columns,
 * malloc'd into *panel. */
int rtm_io_read_gathers_panel(const char *path, const rtm_io_gathers_info_t *info, int cip,
                              float **panel);
/* A root attribute `name` holding one integer (a run state's counters). */
int rtm_output_write_count(rtm_output_t *output, const char *name, int value);
/* A root attribute `name` holding the text `text` (a run state's record of its inputs). */
int rtm_output_write_text(rtm_output_t *output, const char *name, const char *text);
/* A float32 dataset `name` at the file's root ("/gather_sums"), of `rank` (1 to 4)
 * dimensions `dims`, written whole from `values`: a run state's arrays that are not
 * volumes of the grid (rank 0). */
int rtm_output_write_floats(rtm_output_t *output, const char *name, int rank, const size_t *dims,
                            const float *values);

/* ---- the ranks' slabs written at once (parallel HDF5) ----
 * With a parallel HDF5 (RTM3D_HAVE_PARALLEL_HDF5) every rank writes its own planes of a
 * volume or snapshot into the run's file in one collective write; rank 0's output lets go
 * of the file for it and takes it back after. Without, rtm_io_parallel() is 0 and rank 0
 * writes the slabs in rank order (rtm_mpi_write_slabs). The datasets and attributes are the
 * same either way. */
int rtm_io_parallel(void);
/* The volumes and snapshots of `output` will be written collectively: its datasets are made
 * without writing their NaN fill. (Parallel HDF5 allocates a dataset's whole storage when
 * the ranks first open it for writing, and would write the fill of every snapshot of a
 * series then, all but the first to be overwritten; a completed run writes every entry it
 * declared, and a failed one leaves no complete file: its PATH.partial is removed, or left
 * where a rank's failure aborted the job.) Rank 0, before any snapshot or volume. */
void rtm_output_expect_collective(rtm_output_t *output);
/* One writer writes each snapshot of `output` whole (one rank holds the volume): its series
 * are made without their NaN fill (HDF5 filling a chunk before its first write halves the
 * rate it reaches the disk), and a finish with a snapshot never written is refused, so
 * that none reads back as the disk's bytes. Before any snapshot series is begun. */
void rtm_output_expect_whole(rtm_output_t *output);
/* `output` is closed without an XDMF sidecar (a file only rtm3d reads: migrate's resume
 * state). */
void rtm_output_no_sidecar(rtm_output_t *output);
/* The volume `name` (/image) listed in the sidecar now, ahead of its write: the sidecar lists
 * volumes in the order they were first named, so a caller that writes them in another order
 * (migrate: the illumination while the image is filtered) keeps its own. */
int rtm_output_name_volume(rtm_output_t *output, const char *name);
/* Rank 0, before the collective write: the volume `name` exists (created as
 * rtm_output_write_volume does, NaN where no rank writes), or snapshot series `field`'s
 * entry `index` is declared; then every handle of the file closed (flushed). */
int rtm_output_release_for_volume(rtm_output_t *output, const char *name);
int rtm_output_release_for_snapshot(rtm_output_t *output, const char *field, int index);
/* Rank 0, after it: the file open again; a snapshot's step and time recorded when `field`
 * is not NULL. */
int rtm_output_reacquire(rtm_output_t *output, const char *field, int index, int step,
                         double time_s);
/* Collective over the ranks of `communicator` (the address of an MPI_Comm, see
 * rtm_mpi_slab_communicator): this rank's planes [volume->z_offset, + volume->nz_local)
 * of the volume `name` ([nz][ny][nx] at that path), or, when index >= 0, of entry `index` of
 * the snapshot series `name` (/snapshots/<name>), dense [nz][ny][nx], written into PATH.partial,
 * the file of the output created at `path` (rank 0's, released). RTM_ERR_UNSUPPORTED without
 * parallel HDF5. */
int rtm_io_write_planes_collective(const char *path, const char *name, int index,
                                   const rtm_io_volume_t *volume, const float *dense,
                                   const void *communicator);
/* success != 0: flush, close, rename PATH.partial -> PATH (and its XDMF sidecar, unless
 * rtm_output_no_sidecar), at once. Else close and remove. */
int rtm_output_close(rtm_output_t *output, int success);

/* ---- a run's outputs, renamed into place together ----
 * A command writes each of its files (the run file, its XDMF sidecar, the report, figures,
 * SEG-Y) as PATH.partial and lists it here; at its end it renames them all, or on failure
 * removes them all: no run leaves some of its outputs complete-looking without the others. */
typedef struct rtm_io_outputs rtm_io_outputs_t;
/* "PATH.partial" into buffer; RTM_ERR_INTERNAL when it does not fit. */
int rtm_io_partial_path(const char *path, char *buffer, size_t size);
/* What tells a file from one put at its name since: "size=S\tmtime=T\tctime=T\tinode=I" of
 * the file at `path` into text (a rewrite in place changes the ctime, which no user sets
 * back; a rename over it the inode); 0 when the file cannot be read. Compared by a run that
 * reads an input again (migrate's gathers, export's run file) and kept in a resume state. */
int rtm_io_file_stamp(const char *path, char *text, size_t size);
/* PATH.partial's data as this process's node holds it on the disk (fdatasync), before rank 0
 * commits PATH: under a parallel HDF5 each rank's planes of the file go through its own
 * node's page cache, which rank 0's sync at the commit does not reach. RTM_ERR_IO, said, when
 * the data did not reach the disk. */
int rtm_io_sync_partial(const char *path);
/* Where an output that a user names outside a run (plot's -o, export's --segy, bench's and
 * tune's --csv and --json) is written: PATH itself, or, where PATH is a symbolic link (or a
 * chain of them) to a regular file, that file, replaced whole while the link stays. A link
 * to nothing is refused (RTM_ERR_USAGE, said, naming `what`); a link to anything else (a
 * device, a FIFO, /dev/stdout) is PATH, which the writer refuses or writes in place. */
int rtm_io_output_target(const char *path, const char *what, char *target, size_t size);
/* Creates the directories leading to path (mkdir -p of its parent); `*made` := how many of
 * the parent's last folders this call created (0 when it created none), for their owner to
 * remove again when its output fails: rtm_io_remove_made_dirs. */
int rtm_io_make_parent_dir_counted(const char *path, int *made);
/* Removes the `made` last folders of path's parent, deepest first, each only where it is
 * empty (rmdir); stops at the first that stays. */
void rtm_io_remove_made_dirs(const char *path, int made);
/* The extension of PATH's file name from its last dot (".png"), "" when it has none: a dot
 * in a folder's name is none, nor one that starts the file's name (.hidden). */
const char *rtm_io_extension(const char *path);
/* A file of this process's beside PATH to write it aside, PATH.partial.XXXXXX.EXT (mkstemps:
 * never a name another process writes; PATH's extension last), once PATH is found absent or a
 * regular file (a device, a folder or a FIFO given as an output is refused, RTM_ERR_USAGE).
 * The caller writes `aside`, then renames it over PATH or removes it: a failure never touches
 * PATH. For outputs outside a run's name lock (plot, export). */
int rtm_io_aside_create(const char *path, char *aside, size_t size);
/* Whether a file can be written aside PATH (made and removed at once; beside the file a link
 * at PATH leads to, rtm_io_output_target, whose folder must then take it): a command whose
 * output comes after minutes of work looks first. `what` names the option in the error
 * ("--csv"). */
int rtm_io_aside_probe(const char *path, const char *what);
/* A small file written whole or not at all: write(out, data) into a file aside PATH, checked,
 * on the disk, then renamed over PATH (whatever PATH's name); on any failure PATH is left as
 * it was and the aside file removed, the error naming `what` and PATH. PATH the file of stdout
 * or stderr (/dev/stdout sent to a file): written through that stream, after what it holds;
 * a link to a regular file: that file replaced (rtm_io_output_target); a stream (a FIFO, a
 * terminal) or a link to one: written in place. For outputs outside a run's output set
 * (bench's --csv and --json, tune's --csv). */
int rtm_io_write_text_aside(const char *path, const char *what,
                            void (*write)(FILE *out, const void *data), const void *data);
int rtm_io_outputs_create(rtm_io_outputs_t **set);
/* PATH is this run's output, written as `partial` (PATH.partial, into the buffer). */
int rtm_io_outputs_add(rtm_io_outputs_t *set, const char *path, char *partial, size_t size);
/* The run's claim found none of its names taken (a run without --force): at the commit a
 * file at one of them (an output's or a drop's) appeared while the run ran, and is not the
 * run's to replace: the commit stops before any rename (RTM_ERR_IO, naming it), and keeps
 * the run's complete partial files, the message saying how to put them in place. The
 * renames replace nothing either (RENAME_NOREPLACE): a file put there after the look stops
 * the commit alike, the renames done undone. */
void rtm_io_outputs_replace_none(rtm_io_outputs_t *set);
/* PATH, an earlier run's file that this run replaces with nothing (an overwrite whose
 * outputs lack it), is removed at the commit. */
int rtm_io_outputs_drop(rtm_io_outputs_t *set, const char *path);
/* PATH, a file of this run's own that its outputs make obsolete (a migration's resume
 * state), removed once every rename is made and before the journal goes, so that a kill
 * between the two leaves the journal whose recovery removes it too. */
int rtm_io_outputs_retire(rtm_io_outputs_t *set, const char *path);
/* Renames every PATH.partial to PATH. When one rename fails, the ones done are removed with
 * the partials left: all or none (RTM_ERR_IO). `lock`: the run's name lock (NULL: none);
 * held, the commit is journaled (DIR/NAME.commit) so that a run killed half-way through its
 * renames has them finished by the next run of the name (rtm_io_lock_name). */
typedef struct rtm_io_name_lock rtm_io_name_lock_t;
int rtm_io_outputs_commit(rtm_io_outputs_t *set, const rtm_io_name_lock_t *lock);
/* Removes every PATH.partial listed (a failed run's); the set can be filled again. */
void rtm_io_outputs_discard(rtm_io_outputs_t *set);
/* Discards what was not committed, then frees the set. */
void rtm_io_outputs_free(rtm_io_outputs_t *set);
/* Closes the run file (flushed) as PATH.partial and lists it, and its XDMF sidecar, in
 * `set`, to be renamed with the run's other outputs. On failure the partial is removed. The
 * output is freed either way. */
int rtm_output_finish(rtm_output_t *output, rtm_io_outputs_t *set);

/* ---- the lock on an output name ----
 * DIR/NAME.lock, held (flock) by the run that writes DIR/NAME.* from before it looks at
 * them until it has renamed them: a second run given the same name is refused (RTM_ERR_CONFIG,
 * naming the holder and `key`, the setting that names the file) and touches nothing of the
 * first's. Removed by rtm_io_unlock_name. */
struct rtm_io_name_lock {
  int fd;
  int held; /* flock took it (a file system without locks: 0, the run unguarded) */
  int taken_over; /* held, and its file was there before: a killed run's lock */
  int made_dirs;  /* the folders leading to it that taking it made: removed with it if empty */
  char path[4096 + 16];
};
/* Once held, the lock's taker finishes the commit of a run of the name killed in the middle
 * of it (its journal, DIR/NAME.commit): a failure there (RTM_ERR_CONFIG, said) refuses the
 * name. */
int rtm_io_lock_name(const char *dir, const char *name, const char *key, rtm_io_name_lock_t *lock);
/* Removes, under the lock held on DIR/NAME, the temporary files a killed run of the name
 * left: what rtm_io_aside_create makes beside DIR/NAME<tail>, DIR/NAME<tail>.partial.XXXXXX<EXT>
 * (EXT the tail's extension), for each of `tails` [count] (".json.partial": a report written
 * aside of its partial; ".json": bench's report), regular files only, each said. Only tails
 * that no process writes aside without the name's lock. The files at `keep` [kept], the
 * run's inputs, are never removed (probe U, U6: a deck at such a name was). */
void rtm_io_remove_run_temps(const char *dir, const char *name, const char *const *tails, int count,
                             const char *const *keep, int kept);
/* Whether DIR/NAME.lock still names the lock file the run holds: not, when output.dir was
 * moved, removed or replaced (by a link to another folder) during the run. */
int rtm_io_lock_in_place(const rtm_io_name_lock_t *lock);
/* Removes (where it is still in place) and releases the lock, and the folders that taking it
 * made where they are empty (a failed run's: a run that ends well has its outputs there);
 * nothing when it was not taken (fd < 0). */
void rtm_io_unlock_name(rtm_io_name_lock_t *lock);

/* ---- JSON run report ---- */
typedef struct {
  const char *name;
  double seconds;
} rtm_timing_t;

/* One allocation of the run, as the memory ledger recorded it. */
typedef struct {
  const char *label;
  const char *strategy;
  size_t bytes;
  size_t reserved_bytes;
  int compressed; /* the driver granted generic compression */
} rtm_report_allocation_t;

/* One number per shot of a many-shot run under a name ("propagate_s"): rtm_report_t's
 * shot_values. */
typedef struct {
  const char *name;
  const double *values; /* [shot_count] */
} rtm_report_shot_values_t;

typedef struct {
  const char *command; /* "model", "bench", ... */
  const rtm_run_info_t *info;
  const rtm_io_volume_t *volume;
  int steps;
  double dt_s;
  const char *model_precision; /* "fp32" | "fp16": how the model coefficients were stored */
  /* migrate: rtm.reconstruction as run (auto resolved), else NULL; its store with the image
   * as the preflight estimated them and as they took (measured where: "device" | "host") */
  const char *reconstruction;
  size_t reconstruction_estimate_bytes, reconstruction_measured_bytes;
  const char *reconstruction_measured_in;
  /* with snapshots: how they are stored ("fp32", "fp16", "zfp at 6 bits a value") and the
   * relative L2 round trip of one (negative: not measured, as for fp32) */
  const char *snapshot_format;
  double snapshot_round_trip;
  const rtm_timing_t *timings;
  int timing_count;
  double mcells_per_s;
  /* A run of many shots: shot_count > 0 writes "shots": {"count": shot_count, <name>: [one
   * value per shot], ...}; 0 (a single-shot run, bench) leaves the key out. */
  int shot_count;
  const rtm_report_shot_values_t *shot_values;
  int shot_value_count;
  const rtm_report_allocation_t *allocations;
  int allocation_count;
  size_t allocation_total_bytes;
  const char *output_path;
  /* Under MPI (rank_count > 1): one line per rank, `rank_line_size` chars each, written as
   * "ranks": [...] (the host and the device of each). */
  const char *rank_lines;
  size_t rank_line_size;
  int rank_count;
  /* How the ranks' slabs reached the file, "slab_writes" (NULL: left out, one rank). */
  const char *slab_writes;
  /* bench under MPI (rank_count > 1, command "bench"): against the one-rank run of the deck,
   * and the share of the exchange the overlap hides; written as "mpi": {...} */
  double parallel_efficiency, exchange_hidden;
  /* 1: the report is put at its path only if no file is there (a report written straight to
   * its name, not within a run's output set, without --force: bench under MPI) */
  int replace_none;
} rtm_report_t;

int rtm_report_write_json(const char *path, const rtm_report_t *report);
/* Whether the file at `path` starts as a report rtm3d writes (its first key format_version,
 * its command_line near the top). */
int rtm_report_written_by_rtm3d(const char *path);

/* ---- PNG ---- */
/* Writes a width x height float image (row-major, row 0 at the top) with a symmetric
 * red-white-blue colormap clipped at the given percentile of |value| (e.g. 99), and the
 * title as a PNG tEXt "Title" chunk. */
int rtm_png_write(const char *path, const float *values, int width, int height,
                  double clip_percentile, const char *title);
/* 1 when PATH is a PNG rtm3d wrote: its tEXt chunk "Software" says "rtm3d" (rtm_png_write
 * and every figure put it in); 0 otherwise (another's PNG, not a PNG, no file). */
int rtm_png_written_by_rtm3d(const char *path);
/* The clip level rtm_png_write uses: the clip_percentile (0 < p <= 100) of |value| over
 * the finite values; 1 when they are all zero or none is finite. */
int rtm_png_clip_value(const float *values, size_t count, double clip_percentile, double *clip);
/* The k-th smallest of count values (k < count), in linear time on average; the values are
 * reordered (afterwards values[k] is it, the smaller before, the larger after). */
float rtm_select_kth(float *values, size_t count, size_t k);
/* Plane `plane` of a [nz][ny][nx] volume (dims = {nz, ny, nx}) across `axis` ('x', 'y' or
 * 'z') as a row-major image for rtm_png_write: z: rows y, columns x; y: rows z, columns x;
 * x: rows z, columns y. `image` holds the plane's cells. */
void rtm_volume_slice(const float *volume, const size_t dims[3], char axis, size_t plane,
                      float *image, int *width, int *height);

/* ---- figures (figure.c; PLplot at configure time, RTM3D_ENABLE_PLPLOT) ---- */
/* One panel: an image of rows x columns values (row-major, row 0 at y_first), or with
 * `wiggle` one line a column (traces); coordinates of column and row centres in the axes'
 * units; `same_units`: both axes are lengths, drawn at the data's true aspect; `y_down`:
 * y grows downward (depth, time). */
typedef struct {
  const float *values;
  int columns, rows;
  double x_first, x_step, y_first, y_step;
  const char *x_label, *y_label, *title;
  int same_units, y_down, wiggle;
} rtm_figure_panel_t;
/* The figure: colours over [lo, hi] (values beyond are clipped), blue-white-red when
 * `diverging`, else a dark-to-yellow ramp; the colour bar's label (with units); the page in
 * pixels (PNG; SVG and PDF scale it). */
typedef struct {
  int diverging;
  double lo, hi;
  const char *bar_label;
  const char *page_title; /* above several panels (each has its own title); may be NULL */
  int width, height;
  /* ".png", ".svg" or ".pdf" for a path whose own extension is none of them (a run's
   * OUTPUT_image_x.png.partial); NULL: the path's */
  const char *format;
} rtm_figure_style_t;
/* A line of a line plot: points (x, y), its name in the legend, its colour (0-255 RGB);
 * dashed for a reference (the ideal). */
typedef struct {
  const char *name;
  int count;
  const double *x, *y;
  int rgb[3];
  int dashed;
} rtm_figure_series_t;
/* Lines over [x_min, x_max] x [y_min, y_max] with axes, a legend and a title (.png, .svg,
 * .pdf): run/scaling.sh's efficiency against ranks. */
int rtm_figure_lines(const char *path, const rtm_figure_series_t *series, int count,
                     const double range[4], const char *x_label, const char *y_label,
                     const char *title, int width, int height);
/* 1 when this build draws figures (PLplot with its cairo drivers). */
int rtm_figure_available(void);
/* Whether PLplot's temporary folder (TMPDIR, else /tmp) takes the table of drivers it writes
 * there at every figure: RTM_ERR_IO, said naming `figures` (those to come) and the folder,
 * when it does not; RTM_OK in a build without PLplot. A run that draws figures at its end
 * looks before its first step. */
int rtm_figure_check_temporary(const char *figures);
/* A figure's page when none is asked for (rtm3d plot, migrate's planes), in pixels. */
enum { RTM_FIGURE_WIDTH = 1000, RTM_FIGURE_HEIGHT = 750 };
/* The panels side by side and one colour bar into `path` (.png, .svg or .pdf). */
int rtm_figure_write(const char *path, const rtm_figure_panel_t *panels, int count,
                     const rtm_figure_style_t *style);

/* ---- datasets for plot and validate ---- */
typedef struct {
  int rank;
  size_t dims[4];
  float *data; /* whole dataset, row-major, float32 */
} rtm_dataset_t;

int rtm_io_read_dataset(const char *path, const char *name, rtm_dataset_t *dataset);
/* Rank and dimensions (unused ones 1) of a dataset, without reading it. On failure *rank is
 * -1 when the file itself could not be opened (the error said so), else 0. */
int rtm_io_dataset_shape(const char *path, const char *name, int *rank, size_t dims[4]);
/* Whether `path` holds an object at `name`, said of the file only when it does not open. */
int rtm_io_dataset_exists(const char *path, const char *name, int *exists);
/* Whether `path` holds a dataset of numbers (float or integer) at `name`: not a group, nor
 * strings; said of the file only when it does not open. */
int rtm_io_numeric_dataset_exists(const char *path, const char *name, int *exists);
/* Reads dataset[index] along the first axis (rank - 1 dimensions), so that one snapshot
 * of a long series is read alone. */
int rtm_io_read_dataset_entry(const char *path, const char *name, size_t index,
                              rtm_dataset_t *dataset);
/* Reads entries [first, first + count) along the first axis, keeping it: a rank's planes of
 * a volume [nz][ny][nx] (a z-slab's share of a saved image). */
int rtm_io_read_dataset_rows(const char *path, const char *name, size_t first, size_t count,
                             rtm_dataset_t *dataset);
/* Reads values [first, first + count) along the last axis of every entry, keeping every
 * axis: a rank's depths of an array whose depth is last (the gathers' [ncip][nh][nh][nz]). */
int rtm_io_read_dataset_depths(const char *path, const char *name, size_t first, size_t count,
                               rtm_dataset_t *dataset);
/* Every value of `dataset` finite (the rows read from `first_row` of dataset `name` of
 * `path`, as rtm_io_read_dataset_rows gives them), or RTM_ERR_INPUT naming the file, the
 * dataset and the first that is not by its index ((z, y, x) of a volume), with the count: a
 * saved sum, such as migrate's resume state, refused rather than carried into a result. */
int rtm_io_check_finite(const char *path, const char *name, const rtm_dataset_t *dataset,
                        size_t first_row);
/* How many of values[count] are NaN or Inf, or when limit > 0 beyond +-limit; *first: the
 * index of the first of them (count when none). */
size_t rtm_io_find_bad_values(const float *values, size_t count, double limit, size_t *first);
void rtm_dataset_release(rtm_dataset_t *dataset);
/* What a figure needs to put units on a dataset: the file's root attributes spacing and
 * origin (metres; has_grid 0 when absent), the dataset's attribute dt (seconds, gathers) and,
 * of a snapshot series, entry `index` of its attribute times (seconds). */
/* How far from 0 an origin may lie, in spacings (the decks' bound: points would collapse
 * in float beyond it). */
#define RTM_IO_ORIGIN_CELLS 536870912.0
typedef struct {
  int has_grid, has_origin, has_dt, has_time; /* has_origin: of a file with a grid */
  double spacing_m[3], origin_m[3], dt_s, time_s;
} rtm_io_axes_t;
int rtm_io_read_axes(const char *path, const char *name, long index, rtm_io_axes_t *axes);
/* The numeric attributes (integer or float, as doubles) of dataset `name`: *attributes
 * [*count] (malloc'd; rtm_io_attributes_release). Text attributes are left out. */
typedef struct {
  char name[64];
  size_t count;
  double *values;
} rtm_io_attribute_t;
int rtm_io_read_numeric_attributes(const char *path, const char *name,
                                   rtm_io_attribute_t **attributes, int *count);
void rtm_io_attributes_release(rtm_io_attribute_t *attributes, int count);
/* Where the receivers of a gather [nrec][nt] sit, when they lie on a line along x or y (the
 * other two coordinates the same for all) evenly spaced: *axis 'x' or 'y', the first one's
 * coordinate and the spacing in metres. The positions are /traces/receivers beside
 * /traces/<field>, or /shots/<k>/receivers for /shots/<k>/traces/<field>; *axis 0 when they
 * are absent, of another count, or not on such a line (a plane of receivers). */
int rtm_io_read_receiver_line(const char *path, const char *gather, size_t nrec, char *axis,
                              double *first_m, double *step_m);
/* The shot of a gather: attribute source [3] of its group (/traces of one shot), or
 * /shots/<k>/source for /shots/<k>/traces/<field>; x, y, z in metres, *found 0 when absent;
 * RTM_ERR_INPUT, said, when it is not 3 finite values. */
int rtm_io_read_gather_source(const char *path, const char *gather, double source_m[3], int *found);
/* Names of the numeric datasets under /snapshots, under /traces (not receivers), under
 * /shots/<k>/traces of a many-shot file (shot by shot), under /gathers (a migration's) and at
 * the root (a model file's /vp, ...), in that order; malloc'd array of malloc'd strings. */
int rtm_io_list_datasets(const char *path, char ***names, int *count);

/* ---- what a figure shows (figure_data.c, scaling_table.c), for plot ---- */
/* An image of width x height values (row-major, row 0 at the top, malloc'd), and for a
 * slice of a volume the plane it shows: axis ('z', 'y' or 'x') = plane. */
typedef struct {
  float *values;
  int width, height;
  char axis;
  long plane;
} rtm_figure_image_t;
/* Dataset `name` of `path`, a volume [nz][ny][nx] (index -1) or entry `index` of a series
 * [nsnap][nz][ny][nx], read once; images[k] its plane images[k].plane across images[k].axis
 * (rtm_volume_slice), for k < count. volume: {nz, ny, nx}; the planes lie in the volume. */
int rtm_io_read_slices(const char *path, const char *name, long index, const size_t volume[3],
                       int count, rtm_figure_image_t *images);
/* A gather [nrec][nt] as an image of a column a receiver, time down the rows. */
int rtm_io_read_gather_image(const char *path, const char *name, rtm_figure_image_t *image);
/* A gain on such a gather image: "t2" multiplies sample k by (k dt)^2, "agc" divides it by
 * the RMS of its trace over a window of 0.25 s (25 samples without the dataset's dt) around
 * it, "none" leaves it. */
void rtm_gather_gain(rtm_figure_image_t *gather, const rtm_io_axes_t *axes, const char *gain);
/* A figure's colours for values[count]: for a signed field (or any value negative)
 * diverging over +-the clip_percentile of |value| (rtm_png_clip_value); for values of one
 * sign (a model) from their (100 - PCT) to their PCT percentile. */
int rtm_figure_colour_range(const float *values, size_t count, double clip_percentile,
                            int signed_field, rtm_figure_style_t *style);
/* The colour bar's label with its units, from the dataset's last name; rank 2: a gather. */
const char *rtm_figure_bar_label(const char *dataset, int rank);
/* Where a slice lies: "x = 250 m (index 25)" with the file's grid, "x index 25" without. */
void rtm_figure_plane_text(const rtm_io_axes_t *axes, char axis, long plane, char *text,
                           size_t size);
/* The plane of a volume nearest `metres` along axis ('x', 'y' or 'z'; the file's grid, which
 * axes must have): *plane, and *exact 1 when it lies on it (within a thousandth of a cell).
 * Returns 1, or 0 when no plane of the `extent` along the axis is within half a cell. */
int rtm_figure_plane_at(const rtm_io_axes_t *axes, char axis, double metres, size_t extent,
                        long *plane, int *exact);
/* 1 for a model's parameter (the dataset's last name vp, vs, epsilon, delta, theta or phi):
 * its colours span its range, min to max, so that no value is clipped (a 3500 m/s diffractor
 * in a 2600 m/s layer is one cell in ten thousand: the 99th percentile would hide it). */
int rtm_figure_is_model(const char *dataset);
/* Colours over the finite values' range, min to max, in the dark-to-yellow ramp. */
void rtm_figure_value_range(const float *values, size_t count, rtm_figure_style_t *style);
/* A slice (rtm_io_read_slices) as a panel with axes in metres where the file has its grid,
 * in cells otherwise, depth downward in vertical sections; the caller gives the title. */
void rtm_figure_slice_panel(const rtm_io_axes_t *axes, const rtm_figure_image_t *slice,
                            rtm_figure_panel_t *panel);
/* run/scaling.sh's CSV (columns mode, ranks and efficiency at least, run optional): a line
 * a run (or a mode), each its ranks and efficiencies in the file's order; strong: the
 * line's mode is strong scaling (else weak); x_max, y_max: the axes' reach. */
enum { RTM_SCALING_LINES = 8, RTM_SCALING_ROWS = 256 };
typedef struct {
  char names[RTM_SCALING_LINES][32];
  double x[RTM_SCALING_LINES][RTM_SCALING_ROWS], y[RTM_SCALING_LINES][RTM_SCALING_ROWS];
  int counts[RTM_SCALING_LINES], lines;
  int strong[RTM_SCALING_LINES];
  double x_max, y_max;
} rtm_scaling_t;
/* Reads the CSV, open in `file` (rtm_text_open) and named `path`, into *table (zeroed by the
 * caller); RTM_ERR_INPUT naming path:line. */
int rtm_io_read_scaling(FILE *file, const char *path, rtm_scaling_t *table);

/* ---- shot gathers, for migrate (rtm_io_shot_count and rtm_io_read_shot in segy.c, which
 * chooses the format; a run file's layouts in shot_gathers.c) ---- */
/* One shot's recorded field as a file holds it. */
typedef struct {
  double source_m[3];
  int count, samples; /* traces [count][samples] */
  double dt_s;
  double *receivers_m; /* [count][3] */
  float *traces;
} rtm_io_gather_t;
/* How many shots a run file holds: shot_count of a many-shot file, 1 for the single-shot
 * layout (/traces/<field> with its source attribute); a file with neither is an input error
 * naming it. A SEG-Y file (rtm_segy_path) is read as one (rtm_segy_shot_count). */
int rtm_io_shot_count(const char *path, int *count);
/* The shots of an HDF5 file as rtm_io_shot_count counts them, 0 for a file of neither
 * layout (a migration's image, a model file); a damaged count is an input error, said. */
int rtm_io_run_shots(const char *path, int *count);
/* Shot `shot`'s gather of `field` ("p"): /shots/<shot>/..., or /traces/... for shot 0 of a
 * single-shot file. A missing shot or field, or shapes that disagree, are input errors
 * naming the file and the dataset. A SEG-Y file holds one field, whatever `field` says. A
 * sample that is NaN, Inf or beyond RTM_IO_SAMPLE_LIMIT is an input error naming the file,
 * the shot, the receiver and the sample. */
int rtm_io_read_shot(const char *path, int shot, const char *field, rtm_io_gather_t *gather);
/* rtm_io_read_shot without the samples: the source, the receivers, dt and the count of
 * samples, with the same checks of the headers and shapes; traces NULL. A survey's shots are
 * checked so before a run, each read whole when its turn comes. */
int rtm_io_read_shot_geometry(const char *path, int shot, const char *field,
                              rtm_io_gather_t *gather);
/* No recording holds a sample this large (rtm3d model's pressures, field data whose integer
 * formats end at 2^31, lie many orders of magnitude below), and migrate would make a
 * non-finite image of one. On its way there a sample is multiplied by -d/dt's 1 / (2 dt),
 * the injection weight and the stencil: in run/examples/migrate_small.ini (dt 1.4 ms) one
 * sample of 2e34 gives an image of 1.5e36, one of 5e34 an all-NaN image (measured: -d/dt
 * makes it 1.8e37, the back-propagation takes it past float32's 3.4e38). Of those gains
 * 1 / dt is the one a deck can raise without bound: 1e20 leaves the example's others room
 * down to dt = 1e-17 s. No bound holds for every deck (the illumination divides the image),
 * so migrate checks its image too. */
#define RTM_IO_SAMPLE_LIMIT 1e20
void rtm_io_gather_release(rtm_io_gather_t *gather);

/* Once, before any other call of this module (rtm3d's main): HDF5 set up so that a file
 * whose closing failed (a full disk) does not crash the process at exit. */
void rtm_io_startup(void);

/* ---- SEG-Y (segy.c; segyio at configure time, RTM3D_ENABLE_SEGY) ---- */
/* 1 when this build reads and writes SEG-Y; without it the functions below say so. */
int rtm_segy_available(void);
/* 1 when `path` names a SEG-Y file (.sgy, .segy, any case): rtm_io_shot_count and
 * rtm_io_read_shot then read it as SEG-Y. */
int rtm_segy_path(const char *path);
/* Whether PATH's first 3600 bytes look like SEG-Y's headers (a text header's first card,
 * a sample format code in the binary header), whatever its name: observed gathers under a
 * name that is not .sgy are refused saying so. Needs no segyio. */
int rtm_segy_looks_like(const char *path);
/* The gathers of `field` of every shot of run file `h5_path` as SEG-Y (IEEE floats,
 * positions in the standard trace-header fields with scalars, shot and receiver numbers;
 * segy.c lists the bytes): one file at `segy_path`, or with per_shot one a shot, named
 * STEM_shot<k>.EXT. A sample interval that is not whole microseconds is an input error
 * naming output.trace_dt. Each file is written as PATH.partial (created by this call, never
 * one that exists) and renamed over PATH once all are written: a failure removes this call's
 * files alone and leaves the earlier ones as they were. A target that is not a regular file
 * is refused (RTM_ERR_USAGE), and so is an existing one, before any is written, unless
 * `overwrite`; with per_shot and overwrite the files of an earlier, larger set
 * (STEM_shot<k>.EXT, k >= the shots written) are removed. */
int rtm_segy_export(const char *h5_path, const char *field, const char *segy_path, int per_shot,
                    int overwrite);
/* The file rtm_segy_export writes shot `shot` into (per_shot), or its one file: OUT.sgy ->
 * OUT_shot<k>.sgy, the extension kept (a dot in a folder's name, or one that starts the
 * file's name, is none), into out[size]; RTM_ERR_USAGE when it does not fit (said). */
int rtm_segy_target_path(const char *path, int per_shot, int shot, char *out, size_t size);
/* rtm_segy_target_path's inverse: where path is a per-shot file OUT_shot<k>.EXT (k as it
 * writes it), OUT.EXT into given[size] and k; else -1. */
int rtm_segy_per_shot_given(const char *path, char *given, size_t size);
/* All shots of `field` of the run file at h5_path into one SEG-Y file at `path`, created or
 * truncated: a file of the caller's (a run's NAME.sgy.partial, under its name lock), which
 * the caller removes on failure. Its text header names `named` (the run file's final name:
 * h5_path is its PATH.partial) and says "written by rtm3d model". */
int rtm_segy_write(const char *h5_path, const char *named, const char *field, const char *path);
/* 1 when the regular file at `path` is a SEG-Y file that rtm3d wrote (rtm_segy_export or
 * rtm_segy_write) from the run file `h5_path` (or its PATH.partial), as its text header says
 * (the run file's name, or the start of its path where the header cut it); else 0, and
 * always 0 without segyio. A run removes an earlier NAME.sgy of its own name only then. */
int rtm_segy_written_from(const char *path, const char *h5_path);
/* Whether `path` is a regular file holding what rtm3d writes at the top of a run file (the
 * root attributes format_version, created and command_line of a model or migrate run's
 * NAME.h5, not a model file's); 0 when it is not, or cannot be opened. */
int rtm_io_run_file_written(const char *path);
/* Whether `path` names a file a run keeps beside its outputs, never another command's to
 * write: NAME.lock, NAME.commit, a .partial, NAME.resume.h5, a link aside (.replaced[.N]),
 * a name with .partial. or .replaced. in it (a file written or linked aside). */
int rtm_io_run_bookkeeping_name(const char *path);
/* Whether `path` is such a run file of a migration: rtm_io_run_file_written and a dataset
 * /image (a finished migration's image; model's run files hold gathers and snapshots). */
int rtm_io_migration_file_written(const char *path);
/* Whether `path`, NAME.xmf, is a regular file rtm3d wrote as the XDMF sidecar of NAME.h5
 * (its first lines as rtm_output_sidecar writes them, and a data item of NAME.h5). */
int rtm_xdmf_written_by_rtm3d(const char *path);
/* Shots of a SEG-Y file (distinct field records, trace byte 9) and shot k's gather. */
int rtm_segy_shot_count(const char *path, int *count);
int rtm_segy_read_shot(const char *path, int shot, rtm_io_gather_t *gather);

/* ---- run states, for resuming ---- */
/* Of a run file written with rtm_output_write_count: the count `count_name` and the resolved
 * config text it was written under (malloc'd; the caller frees it). */
int rtm_io_read_run_state(const char *path, const char *count_name, int *count, char **config);
/* The root attribute `name` of a run file as rtm_output_write_text wrote it (malloc'd; the
 * caller frees it), or *text = NULL when the file has no such attribute. */
int rtm_io_read_run_text(const char *path, const char *name, char **text);

/* ---- the run's I/O thread (io_worker.c) ----
 * Jobs (a resume state to write, the next shot's gather to read) run one after another on
 * one thread while the run's steps go on. HDF5 is called by one thread at a time: while a
 * job is queued the caller makes no HDF5 call of its own (rtm_io_worker_drain first). A job
 * owns its context until it has run; after a job fails the ones behind it are skipped and
 * every wait returns its status. */
typedef struct rtm_io_worker rtm_io_worker_t;
typedef int (*rtm_io_job_t)(void *context);
int rtm_io_worker_create(rtm_io_worker_t **worker);
/* Queues job(context) and returns its ticket (waits while eight are queued). */
int rtm_io_worker_submit(rtm_io_worker_t *worker, rtm_io_job_t job, void *context, long *ticket);
/* Returns once the job of `ticket` and those before it have run: RTM_OK, or the first
 * failure's status. */
int rtm_io_worker_wait(rtm_io_worker_t *worker, long ticket);
/* Waits for every queued job (nothing to wait for with no worker). */
int rtm_io_worker_drain(rtm_io_worker_t *worker);
/* Runs what is queued, then ends the thread. */
void rtm_io_worker_destroy(rtm_io_worker_t *worker);

/* ---- comparison ---- */
/* How far `values` lies from `reference` (count floats each), for `rtm3d validate` and the
 * tests: the L2 norm of the difference relative to the reference's (absolute when the
 * reference is all zero), and the largest absolute difference, both in double over the
 * pairs that are finite on both sides; the others are counted. */
typedef struct {
  double error_norm; /* ||values - reference|| / ||reference||, or ||values - reference|| */
  double max_abs;
  int absolute; /* ||reference|| = 0: error_norm is the absolute norm */
  size_t non_finite;
} rtm_comparison_t;
rtm_comparison_t rtm_compare(const float *values, const float *reference, size_t count);

#ifdef __cplusplus
}
#endif

#endif
