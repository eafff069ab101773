/* rtm_migration.h - reverse-time migration of one shot after another on one backend.
 *
 * Two propagators share the grid, the model, dt and the absorbing layer: the source side
 * steps the shot's Ricker forward and stores the source wavefield S every imaging step
 * (rtm.reconstruction = snapshots), rebuilds it backwards inside its shell saved every step
 * (boundary), or keeps checkpoints of its state from which S is recomputed in the backward
 * pass (checkpoint); the receiver side steps the same kernel over the time-reversed observed
 * gather, injected at the adjoint receiver taps (rtm_imaging.h says why that is the adjoint
 * of recording). After receiver step tau its current level holds R at time n = steps - tau,
 * which meets S(n) in the imaging condition
 *   I(x) += S(x, n) R(x, n),   L(x) += S(x, n)^2,   n = k, 2k, ... <= steps (k = imaging step)
 * accumulated where the fields live, summed over shots. The app reads the observed gathers
 * (io) and writes the image; the gathers are checked, brought to the modelling dt and warped
 * here (rtm_observed_at_modelling_dt), then muted (rtm_migration_prepare); this drives the
 * steps and holds no file. */
#ifndef RTM_MIGRATION_H
#define RTM_MIGRATION_H

#include <stddef.h>

#include "rtm_config.h"
#include "rtm_imaging.h"
#include "rtm_propagator.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The planes a migration's z-slabs are cut in multiples of (rtm_mpi_slab_aligned): the
 * depth of a zfp snapshot block, so that every rank's blocks are the ones a single rank
 * cuts, and the zfp snapshots, like the other reconstructions, give one rank's image to
 * the bit on any rank count. */
int rtm_migration_slab_planes(void);

/* Wall seconds of one shot's phases: forward (with the snapshot saves), backward (the
 * receiver side's steps, and the source side's recomputation) and imaging (the imaging
 * condition, measured with the queued work drained before and after each application); and
 * the forward steps the source side took in the backward pass (rtm.reconstruction =
 * checkpoint: the recomputation; 0 for snapshots). */
typedef struct {
  double forward_s, backward_s, imaging_s;
  long long recomputed_steps;
  double gathers_s; /* of imaging_s, the subsurface-offset gathers' (rtm.offset_lags) */
} rtm_shot_timing_t;

/* Called after every step of either pass with the steps done in the shot (forward and
 * backward together: 2 x steps in all); NULL for none. */
typedef void (*rtm_migration_progress_t)(void *context, int steps_done);

typedef struct rtm_migration rtm_migration_t;

/* The two propagators, the snapshot store and the image for cfg's grid and model; dt, the
 * layer and the backend as `rtm3d model` resolves them. An imaging step of 0 (auto) becomes
 * the largest that samples 2.5 x source.frequency four times a period. */
int rtm_migration_create(const rtm_config_t *cfg, const rtm_grid_t *grid, const rtm_model_t *model,
                         rtm_migration_t **migration);
/* rtm_migration_create with `host_bytes` the caller keeps in host memory beside the
 * migration, `host_of` naming them for messages (e.g. "the image's host slabs and sums"):
 * with the store in host memory the preflight counts them beside it (auto then takes a store
 * that leaves them room), with it on a device it refuses when they alone do not fit. */
int rtm_migration_create_beside(const rtm_config_t *cfg, const rtm_grid_t *grid,
                                const rtm_model_t *model, size_t host_bytes, const char *host_of,
                                rtm_migration_t **migration);
void rtm_migration_destroy(rtm_migration_t *migration);
/* Waits for the steps both propagators have queued (a GPU's run ahead of the host), e.g.
 * before a progress line, so that its rate counts steps done. */
int rtm_migration_wait(rtm_migration_t *migration);

/* Migrates one shot at source_m with its receivers [count][3] and observed gather
 * [count][steps + 1] at the modelling dt, adding its image to the run's. */
int rtm_migration_shot(rtm_migration_t *migration, const double source_m[3],
                       const double *receivers_m, int count, const float *observed,
                       rtm_migration_progress_t progress, void *progress_context,
                       rtm_shot_timing_t *timing);

/* A shot's receiver side made on the host: the receivers' adjoint taps and the gather
 * reversed in time, what the receiver side injects. Making it reads the migration's grid,
 * model and layer alone, never its device or fields, and calls no MPI: another thread may
 * make the next shot's while this one propagates (migrate's I/O thread does: 32 ms a shot of
 * 4096 receivers on an H200 host, with the mute 53 ms). */
typedef struct rtm_receiver_side rtm_receiver_side_t;
int rtm_migration_receiver_side(const rtm_migration_t *migration, const double *receivers_m,
                                int count, const float *observed, rtm_receiver_side_t **side);
void rtm_receiver_side_destroy(rtm_receiver_side_t *side);
/* rtm_migration_shot with its receiver side made: *side is destroyed (and NULL) once the
 * backend holds its copy, before the steps, so that the next shot's may be made meanwhile
 * without two in host memory (a plane of receivers with sinc taps takes GBs). */
int rtm_migration_shot_side(rtm_migration_t *migration, const double source_m[3],
                            rtm_receiver_side_t **side, rtm_migration_progress_t progress,
                            void *progress_context, rtm_shot_timing_t *timing);

/* Called by rtm_migration_shot(_side) between a shot's passes once its illumination is
 * whole, where the stored sources give it (fp32 snapshots beside the fields: one pass over
 * them after the forward pass), and not otherwise: rtm_migration_read(migration, NULL,
 * illumination) then gives the shot's illumination, which its backward pass leaves as it
 * is, so that it can be taken and written while that pass runs. A status other than RTM_OK
 * stops the shot with it. `lit` NULL: none (the default). */
typedef int (*rtm_migration_lit_t)(void *context);
void rtm_migration_on_lit(rtm_migration_t *migration, rtm_migration_lit_t lit, void *context);

/* For tests of rtm.reconstruction: the source side alone for the shot at source_m, forward
 * then backward as rtm_migration_shot runs it, no image made; at every imaging step n
 * (n = steps, ..., 1 with n % rtm.imaging_step == 0) S(n) of p as the reconstruction hands it
 * back goes to `visit`, dense [nz_local][ny][nx] in host memory, valid during the call. A
 * visit's status other than RTM_OK stops the replay and is returned. */
typedef int (*rtm_migration_visit_t)(void *context, int n, const float *source_p);
int rtm_migration_replay_source(rtm_migration_t *migration, const double source_m[3],
                                rtm_migration_visit_t visit, void *context);

/* The image and illumination accumulated since the last clear, dense [nz_local][ny][nx] (either may
 * be NULL), zero outside the non-absorbing interior (the absorbing layer's boundary.width cells
 * inside every face), where the source wavefield is not the forward pass's. */
int rtm_migration_read(rtm_migration_t *migration, float *image, float *illumination);
/* rtm_migration_read started without waiting (rtm_image_hold), and with `gathers` (NULL or,
 * with rtm.offset_lags, an array as rtm_migration_gathers_read fills) the gathers' read
 * (rtm_gathers_hold): on a GPU the copies into the arrays (page-locked for them to run
 * alongside) go on behind the next shot's steps; rtm_migration_hold_wait (any thread)
 * returns once the arrays hold the sums as rtm_migration_read and rtm_migration_gathers_read
 * give them. The arrays must not be touched in between. */
int rtm_migration_hold(rtm_migration_t *migration, float *image, float *illumination,
                       float *gathers);
int rtm_migration_hold_wait(rtm_migration_t *migration);
/* Host arrays of `bytes` each page-locked for rtm_migration_hold's copies, from the
 * migration's device (any thread may call it); *pinned says whether they are (on the cpu
 * backend, or when the memory could not be locked, they stay as they are: the copies then
 * work, only not behind the steps). rtm_mem_host_unpin each when *pinned. */
int rtm_migration_pin_host(const rtm_migration_t *migration, float *image, float *illumination,
                           size_t bytes, int *pinned);
/* The same for the gathers' array of rtm_migration_hold (rtm_gather_plan_cells floats):
 * *pinned 0 without gathers, on the cpu backend, or when it could not be locked. */
int rtm_migration_pin_gathers(const rtm_migration_t *migration, float *gathers, int *pinned);
/* Zeroes the accumulation for the next shot (after a hold's copy; each shot's image and
 * illumination are summed over the shots on the host, rtm_sums_add). */
int rtm_migration_clear(rtm_migration_t *migration);
/* rtm.offset_lags > 0: the plan of the gathers accumulated beside the image (else NULL), and
 * the gathers since the last clear, dense [ncip][nh][nh][nz_local] (rtm_imaging.h; zero
 * where x - h or x + h lies in the absorbing layer). Each shot's are summed over the shots
 * by the caller (rtm_sums_add), as the image is; rtm_migration_clear zeroes them too. */
const rtm_gather_plan_t *rtm_migration_gather_plan(const rtm_migration_t *migration);
int rtm_migration_gathers_read(rtm_migration_t *migration, float *gathers);
/* Bytes of the imaging steps the gathers hold beside them on a GPU (two or three fields of
 * the rank's planes, rtm_gathers_held_bytes); 0 without gathers or on the host. */
size_t rtm_migration_gathers_held_bytes(const rtm_migration_t *migration);

double rtm_migration_dt(const rtm_migration_t *migration);
int rtm_migration_steps(const rtm_migration_t *migration);
int rtm_migration_imaging_step(const rtm_migration_t *migration);
/* vp at a point (trilinear, as the source scaling uses it): the mute's auto velocity. On
 * z-slabs a collective of the slab's ranks (every one calls it alike, from the thread that
 * steps: MPI is called from that thread alone). */
double rtm_migration_velocity_at(const rtm_migration_t *migration, const double position_m[3]);
/* The direct-arrival mute's velocity for the shot at source_m: rtm.mute_velocity, or vp
 * there (rtm_migration_velocity_at, a collective on z-slabs); NaN without rtm.mute. */
double rtm_migration_mute_velocity(const rtm_migration_t *migration, const double source_m[3]);
/* Every allocation of the run in one ledger (malloc'd; rtm_mem_ledger_release it): the
 * source side's and the receiver side's, labelled so, then the image and the snapshots. */
int rtm_migration_memory(const rtm_migration_t *migration, rtm_mem_ledger_t *memory);
/* z-slabs: the seconds of the split steps' phases (rtm_propagator_phase_seconds) of both
 * sides' propagators, and of the host's waits in their halo exchanges, summed. */
int rtm_migration_phase_seconds(rtm_migration_t *migration, double seconds[RTM_PHASE_COUNT],
                                double *halo_s);
/* The backend's name and where it runs, for the report. */
const char *rtm_migration_backend(const rtm_migration_t *migration);
/* Makes the migration's device current on the calling thread (a thread of the caller's own
 * starts on device 0): for work on its traces from another thread. RTM_OK on the cpu. */
int rtm_migration_use_device(const rtm_migration_t *migration);
void rtm_migration_describe(const rtm_migration_t *migration, char *text, size_t size);
/* rtm.reconstruction as it runs ("snapshots", "boundary", "checkpoint"; auto resolved). */
const char *rtm_migration_reconstruction(const rtm_migration_t *migration);
/* rtm.snapshot_precision as the snapshots are stored (auto may take fp16 or zfp where fp32
 * snapshots do not fit); the config's for the other reconstructions. */
rtm_precision_t rtm_migration_snapshot_precision(const rtm_migration_t *migration);
/* rtm.snapshot_rate as zfp snapshots are coded (auto may take a lower rate where the
 * configured one does not fit); the config's otherwise. */
int rtm_migration_snapshot_rate(const rtm_migration_t *migration);
/* The relative L2 round trip of a stored snapshot (fp16, zfp: measured once, in the first
 * shot's forward pass), negative where none was measured (fp32, other reconstructions). */
double rtm_migration_snapshot_error(const rtm_migration_t *migration);
/* With rtm.reconstruction = snapshots (as run), how they are stored ("fp32", "fp16", "zfp at
 * 6 bits a value"); else NULL. */
const char *rtm_migration_snapshot_format(const rtm_migration_t *migration);
/* What rtm.reconstruction = auto weighs `way` at: the steps of propagation, the two sides'
 * together, a shot of `steps` steps imaged every `imaging_step` takes on `grid` with the
 * fields on CUDA device `device` (-1: the cpu backend), the store in cfg's memory.imaging
 * strategy and, for snapshots, in `precision` (zfp at `rate` bits a value). Snapshots and
 * boundary: arithmetic alone, no memory allocated and no device asked (checkpoint's count of
 * states asks what memory is free, counting nothing else beside it). */
double rtm_migration_weighed_steps(const rtm_config_t *cfg, const rtm_grid_t *grid, int device,
                                   int steps, int imaging_step, rtm_reconstruction_t way,
                                   rtm_precision_t precision, int rate);
/* The reconstruction's store with the image where it counts them (with the store on the
 * device, or all in host memory on the cpu backend): the preflight's estimate, and what they
 * took, measured on the device as the drop of its free memory across their allocation, in
 * host memory from the ledger (*on_device says which). */
void rtm_migration_store_bytes(const rtm_migration_t *migration, size_t *estimate, size_t *measured,
                               int *on_device);

/* The observed gather [count][steps + 1] at the modelling dt made ready for
 * back-propagation as the config says: the direct arrival muted (rtm.mute: at
 * mute_velocity_m_s, rtm_migration_mute_velocity's, delay source.delay or 1.2 /
 * source.frequency, taper rtm.mute_taper or 1.5 / source.frequency), then the phase
 * correction (rtm.phase_correction). Host work alone, no MPI: any thread, as
 * rtm_migration_receiver_side. */
void rtm_migration_prepare(const rtm_migration_t *migration, const double source_m[3],
                           double mute_velocity_m_s, const double *receivers_m, int count,
                           float *observed);

/* ---- the observed data ---- */
/* Shot `shot`'s gather as rtm.observed holds it: recorded from source_m by count receivers
 * at receivers_m [count][3], each trace `samples` samples at dt_s [count][samples]. */
typedef struct {
  int shot, count, samples;
  double dt_s;
  const float *traces;
  const double *source_m, *receivers_m;
} rtm_observed_gather_t;

/* The gather is the acquisition's shot (its source at acquisition_source_m, the receivers
 * cfg gives it on grid, each to a millimetre: positions go through text and back), and
 * lasts the migration's time.steps + 1 samples of dt_s (once resampled when its dt
 * differs), and, when it holds its traces (not NULL), its largest sample keeps the image
 * in float32's precision; otherwise RTM_ERR_INPUT naming rtm.observed and the shot. */
int rtm_observed_check(const rtm_config_t *cfg, const rtm_grid_t *grid, double dt_s,
                       const double acquisition_source_m[3], const rtm_observed_gather_t *gather);

/* The gather at the modelling dt, [count][time.steps + 1] (malloc'd into *observed):
 * resampled on `backend`'s trace pipeline ("cuda" or else "cpu") when its dt differs, cut to
 * the modelling window, its end tapered (rtm_end_taper, rtm_end_taper_seconds), then warped
 * as time.dispersion_correction says (full: forward, like the source wavelet;
 * rtm_dispersion_warp_observed). Shorter than the window is an error. */
int rtm_observed_at_modelling_dt(const rtm_config_t *cfg, const char *backend, double dt_s,
                                 const rtm_observed_gather_t *gather, float **observed);

/* Mutes the direct arrival: with t_d = |r - s| / velocity + delay + taper_s (the arrival's
 * peak at offset / velocity + delay, delay the Ricker's centre time t0, plus one taper
 * length, past the wavelet's end when taper_s >= 1.2 / frequency), sample k of receiver r
 * is zero while k dt < t_d, rises as a half cosine over the next taper_s and is kept from
 * then on. */
void rtm_mute_direct(float *traces, int count, int samples, double dt_s, const double source_m[3],
                     const double *receivers_m, double velocity_m_s, double delay_s,
                     double taper_s);

/* The length of the observed gathers' end taper, seconds: rtm.end_taper, or where auto
 * 0.5 / source.frequency, at most half the record the run uses (time.steps x dt_s). */
double rtm_end_taper_seconds(const rtm_config_t *cfg, double dt_s);

/* Tapers the last taper_s seconds of every trace [count][samples] at dt_s: sample k, t =
 * (samples - 1 - k) dt_s before the last, is multiplied by 0.5 - 0.5 cos(pi t / taper_s)
 * while t < taper_s, so that the last sample is zero. A record cut while reflections arrive
 * starts the back-propagation with a step, whose energy at every frequency the imaging step
 * folds into the image (docs/migration.md, "The imaging step and the record's end"); 0 does
 * nothing. */
void rtm_end_taper(float *traces, int count, int samples, double dt_s, double taper_s);

/* -d/dt of every trace (centred differences, zero outside the trace): the phase correction
 * of the 3D image. Back-propagating the gathers as recorded images a reflector with a
 * 90-degree phase, a positive lobe above the interface and a negative one below it (the 3D
 * point-source summation's phase, which Kirchhoff migration corrects with a time
 * derivative of the data); after -d/dt the image is zero phase, its peak at the interface,
 * positive where the velocity increases with depth. */
void rtm_phase_correction(float *traces, int count, int samples, double dt_s);

#ifdef __cplusplus
}
#endif

#endif
