/* Every wait of solver/mpi for other ranks, polled (rtm_mpi_wait_all) rather than blocked
 * in the library, so that a wait has two ways out besides its messages arriving:
 *  - SIGINT or SIGTERM (rtm_interrupt_install): the rank gives the job up
 *    (RTM_ERR_INTERRUPTED) and makes no further collective call, so that its command cleans
 *    up (a partial output file removed) before main's MPI_Abort ends the job;
 *  - mpi.timeout_s spent waiting: a rank that does not answer (stopped with SIGSTOP, hung,
 *    lost with its node) ends the job (MPI_Abort) with a message naming it, rather than
 *    leaving every other rank waiting for ever.
 * Polling costs what the library's own wait does (MPI_Testall runs one pass of its progress
 * engine, as MPI_Waitall does in a loop, yielding the core when oversubscribed), plus a
 * clock read: the time loop pays nothing it did not, and no collective is added. */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdio.h>

#include "mpi_internal.h"
#include "rtm_mpi.h"
#include "rtm_status.h"

void rtm_mpi_set_timeout(rtm_mpi_t *mpi, double seconds) {
  if (mpi) mpi->timeout_s = seconds > 0.0 ? seconds : 0.0;
}

void rtm_mpi_give_up(rtm_mpi_t *mpi) {
  if (mpi) mpi->given_up = 1;
}

int rtm_mpi_given_up(const rtm_mpi_t *mpi) {
  return mpi && mpi->given_up;
}

#ifdef RTM3D_HAVE_MPI

/* A gap this long between two polls is this rank not running (its job paused with Ctrl-Z
 * or SIGTSTP, or the host starved it), not a peer keeping it waiting: it is not counted, so
 * that a job resumed after a pause does not end itself. */
#define PAUSED_GAP_S 1.0

/* The world rank of rank `rank` of `comm`. */
static int world_rank_of(MPI_Comm comm, int rank) {
  MPI_Group group = MPI_GROUP_NULL, world = MPI_GROUP_NULL;
  int world_rank = MPI_UNDEFINED;
  if (MPI_Comm_group(comm, &group) == MPI_SUCCESS &&
      MPI_Comm_group(MPI_COMM_WORLD, &world) == MPI_SUCCESS)
    MPI_Group_translate_ranks(group, 1, &rank, world, &world_rank);
  if (group != MPI_GROUP_NULL) MPI_Group_free(&group);
  if (world != MPI_GROUP_NULL) MPI_Group_free(&world);
  return world_rank;
}

/* Who this rank waits for, into text[size]: the world ranks of the peers whose requests are
 * still pending ("rank 1", "ranks 1 and 3"); for a collective (peers NULL) the other rank of
 * two, else "one of the other N ranks" (a collective does not say which is missing). */
static void describe_missing(int count, MPI_Request *requests, const int *peers, MPI_Comm comm,
                             char *text, size_t size) {
  int comm_size = 1, comm_rank = 0;
  MPI_Comm_size(comm, &comm_size);
  MPI_Comm_rank(comm, &comm_rank);
  if (!peers) {
    if (comm_size == 2)
      snprintf(text, size, "rank %d", world_rank_of(comm, 1 - comm_rank));
    else
      snprintf(text, size, "one of the other %d ranks of the collective", comm_size - 1);
    return;
  }
  int missing[8], n = 0;
  for (int i = 0; i < count && n < 8; ++i) {
    int complete = 1, seen = 0;
    MPI_Request_get_status(requests[i], &complete, MPI_STATUS_IGNORE);
    if (complete || peers[i] == MPI_PROC_NULL) continue;
    for (int k = 0; k < n; ++k)
      seen |= missing[k] == peers[i];
    if (!seen) missing[n++] = peers[i];
  }
  if (n == 0) {
    snprintf(text, size, "another rank");
    return;
  }
  int used = snprintf(text, size, "rank%s", n > 1 ? "s" : "");
  for (int k = 0; k < n && used > 0 && (size_t)used < size; ++k)
    used += snprintf(text + used, size - (size_t)used, "%s %d",
                     k == 0 ? "" : (k == n - 1 ? " and" : ","), world_rank_of(comm, missing[k]));
}

/* Past mpi.timeout_s: the job ends here, naming whom this rank waited for. */
static void end_stalled_job(const rtm_mpi_t *mpi, int count, MPI_Request *requests,
                            const int *peers, MPI_Comm comm, const char *what, double waited_s,
                            double timeout_s) {
  char missing[96];
  describe_missing(count, requests, peers, comm, missing, sizeof missing);
  rtm_log_error("waited %.0f s in %s for %s, which did not answer (stopped, hung or lost): "
                "ending the job rather than waiting for ever (mpi.timeout_s = %g is the longest "
                "a rank waits for another; raise it for longer waits, 0 waits for ever)",
                waited_s, what, missing, timeout_s);
  rtm_mpi_run_abort_cleanup(mpi); /* this rank's files: the abort would leave them */
  MPI_Abort(MPI_COMM_WORLD, 1);
}

int rtm_mpi_wait_all(rtm_mpi_t *mpi, int count, MPI_Request *requests, const int *peers,
                     MPI_Comm comm, const char *what) {
  double waited_s = 0.0, last_s = rtm_wall_seconds();
  const double timeout_s = mpi->timeout_s;
  if (mpi->given_up) return RTM_ERR_INTERRUPTED;
  for (;;) {
    int done = 0;
    const int code = MPI_Testall(count, requests, &done, MPI_STATUSES_IGNORE);
    if (code != MPI_SUCCESS) return rtm_mpi_status(code, what);
    if (done) return RTM_OK;
    if (rtm_interrupted()) {
      /* the requests stay posted and no MPI call but the abort follows: over shared memory
       * and TCP nothing moves into a receive without one, but over an RDMA transport a
       * rendezvous matched before the signal can still be written by the network card while
       * the cleanup frees its buffer (not guarded: cancelling needs to know which requests
       * are receives, and a cancelled send may never settle) */
      mpi->given_up = 1;
      rtm_log_error("stopped by %s while waiting in %s (a second one ends it at once)",
                    rtm_interrupt_name(), what);
      return RTM_ERR_INTERRUPTED;
    }
    const double now_s = rtm_wall_seconds(), gap_s = now_s - last_s;
    last_s = now_s;
    if (gap_s < PAUSED_GAP_S) waited_s += gap_s;
    if (timeout_s > 0.0 && waited_s > timeout_s)
      end_stalled_job(mpi, count, requests, peers, comm, what, waited_s, timeout_s);
  }
}

#endif
