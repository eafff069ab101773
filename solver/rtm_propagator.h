/* rtm_propagator.h - a propagator set up from the config: grid, resolved dt, absorbing
 * boundary, the source and the receivers, and the chosen backend. The app drives the time
 * loop (snapshots, progress, output); the numerics stay behind the backend table. */
#ifndef RTM_PROPAGATOR_H
#define RTM_PROPAGATOR_H

#include "rtm_config.h"
#include "rtm_grid.h"
#include "rtm_memory.h"
#include "rtm_solver.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  rtm_grid_t grid;
  const rtm_model_t *model; /* not owned */
  double dt_s;
  int steps;
  double source_position_m[3];
  rtm_boundary_t boundary;
  rtm_points_t sources;
  rtm_points_t receivers;
  /* z-slabs, sinc: the receivers as the backend records them, one part a plane for those
   * whose taps fall in several ranks' planes (receiver_parts[r]: 1 or the planes); without
   * such a receiver receiver_parts is NULL and the backend records `receivers` */
  rtm_points_t recorded;
  int *receiver_parts;
  /* receivers.layout = file: the file's positions as read for the first shot, every shot's
   * (probe R, R2: read again a shot, a file replaced during a run changed the receivers) */
  double *receivers_file_m;
  int receivers_file_count;
  unsigned trace_fields;       /* RTM_FIELD_BIT mask the receivers record (receivers.fields) */
  int field_count;             /* 1: p (iso); 2: p and q (vti, tti) */
  rtm_mpi_exchange_t exchange; /* z-slabs: mpi.exchange */
  rtm_dispersion_correction_t dispersion; /* time.dispersion_correction */
  double halo_s; /* z-slabs: host seconds spent exchanging (waiting for the planes, MPI) */
  double phase_s[RTM_PHASE_COUNT]; /* z-slabs, a synchronous backend's: its phases' seconds */
  float *wavelets;                 /* [sources.count][steps + 1], scaled for injection */
  const rtm_backend_t *backend;
  void *state;
  struct rtm_mpi_halo *halo;        /* z-slabs of a device's fields: their planes' host buffers */
  void *halo_pinned;                /* the range of them this process page-locked */
  struct rtm_mpi_device_link *link; /* or GPU to GPU (mpi.transport = nccl, cuda-aware) */
  rtm_mem_ledger_t ledger;
} rtm_propagator_t;

/* The bytes one propagator of this config holds on `grid` (this rank's slab): both time
 * levels of p (and q) and the model's coefficient volumes (1 for iso, 7 for vti/tti,
 * binary16 with memory.model_precision = fp16), padded; within a few planes. */
size_t rtm_propagator_bytes(const rtm_config_t *cfg, const rtm_grid_t *grid);
/* Of those, the coefficient volumes (what a propagator created beside another,
 * rtm_propagator_create_beside, does not hold again) and the time levels of p (and q). */
size_t rtm_propagator_medium_bytes(const rtm_config_t *cfg, const rtm_grid_t *grid);
size_t rtm_propagator_field_bytes(const rtm_config_t *cfg, const rtm_grid_t *grid);
/* The model's parameter volumes an equation reads (1 iso: vp; 3 vti: and epsilon, delta;
 * 5 tti: and the axis angles), and their bytes in fp32 on `grid` (this rank's slab). */
int rtm_model_parameter_count(rtm_equation_t equation);
size_t rtm_model_bytes(const rtm_config_t *cfg, const rtm_grid_t *grid);

/* Resolves dt, the source and receiver geometry, the recorded fields and the backend from
 * the config, then creates the backend state. On failure everything acquired is released.
 * On a grid cut into z-slabs (rtm_mpi.h) a backend whose fields are not host memory (cuda)
 * has its planes sent GPU to GPU (NCCL or CUDA-aware MPI, rtm_mpi_device.h) or staged through
 * pinned host buffers (rtm_mpi_halo.h) as mpi.transport resolves, set up here. Before anything is
 * allocated, rtm_propagator_bytes is weighed against memory.limit_gb (and, on the cpu backend, the
 * host memory available): a slab that cannot fit is refused naming its need per rank. */
int rtm_propagator_create(const rtm_config_t *cfg, const rtm_grid_t *grid, const rtm_model_t *model,
                          rtm_propagator_t *prop);
/* rtm_propagator_create of a second propagator of the same config, grid and model that steps
 * through the medium of `medium` (its coefficient volumes: uploaded once, held once), which
 * must outlive it: a migration's source and receiver sides. */
int rtm_propagator_create_beside(const rtm_config_t *cfg, const rtm_grid_t *grid,
                                 const rtm_model_t *model, const rtm_propagator_t *medium,
                                 rtm_propagator_t *prop);
/* RTM_ERR_INTERRUPTED once SIGINT or SIGTERM has come (rtm_interrupt_install), with an
 * error naming `what` was being done; RTM_OK before. The set-up's long phases (the model, a
 * wavelet of many samples) call it, so that a signal is heard there too, not only between
 * two steps (rtm_propagator_step). */
int rtm_propagator_interrupted(const char *what);
/* What rtm_propagator_preflight weighs: the model's parameter volumes (1 iso, 3 vti, 5 tti,
 * fp32 on this rank's slab) in host memory, and / or the propagator's bytes
 * (rtm_propagator_bytes) in host memory (cpu) or on this rank's device (cuda), with what
 * grows with time.steps (RUN, PROPAGATOR): the source wavelet and the traces of the first
 * shot's receivers, time.steps + 1 floats each (a refusal names time.steps). A run (RUN,
 * MODEL) is also told of kernel.* keys its backend ignores (cpu). */
typedef enum {
  RTM_PREFLIGHT_MODEL,      /* a model loaded for its values alone (rtm3d accuracy's deck) */
  RTM_PREFLIGHT_RUN,        /* before a run's model is loaded: both */
  RTM_PREFLIGHT_PROPAGATOR, /* the model loaded: the propagator's */
  RTM_PREFLIGHT_BESIDE,     /* as PROPAGATOR, for one that borrows another's medium */
} rtm_preflight_t;
/* Weighs what `what` names against what is free within memory.limit_gb. A refusal names the
 * need per rank; every command calls it before it loads a model (rtm_app_load_model), so a
 * volume too large fails at once instead of when host memory runs out. */
int rtm_propagator_preflight(const rtm_config_t *cfg, const rtm_grid_t *grid, rtm_preflight_t what);
/* How the planes travel toward the neighbour below (side 0) or above (1), for the reports:
 * "nccl", "cuda-aware", "shared" or "staged" (mpi.transport as resolved), "none" without a
 * neighbour, or "host" for a backend whose fields are host memory (cpu: MPI messages from them). */
const char *rtm_propagator_transport(const rtm_propagator_t *prop, int side);
void rtm_propagator_destroy(rtm_propagator_t *prop);

/* Forward or backward step `it`. On a grid cut into z-slabs (MPI) the new level's planes next
 * to each neighbour go into its ghost planes (rtm_mpi.h), so that the next step sees what
 * one rank would: with mpi.exchange = overlap the edge planes are computed first and
 * travel while the interior is (a device's through pinned buffers on a copy stream);
 * blocking exchanges after the whole step; off skips it (wrong results: benchmarks). */
int rtm_propagator_step(rtm_propagator_t *prop, int it, rtm_direction_t direction);
/* On a grid cut into z-slabs, the R planes of `level` next to each neighbour sent to it and
 * its planes received into the ghost planes of `level`, before anything queued later runs
 * (a field changed after its step: rtm.reconstruction = boundary's restored shell); nothing
 * on one rank or with mpi.exchange = off. */
int rtm_propagator_exchange(rtm_propagator_t *prop, rtm_level_t level);

/* The traces of `field` the receivers recorded, [receivers.count][steps + 1], on the first
 * rank of the ranks that share the slabs (rtm_mpi_rank 0): each rank's taps summed over the
 * ranks, a receiver recorded in parts added part after part, as one rank's recording adds
 * its planes, so the traces are one rank's to the bit. Collective; `traces` holds the
 * count x (steps + 1) floats on every rank (scratch on the others). */
int rtm_propagator_gather_traces(const rtm_propagator_t *prop, rtm_field_t field, float *traces);

/* z-slabs: the seconds so far in each phase of the split steps (rtm_phase_t: edge planes,
 * interior, a device's copies out and in), on the device where it is asynchronous (waits
 * for its queued work) and by the host's clock otherwise; zeros without a split. */
int rtm_propagator_phase_seconds(rtm_propagator_t *prop, double seconds[RTM_PHASE_COUNT]);

/* time.dispersion_correction = traces or full: `count` traces of steps + 1 samples at dt,
 * as the receivers recorded them, warped back from the leapfrog's frequencies to the true
 * ones (rtm_traces_dispersion, INVERSE) on `backend`'s trace pipeline ("cpu" or "cuda");
 * none leaves them. Under MPI, on the summed traces. */
int rtm_propagator_correct_traces(const rtm_propagator_t *prop, const char *backend, int count,
                                  float *traces);
/* The same warp of every recorded field's traces where the backend records them, before
 * they are read (a GPU's memory: rtm_traces_dispersion_device), when the backend shows them
 * (view_traces) and this rank records whole traces (no z-slabs: summing warped parts would
 * part from warping the sum in the last bits); *corrected says whether it did (otherwise
 * rtm_propagator_correct_traces on the read traces). A GPU without room for the warp's plan
 * fails the run here (the plan is refused before any trace is touched, naming the bytes). */
int rtm_propagator_correct_recorded(const rtm_propagator_t *prop, int *corrected);

/* Under MPI, a line per rank for the run report, gathered on world rank 0 into *lines
 * ([world size][RTM_RANK_LINE], malloc'd; NULL on the other ranks and on one rank): its
 * host, `device` (or the backend), group, planes of the propagator's slab, the memory the propagator took
 * against the preflight's estimate (rtm_propagator_bytes), how a device's planes travel to
 * each neighbour and how many receivers (sinc, cut between ranks) are recorded in parts.
 * Collective (rank_lines.c). */
enum { RTM_RANK_LINE = 400 };
int rtm_propagator_rank_lines(const rtm_propagator_t *prop, const rtm_config_t *cfg,
                              const char *device, char **lines);

/* Whether every one of values[count] is finite (the host's threads share the values): an
 * unstable run's wavefields and traces are refused by it. */
int rtm_values_finite(const float *values, size_t count);

/* The point operator of sources and receivers the config asks for (points.interpolation,
 * points.radius): the propagators' and the migration's receiver-side injection's. */
rtm_point_operator_t rtm_config_point_operator(const rtm_config_t *cfg);

/* Moves the propagator to another shot at source_m: the backend's fields and traces reset,
 * the source (its wavelet scaled with v^2 at the new position) and the receivers of that
 * shot (rtm_receiver_positions) handed to the backend. Bit for bit, the run that follows
 * equals a propagator created for that source. A shot the geometry refuses (outside the
 * volume, a patch with no receiver inside) changes nothing; a backend failure after the
 * reset leaves the propagator fit only for rtm_propagator_destroy. */
int rtm_propagator_set_shot(rtm_propagator_t *prop, const rtm_config_t *cfg,
                            const double source_m[3]);

/* The fields a snapshots.fields or receivers.fields value names ("p", "q" or "p,q": the
 * schema checks the spelling, the validation refuses q for iso) as an RTM_FIELD_BIT mask. */
unsigned rtm_field_mask(const char *list);
/* How many fields a mask holds (0, 1 or 2). */
int rtm_field_count(unsigned mask);

#ifdef __cplusplus
}
#endif

#endif
