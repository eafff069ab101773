/* reconstruction_impl.h - private to solver/rtm: how the source wavefield S(n) comes back in
 * the backward pass of a migration (rtm.reconstruction). Each way is a const table of
 * function pointers (reconstruction_snapshots.c, reconstruction_checkpoint.c), chosen by name
 * in migration.c.
 *
 * The driver (migration.c) calls, per shot:
 *   after_forward(n)   after the source side's forward step to level n, n = 1 .. steps, with
 *                      the source propagator holding current = S(n), previous = S(n - 1);
 *   source_at(n)       in the backward pass for n = steps, steps - 1, ..., 1, in that order
 *                      and each once, whether or not n is an imaging step (a reconstruction
 *                      that steps backward needs every level); when `wanted` (n is an
 *                      imaging step) it returns S(n) in the fields' memory with its layout.
 *                      At n = steps the source propagator still holds the forward pass's
 *                      last levels, current = S(steps), previous = S(steps - 1);
 *   image_at(n)        optional, for an imaging step whose condition is not taken by the
 *                      receiver's next step: images S(n) itself in place of source_at(n)
 *                      (which is then not called for that n);
 *   finish_shot()      after source_at(1): leaves the source propagator fit for the next
 *                      shot's forward pass (e.g. its absorbing layer back in place).
 * Work on device memory goes on the legacy default stream, as the imaging does
 * (rtm_field_view_t). The source propagator's time levels are its own to use in the backward
 * pass: the next shot resets them (rtm_propagator_set_shot). */
#ifndef RTM_RECONSTRUCTION_IMPL_H
#define RTM_RECONSTRUCTION_IMPL_H

#include <stddef.h>

#include "rtm_imaging.h"
#include "rtm_propagator.h"

/* What a reconstruction is made for: the run's grid and steps, where the fields live, the
 * imaging strategy and precision (memory.imaging, rtm.snapshot_precision), the config (its
 * rtm.* keys) and the source side's absorbing layer. */
typedef struct {
  const rtm_config_t *cfg;
  const rtm_grid_t *grid;
  const rtm_boundary_t *boundary;
  int steps, imaging_step;
  int device; /* the fields' memory: -1 host, else that CUDA device */
  const char *strategy;
  rtm_precision_t precision;
  int rate; /* precision zfp: bits a value (rtm.snapshot_rate) */
  rtm_snapshots_read_t read; /* snapshots: whether the backward pass reads volumes or blocks */
  rtm_mem_ledger_t *ledger;
  size_t host_beside; /* kept in host memory beside a store there (rtm_migration_create_beside) */
  /* rtm.reconstruction = auto: what is still to be allocated where the fields live (the
   * propagators, the image, the gathers), which an estimate of how many states fit (checkpoint's
   * steps_a_shot) leaves room for; 0 once they are allocated. */
  size_t fields_beside;
} rtm_reconstruction_plan_t;

typedef struct {
  const char *name; /* as rtm.reconstruction spells it */
  /* The bytes it would hold, for the preflight; *on_device: in device memory (else host). */
  size_t (*bytes)(const rtm_reconstruction_plan_t *plan, int *on_device);
  /* Whether it can serve this run at all, else why not in `why` (create refuses the same run
   * with the keys to change); rtm.reconstruction = auto passes over it. NULL: always. */
  int (*usable)(const rtm_reconstruction_plan_t *plan, char *why, size_t size);
  /* When bytes() exceeds `available` (the memory free there less the image's): the settings
   * that shrink it, one clause for the preflight's refusal. May be NULL. */
  void (*advise)(const rtm_reconstruction_plan_t *plan, size_t available, char *text, size_t size);
  /* The steps of propagation, the two sides' together, a shot takes this way: what
   * rtm.reconstruction = auto weighs the ways that fit by (snapshots 2 N, and zfp's coding
   * and the crossings of a store in a GPU's host memory counted in steps; boundary 3 N, more
   * where its shells' crossings outlast the steps; checkpoint 2 N and its recomputation). */
  double (*steps_a_shot)(const rtm_reconstruction_plan_t *plan);
  int (*create)(const rtm_reconstruction_plan_t *plan, void **state);
  /* Before the forward step that makes level n (a snapshot may be taken in that step's own
   * kernels, rtm_backend_ops_t's copy_next_level); NULL: nothing to do. */
  int (*before_forward)(void *state, rtm_propagator_t *source, int n);
  int (*after_forward)(void *state, rtm_propagator_t *source, int n);
  int (*source_at)(void *state, rtm_propagator_t *source, int n, int wanted, const float **volume,
                   rtm_layout_t *layout);
  /* In place of source_at(n)'s volume and the accumulation, where the store can do better:
   * the imaging condition of S(n) and the receiver field (its layout) into `image` straight
   * from the store (zfp blocks decoded as they are imaged). RTM_ERR_UNSUPPORTED, nothing
   * done, where it cannot: then the driver calls source_at. May be NULL. */
  int (*image_at)(void *state, int n, rtm_image_t *image, const float *receiver,
                  rtm_layout_t receiver_layout);
  /* The sources the backward pass images, all held as fp32 volumes where the image is: the
   * first's dense volume and the floats from one to the next (rtm_snapshots_volumes; the k-th
   * is S((k + 1) imaging_step)), returning how many; 0 where they are not. The driver then
   * adds their illumination in one pass between the shot's forward and backward passes
   * (rtm_image_illuminate) instead of at every imaging step: they are all stored by then, and
   * the backward pass must leave them as they are. May be NULL. */
  int (*stored_sources)(const void *state, const float **first, size_t *stride);
  int (*finish_shot)(void *state, rtm_propagator_t *source); /* may be NULL */
  /* Forward steps of the source side in the last shot's backward pass (the recomputation);
   * NULL for none. */
  long long (*recomputed_steps)(const void *state);
  /* The bytes it holds once created, when it chose them there (checkpoints with
   * rtm.checkpoints = 0 take as many as fit, where bytes() counts one); NULL: bytes(). */
  size_t (*held_bytes)(const void *state);
  void (*destroy)(void *state);
} rtm_reconstruction_ops_t;

extern const rtm_reconstruction_ops_t rtm_reconstruction_snapshots;
/* Of a state of rtm_reconstruction_snapshots: the snapshots' format (rtm_snapshots_format),
 * and the relative L2 round trip of one, measured in the first shot where the format is
 * lossy (negative before, and for fp32). */
const char *rtm_reconstruction_snapshots_format(const void *state);
double rtm_reconstruction_snapshots_round_trip(const void *state);
/* What compressing and decompressing one zfp snapshot costs in steps of the propagation, for
 * the plan's backend and equation: rtm.snapshot_codec_steps, or for auto the figure measured
 * (the table in reconstruction_snapshots.c). `origin`, when not NULL, says which. */
double rtm_reconstruction_codec_steps(const rtm_reconstruction_plan_t *plan, const char **origin);
/* What packing and unpacking one snapshot costs in the plan's format, in steps of the
 * propagation: zfp's coding (rtm_reconstruction_codec_steps), fp16's conversions on a GPU
 * (measured, the table in reconstruction_snapshots.c; on the cpu backend not weighed), fp32's
 * nothing. */
double rtm_reconstruction_format_steps(const rtm_reconstruction_plan_t *plan, const char **origin);
/* The steps of the propagation that `bytes` take to cross PCIe between a GPU and the plan's
 * store in host memory (memory.imaging = pinned or host), by the figure measured for the
 * equation (reconstruction_snapshots.c); 0 where the store lies with the fields. */
double rtm_reconstruction_crossing_steps(const rtm_reconstruction_plan_t *plan, double bytes);
/* Whether copies between the plan's store in host memory and the GPU run beside the steps: in
 * page-locked memory (memory.imaging = pinned; not pageable `host`, whose copies hold the
 * host thread). */
int rtm_reconstruction_copies_beside(const rtm_reconstruction_plan_t *plan);
/* One snapshot's steps beyond the propagation, in the plan's format and memory: its packing
 * (rtm_reconstruction_format_steps) and, in host memory of a GPU, its crossings out and back. */
double rtm_reconstruction_snapshot_steps(const rtm_reconstruction_plan_t *plan);
extern const rtm_reconstruction_ops_t rtm_reconstruction_checkpoint;
extern const rtm_reconstruction_ops_t rtm_reconstruction_boundary;

#endif
