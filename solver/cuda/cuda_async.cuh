/* cuda_async.cuh - the asynchronous copy primitives the z-marching kernels share (CUDA only):
 * cp.async (LDGSTS, sm_80+) 16-byte copies with zero fill, mbarriers and the bulk tensor copy
 * (TMA, sm_90+). Each compiles to nothing below its architecture; the launchers refuse the
 * halo variants a device cannot run before any kernel starts. */
#ifndef RTM_CUDA_ASYNC_CUH
#define RTM_CUDA_ASYNC_CUH

#include <cuda.h>
#include <stdint.h>

static __device__ inline uint32_t smem_u32(const void *ptr) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(ptr));
}

/* ---- cp.async (LDGSTS) ---- */
static __device__ inline void cp_async16(float *dst, const float *src, bool valid) {
#if __CUDA_ARCH__ >= 800
  /* src-size 0 writes 16 zero bytes without reading global memory. */
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_u32(dst)), "l"(src),
               "r"(valid ? 16 : 0)
               : "memory");
#endif
}
static __device__ inline void cp_async_commit() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
template <int N> static __device__ inline void cp_async_wait() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

/* ---- mbarrier + bulk tensor copy (TMA, sm_90) ---- */
static __device__ inline void mbar_init(uint64_t *bar, uint32_t count) {
#if __CUDA_ARCH__ >= 900
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(count)
               : "memory");
#endif
}
/* n slots' full barriers (full_count arrivals each: the producer's expect_tx, or every
 * writer) and empty barriers (empty_count arrivals: every reader). */
static __device__ inline void mbar_init_slots(uint64_t *full, uint64_t *empty, int n,
                                              uint32_t full_count, uint32_t empty_count) {
  for (int s = 0; s < n; ++s) {
    mbar_init(&full[s], full_count);
    mbar_init(&empty[s], empty_count);
  }
}
static __device__ inline void mbar_fence_init() {
#if __CUDA_ARCH__ >= 900
  /* Makes the initialised barriers visible to the async proxy (the copy engine). */
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}
static __device__ inline void mbar_expect_tx(uint64_t *bar, uint32_t bytes) {
#if __CUDA_ARCH__ >= 900
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_u32(bar)),
               "r"(bytes)
               : "memory");
#endif
}
/* The longest a waiting thread sleeps in one try (ns): it wakes when the phase completes,
 * sooner than this. */
constexpr uint32_t MBAR_SUSPEND_NS = 1000000;
/* Whether the phase of `parity` has completed, the thread suspended meanwhile (up to
 * MBAR_SUSPEND_NS). Without the hint the try returns at once and mbar_wait's loop spins: a
 * producer thread waiting for its consumers then takes issue slots from the consumer warps
 * of its scheduler (run/results/kernels.md, the H200's iso kernel). */
static __device__ inline bool mbar_try_wait(uint64_t *bar, uint32_t parity) {
  uint32_t done = 1;
#if __CUDA_ARCH__ >= 900
  asm volatile("{\n .reg .pred p;\n"
               " mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2, %3;\n"
               " selp.u32 %0, 1, 0, p;\n}\n"
               : "=r"(done)
               : "r"(smem_u32(bar)), "r"(parity), "r"(MBAR_SUSPEND_NS)
               : "memory");
#endif
  return done != 0;
}
static __device__ inline void mbar_arrive(uint64_t *bar) {
#if __CUDA_ARCH__ >= 900
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_u32(bar)) : "memory");
#endif
}
static __device__ inline void mbar_wait(uint64_t *bar, uint32_t parity) {
  while (!mbar_try_wait(bar, parity)) {
  }
}
static __device__ inline void tma_load_3d(void *dst, const CUtensorMap *map, int x, int y, int z,
                                          uint64_t *bar) {
#if __CUDA_ARCH__ >= 900
  asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
               " [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(smem_u32(dst)),
               "l"(reinterpret_cast<uint64_t>(map)), "r"(x), "r"(y), "r"(z), "r"(smem_u32(bar))
               : "memory");
#endif
}

#endif
