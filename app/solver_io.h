/* solver_io.h - the app's wiring between io and the solver, which know nothing of each
 * other (docs/design.md "Modules and the layering rule": io -> config, solver -> memory,
 * config): grids become io volumes, model files become rtm_model_t, the memory ledger
 * becomes the report's rows. */
#ifndef RTM_APP_SOLVER_IO_H
#define RTM_APP_SOLVER_IO_H

#include "rtm_config.h"
#include "rtm_io.h"
#include "rtm_memory.h"
#include "rtm_mpi.h"
#include "rtm_solver.h"

/* The io description of a grid: its extents, spacing, origin and local z-range. */
rtm_io_volume_t rtm_app_volume(const rtm_grid_t *grid);

/* The model of the grid's local z-range: read from model.file when it is set (errors name
 * the file), else the [model] constants; its range computed. First the model and the run's
 * propagator are weighed against the memory they may take (rtm_propagator_preflight). */
int rtm_app_load_model(const rtm_config_t *cfg, const rtm_grid_t *grid, rtm_model_t *model);
/* A text's 32-bit FNV-1a hash as a double (exact): lines or stamps compared across the
 * ranks by reductions (rtm_app_check_same_deck, rtm_app_load_run_model). */
double rtm_app_text_hash(const char *text, size_t length);
/* rtm_app_load_model for a run's ranks (model, migrate): model.file, when set, read whole, one
 * and the same file on every rank of `mpi` (its stamp: inode, size, mtime, ctime) and
 * unchanged while it was read, else RTM_ERR_IO on every rank, said. Collective over every
 * rank of the run. */
int rtm_app_load_run_model(const rtm_config_t *cfg, const rtm_grid_t *grid, rtm_mpi_t *mpi,
                           rtm_model_t *model);
/* The same for a model whose values alone are wanted (no propagator of that grid follows:
 * rtm3d accuracy's deck), weighing the model alone. */
int rtm_app_load_model_values(const rtm_config_t *cfg, const rtm_grid_t *grid, rtm_model_t *model);
/* The grid given `mpi`'s ranks (grid->mpi) and, with several, cut to this rank's z-slab
 * in multiples of `align` planes (rtm_mpi_slab_aligned; 1: rtm_mpi_slab's cut), which the
 * ranks keep for writing each other's slabs; with one rank its planes unchanged. */
int rtm_app_slab(rtm_grid_t *grid, rtm_mpi_t *mpi, int align);
/* The CPUs this process's cgroup may use (a batch system's allocation: cgroup v2's
 * cpuset.cpus.effective, or v1's cpuset.effective_cpus), else every CPU online. */
long rtm_app_job_cpus(void);

/* What a slab write fills: the volume `name` (an absolute path such as "/image"), or, when
 * index >= 0, entry `index` of the snapshot series `name` ("p") taken at `step`, `time_s`. */
typedef struct {
  const char *name;
  int index, step;
  double time_s;
} rtm_app_slab_target_t;
/* The ranks' slabs of `target` (the grid's, grid->mpi) into the output file created at
 * `path`, which rank 0 holds (`output`; NULL on the others). With a parallel HDF5 every rank writes
 * its own planes in one collective write (rtm_io_write_planes_collective); else rank 0 writes the
 * slabs in rank order as they come (rtm_mpi_write_slabs), receiving the others' into `buffer` (rank
 * 0's, rtm_app_slab_buffer_cells of them). Collective over the ranks that share the slabs; the
 * datasets and attributes are the same either way. */
int rtm_app_write_slabs(const rtm_grid_t *grid, rtm_output_t *output, const char *path,
                        const rtm_app_slab_target_t *target, const float *slab, float *buffer);
/* Where the slabs went to `path`'s partial file collectively (rtm_app_write_slabs): every rank
 * but 0 puts its node's pages of the file on the disk, and the ranks agree on the outcome,
 * before rank 0's commit (which syncs its own); a rank that failed fails them all
 * (RTM_ERR_IO). Collective over grid->mpi's ranks; nothing with one rank or rank 0's writes. */
int rtm_app_sync_slabs(const rtm_grid_t *grid, const char *path);
/* rtm_output_create, then, when the slabs of `mpi`'s ranks go to the file collectively
 * (rtm_app_write_slabs), rtm_output_expect_collective. Rank 0. */
int rtm_app_create_output(const char *path, const rtm_io_volume_t *volume, const rtm_mpi_t *mpi,
                          const rtm_run_info_t *info, rtm_output_t **output);
/* How rtm_app_write_slabs writes the slabs of `mpi`'s ranks, for the report's "slab_writes":
 * "collective (parallel HDF5)" or "rank 0, in rank order"; NULL with one rank. */
const char *rtm_app_slab_writes(const rtm_mpi_t *mpi);
/* Cells of the buffer rank 0 needs for rtm_app_write_slabs: the largest other slab when
 * rank 0 writes the slabs itself, 0 with one rank or a parallel HDF5. */
size_t rtm_app_slab_buffer_cells(const rtm_grid_t *grid);

/* Under MPI, a run's report figures (nothing on one rank): `shot_values` (count values, one
 * row per shot each shot group fills for its own shots) made every rank's by their maximum
 * when there are shot groups; and the phases of the run on each rank (rtm_phase_t's edge
 * planes, interior, copies out and in, then the host's wait in the halo exchange and the
 * I/O: `seconds` in that order, this rank's) reduced over every rank of `mpi` into the
 * report's timings PHASE_min, PHASE_mean and PHASE_max, RTM_APP_RANK_TIMINGS of them.
 * Collective. */
enum { RTM_APP_RANK_PHASES = RTM_PHASE_COUNT + 2, RTM_APP_RANK_TIMINGS = 3 * RTM_APP_RANK_PHASES };
int rtm_app_reduce_run_timings(rtm_mpi_t *mpi, const double seconds[RTM_APP_RANK_PHASES],
                               double *shot_values, int count,
                               rtm_timing_t timings[RTM_APP_RANK_TIMINGS]);

/* Refuses to replace `path` (a run's output file) that exists, unless output.overwrite
 * (--force): RTM_ERR_CONFIG naming the file and both ways to allow it, before any work.
 * Every rank checks the same path (rank 0's file system). */
int rtm_app_check_overwrite(const rtm_config_t *cfg, const char *path, const char *key);
/* Refuses (RTM_ERR_CONFIG, naming `key`) an output `path` that exists and is not a regular
 * file: a device, a FIFO or a folder that the run's rename would replace (as root
 * /dev/null itself), or a link to nothing, which stat takes for absent and the final rename
 * would refuse after the run's work. */
int rtm_app_check_replaceable(const char *key, const char *path);

/* 1 when a and b are the same file: the same device and inode when both exist (a hard link,
 * a symbolic link, another spelling), else the same path once resolved as the folders a run
 * makes will resolve it (DIR/new/../NAME is DIR/NAME). */
int rtm_app_same_file(const char *a, const char *b);

/* One file a run reads, and the key that names it. */
typedef struct {
  const char *key, *path;
} rtm_app_file_t;
/* What a command reads beside the deck, shots.file and receivers.file (layout = file). */
enum {
  RTM_APP_READS_MODEL = 1,      /* model.file (when set) */
  RTM_APP_READS_OBSERVED = 2,   /* rtm.observed */
  RTM_APP_READS_DESCRIPTION = 4 /* model.description */
};
/* Refuses (RTM_ERR_CONFIG, naming the input's key and the output) a run one of whose
 * `outputs` [count], or its PATH.partial, is one of the files it reads: the same device and
 * inode when both exist (a hard link, a link, another spelling), else the same path. With
 * --force the run would otherwise replace its own input (issue 32). Before any file is
 * written, the lock included. */
int rtm_app_check_inputs_kept(const rtm_config_t *cfg, unsigned reads, const char *const *outputs,
                              int count);
/* The run's output name claimed before any work: its outputs checked against its inputs
 * (rtm_app_check_inputs_kept; `migrate`: a migration's files and reads, else a model
 * run's), output.dir/output.name locked on world rank 0 of `mpi` (rtm_io_lock_name: a
 * second run of the same name is refused and touches nothing of this one's), then `path`
 * (the run file) refused when it exists (rtm_app_check_overwrite). */
int rtm_app_claim_output(const rtm_config_t *cfg, const rtm_mpi_t *mpi, const char *path,
                         int migrate, rtm_io_name_lock_t *lock);
/* With --force (output.overwrite), the earlier files of output.dir/output.name that rtm3d
 * wrote and this run does not write listed in `set` to be removed at its commit (journaled
 * with it), said in one warning: for a migration (`migrate`) a model run's NAME.sgy, for a
 * model run without output.segy its NAME.sgy, and a migration's NAME_image_{x,y,z}.png. A
 * SEG-Y counts as rtm3d's when its text header names rtm3d and `h5_path`
 * (rtm_segy_written_from), a figure when it carries rtm3d's PNG mark
 * (rtm_png_written_by_rtm3d); any other file there (a user's) stays, with a warning. Without
 * --force nothing (the claim found none of them). Rank 0. */
int rtm_app_drop_other_outputs(const rtm_config_t *cfg, int migrate, const char *h5_path,
                               rtm_io_outputs_t *set);
/* Whether FILE is named as one of the files a model or migrate run NAME writes beside its
 * run file (NAME.json, .xmf, .sgy, .resume.h5, _image_{x,y,z}.png, .commit) where that run
 * file, NAME.h5, is one rtm3d wrote: its path into `run_file` [size] and what FILE is to
 * the run ("report", ...) into *what. */
int rtm_app_run_member(const char *file, char *run_file, size_t size, const char **what);
/* Refuses (RTM_ERR_CONFIG, naming them) the files of a model or migrate run of DIR/NAME that
 * rtm3d provably wrote, for a command that writes other files of the name (`writes`, said
 * in the message: bench's NAME.json, makemodel's model NAME.h5): a run file NAME.h5
 * (rtm_io_run_file_written), its sidecar NAME.xmf (rtm_xdmf_written_by_rtm3d), a SEG-Y
 * NAME.sgy written from NAME.h5, a figure NAME_image_{x,y,z}.png with rtm3d's mark, a
 * migration's NAME.resume.h5. Left beside that command's file they would read as one run's
 * (probe E7: --force replaced the one file and kept the others). A user's file at such a
 * name is no run's and refuses nothing. */
int rtm_app_refuse_other_runs(const char *dir, const char *name, const char *key,
                              const char *writes);
/* What a run has made that an abort of its MPI job (a failure, the watchdog of
 * mpi.timeout_s) would leave behind, given to rtm_mpi_on_abort once the name is claimed:
 * the lock, the partial files of *outputs, and the partial of the run file `path` once
 * *output is open. rtm_app_remove_made removes them (idempotent). */
typedef struct {
  rtm_io_name_lock_t *lock;
  rtm_io_outputs_t **outputs;
  rtm_output_t **output;
  const char *path;
} rtm_app_made_t;
void rtm_app_remove_made(void *made);

/* Refuses, before any step, outputs of about `bytes` that the file system holding `dir`
 * (or its nearest existing parent) has no room for (statvfs, the space an unprivileged
 * process may take): RTM_ERR_IO naming the need, the free space, the folder and `advice`
 * (the keys that shrink it). */
int rtm_app_check_disk(const char *dir, double bytes, const char *advice);

/* Writes the JSON run report: `report` with the grid's volume and the ledger's
 * allocations filled in. */
int rtm_app_write_report(const char *path, const rtm_report_t *report, const rtm_grid_t *grid,
                         const rtm_mem_ledger_t *ledger);

#endif
