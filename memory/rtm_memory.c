/* rtm_memory.c - the registry of memory strategies (host and, with CUDA, device, vmm,
 * vmm-compressed, managed and pinned), allocation through a named strategy, and the ledger
 * of what each field got. */
#include "rtm_memory.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtm_status.h"

#ifdef RTM3D_HAVE_CUDA
#include "mem_cuda_impl.h"
#endif

/* The registry: a new strategy is one line here. */
static const rtm_mem_strategy_t *const registry[] = {
    &rtm_mem_host,
#ifdef RTM3D_HAVE_CUDA
    &rtm_mem_device, &rtm_mem_vmm, &rtm_mem_vmm_compressed, &rtm_mem_managed, &rtm_mem_pinned,
#endif
};

enum { REGISTRY_COUNT = (int)(sizeof registry / sizeof registry[0]) };

int rtm_mem_count(void) {
  return REGISTRY_COUNT;
}

const rtm_mem_strategy_t *rtm_mem_at(int index) {
  return index >= 0 && index < REGISTRY_COUNT ? registry[index] : NULL;
}

const rtm_mem_strategy_t *rtm_mem_find(const char *name) {
  for (int i = 0; i < REGISTRY_COUNT; ++i)
    if (name && strcmp(registry[i]->name, name) == 0) return registry[i];
  return NULL;
}

const char *rtm_mem_known_names(void) {
#ifdef RTM3D_HAVE_CUDA
  return "host, device, vmm, vmm-compressed, managed, pinned";
#else
  return "host (this build has no CUDA: device, vmm, vmm-compressed, managed and pinned are "
         "absent)";
#endif
}

void rtm_mem_ledger_init(rtm_mem_ledger_t *ledger) {
  memset(ledger, 0, sizeof *ledger);
}

void rtm_mem_ledger_release(rtm_mem_ledger_t *ledger) {
  free(ledger->records);
  memset(ledger, 0, sizeof *ledger);
}

static int ledger_add(rtm_mem_ledger_t *ledger, const rtm_allocation_t *a) {
  if (ledger->count == ledger->capacity) {
    int capacity = ledger->capacity ? 2 * ledger->capacity : 16;
    rtm_mem_record_t *grown = realloc(ledger->records, (size_t)capacity * sizeof *grown);
    if (!grown) return RTM_ERR_NOMEM;
    ledger->records = grown;
    ledger->capacity = capacity;
  }
  rtm_mem_record_t *r = &ledger->records[ledger->count++];
  snprintf(r->label, sizeof r->label, "%s", a->label);
  r->strategy = a->strategy->name;
  r->bytes = a->bytes;
  r->reserved_bytes = a->reserved_bytes;
  r->compressed = a->compressed;
  ledger->total_bytes += a->reserved_bytes;
  return RTM_OK;
}

int rtm_mem_alloc(const char *strategy_name, size_t bytes, const char *label,
                  const rtm_mem_request_t *request, rtm_mem_ledger_t *ledger,
                  rtm_allocation_t *out) {
  static const rtm_mem_request_t host_request = {-1, 0};
  int status = RTM_OK;
  memset(out, 0, sizeof *out);
  const rtm_mem_strategy_t *strategy = rtm_mem_find(strategy_name);
  if (!strategy)
    RTM_FAIL(RTM_ERR_CONFIG, "unknown memory strategy '%s' (known: %s)", strategy_name,
             rtm_mem_known_names());
  if (!request) request = &host_request;
  char why[256] = "";
  if (strategy->probe && strategy->probe(request->device, why, sizeof why) != RTM_OK)
    RTM_FAIL(RTM_ERR_UNSUPPORTED, "memory strategy '%s' cannot serve '%s': %s", strategy->name,
             label, why);
  snprintf(out->label, sizeof out->label, "%s", label);
  out->strategy = strategy;
  RTM_TRY(strategy->alloc(bytes, request, out));
  out->strategy = strategy;
  if (ledger && ledger_add(ledger, out) != RTM_OK) {
    rtm_mem_free(out);
    RTM_FAIL(RTM_ERR_NOMEM, "out of host memory recording allocation '%s'", label);
  }
  return RTM_OK;
fail:
  return status;
}

void rtm_mem_fill_allocation(rtm_allocation_t *out, void *ptr, size_t bytes, size_t reserved_bytes,
                             int on_device, int device) {
  out->ptr = ptr;
  out->bytes = bytes;
  out->reserved_bytes = reserved_bytes;
  out->on_device = on_device;
  out->device = device;
}

void rtm_mem_free(rtm_allocation_t *allocation) {
  if (allocation && allocation->strategy && allocation->ptr) allocation->strategy->free(allocation);
  if (allocation) allocation->ptr = NULL;
}

void rtm_mem_borrow(rtm_allocation_t *to, const rtm_allocation_t *from) {
  *to = *from;
  to->strategy = NULL;
}

int rtm_mem_prefetch(const rtm_allocation_t *allocation, void *cuda_stream) {
  if (!allocation->strategy || !allocation->strategy->prefetch) return RTM_OK; /* a view */
  return allocation->strategy->prefetch(allocation, cuda_stream);
}

#ifndef RTM3D_HAVE_CUDA
int rtm_mem_host_pin(void *ptr, size_t bytes, const char *label) {
  (void)ptr;
  (void)bytes;
  (void)label;
  return RTM_OK;
}

int rtm_mem_host_try_pin(void *ptr, size_t bytes) {
  (void)ptr;
  (void)bytes;
  return RTM_OK;
}

void rtm_mem_host_unpin(void *ptr) {
  (void)ptr;
}

int rtm_mem_device_free_bytes(int device, size_t *free_bytes) {
  *free_bytes = 0;
  rtm_log_error("device %d: this build has no CUDA", device);
  return RTM_ERR_UNSUPPORTED;
}
#endif
