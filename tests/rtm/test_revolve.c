/* The checkpointing schedule (rtm_revolve.h) on its own, against an independent optimum.
 *
 * Each schedule is played on an abstract state (a point number and K slots holding point
 * numbers): the forward sweep advances from 0 to T and only stores; afterwards every advance
 * goes forward from where the state is and counts; a restore must name a slot that holds
 * its point (or point 0, the zero state); the deliveries are T, T - 1, ..., 1, each where
 * the state is; at most K slots are held at once. The count of advances after the sweep
 * must equal both the schedule's own count and the optimum, which is computed twice: by the
 * binomial formula (rtm_revolve_optimal_recomputation) and by dynamic programming over
 * every first split of Griewank's recursion, F(l, 1) = l (l - 1) / 2, F(1, s) = 0,
 * F(l, s) = min over 0 < m < l of m + F(l - m, s - 1) + F(m, s), the recomputation being
 * F(T + 1, K + 1) - T. A schedule that misses a point, delivers out of order, restores a
 * state it never stored, holds K + 1 states or recomputes one step more fails. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "rtm_revolve.h"
#include "rtm_status.h"
#include "rtm_test_main.h"

enum { DP_STEPS = 121, DP_SNAPSHOTS = 13 };

/* F(l, s) for l < DP_STEPS, s < DP_SNAPSHOTS (row l, column s). */
static long long (*optimum_table(void))[DP_SNAPSHOTS] {
  static long long table[DP_STEPS][DP_SNAPSHOTS];
  for (long long l = 1; l < DP_STEPS; ++l)
    for (int s = 1; s < DP_SNAPSHOTS; ++s) {
      long long best = l * (l - 1) / 2;
      for (long long m = 1; s > 1 && m < l; ++m) {
        const long long cost = m + table[l - m][s - 1] + table[m][s];
        if (cost < best) best = cost;
      }
      table[l][s] = best;
    }
  return table;
}

/* Plays the schedule; returns the advances after the forward sweep. */
static long long play(const rtm_revolve_schedule_t *schedule, int last_point, int slots) {
  int *held = malloc(((size_t)slots + 1) * sizeof *held);
  assert_non_null(held);
  for (int k = 0; k <= slots; ++k)
    held[k] = -1;
  int position = 0, wanted = last_point, holding = 0, most_held = 0;
  long long advances = 0;
  for (int a = 0; a < schedule->count; ++a) {
    const rtm_revolve_action_t *action = &schedule->actions[a];
    const int forward = a < schedule->forward_count;
    switch (action->kind) {
    case RTM_REVOLVE_ADVANCE:
      assert_true(action->point > position);
      if (!forward) advances += action->point - position;
      position = action->point;
      break;
    case RTM_REVOLVE_STORE:
      assert_true(action->slot >= 0 && action->slot < slots);
      assert_int_equal(action->point, position);
      if (held[action->slot] < 0) ++holding;
      held[action->slot] = position;
      if (holding > most_held) most_held = holding;
      break;
    case RTM_REVOLVE_RESTORE:
      assert_false(forward);
      if (action->slot < 0)
        assert_int_equal(action->point, 0);
      else
        assert_int_equal(held[action->slot], action->point);
      position = action->point;
      break;
    case RTM_REVOLVE_DELIVER:
      assert_false(forward);
      assert_int_equal(action->point, wanted);
      assert_int_equal(position, wanted);
      --wanted;
      break;
    }
    if (a == schedule->forward_count - 1) assert_int_equal(position, last_point);
  }
  assert_int_equal(wanted, 0);
  assert_true(most_held <= slots);
  assert_int_equal(most_held, schedule->slots_used);
  free(held);
  return advances;
}

static long long check(int last_point, int slots) {
  rtm_revolve_schedule_t schedule;
  assert_int_equal(rtm_revolve_plan(last_point, slots, &schedule), RTM_OK);
  const long long played = play(&schedule, last_point, slots);
  const long long formula = rtm_revolve_optimal_recomputation(last_point, slots);
  if (played != formula || schedule.recomputed != formula)
    fail_msg("T = %d, K = %d: the schedule recomputes %lld advances (says %lld), the optimum "
             "is %lld",
             last_point, slots, played, schedule.recomputed, formula);
  rtm_revolve_release(&schedule);
  return played;
}

/* Every T < 120 and K < 12: the formula is the dynamic program's optimum, and the schedule
 * attains it. */
static void test_optimal_for_small_problems(void **state) {
  (void)state;
  long long(*optimum)[DP_SNAPSHOTS] = optimum_table();
  for (int last_point = 1; last_point + 1 < DP_STEPS; ++last_point)
    for (int slots = 0; slots + 1 < DP_SNAPSHOTS; ++slots) {
      const long long dynamic = optimum[last_point + 1][slots + 1] - last_point;
      assert_int_equal(rtm_revolve_optimal_recomputation(last_point, slots), dynamic);
      assert_int_equal(check(last_point, slots), dynamic);
    }
}

/* Larger T, K up to and beyond T - 1 (no recomputation from there on); the numbers the
 * README quotes. */
static void test_optimal_for_large_problems(void **state) {
  (void)state;
  static const int points[] = {200, 1000, 3001};
  static const int slots[] = {0, 1, 2, 5, 10, 20, 50, 199, 500, 5000};
  for (size_t p = 0; p < sizeof points / sizeof *points; ++p)
    for (size_t k = 0; k < sizeof slots / sizeof *slots; ++k) {
      const long long advances = check(points[p], slots[k]);
      printf("T = %4d, K = %4d: %lld advances recomputed (%.2f T)\n", points[p], slots[k], advances,
             (double)advances / points[p]);
      if (slots[k] >= points[p] - 1) assert_int_equal(advances, 0);
    }
  /* by hand: K = 0 recomputes 1 + 2 + ... + (T - 1); K = 1, T = 3 stores point 2, then
   * recomputes 1 from the zero state */
  assert_int_equal(check(200, 0), 199LL * 200 / 2);
  assert_int_equal(check(3, 1), 1);
  assert_int_equal(check(200, 10), 312);
  assert_int_equal(check(200, 20), 179);
}

/* A bad request is refused, not planned. */
static void test_refuses_nonsense(void **state) {
  (void)state;
  rtm_revolve_schedule_t schedule;
  assert_int_equal(rtm_revolve_plan(0, 3, &schedule), RTM_ERR_INTERNAL);
  assert_int_equal(rtm_revolve_plan(10, -1, &schedule), RTM_ERR_INTERNAL);
  assert_null(schedule.actions);
}

RTM_TEST_MAIN(cmocka_unit_test(test_optimal_for_small_problems),
              cmocka_unit_test(test_optimal_for_large_problems),
              cmocka_unit_test(test_refuses_nonsense))
