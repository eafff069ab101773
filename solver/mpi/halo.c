/* The staged transport of a device's planes between z-slabs (rtm_mpi_halo.h). */
#include "rtm_mpi_halo.h"

#include <limits.h>
#include <stdlib.h>

#include "mpi_internal.h"
#include "rtm_mpi.h"
#include "rtm_status.h"

#ifdef RTM3D_HAVE_MPI

/* A rank's segment of the window, in floats of side_floats: the incoming buffers of the two
 * sets and two sides, then the outgoing ones of a side sent as messages. */
enum { SEGMENT_BUFFERS = 6, TAG_UP = 11, TAG_DOWN = 12 };

struct rtm_mpi_halo {
  rtm_mpi_t *mpi; /* the ranks sharing the slabs (the grid's) */
  size_t side_floats;
  int set;      /* the incoming set this step's planes go into */
  int received; /* the set the last exchange filled */
  int neighbour[2];
  int shared[2];
  MPI_Win window;
  float *own;        /* this rank's segment */
  float *peer[2];    /* a shared side's neighbour's segment */
  char *range_start; /* own and peer segments: what the copies touch */
  size_t range_bytes;
};

static float *incoming(float *segment, size_t side_floats, int set, rtm_side_t side) {
  return segment + (size_t)(2 * set + (int)side) * side_floats;
}

/* The range of host memory the copies touch, widened to hold `segment`. */
static void widen_range(rtm_mpi_halo_t *h, const float *segment) {
  char *start = (char *)segment;
  char *end = start + SEGMENT_BUFFERS * h->side_floats * sizeof(float);
  if (h->range_start) {
    char *old_end = h->range_start + h->range_bytes;
    if (start > h->range_start) start = h->range_start;
    if (end < old_end) end = old_end;
  }
  h->range_start = start;
  h->range_bytes = (size_t)(end - start);
}

int rtm_mpi_halo_create(const rtm_grid_t *grid, size_t side_floats, rtm_mpi_transport_t transport,
                        rtm_mpi_halo_t **out) {
  int status = RTM_OK;
  MPI_Group slab_group = MPI_GROUP_NULL, node_group = MPI_GROUP_NULL;
  rtm_mpi_halo_t *h = calloc(1, sizeof *h);
  if (!h) RTM_FAIL(RTM_ERR_NOMEM, "out of memory for the halo exchange");
  h->window = MPI_WIN_NULL;
  h->mpi = grid->mpi;
  if (!h->mpi) RTM_FAIL(RTM_ERR_INTERNAL, "a halo exchange of a grid that no ranks share");
  if (side_floats > (size_t)INT_MAX)
    RTM_FAIL(RTM_ERR_UNSUPPORTED, "halo planes of %zu floats are past MPI's int counts",
             side_floats);
  h->side_floats = side_floats;
  const int rank = h->mpi->rank;
  h->neighbour[RTM_SIDE_BELOW] = rtm_slab_has_below(grid) ? rank - 1 : MPI_PROC_NULL;
  h->neighbour[RTM_SIDE_ABOVE] = rtm_slab_has_above(grid) ? rank + 1 : MPI_PROC_NULL;

  MPI_Comm node = rtm_mpi_slab_node_comm(h->mpi);
  const MPI_Aint bytes = (MPI_Aint)(SEGMENT_BUFFERS * side_floats * sizeof(float));
  RTM_TRY(rtm_mpi_status(
      MPI_Win_allocate_shared(bytes, sizeof(float), MPI_INFO_NULL, node, &h->own, &h->window),
      "MPI_Win_allocate_shared (the halo buffers)"));
  MPI_Win_set_errhandler(h->window, MPI_ERRORS_RETURN);
  RTM_TRY(rtm_mpi_status(MPI_Win_lock_all(MPI_MODE_NOCHECK, h->window), "MPI_Win_lock_all"));
  widen_range(h, h->own);
  MPI_Comm_group(h->mpi->slab, &slab_group);
  MPI_Comm_group(node, &node_group);
  for (int s = 0; s < 2; ++s) {
    if (h->neighbour[s] == MPI_PROC_NULL || transport == RTM_TRANSPORT_STAGED) continue;
    int node_rank = MPI_UNDEFINED;
    MPI_Group_translate_ranks(slab_group, 1, &h->neighbour[s], node_group, &node_rank);
    if (node_rank == MPI_UNDEFINED) continue; /* on another node: messages */
    MPI_Aint size = 0;
    int unit = 0;
    RTM_TRY(rtm_mpi_status(MPI_Win_shared_query(h->window, node_rank, &size, &unit, &h->peer[s]),
                           "MPI_Win_shared_query (a neighbour's halo buffers)"));
    h->shared[s] = 1;
    widen_range(h, h->peer[s]);
  }
  *out = h;
  h = NULL;
fail:
  if (slab_group != MPI_GROUP_NULL) MPI_Group_free(&slab_group);
  if (node_group != MPI_GROUP_NULL) MPI_Group_free(&node_group);
  rtm_mpi_halo_destroy(h);
  return status;
}

void rtm_mpi_halo_destroy(rtm_mpi_halo_t *h) {
  if (!h) return;
  /* collective: not once the job is given up, when a neighbour may wait elsewhere (the
   * process ends in MPI_Abort, and the window with it) */
  if (h->window != MPI_WIN_NULL && !rtm_mpi_given_up(h->mpi)) {
    MPI_Win_unlock_all(h->window);
    MPI_Win_free(&h->window);
  }
  free(h);
}

float *rtm_mpi_halo_out(rtm_mpi_halo_t *h, rtm_side_t side) {
  if (h->neighbour[side] == MPI_PROC_NULL) return NULL;
  /* shared: straight into the neighbour's incoming buffer of this set, the side facing us */
  if (h->shared[side]) return incoming(h->peer[side], h->side_floats, h->set, 1 - side);
  return h->own + (size_t)(4 + (int)side) * h->side_floats;
}

const float *rtm_mpi_halo_in(const rtm_mpi_halo_t *h, rtm_side_t side) {
  if (h->neighbour[side] == MPI_PROC_NULL) return NULL;
  return incoming(h->own, h->side_floats, h->received, side);
}

int rtm_mpi_halo_exchange(rtm_mpi_halo_t *h) {
  int status = RTM_OK;
  MPI_Request requests[4];
  int count = 0, peers[4];
  MPI_Win_sync(h->window); /* the copies out are in memory before the word that says so */
  for (int s = 0; s < 2; ++s) {
    if (h->neighbour[s] == MPI_PROC_NULL) continue;
    /* what goes down is tagged down; what comes from below came up */
    const int tag_out = s == RTM_SIDE_BELOW ? TAG_DOWN : TAG_UP;
    const int tag_in = s == RTM_SIDE_BELOW ? TAG_UP : TAG_DOWN;
    const size_t n = h->shared[s] ? 0 : h->side_floats;
    float *in = incoming(h->own, h->side_floats, h->set, (rtm_side_t)s);
    peers[count] = peers[count + 1] = h->neighbour[s];
    RTM_TRY(rtm_mpi_status(
        MPI_Irecv(in, (int)n, MPI_FLOAT, h->neighbour[s], tag_in, h->mpi->slab, &requests[count++]),
        "MPI_Irecv of a neighbour's planes"));
    RTM_TRY(rtm_mpi_status(MPI_Isend(rtm_mpi_halo_out(h, (rtm_side_t)s), (int)n, MPI_FLOAT,
                                     h->neighbour[s], tag_out, h->mpi->slab, &requests[count++]),
                           "MPI_Isend of the planes to a neighbour"));
  }
  RTM_TRY(rtm_mpi_wait_all(h->mpi, count, requests, peers, h->mpi->slab,
                           "the halo exchange (a device's planes between neighbours)"));
  MPI_Win_sync(h->window); /* the neighbours' planes are seen before they are copied in */
  h->received = h->set;
  h->set = 1 - h->set;
fail:
  return status;
}

void rtm_mpi_halo_host_range(const rtm_mpi_halo_t *h, void **start, size_t *bytes) {
  *start = h->range_start;
  *bytes = h->range_bytes;
}

const char *rtm_mpi_halo_side_transport(const rtm_mpi_halo_t *h, rtm_side_t side) {
  if (h->neighbour[side] == MPI_PROC_NULL) return "none";
  return h->shared[side] ? "shared" : "staged";
}

size_t rtm_mpi_halo_bytes(const rtm_mpi_halo_t *h) {
  return SEGMENT_BUFFERS * h->side_floats * sizeof(float);
}

#else /* one rank: nothing to exchange */

struct rtm_mpi_halo {
  int unused;
};

int rtm_mpi_halo_create(const rtm_grid_t *grid, size_t side_floats, rtm_mpi_transport_t transport,
                        rtm_mpi_halo_t **out) {
  (void)grid;
  (void)side_floats;
  (void)transport;
  *out = NULL;
  rtm_log_error("a halo exchange without MPI in this build");
  return RTM_ERR_INTERNAL;
}

void rtm_mpi_halo_destroy(rtm_mpi_halo_t *h) {
  (void)h;
}

float *rtm_mpi_halo_out(rtm_mpi_halo_t *h, rtm_side_t side) {
  (void)h;
  (void)side;
  return NULL;
}

const float *rtm_mpi_halo_in(const rtm_mpi_halo_t *h, rtm_side_t side) {
  (void)h;
  (void)side;
  return NULL;
}

int rtm_mpi_halo_exchange(rtm_mpi_halo_t *h) {
  (void)h;
  return RTM_OK;
}

void rtm_mpi_halo_host_range(const rtm_mpi_halo_t *h, void **start, size_t *bytes) {
  (void)h;
  *start = NULL;
  *bytes = 0;
}

const char *rtm_mpi_halo_side_transport(const rtm_mpi_halo_t *h, rtm_side_t side) {
  (void)h;
  (void)side;
  return "none";
}

size_t rtm_mpi_halo_bytes(const rtm_mpi_halo_t *h) {
  (void)h;
  return 0;
}

#endif
