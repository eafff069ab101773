#define _POSIX_C_SOURCE 200809L
/* The memory side of the imaging stores (imaging_impl.h): which strategy, how many bytes it
 * takes, the request that names the device, how much is free. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "imaging_cuda.h"
#include "imaging_impl.h"

enum {
  HOST_ALIGNMENT = 4096 /* mem_host.c rounds every allocation up to a page */
};
static const size_t vmm_granule = (size_t)2 << 20;

const char *rtm_imaging_strategy(const char *strategy, int device) {
  if (!strategy || !strategy[0] || strcmp(strategy, "auto") == 0)
    return device < 0 ? "host" : "device";
  return strategy;
}

int rtm_imaging_host_strategy(const char *strategy) {
  return strcmp(strategy, "host") == 0 || strcmp(strategy, "pinned") == 0;
}

size_t rtm_imaging_taken_bytes(const char *strategy, size_t bytes) {
  if (strcmp(strategy, "host") == 0)
    return (bytes ? (bytes + HOST_ALIGNMENT - 1) / HOST_ALIGNMENT : 1) * HOST_ALIGNMENT;
  if (strncmp(strategy, "vmm", 3) == 0)
    return (bytes ? (bytes + vmm_granule - 1) / vmm_granule : 1) * vmm_granule;
  if (strcmp(strategy, "pinned") == 0 && bytes >= RTM_MEM_PINNED_MAP_MIN)
    return rtm_mem_host_map_bytes(bytes); /* mapped whole huge pages (mem_cuda.c) */
  return bytes;
}

int rtm_imaging_alloc(const char *strategy, size_t bytes, const char *label, int device,
                      rtm_mem_ledger_t *ledger, rtm_allocation_t *out) {
  /* The cuda backend's request (backend_cuda_common.c) less require_compression, which is
   * the wavefields' setting: a store that is refused compression stays a plain vmm one. */
  const rtm_mem_request_t request = {device, 0};
  return rtm_mem_alloc(strategy, bytes, label, &request, ledger, out);
}

size_t rtm_imaging_host_free_bytes(void) {
  return rtm_mem_host_available_bytes();
}

int rtm_imaging_free_bytes(const char *strategy, int device, size_t *free_bytes) {
  if (device < 0 || rtm_imaging_host_strategy(strategy)) {
    *free_bytes = rtm_imaging_host_free_bytes();
    return RTM_OK;
  }
  return rtm_mem_device_free_bytes(device, free_bytes);
}
