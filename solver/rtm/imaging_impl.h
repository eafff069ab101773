/* imaging_impl.h - private to solver/rtm: what image.c, snapshots.c, filters.c and the
 * reconstructions share on the host (the strategy names they resolve, the bytes a strategy
 * takes and finds free, the loop pragmas). */
#ifndef RTM_IMAGING_IMPL_H
#define RTM_IMAGING_IMPL_H

#include <stddef.h>

#include "rtm_grid.h"
#include "rtm_imaging.h"
#include "rtm_memory.h"

/* OpenMP splits the (z, y) rows of a sweep; along a row no cell depends on another (simd).
 * Each cell keeps its own sequence of float operations, so the threads change no result.
 * The same pragmas as solver/cpu's RTM_OMP_ROWS (cpu_backend.h, private to its folder). */
#ifdef _OPENMP
#define IMAGING_OMP_ROWS _Pragma("omp parallel for collapse(2) schedule(static)")
#define IMAGING_OMP_SIMD _Pragma("omp simd")
#else
#define IMAGING_OMP_ROWS
#define IMAGING_OMP_SIMD
#endif

/* fmaf is one instruction with FMA3 but a libm call on the baseline x86-64 target: the row
 * functions that use it are compiled twice and the loader picks the fma clone when the
 * processor has one. Both give the same floats (fmaf is exactly rounded). As tti_cpu.c. */
#if defined(__x86_64__) && !defined(__FMA__) && defined(__ELF__) &&                                \
    (defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 8))
#define IMAGING_FMA_CLONES __attribute__((target_clones("fma", "default")))
#else
#define IMAGING_FMA_CLONES
#endif

/* The strategy a store uses: `strategy` as given, or for "auto", "" and NULL the fields'
 * memory ("host" when device < 0, else "device"). */
const char *rtm_imaging_strategy(const char *strategy, int device);
/* 1 for the strategies whose memory is on the host ("host", "pinned"). */
int rtm_imaging_host_strategy(const char *strategy);
/* What `strategy` takes for `bytes`, as the ledger will record it: host rounds up to its
 * 4096-byte alignment (mem_host.c), vmm and vmm-compressed to the 2 MiB granularity the cuda
 * backend also assumes (rtm_cuda_backend_taken_bytes), the others take what is asked. */
size_t rtm_imaging_taken_bytes(const char *strategy, size_t bytes);
/* Host memory available now: MemAvailable of /proc/meminfo (free memory and what the page
 * cache would give back), else the free physical pages, else no limit. */
size_t rtm_imaging_host_free_bytes(void);
/* The bytes free now where `strategy` allocates for the fields of `device`: host memory for
 * the host strategies and the cpu backend, else the device's (cudaMemGetInfo). */
int rtm_imaging_free_bytes(const char *strategy, int device, size_t *free_bytes);
/* An allocation through memory/ for the fields of `device`. */
int rtm_imaging_alloc(const char *strategy, size_t bytes, const char *label, int device,
                      rtm_mem_ledger_t *ledger, rtm_allocation_t *out);

/* A device's volumes copied to the host behind later work (rtm_imaging_cuda_hold_start, on
 * a stream of its own) and cleared where they are next used: the image's (image.c) and the
 * gathers' (offset_gathers.c). What writes or reads the volumes next calls
 * rtm_device_hold_settle first: the legacy stream then waits for the copy, and zeroes the
 * `count` volumes if a clear came since. */
typedef struct {
  struct rtm_imaging_cuda_hold *hold; /* made by the first hold */
  int hold_pending;                   /* a hold started: what writes the volumes waits for it */
  int clear_pending;                  /* the volumes are zero for what comes next, not yet */
} rtm_device_hold_t;
int rtm_device_hold_settle(rtm_device_hold_t *deferred, rtm_allocation_t *const volumes[],
                           int count);

#endif
