/* test_host_memory - large host buffers (memory/mem_host.c): rtm_mem_host_large's alignment,
 * and rtm_mem_host_fault_in, which makes a buffer's pages resident before a page lock
 * (the migration's host slabs) while keeping what they hold: the process's resident set
 * grows by the pages never touched before it (a read would only map the shared zero page,
 * which the resident set does not count), and the bytes written before it, and the zeros
 * of the pages never written, read back the same. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "rtm_memory.h"

enum { BUFFER_BYTES = 16 << 20, WRITTEN_BYTES = 1 << 20, HUGE_PAGE = 2 << 20 };

/* The process's resident set in bytes (/proc/self/statm's second field). */
static size_t resident_bytes(void) {
  FILE *statm = fopen("/proc/self/statm", "r");
  assert_non_null(statm);
  unsigned long size = 0, resident = 0;
  assert_int_equal(fscanf(statm, "%lu %lu", &size, &resident), 2);
  fclose(statm);
  return (size_t)resident * (size_t)sysconf(_SC_PAGESIZE);
}

static void test_fault_in_keeps_contents(void **state) {
  (void)state;
  const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  unsigned char *buffer = rtm_mem_host_large(BUFFER_BYTES);
  assert_non_null(buffer);
  assert_int_equal((uintptr_t)buffer % HUGE_PAGE, 0);
  for (size_t i = 0; i < WRITTEN_BYTES; ++i)
    buffer[i] = (unsigned char)(i * 131u + 7u);
  /* 15 MiB never touched: the resident set grows by them (less a margin for the rest of
   * the process, which this test does not move) */
  const size_t before = resident_bytes();
  rtm_mem_host_fault_in(buffer, BUFFER_BYTES);
  const size_t grown = resident_bytes() - before;
  if (grown < BUFFER_BYTES - WRITTEN_BYTES - HUGE_PAGE)
    fail_msg("the resident set grew by %zu bytes, not by the %d never touched", grown,
             BUFFER_BYTES - WRITTEN_BYTES);
  for (size_t i = 0; i < WRITTEN_BYTES; ++i)
    if (buffer[i] != (unsigned char)(i * 131u + 7u)) fail_msg("byte %zu changed", i);
  for (size_t i = WRITTEN_BYTES; i < BUFFER_BYTES; ++i)
    if (buffer[i] != 0) fail_msg("byte %zu of a page never written is %d", i, buffer[i]);
  free(buffer);
}

/* An odd size and a start inside a page: the last byte's page made resident too. */
static void test_fault_in_odd_size(void **state) {
  (void)state;
  unsigned char *buffer = rtm_mem_host_large(4 * HUGE_PAGE);
  assert_non_null(buffer);
  unsigned char *start = buffer + 3;
  const size_t bytes = 4 * (size_t)HUGE_PAGE - 3;
  start[bytes - 1] = 42;
  const size_t before = resident_bytes();
  rtm_mem_host_fault_in(start, bytes);
  if (resident_bytes() - before < 2 * (size_t)HUGE_PAGE)
    fail_msg("the resident set grew by %zu bytes", resident_bytes() - before);
  assert_int_equal(start[bytes - 1], 42);
  assert_int_equal(start[0], 0);
  rtm_mem_host_fault_in(start, 0); /* nothing to do */
  free(buffer);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fault_in_keeps_contents),
      cmocka_unit_test(test_fault_in_odd_size),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
