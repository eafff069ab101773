/* The memory side of the imaging stores (imaging_impl.h): which strategy, how many bytes it
 * takes, the request that names the device. */
#include <string.h>

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
  return bytes;
}

int rtm_imaging_alloc(const char *strategy, size_t bytes, const char *label, int device,
                      rtm_mem_ledger_t *ledger, rtm_allocation_t *out) {
  /* The cuda backend's request (backend_cuda_common.c) less require_compression, which is
   * the wavefields' setting: a store that is refused compression stays a plain vmm one. */
  const rtm_mem_request_t request = {device, 0};
  return rtm_mem_alloc(strategy, bytes, label, &request, ledger, out);
}
