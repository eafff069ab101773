/* rtm_solver.h - the backend registry, and the way into the solver's sub-folders.
 *
 * Backends (cpu reference, cuda) implement rtm_backend_t (rtm_backend.h), a const table
 * looked up here by name. The sub-folders, lowest first; a file includes headers of its own
 * sub-folder or lower ones only (tests/layering/check_layering.cmake):
 *   grid/     the grid every sub-folder shares (rtm_grid.h), binary16 on the host
 *   tuning/   kernel.* = auto: the table of measured winners, the tune cache
 *   mpi/      the z-slab decomposition and every MPI call (rtm_mpi.h)
 *   physics/  the equations, the medium, stability, the absorbing layer
 *   points/   sources and receivers: trilinear taps, the acquisition geometry
 *   traces/   the trace pipeline (FFTW reference, cuFFT + CUB under a CUDA graph)
 *   backend/  the backend interface (rtm_backend.h)
 *   cpu/      the cpu reference backend;  cuda/  the z-marching kernels and the cuda backend
 *   .         this registry (backend.c) and one shot's propagator (rtm_propagator.h)
 *   rtm/      reverse-time migration: imaging, snapshots, the migration driver */
#ifndef RTM_SOLVER_H
#define RTM_SOLVER_H

#include "rtm_backend.h"
#include "rtm_backend_cpu.h"
#include "rtm_config.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Registry lookup: "cpu", "cuda", or "auto" (cuda when its probe passes, else cpu).
 * Unknown names list the known ones; a backend that cannot run says why. */
int rtm_backend_select(const char *name, const rtm_backend_t **backend);
const char *rtm_backend_known_names(void);
/* The CUDA device this process computes on for cfg, -1 when its backend is not cuda (auto
 * that resolves to cpu included): backend.device, and under MPI the ranks of a node take the
 * node's GPUs in turn from it, (backend.device + rank on the node) mod the GPU count. The
 * cuda backend places everything there and leaves it the current device; the migration's
 * preflight measures its free memory. `mpi`: the ranks of the run (rtm_mpi.h; NULL: one). */
int rtm_backend_device(const rtm_config_t *cfg, const struct rtm_mpi *mpi, int *device);
/* Whether cfg's backend steps can take the imaging condition of cfg's equation in their own
 * kernels (rtm_backend_t's images_in_step); 0 when no backend can run. */
int rtm_backend_images_in_step(const rtm_config_t *cfg);

#ifdef __cplusplus
}
#endif

#endif
