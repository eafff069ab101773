/* Backend registry: a new backend is its header (rtm_backend_<name>.h) and one entry in the
 * list. */
#include <string.h>

#include "rtm_solver.h"
#include "rtm_status.h"
#ifdef RTM3D_HAVE_CUDA_BACKEND
#include "rtm_backend_cuda.h"
#endif

/* Preference order for "auto": the first whose probe passes. */
static const rtm_backend_t *const registry[] = {
#ifdef RTM3D_HAVE_CUDA_BACKEND
    &rtm_backend_cuda,
#endif
    &rtm_backend_cpu,
};

enum { REGISTRY_COUNT = (int)(sizeof registry / sizeof registry[0]) };

const char *rtm_backend_known_names(void) {
#ifdef RTM3D_HAVE_CUDA_BACKEND
  return "auto, cuda, cpu";
#else
  return "auto, cpu (this build has no cuda backend)";
#endif
}

int rtm_backend_select(const char *name, const rtm_backend_t **backend) {
  static int skip_said; /* a run that selects more than once (a migration) says it once */
  char why[256];
  *backend = NULL;
  if (!name) name = "";
  if (strcmp(name, "auto") == 0) {
    const int quiet = skip_said;
    for (int i = 0; i < REGISTRY_COUNT; ++i) {
      why[0] = '\0';
      if (!registry[i]->probe || registry[i]->probe(why, sizeof why) == RTM_OK) {
        *backend = registry[i];
        return RTM_OK;
      }
      if (!quiet) rtm_log_info("backend.name = auto: skipping %s (%s)", registry[i]->name, why);
      skip_said = 1;
    }
    rtm_log_error("backend.name = auto: no backend can run here");
    return RTM_ERR_UNSUPPORTED;
  }
  for (int i = 0; i < REGISTRY_COUNT; ++i) {
    if (strcmp(registry[i]->name, name) != 0) continue;
    why[0] = '\0';
    if (registry[i]->probe && registry[i]->probe(why, sizeof why) != RTM_OK) {
      /* every backend but cpu runs on a GPU: say what runs without one */
      rtm_log_error("backend.name = %s cannot run here: %s; backend.name = cpu (or auto) runs on "
                    "this machine's CPU, or run on a machine with an NVIDIA GPU",
                    name, why);
      return RTM_ERR_UNSUPPORTED;
    }
    *backend = registry[i];
    return RTM_OK;
  }
#ifndef RTM3D_HAVE_CUDA_BACKEND
  if (strcmp(name, "cuda") == 0) {
    rtm_log_error("backend.name = cuda: this build has no cuda backend (configure with "
                  "RTM3D_ENABLE_CUDA=ON on a machine with nvcc)");
    return RTM_ERR_UNSUPPORTED;
  }
#endif
  rtm_log_error("backend.name = '%s' is unknown (known: %s)", name, rtm_backend_known_names());
  return RTM_ERR_CONFIG;
}

int rtm_backend_device(const rtm_config_t *cfg, const struct rtm_mpi *mpi, int *device) {
  const rtm_backend_t *backend = NULL;
  *device = -1;
  const int status = rtm_backend_select(cfg->backend.name, &backend);
  if (status != RTM_OK) return status;
#ifdef RTM3D_HAVE_CUDA_BACKEND
  if (backend == &rtm_backend_cuda) return rtm_cuda_rank_device(cfg->backend.device, mpi, device);
#else
  (void)mpi;
#endif
  return RTM_OK;
}

int rtm_backend_images_in_step(const rtm_config_t *cfg) {
  const rtm_backend_t *backend = NULL;
  if (rtm_backend_select(cfg->backend.name, &backend) != RTM_OK) return 0;
  return (backend->images_in_step >> cfg->physics.equation) & 1u;
}
