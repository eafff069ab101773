/* rtm3d info: build options, backends, memory strategies and, per GPU, what the driver
 * says it supports (VMM, generic compression, TMA, clusters, shared memory). */
#include <stdio.h>
#include <string.h>

#include <H5public.h>

#include "app.h"
#include "rtm_io.h"
#include "rtm_memory.h"
#include "rtm_mpi_device.h"
#include "rtm_solver.h"
#include "rtm_status.h"
#include "rtm_version.h"

#ifdef _OPENMP
#include <omp.h>
#endif
#ifdef RTM3D_HAVE_CUDA
#include <cuda.h>
#include <cuda_runtime_api.h>

#include "rtm_cuda_driver.h"
#endif
#ifdef RTM3D_HAVE_CUDA_BACKEND
#include <unistd.h>

#include "rtm_cuda_kernel.h"
#endif

#ifdef RTM3D_HAVE_CUDA
static const char *yes_no(int flag) {
  return flag ? "yes" : "no";
}

static int driver_attribute(CUdevice device, CUdevice_attribute attribute) {
  int value = 0;
  if (cuDeviceGetAttribute(&value, attribute, device) != CUDA_SUCCESS) return 0;
  return value;
}

#ifdef RTM3D_HAVE_CUDA_BACKEND
/* What kernel.* = auto runs on GPU `d` for 512^3 grids, and where that comes from. */
static void print_kernel_choices(int d) {
  static const struct {
    rtm_equation_t equation;
    rtm_precision_t precision;
  } cases[] = {{RTM_EQUATION_ISO, RTM_PRECISION_FP32},
               {RTM_EQUATION_VTI, RTM_PRECISION_FP32},
               {RTM_EQUATION_TTI, RTM_PRECISION_FP32},
               {RTM_EQUATION_TTI, RTM_PRECISION_FP16}};
  char cache[4096], safe[4 * 4096];
  const int have_cache = rtm_kernel_cache_path(cache, sizeof cache);
  if (have_cache) rtm_escape_text(cache, safe, sizeof safe); /* a path from the environment */
  printf("  kernel.* = auto on 512^3 grids (tune cache %s%s):\n",
         have_cache ? safe : "unset: no RTM3D_CACHE_DIR, XDG_CACHE_HOME or HOME",
         have_cache && access(cache, R_OK) != 0 ? ", none yet: rtm3d tune CONFIG makes it" : "");
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    rtm_config_t cfg;
    rtm_kernel_shape_t shape;
    char text[64], why[1024];
    rtm_config_defaults(&cfg);
    cfg.physics.equation = cases[i].equation;
    cfg.grid.n[0] = cfg.grid.n[1] = cfg.grid.n[2] = 512;
    cfg.memory.model_precision = cases[i].precision;
    if (rtm_cuda_kernel_resolve(&cfg, d, &shape, why, sizeof why) != RTM_OK) continue;
    rtm_kernel_shape_text(&shape, text, sizeof text);
    /* why quotes the tune cache's mcells and tuned lines: text from a file */
    rtm_escape_text(why, safe, sizeof safe);
    printf("    %-3s %-4s  %-20s from the %s\n", rtm_equation_name(cases[i].equation),
           rtm_precision_name(cases[i].precision), text, safe);
  }
}
#endif

static void print_devices(void) {
  int count = 0;
  char why[512];
  if (rtm_cuda_device_count(&count, why, sizeof why) != RTM_OK) {
    /* not an error: info reports what this machine has */
    printf("GPUs:        none: %s\n             the cpu backend runs here (backend.name = auto "
           "picks it); bench and tune need an NVIDIA GPU\n",
           why);
    return;
  }
  int driver_version = 0, runtime_version = 0;
  cudaDriverGetVersion(&driver_version);
  cudaRuntimeGetVersion(&runtime_version);
  printf("CUDA:        driver %d.%d, runtime %d.%d\n", driver_version / 1000,
         (driver_version % 1000) / 10, runtime_version / 1000, (runtime_version % 1000) / 10);
  if (cuInit(0) != CUDA_SUCCESS) {
    printf("GPUs:        the driver API failed to initialise\n");
    return;
  }
  for (int d = 0; d < count; ++d) {
    struct cudaDeviceProp prop;
    CUdevice device;
    if (cudaGetDeviceProperties(&prop, d) != cudaSuccess || cuDeviceGet(&device, d) != CUDA_SUCCESS)
      continue;
    int cc_major = driver_attribute(device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    int cc_minor = driver_attribute(device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    /* TMA (cp.async.bulk.tensor) exists from sm_90 on; the driver must also export the
     * tensor-map encoder. */
    int has_encoder = rtm_cuda_driver_has("cuTensorMapEncodeTiled");
    printf("GPU %d:       %s, sm_%d%d, %d SMs, %.1f GiB, L2 %.0f MiB\n", d, prop.name, cc_major,
           cc_minor, prop.multiProcessorCount, prop.totalGlobalMem / (1024.0 * 1024 * 1024),
           prop.l2CacheSize / (1024.0 * 1024));
    printf(
        "  VMM (cuMemCreate/cuMemMap):     %s\n",
        yes_no(driver_attribute(device, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED)));
    printf("  generic compression:            %s\n",
           yes_no(driver_attribute(device, CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED)));
    printf("  TMA (bulk tensor copies):       %s\n", yes_no(cc_major >= 9 && has_encoder));
    printf("  thread block clusters:          %s\n",
           yes_no(driver_attribute(device, CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH)));
    printf("  managed memory:                 %s\n",
           yes_no(driver_attribute(device, CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY)));
    printf("  shared memory per block:        %zu KiB (opt-in %d KiB)\n",
           prop.sharedMemPerBlock / 1024,
           driver_attribute(device, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN) / 1024);
#ifdef RTM3D_HAVE_CUDA_BACKEND
    print_kernel_choices(d);
#endif
  }
}
#endif

int rtm_cmd_info(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      printf("usage: rtm3d info\n\nPrints the build options, the backends and memory "
             "strategies this build has, and\nwhat each GPU supports, as the driver reports it.\n");
      return 0;
    }
    rtm_log_error("info: unknown argument '%s'", argv[i]);
    return 2;
  }
  printf("rtm3d %s (%s)\n", RTM3D_VERSION, RTM3D_GIT_REVISION);
#ifdef RTM3D_HAVE_CUDA
  printf("build:       CUDA on (architectures %s)", RTM3D_CUDA_ARCHITECTURES);
#else
  printf("build:       CUDA off");
#endif
#ifdef _OPENMP
  printf(", OpenMP on (%d threads)", omp_get_max_threads());
#else
  printf(", OpenMP off");
#endif
  printf(", HDF5 %d.%d.%d (%s), SEG-Y %s, figures %s\n", H5_VERS_MAJOR, H5_VERS_MINOR,
         H5_VERS_RELEASE,
         rtm_io_parallel() ? "parallel: the ranks write their slabs collectively"
                           : "serial: rank 0 writes the ranks' slabs",
         rtm_segy_available() ? "on (segyio)" : "off (no segyio at configure time)",
         rtm_figure_available() ? "on (PLplot)" : "plain PNG (no PLplot at configure time)");
  printf("backends:    %s\n", rtm_backend_known_names());
  char link[200];
  rtm_mpi_nccl_describe(link, sizeof link);
  printf("NCCL:        %s (mpi.transport = nccl)\n", link);
  rtm_mpi_cuda_aware_describe(link, sizeof link);
  printf("CUDA-aware:  %s (mpi.transport = cuda-aware)\n", link);
  /* each strategy once; strategies unavailable for the same reason share one line */
  enum { MAX_STRATEGIES = 16 };
  char why[MAX_STRATEGIES][256];
  int usable[MAX_STRATEGIES], count = rtm_mem_count(), lines = 0;
  if (count > MAX_STRATEGIES) count = MAX_STRATEGIES;
  for (int i = 0; i < count; ++i) {
    const rtm_mem_strategy_t *s = rtm_mem_at(i);
    why[i][0] = '\0';
    usable[i] = !s->probe || s->probe(0, why[i], sizeof why[i]) == RTM_OK;
  }
  for (int i = 0; i < count; ++i) {
    int seen = 0; /* an unavailable one listed with an earlier one of the same reason */
    for (int j = 0; j < i && !usable[i]; ++j)
      seen = seen || (!usable[j] && strcmp(why[j], why[i]) == 0);
    if (seen) continue;
    printf("%s%s", lines++ ? "\n             " : "memory:      ", rtm_mem_at(i)->name);
    if (usable[i]) continue;
    for (int j = i + 1; j < count; ++j)
      if (!usable[j] && strcmp(why[j], why[i]) == 0) printf(", %s", rtm_mem_at(j)->name);
    printf(" (unavailable: %s)", why[i]);
  }
  printf("\n");
#ifdef RTM3D_HAVE_CUDA
  print_devices();
#else
  printf("GPUs:        not queried (built without CUDA)\n");
#endif
  return 0;
}
