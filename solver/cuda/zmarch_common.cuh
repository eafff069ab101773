/* zmarch_common.cuh - what the iso (iso_cuda.cu) and vti/tti (tti_cuda.cu) z-marching kernels
 * and launchers share (CUDA only): the launch's domain in the kernel arguments, the tile
 * size, the block's z-range, and the launchers' argument packing, grid of blocks and shape
 * checks. */
#ifndef RTM_ZMARCH_COMMON_CUH
#define RTM_ZMARCH_COMMON_CUH

#include <cuda_runtime.h>

#include <string.h>

#include "iso_cuda.h"
#include "rtm_cuda_division.h" /* layer_div */
#include "rtm_grid.h"
#include "rtm_status.h"

constexpr int R = RTM_RADIUS;

/* Where a launch works: the padded layout of every field, the interior extents, the launch's
 * z-range in z-blocks, and the damping profiles over it. IsoArgs and TtiArgs embed it (kernel
 * arguments are passed by value: no pointer to follow); 80 bytes with no padding inside, at
 * an 8-byte aligned offset in both, so embedding it costs no parameter space. */
struct ZmarchDomain {
  const float *eta_x, *eta_y, *eta_z; /* eta dt over each axis' global interior */
  long long stride_y, stride_z, origin;
  int nx, ny, z_offset;
  int row_floats; /* stride_y: a 16-byte chunk starting below it lies inside the row */
  int rows;       /* ny + 2R padded rows per plane */
  int z_begin, z_end, zblock;
};
static_assert(sizeof(ZmarchDomain) == 80, "ZmarchDomain: no padding");

/* Tile floats rounded to 32 so that every slot starts 128-byte aligned (TMA's rule). */
static __host__ __device__ inline int tile_floats(int bx, int by) {
  return ((bx + 2 * R) * (by + 2 * R) + 31) / 32 * 32;
}

/* The planes of z-block `chunk`: output planes [zb0, zb1), the launch's range clipped, and
 * nplanes = zb1 - zb0 + 2R loaded planes from plane zb0 - R. */
struct ZmarchPlanes {
  int zb0, zb1, nplanes;
};
static __device__ __forceinline__ ZmarchPlanes zmarch_planes(const ZmarchDomain &d, int chunk) {
  ZmarchPlanes planes;
  planes.zb0 = d.z_begin + chunk * d.zblock;
  planes.zb1 = min(planes.zb0 + d.zblock, d.z_end);
  planes.nplanes = planes.zb1 - planes.zb0 + 2 * R;
  return planes;
}

/* The domain of a launch over the local planes [z_begin, z_end) of `grid`, in z-blocks of
 * `zblock` planes (kernel.zblock; 0 or more than the range: the whole range). */
static inline ZmarchDomain zmarch_domain(const rtm_grid_t *grid, const float *const eta_dt[3],
                                         int zblock, int z_begin, int z_end) {
  const int range = z_end - z_begin;
  ZmarchDomain d;
  d.eta_x = eta_dt[0];
  d.eta_y = eta_dt[1];
  d.eta_z = eta_dt[2];
  d.stride_y = (long long)grid->stride_y;
  d.stride_z = (long long)grid->stride_z;
  d.origin = (long long)grid->origin_index;
  d.nx = grid->n[0];
  d.ny = grid->n[1];
  d.z_offset = grid->z_offset;
  d.row_floats = (int)grid->stride_y;
  d.rows = grid->n[1] + 2 * R;
  d.z_begin = z_begin;
  d.z_end = z_end;
  d.zblock = zblock > 0 && zblock < range ? zblock : range;
  return d;
}

/* Kernel arguments (IsoArgs, TtiArgs) zero but for the domain and the damping sign: +1
 * forward, -1 backward (the forward update solved for the older level). */
template <typename Args>
static inline Args zmarch_args(const rtm_grid_t *grid, const float *const eta_dt[3], int zblock,
                               int backward, int z_begin, int z_end) {
  Args a;
  memset(&a, 0, sizeof a);
  a.domain = zmarch_domain(grid, eta_dt, zblock, z_begin, z_end);
  a.damping_sign = backward ? -1.f : 1.f;
  return a;
}

/* Blocks of a launch: tiles of bx x by cells over the interior (x, y), z-blocks (z). */
static inline dim3 zmarch_blocks(const ZmarchDomain &d, int bx, int by) {
  return dim3((unsigned)((d.nx + bx - 1) / bx), (unsigned)((d.ny + by - 1) / by),
              (unsigned)((d.z_end - d.z_begin + d.zblock - 1) / d.zblock));
}

/* The checks of a tile both launchers make first (errors name the key at fault): its rows
 * are copied in 16-byte pieces, and its block's threads, `cells_per_thread` cells each along
 * x, are at most max_threads and whole warps. `what` names the kernel (iso, vti, tti). */
static inline int zmarch_block_check(const int block[2], int cells_per_thread, int max_threads,
                                     const char *what) {
  int status = RTM_OK;
  const int bx = block[0], by = block[1], threads = bx / cells_per_thread * by;
  const char *plural = cells_per_thread == 1 ? "" : "s";
  if (bx < 4 || bx % 4 != 0)
    RTM_FAIL(RTM_ERR_CONFIG,
             "kernel.block_x = %d: the tile width must be a positive multiple of 4 "
             "(tile rows are copied in 16-byte pieces)",
             bx);
  if (by < 1) RTM_FAIL(RTM_ERR_CONFIG, "kernel.block_y = %d: must be at least 1", by);
  if (threads > max_threads)
    RTM_FAIL(RTM_ERR_CONFIG,
             "kernel.block_x x kernel.block_y = %d x %d cells = %d threads (%s: %d cell%s "
             "each): the kernel runs at most %d threads per block",
             bx, by, threads, what, cells_per_thread, plural, max_threads);
  if (threads % 32 != 0)
    RTM_FAIL(RTM_ERR_CONFIG,
             "kernel.block_x x kernel.block_y = %d x %d cells = %d threads (%s: %d cell%s "
             "each): must be whole warps (a multiple of 32 threads)",
             bx, by, threads, what, cells_per_thread, plural);
  return RTM_OK;
fail:
  return status;
}

/* The checks both launchers make last: the halo variant on `device` (rtm_cuda_halo_check;
 * max_stages: the launcher's instances) and `shared_bytes` per block of `block` within the
 * device's opt-in limit. */
static inline int zmarch_device_check(rtm_halo_t halo, int stages, int max_stages, int zblock,
                                      const int block[2], size_t shared_bytes, const char *what,
                                      int device) {
  int status = RTM_OK, optin = 0;
  RTM_TRY(rtm_cuda_halo_check(halo, stages, max_stages, zblock, block, what, device, &optin));
  if (shared_bytes > (size_t)optin)
    RTM_FAIL(RTM_ERR_CONFIG,
             "kernel.block_x x kernel.block_y = %d x %d with kernel.halo = %s, kernel.stages "
             "= %d needs %zu bytes of shared memory per block for %s; device %d allows %d",
             block[0], block[1], rtm_iso_halo_name(halo), stages, shared_bytes, what, device,
             optin);
  return RTM_OK;
fail:
  return status;
}

#endif
