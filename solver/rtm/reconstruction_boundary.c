/* rtm.reconstruction = boundary: S rebuilt backwards in time inside a saved shell.
 *
 * Forward, after every step n = 1 .. steps - 2, the shell (boundary_cuda.h: the outer R = 4
 * cells of the non-absorbing interior) of S(n) is stored, p and for vti/tti q, in fp32 (the
 * rebuild must start from the forward pass's numbers; rtm.snapshot_precision does not apply).
 * Backward, the source propagator holds S(steps) and S(steps - 1) when the pass begins; its
 * damping is switched off (set_damping NULL: the layer's backward step amplifies by
 * (1 + d) / (1 - d) a step), and for n = steps - 1 .. 1 the backward step `n` turns
 * (S(n + 1), S(n)) into (S(n), S(n - 1)), whose shell is then overwritten with the stored
 * one. The core inside the shell is undamped in the forward pass too, and its stencil reaches
 * the shell and no further, so there the backward step is the forward one solved for the
 * older level: S(n - 1) comes back to rounding, level after level (a source tap in the core
 * is undone exactly: the backward step adds wavelet sample n, which the forward step added;
 * a tap in the shell or in the layer changes nothing the core reads). Outside the box S is
 * not rebuilt: the layer carries an undamped field that means nothing, and the image there
 * is zeroed (rtm_migration_read). finish_shot puts the layer back.
 *
 * The store, in memory.imaging's strategy: `steps - 2` slots, each [field][shell cell]:
 *   fields  slots   save                                  restore
 *   host    host    pack loop                             unpack loop
 *   device  device  pack kernel into the slot             unpack kernel from the slot
 *   device  host    pack kernel into a ring buffer, then  copied into a ring buffer up to
 *                   copied to the slot on the copy        BUFFERS levels ahead, then the
 *                   stream (overlaps the next steps)      unpack kernel
 * (pinned host memory makes the copies asynchronous; pageable "host" memory works, each
 * copy then waiting for the queued steps.) The cost: three propagations (the source side
 * twice, the receiver side once) and a shell of about 6 R n^2 cells a step. On z-slabs each
 * rank stores its planes' part of the shell (boundary_cuda.h) and sends the rebuilt level's
 * planes to its neighbours after the restore (boundary_source_at): the one-rank numbers. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boundary_cuda.h"
#include "imaging_impl.h"
#include "reconstruction_impl.h"
#include "rtm_status.h"

enum { BUFFERS = 4 }; /* ring of device buffers of a store in host memory */

/* The host loops split the shell's cells among the threads; each cell is a plain copy. */
#ifdef _OPENMP
#define SHELL_OMP_CELLS _Pragma("omp parallel for schedule(static)")
#else
#define SHELL_OMP_CELLS
#endif

/* What a store of these settings allocates; bytes and create both follow it. */
typedef struct {
  rtm_boundary_shell_t shell;
  int valid;  /* the grid holds a shell around a core (check_shell says why not) */
  int fields; /* 1: p; 2: p and q */
  int levels; /* stored levels 1 .. steps - 2 */
  const char *slots_strategy;
  int host_slots_of_device;
  size_t slot_bytes, slots_bytes, staging_bytes;
  int too_large; /* the byte count overflows size_t */
} store_plan_t;

int rtm_boundary_shell_of(const rtm_grid_t *g, int width, rtm_boundary_shell_t *s) {
  int valid = 1;
  memset(s, 0, sizeof *s);
  for (int a = 0; a < 3; ++a) {
    s->first[a] = width;
    s->box[a] = g->n[a] - 2 * width;
    valid = valid && s->box[a] > 2 * RTM_RADIUS;
  }
  if (!valid) return 0;
  /* this slab's planes [z0, z1) of the box [width, n - width) (all of it on one rank),
   * among its R lowest planes, its R highest, or between them */
  const int R = RTM_RADIUS, box_end = g->n[2] - width;
  const int z0 = width > g->z_offset ? width : g->z_offset;
  const int slab_end = g->z_offset + g->nz_local, z1 = box_end < slab_end ? box_end : slab_end;
  s->first[2] = z0 - g->z_offset;
  for (int z = z0; z < z1; ++z) {
    if (z < width + R)
      ++s->low;
    else if (z >= box_end - R)
      ++s->high;
    else
      ++s->rings;
  }
  const long long bx = s->box[0], by = s->box[1];
  s->plane = bx * by;
  s->ring = s->plane - (bx - 2 * R) * (by - 2 * R);
  s->cells = (long long)(s->low + s->high) * s->plane + (long long)s->rings * s->ring;
  return 1;
}

static store_plan_t plan_store(const rtm_reconstruction_plan_t *plan) {
  store_plan_t store;
  const rtm_grid_t *g = plan->grid;
  /* the config's: the preflight plans before the propagators (and their layer) exist */
  const int width = plan->cfg->boundary.width_cells;
  memset(&store, 0, sizeof store);
  store.valid = rtm_boundary_shell_of(g, width, &store.shell);
  store.fields = plan->cfg->physics.equation == RTM_EQUATION_ISO ? 1 : 2;
  store.levels = plan->steps > 2 ? plan->steps - 2 : 0;
  store.slots_strategy = rtm_imaging_strategy(plan->strategy, plan->device);
  /* a slab in the layer alone (z-slabs) stores no cell: no ring of buffers, no copies */
  store.host_slots_of_device =
      plan->device >= 0 && store.shell.cells > 0 && rtm_imaging_host_strategy(store.slots_strategy);
  store.slot_bytes = (size_t)store.shell.cells * (size_t)store.fields * sizeof(float);
  store.too_large = store.levels > 0 && store.slot_bytes > SIZE_MAX / 2 / (size_t)store.levels;
  store.slots_bytes = store.too_large ? SIZE_MAX : store.slot_bytes * (size_t)store.levels;
  if (store.host_slots_of_device && store.levels > 0)
    store.staging_bytes = BUFFERS * store.slot_bytes;
  return store;
}

static size_t boundary_bytes(const rtm_reconstruction_plan_t *plan, int *on_device) {
  const store_plan_t store = plan_store(plan);
  *on_device = plan->device >= 0 && !store.host_slots_of_device;
  if (store.too_large) return SIZE_MAX;
  size_t bytes = 0;
  if (store.slots_bytes) bytes += rtm_imaging_taken_bytes(store.slots_strategy, store.slots_bytes);
  if (store.staging_bytes) bytes += rtm_imaging_taken_bytes("device", store.staging_bytes);
  return bytes;
}

/* A shell needs more than 2R undamped cells each way. */
static int boundary_usable(const rtm_reconstruction_plan_t *plan, char *why, size_t size) {
  const store_plan_t store = plan_store(plan);
  if (store.valid) return 1;
  snprintf(why, size,
           "boundary.width = %d leaves %d x %d x %d undamped cells, no room for a "
           "shell of %d planes a side",
           plan->cfg->boundary.width_cells, store.shell.box[0], store.shell.box[1],
           store.shell.box[2], RTM_RADIUS);
  return 0;
}

/* A store on the device moves to host memory; one in host memory shrinks only with fewer
 * steps or cells. */
static void boundary_advise(const rtm_reconstruction_plan_t *plan, size_t available, char *text,
                            size_t size) {
  const char *strategy = rtm_imaging_strategy(plan->strategy, plan->device);
  (void)available;
  if (plan->device >= 0 && !rtm_imaging_host_strategy(strategy))
    snprintf(text, size,
             "the shell of every step is held: keep it in host memory (memory.imaging = "
             "pinned, now %s), run fewer time.steps (now %d), or use rtm.reconstruction = "
             "snapshots",
             strategy, plan->steps);
  else
    snprintf(text, size,
             "the shell of every step is held: run fewer time.steps (now %d) or fewer cells "
             "(grid.n), or use rtm.reconstruction = snapshots",
             plan->steps);
}

typedef struct {
  const rtm_boundary_t *boundary; /* the source side's layer, put back by finish_shot */
  store_plan_t store;
  int steps, device;
  rtm_layout_t layout;      /* the fields' (padded) */
  rtm_allocation_t slots;   /* levels x slot_bytes */
  rtm_allocation_t staging; /* BUFFERS slots on the device: host slots of a device only */
  boundary_cuda_copies_t *copies;
  int next_fetch; /* backward, host slots of a device: the next level to copy in */
} boundary_state_t;

/* Refuses what no shell fits, naming the keys. */
static int check_shell(const rtm_reconstruction_plan_t *plan, const store_plan_t *store) {
  int status = RTM_OK;
  const rtm_grid_t *g = plan->grid;
  const int width = plan->cfg->boundary.width_cells;
  for (int a = 0; a < 3; ++a)
    if (store->shell.box[a] <= 2 * RTM_RADIUS)
      RTM_FAIL(RTM_ERR_CONFIG,
               "rtm.reconstruction = boundary: grid.n%c = %d with boundary.width = %d leaves %d "
               "undamped cells along %c, and the shell of %d planes on each side needs at "
               "least %d: enlarge grid.n%c, narrow boundary.width, or use rtm.reconstruction = "
               "snapshots",
               "xyz"[a], g -> n[a], width, store -> shell.box[a], "xyz"[a], RTM_RADIUS,
               2 * RTM_RADIUS + 1, "xyz"[a]);
fail:
  return status;
}

static int allocate_store(boundary_state_t *s, const rtm_reconstruction_plan_t *plan) {
  int status = RTM_OK;
  const store_plan_t *store = &s->store;
  if (store->levels == 0) return RTM_OK;
  if (store->too_large) RTM_FAIL(RTM_ERR_NOMEM, "the boundary shell store overflows size_t");
  status = rtm_imaging_alloc(store->slots_strategy, store->slots_bytes, "boundary shell",
                             plan->device, plan->ledger, &s->slots);
  if (status == RTM_ERR_NOMEM) {
    char advice[256];
    boundary_advise(plan, 0, advice, sizeof advice);
    rtm_log_error("rtm.reconstruction = boundary: %d levels of a shell of %lld cells x %d "
                  "field%s (%.3f GB in memory.imaging = %s) do not fit: %s",
                  store->levels, store->shell.cells, store->fields, store->fields == 1 ? "" : "s",
                  store->slots_bytes / 1e9, store->slots_strategy, advice);
  }
  RTM_TRY(status);
  if (store->staging_bytes) {
    RTM_TRY(rtm_imaging_alloc("device", store->staging_bytes, "boundary staging", plan->device,
                              plan->ledger, &s->staging));
    RTM_TRY(rtm_imaging_cuda_use_device(plan->device));
    RTM_TRY(boundary_cuda_copies_create(BUFFERS, &s->copies));
  }
fail:
  return status;
}

static void boundary_destroy(void *state) {
  boundary_state_t *s = state;
  if (!s) return;
  /* Queued packs, unpacks and copies still use the slots and buffers. */
  if (s->device >= 0 && s->slots.ptr && rtm_imaging_cuda_use_device(s->device) == RTM_OK)
    (void)rtm_imaging_cuda_synchronize();
  boundary_cuda_copies_destroy(s->copies);
  rtm_mem_free(&s->staging);
  rtm_mem_free(&s->slots);
  free(s);
}

static int boundary_create(const rtm_reconstruction_plan_t *plan, void **state) {
  int status = RTM_OK;
  boundary_state_t *s = calloc(1, sizeof *s);
  *state = NULL;
  if (!s) RTM_FAIL(RTM_ERR_NOMEM, "out of memory for the boundary reconstruction");
  s->boundary = plan->boundary;
  s->store = plan_store(plan);
  s->steps = plan->steps;
  s->device = plan->device;
  s->layout = rtm_layout_padded(plan->grid);
  RTM_TRY(check_shell(plan, &s->store));
  if (plan->device < 0 && strcmp(s->store.slots_strategy, "host") != 0)
    RTM_FAIL(RTM_ERR_CONFIG,
             "memory.imaging (or memory.strategy) = %s: the cpu backend keeps the boundary "
             "shell in host memory: use host",
             s->store.slots_strategy);
  if (plan->precision != RTM_PRECISION_FP32)
    rtm_log_warning("rtm.snapshot_precision = %s does not apply to rtm.reconstruction = "
                    "boundary: the shell is stored in fp32, which the rebuild needs",
                    rtm_precision_name(plan->precision));
  RTM_TRY(allocate_store(s, plan));
  *state = s;
  return RTM_OK;
fail:
  boundary_destroy(s);
  return status;
}

/* The slot of stored level `level` (1 .. levels) and its ring buffer (host slots of a
 * device): [field][shell cell]. */
static float *slot_of(const boundary_state_t *s, int level) {
  return (float *)((char *)s->slots.ptr + (size_t)(level - 1) * s->store.slot_bytes);
}

static float *buffer_of(const boundary_state_t *s, int level) {
  return (float *)((char *)s->staging.ptr + (size_t)(level % BUFFERS) * s->store.slot_bytes);
}

static void move_host(const rtm_boundary_shell_t *shell, rtm_layout_t layout, float *field,
                      float *compact, int to_shell) {
  SHELL_OMP_CELLS
  for (long long i = 0; i < shell->cells; ++i) {
    const long long element = rtm_boundary_shell_element(shell, layout, i);
    if (to_shell)
      compact[i] = field[element];
    else
      field[element] = compact[i];
  }
}

/* The shell of every field at `level` of the source propagator into `compact` (to_shell)
 * or back from it; compact is in the fields' memory. */
static int move_fields(boundary_state_t *s, rtm_propagator_t *source, rtm_level_t level,
                       float *compact, int to_shell) {
  int status = RTM_OK;
  const rtm_boundary_shell_t *shell = &s->store.shell;
  rtm_field_view_t view;
  if (s->device >= 0) RTM_TRY(rtm_imaging_cuda_use_device(s->device));
  for (int f = 0; f < s->store.fields; ++f) {
    float *part = compact + (size_t)f * (size_t)shell->cells;
    RTM_TRY(source->backend->view_field(source->state, (rtm_field_t)f, level, &view));
    if (s->device < 0)
      move_host(shell, s->layout, view.padded, part, to_shell);
    else if (to_shell)
      RTM_TRY(boundary_cuda_pack(shell, s->layout, view.padded, part));
    else
      RTM_TRY(boundary_cuda_unpack(shell, s->layout, part, view.padded));
  }
fail:
  return status;
}

/* The source propagator holds current = S(n), previous = S(n - 1). */
static int boundary_after_forward(void *state, rtm_propagator_t *source, int n) {
  int status = RTM_OK;
  boundary_state_t *s = state;
  if (n < 1 || n > s->store.levels) return RTM_OK;
  if (!s->store.host_slots_of_device)
    return move_fields(s, source, RTM_LEVEL_CURRENT, slot_of(s, n), 1);
  const int buffer = n % BUFFERS;
  RTM_TRY(boundary_cuda_acquire(s->copies, buffer));
  RTM_TRY(move_fields(s, source, RTM_LEVEL_CURRENT, buffer_of(s, n), 1));
  RTM_TRY(boundary_cuda_release(s->copies, buffer));
  RTM_TRY(
      boundary_cuda_copy(s->copies, buffer, slot_of(s, n), buffer_of(s, n), s->store.slot_bytes));
fail:
  return status;
}

/* Host slots of a device, backward: the copies in of the levels from next_fetch down to
 * `lowest`, each into its ring buffer after the unpack of the level BUFFERS above it. */
static int fetch_down_to(boundary_state_t *s, int lowest) {
  int status = RTM_OK;
  for (; s->next_fetch >= lowest && s->next_fetch >= 1; --s->next_fetch)
    RTM_TRY(boundary_cuda_copy(s->copies, s->next_fetch % BUFFERS, buffer_of(s, s->next_fetch),
                               slot_of(s, s->next_fetch), s->store.slot_bytes));
fail:
  return status;
}

/* The stored shell of S(level) over the source propagator's previous level. */
static int restore(boundary_state_t *s, rtm_propagator_t *source, int level) {
  int status = RTM_OK;
  if (level < 1 || level > s->store.levels) return RTM_OK;
  if (!s->store.host_slots_of_device)
    return move_fields(s, source, RTM_LEVEL_PREVIOUS, slot_of(s, level), 0);
  const int buffer = level % BUFFERS;
  RTM_TRY(boundary_cuda_acquire(s->copies, buffer));
  RTM_TRY(move_fields(s, source, RTM_LEVEL_PREVIOUS, buffer_of(s, level), 0));
  RTM_TRY(boundary_cuda_release(s->copies, buffer));
  RTM_TRY(fetch_down_to(s, level - BUFFERS));
fail:
  return status;
}

/* n = steps: the forward pass's last levels, the layer switched off for what follows. Then
 * backward step n: (S(n + 1), S(n)) -> (S(n), S(n - 1)), and S(n - 1)'s shell restored. On
 * z-slabs the step reads the neighbours' planes of S(n), so S(n - 1)'s go to them once its
 * shell is restored (a core cell next to a cut reads the shell cells of the planes across
 * it): the exchange of the restored level, not the step's. */
static int boundary_source_at(void *state, rtm_propagator_t *source, int n, int wanted,
                              const float **volume, rtm_layout_t *layout) {
  int status = RTM_OK;
  boundary_state_t *s = state;
  rtm_field_view_t view;
  if (n == s->steps) {
    RTM_TRY(source->backend->set_damping(source->state, NULL));
    s->next_fetch = s->store.levels;
    if (s->store.host_slots_of_device) RTM_TRY(fetch_down_to(s, s->store.levels - BUFFERS + 1));
  } else {
    RTM_TRY(source->backend->step(source->state, n, RTM_REGION_ALL, RTM_BACKWARD));
    RTM_TRY(restore(s, source, n - 1));
    RTM_TRY(rtm_propagator_exchange(source, RTM_LEVEL_PREVIOUS));
  }
  if (!wanted) return RTM_OK;
  RTM_TRY(source->backend->view_field(source->state, RTM_FIELD_P, RTM_LEVEL_CURRENT, &view));
  *volume = view.padded;
  *layout = s->layout;
fail:
  return status;
}

static int boundary_finish_shot(void *state, rtm_propagator_t *source) {
  const boundary_state_t *s = state;
  return source->backend->set_damping(source->state, s->boundary);
}

/* The forward pass, the source side stepped back, the receiver side: 3 N. A shell held in a
 * GPU's host memory crosses PCIe a level a step, on a stream of its own: in page-locked
 * memory beside the steps, the two source passes taking the longer of a step and its
 * crossing; in pageable memory after them. */
static double boundary_steps_a_shot(const rtm_reconstruction_plan_t *plan) {
  const store_plan_t store = plan_store(plan);
  const double crossing = rtm_reconstruction_crossing_steps(plan, (double)store.slot_bytes);
  const double side = !rtm_reconstruction_copies_beside(plan) ? 1.0 + crossing
                      : crossing > 1.0                        ? crossing
                                                              : 1.0;
  return plan->steps * (1.0 + 2.0 * side);
}

const rtm_reconstruction_ops_t rtm_reconstruction_boundary = {
    .name = "boundary",
    .bytes = boundary_bytes,
    .usable = boundary_usable,
    .advise = boundary_advise,
    .steps_a_shot = boundary_steps_a_shot,
    .create = boundary_create,
    .after_forward = boundary_after_forward,
    .source_at = boundary_source_at,
    .finish_shot = boundary_finish_shot,
    .destroy = boundary_destroy,
};
