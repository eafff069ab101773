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
