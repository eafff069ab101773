/* backend_cuda_impl.h - the cuda backend inside.
 *
 * solver/cuda holds the cuda backend: the z-marching kernels with their launchers
 * (iso_cuda.cu / iso_cuda.h, tti_cuda.cu / tti_cuda.h; what both launchers share in
 * zmarch_common.cuh, the asynchronous copies and barriers in cuda_async.cuh), and the
 * backend's C host side described here: what every equation shares
 * (backend_cuda_common.c) and what each physics supplies to it (backend_cuda_iso.c: iso,
 * backend_cuda_tti.c: vti and tti).
 *
 * backend_cuda_common.c holds the backend's table (rtm_backend_cuda) and everything that
 * does not depend on the equation: the device, the stream, the memory strategies per field
 * class, the fit check, the levels of p (and q) with their tma maps, the damping profiles,
 * sources, receivers and traces, the step's plane ranges with its inject / record / swap,
 * dense field copies. Where the equation decides, it calls through the physics' table
 * (rtm_cuda_physics_t below), chosen once in create from physics.equation.
 *
 * A physics' state begins with an rtm_cuda_backend_state_t, so the common code and the
 * physics hand the same pointer to each other. Fields are indexed like rtm_field_t:
 * [0] p, [1] q (iso has p only). */
#ifndef RTM_BACKEND_CUDA_IMPL_H
#define RTM_BACKEND_CUDA_IMPL_H

#include <stddef.h>

#include <cuda_runtime_api.h>

#include "iso_cuda.h"
#include "rtm_backend.h"
#include "rtm_backend_cuda.h"
#include "rtm_cuda_trace_window.h"

enum { RTM_CUDA_FIELDS = 2, RTM_CUDA_LEVELS = 2, RTM_CUDA_PHASE_RING = 32 };

struct rtm_cuda_physics;

typedef struct rtm_cuda_backend_state {
  const struct rtm_cuda_physics *physics; /* chosen in create from physics.equation */
  rtm_grid_t grid;
  int device;
  int steps;
  rtm_iso_shape_t kernel; /* kernel.halo, stages, zblock, block */
  char kernel_why[1024];  /* where kernel.* came from: explicit, the tune cache, the table */
  cudaStream_t stream;
  /* the z-slabs' plane copies (copy_planes): a non-blocking stream of their own, ordered
   * with the steps by events; created on first use */
  cudaStream_t copies;
  cudaEvent_t steps_done, copies_done;
  cudaEvent_t traces_copied[RTM_TRACE_SLOTS]; /* copy_traces' last copy of each slot */
  /* a split step's edge planes: a stream of their own, of the highest priority, so that they
   * run beside the interior and their copies start as soon as they are done; ordered with
   * the step stream by events (created with the copy stream) */
  cudaStream_t edges;
  cudaEvent_t edges_start, edges_done;
  /* the split steps' and the copies' device time (phase_seconds): a ring of event pairs
   * a phase, created on first use; a pair is read when its slot comes round again */
  struct {
    cudaEvent_t start[RTM_CUDA_PHASE_RING], end[RTM_CUDA_PHASE_RING];
    int used[RTM_CUDA_PHASE_RING], next;
    double seconds;
  } phase[RTM_PHASE_COUNT];
  rtm_mem_ledger_t *ledger;
  rtm_mem_request_t request;
  char wavefield_strategy[RTM_CONFIG_NAME_MAX];
  char model_strategy[RTM_CONFIG_NAME_MAX];
  /* desc->medium_of: the state whose medium (coefficient volumes) this one borrows
   * (rtm_mem_borrow), of the same physics; NULL: its own */
  const struct rtm_cuda_backend_state *medium_of;

  rtm_allocation_t level[RTM_CUDA_FIELDS][RTM_CUDA_LEVELS]; /* [p|q][a|b] */
  int current;    /* level[f][current] = f[n], the other level f[n-1] */
  int last_split; /* the last step was split (EDGE_PLANES, INTERIOR): its edge planes end at
                     edges_done */
  rtm_iso_tensor_map_t map[RTM_CUDA_FIELDS][RTM_CUDA_LEVELS];      /* tma: tile-with-halo boxes */
  rtm_iso_tensor_map_t cell_map[RTM_CUDA_FIELDS][RTM_CUDA_LEVELS]; /* tma: tile boxes */
  rtm_allocation_t eta_dt[3];

  int source_count, source_samples, source_taps; /* taps a point (rtm_points_t) */
  int source_width; /* > 0: tap indices from source_base (rtm_points_t's base_index) */
  rtm_allocation_t source_index, source_base, source_coeff, wavelets;

  int receiver_count, trace_length, receiver_taps, receiver_taps_per_plane;
  int receiver_width; /* > 0: receivers in tensor-product form (receiver_axis, receiver_base) */
  rtm_allocation_t receiver_axis, receiver_base;
  unsigned trace_fields; /* RTM_FIELD_BIT mask of the recorded fields */
  rtm_allocation_t receiver_index, receiver_weight, traces[RTM_CUDA_FIELDS];
  rtm_allocation_t trace_window; /* copy_traces: a window packed densely, on the copy stream */
  /* set_trace_band: the windows corrected by the warp's band (band.groups 0: as recorded) */
  rtm_cuda_band_t band;
  rtm_allocation_t band_first, band_width, band_offset, band_coef;
  float *level_copy; /* copy_next_level: the steps' new p level also written here, dense */
  /* image_next_step: the imaging condition the next step's kernels take, while set */
  rtm_step_image_t step_image;
  int step_image_set;
} rtm_cuda_backend_state_t;

/* ---- backend_cuda_common.c: helpers for the physics ---- */

/* Bytes a strategy takes for a request: VMM rounds to its 2 MiB granularity. */
size_t rtm_cuda_backend_taken_bytes(const char *strategy, size_t bytes);
/* Refuses volumes of `need` bytes that cannot fit before anything is allocated: the message
 * names the grid (then `grid_note`), the free memory, `volumes` (each field class, its size
 * and strategy) and ends with `advice`. */
int rtm_cuda_backend_check_fits(const rtm_cuda_backend_state_t *b, size_t need,
                                const char *grid_note, const char *volumes, const char *advice);
/* Through the ledger, with the backend's device request. */
int rtm_cuda_backend_alloc(rtm_cuda_backend_state_t *b, const char *strategy, size_t bytes,
                           const char *label, rtm_allocation_t *out);
/* Fills `count` local planes from z_first on (into blocks[v] of each volume v: padded
 * planes, stride_z cells each, whose x/y halo is zero and must be left so). */
typedef int (*rtm_cuda_fill_planes_t)(void *context, long z_first, long count,
                                      unsigned char *const *blocks);
/* The local planes of `volumes` padded volumes (dst[v], cells of cell_bytes) from the host,
 * a block of planes at a time: each block filled by `fill` (over the threads, as it likes)
 * into one of two sets of page-locked staging blocks, then copied on the stream, so that a
 * block is filled while the one before it crosses PCIe. Waits for it. */
int rtm_cuda_backend_upload_planes(rtm_cuda_backend_state_t *b, int volumes, size_t cell_bytes,
                                   rtm_allocation_t *const *dst, rtm_cuda_fill_planes_t fill,
                                   void *context);
/* Frees and forgets an allocation (a second release does nothing). */
void rtm_cuda_backend_release(rtm_allocation_t *allocation);
/* The three 1D damping profiles on the device: zeros where `boundary` has no layer. */
int rtm_cuda_backend_damping(rtm_cuda_backend_state_t *b, const rtm_boundary_t *boundary);
/* kernel.halo = tma: the halo map and the own-cell map of every level. */
int rtm_cuda_backend_level_maps(rtm_cuda_backend_state_t *b);
/* Makes the levels, then `count` model volumes, resident on the device (managed), queued on
 * the stream. */
int rtm_cuda_backend_prefetch(rtm_cuda_backend_state_t *b, const rtm_allocation_t *volumes,
                              int count);

/* ---- what each physics supplies, called by the entry named in each member ---- */

typedef struct rtm_cuda_physics {
  const char *name;   /* in messages: "iso", "vti/tti" */
  int field_count;    /* fields the kernel updates: 1 (p) or 2 (p and q) */
  int copies_level;   /* the kernel writes b->level_copy too (copy_next_level) */
  /* image_next_step: 1 when the kernel of b's shape can take the imaging condition in the
   * step (the launch passes b->step_image on while b->step_image_set); NULL: never. */
  int (*images_in_step)(const rtm_cuda_backend_state_t *b);
  size_t state_bytes; /* of the physics' state (an rtm_cuda_backend_state_t first) */
  /* Ledger labels of the traces of p and q (NULL: the physics has no such field). */
  const char *trace_label[RTM_CUDA_FIELDS];
  /* create, the device open and kernel.* read into b->kernel: the physics' settings and the
   * kernel's checks of them on the device. */
  int (*prepare)(rtm_cuda_backend_state_t *b, const rtm_config_t *cfg);
  /* create, the strategies resolved: rtm_cuda_backend_check_fits with the physics' volumes. */
  int (*check_fits)(const rtm_cuda_backend_state_t *b);
  /* create, the stream made and the levels allocated: the model volumes and their upload, the
   * kernel's constants, the damping profiles, the tma maps, the prefetches (levels first). */
  int (*fill)(rtm_cuda_backend_state_t *b, const rtm_backend_desc_t *desc);
  /* set_kernel, b->kernel changed and the stream idle: the kernel's checks of the new shape
   * on the device and, for tma, the maps made again (the volumes stay). */
  int (*reshape)(rtm_cuda_backend_state_t *b);
  /* destroy, the stream idle: frees the model volumes. */
  void (*release)(rtm_cuda_backend_state_t *b);
  /* set_receivers: RTM_OK when the physics has every field of `fields`, else says why. */
  int (*check_recorded)(unsigned fields);
  /* step: the kernel over the local planes [z_begin, z_end), f[n] at level `centre` and the
   * new level written over the other. */
  int (*launch)(rtm_cuda_backend_state_t *b, int centre, int backward, int z_begin, int z_end,
                cudaStream_t stream);
  /* read_field, write_field: RTM_OK when the physics has `field` at `level`, else says why. */
  int (*check_field)(rtm_field_t field, rtm_level_t level);
  /* describe: the device (`prop`, NULL when its properties could not be read) and the kernel. */
  void (*describe)(const rtm_cuda_backend_state_t *b, const struct cudaDeviceProp *prop, char *text,
                   size_t size);
} rtm_cuda_physics_t;

extern const rtm_cuda_physics_t rtm_cuda_physics_iso; /* backend_cuda_iso.c */
extern const rtm_cuda_physics_t rtm_cuda_physics_tti; /* backend_cuda_tti.c: vti and tti */

#endif
