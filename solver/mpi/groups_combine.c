/* The shot groups' meeting (rtm_mpi_groups_combine of rtm_mpi.h): a slab's pairs of arrays
 * combined across the groups into group 0's, every cell in group order. Two groups: group
 * 1's chunks go to group 0, which combines them. Three or more: a chain, each chunk leaving
 * group 0, passing through the other groups in order, each combining its own chunk into
 * it, and coming back; the groups combine at once and no rank takes in more than one
 * volume whatever the group count. Both through a shared-memory window where every group's
 * rank of the slab is on this node, else as messages; the same floats either way. */
#include "rtm_mpi.h"

#include <limits.h>
#include <stdlib.h>

#include "mpi_internal.h"
#include "rtm_status.h"

#ifdef RTM3D_HAVE_MPI
#include <mpi.h>
#endif

void rtm_mpi_set_combine_chunk(rtm_mpi_t *mpi, size_t floats) {
  if (mpi) mpi->combine_chunk = floats;
}

#ifdef RTM3D_HAVE_MPI

/* The meeting's chunks: 8 Mi floats of each array at a time (64 MiB of pairs). */
enum { COMBINE_CHUNK = 1 << 23 };
/* A window's slots a group, two groups: one filled while group 0 combines the other. */
enum { COMBINE_SLOTS = 2 };
/* The arrays' messages, and the zero-byte messages of the window's slots: filled, free. */
enum { TAG_A = 1, TAG_B = 2, TAG_SLOT_FULL = 3, TAG_SLOT_FREE = 4 };

/* The floats of each array a chunk of the meeting holds, every path: at most the test's
 * rtm_mpi_set_combine_chunk or COMBINE_CHUNK (and MPI's int counts), at most `count`, at
 * least 1. */
static size_t combine_chunk(const rtm_mpi_t *mpi, size_t count) {
  size_t most = mpi->combine_chunk ? mpi->combine_chunk : COMBINE_CHUNK;
  if (most > (size_t)INT_MAX) most = (size_t)INT_MAX;
  return count < most ? (count > 0 ? count : 1) : most;
}

/* The floats of the chunk that starts at `done`: `chunk`, the last one fewer. */
static size_t chunk_length(size_t count, size_t done, size_t chunk) {
  return count - done < chunk ? count - done : chunk;
}

/* A chunk of both arrays, `n` floats each (n <= INT_MAX: combine_chunk), to or from rank
 * `peer` of `cross` (TAG_A, TAG_B), posted into pair[2]. */
static int post_pair(rtm_mpi_t *mpi, float *a, float *b, size_t n, int peer, int sending,
                     MPI_Request pair[2], const char *what) {
  int status = RTM_OK;
  float *const data[2] = {a, b};
  for (int i = 0; i < 2; ++i)
    RTM_TRY(rtm_mpi_status(
        sending ? MPI_Isend(data[i], (int)n, MPI_FLOAT, peer, TAG_A + i, mpi->cross, &pair[i])
                : MPI_Irecv(data[i], (int)n, MPI_FLOAT, peer, TAG_A + i, mpi->cross, &pair[i]),
        what));
fail:
  return status;
}

/* post_pair, waited for. */
static int move_pair(rtm_mpi_t *mpi, float *a, float *b, size_t n, int peer, int sending,
                     const char *what) {
  int status = RTM_OK;
  MPI_Request pair[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  const int peers[2] = {peer, peer};
  RTM_TRY(post_pair(mpi, a, b, n, peer, sending, pair, what));
  RTM_TRY(rtm_mpi_wait_all(mpi, 2, pair, peers, mpi->cross, what));
fail:
  return status;
}

/* A zero-byte message from rank `peer` of cross_node, waited for: a slot's turn. */
static int await_signal(rtm_mpi_t *mpi, int peer, int tag, const char *what) {
  int status = RTM_OK;
  MPI_Request request = MPI_REQUEST_NULL;
  RTM_TRY(rtm_mpi_status(MPI_Irecv(NULL, 0, MPI_BYTE, peer, tag, mpi->cross_node, &request), what));
  RTM_TRY(rtm_mpi_wait_all(mpi, 1, &request, &peer, mpi->cross_node, what));
fail:
  return status;
}

/* A zero-byte message to rank `peer` of cross_node, left under way in *pending once the
 * one before it there is done: a send need not wait for its receive (MPI lets even an
 * empty one), and where the signals go round a chain, each waiting at once could close
 * the ring. *pending is waited for before it is used again and at the meeting's end. */
static int send_signal(rtm_mpi_t *mpi, int peer, int tag, MPI_Request *pending, const char *what) {
  int status = RTM_OK;
  RTM_TRY(rtm_mpi_wait_all(mpi, 1, pending, &peer, mpi->cross_node, what));
  RTM_TRY(rtm_mpi_status(MPI_Isend(NULL, 0, MPI_BYTE, peer, tag, mpi->cross_node, pending), what));
fail:
  return status;
}

/* (to_a, to_b)[i] = (a, b)[i], i < count, over the threads. */
static void copy_pair(float *to_a, float *to_b, const float *a, const float *b, size_t count) {
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
  for (size_t i = 0; i < count; ++i) {
    to_a[i] = a[i];
    to_b[i] = b[i];
  }
}

/* Every group's rank of the slab on this node at the same point: a polled barrier, so that
 * a group that waits for the others there still ends on a signal or past mpi.timeout_s. */
static int node_barrier(rtm_mpi_t *mpi, const char *what) {
  int status = RTM_OK;
  MPI_Request request = MPI_REQUEST_NULL;
  RTM_TRY(rtm_mpi_status(MPI_Ibarrier(mpi->cross_node, &request), what));
  RTM_TRY(rtm_mpi_wait_all(mpi, 1, &request, NULL, mpi->cross_node, what));
fail:
  return status;
}

/* The groups' window on cross_node, `bytes` of it this rank's (at *own), locked for every
 * rank; its making is a blocking collective, after a polled barrier. */
static int open_sums_window(rtm_mpi_t *mpi, MPI_Aint bytes, float **own, MPI_Win *window) {
  int status = RTM_OK;
  RTM_TRY(node_barrier(mpi, "the shot groups meeting (before their window)"));
  RTM_TRY(rtm_mpi_status(
      MPI_Win_allocate_shared(bytes, sizeof(float), MPI_INFO_NULL, mpi->cross_node, own, window),
      "MPI_Win_allocate_shared (the shot groups' sums)"));
  MPI_Win_set_errhandler(*window, MPI_ERRORS_RETURN);
  RTM_TRY(rtm_mpi_status(MPI_Win_lock_all(MPI_MODE_NOCHECK, *window), "MPI_Win_lock_all"));
fail:
  return status;
}

/* This rank's last signal done and every group done with the window (a polled barrier),
 * then its free. A failure before this leaves the window to the job's end: its free is
 * collective and the others may wait elsewhere (rtm_mpi_fail_fast aborts the job). */
static int close_sums_window(rtm_mpi_t *mpi, MPI_Request *signalled, int peer, MPI_Win *window) {
  int status = RTM_OK;
  RTM_TRY(rtm_mpi_wait_all(mpi, 1, signalled, &peer, mpi->cross_node,
                           "the shot groups' sums: the last signal"));
  RTM_TRY(node_barrier(mpi, "the shot groups meeting (after their window)"));
  RTM_TRY(rtm_mpi_status(MPI_Win_unlock_all(*window), "MPI_Win_unlock_all"));
  RTM_TRY(rtm_mpi_status(MPI_Win_free(window), "MPI_Win_free (the shot groups' sums)"));
fail:
  return status;
}

/* Two groups through the window (cross_node, rank k group k): group 1 has COMBINE_SLOTS
 * slots of both arrays' chunks; it copies chunk k into slot k % COMBINE_SLOTS once group 0
 * has said the slot is free, then says it is full; group 0 combines straight from the
 * slot. */
static int pair_shared(rtm_mpi_t *mpi, float *a, float *b, size_t count, rtm_mpi_combine_t combine,
                       void *context) {
  int status = RTM_OK;
  MPI_Win window = MPI_WIN_NULL;
  MPI_Request signalled = MPI_REQUEST_NULL;
  float *slots = NULL;
  const int group = mpi->group, peer = 1 - group;
  const size_t chunk = combine_chunk(mpi, count), chunks = (count + chunk - 1) / chunk;
  const MPI_Aint bytes = group == 0 ? 0 : (MPI_Aint)(COMBINE_SLOTS * 2 * chunk * sizeof(float));
  RTM_TRY(open_sums_window(mpi, bytes, &slots, &window));
  if (group == 0) {
    MPI_Aint size = 0;
    int unit = 0;
    RTM_TRY(rtm_mpi_status(MPI_Win_shared_query(window, 1, &size, &unit, &slots),
                           "MPI_Win_shared_query (group 1's slots)"));
  }
  for (size_t k = 0; k < chunks; ++k) {
    const size_t done = k * chunk, n = chunk_length(count, done, chunk);
    float *slot = slots + (k % COMBINE_SLOTS) * 2 * chunk;
    if (group == 1) {
      if (k >= COMBINE_SLOTS) {
        RTM_TRY(
            await_signal(mpi, 0, TAG_SLOT_FREE, "the shot groups' sums: a slot freed by group 0"));
        /* group 0's loads of the slot before these stores */
        RTM_TRY(rtm_mpi_status(MPI_Win_sync(window), "MPI_Win_sync"));
      }
      copy_pair(slot, slot + chunk, a + done, b + done, n);
      RTM_TRY(rtm_mpi_status(MPI_Win_sync(window), "MPI_Win_sync")); /* stores, message */
      RTM_TRY(send_signal(mpi, 0, TAG_SLOT_FULL, &signalled,
                          "the shot groups' sums: a slot filled for group 0"));
    } else {
      RTM_TRY(
          await_signal(mpi, 1, TAG_SLOT_FULL, "the shot groups' sums: a slot filled by group 1"));
      RTM_TRY(rtm_mpi_status(MPI_Win_sync(window), "MPI_Win_sync")); /* message, loads */
      combine(a + done, b + done, slot, slot + chunk, n, context);
      if (k + COMBINE_SLOTS < chunks) {
        RTM_TRY(rtm_mpi_status(MPI_Win_sync(window), "MPI_Win_sync")); /* loads, message */
        RTM_TRY(send_signal(mpi, 1, TAG_SLOT_FREE, &signalled,
                            "the shot groups' sums: a slot freed for group 1"));
      }
    }
  }
  /* every group done with the slots (group 0's last combine) before the free */
  RTM_TRY(close_sums_window(mpi, &signalled, peer, &window));
fail:
  return status;
}

/* Two groups as messages over `cross` (rank k group k): group 1 sends its chunks, group 0
 * receives each into a buffer and combines it. */
static int pair_messages(rtm_mpi_t *mpi, float *a, float *b, size_t count,
                         rtm_mpi_combine_t combine, void *context) {
  int status = RTM_OK;
  float *other = NULL;
  const size_t chunk = combine_chunk(mpi, count);
  if (mpi->group == 0) {
    other = malloc(2 * chunk * sizeof *other);
    if (!other) RTM_FAIL(RTM_ERR_NOMEM, "out of memory for the shot groups' sums");
  }
  for (size_t done = 0; done < count; done += chunk) {
    const size_t n = chunk_length(count, done, chunk);
    if (mpi->group == 1) {
      RTM_TRY(move_pair(mpi, a + done, b + done, n, 0, 1, "MPI_Send to shot group 0"));
    } else {
      RTM_TRY(move_pair(mpi, other, other + n, n, 1, 0, "MPI_Recv from shot group 1"));
      combine(a + done, b + done, other, other + n, n, context);
    }
  }
  free(other);
  return RTM_OK;
fail:
  /* a receive may still be posted into it: the job ends (rtm_mpi_fail_fast) before any
   * reuse, and a network card may yet write into it, so it is not freed */
  return status;
}

/* The chain's chunks under way at a time: one a group, so that every group has one to
 * combine while group 0 sends the next and takes the first back. */
static size_t chain_held(const rtm_mpi_t *mpi, size_t chunks) {
  return (size_t)mpi->groups < chunks ? (size_t)mpi->groups : chunks;
}

/* The chain's last chunk reaches group 0 G - 1 turns after its first: its chunks are made
 * small enough that there are CHAIN_TURNS a group (the pipeline filling for a fifth of the
 * turns at most), but no smaller than CHAIN_CHUNK_LEAST floats (4 MiB an array); a chunk
 * set by rtm_mpi_set_combine_chunk (the tests) as it is. */
enum { CHAIN_TURNS = 4, CHAIN_CHUNK_LEAST = 1 << 20 };
static size_t chain_chunk(const rtm_mpi_t *mpi, size_t count) {
  const size_t chunk = combine_chunk(mpi, count);
  if (mpi->combine_chunk) return chunk;
  const size_t turns = CHAIN_TURNS * (size_t)mpi->groups, small = (count + turns - 1) / turns;
  const size_t least = chunk < CHAIN_CHUNK_LEAST ? chunk : CHAIN_CHUNK_LEAST;
  return small < least ? least : (small < chunk ? small : chunk);
}

/* The chain through the window (cross_node, rank k group k): its slots lie in group 0's
 * part; group 0 copies chunk k into slot k % held and says so to group 1, which combines its
 * pairs into the slot and says so to group 2, and so on; once the last group has said so,
 * group 0 copies the slot into its arrays and fills it again. */
static int chain_shared(rtm_mpi_t *mpi, float *a, float *b, size_t count, rtm_mpi_combine_t combine,
                        void *context) {
  int status = RTM_OK;
  MPI_Win window = MPI_WIN_NULL;
  MPI_Request signalled = MPI_REQUEST_NULL;
  float *slots = NULL;
  const int group = mpi->group, next = (group + 1) % mpi->groups,
            previous = (group + mpi->groups - 1) % mpi->groups;
  const size_t chunk = chain_chunk(mpi, count), chunks = (count + chunk - 1) / chunk,
               held = chain_held(mpi, chunks);
  const MPI_Aint bytes = group == 0 ? (MPI_Aint)(held * 2 * chunk * sizeof(float)) : 0;
  RTM_TRY(open_sums_window(mpi, bytes, &slots, &window));
  if (group != 0) {
    MPI_Aint size = 0;
    int unit = 0;
    RTM_TRY(rtm_mpi_status(MPI_Win_shared_query(window, 0, &size, &unit, &slots),
                           "MPI_Win_shared_query (group 0's slots)"));
  }
  /* group 0: chunk k - held back into its arrays, then chunk k out; the others: chunk k */
  const size_t turns = group == 0 ? chunks + held : chunks;
  for (size_t k = 0; k < turns; ++k) {
    if (group == 0 && k >= held) {
      const size_t back = k - held, done = back * chunk, n = chunk_length(count, done, chunk);
      const float *slot = slots + (back % held) * 2 * chunk;
      RTM_TRY(await_signal(mpi, previous, TAG_SLOT_FULL,
                           "the shot groups' sums: a chunk back from the last group"));
      RTM_TRY(rtm_mpi_status(MPI_Win_sync(window), "MPI_Win_sync")); /* message, loads */
      copy_pair(a + done, b + done, slot, slot + chunk, n);
    }
    if (group == 0 && k >= chunks) continue;
    const size_t done = k * chunk, n = chunk_length(count, done, chunk);
    float *slot = slots + (k % held) * 2 * chunk;
    if (group == 0) {
      copy_pair(slot, slot + chunk, a + done, b + done, n);
    } else {
      RTM_TRY(await_signal(mpi, previous, TAG_SLOT_FULL,
                           "the shot groups' sums: a chunk from the group before"));
      RTM_TRY(rtm_mpi_status(MPI_Win_sync(window), "MPI_Win_sync")); /* message, loads */
      combine(slot, slot + chunk, a + done, b + done, n, context);
    }
    RTM_TRY(rtm_mpi_status(MPI_Win_sync(window), "MPI_Win_sync")); /* stores, message */
    RTM_TRY(send_signal(mpi, next, TAG_SLOT_FULL, &signalled,
                        "the shot groups' sums: a chunk for the next group"));
  }
  RTM_TRY(close_sums_window(mpi, &signalled, next, &window));
fail:
  return status;
}

/* The chain as messages over `cross` (rank k group k): group 0 sends chunk k from its arrays
 * (up to `held` ahead) and receives it back into them from the last group; the others
 * receive chunk k from the group before into one of two buffers, combine their pairs into
 * it and send it on while they receive the next. `pairs` of send requests, one pair a chunk
 * under way: group 0's `held`, the others' two buffers. */
static int chain_messages(rtm_mpi_t *mpi, float *a, float *b, size_t count,
                          rtm_mpi_combine_t combine, void *context) {
  int status = RTM_OK;
  float *buffers = NULL;
  MPI_Request *sent = NULL;
  const int group = mpi->group, next = (group + 1) % mpi->groups,
            previous = (group + mpi->groups - 1) % mpi->groups;
  const size_t chunk = chain_chunk(mpi, count), chunks = (count + chunk - 1) / chunk,
               held = chain_held(mpi, chunks), pairs = group == 0 ? held : 2;
  const int peers[2] = {next, next};
  sent = malloc(2 * pairs * sizeof *sent);
  if (!sent) RTM_FAIL(RTM_ERR_NOMEM, "out of memory for the shot groups' sums");
  for (size_t i = 0; i < 2 * pairs; ++i)
    sent[i] = MPI_REQUEST_NULL;
  if (group != 0) {
    buffers = malloc(2 * 2 * chunk * sizeof *buffers);
    if (!buffers) RTM_FAIL(RTM_ERR_NOMEM, "out of memory for the shot groups' sums");
  }
  const size_t turns = group == 0 ? chunks + held : chunks;
  for (size_t k = 0; k < turns; ++k) {
    MPI_Request *pair = sent + 2 * (k % pairs);
    /* the pair's last sends (chunk k - pairs) done before their memory is used again */
    RTM_TRY(rtm_mpi_wait_all(mpi, 2, pair, peers, mpi->cross,
                             "the shot groups' sums: a chunk sent on"));
    if (group == 0 && k >= held) { /* chunk k - held back into the arrays it left */
      const size_t done = (k - held) * chunk, n = chunk_length(count, done, chunk);
      RTM_TRY(
          move_pair(mpi, a + done, b + done, n, previous, 0, "MPI_Recv from the last shot group"));
    }
    if (group == 0 && k >= chunks) continue;
    const size_t done = k * chunk, n = chunk_length(count, done, chunk);
    float *to_a = a + done, *to_b = b + done;
    if (group != 0) {
      to_a = buffers + (k % 2) * 2 * chunk;
      to_b = to_a + chunk;
      RTM_TRY(move_pair(mpi, to_a, to_b, n, previous, 0, "MPI_Recv from the shot group before"));
      combine(to_a, to_b, a + done, b + done, n, context);
    }
    RTM_TRY(post_pair(mpi, to_a, to_b, n, next, 1, pair, "MPI_Isend to the next shot group"));
  }
  for (size_t i = 0; i < pairs; ++i)
    RTM_TRY(rtm_mpi_wait_all(mpi, 2, sent + 2 * i, peers, mpi->cross,
                             "the shot groups' sums: the last chunks sent on"));
  free(buffers);
  free(sent);
  return RTM_OK;
fail:
  /* requests may still be posted on them: the job ends (rtm_mpi_fail_fast) before any
   * reuse, and a network card may yet write into them, so they are not freed */
  return status;
}

int rtm_mpi_groups_combine(rtm_mpi_t *mpi, float *a, float *b, size_t count, int shared,
                           rtm_mpi_combine_t combine, void *context) {
  int status = RTM_OK;
  if (rtm_mpi_groups(mpi) == 1 || count == 0) return RTM_OK; /* a slab's count, every group's */
  int node_size = 0;
  RTM_TRY(rtm_mpi_status(MPI_Comm_size(mpi->cross_node, &node_size), "MPI_Comm_size"));
  const int window = shared && node_size == mpi->groups;
  /* two groups: group 1's chunks to group 0, which combines them (a chain would move the
   * volume twice); more: the chain */
  if (mpi->groups > 2)
    return window ? chain_shared(mpi, a, b, count, combine, context)
                  : chain_messages(mpi, a, b, count, combine, context);
  return window ? pair_shared(mpi, a, b, count, combine, context)
                : pair_messages(mpi, a, b, count, combine, context);
fail:
  return status;
}

#else /* one rank: no MPI in this build */

int rtm_mpi_groups_combine(rtm_mpi_t *mpi, float *a, float *b, size_t count, int shared,
                           rtm_mpi_combine_t combine, void *context) {
  (void)mpi;
  (void)a;
  (void)b;
  (void)count;
  (void)shared;
  (void)combine;
  (void)context;
  return RTM_OK;
}

#endif
