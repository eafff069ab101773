/* iso_cuda.h - launchers of the isotropic CUDA kernels (iso_cuda.cu), plain C.
 *
 * Kernel shape ("z-marching", docs/design.md "The propagator"):
 *   equation   forward  p[n+1] = (2 p[n] - (1 - d) p[n-1] + v^2 dt^2 lap(p[n])) / (1 + d),
 *              backward p[n-1] = (2 p[n] - (1 + d) p[n+1] + v^2 dt^2 lap(p[n])) / (1 - d),
 *              d = eta_dt_x[ix] + eta_dt_y[iy] + eta_dt_z[iz]; undamped cells (d = 0) take
 *              2 p - p_other + v^2 dt^2 lap. lap is the 8th-order (R = 4) Laplacian:
 *              sum over axes a of (1/h_a^2) sum_{k=-4..4} c_|k| p[i + k e_a], evaluated
 *              in the cpu reference's order with every operation rounded (no FMA), so that
 *              both backends agree bit for bit.
 *   threads    a block owns a block_x x block_y tile of cells (kernel.block) and walks the
 *              planes of its z-block (kernel.zblock, the whole range when 0); each thread
 *              owns 4 consecutive cells along x (one float4 for every load and store), so a
 *              block has block_x / 4 x block_y threads (whole warps, at most 512); tma adds
 *              one producer warp.
 *   shared     sync, ldgsts: a ring of (block_y + 8) x (block_x + 8) tiles of p (each plane
 *              with its R = 4 xy halo, loaded once): planes iz .. iz+4 resident while plane
 *              iz is computed, stages - 1 more in flight (ring of 4 + stages tiles; sync: 6).
 *              tma: the same ring of 4 + stages p tiles, and a ring of `stages` pairs of
 *              block_x x block_y tiles of p[n-1] and v^2 dt^2.
 *   registers  the 2R + 1 = 9 float4 of p along z of the thread's 4 columns, shifted by one
 *              per plane (the front read from the newest tile); sync, ldgsts: p[n-1] and
 *              v^2 dt^2 of the next plane are loaded one plane ahead into registers. The x
 *              and y neighbours come from the tile as float4 (3 for x, 8 for y per 4 cells).
 *   halo       sync: plain 16-byte loads through registers, one barrier per plane;
 *              ldgsts: cp.async 16-byte copies (L1 bypass, zero fill outside the field),
 *              one commit per plane by every thread (never in divergent code);
 *              tma (sm_90 only): a producer warp's thread issues cp.async.bulk.tensor.3d
 *              boxes (p with halo; p[n-1] and v^2 dt^2 without) up to stages - 1 planes
 *              ahead, each slot with a full and an empty mbarrier, no block-wide barrier
 *              per plane; OOB zero fill. Blocks are launched tiles fastest, so the blocks
 *              sharing halo rows march through z side by side and re-read them from L2.
 *   in place   p[n+1] overwrites p[n-1] (each cell read and written by one thread only).
 * Traffic per cell at least 16 B: read p[n], p[n-1], v^2 dt^2; write p[n+1]. */
#ifndef RTM_ISO_CUDA_H
#define RTM_ISO_CUDA_H

#include <stddef.h>

#include "rtm_backend.h"
#include "rtm_grid.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { RTM_HALO_SYNC = 0, RTM_HALO_LDGSTS = 1, RTM_HALO_TMA = 2 } rtm_halo_t;

typedef struct {
  rtm_halo_t halo;
  int stages;   /* ldgsts: 2 or 3; tma: 2 to 4 */
  int zblock;   /* planes per thread block; 0 = the whole z-range of a launch */
  int block[2]; /* xy tile in cells; threads = block[0] / 4 x block[1] */
} rtm_iso_shape_t;

/* Opaque copy of a CUtensorMap (128 bytes) describing one padded field for the tma halo. */
typedef struct {
  unsigned long long opaque[16];
} rtm_iso_tensor_map_t;

typedef struct {
  float *p_other;                    /* in: p[n-1], out: p[n+1] (backward: p[n+1] -> p[n-1]) */
  const float *p;                    /* p[n] (padded layout) */
  const float *v2dt2;                /* v^2 dt^2 (padded layout) */
  const float *eta_dt[3];            /* device profiles over the global interior of each axis */
  const rtm_iso_tensor_map_t *p_map; /* tma: halo map of `p` (rtm_iso_cuda_tensor_map) */
  const rtm_iso_tensor_map_t *p_other_map; /* tma: cell map of `p_other` (..._cell_map) */
  const rtm_iso_tensor_map_t *v2dt2_map;   /* tma: cell map of `v2dt2`; all three NULL
                                              for sync and ldgsts */
  float stencil[RTM_RADIUS + 1];           /* rtm_fd2_coeff in float */
  float inv_h2[3];                         /* 1 / h_a^2 in float */
  float *level_copy; /* NULL, or the new level's interior cells written here too, dense
                        [nz_local][ny][nx] (a source snapshot taken in the step) */
  const rtm_step_image_t *image; /* NULL, or the imaging condition taken in the step with
                                    p's centre level (image_next_step); not with level_copy */
} rtm_iso_fields_t;

/* Name to enum; RTM_ERR_CONFIG naming kernel.halo when unknown. */
int rtm_iso_halo_parse(const char *name, rtm_halo_t *halo);
const char *rtm_iso_halo_name(rtm_halo_t halo);

/* Checks that `device` can run `shape` (tile a multiple of 4 wide, at most 512 threads
 * and a whole number of warps, shared memory within the device limit, tma only on
 * compute capability >= 9.0 with a box of at most 256 cells a side, stages 2 or 3 for
 * ldgsts and 2 to 4 for tma) and raises the kernel's dynamic shared-memory limit. Errors name the
 * key at fault (kernel.block_x, kernel.halo, ...). */
int rtm_iso_cuda_prepare(const rtm_iso_shape_t *shape, int device);

/* Checks every z-marching launcher shares (iso and vti/tti): kernel.stages 2 to max_stages
 * (the launcher's instances for `halo`) for ldgsts and tma, kernel.zblock >= 0, ldgsts on
 * compute capability 8.0+, tma on 9.0+ with a tile plus halo of at most 256 cells a side.
 * Stores the device's opt-in shared memory per block in *optin. Errors name the key at fault
 * and `what`, the kernel (iso, vti, tti). */
int rtm_cuda_halo_check(rtm_halo_t halo, int stages, int max_stages, int zblock, const int block[2],
                        const char *what, int device, int *optin);

/* Raises `kernel`'s (a __global__ function) dynamic shared-memory limit to `shared_bytes`;
 * with halo tma, refuses a kernel built without sm_90 code. */
int rtm_cuda_kernel_prepare(const void *kernel, size_t shared_bytes, rtm_halo_t halo);

/* Shared memory one block of `shape` uses, in bytes. */
size_t rtm_iso_cuda_shared_bytes(const rtm_iso_shape_t *shape);

/* Encodes the tensor map of a padded field of `grid` for the tma halo of `shape`: boxes of
 * the tile with its R-wide xy halo, one plane deep (p[n]). */
int rtm_iso_cuda_tensor_map(const rtm_grid_t *grid, const float *field,
                            const rtm_iso_shape_t *shape, rtm_iso_tensor_map_t *map);

/* The same for boxes of the tile's own cells, no halo (p[n-1] and v^2 dt^2 under tma). */
int rtm_iso_cuda_cell_map(const rtm_grid_t *grid, const float *field, const rtm_iso_shape_t *shape,
                          rtm_iso_tensor_map_t *map);
/* TMA copies a box only from a 16-byte aligned start in x: a box starting 8 bytes into a
 * 16-byte piece stops the kernel with an illegal instruction (measured on an H100,
 * run/experiments/tma_start.cu). A tile's own cells start R cells into the padded row:
 * 16 bytes for float, but 8 for binary16. So a binary16 cell box starts
 * RTM_TMA_HALF_SHIFT cells left of the tile and is block_x + RTM_TMA_HALF_EXTRA wide (a
 * whole number of 16-byte pieces when block_x is a multiple of 8). */
#define RTM_TMA_HALF_SHIFT (RTM_RADIUS % 8)
#define RTM_TMA_HALF_EXTRA (RTM_TMA_HALF_SHIFT ? 8 : 0)

/* A cell map of a padded volume of IEEE binary16 values (vti/tti fp16 coefficients): boxes
 * of block_x + RTM_TMA_HALF_EXTRA x block_y cells, to be read from x - RTM_TMA_HALF_SHIFT. */
int rtm_iso_cuda_cell_map_half(const rtm_grid_t *grid, const void *volume,
                               const rtm_iso_shape_t *shape, rtm_iso_tensor_map_t *map);

/* One leapfrog update of the local planes [z_begin, z_end) on `stream` (a cudaStream_t);
 * backward != 0 solves the damped update for the older level. */
int rtm_iso_cuda_step(const rtm_grid_t *grid, const rtm_iso_shape_t *shape,
                      const rtm_iso_fields_t *fields, int backward, int z_begin, int z_end,
                      void *stream);

/* field[tap_index[t]] += tap_coeff[t] * wavelets[t / taps * samples + sample] for every tap t
 * of `count` points (`taps` each, rtm_points_t) whose tap_index lies in [index_begin,
 * index_end); nothing when sample is outside [0, samples). */
int rtm_iso_cuda_inject(float *field, const size_t *tap_index, const float *tap_coeff,
                        const float *wavelets, int count, int taps, int samples, int sample,
                        size_t index_begin, size_t index_end, void *stream);

/* The same with each tap's index formed from its point's first tap's (base_index, `width`
 * taps an axis, x fastest: rtm_points_t) instead of read from a table. */
int rtm_iso_cuda_inject_based(float *field, const long long *base_index, const float *tap_coeff,
                              const float *wavelets, int count, int width, long long stride_y,
                              long long stride_z, int samples, int sample, size_t index_begin,
                              size_t index_end, void *stream);

/* A step's new level copied, dense [nz_local][ny][nx], to `dense`: the padded layout's
 * origin and strides map a padded index there (a source snapshot taken in the step). */
typedef struct {
  float *dense;
  long long origin, stride_y, stride_z;
  int nx, ny;
} rtm_iso_level_copy_t;

/* The cells rtm_iso_cuda_inject (or _inject_based, with the same arguments) injected into,
 * copied from `field` into the level copy once they hold the injection. */
int rtm_iso_cuda_copy_taps(const float *field, const size_t *tap_index, const float *tap_coeff,
                           int count, int taps, size_t index_begin, size_t index_end,
                           const rtm_iso_level_copy_t *copy, void *stream);
int rtm_iso_cuda_copy_taps_based(const float *field, const long long *base_index,
                                 const float *tap_coeff, int count, int width, long long stride_y,
                                 long long stride_z, size_t index_begin, size_t index_end,
                                 const rtm_iso_level_copy_t *copy, void *stream);

/* traces[r * trace_length + sample] = sum over the planes of receiver r's taps (`taps` a
 * receiver, `per_plane` a plane, rtm_points_t) of sum_k tap_weight[k] field[tap_index[k]],
 * each plane's sum formed in tap order, the planes added in order, without FMA: the cpu
 * reference's sums. */
int rtm_iso_cuda_record(const float *field, const size_t *tap_index, const float *tap_weight,
                        float *traces, int count, int taps, int per_plane, int trace_length,
                        int sample, void *stream);
/* The same from the tensor-product form of the taps (rtm_points_t's axis_weight and
 * base_index, `width` taps an axis): each tap's weight formed where it is read, in the
 * cpu's order and rounding ((wx wy) wz in double, then float), so the samples equal the
 * table recorder's bit for bit with 200 bytes a point read instead of 12 a tap. */
int rtm_iso_cuda_record_separable(const float *field, const long long *base_index,
                                  const double *axis_weight, int width, long long stride_y,
                                  long long stride_z, float *traces, int count, int trace_length,
                                  int sample, void *stream);

#ifdef __cplusplus
}
#endif

#endif
