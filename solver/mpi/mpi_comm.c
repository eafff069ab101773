/* The MPI context (rtm_mpi_t) and the MPI calls of rtm_mpi.h: the slabs' over the slab
 * communicator (the world, or this rank's shot group after rtm_mpi_split_groups), one rank
 * per slab in rank order; the groups' between them; for one rank (no MPI in the build, no
 * launcher, or a NULL context) each is a no-op. */
#include "rtm_mpi.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_internal.h"
#include "rtm_status.h"

#ifdef RTM3D_HAVE_MPI
#include <mpi.h>
#endif

/* The launchers' marks: Open MPI, PMI (MPICH, Intel MPI, Slurm's srun --mpi), PMIx. */
static int started_by_launcher(void) {
  static const char *const marks[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK"};
  for (size_t i = 0; i < sizeof marks / sizeof marks[0]; ++i)
    if (getenv(marks[i])) return 1;
  return 0;
}

/* The slab's nz planes into `extended` after its `planes` planes below, a plane a thread: a
 * single memcpy of a 512^3 image (and the first touch of the fresh pages it lands in) took
 * a thread a good part of the image filter's 0.37 s on an H200 host. */
static void copy_slab(const rtm_grid_t *grid, int planes, const float *slab, float *extended) {
  const size_t plane = (size_t)grid->n[0] * (size_t)grid->n[1];
  const long nz = grid->nz_local;
  float *into = extended + (size_t)planes * plane;
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
  for (long z = 0; z < nz; ++z)
    memcpy(into + (size_t)z * plane, slab + (size_t)z * plane, plane * sizeof *slab);
}

/* A context of rank 0 of 1, its communicators null: a process no launcher started, and
 * the start of one that a launcher did. */
static int new_context(rtm_mpi_t **out) {
  rtm_mpi_t *mpi = calloc(1, sizeof *mpi);
  *out = mpi;
  if (!mpi) {
    rtm_log_error("out of memory for the MPI context");
    return RTM_ERR_NOMEM;
  }
  mpi->world_size = mpi->local_size = mpi->size = mpi->groups = 1;
#ifdef RTM3D_HAVE_MPI
  mpi->node = mpi->slab = mpi->cross = mpi->group_node = mpi->cross_node = MPI_COMM_NULL;
#endif
  return RTM_OK;
}

/* NULL is one rank on its own (rtm_mpi.h): rank 0 of 1, group 0 of 1. */
int rtm_mpi_rank(const rtm_mpi_t *mpi) {
  return mpi ? mpi->rank : 0;
}

int rtm_mpi_size(const rtm_mpi_t *mpi) {
  return mpi ? mpi->size : 1;
}

int rtm_mpi_world_rank(const rtm_mpi_t *mpi) {
  return mpi ? mpi->world_rank : 0;
}

int rtm_mpi_world_size(const rtm_mpi_t *mpi) {
  return mpi ? mpi->world_size : 1;
}

int rtm_mpi_group(const rtm_mpi_t *mpi) {
  return mpi ? mpi->group : 0;
}

int rtm_mpi_groups(const rtm_mpi_t *mpi) {
  return mpi ? mpi->groups : 1;
}

void rtm_mpi_set_combine_chunk(rtm_mpi_t *mpi, size_t floats) {
  if (mpi) mpi->combine_chunk = floats;
}

int rtm_mpi_local_rank(const rtm_mpi_t *mpi) {
  return mpi ? mpi->local_rank : 0;
}

int rtm_mpi_local_size(const rtm_mpi_t *mpi) {
  return mpi ? mpi->local_size : 1;
}

#ifdef RTM3D_HAVE_MPI

/* An MPI failure as a status, with the library's words. */
int rtm_mpi_status(int code, const char *what) {
  if (code == MPI_SUCCESS) return RTM_OK;
  char text[MPI_MAX_ERROR_STRING] = "";
  int length = 0;
  MPI_Error_string(code, text, &length);
  rtm_log_error("MPI: %s failed: %s", what, text);
  return RTM_ERR_MPI;
}

/* A non-blocking collective started with return code `code`, waited for (wait.c: polled,
 * so that a signal or mpi.timeout_s ends the wait). */
static int await_collective(rtm_mpi_t *mpi, int code, MPI_Request *request, MPI_Comm comm,
                            const char *what) {
  if (code != MPI_SUCCESS) return rtm_mpi_status(code, what);
  return rtm_mpi_wait_all(mpi, 1, request, NULL, comm, what);
}

/* values := op over the ranks of `comm`, on each of them (in place). */
static int allreduce_doubles(rtm_mpi_t *mpi, double *values, int count, rtm_mpi_op_t op,
                             MPI_Comm comm, const char *what) {
  const MPI_Op ops[] = {MPI_SUM, MPI_MIN, MPI_MAX};
  MPI_Request request = MPI_REQUEST_NULL;
  return await_collective(
      mpi, MPI_Iallreduce(MPI_IN_PLACE, values, count, MPI_DOUBLE, ops[op], comm, &request),
      &request, comm, what);
}

/* values := the sum over the ranks of `comm` on its rank 0 (`root`: this rank is it), in
 * place there, in chunks of MPI's int counts. */
static int sum_floats_to_root(rtm_mpi_t *mpi, float *values, size_t count, MPI_Comm comm, int root,
                              const char *what) {
  int status = RTM_OK;
  for (size_t done = 0; done < count;) {
    const int chunk = count - done > (size_t)INT_MAX ? INT_MAX : (int)(count - done);
    void *send = root ? MPI_IN_PLACE : (void *)(values + done);
    MPI_Request request = MPI_REQUEST_NULL;
    RTM_TRY(await_collective(
        mpi, MPI_Ireduce(send, values + done, chunk, MPI_FLOAT, MPI_SUM, 0, comm, &request),
        &request, comm, what));
    done += (size_t)chunk;
  }
fail:
  return status;
}

/* MPI started in `mpi`: the world's rank and size, this node's ranks; the slabs are
 * shared by the world until rtm_mpi_split_groups. */
static int start_mpi(int *argc, char ***argv, rtm_mpi_t *mpi) {
  int status = RTM_OK;
  RTM_TRY(rtm_mpi_status(MPI_Init(argc, argv), "MPI_Init"));
  mpi->started = 1;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &mpi->world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &mpi->world_size);
  rtm_log_set_rank(mpi->world_rank, mpi->world_size);
  RTM_TRY(rtm_mpi_status(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, mpi->world_rank,
                                             MPI_INFO_NULL, &mpi->node),
                         "MPI_Comm_split_type (the ranks of this node)"));
  MPI_Comm_rank(mpi->node, &mpi->local_rank);
  MPI_Comm_size(mpi->node, &mpi->local_size);
  mpi->slab = MPI_COMM_WORLD;
  mpi->rank = mpi->world_rank;
  mpi->size = mpi->world_size;
fail:
  return status;
}

int rtm_mpi_init(int *argc, char ***argv, rtm_mpi_t **out) {
  int status = RTM_OK;
  rtm_mpi_t *mpi = NULL;
  *out = NULL;
  RTM_TRY(new_context(&mpi));
  if (started_by_launcher()) RTM_TRY(start_mpi(argc, argv, mpi));
  *out = mpi;
  mpi = NULL;
fail:
  free(mpi); /* MPI, if it started, is left as it is: the process ends */
  return status;
}

const void *rtm_mpi_slab_communicator(const rtm_mpi_t *mpi) {
  return mpi ? &mpi->slab : NULL;
}

int rtm_mpi_split_groups(rtm_mpi_t *mpi, int count) {
  int status = RTM_OK;
  const int world_size = mpi->world_size, world_rank = mpi->world_rank;
  if (count < 1 || world_size % count != 0)
    RTM_FAIL(RTM_ERR_CONFIG,
             "mpi.shot_groups = %d does not divide the %d ranks into groups of one size: "
             "choose a divisor of the rank count",
             count, world_size);
  if (count == 1 || world_size == 1) return RTM_OK;
  const int per_group = world_size / count;
  mpi->group = world_rank / per_group;
  mpi->groups = count;
  RTM_TRY(rtm_mpi_status(MPI_Comm_split(MPI_COMM_WORLD, mpi->group, world_rank, &mpi->slab),
                         "MPI_Comm_split (the shot groups)"));
  MPI_Comm_set_errhandler(mpi->slab, MPI_ERRORS_RETURN);
  MPI_Comm_rank(mpi->slab, &mpi->rank);
  MPI_Comm_size(mpi->slab, &mpi->size);
  RTM_TRY(rtm_mpi_status(MPI_Comm_split(MPI_COMM_WORLD, mpi->rank, mpi->group, &mpi->cross),
                         "MPI_Comm_split (a slab across the groups)"));
  MPI_Comm_set_errhandler(mpi->cross, MPI_ERRORS_RETURN);
  /* the groups' sums meet through a window where the slab's ranks share a node */
  RTM_TRY(rtm_mpi_status(MPI_Comm_split_type(mpi->cross, MPI_COMM_TYPE_SHARED, mpi->group,
                                             MPI_INFO_NULL, &mpi->cross_node),
                         "MPI_Comm_split_type (a slab's ranks across the groups on this node)"));
  /* the halo windows of a group among its own ranks: groups do not wait for each other */
  RTM_TRY(rtm_mpi_status(MPI_Comm_split_type(mpi->slab, MPI_COMM_TYPE_SHARED, mpi->rank,
                                             MPI_INFO_NULL, &mpi->group_node),
                         "MPI_Comm_split_type (a group's ranks on this node)"));
fail:
  return status;
}

int rtm_mpi_world_allreduce(rtm_mpi_t *mpi, double *values, int count, rtm_mpi_op_t op) {
  if (rtm_mpi_world_size(mpi) == 1) return RTM_OK;
  return allreduce_doubles(mpi, values, count, op, MPI_COMM_WORLD, "MPI_Allreduce over every rank");
}

/* `bytes` from or to rank `peer` of `comm`, in chunks of at most INT_MAX; `what` names the
 * transfer in a failure. */
static int move_bytes(rtm_mpi_t *mpi, void *data, size_t bytes, int peer, int tag, int sending,
                      MPI_Comm comm, const char *what) {
  int status = RTM_OK;
  for (size_t done = 0; done < bytes;) {
    const int chunk = bytes - done > (size_t)INT_MAX ? INT_MAX : (int)(bytes - done);
    char *at = (char *)data + done;
    MPI_Request request = MPI_REQUEST_NULL;
    RTM_TRY(rtm_mpi_status(sending ? MPI_Isend(at, chunk, MPI_BYTE, peer, tag, comm, &request)
                                   : MPI_Irecv(at, chunk, MPI_BYTE, peer, tag, comm, &request),
                           what));
    RTM_TRY(rtm_mpi_wait_all(mpi, 1, &request, &peer, comm, what));
    done += (size_t)chunk;
  }
fail:
  return status;
}

/* The meeting's chunks: 8 Mi floats of each array at a time (64 MiB of pairs). */
enum { COMBINE_CHUNK = 1 << 23 };
/* A window's slots a group, two groups: one filled while group 0 combines the other. */
enum { COMBINE_SLOTS = 2 };
/* The zero-byte messages of the window's slots: filled, and free again. */
enum { TAG_SLOT_FULL = 3, TAG_SLOT_FREE = 4 };

/* The floats of each array a chunk of the meeting holds, every path: at most the test's
 * rtm_mpi_set_combine_chunk or COMBINE_CHUNK (and MPI's int counts), at most `count`, at
 * least 1. */
static size_t combine_chunk(const rtm_mpi_t *mpi, size_t count) {
  size_t most = mpi->combine_chunk ? mpi->combine_chunk : COMBINE_CHUNK;
  if (most > (size_t)INT_MAX) most = (size_t)INT_MAX;
  return count < most ? (count > 0 ? count : 1) : most;
}

/* A zero-byte message to or from rank `peer` of `comm`: a slot's turn. */
static int signal_slot(rtm_mpi_t *mpi, int peer, int tag, int sending, MPI_Comm comm,
                       const char *what) {
  int status = RTM_OK;
  MPI_Request request = MPI_REQUEST_NULL;
  RTM_TRY(rtm_mpi_status(sending ? MPI_Isend(NULL, 0, MPI_BYTE, peer, tag, comm, &request)
                                 : MPI_Irecv(NULL, 0, MPI_BYTE, peer, tag, comm, &request),
                         what));
  RTM_TRY(rtm_mpi_wait_all(mpi, 1, &request, &peer, comm, what));
fail:
  return status;
}

/* to[i] = from[i], i < count, over the threads. */
static void copy_floats(float *to, const float *from, size_t count) {
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
  for (size_t i = 0; i < count; ++i)
    to[i] = from[i];
}

/* The groups' window on cross_node, `bytes` of it this rank's (at *own), locked for every
 * rank. Its making is a blocking collective: a polled barrier first, so that a group that
 * waits for the others there still ends on a signal or past mpi.timeout_s. */
static int open_sums_window(rtm_mpi_t *mpi, MPI_Aint bytes, float **own, MPI_Win *window) {
  int status = RTM_OK;
  MPI_Request request = MPI_REQUEST_NULL;
  RTM_TRY(await_collective(mpi, MPI_Ibarrier(mpi->cross_node, &request), &request, mpi->cross_node,
                           "the shot groups meeting (before their window)"));
  RTM_TRY(rtm_mpi_status(
      MPI_Win_allocate_shared(bytes, sizeof(float), MPI_INFO_NULL, mpi->cross_node, own, window),
      "MPI_Win_allocate_shared (the shot groups' sums)"));
  MPI_Win_set_errhandler(*window, MPI_ERRORS_RETURN);
  RTM_TRY(rtm_mpi_status(MPI_Win_lock_all(MPI_MODE_NOCHECK, *window), "MPI_Win_lock_all"));
fail:
  return status;
}

/* Every group done with the window (a polled barrier), then its free. A failure before this
 * leaves the window to the job's end: its free is collective and the others may wait
 * elsewhere (rtm_mpi_fail_fast aborts the job). */
static int close_sums_window(rtm_mpi_t *mpi, MPI_Win *window) {
  int status = RTM_OK;
  MPI_Request request = MPI_REQUEST_NULL;
  RTM_TRY(await_collective(mpi, MPI_Ibarrier(mpi->cross_node, &request), &request, mpi->cross_node,
                           "the shot groups meeting (after their window)"));
  RTM_TRY(rtm_mpi_status(MPI_Win_unlock_all(*window), "MPI_Win_unlock_all"));
  RTM_TRY(rtm_mpi_status(MPI_Win_free(window), "MPI_Win_free (the shot groups' sums)"));
fail:
  return status;
}

/* rtm_mpi_groups_combine through a shared-memory window of the node (cross_node, whose rank
 * k is group k): each group but the first has COMBINE_SLOTS slots of both arrays' chunks;
 * it copies chunk k into slot k % COMBINE_SLOTS once group 0 has said the slot is free,
 * then says it is full; group 0 combines straight from the slot. */
static int combine_shared(rtm_mpi_t *mpi, float *a, float *b, size_t count,
                          rtm_mpi_combine_t combine, void *context) {
  int status = RTM_OK;
  MPI_Win window = MPI_WIN_NULL;
  float *own = NULL;
  const size_t chunk = combine_chunk(mpi, count), chunks = (count + chunk - 1) / chunk;
  const MPI_Aint bytes =
      mpi->group == 0 ? 0 : (MPI_Aint)(COMBINE_SLOTS * 2 * chunk * sizeof(float));
  RTM_TRY(open_sums_window(mpi, bytes, &own, &window));
  for (int from = 1; from < mpi->groups; ++from) {
    if (mpi->group != 0 && mpi->group != from) continue;
    float *slots = own;
    if (mpi->group == 0) {
      MPI_Aint size = 0;
      int unit = 0;
      RTM_TRY(rtm_mpi_status(MPI_Win_shared_query(window, from, &size, &unit, &slots),
                             "MPI_Win_shared_query (a shot group's sums)"));
    }
    for (size_t k = 0; k < chunks; ++k) {
      const size_t done = k * chunk, n = count - done < chunk ? count - done : chunk;
      float *slot = slots + (k % COMBINE_SLOTS) * 2 * chunk;
      if (mpi->group == from) {
        if (k >= COMBINE_SLOTS) {
          RTM_TRY(signal_slot(mpi, 0, TAG_SLOT_FREE, 0, mpi->cross_node,
                              "the shot groups' sums: a slot freed by group 0"));
          /* group 0's loads of the slot before these stores */
          RTM_TRY(rtm_mpi_status(MPI_Win_sync(window), "MPI_Win_sync"));
        }
        copy_floats(slot, a + done, n);
        copy_floats(slot + chunk, b + done, n);
        RTM_TRY(rtm_mpi_status(MPI_Win_sync(window), "MPI_Win_sync")); /* stores, message */
        RTM_TRY(signal_slot(mpi, 0, TAG_SLOT_FULL, 1, mpi->cross_node,
                            "the shot groups' sums: a slot filled for group 0"));
      } else {
        RTM_TRY(signal_slot(mpi, from, TAG_SLOT_FULL, 0, mpi->cross_node,
                            "the shot groups' sums: a slot filled by a group"));
        RTM_TRY(rtm_mpi_status(MPI_Win_sync(window), "MPI_Win_sync")); /* message, loads */
        combine(a + done, b + done, slot, slot + chunk, n, context);
        if (k + COMBINE_SLOTS < chunks) {
          RTM_TRY(rtm_mpi_status(MPI_Win_sync(window), "MPI_Win_sync")); /* loads, message */
          RTM_TRY(signal_slot(mpi, from, TAG_SLOT_FREE, 1, mpi->cross_node,
                              "the shot groups' sums: a slot freed for a group"));
        }
      }
    }
  }
  /* every group done with the slots (group 0's last combine) before the free */
  RTM_TRY(close_sums_window(mpi, &window));
fail:
  return status;
}

/* The chunks of a chain (three groups or more), both paths: chunk k starts as group 0's
 * pairs, passes through groups 1, 2, ..., each combining its own pairs into it, and comes
 * back to group 0's arrays. Every cell is combined in group order, as when group 0 took the
 * groups in turn, but the groups work at once, each on another chunk, and no group takes in
 * more than one volume whatever the group count (group 0 took in G - 1). `held` chunks are
 * under way at a time. */
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

/* The chain through a shared-memory window of the node (cross_node, rank k group k): its
 * slots lie in group 0's part; group 0 copies chunk k into slot k % held and says so to
 * group 1, which combines its pairs into the slot and says so to group 2, and so on; once
 * the last group has said so, group 0 copies the slot into its arrays and fills it again. */
static int chain_shared(rtm_mpi_t *mpi, float *a, float *b, size_t count, rtm_mpi_combine_t combine,
                        void *context) {
  int status = RTM_OK;
  MPI_Win window = MPI_WIN_NULL;
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
      const size_t back = k - held, done = back * chunk,
                   n = count - done < chunk ? count - done : chunk;
      const float *slot = slots + (back % held) * 2 * chunk;
      RTM_TRY(signal_slot(mpi, previous, TAG_SLOT_FULL, 0, mpi->cross_node,
                          "the shot groups' sums: a chunk back from the last group"));
      RTM_TRY(rtm_mpi_status(MPI_Win_sync(window), "MPI_Win_sync")); /* message, loads */
      copy_floats(a + done, slot, n);
      copy_floats(b + done, slot + chunk, n);
    }
    if (group == 0 && k >= chunks) continue;
    const size_t done = k * chunk, n = count - done < chunk ? count - done : chunk;
    float *slot = slots + (k % held) * 2 * chunk;
    if (group == 0) {
      copy_floats(slot, a + done, n);
      copy_floats(slot + chunk, b + done, n);
    } else {
      RTM_TRY(signal_slot(mpi, previous, TAG_SLOT_FULL, 0, mpi->cross_node,
                          "the shot groups' sums: a chunk from the group before"));
      RTM_TRY(rtm_mpi_status(MPI_Win_sync(window), "MPI_Win_sync")); /* message, loads */
      combine(slot, slot + chunk, a + done, b + done, n, context);
    }
    RTM_TRY(rtm_mpi_status(MPI_Win_sync(window), "MPI_Win_sync")); /* stores, message */
    RTM_TRY(signal_slot(mpi, next, TAG_SLOT_FULL, 1, mpi->cross_node,
                        "the shot groups' sums: a chunk for the next group"));
  }
  RTM_TRY(close_sums_window(mpi, &window));
fail:
  return status;
}

/* The chain as messages over `cross` (rank k group k): group 0 sends chunk k from its arrays
 * (up to `held` ahead) and receives it back into them from the last group; group g
 * receives chunk k from group g - 1 into one of two buffers, combines its pairs into it and
 * sends it on while it receives the next. */
static int chain_messages(rtm_mpi_t *mpi, float *a, float *b, size_t count,
                          rtm_mpi_combine_t combine, void *context) {
  int status = RTM_OK;
  float *buffers = NULL;
  MPI_Request *sent = NULL;
  const int group = mpi->group, next = (group + 1) % mpi->groups,
            previous = (group + mpi->groups - 1) % mpi->groups;
  const size_t chunk = chain_chunk(mpi, count), chunks = (count + chunk - 1) / chunk,
               held = group == 0 ? chain_held(mpi, chunks) : 2;
  const int peers[2] = {next, next};
  sent = malloc(2 * held * sizeof *sent);
  if (!sent) RTM_FAIL(RTM_ERR_NOMEM, "out of memory for the shot groups' sums");
  for (size_t i = 0; i < 2 * held; ++i)
    sent[i] = MPI_REQUEST_NULL;
  if (group != 0) {
    buffers = malloc(2 * 2 * chunk * sizeof *buffers);
    if (!buffers) RTM_FAIL(RTM_ERR_NOMEM, "out of memory for the shot groups' sums");
  }
  const size_t turns = group == 0 ? chunks + held : chunks;
  for (size_t k = 0; k < turns; ++k) {
    MPI_Request *pair = sent + 2 * (k % held);
    /* the pair's last sends (chunk k - held) done before its memory is used again */
    RTM_TRY(rtm_mpi_wait_all(mpi, 2, pair, peers, mpi->cross,
                             "the shot groups' sums: a chunk sent on"));
    float *to_a = NULL, *to_b = NULL;
    if (group == 0 && k >= held) { /* chunk k - held back into the arrays it left */
      const size_t done = (k - held) * chunk, n = count - done < chunk ? count - done : chunk;
      RTM_TRY(move_bytes(mpi, a + done, n * sizeof(float), previous, 1, 0, mpi->cross,
                         "MPI_Recv from the last shot group"));
      RTM_TRY(move_bytes(mpi, b + done, n * sizeof(float), previous, 2, 0, mpi->cross,
                         "MPI_Recv from the last shot group"));
    }
    if (group == 0 && k >= chunks) continue;
    const size_t done = k * chunk, n = count - done < chunk ? count - done : chunk;
    if (group == 0) {
      to_a = a + done;
      to_b = b + done;
    } else {
      to_a = buffers + (k % 2) * 2 * chunk;
      to_b = to_a + chunk;
      RTM_TRY(move_bytes(mpi, to_a, n * sizeof(float), previous, 1, 0, mpi->cross,
                         "MPI_Recv from the shot group before"));
      RTM_TRY(move_bytes(mpi, to_b, n * sizeof(float), previous, 2, 0, mpi->cross,
                         "MPI_Recv from the shot group before"));
      combine(to_a, to_b, a + done, b + done, n, context);
    }
    RTM_TRY(rtm_mpi_status(MPI_Isend(to_a, (int)n, MPI_FLOAT, next, 1, mpi->cross, &pair[0]),
                           "MPI_Isend to the next shot group"));
    RTM_TRY(rtm_mpi_status(MPI_Isend(to_b, (int)n, MPI_FLOAT, next, 2, mpi->cross, &pair[1]),
                           "MPI_Isend to the next shot group"));
  }
  RTM_TRY(rtm_mpi_wait_all(mpi, (int)(2 * held), sent, NULL, mpi->cross,
                           "the shot groups' sums: the last chunks sent on"));
fail:
  /* on a failure the job ends (rtm_mpi_fail_fast) with no MPI call that could complete a
   * request into these */
  free(buffers);
  free(sent);
  return status;
}

int rtm_mpi_groups_combine(rtm_mpi_t *mpi, float *a, float *b, size_t count, int shared,
                           rtm_mpi_combine_t combine, void *context) {
  int status = RTM_OK;
  float *other = NULL;
  if (rtm_mpi_groups(mpi) == 1) return RTM_OK;
  int node_size = 0;
  RTM_TRY(rtm_mpi_status(MPI_Comm_size(mpi->cross_node, &node_size), "MPI_Comm_size"));
  const int window = shared && node_size == mpi->groups;
  /* two groups: group 1's chunks to group 0, which combines them (a chain would move the
   * volume twice); more: the chain */
  if (mpi->groups > 2)
    return window ? chain_shared(mpi, a, b, count, combine, context)
                  : chain_messages(mpi, a, b, count, combine, context);
  if (window) return combine_shared(mpi, a, b, count, combine, context);
  const size_t chunk_max = combine_chunk(mpi, count);
  if (mpi->group == 0) {
    other = malloc(2 * chunk_max * sizeof *other);
    if (!other) RTM_FAIL(RTM_ERR_NOMEM, "out of memory for the shot groups' sums");
  }
  for (int from = 1; from < mpi->groups; ++from) {
    if (mpi->group != 0 && mpi->group != from) continue;
    for (size_t done = 0; done < count; done += chunk_max) {
      const size_t n = count - done < chunk_max ? count - done : chunk_max;
      const size_t bytes = n * sizeof(float);
      if (mpi->group == from) {
        RTM_TRY(move_bytes(mpi, a + done, bytes, 0, 1, 1, mpi->cross, "MPI_Send to shot group 0"));
        RTM_TRY(move_bytes(mpi, b + done, bytes, 0, 2, 1, mpi->cross, "MPI_Send to shot group 0"));
      } else {
        RTM_TRY(
            move_bytes(mpi, other, bytes, from, 1, 0, mpi->cross, "MPI_Recv from a shot group"));
        RTM_TRY(move_bytes(mpi, other + n, bytes, from, 2, 0, mpi->cross,
                           "MPI_Recv from a shot group"));
        combine(a + done, b + done, other, other + n, n, context);
      }
    }
  }
fail:
  free(other);
  return status;
}

int rtm_mpi_leader_send(rtm_mpi_t *mpi, const void *data, size_t bytes, int tag) {
  return move_bytes(mpi, (void *)data, bytes, 0, tag, 1, MPI_COMM_WORLD,
                    "MPI_Send to the first rank");
}

int rtm_mpi_leader_recv(rtm_mpi_t *mpi, int from_group, void *data, size_t bytes, int tag) {
  return move_bytes(mpi, data, bytes, from_group * (mpi->world_size / mpi->groups), tag, 0,
                    MPI_COMM_WORLD, "MPI_Recv from a shot group");
}

void rtm_mpi_finalize(rtm_mpi_t *mpi) {
  if (!mpi) return;
  if (mpi->cross_node != MPI_COMM_NULL) MPI_Comm_free(&mpi->cross_node);
  if (mpi->group_node != MPI_COMM_NULL) MPI_Comm_free(&mpi->group_node);
  if (mpi->cross != MPI_COMM_NULL) MPI_Comm_free(&mpi->cross);
  if (mpi->slab != MPI_COMM_NULL && mpi->slab != MPI_COMM_WORLD) MPI_Comm_free(&mpi->slab);
  if (mpi->node != MPI_COMM_NULL) MPI_Comm_free(&mpi->node);
  if (mpi->started) MPI_Finalize();
  free(mpi);
}

void rtm_mpi_abort(const rtm_mpi_t *mpi, int exit_code) {
  if (!mpi || !mpi->started || mpi->world_size <= 1) return;
  rtm_mpi_run_abort_cleanup(mpi);
  MPI_Abort(MPI_COMM_WORLD, exit_code);
}

void rtm_mpi_fail_fast(rtm_mpi_t *mpi, int status) {
  if (status == RTM_OK || !mpi) return;
  if (status == RTM_ERR_INTERRUPTED && mpi->started && mpi->world_size > 1) {
    /* every rank of an mpirun that got the signal has it too; each cleans up without
     * waiting for the others (its partial files removed), and main's MPI_Abort ends the
     * job with 130 or 143, before mpirun's SIGKILL where a step is short */
    rtm_mpi_give_up(mpi);
    return;
  }
  rtm_mpi_abort(mpi, rtm_status_exit_code(status));
}

int rtm_mpi_barrier(rtm_mpi_t *mpi) {
  if (rtm_mpi_size(mpi) == 1) return RTM_OK;
  MPI_Request request = MPI_REQUEST_NULL;
  return await_collective(mpi, MPI_Ibarrier(mpi->slab, &request), &request, mpi->slab,
                          "MPI_Barrier");
}

int rtm_mpi_allreduce(rtm_mpi_t *mpi, double *values, int count, rtm_mpi_op_t op) {
  if (rtm_mpi_size(mpi) == 1) return RTM_OK;
  return allreduce_doubles(mpi, values, count, op, mpi->slab, "MPI_Allreduce");
}

int rtm_mpi_sum_to_root(rtm_mpi_t *mpi, float *values, size_t count) {
  if (rtm_mpi_size(mpi) == 1) return RTM_OK;
  return sum_floats_to_root(mpi, values, count, mpi->slab, mpi->rank == 0,
                            "MPI_Reduce of floats to rank 0 (traces, image slices)");
}

int rtm_mpi_write_slabs(const rtm_grid_t *grid, const float *slab, float *buffer,
                        rtm_mpi_slab_writer_t write, void *context) {
  int status = RTM_OK, written = RTM_OK;
  enum { TAG_SLAB = 22 };
  rtm_mpi_t *mpi = grid->mpi;
  const size_t plane = (size_t)grid->n[0] * (size_t)grid->n[1];
  const int ranks = rtm_mpi_size(mpi);
  if (rtm_mpi_rank(mpi) != 0)
    return move_bytes(mpi, (void *)slab, plane * (size_t)grid->nz_local * sizeof *slab, 0, TAG_SLAB,
                      1, mpi->slab, "MPI_Send of a slab to rank 0");
  written = write(context, grid->z_offset, grid->nz_local, slab);
  for (int r = 1; r < ranks; ++r) {
    int z_offset = 0, nz_local = 0;
    RTM_TRY(
        rtm_mpi_slab_aligned(grid->n[2], ranks, r, rtm_mpi_slab_align(mpi), &z_offset, &nz_local));
    RTM_TRY(move_bytes(mpi, buffer, plane * (size_t)nz_local * sizeof *buffer, r, TAG_SLAB, 0,
                       mpi->slab, "MPI_Recv of a slab on rank 0"));
    if (written == RTM_OK) written = write(context, z_offset, nz_local, buffer);
  }
  status = written;
fail:
  return status;
}

size_t rtm_mpi_largest_slab_cells(const rtm_grid_t *grid) {
  const int ranks = rtm_mpi_size(grid->mpi);
  int largest = 0;
  for (int r = 0; r < ranks; ++r) {
    int z_offset = 0, nz_local = 0;
    if (rtm_mpi_slab_aligned(grid->n[2], ranks, r, rtm_mpi_slab_align(grid->mpi), &z_offset,
                             &nz_local) == RTM_OK &&
        nz_local > largest)
      largest = nz_local;
  }
  return (size_t)grid->n[0] * (size_t)grid->n[1] * (size_t)largest;
}

int rtm_mpi_gather_lines(rtm_mpi_t *mpi, const char *line, size_t size, char *lines) {
  if (rtm_mpi_world_size(mpi) == 1) {
    memcpy(lines, line, size);
    return RTM_OK;
  }
  if (size > (size_t)INT_MAX) return RTM_ERR_INTERNAL;
  MPI_Request request = MPI_REQUEST_NULL;
  return await_collective(mpi,
                          MPI_Igather(line, (int)size, MPI_CHAR, lines, (int)size, MPI_CHAR, 0,
                                      MPI_COMM_WORLD, &request),
                          &request, MPI_COMM_WORLD, "MPI_Gather of the ranks' lines");
}

/* `count` floats of `to_below` sent to the neighbour below (`down`) and of `to_above` to the
 * one above (`up`), theirs received into `from_below` and `from_above`; what goes up is
 * tagged `tag_up`, what goes down `tag_down`; a side whose neighbour is MPI_PROC_NULL moves
 * nothing. */
static int swap_with_neighbours(rtm_mpi_t *mpi, int down, int up, const float *to_below,
                                const float *to_above, float *from_below, float *from_above,
                                int count, int tag_up, int tag_down, const char *what) {
  int status = RTM_OK, posted = 0, peers[4];
  MPI_Request requests[4];
  const int neighbour[2] = {down, up}, tag_in[2] = {tag_up, tag_down};
  const int tag_out[2] = {tag_down, tag_up};
  const float *out[2] = {to_below, to_above};
  float *in[2] = {from_below, from_above};
  for (int side = 0; side < 2; ++side) { /* below, then above */
    if (neighbour[side] == MPI_PROC_NULL) continue;
    peers[posted] = peers[posted + 1] = neighbour[side];
    RTM_TRY(rtm_mpi_status(MPI_Irecv(in[side], count, MPI_FLOAT, neighbour[side], tag_in[side],
                                     mpi->slab, &requests[posted++]),
                           what));
    RTM_TRY(rtm_mpi_status(MPI_Isend(out[side], count, MPI_FLOAT, neighbour[side], tag_out[side],
                                     mpi->slab, &requests[posted++]),
                           what));
  }
  status = rtm_mpi_wait_all(mpi, posted, requests, peers, mpi->slab, what);
fail:
  return status;
}

/* `first` and `last` (the R planes next to the neighbour below and above) sent, the
 * neighbours' planes received into `below` and `above`; a side without a neighbour sends and
 * receives nothing. */
static int exchange_staged(const rtm_grid_t *grid, const float *first, const float *last,
                           float *below, float *above) {
  int status = RTM_OK;
  const size_t planes = (size_t)RTM_RADIUS * grid->stride_z;
  rtm_mpi_t *mpi = grid->mpi;
  if (rtm_mpi_size(mpi) == 1) return RTM_OK;
  if (planes > (size_t)INT_MAX)
    RTM_FAIL(RTM_ERR_UNSUPPORTED, "planes of %zu floats are past MPI's int counts", planes);
  const int down = rtm_slab_has_below(grid) ? mpi->rank - 1 : MPI_PROC_NULL;
  const int up = rtm_slab_has_above(grid) ? mpi->rank + 1 : MPI_PROC_NULL;
  status = swap_with_neighbours(mpi, down, up, first, last, below, above, (int)planes, 1, 2,
                                "the halo exchange (the planes between neighbours)");
fail:
  return status;
}

int rtm_mpi_exchange_planes(const rtm_grid_t *grid, float *padded) {
  const size_t R = RTM_RADIUS, nz = (size_t)grid->nz_local;
  /* local plane iz starts at (R + iz) stride_z: ghosts below at 0, the first R planes at
   * R stride_z, the last R at nz stride_z, ghosts above at (nz + R) stride_z; MPI writes no
   * ghost of a side without a neighbour */
  return exchange_staged(grid, padded + R * grid->stride_z, padded + nz * grid->stride_z, padded,
                         padded + (nz + R) * grid->stride_z);
}

int rtm_mpi_exchange_dense_planes(const rtm_grid_t *grid, int planes, const float *slab,
                                  float *extended) {
  int status = RTM_OK;
  const size_t plane = (size_t)grid->n[0] * (size_t)grid->n[1], nz = (size_t)grid->nz_local;
  const size_t count = (size_t)planes * plane, p = (size_t)planes;
  rtm_mpi_t *mpi = grid->mpi;
  copy_slab(grid, planes, slab, extended);
  if (rtm_mpi_size(mpi) == 1 || planes == 0) return RTM_OK;
  if (count > (size_t)INT_MAX)
    RTM_FAIL(RTM_ERR_UNSUPPORTED, "%d planes of %zu cells are past MPI's int counts", planes,
             plane);
  const int down = rtm_slab_has_below(grid) ? mpi->rank - 1 : MPI_PROC_NULL;
  const int up = rtm_slab_has_above(grid) ? mpi->rank + 1 : MPI_PROC_NULL;
  /* the last planes up into the neighbour's planes below, the first down into its above */
  status = swap_with_neighbours(mpi, down, up, slab, slab + (nz - p) * plane, extended,
                                extended + (p + nz) * plane, (int)count, 3, 4,
                                "the exchange of dense planes (the tilt smoothing's z pass)");
fail:
  return status;
}

#else /* one rank: no MPI in this build */

const void *rtm_mpi_slab_communicator(const rtm_mpi_t *mpi) {
  (void)mpi;
  return NULL;
}

int rtm_mpi_init(int *argc, char ***argv, rtm_mpi_t **mpi) {
  (void)argc;
  (void)argv;
  *mpi = NULL;
  if (started_by_launcher() && (getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE"))) {
    const char *size =
        getenv("OMPI_COMM_WORLD_SIZE") ? getenv("OMPI_COMM_WORLD_SIZE") : getenv("PMI_SIZE");
    if (atoi(size) > 1) {
      rtm_log_error("started by an MPI launcher with %s ranks, but this rtm3d was built "
                    "without MPI (install an MPI library, e.g. libopenmpi-dev, and rebuild)",
                    size);
      return RTM_ERR_UNSUPPORTED;
    }
  }
  return new_context(mpi);
}

void rtm_mpi_finalize(rtm_mpi_t *mpi) {
  free(mpi);
}

void rtm_mpi_abort(const rtm_mpi_t *mpi, int exit_code) {
  (void)mpi;
  (void)exit_code;
}

void rtm_mpi_fail_fast(rtm_mpi_t *mpi, int status) {
  (void)mpi;
  (void)status;
}

int rtm_mpi_barrier(rtm_mpi_t *mpi) {
  (void)mpi;
  return RTM_OK;
}

int rtm_mpi_allreduce(rtm_mpi_t *mpi, double *values, int count, rtm_mpi_op_t op) {
  (void)mpi;
  (void)values;
  (void)count;
  (void)op;
  return RTM_OK;
}

int rtm_mpi_sum_to_root(rtm_mpi_t *mpi, float *values, size_t count) {
  (void)mpi;
  (void)values;
  (void)count;
  return RTM_OK;
}

int rtm_mpi_write_slabs(const rtm_grid_t *grid, const float *slab, float *buffer,
                        rtm_mpi_slab_writer_t write, void *context) {
  (void)buffer;
  return write(context, grid->z_offset, grid->nz_local, slab);
}

size_t rtm_mpi_largest_slab_cells(const rtm_grid_t *grid) {
  return (size_t)grid->n[0] * (size_t)grid->n[1] * (size_t)grid->nz_local;
}

int rtm_mpi_exchange_planes(const rtm_grid_t *grid, float *padded) {
  (void)grid;
  (void)padded;
  return RTM_OK;
}

int rtm_mpi_exchange_dense_planes(const rtm_grid_t *grid, int planes, const float *slab,
                                  float *extended) {
  copy_slab(grid, planes, slab, extended);
  return RTM_OK;
}

int rtm_mpi_gather_lines(rtm_mpi_t *mpi, const char *line, size_t size, char *lines) {
  (void)mpi;
  memcpy(lines, line, size);
  return RTM_OK;
}

int rtm_mpi_split_groups(rtm_mpi_t *mpi, int count) {
  (void)mpi;
  if (count == 1) return RTM_OK;
  rtm_log_error("mpi.shot_groups = %d needs as many ranks at least (one rank here)", count);
  return RTM_ERR_CONFIG;
}

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

int rtm_mpi_world_allreduce(rtm_mpi_t *mpi, double *values, int count, rtm_mpi_op_t op) {
  (void)mpi;
  (void)values;
  (void)count;
  (void)op;
  return RTM_OK;
}

int rtm_mpi_leader_send(rtm_mpi_t *mpi, const void *data, size_t bytes, int tag) {
  (void)mpi;
  (void)data;
  (void)bytes;
  (void)tag;
  return RTM_ERR_INTERNAL;
}

int rtm_mpi_leader_recv(rtm_mpi_t *mpi, int from_group, void *data, size_t bytes, int tag) {
  (void)mpi;
  (void)from_group;
  (void)data;
  (void)bytes;
  (void)tag;
  return RTM_ERR_INTERNAL;
}

#endif

/* ---- both builds ---- */

void rtm_mpi_on_abort(rtm_mpi_t *mpi, rtm_mpi_cleanup_t cleanup, void *context) {
  if (!mpi) return;
  mpi->on_abort = cleanup;
  mpi->on_abort_context = context;
}

void rtm_mpi_run_abort_cleanup(const rtm_mpi_t *mpi) {
  if (mpi && mpi->on_abort) mpi->on_abort(mpi->on_abort_context);
}
