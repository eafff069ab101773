/* test_host_memory - rtm_mem_host_fault_in (memory/mem_host.c), which makes a buffer's pages
 * resident before a page lock (the migration's host slabs, the `pinned` strategy's large
 * allocations, in parts of a thread each past 512 MiB) while keeping what they hold, and
 * rtm_mem_host_map_zeroed, the memory those allocations come from. On
 * anonymous memory fresh from mmap (zeroed, no page touched): the process's resident set
 * grows by the pages never touched before the call (a page only read would map the shared
 * zero page, which the resident set does not count), and the bytes written before it, and
 * the zeros of the pages never written, read back the same. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "rtm_memory.h"

enum { BUFFER_BYTES = 16 << 20, WRITTEN_BYTES = 1 << 20, SLACK_BYTES = 2 << 20 };

/* The process's resident set in bytes (/proc/self/statm's second field). */
static size_t resident_bytes(void) {
  FILE *statm = fopen("/proc/self/statm", "r");
  assert_non_null(statm);
  unsigned long size = 0, resident = 0;
  assert_int_equal(fscanf(statm, "%lu %lu", &size, &resident), 2);
  fclose(statm);
  return (size_t)resident * (size_t)sysconf(_SC_PAGESIZE);
}

/* A fresh anonymous mapping of BUFFER_BYTES: zeroed, none of its pages resident. */
static int map_buffer(void **state) {
  void *buffer =
      mmap(NULL, BUFFER_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (buffer == MAP_FAILED) return -1;
  *state = buffer;
  return 0;
}

static int unmap_buffer(void **state) {
  return munmap(*state, BUFFER_BYTES);
}

static void test_fault_in_keeps_contents(void **state) {
  unsigned char *buffer = *state;
  for (size_t i = 0; i < WRITTEN_BYTES; ++i)
    buffer[i] = (unsigned char)(i * 131u + 7u);
  /* 15 MiB never touched: the resident set grows by them (less a slack for the rest of the
   * process, which the test does not move, and a huge page the writes above may have
   * mapped whole) */
  const size_t before = resident_bytes();
  rtm_mem_host_fault_in(buffer, BUFFER_BYTES);
  const size_t grown = resident_bytes() - before;
  if (grown < BUFFER_BYTES - WRITTEN_BYTES - SLACK_BYTES)
    fail_msg("the resident set grew by %zu bytes, not by the %d never touched", grown,
             BUFFER_BYTES - WRITTEN_BYTES);
  for (size_t i = 0; i < WRITTEN_BYTES; ++i)
    if (buffer[i] != (unsigned char)(i * 131u + 7u)) fail_msg("byte %zu changed", i);
  for (size_t i = WRITTEN_BYTES; i < BUFFER_BYTES; ++i)
    if (buffer[i] != 0) fail_msg("byte %zu of a page never written is %d", i, buffer[i]);
}

/* A start inside a page and an odd size: the pages of the first and the last byte made
 * resident too; a size of 0 does nothing. */
static void test_fault_in_odd_range(void **state) {
  unsigned char *buffer = *state;
  unsigned char *start = buffer + 3;
  const size_t bytes = BUFFER_BYTES - 3 - 5;
  start[bytes - 1] = 42;
  rtm_mem_host_fault_in(start, 0);
  const size_t before = resident_bytes();
  rtm_mem_host_fault_in(start, bytes);
  const size_t grown = resident_bytes() - before;
  if (grown < BUFFER_BYTES - 2 * SLACK_BYTES)
    fail_msg("the resident set grew by %zu bytes of %d", grown, BUFFER_BYTES);
  assert_int_equal(start[bytes - 1], 42);
  assert_int_equal(start[0], 0);
}

/* Past twice the part (256 MiB) the pages are faulted in by threads, each its part, the
 * parts cut at 2 MiB: every page resident, the bytes written before kept (one every 64 MiB
 * and the last, from a start inside a page), the rest zero. The map: whole 2 MiB pages,
 * zeroed. */
static void test_fault_in_by_parts(void **state) {
  (void)state;
  enum { MIB = 1 << 20, LARGE_MIB = 600, STRIDE = 64 * MIB };
  size_t mapped = 0;
  unsigned char *map = rtm_mem_host_map_zeroed((size_t)LARGE_MIB * MIB - 5, &mapped);
  if (!map) skip(); /* not this much memory here */
  assert_int_equal(mapped, (size_t)LARGE_MIB * MIB);
  assert_int_equal((uintptr_t)map % (2 * MIB), 0); /* on a huge page's start */
  unsigned char *start = map + 3;
  const size_t bytes = mapped - 3 - 2;
  size_t written = 0;
  for (size_t at = 0; at < bytes; at += STRIDE, ++written)
    start[at] = (unsigned char)(at / STRIDE * 37u + 1u);
  start[bytes - 1] = 42;
  const size_t before = resident_bytes();
  rtm_mem_host_fault_in(start, bytes);
  const size_t grown = resident_bytes() - before;
  /* less the pages written, each a huge page where the kernel gave one */
  if (grown < mapped - (written + 1) * 2 * MIB - SLACK_BYTES)
    fail_msg("the resident set grew by %zu bytes of %zu", grown, mapped);
  for (size_t at = 0; at < bytes; at += 509) {
    const unsigned char want = at % STRIDE == 0 ? (unsigned char)(at / STRIDE * 37u + 1u) : 0;
    if (start[at] != want) fail_msg("byte %zu is %d, not %d", at, start[at], want);
  }
  assert_int_equal(start[bytes - 1], 42);
  assert_int_equal(map[0], 0);
  rtm_mem_host_unmap(map, mapped);
}

/* rtm_mem_host_zero over a buffer that holds other bytes, large enough for parts of a
 * thread each (at least 64 MiB a part), from an odd start to an odd end: every byte of the
 * range zero, the bytes on either side kept. Then the `host` strategy: a volume from its
 * alloc is zero and starts on a huge page's boundary. */
static void test_zero_by_parts(void **state) {
  (void)state;
  enum { MIB = 1 << 20, LARGE_MIB = 200 };
  size_t mapped = 0;
  unsigned char *map = rtm_mem_host_map_zeroed((size_t)LARGE_MIB * MIB, &mapped);
  if (!map) skip(); /* not this much memory here */
  memset(map, 0xab, mapped);
  unsigned char *start = map + 3;
  const size_t bytes = mapped - 3 - 7;
  rtm_mem_host_zero(start, bytes);
  for (size_t at = 0; at < bytes; at += 4093)
    if (start[at] != 0) fail_msg("byte %zu is %d, not 0", at, start[at]);
  assert_int_equal(start[bytes - 1], 0);
  for (int i = 0; i < 3; ++i)
    assert_int_equal(map[i], 0xab);
  for (size_t at = mapped - 7; at < mapped; ++at)
    assert_int_equal(map[at], 0xab);
  rtm_mem_host_unmap(map, mapped);
  rtm_allocation_t volume = {0};
  rtm_mem_request_t request = {-1, 0}; /* host memory */
  assert_int_equal(rtm_mem_alloc("host", 3 * MIB + 5, "volume", &request, NULL, &volume), 0);
  assert_int_equal((uintptr_t)volume.ptr % (2 * MIB), 0);
  const unsigned char *bytes_of = volume.ptr;
  for (size_t at = 0; at < volume.bytes; at += 511)
    assert_int_equal(bytes_of[at], 0);
  rtm_mem_free(&volume);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_fault_in_keeps_contents, map_buffer, unmap_buffer),
      cmocka_unit_test_setup_teardown(test_fault_in_odd_range, map_buffer, unmap_buffer),
      cmocka_unit_test(test_fault_in_by_parts),
      cmocka_unit_test(test_zero_by_parts),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
