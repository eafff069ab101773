/* The binomial checkpointing schedule (rtm_revolve.h): revolve's recursion unrolled onto an
 * explicit stack (its depth would otherwise grow with K) and written out as actions.
 *
 * A reversal (start a, length l, snapshots s) has the state at a in a snapshot (a slot, or
 * the free zero state when a = 0) and delivers a + l - 1, ..., a + 1, then a (not point 0,
 * which nobody wants). With s = 1 every state is recomputed from a; with l <= 2 there is
 * nothing to store (a + 1 is delivered as soon as it is reached); else the split: advance m from a,
 * store, reverse (a + m, l - m, s - 1), free that slot, reverse (a, m, s). The first reversal of
 * each chain of right parts starts where the state is, so the forward sweep stores without
 * restoring. */
#include "rtm_revolve.h"

#include <stdlib.h>

#include "rtm_status.h"

/* beta(s, r) = C(s + r, s), 0 for r < 0. Each partial product is a binomial coefficient
 * times the next factor, below 2^63 for the arguments used here (s, r < 2^31, results at
 * most beta(s, r) with beta(s, r - 1) < l < 2^31). */
static long long beta(long long s, long long r) {
  long long value = 1;
  if (r < 0) return 0;
  for (long long i = 1; i <= r; ++i)
    value = value * (s + i) / i;
  return value;
}

/* The repetition number of l steps with s snapshots: the smallest r with beta(s, r) >= l. */
static long long repetitions(long long l, long long s) {
  long long r = 0, value = 1;
  while (value < l) {
    ++r;
    value = value * (s + r) / r;
  }
  return r;
}

/* t(l, s) = r l - beta(s + 1, r - 1): the fewest advances that reverse l steps. */
static long long optimal_advances(long long l, long long s) {
  const long long r = repetitions(l, s);
  return r * l - beta(s + 1, r - 1);
}

/* Slots beyond T - 1 (every point strictly between 0 and T held) are never useful. */
static int useful_slots(int last_point, int slots) {
  const int most = last_point > 1 ? last_point - 1 : 0;
  return slots < most ? slots : most;
}

long long rtm_revolve_optimal_recomputation(int last_point, int slots) {
  if (last_point < 1 || slots < 0) return 0;
  return optimal_advances((long long)last_point + 1,
                          (long long)useful_slots(last_point, slots) + 1) -
         last_point;
}

/* Where to place the first checkpoint of a reversal of l >= 2 steps with s >= 2 snapshots.
 * t(., s) is convex and piecewise linear in l, with slope r on beta(s, r - 1) <= l <=
 * beta(s, r). A split whose left part (m steps, s snapshots) lies in the band of slope r - 1
 * (m <= beta(s, r - 1)) and whose right part (l - m steps, s - 1) in the band of slope r
 * (l - m >= beta(s - 1, r - 1)) costs m + t(l - m, s - 1) + t(m, s) = r l - beta(s, r - 1) -
 * beta(s + 1, r - 2) = t(l, s) (Pascal's rule). The largest such m; the bands' other ends
 * hold because beta(s, r - 1) < l <= beta(s, r). */
static int split_point(long long l, long long s) {
  const long long r = repetitions(l, s);
  const long long left_most = beta(s, r - 1), right_least = l - beta(s - 1, r - 1);
  return (int)(left_most < right_least ? left_most : right_least);
}

typedef struct {
  int start, length, snapshots, slot; /* a reversal; slot -1: the zero state */
  int release;                        /* 1: only free `slot` */
} frame_t;

typedef struct {
  rtm_revolve_schedule_t *schedule;
  int capacity;
  int position;   /* the point the state is at */
  int in_forward; /* no DELIVER emitted yet */
  int *free_slots, free_count;
  frame_t *frames;
  int frame_count;
} builder_t;

static int emit(builder_t *b, rtm_revolve_kind_t kind, int point, int slot) {
  rtm_revolve_schedule_t *s = b->schedule;
  if (s->count == b->capacity) {
    const int capacity = b->capacity ? 2 * b->capacity : 64;
    rtm_revolve_action_t *grown = realloc(s->actions, (size_t)capacity * sizeof *grown);
    if (!grown) {
      rtm_log_error("out of memory for a checkpoint schedule of %d actions", capacity);
      return RTM_ERR_NOMEM;
    }
    s->actions = grown;
    b->capacity = capacity;
  }
  if (kind == RTM_REVOLVE_DELIVER && b->in_forward) {
    s->forward_count = s->count;
    b->in_forward = 0;
  }
  if (kind == RTM_REVOLVE_ADVANCE && !b->in_forward) s->recomputed += point - b->position;
  if (kind == RTM_REVOLVE_ADVANCE || kind == RTM_REVOLVE_RESTORE) b->position = point;
  s->actions[s->count++] = (rtm_revolve_action_t){kind, point, slot};
  return RTM_OK;
}

/* The state to point `start` (held in `slot`), unless it is there already. */
static int restore(builder_t *b, int start, int slot) {
  return b->position == start ? RTM_OK : emit(b, RTM_REVOLVE_RESTORE, start, slot);
}

/* Delivers start + length - 1 down to start (start 0 left out), each recomputed from start. */
static int reverse_from_one(builder_t *b, const frame_t *f) {
  int status = RTM_OK;
  for (int j = f->length - 1; j >= (f->start == 0 ? 1 : 0); --j) {
    RTM_TRY(restore(b, f->start, f->slot));
    if (j > 0) RTM_TRY(emit(b, RTM_REVOLVE_ADVANCE, f->start + j, -1));
    RTM_TRY(emit(b, RTM_REVOLVE_DELIVER, f->start + j, -1));
  }
fail:
  return status;
}

/* Advance to the split, store it, then (stack order) its right part, its release, the left. */
static int split(builder_t *b, const frame_t *f) {
  int status = RTM_OK;
  rtm_revolve_schedule_t *s = b->schedule;
  const int m = split_point(f->length, f->snapshots);
  if (b->free_count == 0) RTM_FAIL(RTM_ERR_INTERNAL, "revolve: a split with no free slot");
  const int slot = b->free_slots[--b->free_count];
  const int held = s->slots - b->free_count;
  if (held > s->slots_used) s->slots_used = held;
  RTM_TRY(restore(b, f->start, f->slot));
  RTM_TRY(emit(b, RTM_REVOLVE_ADVANCE, f->start + m, -1));
  RTM_TRY(emit(b, RTM_REVOLVE_STORE, f->start + m, slot));
  b->frames[b->frame_count++] = (frame_t){f->start, m, f->snapshots, f->slot, 0};
  b->frames[b->frame_count++] = (frame_t){0, 0, 0, slot, 1};
  b->frames[b->frame_count++] = (frame_t){f->start + m, f->length - m, f->snapshots - 1, slot, 0};
fail:
  return status;
}

static int run(builder_t *b) {
  int status = RTM_OK;
  while (b->frame_count > 0) {
    const frame_t f = b->frames[--b->frame_count];
    if (f.release)
      b->free_slots[b->free_count++] = f.slot;
    else if (f.length <= 2 || f.snapshots == 1) /* l = 2: a stored a + 1 would be unused */
      RTM_TRY(reverse_from_one(b, &f));
    else
      RTM_TRY(split(b, &f));
  }
fail:
  return status;
}

int rtm_revolve_plan(int last_point, int slots, rtm_revolve_schedule_t *schedule) {
  int status = RTM_OK;
  builder_t b = {schedule, 0, 0, 1, NULL, 0, NULL, 0};
  *schedule = (rtm_revolve_schedule_t){0};
  if (last_point < 1 || slots < 0)
    RTM_FAIL(RTM_ERR_INTERNAL, "revolve: %d time points and %d slots (at least 1 and 0)",
             last_point, slots);
  schedule->last_point = last_point;
  schedule->slots = useful_slots(last_point, slots);
  /* a split leaves its left part and its release below the right part: two frames for
   * each of at most K + 1 nested splits, and the three a split pushes */
  b.free_slots = malloc(((size_t)schedule->slots + 1) * sizeof *b.free_slots);
  b.frames = malloc((2 * (size_t)schedule->slots + 6) * sizeof *b.frames);
  if (!b.free_slots || !b.frames)
    RTM_FAIL(RTM_ERR_NOMEM, "out of memory for a checkpoint schedule of %d slots", slots);
  for (int slot = schedule->slots - 1; slot >= 0; --slot)
    b.free_slots[b.free_count++] = slot;
  b.frames[b.frame_count++] = (frame_t){0, last_point + 1, schedule->slots + 1, -1, 0};
  RTM_TRY(run(&b));
  free(b.frames);
  free(b.free_slots);
  return RTM_OK;
fail:
  free(b.frames);
  free(b.free_slots);
  rtm_revolve_release(schedule);
  return status;
}

void rtm_revolve_release(rtm_revolve_schedule_t *schedule) {
  if (!schedule) return;
  free(schedule->actions);
  *schedule = (rtm_revolve_schedule_t){0};
}
