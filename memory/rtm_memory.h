/* rtm_memory.h - every large allocation goes through a named memory strategy.
 *
 * A strategy is a const table of function pointers (the sqlite3_mem_methods shape): a new
 * one is one new file and one line in the registry list of rtm_memory.c. A ledger records
 * what each field asked for and what it got, for the run report and `rtm3d info`. */
#ifndef RTM_MEMORY_H
#define RTM_MEMORY_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RTM_MEM_LABEL_MAX 48

struct rtm_mem_strategy;

typedef struct {
  void *ptr;                 /* host or device address, as the strategy says */
  size_t bytes;              /* what was asked for */
  size_t reserved_bytes;     /* what was taken (rounded to the granularity) */
  int on_device;             /* ptr is a device address (not host-dereferenceable) */
  int compressed;            /* vmm-compressed: the driver granted generic compression */
  int device;                /* CUDA ordinal, -1 for host */
  unsigned long long handle; /* strategy-private (VMM generic handle) */
  const struct rtm_mem_strategy *strategy;
  char label[RTM_MEM_LABEL_MAX];
} rtm_allocation_t;

typedef struct {
  int device;              /* CUDA ordinal the allocation is for; -1 for host */
  int require_compression; /* vmm-compressed: a refusal is an error, not a fallback */
} rtm_mem_request_t;

typedef struct rtm_mem_strategy {
  const char *name;
  const char *description;
  /* 0 when the strategy can serve `device`; else a status with the reason in why. */
  int (*probe)(int device, char *why, size_t why_size);
  int (*alloc)(size_t bytes, const rtm_mem_request_t *request, rtm_allocation_t *out);
  void (*free)(rtm_allocation_t *allocation);
  /* Make the memory resident where it will be used (managed); may be NULL. */
  int (*prefetch)(const rtm_allocation_t *allocation, void *cuda_stream);
} rtm_mem_strategy_t;

/* Registry lookup by the name the user wrote; NULL when unknown. */
const rtm_mem_strategy_t *rtm_mem_find(const char *name);
/* Comma-separated list of the registered names, for error messages and help. */
const char *rtm_mem_known_names(void);
/* Number of registered strategies and the i-th one (for `rtm3d info`). */
int rtm_mem_count(void);
const rtm_mem_strategy_t *rtm_mem_at(int index);

/* One entry per allocation made through the ledger. */
typedef struct {
  char label[RTM_MEM_LABEL_MAX];
  const char *strategy;
  size_t bytes;
  size_t reserved_bytes;
  int compressed;
} rtm_mem_record_t;

typedef struct {
  rtm_mem_record_t *records;
  int count, capacity;
  size_t total_bytes;
} rtm_mem_ledger_t;

/* Allocates through the named strategy: unknown names list the known ones, a strategy the
 * device cannot serve says why. The ledger may be NULL. */
int rtm_mem_alloc(const char *strategy, size_t bytes, const char *label,
                  const rtm_mem_request_t *request, rtm_mem_ledger_t *ledger,
                  rtm_allocation_t *out);
void rtm_mem_free(rtm_allocation_t *allocation);
/* `to` becomes a view of `from`, another allocation that outlives it: the same memory, which
 * rtm_mem_free of the view leaves alone (no strategy), and no ledger record of its own. */
void rtm_mem_borrow(rtm_allocation_t *to, const rtm_allocation_t *from);
/* Host memory a process can still take (MemAvailable of /proc/meminfo, else the free
 * pages); SIZE_MAX when neither says. */
size_t rtm_mem_host_available_bytes(void);
/* What the process may still map under its address-space limit (ulimit -v): the limit less
 * its size now; SIZE_MAX without a limit. */
size_t rtm_mem_host_address_space_left(void);
/* Free memory of CUDA device `device` (made current), for preflights; RTM_ERR_UNSUPPORTED in a
 * build without CUDA. */
int rtm_mem_device_free_bytes(int device, size_t *free_bytes);
/* For a strategy's alloc: the address it got, the bytes asked for and taken, and where. */
void rtm_mem_fill_allocation(rtm_allocation_t *out, void *ptr, size_t bytes, size_t reserved_bytes,
                             int on_device, int device);
int rtm_mem_prefetch(const rtm_allocation_t *allocation, void *cuda_stream);
/* A large host buffer (volumes, gathers) on 2 MiB-aligned memory advised onto transparent
 * huge pages, so that its first touch (the copy that fills it) takes a page fault every
 * 2 MiB instead of every 4 KiB (about 1 s a 2 GB buffer otherwise); uninitialised, freed
 * with free(); NULL when out of memory. Small sizes are plain malloc. */
void *rtm_mem_host_large(size_t bytes);
/* Every page of [ptr, ptr + bytes) made resident for writing, its contents kept: what
 * rtm_mem_host_pin does first, so that the page lock, which holds the CUDA driver, does not
 * fault and zero the pages of memory never touched while every other thread's CUDA call
 * waits. */
void rtm_mem_host_fault_in(void *ptr, size_t bytes);
/* The `bytes` at ptr set to zero, large buffers (128 MiB and more) in parts of a thread each
 * as rtm_mem_host_fault_in: a fresh volume's page faults spread over the cores (the threads
 * are not bound: which NUMA node a part lands on is the scheduler's). */
void rtm_mem_host_zero(void *ptr, size_t bytes);
/* Zero-filled host memory of at least `bytes` (*mapped: how much, whole 2 MiB pages), an
 * anonymous mapping advised onto transparent huge pages, not yet resident (the `pinned`
 * strategy faults it in and page-locks it); released with rtm_mem_host_unmap. NULL (and
 * *mapped 0) when the system has no such memory to give. */
void *rtm_mem_host_map_zeroed(size_t bytes, size_t *mapped);
/* What rtm_mem_host_map_zeroed maps for `bytes`: whole 2 MiB pages (the `pinned` strategy's
 * allocations of RTM_MEM_PINNED_MAP_MIN and more take that much). */
size_t rtm_mem_host_map_bytes(size_t bytes);
#define RTM_MEM_PINNED_MAP_MIN ((size_t)2 << 20)
void rtm_mem_host_unmap(void *ptr, size_t mapped);
/* Host memory allocated elsewhere (an MPI window) faulted in and page-locked for
 * asynchronous copies, and released again (cudaHostRegister, cudaHostUnregister); without
 * CUDA in the build nothing is copied asynchronously and both do nothing. */
int rtm_mem_host_pin(void *ptr, size_t bytes, const char *label);
/* rtm_mem_host_pin without a word on failure (RTM_ERR_NOMEM): for memory that works unpinned
 * too, only slower. */
int rtm_mem_host_try_pin(void *ptr, size_t bytes);
void rtm_mem_host_unpin(void *ptr);

void rtm_mem_ledger_init(rtm_mem_ledger_t *ledger);
void rtm_mem_ledger_release(rtm_mem_ledger_t *ledger);

/* Strategies compiled into this build; rtm_memory.c lists them. */
extern const rtm_mem_strategy_t rtm_mem_host;

#ifdef __cplusplus
}
#endif

#endif
