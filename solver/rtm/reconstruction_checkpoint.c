/* rtm.reconstruction = checkpoint: S(n) recomputed from checkpoints of the source side on
 * the optimal binomial schedule (rtm_revolve.h) for K of them (rtm.checkpoints).
 *
 * A checkpoint is a whole state of the source propagator: both time levels of every field
 * (p; p and q for vti/tti), each the padded array as the backend keeps it, halo included, so
 * that a restored state steps exactly as the stored one did. Writing them back through
 * view_field into CURRENT and PREVIOUS restores the backend's roles of the levels too. The K
 * slots are one allocation of memory.imaging's strategy (host beside a cpu backend; device,
 * vmm, managed, ... beside cuda); copies on the device go on the legacy default stream
 * (imaging_cuda.h), ordered with the steps.
 *
 * Time points. Only S(n) at the imaging steps n = j k is ever wanted, so the schedule runs
 * over the points j = 0 .. T, point j at step min(j k, steps), T = ceil(steps / k) (the last
 * point is where the forward pass ends, an imaging step or not), and an advance is k steps.
 * A checkpoint between two imaging steps would do no better than one at the next imaging
 * step: the sweep that stores it goes on to an imaging step, and every restart from it
 * would step the difference again. Point 0 is the zero state of a shot's reset fields,
 * restored by zeroing: it takes no slot, so the schedule's snapshots are the K slots and it.
 * The recomputation is k (t(T + 1, K + 1) - T) steps a shot (rtm_revolve.h).
 *
 * Steps are deterministic (each cell's float operations are fixed, whatever the threads),
 * and a recomputed step `it` injects the wavelet sample `it` as the forward pass did, so a
 * recomputed S(n) equals the forward pass's bit for bit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "imaging_cuda.h"
#include "imaging_impl.h"
#include "reconstruction_impl.h"
#include "rtm_revolve.h"
#include "rtm_mpi.h"
#include "rtm_status.h"

enum { LEVELS = 2 };
/* rtm.checkpoints = 0 takes this share of the memory free when the store is made (after the
 * propagators and the image): the rest is headroom for what a shot allocates later (the trace
 * pipeline's buffers). */
static const double auto_share = 0.9;

typedef struct {
  const rtm_grid_t *grid;
  int steps, imaging_step, device, fields;
  size_t state_bytes; /* one checkpoint */
  rtm_allocation_t slots;
  rtm_revolve_schedule_t schedule;
  int next;     /* the schedule's next action */
  int position; /* the point the source side is at */
  long long recomputed_steps;
} checkpoint_state_t;

typedef enum { STATE_STORE, STATE_RESTORE, STATE_ZERO } state_move_t;

static int field_count(const rtm_config_t *cfg) {
  return cfg->physics.equation == RTM_EQUATION_ISO ? 1 : 2;
}

static int last_point(const rtm_reconstruction_plan_t *plan) {
  return (int)(((long long)plan->steps + plan->imaging_step - 1) / plan->imaging_step);
}

static size_t state_bytes(const rtm_reconstruction_plan_t *plan) {
  return (size_t)field_count(plan->cfg) * LEVELS * plan->grid->padded_cells * sizeof(float);
}

/* Slots beyond T - 1 are never used (rtm_revolve_plan caps them too). */
static int useful_slots(const rtm_reconstruction_plan_t *plan, int slots) {
  const int most = last_point(plan) - 1;
  return slots < most ? slots : most > 0 ? most : 0;
}

static const char *fields_named(const rtm_reconstruction_plan_t *plan) {
  return field_count(plan->cfg) > 1 ? "p and q" : "p";
}

/* rtm.checkpoints, or with 0 (as many as fit) the least the preflight must find room for. */
static size_t checkpoint_bytes(const rtm_reconstruction_plan_t *plan, int *on_device) {
  const int requested = plan->cfg->rtm.checkpoints > 0 ? plan->cfg->rtm.checkpoints : 1;
  const size_t slots = (size_t)useful_slots(plan, requested), state = state_bytes(plan);
  *on_device = plan->device >= 0 && !rtm_imaging_host_strategy(plan->strategy);
  if (slots == 0) return 0;
  if (state > SIZE_MAX / 4 / slots) return SIZE_MAX / 4;
  return rtm_imaging_taken_bytes(plan->strategy, slots * state);
}

static void checkpoint_advise(const rtm_reconstruction_plan_t *plan, size_t available, char *text,
                              size_t size) {
  const size_t state = state_bytes(plan), fit = available / state;
  if (fit == 0)
    snprintf(text, size,
             "not one checkpoint (%.3g GB: both time levels of %s) fits: hold them elsewhere "
             "(memory.imaging) or use rtm.reconstruction = snapshots",
             state / 1e9, fields_named(plan));
  else if (plan->cfg->rtm.checkpoints > 0)
    snprintf(text, size,
             "lower rtm.checkpoints (now %d; %zu of %.3g GB fit), set it to 0 (as many as fit), "
             "or hold them elsewhere (memory.imaging)",
             plan->cfg->rtm.checkpoints, fit, state / 1e9);
  else /* as many as fit already (probe W, W1: it was advised to set the 0 it held) */
    snprintf(text, size,
             "%zu checkpoint%s of %.3g GB fit, fewer than the recomputation needs: hold them "
             "elsewhere (memory.imaging) or free memory",
             fit, fit == 1 ? "" : "s", state / 1e9);
}

/* Whether K is counted from the memory free: rtm.checkpoints = 0 and a slot of use. */
static int counted_slots(const rtm_reconstruction_plan_t *plan) {
  return plan->cfg->rtm.checkpoints == 0 && useful_slots(plan, 1) > 0;
}

/* K on this rank: rtm.checkpoints, or for 0 as many as fit in auto_share of the memory free
 * now (*free_bytes), less what is not yet allocated beside them: the caller's arrays in host
 * memory (plan->host_beside) and, with the fields, plan->fields_beside. */
static int slots_here(const rtm_reconstruction_plan_t *plan, size_t state, int *slots,
                      size_t *free_bytes) {
  int status = RTM_OK;
  *free_bytes = 0;
  *slots = useful_slots(plan, plan->cfg->rtm.checkpoints);
  if (!counted_slots(plan)) return RTM_OK;
  RTM_TRY(rtm_imaging_free_bytes(plan->strategy, plan->device, free_bytes));
  *free_bytes = rtm_config_free_within_limit(plan->cfg, *free_bytes);
  const int in_host = plan->device < 0 || rtm_imaging_host_strategy(plan->strategy);
  const int with_fields = plan->device < 0 || !in_host;
  const size_t beside = (in_host ? plan->host_beside : 0) + (with_fields ? plan->fields_beside : 0);
  *free_bytes = *free_bytes > beside ? *free_bytes - beside : 0;
  const size_t fit = (size_t)(auto_share * (double)*free_bytes) / state;
  *slots = useful_slots(plan, fit < (size_t)plan->steps ? (int)fit : plan->steps);
fail:
  return status;
}

/* K: slots_here, the fewest of any rank on z-slabs; refused when not one fits. */
static int choose_slots(const rtm_reconstruction_plan_t *plan, size_t state, int *slots) {
  int status = RTM_OK;
  size_t free_bytes = 0;
  RTM_TRY(slots_here(plan, state, slots, &free_bytes));
  if (!counted_slots(plan)) return RTM_OK;
  if (rtm_grid_is_slab(plan->grid)) {
    /* z-slabs: the same schedule on every rank, whose recomputing steps exchange planes */
    double fewest = *slots;
    RTM_TRY(rtm_mpi_allreduce(plan->grid->mpi, &fewest, 1, RTM_MPI_MIN));
    *slots = (int)fewest;
  }
  if (*slots < 1)
    RTM_FAIL(RTM_ERR_NOMEM,
             "rtm.checkpoints = 0 (as many as fit): not one checkpoint (%.3g GB: both time "
             "levels of %s) fits in %.0f%% of the %.3g GB free for memory.imaging = %s: hold them "
             "elsewhere (memory.imaging) or use rtm.reconstruction = snapshots",
             state / 1e9, fields_named(plan), 100.0 * auto_share, free_bytes / 1e9, plan->strategy);
  rtm_log_info("rtm.checkpoints = 0 (as many as fit): %d checkpoints of %.3g GB in "
               "memory.imaging = %s, where %.3g GB were free",
               *slots, state / 1e9, plan->strategy, free_bytes / 1e9);
fail:
  return status;
}

static size_t checkpoint_held_bytes(const void *state) {
  const checkpoint_state_t *c = state;
  return c->slots.reserved_bytes;
}

static void checkpoint_destroy(void *state) {
  checkpoint_state_t *c = state;
  if (!c) return;
  /* Queued copies still use the slots. */
  if (c->device >= 0 && c->slots.ptr && rtm_imaging_cuda_use_device(c->device) == RTM_OK)
    (void)rtm_imaging_cuda_synchronize();
  rtm_mem_free(&c->slots);
  rtm_revolve_release(&c->schedule);
  free(c);
}

static int checkpoint_create(const rtm_reconstruction_plan_t *plan, void **state) {
  int status = RTM_OK, slots = 0;
  checkpoint_state_t *c = calloc(1, sizeof *c);
  *state = NULL;
  if (!c) RTM_FAIL(RTM_ERR_NOMEM, "out of memory for the checkpoints' state");
  if (plan->device < 0 && strcmp(plan->strategy, "host") != 0)
    RTM_FAIL(RTM_ERR_CONFIG,
             "memory.imaging (or memory.strategy) = %s: the cpu backend keeps its checkpoints "
             "in host memory: use host",
             plan->strategy);
  *c = (checkpoint_state_t){.grid = plan->grid,
                            .steps = plan->steps,
                            .imaging_step = plan->imaging_step,
                            .device = plan->device,
                            .fields = field_count(plan->cfg),
                            .state_bytes = state_bytes(plan)};
  RTM_TRY(choose_slots(plan, c->state_bytes, &slots));
  RTM_TRY(rtm_revolve_plan(last_point(plan), slots, &c->schedule));
  if (slots > 0) {
    status = rtm_imaging_alloc(plan->strategy, (size_t)slots * c->state_bytes, "checkpoints",
                               plan->device, plan->ledger, &c->slots);
    if (status == RTM_ERR_NOMEM)
      rtm_log_error("%d checkpoints of %.3g GB in memory.imaging = %s do not fit: lower "
                    "rtm.checkpoints (now %d; 0: as many as fit), hold them elsewhere "
                    "(memory.imaging) or use rtm.reconstruction = snapshots",
                    slots, c->state_bytes / 1e9, plan->strategy, plan->cfg->rtm.checkpoints);
    RTM_TRY(status);
  }
  *state = c;
  return RTM_OK;
fail:
  checkpoint_destroy(c);
  return status;
}

/* Store: slot := the source side's levels; restore: the reverse; zero: the levels := 0. */
static int move_state(checkpoint_state_t *c, rtm_propagator_t *source, int slot,
                      state_move_t move) {
  int status = RTM_OK;
  rtm_field_view_t view;
  const size_t level_bytes = c->grid->padded_cells * sizeof(float);
  char *held = move == STATE_ZERO ? NULL : (char *)c->slots.ptr + (size_t)slot * c->state_bytes;
  if (c->device >= 0) RTM_TRY(rtm_imaging_cuda_use_device(c->device));
  for (int field = 0; field < c->fields; ++field)
    for (int level = 0; level < LEVELS; ++level) {
      RTM_TRY(source->backend->view_field(source->state, (rtm_field_t)field, (rtm_level_t)level,
                                          &view));
      if (view.device != c->device)
        RTM_FAIL(RTM_ERR_INTERNAL, "checkpoint: a field view of device %d, checkpoints of %d",
                 view.device, c->device);
      void *stored = held ? held + (size_t)(field * LEVELS + level) * level_bytes : NULL;
      void *to = move == STATE_STORE ? stored : view.padded;
      const void *from = move == STATE_STORE ? view.padded : stored;
      if (move == STATE_ZERO && c->device < 0)
        memset(view.padded, 0, level_bytes);
      else if (move == STATE_ZERO)
        RTM_TRY(rtm_imaging_cuda_zero(view.padded, level_bytes));
      else if (c->device < 0)
        memcpy(to, from, level_bytes);
      else
        RTM_TRY(rtm_imaging_cuda_copy(to, from, level_bytes));
    }
fail:
  return status;
}

static long long step_of(const checkpoint_state_t *c, int point) {
  const long long step = (long long)point * c->imaging_step;
  return step < c->steps ? step : c->steps;
}

/* The source side from its point to `point`, each step with the forward pass's index. */
static int advance(checkpoint_state_t *c, rtm_propagator_t *source, int point) {
  int status = RTM_OK;
  const long long from = step_of(c, c->position), to = step_of(c, point);
  for (long long it = from; it < to; ++it)
    RTM_TRY(rtm_propagator_step(source, (int)it, RTM_FORWARD));
  c->recomputed_steps += to - from;
  c->position = point;
fail:
  return status;
}

/* A new shot's forward sweep: the schedule's stores at their steps. */
static int checkpoint_after_forward(void *state, rtm_propagator_t *source, int n) {
  int status = RTM_OK;
  checkpoint_state_t *c = state;
  if (n == 1) {
    c->next = 0;
    c->position = 0;
    c->recomputed_steps = 0;
  }
  while (c->next < c->schedule.forward_count) {
    const rtm_revolve_action_t *action = &c->schedule.actions[c->next];
    const long long step = step_of(c, action->point);
    if (step > n) break;
    if (step < n || (action->kind != RTM_REVOLVE_ADVANCE && action->kind != RTM_REVOLVE_STORE))
      RTM_FAIL(RTM_ERR_INTERNAL, "checkpoint: forward action %d (kind %d, point %d) at step %d",
               c->next, (int)action->kind, action->point, n);
    if (action->kind == RTM_REVOLVE_STORE)
      RTM_TRY(move_state(c, source, action->slot, STATE_STORE));
    c->position = action->point;
    ++c->next;
  }
fail:
  return status;
}

/* The schedule's restores, advances and stores up to the delivery of `point`. */
static int play_until(checkpoint_state_t *c, rtm_propagator_t *source, int point) {
  int status = RTM_OK;
  while (c->next < c->schedule.count) {
    const rtm_revolve_action_t *action = &c->schedule.actions[c->next++];
    switch (action->kind) {
    case RTM_REVOLVE_ADVANCE: RTM_TRY(advance(c, source, action->point)); break;
    case RTM_REVOLVE_STORE: RTM_TRY(move_state(c, source, action->slot, STATE_STORE)); break;
    case RTM_REVOLVE_RESTORE:
      RTM_TRY(move_state(c, source, action->slot, action->slot < 0 ? STATE_ZERO : STATE_RESTORE));
      c->position = action->point;
      break;
    case RTM_REVOLVE_DELIVER:
      if (action->point != point || c->position != point)
        RTM_FAIL(RTM_ERR_INTERNAL,
                 "checkpoint: the schedule delivers point %d at point %d where %d is asked for",
                 action->point, c->position, point);
      return RTM_OK;
    }
  }
  RTM_FAIL(RTM_ERR_INTERNAL, "checkpoint: the schedule ended before point %d", point);
fail:
  return status;
}

static int checkpoint_source_at(void *state, rtm_propagator_t *source, int n, int wanted,
                                const float **volume, rtm_layout_t *layout) {
  int status = RTM_OK;
  checkpoint_state_t *c = state;
  rtm_field_view_t view;
  const int point = n == c->steps              ? c->schedule.last_point
                    : n % c->imaging_step == 0 ? n / c->imaging_step
                                               : -1;
  if (point < 0) return RTM_OK; /* between imaging steps: nothing wanted, nothing to do */
  if (n == c->steps && c->next != c->schedule.forward_count)
    RTM_FAIL(RTM_ERR_INTERNAL, "checkpoint: the backward pass begins at forward action %d of %d",
             c->next, c->schedule.forward_count);
  RTM_TRY(play_until(c, source, point));
  if (!wanted) return RTM_OK;
  RTM_TRY(source->backend->view_field(source->state, RTM_FIELD_P, RTM_LEVEL_CURRENT, &view));
  *volume = view.padded;
  *layout = rtm_layout_padded(c->grid);
fail:
  return status;
}

static int checkpoint_finish_shot(void *state, rtm_propagator_t *source) {
  const checkpoint_state_t *c = state;
  (void)source;
  if (c->next == c->schedule.count) return RTM_OK;
  rtm_log_error("checkpoint: the shot ended at action %d of the schedule's %d", c->next,
                c->schedule.count);
  return RTM_ERR_INTERNAL;
}

/* The forward pass, the receiver side and the recomputation on the schedule of this rank's
 * K (imaging_step steps an advance; without a slot, a plan with none), and never fewer than
 * boundary's 3 N: the states' copies are not counted, and at 512^3 with 10 states (1.12
 * propagations recomputed) checkpoint took 3.39 times model's time where boundary took 3.12
 * (run/results/rtm.md). */
static double checkpoint_steps_a_shot(const rtm_reconstruction_plan_t *plan) {
  int slots = 0;
  size_t free_bytes = 0;
  if (slots_here(plan, state_bytes(plan), &slots, &free_bytes) != RTM_OK) slots = 0;
  const double steps =
      2.0 * plan->steps +
      (double)plan->imaging_step * rtm_revolve_optimal_recomputation(last_point(plan), slots);
  return steps > 3.0 * plan->steps ? steps : 3.0 * plan->steps;
}

static long long checkpoint_recomputed_steps(const void *state) {
  return ((const checkpoint_state_t *)state)->recomputed_steps;
}

const rtm_reconstruction_ops_t rtm_reconstruction_checkpoint = {
    .name = "checkpoint",
    .bytes = checkpoint_bytes,
    .advise = checkpoint_advise,
    .steps_a_shot = checkpoint_steps_a_shot,
    .create = checkpoint_create,
    .after_forward = checkpoint_after_forward,
    .source_at = checkpoint_source_at,
    .finish_shot = checkpoint_finish_shot,
    .recomputed_steps = checkpoint_recomputed_steps,
    .held_bytes = checkpoint_held_bytes,
    .destroy = checkpoint_destroy,
};
