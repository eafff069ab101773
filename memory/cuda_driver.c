/* Forwarders for the CUDA driver API functions rtm3d calls (see rtm_cuda_driver.h). Each
 * looks its target up through the runtime on every call: these are set-up calls
 * (allocation, tensor maps, queries), never in a time loop, and no state is kept. */
#include "rtm_cuda_driver.h"

#include <cuda.h>
#include <cuda_runtime_api.h>

/* The driver ABI version the prototypes below follow. */
enum { RTM_DRIVER_ABI = 12000 };

static void *driver_symbol(const char *name) {
  void *fn = NULL;
  enum cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  if (cudaGetDriverEntryPointByVersion(name, &fn, RTM_DRIVER_ABI, cudaEnableDefault, &found) !=
          cudaSuccess ||
      found != cudaDriverEntryPointSuccess)
    return NULL;
  return fn;
}

int rtm_cuda_driver_has(const char *symbol) { return driver_symbol(symbol) != NULL; }

#define RTM_DRIVER_FORWARD(name, params, args)                                                 \
  CUresult CUDAAPI name params {                                                               \
    CUresult(CUDAAPI * fn) params = (CUresult(CUDAAPI *) params)driver_symbol(#name);          \
    return fn ? fn args : CUDA_ERROR_NOT_FOUND;                                                 \
  }

CUresult CUDAAPI cuGetErrorName(CUresult error, const char **text) {
  CUresult(CUDAAPI * fn)(CUresult, const char **) =
      (CUresult(CUDAAPI *)(CUresult, const char **))driver_symbol("cuGetErrorName");
  if (fn) return fn(error, text);
  *text = "CUDA_ERROR (driver unavailable)";
  return CUDA_ERROR_NOT_FOUND;
}

RTM_DRIVER_FORWARD(cuInit, (unsigned int flags), (flags))
RTM_DRIVER_FORWARD(cuDeviceGet, (CUdevice * device, int ordinal), (device, ordinal))
RTM_DRIVER_FORWARD(cuDeviceGetAttribute, (int *value, CUdevice_attribute attribute, CUdevice device),
                   (value, attribute, device))
RTM_DRIVER_FORWARD(cuMemCreate,
                   (CUmemGenericAllocationHandle * handle, size_t size,
                    const CUmemAllocationProp *prop, unsigned long long flags),
                   (handle, size, prop, flags))
RTM_DRIVER_FORWARD(cuMemRelease, (CUmemGenericAllocationHandle handle), (handle))
RTM_DRIVER_FORWARD(cuMemAddressReserve,
                   (CUdeviceptr * ptr, size_t size, size_t alignment, CUdeviceptr addr,
                    unsigned long long flags),
                   (ptr, size, alignment, addr, flags))
RTM_DRIVER_FORWARD(cuMemAddressFree, (CUdeviceptr ptr, size_t size), (ptr, size))
RTM_DRIVER_FORWARD(cuMemMap,
                   (CUdeviceptr ptr, size_t size, size_t offset,
                    CUmemGenericAllocationHandle handle, unsigned long long flags),
                   (ptr, size, offset, handle, flags))
RTM_DRIVER_FORWARD(cuMemUnmap, (CUdeviceptr ptr, size_t size), (ptr, size))
RTM_DRIVER_FORWARD(cuMemSetAccess,
                   (CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count),
                   (ptr, size, desc, count))
RTM_DRIVER_FORWARD(cuMemGetAllocationGranularity,
                   (size_t *granularity, const CUmemAllocationProp *prop,
                    CUmemAllocationGranularity_flags option),
                   (granularity, prop, option))
RTM_DRIVER_FORWARD(cuMemGetAllocationPropertiesFromHandle,
                   (CUmemAllocationProp * prop, CUmemGenericAllocationHandle handle),
                   (prop, handle))
RTM_DRIVER_FORWARD(cuTensorMapEncodeTiled,
                   (CUtensorMap * tensor_map, CUtensorMapDataType data_type, cuuint32_t rank,
                    void *global_address, const cuuint64_t *global_dim,
                    const cuuint64_t *global_strides, const cuuint32_t *box_dim,
                    const cuuint32_t *element_strides, CUtensorMapInterleave interleave,
                    CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2_promotion,
                    CUtensorMapFloatOOBfill oob_fill),
                   (tensor_map, data_type, rank, global_address, global_dim, global_strides,
                    box_dim, element_strides, interleave, swizzle, l2_promotion, oob_fill))
