/* rtm_mpi.h - the z-slab domain decomposition and the MPI calls it needs. Every MPI call of
 * the project is behind these functions (mpi_comm.c); without MPI in the build, or in a
 * process no MPI launcher started, they act for one rank and change nothing.
 *
 * Each rank owns the planes [z_offset, z_offset + nz_local) of the grid (rtm_grid_t's
 * z-range) and holds R = 4 ghost planes on each side of every field, filled from its
 * neighbours after every step (rtm_mpi_exchange_planes), so that the stencil sees what one
 * rank would. Results do not depend on the rank count: a cell is updated by one rank with
 * the same neighbours, a point's taps inject into the cells their rank owns (the others
 * have weight 0, rtm_points_init), and what is summed over the taps is summed plane by plane
 * (the taps of plane z0, then of z0 + 1, then the two), so that the sum over ranks of the
 * partial sums (one of them non-zero a plane) is the one-rank sum to the bit. */
#ifndef RTM_MPI_H
#define RTM_MPI_H

#include <stddef.h>

#include "rtm_grid.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { RTM_MPI_SUM = 0, RTM_MPI_MIN, RTM_MPI_MAX } rtm_mpi_op_t;

/* The MPI context of a process: its ranks (the world's, its node's, the ranks that share
 * its slabs, its shot group), the communicators behind them, mpi.timeout_s and whether the
 * job has been given up. Made by rtm_mpi_init and held by main, which hands it to the
 * commands; a grid cut into slabs carries it (rtm_grid_t's mpi), so that whatever works on
 * a slab finds its ranks there. Opaque: the communicators are MPI's types, absent from a
 * build without MPI. A NULL context is one rank on its own (a grid no run cut, a test),
 * rank 0 of 1, as is the context of a process no MPI launcher started. */
typedef struct rtm_mpi rtm_mpi_t;

/* MPI_Init when an MPI launcher started the process (mpirun, srun: its environment says
 * so), so that a plain `rtm3d ...` never starts MPI; then rank and size, and the log's rank
 * (rtm_log_set_rank). *mpi is the context (rank 0 of 1 without a launcher); RTM_OK, or
 * RTM_ERR_MPI when MPI does not start (*mpi NULL then). */
int rtm_mpi_init(int *argc, char ***argv, rtm_mpi_t **mpi);
/* The communicators freed, MPI_Finalize when rtm_mpi_init ran MPI_Init, the context freed. */
void rtm_mpi_finalize(rtm_mpi_t *mpi);
/* This rank among the ranks that share the slabs, and their count: every rank of the run,
 * or, after rtm_mpi_split_groups, this rank's shot group. Every function below that names
 * no group acts among these ranks, so that a group runs as a run of its own. */
int rtm_mpi_rank(const rtm_mpi_t *mpi);
int rtm_mpi_size(const rtm_mpi_t *mpi);

/* ---- shot groups (mpi.shot_groups) ---- */
/* The ranks split into `count` groups of consecutive ranks, each its own slabs: world ranks
 * [g P, (g + 1) P) form group g, P = ranks / count. A count that does not divide the rank
 * count is refused (naming mpi.shot_groups), the same on every rank. Collective. */
int rtm_mpi_split_groups(rtm_mpi_t *mpi, int count);
int rtm_mpi_group(const rtm_mpi_t *mpi);  /* this rank's group, 0 without groups */
int rtm_mpi_groups(const rtm_mpi_t *mpi); /* the group count, 1 without groups */
int rtm_mpi_world_rank(const rtm_mpi_t *mpi);
int rtm_mpi_world_size(const rtm_mpi_t *mpi);
/* Pairs of arrays (a, b) of `count` floats combined across the shot groups into group 0's
 * ranks' arrays, chunk by chunk and in group order: group 0's chunk combined with group
 * 1's, that with group 2's, and so on (images summed across the groups as float pairs),
 * by calls combine(a, b, other_a, other_b, n, context) whose a, b are the partial sums of
 * the groups before and whose other_a, other_b are the next group's chunk. With two groups
 * group 0 makes each call; with more, the calls are made along a chain, each group's rank
 * combining its own chunk into the partial sums that pass through it (a, b there are not
 * its arrays), the groups at once. The chunks' bounds depend on the path and the group
 * count, so combine must work cell by cell for the result not to (rtm_sums_merge does).
 * The other groups' arrays are unchanged. */
typedef void (*rtm_mpi_combine_t)(float *a, float *b, const float *other_a, const float *other_b,
                                  size_t count, void *context);
/* `shared` (mpi.transport other than staged) and every group's rank of the slab on this
 * node: the chunks cross an MPI shared-memory window; else they are sent as messages. */
int rtm_mpi_groups_combine(rtm_mpi_t *mpi, float *a, float *b, size_t count, int shared,
                           rtm_mpi_combine_t combine, void *context);
/* The floats of each array a chunk of rtm_mpi_groups_combine holds, every path (0: its own,
 * 8 Mi, fewer along a chain of many groups): tests, so that a small volume crosses in
 * several chunks. */
void rtm_mpi_set_combine_chunk(rtm_mpi_t *mpi, size_t floats);
/* values := op over every rank of the run, on every rank (in place). */
int rtm_mpi_world_allreduce(rtm_mpi_t *mpi, double *values, int count, rtm_mpi_op_t op);
/* A group's first rank sends `bytes` to the run's first rank (world rank 0), which receives
 * them from group `from_group`'s first rank; the tag tells the messages apart. */
int rtm_mpi_leader_send(rtm_mpi_t *mpi, const void *data, size_t bytes, int tag);
int rtm_mpi_leader_recv(rtm_mpi_t *mpi, int from_group, void *data, size_t bytes, int tag);

/* This rank among the ranks of its node (MPI_Comm_split_type, MPI_COMM_TYPE_SHARED): the
 * cuda backend takes GPU (backend.device + local rank) mod the node's GPUs. 0 with one. */
int rtm_mpi_local_rank(const rtm_mpi_t *mpi);
/* The ranks on this process's node (1 with one rank). */
int rtm_mpi_local_size(const rtm_mpi_t *mpi);
/* World rank 0 gets every rank's line of `size` chars in `lines` [ranks][size] (world
 * rank order, every group's); `lines` may be NULL on the others. */
int rtm_mpi_gather_lines(rtm_mpi_t *mpi, const char *line, size_t size, char *lines);
/* A failure on one rank ends every rank with `exit_code` (MPI_Abort), so that none waits
 * for it in a collective; returns with one rank. */
void rtm_mpi_abort(const rtm_mpi_t *mpi, int exit_code);
/* What this rank runs before it aborts the job (rtm_mpi_abort, or the watchdog of
 * mpi.timeout_s ending a stalled job): a run removes the files it made (its lock, its
 * partial files), which the abort would leave behind. It may run twice, so it must be
 * idempotent. NULL clears it. */
typedef void (*rtm_mpi_cleanup_t)(void *context);
void rtm_mpi_on_abort(rtm_mpi_t *mpi, rtm_mpi_cleanup_t cleanup, void *context);
/* A command's cleanup after `status`: a failure under several ranks aborts the job here,
 * before anything collective is released (a halo window's MPI_Win_free would wait for
 * ranks that wait in their own exchange); RTM_OK, or one rank, returns. So does
 * RTM_ERR_INTERRUPTED (SIGINT, SIGTERM): the rank gives the job up (its cleanup then makes
 * no collective call) and cleans up, its partial files removed, before main's MPI_Abort
 * with 130 or 143 ends the job. */
void rtm_mpi_fail_fast(rtm_mpi_t *mpi, int status);
/* mpi.timeout_s: the longest a rank waits for another (a halo exchange, a reduction, a
 * gather; time this rank spends stopped itself not counted) before it ends the job naming
 * the rank that did not answer; 0 (the value until a deck sets it) waits for ever. */
void rtm_mpi_set_timeout(rtm_mpi_t *mpi, double seconds);

/* The slab of `rank` among `ranks` over nz planes: nz / ranks each, the first nz % ranks
 * one more. A slab thinner than the stencil's reach (R planes: the ghosts come from the
 * neighbour alone) is refused, naming grid.nz and the rank count, the same on every rank. */
int rtm_mpi_slab(int nz, int ranks, int rank, int *z_offset, int *nz_local);
/* The same in whole units of `align` planes (nz / align units shared out as nz / ranks
 * planes are above, the nz % align planes short of a unit to the last rank): every slab
 * but the last starts and ends on a multiple of `align`. Refused where a slab would be
 * thinner than R planes (the same rank counts as rtm_mpi_slab where align divides R). */
int rtm_mpi_slab_aligned(int nz, int ranks, int rank, int align, int *z_offset, int *nz_local);
/* The fewest planes any rank's slab of that cut holds (what a reach into a neighbour's slab
 * is checked against). */
int rtm_mpi_thinnest_slab(int nz, int ranks, int align);
/* The slabs' unit for this run's ranks (rtm_mpi_slab_aligned): 1 until set. Every rank sets
 * the same before its slab is cut; rank 0 cuts the others' with it when it writes them. */
void rtm_mpi_set_slab_align(rtm_mpi_t *mpi, int align);
int rtm_mpi_slab_align(const rtm_mpi_t *mpi);

/* Every rank waits for the others (timing). */
int rtm_mpi_barrier(rtm_mpi_t *mpi);

/* values := op over the ranks of values, on every rank (in place). */
int rtm_mpi_allreduce(rtm_mpi_t *mpi, double *values, int count, rtm_mpi_op_t op);
/* Rank 0's values := the sum over the ranks (in place on rank 0; the others' unchanged). */
int rtm_mpi_sum_to_root(rtm_mpi_t *mpi, float *values, size_t count);
/* The functions below that take a slab's grid act among its ranks (grid->mpi). */
/* The ranks' dense slabs handed to rank 0 one at a time, in rank order, for it to write
 * where they go: on rank 0 write(context, z_offset, nz, planes) for its own slab, then for
 * each other rank's, received into `buffer` (rank 0's: the cells of the largest slab;
 * NULL on the others, which send theirs). Rank 0 holds one slab besides its own, never the
 * volume. A failed write stops the writing, not the receiving (no rank is left sending),
 * and is returned. Collective over the ranks that share the slabs. */
typedef int (*rtm_mpi_slab_writer_t)(void *context, int z_offset, int nz, const float *planes);
int rtm_mpi_write_slabs(const rtm_grid_t *grid, const float *slab, float *buffer,
                        rtm_mpi_slab_writer_t write, void *context);
/* The MPI_Comm of the ranks that share the slabs, by address, for a library that takes
 * one (parallel HDF5: rtm_io_write_planes_collective); NULL without MPI in the build. */
const void *rtm_mpi_slab_communicator(const rtm_mpi_t *mpi);
/* Cells of the largest slab of the volume over the ranks that share it. */
size_t rtm_mpi_largest_slab_cells(const rtm_grid_t *grid);
/* A dense slab [nz_local][ny][nx] into `extended` [nz_local + 2 planes][ny][nx] (the slab
 * from plane `planes` on), with the neighbours' nearest `planes` planes below and above it
 * (for a filter that reaches across the cuts); a side without a neighbour is left as it
 * is. `planes` must not exceed the neighbours' slabs (the caller refuses that). */
int rtm_mpi_exchange_dense_planes(const rtm_grid_t *grid, int planes, const float *slab,
                                  float *extended);
/* The R planes next to each neighbour of a padded field (host memory) sent to it, and its
 * planes received into the ghost planes; the volume's first and last planes have none. (A
 * device's planes travel through rtm_mpi_halo.h's buffers.) */
int rtm_mpi_exchange_planes(const rtm_grid_t *grid, float *padded);
/* Whether a slab has a neighbour below (a lower z-range) and above: the volume's first and
 * last slabs have one side. */
static inline int rtm_slab_has_below(const rtm_grid_t *grid) {
  return grid->z_offset > 0;
}
static inline int rtm_slab_has_above(const rtm_grid_t *grid) {
  return grid->z_offset + grid->nz_local < grid->n[2];
}
/* A split step's edge planes (RTM_REGION_EDGE_PLANES): the R next to each neighbour, local
 * planes [0, *low_end) and [*high_begin, nz_local) (all of them when the slab is thinner);
 * the interior is [*low_end, *high_begin), the side of the volume's first or last slab
 * included, which sends nothing. */
static inline void rtm_slab_edges(const rtm_grid_t *grid, int *low_end, int *high_begin) {
  const int nz = grid->nz_local, R = RTM_RADIUS;
  *low_end = rtm_slab_has_below(grid) ? (nz < R ? nz : R) : 0;
  *high_begin = rtm_slab_has_above(grid) ? (nz - R > *low_end ? nz - R : *low_end) : nz;
}

#ifdef __cplusplus
}
#endif

#endif
