/* Forwarders for the CUDA driver API functions rtm3d calls (see rtm_cuda_driver.h). Each
 * looks its target up through the runtime on every call: these are set-up calls
 * (allocation, tensor maps, queries), never in a time loop, and no state is kept.
 * Also the device count with the reason when there is none (no driver, no GPU, an old
 * driver), told apart by the driver's version. */
#include "rtm_cuda_driver.h"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

#include "rtm_status.h"

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

/* The runtime reports a missing driver as cudaErrorInsufficientDriver ("CUDA driver version
 * is insufficient for CUDA runtime version"), which reads as "upgrade your driver" on a
 * machine that has no GPU at all. The driver's version tells the two apart: 0 when no
 * libcuda could be loaded. A loaded kernel module shows /proc/driver/nvidia/version. */
static int driver_module_loaded(void) {
  FILE *version = fopen("/proc/driver/nvidia/version", "r");
  if (version) fclose(version);
  return version != NULL;
}

int rtm_cuda_device_count(int *count, char *why, size_t why_size) {
  int driver = 0, runtime = 0;
  *count = 0;
  const cudaError_t err = cudaGetDeviceCount(count);
  if (err == cudaSuccess && *count > 0) return RTM_OK;
  *count = 0;
  (void)cudaGetLastError(); /* the probe's failure is reported here, not by the next call */
  if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = 0;
  if (cudaRuntimeGetVersion(&runtime) != cudaSuccess) runtime = 0;
  const char *visible = getenv("CUDA_VISIBLE_DEVICES");
  char visible_text[4 * 64] = "";
  if (visible) rtm_escape_text(visible, visible_text, sizeof visible_text); /* the environment's */
  if (driver == 0)
    snprintf(why, why_size, "no NVIDIA GPU driver is loaded on this machine");
  else if (err == cudaErrorInsufficientDriver)
    snprintf(why, why_size,
             "the NVIDIA driver supports CUDA %d.%d, older than this build's CUDA runtime %d.%d: "
             "update the driver, or build with a CUDA toolkit of at most %d.%d",
             driver / 1000, driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10, driver / 1000,
             driver % 1000 / 10);
  else if (err == cudaErrorNoDevice || err == cudaSuccess)
    snprintf(why, why_size, "the NVIDIA driver sees no GPU%s%s%s",
             visible ? " (CUDA_VISIBLE_DEVICES='" : "", visible_text, visible ? "')" : "");
  else if (!driver_module_loaded())
    snprintf(why, why_size, "no NVIDIA GPU driver is loaded on this machine (%s)",
             cudaGetErrorName(err));
  else
    snprintf(why, why_size, "CUDA cannot use a GPU here: %s (%s)", cudaGetErrorName(err),
             cudaGetErrorString(err));
  return RTM_ERR_UNSUPPORTED;
}

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
