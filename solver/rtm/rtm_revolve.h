/* rtm_revolve.h - the binomial checkpointing schedule (Griewank's revolve) behind
 * rtm.reconstruction = checkpoint: plain integers, no fields, so that it is tested on its
 * own (tests/rtm/test_revolve.c).
 *
 * The problem. A state evolves over time points 0, 1, ..., T by advances (point j to j + 1).
 * The forward sweep runs once from 0 to T and costs nothing here (the migration's forward
 * pass); it may store states on its way. Then the states T, T - 1, ..., 1 are wanted in
 * that order. The state at 0 can be had again for free (zero fields), T is where the
 * forward sweep ends, and at most K states are held in checkpoint slots at any time. Every
 * other state comes back by restoring a stored one and advancing: the recomputation.
 *
 * The optimum (Griewank 1992; Griewank and Walther, ACM TOMS 26 (2000), Algorithm 799). With
 * beta(s, r) = C(s + r, s), the fewest advances that reverse l steps with s snapshots (the
 * one of the starting state among them), forward sweep included, are
 *   t(l, s) = r l - beta(s + 1, r - 1),   r the integer with beta(s, r - 1) < l <= beta(s, r),
 * reached by the recursion (revolve.c): advance m steps from the start, store that state, reverse
 * the l - m steps after it with s - 1 snapshots, free its slot, reverse the first m with s. Here l
 * = T + 1 (point 0 is the starting state, its snapshot the free zero state, so s = K + 1), and the
 * recomputation is t(T + 1, K + 1) - T advances. The split m is taken where both parts cost what
 * the formula says (revolve.c), which attains t. */
#ifndef RTM_REVOLVE_H
#define RTM_REVOLVE_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  RTM_REVOLVE_ADVANCE, /* advance the state to `point` (from where it is) */
  RTM_REVOLVE_STORE,   /* copy the state, at `point`, into slot `slot` */
  RTM_REVOLVE_RESTORE, /* the state := slot `slot`, at `point`; slot -1: point 0, zeros */
  RTM_REVOLVE_DELIVER  /* the state, at `point`, is the one wanted now */
} rtm_revolve_kind_t;

typedef struct {
  rtm_revolve_kind_t kind;
  int point;
  int slot; /* STORE, RESTORE; -1 otherwise */
} rtm_revolve_action_t;

typedef struct {
  rtm_revolve_action_t *actions; /* malloc'd */
  int count;
  /* actions[0 .. forward_count) are the forward sweep: advances and stores only, points
   * increasing, the last advance reaching T; the first DELIVER (of T) follows. */
  int forward_count;
  int last_point;       /* T */
  int slots;            /* K, as used: at most T - 1 are ever useful */
  int slots_used;       /* the most held at once */
  long long recomputed; /* advances after the forward sweep */
} rtm_revolve_schedule_t;

/* The optimal schedule for T = last_point >= 1 and K = slots >= 0 checkpoint slots. */
int rtm_revolve_plan(int last_point, int slots, rtm_revolve_schedule_t *schedule);
void rtm_revolve_release(rtm_revolve_schedule_t *schedule);

/* t(T + 1, K + 1) - T: the fewest advances after the forward sweep, by the formula. */
long long rtm_revolve_optimal_recomputation(int last_point, int slots);

#ifdef __cplusplus
}
#endif

#endif
