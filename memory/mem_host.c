/* Strategy `host`: the cpu backend's memory, volumes on huge pages zeroed over the cores;
 * what host memory is left; and large host buffers on huge pages. */
#define _GNU_SOURCE /* madvise, MADV_HUGEPAGE, MADV_POPULATE_WRITE; sysconf; sched_getaffinity */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h> /* getrlimit */
#include <unistd.h>

#include "rtm_memory.h"
#include "rtm_status.h"

enum { HOST_ALIGNMENT = 4096, HUGE_PAGE = 2 << 20 /* a transparent huge page */ };

static int host_probe(int device, char *why, size_t why_size) {
  (void)device;
  (void)why;
  (void)why_size;
  return RTM_OK;
}

/* `bytes` (a multiple of HOST_ALIGNMENT) on a huge page's boundary (2 MiB: x86-64's, and
 * aarch64's with 4 KiB pages), advised onto huge pages: a fault a huge page where the kernel
 * has them, not every 4 KiB; uninitialised, freed with free(); NULL when out of memory. */
static void *huge_aligned(size_t bytes) {
  void *ptr = NULL;
  if (posix_memalign(&ptr, HUGE_PAGE, bytes) != 0) return NULL;
#ifdef MADV_HUGEPAGE
  (void)madvise(ptr, bytes, MADV_HUGEPAGE); /* advice: without THP the pages stay small */
#endif
  return ptr;
}

static int host_alloc(size_t bytes, const rtm_mem_request_t *request, rtm_allocation_t *out) {
  (void)request;
  const size_t rounded = (bytes + HOST_ALIGNMENT - 1) / HOST_ALIGNMENT * HOST_ALIGNMENT;
  /* a volume on huge pages (4x faster to zero on the development machine) */
  void *ptr = rounded >= (size_t)HUGE_PAGE
                  ? huge_aligned(rounded)
                  : aligned_alloc(HOST_ALIGNMENT, rounded ? rounded : HOST_ALIGNMENT);
  if (!ptr) {
    rtm_log_error("host allocation of %zu bytes for '%s' failed", bytes, out->label);
    return RTM_ERR_NOMEM;
  }
  rtm_mem_host_zero(ptr, rounded); /* a volume's faults over the cores */
  rtm_mem_fill_allocation(out, ptr, bytes, rounded, 0, -1);
  return RTM_OK;
}

void *rtm_mem_host_large(size_t bytes) {
  if (bytes < (size_t)HUGE_PAGE) return malloc(bytes ? bytes : 1);
  return huge_aligned(rtm_mem_host_map_bytes(bytes));
}

static void fault_in_part(void *ptr, size_t bytes) {
  if (bytes == 0) return;
  const long page = sysconf(_SC_PAGESIZE);
  const size_t step = page > 0 ? (size_t)page : HOST_ALIGNMENT;
#ifdef MADV_POPULATE_WRITE
  /* Linux 5.14 and later: resident and writable, no byte read or written */
  const uintptr_t first = (uintptr_t)ptr / step * step, end = (uintptr_t)ptr + bytes;
  if (madvise((void *)first, end - first, MADV_POPULATE_WRITE) == 0) return;
#endif
  volatile unsigned char *bytes_of = ptr;
  for (size_t at = 0; at < bytes; at += step)
    bytes_of[at] = bytes_of[at]; /* a write: a page only read would map the zero page */
  bytes_of[bytes - 1] = bytes_of[bytes - 1];
}

typedef void (*part_work_t)(void *ptr, size_t bytes);

typedef struct {
  unsigned char *ptr;
  size_t bytes;
  part_work_t work;
} host_part_t;

static void *part_thread(void *arg) {
  const host_part_t *part = arg;
  part->work(part->ptr, part->bytes);
  return NULL;
}

/* `work` over the `bytes` at ptr in parts of a thread each, at least part_min bytes a part
 * (whole huge pages), on up to 16 of the cores this process may run on (ranks bound to a few
 * of them); small buffers on this thread. */
static void over_parts(void *ptr, size_t bytes, size_t part_min, part_work_t work) {
  enum { THREADS_MAX = 16 };
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
#ifdef CPU_COUNT
  cpu_set_t mine;
  if (sched_getaffinity(0, sizeof mine, &mine) == 0) cores = CPU_COUNT(&mine);
#endif
  size_t parts = bytes / part_min;
  if (cores > 0 && parts > (size_t)cores) parts = (size_t)cores;
  if (parts > THREADS_MAX) parts = THREADS_MAX;
  if (parts < 2) {
    work(ptr, bytes);
    return;
  }
  pthread_t thread[THREADS_MAX];
  host_part_t part[THREADS_MAX];
  int started[THREADS_MAX] = {0};
  const size_t each = rtm_mem_host_map_bytes(bytes / parts); /* whole huge pages a part */
  for (size_t k = 0; k < parts; ++k) {
    const size_t at = k * each < bytes ? k * each : bytes;
    part[k] = (host_part_t){(unsigned char *)ptr + at, bytes - at < each ? bytes - at : each, work};
    started[k] = pthread_create(&thread[k], NULL, part_thread, &part[k]) == 0;
    if (!started[k]) work(part[k].ptr, part[k].bytes); /* no thread: this one */
  }
  for (size_t k = 0; k < parts; ++k)
    if (started[k]) pthread_join(thread[k], NULL);
}

void rtm_mem_host_fault_in(void *ptr, size_t bytes) {
  /* at least 256 MiB a part: the kernel zeroes each new page, and one thread did 6 GB/s of
   * it, 16 on 8 GB 8.4 GB/s, on huge pages (run/experiments/pin_speed.sh, an H200's host) */
  over_parts(ptr, bytes, (size_t)256 << 20, fault_in_part);
}

static void zero_part(void *ptr, size_t bytes) {
  memset(ptr, 0, bytes);
}

void rtm_mem_host_zero(void *ptr, size_t bytes) {
  /* at least 64 MiB a part: a thread's start is microseconds, a part's faults milliseconds */
  over_parts(ptr, bytes, (size_t)64 << 20, zero_part);
}

size_t rtm_mem_host_map_bytes(size_t bytes) {
  if (bytes > SIZE_MAX - HUGE_PAGE) return SIZE_MAX; /* more than can be mapped */
  return (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
}

void *rtm_mem_host_map_zeroed(size_t bytes, size_t *mapped) {
  const size_t rounded = rtm_mem_host_map_bytes(bytes);
  *mapped = 0;
  if (rounded == 0 || rounded > SIZE_MAX - HUGE_PAGE) return NULL;
  /* a huge page more, its ends trimmed, so that the mapping starts on a huge page: its first
   * and last 2 MiB would stay small pages otherwise */
  unsigned char *map =
      mmap(NULL, rounded + HUGE_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (map == MAP_FAILED) return NULL;
  const size_t head = (HUGE_PAGE - (uintptr_t)map % HUGE_PAGE) % HUGE_PAGE;
  if (head) (void)munmap(map, head);
  (void)munmap(map + head + rounded, HUGE_PAGE - head); /* head < HUGE_PAGE: never empty */
  unsigned char *ptr = map + head;
#ifdef MADV_HUGEPAGE
  (void)madvise(ptr, rounded, MADV_HUGEPAGE); /* advice: without THP the pages stay small */
#endif
  *mapped = rounded;
  return ptr;
}

void rtm_mem_host_unmap(void *ptr, size_t mapped) {
  if (ptr && mapped) munmap(ptr, mapped);
}

static void host_free(rtm_allocation_t *allocation) {
  free(allocation->ptr);
}

const rtm_mem_strategy_t rtm_mem_host = {
    .name = "host",
    .description = "host memory, volumes on huge pages (cpu backend)",
    .probe = host_probe,
    .alloc = host_alloc,
    .free = host_free,
    .prefetch = NULL,
};

/* What the process may still map under its address-space limit (ulimit -v): the limit less
 * its size now (/proc/self/statm); SIZE_MAX without a limit. */
size_t rtm_mem_host_address_space_left(void) {
  struct rlimit limit;
  if (getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return SIZE_MAX;
  unsigned long long pages = 0;
  FILE *statm = fopen("/proc/self/statm", "r");
  if (statm) {
    if (fscanf(statm, "%llu", &pages) != 1) pages = 0;
    fclose(statm);
  }
  const unsigned long long used = pages * (unsigned long long)sysconf(_SC_PAGESIZE);
  return used < (unsigned long long)limit.rlim_cur ? (size_t)(limit.rlim_cur - used) : 0;
}

size_t rtm_mem_host_available_bytes(void) {
  FILE *meminfo = fopen("/proc/meminfo", "r");
  char line[256];
  unsigned long long kib = 0;
  while (meminfo && fgets(line, sizeof line, meminfo))
    if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1) break;
  if (meminfo) fclose(meminfo);
  size_t available = 0;
  if (kib > 0) {
    available = (size_t)kib * 1024;
  } else {
    const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    available = pages > 0 && page > 0 ? (size_t)pages * (size_t)page : (size_t)-1;
  }
  const size_t left = rtm_mem_host_address_space_left(); /* a run under ulimit -v has less */
  return left < available ? left : available;
}
