/* Strategies `device`, `vmm`, `vmm-compressed` and `managed` (docs/design.md "Memory strategies").
 *
 * device          cudaMalloc.
 * vmm             driver VMM: cuMemCreate + cuMemAddressReserve + cuMemMap + cuMemSetAccess,
 *                 the size rounded up to the allocation granularity.
 * vmm-compressed  as vmm with CU_MEM_ALLOCATION_COMP_GENERIC. The driver may grant or refuse
 *                 compression; the granted properties are read back from the handle and
 *                 recorded. A refusal is an error only when the request requires compression.
 * managed         cudaMallocManaged, preferred location on the device, prefetched there.
 *
 * Every allocation is zero-filled, like the host strategy, so that padding and halo cells
 * read as zero whatever strategy holds the field.
 *
 * Driver functions are rtm_cuda_driver.h's forwarders (no libcuda at link time). */
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "mem_cuda_impl.h"
#include "rtm_cuda_check.h"
#include "rtm_cuda_driver.h"
#include "rtm_memory.h"
#include "rtm_status.h"

/* Makes `device` current and its primary context live, so that driver calls that follow
 * act on the same context as the runtime. */
static int use_device(int device) {
  int status = RTM_OK;
  RTM_CUDA_TRY(cudaSetDevice(device));
  RTM_CUDA_TRY(cudaFree(NULL));
  return RTM_OK;
fail:
  return status;
}

static int probe_device(int device, char *why, size_t why_size) {
  int count = 0;
  if (rtm_cuda_device_count(&count, why, why_size) != RTM_OK) return RTM_ERR_UNSUPPORTED;
  if (device < 0 || device >= count) {
    snprintf(why, why_size, "device %d does not exist (this machine has %d)", device, count);
    return RTM_ERR_UNSUPPORTED;
  }
  return RTM_OK;
}

static int driver_attribute(CUdevice_attribute attribute, int device, int *value) {
  int status = RTM_OK;
  CUdevice cu_device;
  RTM_TRY(use_device(device));
  RTM_CU_TRY(cuDeviceGet(&cu_device, device));
  RTM_CU_TRY(cuDeviceGetAttribute(value, attribute, cu_device));
  return RTM_OK;
fail:
  return status;
}

/* The probe of a strategy that needs a feature of the device: the device exists and `ask`
 * (RTM_OK when it could ask) says it has the feature. */
static int probe_feature(int device, int (*ask)(int device, int *supported), const char *feature,
                         char *why, size_t why_size) {
  int supported = 0;
  if (probe_device(device, why, why_size) != RTM_OK) return RTM_ERR_UNSUPPORTED;
  if (ask(device, &supported) != RTM_OK) {
    snprintf(why, why_size, "the driver could not be asked about %s", feature);
    return RTM_ERR_DEVICE;
  }
  if (!supported) {
    snprintf(why, why_size, "device %d does not support %s", device, feature);
    return RTM_ERR_UNSUPPORTED;
  }
  return RTM_OK;
}

/* ---- device ---- */

static int device_alloc(size_t bytes, const rtm_mem_request_t *request, rtm_allocation_t *out) {
  int status = RTM_OK;
  void *ptr = NULL;
  RTM_TRY(use_device(request->device));
  RTM_CUDA_TRY(cudaMalloc(&ptr, bytes ? bytes : 1));
  RTM_CUDA_TRY(cudaMemset(ptr, 0, bytes));
  rtm_mem_fill_allocation(out, ptr, bytes, bytes, 1, request->device);
  return RTM_OK;
fail:
  if (ptr) cudaFree(ptr);
  if (status == RTM_ERR_NOMEM)
    rtm_log_error("device: %zu bytes for '%s' do not fit on device %d", bytes, out->label,
                  request->device);
  return status;
}

static void device_free(rtm_allocation_t *allocation) {
  cudaFree(allocation->ptr);
}

const rtm_mem_strategy_t rtm_mem_device = {
    .name = "device",
    .description = "cudaMalloc in device memory",
    .probe = probe_device,
    .alloc = device_alloc,
    .free = device_free,
    .prefetch = NULL,
};

/* ---- vmm and vmm-compressed ---- */

static int ask_vmm(int device, int *supported) {
  return driver_attribute(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, device,
                          supported);
}

static int probe_vmm(int device, char *why, size_t why_size) {
  return probe_feature(device, ask_vmm, "virtual memory management", why, why_size);
}

static void vmm_properties(int device, int compressed, CUmemAllocationProp *prop) {
  memset(prop, 0, sizeof *prop);
  prop->type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop->location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop->location.id = device;
  prop->allocFlags.compressionType = compressed ? CU_MEM_ALLOCATION_COMP_GENERIC : 0;
}

/* Reserves, creates, maps and opens a range; `want_compression` asks for generic
 * compression and `granted` says whether the handle's properties carry it. */
static int vmm_map(size_t bytes, int device, int want_compression, rtm_allocation_t *out,
                   int *granted) {
  int status = RTM_OK;
  CUmemAllocationProp prop;
  CUmemGenericAllocationHandle handle = 0;
  CUdeviceptr ptr = 0;
  size_t granularity = 0, size = 0;
  int created = 0, mapped = 0;
  CUmemAccessDesc access;
  CUmemAllocationProp got;
  memset(&access, 0, sizeof access);
  memset(&got, 0, sizeof got);
  vmm_properties(device, want_compression, &prop);
  RTM_CU_TRY(
      cuMemGetAllocationGranularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
  size = (bytes + granularity - 1) / granularity * granularity;
  if (size == 0) size = granularity;
  RTM_CU_TRY(cuMemAddressReserve(&ptr, size, granularity, 0, 0));
  RTM_CU_TRY(cuMemCreate(&handle, size, &prop, 0));
  created = 1;
  RTM_CU_TRY(cuMemMap(ptr, size, 0, handle, 0));
  mapped = 1;
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = device;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  RTM_CU_TRY(cuMemSetAccess(ptr, size, &access, 1));
  RTM_CU_TRY(cuMemGetAllocationPropertiesFromHandle(&got, handle));
  *granted = got.allocFlags.compressionType == CU_MEM_ALLOCATION_COMP_GENERIC;
  RTM_CUDA_TRY(cudaMemset((void *)(uintptr_t)ptr, 0, size));
  rtm_mem_fill_allocation(out, (void *)(uintptr_t)ptr, bytes, size, 1, device);
  out->handle = (unsigned long long)handle;
  return RTM_OK;
fail:
  if (mapped) cuMemUnmap(ptr, size);
  if (created) cuMemRelease(handle);
  if (ptr) cuMemAddressFree(ptr, size);
  return status;
}

static void vmm_free(rtm_allocation_t *allocation) {
  CUdeviceptr ptr = (CUdeviceptr)(uintptr_t)allocation->ptr;
  cuMemUnmap(ptr, allocation->reserved_bytes);
  cuMemRelease((CUmemGenericAllocationHandle)allocation->handle);
  cuMemAddressFree(ptr, allocation->reserved_bytes);
}

static int vmm_alloc(size_t bytes, const rtm_mem_request_t *request, rtm_allocation_t *out) {
  int status = RTM_OK, granted = 0;
  RTM_TRY(use_device(request->device));
  RTM_TRY(vmm_map(bytes, request->device, 0, out, &granted));
  out->compressed = 0;
  return RTM_OK;
fail:
  return status;
}

static int probe_compressed(int device, char *why, size_t why_size) {
  /* Compression itself is decided per allocation (require_compression); the strategy
   * needs VMM to exist at all. */
  return probe_vmm(device, why, why_size);
}

static int compressed_alloc(size_t bytes, const rtm_mem_request_t *request, rtm_allocation_t *out) {
  int status = RTM_OK, supported = 0, granted = 0;
  RTM_TRY(use_device(request->device));
  RTM_TRY(driver_attribute(CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED, request->device,
                           &supported));
  if (!supported) {
    if (request->require_compression)
      RTM_FAIL(RTM_ERR_UNSUPPORTED,
               "vmm-compressed: device %d does not support generic compression and "
               "memory.require_compression = true ('%s')",
               request->device, out->label);
    rtm_log_warning("vmm-compressed: device %d has no generic compression; '%s' is plain VMM",
                    request->device, out->label);
    RTM_TRY(vmm_map(bytes, request->device, 0, out, &granted));
    out->compressed = 0;
    return RTM_OK;
  }
  RTM_TRY(vmm_map(bytes, request->device, 1, out, &granted));
  if (!granted) {
    if (request->require_compression) {
      vmm_free(out);
      RTM_FAIL(RTM_ERR_UNSUPPORTED,
               "vmm-compressed: the driver refused compression for '%s' (%zu bytes) and "
               "memory.require_compression = true",
               out->label, bytes);
    }
    rtm_log_warning("vmm-compressed: the driver did not grant compression for '%s'", out->label);
  }
  out->compressed = granted;
  return RTM_OK;
fail:
  out->ptr = NULL;
  return status;
}

const rtm_mem_strategy_t rtm_mem_vmm = {
    .name = "vmm",
    .description = "driver virtual memory: cuMemCreate + cuMemMap, granularity-rounded",
    .probe = probe_vmm,
    .alloc = vmm_alloc,
    .free = vmm_free,
    .prefetch = NULL,
};

const rtm_mem_strategy_t rtm_mem_vmm_compressed = {
    .name = "vmm-compressed",
    .description =
        "driver virtual memory with generic compression (CU_MEM_ALLOCATION_COMP_GENERIC)",
    .probe = probe_compressed,
    .alloc = compressed_alloc,
    .free = vmm_free,
    .prefetch = NULL,
};

/* ---- managed ---- */

/* A runtime that cannot answer is taken as a no. */
static int ask_managed(int device, int *supported) {
  if (cudaDeviceGetAttribute(supported, cudaDevAttrManagedMemory, device) != cudaSuccess)
    *supported = 0;
  return RTM_OK;
}

static int probe_managed(int device, char *why, size_t why_size) {
  return probe_feature(device, ask_managed, "managed memory", why, why_size);
}

static int managed_alloc(size_t bytes, const rtm_mem_request_t *request, rtm_allocation_t *out) {
  int status = RTM_OK;
  void *ptr = NULL;
  size_t free_bytes = 0, total_bytes = 0;
  RTM_TRY(use_device(request->device));
  /* Oversubscribed managed memory thrashes (and can stall the whole GPU): refuse what the
   * device cannot hold instead of letting the driver page it. */
  RTM_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (bytes > free_bytes)
    RTM_FAIL(RTM_ERR_NOMEM, "managed: %zu bytes for '%s' exceed the %zu bytes free on device %d",
             bytes, out->label, free_bytes, request->device);
  RTM_CUDA_TRY(cudaMallocManaged(&ptr, bytes ? bytes : 1, cudaMemAttachGlobal));
  struct cudaMemLocation location = {.type = cudaMemLocationTypeDevice, .id = request->device};
  RTM_CUDA_TRY(cudaMemAdvise(ptr, bytes, cudaMemAdviseSetPreferredLocation, location));
  RTM_CUDA_TRY(cudaMemPrefetchAsync(ptr, bytes, location, 0, 0));
  RTM_CUDA_TRY(cudaMemset(ptr, 0, bytes));
  RTM_CUDA_TRY(cudaDeviceSynchronize());
  rtm_mem_fill_allocation(out, ptr, bytes, bytes, 1, request->device);
  return RTM_OK;
fail:
  if (ptr) cudaFree(ptr);
  return status;
}

static int managed_prefetch(const rtm_allocation_t *allocation, void *cuda_stream) {
  int status = RTM_OK;
  struct cudaMemLocation location = {.type = cudaMemLocationTypeDevice, .id = allocation->device};
  RTM_CUDA_TRY(cudaMemPrefetchAsync(allocation->ptr, allocation->bytes, location, 0,
                                    (cudaStream_t)cuda_stream));
  return RTM_OK;
fail:
  return status;
}

const rtm_mem_strategy_t rtm_mem_managed = {
    .name = "managed",
    .description = "cudaMallocManaged, preferred location on the device, prefetched",
    .probe = probe_managed,
    .alloc = managed_alloc,
    .free = device_free,
    .prefetch = managed_prefetch,
};

/* ---- pinned: page-locked host memory, the staging side of asynchronous copies ----
 *
 * A large one (a store of snapshots or shells: tens of GB) is an anonymous mapping on huge
 * pages, zero as the kernel gives it, faulted in over the cores and then registered: on one
 * H200's host 8 GB took 1.1 s so against 5.7 s through cudaHostAlloc, which faults and zeroes
 * every page on one thread while it holds the driver, and the memset after it
 * (run/experiments/pin_speed.sh); its release 0.16 s against 0.77. Small ones, and a large
 * one the mapping or the registration refuses, come from cudaHostAlloc. handle: PINNED_MAPPED
 * for the first kind. */
enum { PINNED_MAPPED = 1 };

static int pinned_map(size_t bytes, const rtm_mem_request_t *request, rtm_allocation_t *out) {
  size_t mapped = 0;
  void *ptr = rtm_mem_host_map_zeroed(bytes, &mapped);
  if (!ptr) return RTM_ERR_NOMEM;
  rtm_mem_host_fault_in(ptr, mapped);
  if (cudaHostRegister(ptr, mapped, cudaHostRegisterPortable) != cudaSuccess) {
    (void)cudaGetLastError(); /* not sticky: cudaHostAlloc is asked next */
    rtm_mem_host_unmap(ptr, mapped);
    return RTM_ERR_NOMEM;
  }
  rtm_mem_fill_allocation(out, ptr, bytes, mapped, 0, request->device);
  out->handle = PINNED_MAPPED;
  return RTM_OK;
}

static int pinned_alloc(size_t bytes, const rtm_mem_request_t *request, rtm_allocation_t *out) {
  int status = RTM_OK;
  void *ptr = NULL;
  if (bytes >= RTM_MEM_PINNED_MAP_MIN && pinned_map(bytes, request, out) == RTM_OK) return RTM_OK;
  /* as much as a mapping would have taken, which the preflight counts */
  const size_t taken = bytes >= RTM_MEM_PINNED_MAP_MIN ? rtm_mem_host_map_bytes(bytes) : bytes;
  RTM_CUDA_TRY(cudaHostAlloc(&ptr, taken ? taken : 1, cudaHostAllocDefault));
  memset(ptr, 0, taken);
  rtm_mem_fill_allocation(out, ptr, bytes, taken, 0, request->device);
  return RTM_OK;
fail:
  if (status == RTM_ERR_NOMEM)
    rtm_log_error("pinned: %zu bytes of page-locked host memory for '%s' are not available", bytes,
                  out->label);
  return status;
}

static void pinned_free(rtm_allocation_t *allocation) {
  if (allocation->handle != PINNED_MAPPED) {
    cudaFreeHost(allocation->ptr);
    return;
  }
  cudaHostUnregister(allocation->ptr);
  rtm_mem_host_unmap(allocation->ptr, allocation->reserved_bytes);
}

const rtm_mem_strategy_t rtm_mem_pinned = {
    .name = "pinned",
    .description = "page-locked host memory for asynchronous copies (from 2 MiB mapped on huge "
                   "pages and registered, else cudaHostAlloc)",
    .probe = probe_device,
    .alloc = pinned_alloc,
    .free = pinned_free,
    .prefetch = NULL,
};

int rtm_mem_host_try_pin(void *ptr, size_t bytes) {
  /* faulted in first, outside the driver: cudaHostRegister would fault each page in while
   * it holds the driver, and every other thread's CUDA call would wait that long */
  rtm_mem_host_fault_in(ptr, bytes);
  if (cudaHostRegister(ptr, bytes, cudaHostRegisterPortable) == cudaSuccess) return RTM_OK;
  (void)cudaGetLastError(); /* not sticky: cleared for the calls that follow */
  return RTM_ERR_NOMEM;
}

int rtm_mem_host_pin(void *ptr, size_t bytes, const char *label) {
  const int status = rtm_mem_host_try_pin(ptr, bytes);
  if (status != RTM_OK)
    rtm_log_error("pinned: %zu bytes of host memory for '%s' could not be page-locked", bytes,
                  label);
  return status;
}

void rtm_mem_host_unpin(void *ptr) {
  cudaHostUnregister(ptr);
}

int rtm_mem_device_free_bytes(int device, size_t *free_bytes) {
  int status = RTM_OK;
  size_t total_bytes = 0;
  *free_bytes = 0;
  RTM_TRY(use_device(device));
  RTM_CUDA_TRY(cudaMemGetInfo(free_bytes, &total_bytes));
fail:
  return status;
}
