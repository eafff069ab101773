/* rtm_backend.h - the backend interface: the const table a backend implements (the libCEED /
 * sqlite vfs shape): create, step (forward or backward, whole or split into edge planes and
 * interior), inject, record, read and write fields. The backends (cpu/, cuda/) include this
 * and nothing above it; their registry, which picks one by name, is rtm_solver.h. */
#ifndef RTM_BACKEND_H
#define RTM_BACKEND_H

#include <stddef.h>

#include "rtm_config.h"
#include "rtm_grid.h"
#include "rtm_kernel_choice.h"
#include "rtm_memory.h"
#include "rtm_physics.h"
#include "rtm_points.h"
#include "rtm_traces.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- backends ---- */
typedef enum { RTM_FIELD_P = 0, RTM_FIELD_Q = 1 } rtm_field_t;
/* A set of fields as a bit mask: RTM_FIELD_BIT(RTM_FIELD_P) | RTM_FIELD_BIT(RTM_FIELD_Q). */
#define RTM_FIELD_BIT(field) (1u << (unsigned)(field))
/* "p", "q" (the datasets' and the config's names), "?" for anything else. */
static inline const char *rtm_field_name(rtm_field_t field) {
  return field == RTM_FIELD_P ? "p" : field == RTM_FIELD_Q ? "q" : "?";
}
typedef enum { RTM_LEVEL_CURRENT = 0, RTM_LEVEL_PREVIOUS = 1 } rtm_level_t;
/* A step may be split so that a halo exchange overlaps the interior: EDGE_PLANES first
 * (the R planes next to each z neighbour), then INTERIOR, which also injects, records and
 * rotates the time levels. ALL does both. */
typedef enum { RTM_REGION_ALL = 0, RTM_REGION_EDGE_PLANES, RTM_REGION_INTERIOR } rtm_region_t;
/* The phases of a step split for the z-slabs, timed apart (the run report): the edge planes,
 * the interior, and a device's plane copies out to host memory and in from it. */
typedef enum {
  RTM_PHASE_EDGE = 0,
  RTM_PHASE_INTERIOR,
  RTM_PHASE_COPY_OUT,
  RTM_PHASE_COPY_IN,
  RTM_PHASE_COUNT
} rtm_phase_t;
typedef enum { RTM_FORWARD = 1, RTM_BACKWARD = -1 } rtm_direction_t;

/* A field level in the backend's own memory, for code that works on whole fields where they
 * live (solver/rtm: imaging, snapshots): the padded array of the backend's grid
 * (rtm_grid_t's strides and origin_index). device < 0: host memory. device >= 0: that CUDA
 * device's memory; work on it goes on the legacy default stream, which runs after the
 * backend's queued steps and before its later ones (the backend's stream is a blocking
 * stream). Valid until the next step, which swaps the levels. */
typedef struct {
  float *padded;
  int device;
} rtm_field_view_t;

/* The imaging condition taken in a step's own kernels (image_next_step): S read from
 * `source` at source_origin + iz source_stride_z + iy source_stride_y + ix (a dense interior
 * array or a padded one, rtm_layout_t's numbers), the sums dense [nz_local][ny][nx]; all
 * three in the backend's device memory. Only the cells of `box` are imaged: [from, to) along
 * x (both multiples of 4, or to = nx), y and local z (rtm_image_keep_interior's). */
typedef struct {
  const float *source;
  long long source_origin, source_stride_y, source_stride_z;
  float *image, *illumination;
  int box[3][2];
} rtm_step_image_t;

typedef struct {
  const rtm_config_t *config; /* kernel and memory choices */
  const rtm_grid_t *grid;     /* this rank's grid */
  const rtm_model_t *model;   /* host parameters of the local z-range */
  const rtm_boundary_t *boundary;
  double dt_s;
  int steps;                /* traces hold steps + 1 samples */
  rtm_mem_ledger_t *ledger; /* every allocation is recorded here */
  /* NULL, or a state this backend created from the same config, grid, model and dt_s: this
   * one steps its own fields through that one's medium (the model's volumes), which it
   * neither uploads again nor frees; that state must outlive this one. A migration's two
   * propagators share it so (half the model's memory, and its set-up once). */
  const void *medium_of;
} rtm_backend_desc_t;

struct rtm_mpi_device_link; /* rtm_mpi_device.h */

/* copy_traces' slots: a streamed run's windows in flight at once */
enum { RTM_TRACE_SLOTS = 4 };

typedef struct rtm_backend {
  const char *name;
  const char *description;
  /* The equations (bit 1 << rtm_equation_t) whose steps can take image_next_step's request;
   * 0 where image_next_step is NULL. Known before a backend exists: a migration plans its
   * snapshot store by it (rtm_backend_images_in_step). */
  unsigned images_in_step;
  /* RTM_OK when this build and machine can run the backend; else the reason in why. */
  int (*probe)(char *why, size_t why_size);
  int (*create)(const rtm_backend_desc_t *desc, void **state);
  /* wavelets [count][samples], already scaled (dt^2 v^2 / (dx dy dz) times amplitude);
   * step `it` adds sample `it` to the new level. */
  int (*set_sources)(void *state, const rtm_points_t *points, const float *wavelets, int samples);
  /* Receivers record each field of `fields` (RTM_FIELD_BIT mask; receivers.fields, p by
   * default) into its own traces [count][steps + 1]; only those are allocated. A field the
   * physics lacks (q for iso) is an internal error: the config refuses it first. */
  int (*set_receivers)(void *state, const rtm_points_t *points, unsigned fields);
  /* Forward: level it+1 from it and it-1, then records sample it+1 of every receiver.
   * Backward: level it-1 from it and it+1 (for reverse propagation); it undoes forward
   * step `it`: from current = p[it+1], previous = p[it] to current = p[it], previous =
   * p[it-1], adding wavelet sample `it` and recording column it - 1 (iso_cpu.c). Both
   * record every field set_receivers asked for, from the new level. */
  int (*step)(void *state, int it, rtm_region_t region, rtm_direction_t direction);
  /* The p level the next steps write also goes to `dense` (the backend's device memory,
   * dense interior [nz_local][ny][nx]) from the steps' own kernels: a source snapshot without
   * a pass of its own; NULL stops it. RTM_ERR_UNSUPPORTED, nothing logged or changed, where
   * the backend cannot (the cpu backend's table leaves it NULL). */
  int (*copy_next_level)(void *state, float *dense);
  /* The next step's kernels, as they read the p level at the centre of their stencil (the
   * current level of a forward step: R(n) on a migration's receiver side), also add S p to
   * image and S S to illumination (unless it is NULL) at every interior cell they update, one
   * fused multiply-add each in that order (rtm_image_accumulate's floats), in every region of
   * that step; the step after it does not. The arrays must hold their values when the step
   * runs (work queued before it on the legacy default stream is) and stay until it has run.
   * The imaging condition without a pass of its own: R is read once, by the stencil.
   * RTM_ERR_UNSUPPORTED, nothing logged or changed, where the backend or its kernel shape
   * cannot (the cpu backend's table leaves it NULL). */
  int (*image_next_step)(void *state, const rtm_step_image_t *request);
  /* Whole fields as dense interior arrays [nz_local][ny][nx] (snapshots, checkpoints). */
  int (*read_field)(void *state, rtm_field_t field, rtm_level_t level, float *dense);
  int (*write_field)(void *state, rtm_field_t field, rtm_level_t level, const float *dense);
  /* The field level in place, no copy (rtm_field_view_t). */
  int (*view_field)(void *state, rtm_field_t field, rtm_level_t level, rtm_field_view_t *view);
  /* Planes [first, first + count) of the local z-range of a field level (first = -R names
   * the ghost planes below, nz_local those above), their nx x ny interior cells (a dense
   * [count][ny][nx] host array; the x/y halo, zeros, stays as it is), copied into host
   * memory `out` (in NULL) or from host memory `in` (out NULL), asynchronously on a stream of the
   * backend's own: a copy out starts after the steps queued so far, the steps queued after a copy
   * in wait for it. `out` is ready, and `in` may be reused, when wait_copies returns. The z-slabs'
   * halo exchange through host staging buffers, overlapped with the interior (rtm_mpi.h). Both NULL
   * where view_field gives host memory (cpu). */
  int (*copy_planes)(void *state, rtm_field_t field, rtm_level_t level, int first, int count,
                     float *out, const float *in);
  int (*wait_copies)(void *state);
  /* Samples [first, first + count) of every receiver's trace of `field` into `host`
   * ([receivers][count], page-locked), queued behind the steps queued so far on the copy
   * stream, so that a run writes its gathers while it propagates. `slot` (below
   * RTM_TRACE_SLOTS) names the copy: wait_traces(slot) returns once the last copy of that
   * slot has landed (the copies queued after it need not have), from any thread. host NULL:
   * only make room for windows of `count` samples (before the first step, so that a GPU
   * without it refuses the run then). NULL where read_traces is all there is (cpu). */
  int (*copy_traces)(void *state, rtm_field_t field, int first, int count, float *host, int slot);
  int (*wait_traces)(void *state, int slot);
  /* The windows copy_traces copies from now on corrected for time dispersion by `band`
   * (rtm_traces_band_t, copied to the device; the window's first sample a multiple of
   * RTM_TRACES_BAND_ROWS, its raw samples recorded up to its last + band->lag), or as
   * recorded again with NULL. RTM_ERR_UNSUPPORTED where the device cannot hold the band's
   * widest group. NULL where copy_traces is. */
  int (*set_trace_band)(void *state, const rtm_traces_band_t *band);
  /* The z-slabs' exchange GPU to GPU (mpi.transport = nccl or cuda-aware, rtm_mpi_device.h):
   * every field's R planes of `level` next to each neighbour sent, and the neighbours'
   * received into its ghost planes. A queued link (nccl): after the steps so far and a split
   * step's edge planes, beside its interior; the steps queued after that interior (or,
   * unsplit, what follows at once) wait for it, the host does not. Otherwise (cuda-aware)
   * done when it returns, the host having waited for the planes alone. NULL where the fields are
   * host memory (cpu). */
  int (*exchange_planes)(void *state, struct rtm_mpi_device_link *link, rtm_level_t level);
  /* Zeroes every field at both levels and the recorded traces: the next shot on the same
   * state, which may also get new sources and receivers. */
  int (*reset)(void *state);
  /* The absorbing layer of the steps that follow: the damping profiles of `boundary`
   * (copied), or none with NULL (every cell undamped). The backward step's damping is not
   * time-reversible (it amplifies by (1 + d) / (1 - d) a step, iso_cpu.c), so a pass that
   * rebuilds a wavefield backwards runs without it (rtm.reconstruction = boundary) and puts
   * the propagator's own layer back afterwards. Ordered with the queued steps. */
  int (*set_damping)(void *state, const rtm_boundary_t *boundary);
  /* The samples of `field` recorded so far: [count][steps + 1]. A field set_receivers did
   * not ask for is an internal error. */
  int (*read_traces)(void *state, rtm_field_t field, float *traces);
  /* The traces of `field` where they are recorded, in the device memory of the backend's GPU
   * ([receivers][steps + 1]), once the steps queued so far are done, for work on them there
   * before they are read; NULL where they live in host memory (cpu). */
  int (*view_traces)(void *state, rtm_field_t field, float **traces);
  /* Waits for queued work (timing); may be NULL for synchronous backends. */
  int (*synchronize)(void *state);
  /* Device seconds so far in each phase (rtm_phase_t) of the split steps (EDGE_PLANES,
   * INTERIOR) and of copy_planes, measured on the device (events) and added to `seconds`;
   * waits for the queued work. NULL for a synchronous backend (cpu), whose phases the
   * caller's clock measures. */
  int (*phase_seconds)(void *state, double seconds[RTM_PHASE_COUNT]);
  /* One line naming where it runs ("NVIDIA H100 80GB HBM3 (sm_90)", "host, 2 OpenMP
   * threads") for the run report; may be NULL. */
  void (*describe)(void *state, char *text, size_t size);
  /* Changes kernel.* (halo, stages, tile, zblock) of a live backend, keeping its fields and
   * model: rtm3d tune times every candidate on one propagator. A shape the device refuses
   * is an error that leaves the old shape working. NULL for backends without such a shape
   * (cpu). */
  int (*set_kernel)(void *state, const rtm_kernel_shape_t *shape);
  /* The cells of `field` at `level` that are not finite, counted where the field lives
   * (a run's last check without reading the volume back). NULL: read_field it. */
  int (*count_nonfinite)(void *state, rtm_field_t field, rtm_level_t level, size_t *count);
  void (*destroy)(void *state);
} rtm_backend_t;

#ifdef __cplusplus
}
#endif

#endif
