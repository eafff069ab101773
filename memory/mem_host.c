/* Strategy `host`: page-aligned malloc for the cpu backend; what host memory is left; and
 * large host buffers on huge pages. */
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

static int host_alloc(size_t bytes, const rtm_mem_request_t *request, rtm_allocation_t *out) {
  (void)request;
  size_t rounded = (bytes + HOST_ALIGNMENT - 1) / HOST_ALIGNMENT * HOST_ALIGNMENT;
  void *ptr = aligned_alloc(HOST_ALIGNMENT, rounded ? rounded : HOST_ALIGNMENT);
  if (!ptr) {
    rtm_log_error("host allocation of %zu bytes for '%s' failed", bytes, out->label);
    return RTM_ERR_NOMEM;
  }
  memset(ptr, 0, rounded);
  rtm_mem_fill_allocation(out, ptr, bytes, rounded, 0, -1);
  return RTM_OK;
}

void *rtm_mem_host_large(size_t bytes) {
  if (bytes < (size_t)HUGE_PAGE) return malloc(bytes ? bytes : 1);
  const size_t rounded = rtm_mem_host_map_bytes(bytes);
  void *ptr = NULL;
  if (posix_memalign(&ptr, HUGE_PAGE, rounded) != 0) return NULL;
#ifdef MADV_HUGEPAGE
  (void)madvise(ptr, rounded, MADV_HUGEPAGE); /* advice: without THP the pages stay small */
#endif
  return ptr;
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

typedef struct {
  unsigned char *ptr;
  size_t bytes;
} fault_part_t;

static void *fault_in_thread(void *arg) {
  const fault_part_t *part = arg;
  fault_in_part(part->ptr, part->bytes);
  return NULL;
}

void rtm_mem_host_fault_in(void *ptr, size_t bytes) {
  /* Large buffers in parts of a thread each (at least 256 MiB a part), on up to 16 cores: the
   * kernel zeroes each new page, and one thread did 6 GB/s of it, 16 on 8 GB 8.4 GB/s, on
   * huge pages (run/experiments/pin_speed.sh, an H200's host). */
  enum { PART_MIN = 256 << 20, THREADS_MAX = 16 };
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
#ifdef CPU_COUNT
  cpu_set_t mine; /* the cores this process may run on (ranks bound to a few of them) */
  if (sched_getaffinity(0, sizeof mine, &mine) == 0) cores = CPU_COUNT(&mine);
#endif
  size_t parts = bytes / PART_MIN;
  if (cores > 0 && parts > (size_t)cores) parts = (size_t)cores;
  if (parts > THREADS_MAX) parts = THREADS_MAX;
  if (parts < 2) {
    fault_in_part(ptr, bytes);
    return;
  }
  pthread_t thread[THREADS_MAX];
  fault_part_t part[THREADS_MAX];
  int started[THREADS_MAX] = {0};
  const size_t each = rtm_mem_host_map_bytes(bytes / parts); /* whole huge pages a part */
  for (size_t k = 0; k < parts; ++k) {
    const size_t at = k * each < bytes ? k * each : bytes;
    part[k].ptr = (unsigned char *)ptr + at;
    part[k].bytes = bytes - at < each ? bytes - at : each;
    started[k] = pthread_create(&thread[k], NULL, fault_in_thread, &part[k]) == 0;
    if (!started[k]) fault_in_part(part[k].ptr, part[k].bytes); /* no thread: this one */
  }
  for (size_t k = 0; k < parts; ++k)
    if (started[k]) pthread_join(thread[k], NULL);
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
    .description = "aligned malloc in host memory (cpu backend)",
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
