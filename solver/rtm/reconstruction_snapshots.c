/* rtm.reconstruction = snapshots: S(n) stored every imaging step of the forward pass in an
 * rtm_snapshots_t (memory.imaging, rtm.snapshot_precision) and handed back in the backward
 * pass; nothing is recomputed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "imaging_impl.h"
#include "reconstruction_impl.h"
#include "rtm_status.h"

static int slot_of(const rtm_reconstruction_plan_t *plan) {
  return plan->steps / plan->imaging_step;
}

typedef struct {
  rtm_snapshots_t *store;
  const rtm_grid_t *grid;
  int imaging_step, steps;
  int in_step; /* the step under way writes its new level into the slot itself */
  int lossy;   /* fp16 or zfp slots: the first shot's middle snapshot measures their error */
  double round_trip; /* that error (relative L2); negative before it is measured */
} snapshots_state_t;

static size_t snapshots_bytes(const rtm_reconstruction_plan_t *plan, int *on_device) {
  *on_device = plan->device >= 0 && !rtm_imaging_host_strategy(plan->strategy);
  return rtm_snapshots_bytes(plan->grid, slot_of(plan), plan->device, plan->strategy,
                             plan->precision, plan->rate, plan->read);
}

/* The imaging step at which the slots fit, beside what the store holds besides them. */
static void snapshots_advise(const rtm_reconstruction_plan_t *plan, size_t available, char *text,
                             size_t size) {
  const size_t per_slot = rtm_snapshots_slot_bytes(plan->grid, plan->precision, plan->rate);
  /* the store of no slot: the staging volume, or none for one read by its blocks */
  const size_t staging = rtm_snapshots_bytes(plan->grid, 0, plan->device, plan->strategy,
                                             plan->precision, plan->rate, plan->read);
  const size_t fit = available > staging ? (available - staging) / per_slot : 0;
  char step[64] = "not one snapshot fits";
  if (fit > 0) snprintf(step, sizeof step, "to %zu or more", (size_t)plan->steps / fit + 1);
  snprintf(text, size,
           "raise rtm.imaging_step (now %d; %s), use rtm.snapshot_precision = %s, or hold them "
           "elsewhere (memory.imaging)",
           plan->imaging_step, step,
           plan->precision == RTM_PRECISION_FP32   ? "fp16 or zfp"
           : plan->precision == RTM_PRECISION_FP16 ? "zfp"
                                                   : "zfp with a lower rtm.snapshot_rate");
}

/* The measured tables' column of the plan's equation: iso, vti, tti. */
static int equation_column(const rtm_reconstruction_plan_t *plan) {
  const rtm_equation_t equation = plan->cfg->physics.equation;
  return equation == RTM_EQUATION_ISO ? 0 : equation == RTM_EQUATION_VTI ? 1 : 2;
}

/* A zfp snapshot's compression and decompression (or decoding as it is imaged), in steps of
 * the propagation at rtm.snapshot_rate's default: zfp's shot passes less fp32's, over the
 * snapshots, in `model`'s step, by run/experiments/codec_steps.sh (docs/migration.md, "What
 * auto weighs"). cuda: one NVIDIA H200, 512^3, 1000 steps imaged every 5th; cpu: two cores
 * of the development machine (AMD EPYC), 128^3, 400 steps imaged every 4th. A wavefield
 * that fills more blocks costs more; the iso step is the cheapest, so its codec weighs most,
 * and on the cpu the codec is the C reference, a block at a time. */
static const double codec_steps_measured[2][3] = {
    /* iso, vti, tti */
    {20.1, 5.43, 2.26}, /* cpu */
    {1.82, 0.47, 0.27}, /* cuda */
};

/* An fp16 snapshot's packing (its largest value found, each value scaled and narrowed) and
 * unpacking into the staging volume on a GPU, in the same steps by the same script and runs
 * (run/experiments/codec_steps.sh, one NVIDIA H200, 512^3, 1000 steps imaged every 5th): more
 * than zfp's coding (1.90, 0.49 and 0.28 steps that day), whose blocks are 3/8 of fp16's
 * bytes and lie closer to fp32 (docs/migration.md), so that auto takes zfp before fp16 where
 * both fit. On the cpu backend not weighed: two shared cores gave 0.9 to 8.7 steps (and
 * less than nothing for tti) in one run, and its codec, the C reference, costs more. */
static const double half_steps_cuda[3] = {2.10, 0.79, 0.45}; /* iso, vti, tti */

double rtm_reconstruction_codec_steps(const rtm_reconstruction_plan_t *plan, const char **origin) {
  const double set = plan->cfg->rtm.snapshot_codec_steps;
  if (origin) *origin = isnan(set) ? "measured" : "rtm.snapshot_codec_steps";
  if (!isnan(set)) return set;
  return codec_steps_measured[plan->device >= 0][equation_column(plan)];
}

double rtm_reconstruction_format_steps(const rtm_reconstruction_plan_t *plan, const char **origin) {
  if (plan->precision == RTM_PRECISION_ZFP) return rtm_reconstruction_codec_steps(plan, origin);
  if (origin) *origin = "measured";
  if (plan->precision != RTM_PRECISION_FP16 || plan->device < 0) return 0.0;
  return half_steps_cuda[equation_column(plan)];
}

/* A GPU's step in the time PCIe takes to move a byte a cell: bytes a cell that cross between
 * page-locked host memory and the device in one step's time (memory.imaging = host, pageable,
 * is weighed by the same figures, though its copies are slower and never overlap the steps), the
 * step `model`'s propagation and the rate the pinned fp32 snapshots' passes less the device ones'
 * (50 to 55 GB/s each way): run/experiments/pinned_ways.sh, one NVIDIA H200, 512^3, 500 steps
 * imaged every 5th (EQUATIONS="iso tti vti"). So a 512^3 fp32 iso snapshot crosses in 15 steps, a
 * zfp one at 6 bits in 3. */
static const double crossing_bytes_a_step[3] = {0.259, 0.72, 1.01}; /* iso, vti, tti */

double rtm_reconstruction_crossing_steps(const rtm_reconstruction_plan_t *plan, double bytes) {
  const char *strategy = rtm_imaging_strategy(plan->strategy, plan->device);
  if (plan->device < 0 || !rtm_imaging_host_strategy(strategy)) return 0.0;
  const double cells = (double)rtm_grid_interior_cells(plan->grid);
  return cells > 0.0 ? bytes / (cells * crossing_bytes_a_step[equation_column(plan)]) : 0.0;
}

int rtm_reconstruction_copies_beside(const rtm_reconstruction_plan_t *plan) {
  return plan->device >= 0 &&
         strcmp(rtm_imaging_strategy(plan->strategy, plan->device), "pinned") == 0;
}

/* A snapshot's steps beyond the propagation: its packing (fp16, zfp) and, held in host memory
 * by a GPU, its two crossings of PCIe (out in the forward pass, back in the backward one).
 * fp32's the steps wait for; in page-locked memory fp16's and zfp's run beside the imaging
 * step's steps to the next snapshot (snapshots.c's transfer buffers), and only what outlasts
 * them shows. */
double rtm_reconstruction_snapshot_steps(const rtm_reconstruction_plan_t *plan) {
  const double slot = (double)rtm_snapshots_slot_bytes(plan->grid, plan->precision, plan->rate);
  const double coding = rtm_reconstruction_format_steps(plan, NULL);
  const double crossing = rtm_reconstruction_crossing_steps(plan, slot);
  const int beside =
      plan->precision != RTM_PRECISION_FP32 && rtm_reconstruction_copies_beside(plan);
  const double shown = !beside                         ? crossing
                       : crossing > plan->imaging_step ? crossing - plan->imaging_step
                                                       : 0.0;
  return coding + 2.0 * shown;
}

/* 2 N steps, and each snapshot's own (rtm_reconstruction_snapshot_steps). */
static double snapshots_steps_a_shot(const rtm_reconstruction_plan_t *plan) {
  return 2.0 * plan->steps + slot_of(plan) * rtm_reconstruction_snapshot_steps(plan);
}

static int snapshots_create(const rtm_reconstruction_plan_t *plan, void **state) {
  int status = RTM_OK;
  snapshots_state_t *s = calloc(1, sizeof *s);
  *state = NULL;
  if (!s) RTM_FAIL(RTM_ERR_NOMEM, "out of memory for the snapshots");
  s->imaging_step = plan->imaging_step;
  s->grid = plan->grid;
  s->steps = plan->steps;
  s->lossy = plan->precision != RTM_PRECISION_FP32;
  s->round_trip = -1.0;
  RTM_TRY(rtm_snapshots_create(plan->grid, slot_of(plan), plan->device, plan->strategy,
                               plan->precision, plan->rate, plan->read, plan->ledger, &s->store));
  *state = s;
  return RTM_OK;
fail:
  free(s);
  return status;
}

/* Level n of an imaging step written into its slot by the step itself, where the backend
 * can (fp32 slots on its device): no pack after it (a 512^3 pack read and wrote 1.07 GB,
 * 0.5 s of an 8-shot survey's forward passes on an H200). */
static int snapshots_before_forward(void *state, rtm_propagator_t *source, int n) {
  snapshots_state_t *s = state;
  if (n % s->imaging_step != 0 || !source->backend->copy_next_level) return RTM_OK;
  float *slot = rtm_snapshots_device_slot(s->store, n / s->imaging_step - 1);
  if (!slot) return RTM_OK;
  const int status = source->backend->copy_next_level(source->state, slot);
  if (status == RTM_ERR_UNSUPPORTED) return RTM_OK; /* packed after the step */
  s->in_step = status == RTM_OK;
  return status;
}

static int snapshots_after_forward(void *state, rtm_propagator_t *source, int n) {
  int status = RTM_OK;
  snapshots_state_t *s = state;
  rtm_field_view_t view;
  if (n % s->imaging_step != 0) return RTM_OK;
  if (s->in_step) { /* taken by the step: the next steps write no copy */
    s->in_step = 0;
    return source->backend->copy_next_level(source->state, NULL);
  }
  RTM_TRY(source->backend->view_field(source->state, RTM_FIELD_P, RTM_LEVEL_CURRENT, &view));
  const int slot = n / s->imaging_step - 1, slots = s->steps / s->imaging_step;
  RTM_TRY(rtm_snapshots_save(s->store, slot, &view));
  /* the error the stored precision costs, where the user sees it: once, at the middle of the
   * first shot, where the wavefield has spread */
  if (s->lossy && s->round_trip < 0.0 && slot == slots / 2) {
    RTM_TRY(rtm_snapshots_round_trip(s->store, slot, &view, &s->round_trip));
    rtm_log_info("rtm.snapshot_precision = %s: a snapshot's round trip is %.2e relative L2 "
                 "(the first shot's, at step %d)",
                 rtm_snapshots_format(s->store), s->round_trip, n);
  }
fail:
  return status;
}

static int snapshots_source_at(void *state, rtm_propagator_t *source, int n, int wanted,
                               const float **volume, rtm_layout_t *layout) {
  int status = RTM_OK;
  snapshots_state_t *s = state;
  (void)source;
  if (!wanted) return RTM_OK;
  RTM_TRY(rtm_snapshots_get(s->store, n / s->imaging_step - 1, volume));
  *layout = rtm_layout_dense(s->grid);
fail:
  return status;
}

/* zfp slots on a device: decoded as they are imaged, no fp32 volume written and read back
 * (on an H200 at 512^3, tti imaged every step: 1.76 -> 1.33 ms an imaging step). */
static int snapshots_image_at(void *state, int n, rtm_image_t *image, const float *receiver,
                              rtm_layout_t receiver_layout) {
  snapshots_state_t *s = state;
  const void *blocks = NULL;
  void *scratch = NULL;
  int rate = 0;
  const int status =
      rtm_snapshots_device_blocks(s->store, n / s->imaging_step - 1, &blocks, &rate, &scratch);
  if (status != RTM_OK) return status;
  return rtm_image_accumulate_blocks(image, blocks, rate, scratch, receiver, receiver_layout);
}

static int snapshots_stored_sources(const void *state, const float **first, size_t *stride) {
  return rtm_snapshots_volumes(((const snapshots_state_t *)state)->store, first, stride);
}

const char *rtm_reconstruction_snapshots_format(const void *state) {
  return rtm_snapshots_format(((const snapshots_state_t *)state)->store);
}

double rtm_reconstruction_snapshots_round_trip(const void *state) {
  return ((const snapshots_state_t *)state)->round_trip;
}

static void snapshots_destroy(void *state) {
  snapshots_state_t *s = state;
  if (!s) return;
  rtm_snapshots_destroy(s->store);
  free(s);
}

const rtm_reconstruction_ops_t rtm_reconstruction_snapshots = {
    .name = "snapshots",
    .bytes = snapshots_bytes,
    .advise = snapshots_advise,
    .steps_a_shot = snapshots_steps_a_shot,
    .create = snapshots_create,
    .before_forward = snapshots_before_forward,
    .after_forward = snapshots_after_forward,
    .source_at = snapshots_source_at,
    .image_at = snapshots_image_at,
    .stored_sources = snapshots_stored_sources,
    .finish_shot = NULL,
    .recomputed_steps = NULL,
    .destroy = snapshots_destroy,
};
