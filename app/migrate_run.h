/* migrate_run.h - the state of one `rtm3d migrate` run (cmd_migrate.c drives it), shared
 * with the files that keep its sums between shots (migrate_state.c) and write its outputs
 * (migrate_output.c). Private to app/. */
#ifndef MIGRATE_RUN_H
#define MIGRATE_RUN_H

#include "app.h"
#include "progress.h"
#include "rtm_io.h"
#include "rtm_migration.h"
#include "solver_io.h"

typedef struct migrate_run migrate_run_t;

/* A shot's gather read ahead by the run's I/O thread while the shot before it propagates,
 * and made ready there: checked, at the modelling dt and warped as the config asks, muted,
 * and made the receiver side the shot injects. */
typedef struct {
  const migrate_run_t *run; /* the run it is made ready for */
  int shot;                 /* -1: none queued or held */
  long ticket;
  int status; /* the read's and the preparation's, once its job has run */
  double mute_velocity;      /* rtm_migration_mute_velocity's, from the stepping thread */
  rtm_io_gather_t gather;    /* the job's while it runs */
  rtm_receiver_side_t *side; /* once the job has run and its status is RTM_OK */
} migrate_read_t;

/* A job of the I/O thread on the sums while the next shot propagates: a shot's sums added
 * to the run's, or (one rank) the resume state written. */
typedef struct {
  migrate_run_t *run;
  int completed;  /* the shots in the sums after it */
  int queued;     /* not yet waited for */
  long ticket;
  double seconds; /* the thread's, on it */
} migrate_job_t;

/* The state of one migration run, shared by its phases. */
struct migrate_run {
  rtm_mpi_t *mpi; /* main's: the ranks of the run, and after set-up its shot groups */
  rtm_config_t cfg;
  int quiet;
  rtm_grid_t grid;
  rtm_model_t model;
  rtm_shots_t shots;
  rtm_migration_t *migration;
  double dt_s; /* the modelling dt (time.dt, or auto from the model), before the migration */
  char device[256];
  char h5_path[2 * RTM_CONFIG_PATH_MAX], json_path[2 * RTM_CONFIG_PATH_MAX];
  char resume_path[2 * RTM_CONFIG_PATH_MAX];
  int first_shot;     /* shots before it are in the resumed sums */
  int stopped;        /* --max-shots ended the run before the last shot */
  int refused_shot;   /* a shot's gather refused as read (RTM_ERR_INPUT); -1: none */
  int shot_limit;     /* --max-shots: shots to migrate in this run; 0 = all */
  int saved_shots;    /* the shots OUTPUT.resume.h5 holds: the resumed ones, then each save's */
  double last_save_s; /* world rank 0: when the run began or last saved its state */
  int saves;          /* of the state in this run */
  int held_shots;     /* the shots in the sums once the add queued last has run */
  int holds;          /* copies of a shot's sums to the host, hold_s seconds in all */
  double hold_s;
  rtm_io_worker_t *worker; /* the run's I/O thread: gathers read ahead, sums added, states
                              written behind */
  migrate_read_t read;     /* the next shot's gather */
  migrate_job_t add;       /* the last shot's sums added to the run's */
  migrate_job_t save;      /* the state the I/O thread writes (one rank, or a first shot
                              group of one rank) */
  /* one rank, the acquisition's last shot: its illumination, whole after its forward pass
   * (rtm_migration_on_lit), summed into the slab, checked and written by the I/O thread
   * while its backward pass runs (rtm_migrate_take_illumination); the sums' illumination
   * then lack that shot, and its take copies the image alone */
  migrate_job_t lit;
  int illumination_taken;
  double behind_s;         /* the I/O thread's seconds writing states */
  double summed_s;         /* the I/O thread's seconds adding the shots' sums */
  int pinned;              /* the host slabs are page-locked (rtm_mem_host_pin) */
  int gathers_pinned;      /* gather_shot is page-locked */
  int pin_queued;          /* their pinning is queued on the I/O thread, not waited for */
  long pin_ticket;
  char *config_text;
  char *inputs; /* the input files' fingerprints when the run began (input_fingerprints) */
  char *resume_config; /* the config as it bears on the sums, resolved (resume_config) */
  rtm_run_info_t info;
  rtm_output_t *output;
  rtm_io_name_lock_t lock;   /* rank 0: output.dir/output.name held from set-up to the end */
  rtm_io_outputs_t *outputs; /* rank 0: the files written, renamed together at the end */
  rtm_app_made_t made;        /* rank 0: what an abort of the job removes (rtm_mpi_on_abort) */
  int root;                  /* rank 0 (or the only rank): it writes the files */
  int shot_lines;            /* a line per shot: each shot group's first rank, unless --quiet */
  rtm_grid_t whole;          /* the grid's whole z-range (grid: this rank's slab under MPI) */
  size_t cells;              /* of the whole grid */
  size_t local_cells;        /* of this rank's slab */
  /* this rank's slabs, dense interior, on the host (no rank holds the whole volume: the
   * files are written slab by slab, rtm_app_write_slabs, the filters work on slabs): of one
   * shot's image and illumination as they leave the device (page-locked), at the end of the
   * run's, rounded from the sums */
  float *slab_image, *slab_illumination;
  /* this rank's slabs of the sums over the shots as float pairs (rtm_sums_add): image hi,
   * image lo, illumination hi, illumination lo; not zeroed while sums_empty */
  float *sums[4];
  int sums_empty;
  float *slab_buffer; /* rank 0 under MPI: another rank's slab on its way to the file */
  /* rtm.offset_lags > 0 (else NULL, 0): this rank's planes of the subsurface-offset gathers,
   * dense [ncip][nh][nh][nz_local] (rtm_migration_gather_plan): one shot's as read at its
   * end, and at the run's end the sums rounded; their sums over the shots as a float pair
   * (hi, lo), each shot's added by the I/O thread once its copy lands (behind the next
   * shot), saved beside the image's in the resume state */
  size_t gather_cells;
  float *gather_shot, *gather_sums[2];
  int gathers_empty;    /* gather_sums hold no shot and are not zeroed (before the first, or
                           a later group's after the groups' sums met): the next shot's start
                           them */
  double gathers_s;     /* the gathers' accumulation, of the imaging's seconds */
  float *gathers_whole; /* rank 0 at the end: [ncip][nh][nh][nz], every rank's planes */
  float *angle_gathers; /* rank 0 at the end: [ncip][rtm.angles][nz] */
  double angles_s;      /* making them */
  rtm_progress_t progress;
  int shots_migrated; /* by this rank in this run, before the one being migrated */
  double start_s, setup_end_s, end_s;
  rtm_shot_timing_t total;
  double read_s, write_s;
  double filter_s; /* the image's filters at the end (not in write_s) */
  double file_s;   /* the image and the illumination into OUTPUT.h5, on the disk and renamed */
  double volumes_s; /* of file_s, the volumes' writing (on one rank the I/O thread's) */
  double figures_s; /* the PNG figures of the image, drawn while the volumes are written */
  /* rank 0: the figures not drawn, too little address space left for them (ulimit -v) */
  int figures_skipped;
  rtm_timing_t rank_timings[RTM_APP_RANK_TIMINGS]; /* under MPI: the phases over the ranks */
  /* [5][shot count]: forward, backward, imaging, I/O seconds of each shot, and the steps the
   * reconstruction recomputed */
  double *shot_seconds;
};

/* ---- migrate_state.c ---- */
/* OUTPUT.resume.h5 left by a stopped run: its sums loaded and run->first_shot set, when the
 * config and the input files are the ones they were made with (refused otherwise); records
 * the input files' fingerprints for the states this run saves. */
int rtm_migrate_resume(migrate_run_t *run);
/* rtm.observed as it was when the run began (rtm_migrate_resume's fingerprint: size, mtime,
 * ctime, inode), else RTM_ERR_IO naming it: a file replaced or rewritten while the shots are
 * read would mix two data sets into one image. Called after each gather is read. */
int rtm_migrate_check_observed(const migrate_run_t *run);
/* This rank's slab of the volume `name` into the file at `path`, whose output rank 0 holds
 * (`output`, NULL on the others): the first shot group's ranks call it alike. */
int rtm_migrate_write_slabs(migrate_run_t *run, rtm_output_t *output, const char *path,
                            const char *name, const float *slab);
/* Whether the state is saved after this round, alike on every rank: `forced` (the last
 * round of a --max-shots run), rtm.resume_every = 0, or its seconds passed on world rank 0
 * since the run began or last saved. */
int rtm_migrate_save_due(migrate_run_t *run, int forced, int *due);
/* The state saved after this round: on one rank written by the I/O thread behind the add
 * queued last; under several ranks, there and then (every rank alike: the groups' sums meet
 * in the first group's, which writes them). */
int rtm_migrate_save(migrate_run_t *run, int completed);
/* A shot's end on this rank: its image and illumination copied to the host slabs behind the
 * next shot's steps, the device's zeroed for the next shot, and the copy added to the sums
 * by the I/O thread (then `completed` shots are in them, with the other groups'). */
int rtm_migrate_take_shot(migrate_run_t *run, int completed);
/* The run's last shot taken: the groups' sums added into the first group's, whose ranks
 * round them into the host slabs (every rank alike), the gathers' too. */
int rtm_migrate_finish_sums(migrate_run_t *run);
/* rtm.offset_lags > 0, under z-slabs: this rank's planes of a gathers' array ([traces]
 * [nz_local], as run->gather_sums) whole on rank 0 into `whole` ([traces][nz], rank 0's;
 * NULL on the others), every bit kept: each rank's planes cross to rank 0 as they are
 * (rtm_mpi_write_slabs over the traces, rank 0 holding a slab of them besides `whole`). The
 * first shot group's ranks call it alike. */
int rtm_migrate_gathers_to_root(migrate_run_t *run, const float *planes, float *whole);
/* rtm.offset_lags > 0: the host arrays of the gathers (zeroed sums), else nothing. */
int rtm_migrate_alloc_gathers(migrate_run_t *run);
/* rtm_migration_on_lit's hook (`context` the run) for the acquisition's last shot on one
 * rank: the I/O thread's jobs on the slab waited for, the shot's illumination read into
 * slab_illumination and rtm_migrate_illumination_behind queued (run->lit), while the shot's
 * backward pass runs: the end then writes the image alone. */
int rtm_migrate_take_illumination(void *context);
/* Under a GPU, queues the host slabs' page-locking on the I/O thread (the first shot's take
 * waits for it): their copies then run at the bus's speed and behind the next shot's steps. */
int rtm_migrate_pin_slabs(migrate_run_t *run);
/* The I/O thread's jobs on the sums waited for (their status), and the queue drained: no
 * HDF5 call is under way, the slabs hold the last shot taken, the sums every shot taken. */
int rtm_migrate_settle_saves(migrate_run_t *run);

/* After SIGINT or SIGTERM, on world rank 0: a state the I/O thread is writing finished, then,
 * on one rank, the sums into OUTPUT.resume.h5 when they hold shots the last save does not
 * (the shot under way is not in them). */
int rtm_migrate_save_held(migrate_run_t *run);
/* World rank 0, a run stopped by a signal: what OUTPUT.resume.h5 holds and what is lost. */
void rtm_migrate_say_interrupted(const migrate_run_t *run);
/* World rank 0, a later shot's gather refused as read (run->refused_shot): the state this
 * run saved holds sums of the file as it is, which no repaired file matches (the resume
 * refuses it), so it is removed and said; one resumed from an earlier run's is kept, and
 * what to do is said. */
void rtm_migrate_drop_refused_state(migrate_run_t *run);

/* ---- migrate_reads.c ---- */
/* A gather as the observed-data checks take it (rtm_migration.h). */
rtm_observed_gather_t rtm_migrate_observed_gather(int shot, const rtm_io_gather_t *gather);
/* Shot `shot`'s gather of rtm.observed made its receiver side, ready to inject, into *side
 * (rtm_observed_check, rtm_observed_at_modelling_dt, rtm_migration_prepare; the caller
 * destroys it), from the I/O thread: read ahead when rtm_migrate_read_ahead queued it, else
 * queued now and waited for. */
int rtm_migrate_take_side(migrate_run_t *run, int shot, rtm_receiver_side_t **side);
/* Queues the reading of shot `shot`'s gather, and the making of its side, on the I/O thread;
 * asks the mute's velocity first, here (a collective on z-slabs: the slab's ranks call it
 * alike, from the stepping thread). */
int rtm_migrate_read_ahead(migrate_run_t *run, int shot);
/* A side made ahead and not taken, released (the I/O thread done with it). */
void rtm_migrate_release_reads(migrate_run_t *run);

/* ---- migrate_output.c ---- */
/* The summed image with the config's filters, and the illumination, into OUTPUT.h5, and
 * the image's figures (rtm_migrate_write_pngs; on one rank drawn while the I/O thread
 * writes the volumes): every rank calls it. */
int rtm_migrate_write_image(migrate_run_t *run);
/* The I/O thread's job (`context` run->lit) behind rtm_migrate_take_illumination: the
 * shot's illumination in slab_illumination added to the sums' and rounded there (the sums
 * left as they are; its seconds, as an add's), checked finite and written into OUTPUT.h5
 * (write_illumination's), /image named first. */
int rtm_migrate_illumination_behind(void *context);
/* OUTPUT_image_x.png, _y.png, _z.png: the first shot group's ranks call it alike. */
int rtm_migrate_write_pngs(migrate_run_t *run);
/* Under MPI, the ranks' phases reduced over the ranks for the report. */
int rtm_migrate_reduce_rank_phases(migrate_run_t *run);
/* OUTPUT.json, then every output renamed into place together (rank 0). */
int rtm_migrate_write_report(migrate_run_t *run);

#endif
