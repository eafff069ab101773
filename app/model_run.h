/* model_run.h - the state of one `rtm3d model` run (cmd_model.c drives it), shared with the
 * file that writes its outputs (model_output.c). Private to app/. */
#ifndef MODEL_RUN_H
#define MODEL_RUN_H

#include "app.h"
#include "rtm_gathers.h"
#include "rtm_io.h"
#include "rtm_propagator.h"
#include "solver_io.h"

struct model_run;

/* A shot's gathers on their way to the file on the run's I/O thread (model_writes.c): the
 * job owns them until it has been waited for. */
typedef struct {
  struct model_run *run;
  int shot;
  rtm_shot_gathers_t gathers;
  int queued;     /* a job is queued with them: they are the I/O thread's */
  long ticket;    /* the job's */
  double seconds; /* the job's own, writing */
} model_write_t;

enum { MODEL_WRITES = 2 }; /* shots' gathers in flight at once: the one written, the next */

/* The state of one modelling run, shared by its phases. */
typedef struct model_run {
  rtm_mpi_t *mpi; /* main's: the ranks of the run, and after set-up its shot groups */
  rtm_config_t cfg;
  int quiet;
  unsigned snapshot_fields;
  const char *unstable_hint; /* appended to the messages that report an unstable run */
  rtm_grid_t grid;           /* this rank's slab under MPI */
  rtm_grid_t whole_grid;     /* the volume */
  rtm_model_t model;
  rtm_propagator_t prop;
  rtm_shots_t shots;
  int many_shots;       /* shots.layout grid or file: the many-shot layout, whatever the count */
  double *shot_seconds; /* [3][shots.count]: set_shot, propagate, write of each shot */
  rtm_trace_sampling_t sampling; /* the gathers: as recorded, as written */
  char device[256];
  char h5_path[2 * RTM_CONFIG_PATH_MAX], json_path[2 * RTM_CONFIG_PATH_MAX];
  char segy_path[2 * RTM_CONFIG_PATH_MAX]; /* output.segy: the gathers again, as SEG-Y */
  char *config_text;
  rtm_run_info_t info;
  rtm_output_t *output;
  rtm_io_name_lock_t lock;   /* rank 0: output.dir/output.name held from set-up to the end */
  rtm_io_outputs_t *outputs; /* rank 0: the files written, renamed together at the end */
  rtm_app_made_t made;        /* rank 0: what an abort of the job removes (rtm_mpi_on_abort) */
  rtm_io_worker_t *worker;   /* the run's I/O thread: gathers written while the steps go on */
  model_write_t writes[MODEL_WRITES]; /* rank 0: the shots queued, in turn */
  int writes_queued;                  /* shots handed to the I/O thread so far */
  int every, snapshot_count;
  int slabs_written;  /* the ranks' slabs went to the file (rtm_app_write_slabs): a snapshot */
  int root;           /* rank 0 (or the only rank): it writes the file and the report */
  int shot_lines;     /* a line per shot: each group's first rank, unless --quiet */
  size_t cells;       /* of the whole grid: the rates */
  size_t local_cells; /* of this rank's slab */
  float *field;       /* this rank's slab of one volume: snapshots and the final check */
  float *slab_buffer; /* rank 0 under MPI: another rank's slab on its way to the file */
  double start_s, setup_end_s, loop_end_s, end_s, snapshot_s;
  double setup_s, propagate_s, write_s; /* the report's phases, summed over the shots */
  double behind_s;            /* the I/O thread's seconds writing gathers while the shots ran */
  double writer_waits_s;      /* the stepping thread's waits for the writer of streamed gathers */
  double loaded_s, created_s; /* setup's parts: deck and model, then the propagator */
  rtm_trace_stream_t *stream; /* the gathers streamed to the file while the steps run */
  double correct_s;           /* time.dispersion_correction's warps of the traces (within write) */
  rtm_timing_t rank_timings[RTM_APP_RANK_TIMINGS]; /* under MPI: the phases over the ranks */
  char *rank_lines; /* rank 0 under MPI: [ranks][RANK_LINE] "rank r: host, device" */
} model_run_t;

/* ---- model_output.c ---- */
/* output.segy = true: SEG-Y can hold these gathers, and dir/name.sgy may be written; before
 * any step. */
int rtm_model_plan_segy(model_run_t *run);
/* OUTPUT.h5 with the run's provenance, the snapshot buffer and the snapshot datasets (and,
 * streaming, the trace datasets, the stream's windows written on the run's I/O thread). */
int rtm_model_open_output(model_run_t *run);
/* Snapshot `level / every - 1` of each field snapshots.fields asks for (the I/O thread's
 * queued windows written first). */
int rtm_model_write_snapshots(model_run_t *run, int level);
/* A shot's gathers into the file (shot < 0: the single-shot layout). */
int rtm_model_write_shot(model_run_t *run, int shot, const rtm_shot_gathers_t *gathers);
/* The run file closed (and SEG-Y written from it) as partial files. */
int rtm_model_close_output(model_run_t *run);
/* OUTPUT.json, then every output renamed into place together (rank 0). */
int rtm_model_write_report(model_run_t *run);

/* ---- model_writes.c ---- */
/* Shot `shot`'s gathers taken from *gathers (left empty) and queued to the run's I/O thread,
 * once the write of the shot that last used their slot has ended (its failure returned); an
 * rtm_gathers_write_t, context the run. */
int rtm_model_queue_shot(void *context, int shot, rtm_shot_gathers_t *gathers);
/* The first write that failed so far, without waiting (RTM_OK: none): the run stops before
 * the next shot. */
int rtm_model_check_writes(model_run_t *run);
/* Every queued write waited for and its slot freed (the first failure returned): no HDF5 call
 * under way. */
int rtm_model_settle_writes(model_run_t *run);
/* The slots' gathers freed: after the I/O thread is destroyed (a failed run). */
void rtm_model_release_writes(model_run_t *run);
/* The run's I/O thread as the streamed gathers' job queue. */
rtm_job_queue_t rtm_model_job_queue(model_run_t *run);

#endif
