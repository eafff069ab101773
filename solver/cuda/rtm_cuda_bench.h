/* rtm_cuda_bench.h - measuring the cuda backend against its device (bench_cuda.c), for
 * rtm3d bench and rtm3d tune: the device's description and copy bandwidth (the roofline's
 * ceiling), the bytes a step must move per cell, the memory check before any allocation, a
 * random starting field, timed steps between CUDA events, and the figures of a time. */
#ifndef RTM_CUDA_BENCH_H
#define RTM_CUDA_BENCH_H

#include <stddef.h>

#include "rtm_backend.h"
#include "rtm_config.h"
#include "rtm_grid.h"

#ifdef __cplusplus
extern "C" {
#endif

/* "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 52 MB L2)"; hopper: compute capability >= 9.0.
 * Without a GPU, the one message of bench, bench --traces and tune: "no CUDA device: " and
 * why (rtm_cuda_device_count), then what to do. */
int rtm_bench_describe_device(int device, char *text, size_t size, int *hopper);
/* Bytes read + written per second by a large device-to-device copy (median of 10). */
int rtm_bench_copy_bandwidth(int device, double *gbs);
/* Bytes a step must move per cell at least: iso 16, vti 40 (32 fp16), tti 52 (38 fp16). */
int rtm_bench_bytes_per_cell(const rtm_config_t *cfg);
/* An estimate of the device memory the deck needs against what is free, before the model
 * is read; RTM_ERR_NOMEM with the volumes named. */
int rtm_bench_check_device_fits(const rtm_config_t *cfg, const rtm_grid_t *grid);
/* Small random values over the interior (malloc'd; NULL when out of memory). */
float *rtm_bench_random_field(const rtm_grid_t *grid);
/* `field` (the interior) into both levels of p, and of q unless `equation` is iso. */
int rtm_bench_start_from(const rtm_backend_t *backend, void *state, rtm_equation_t equation,
                         const float *field);
/* Milliseconds per step of `steps` steps numbered from `first`, between CUDA events. */
int rtm_bench_time_steps(const rtm_backend_t *backend, void *state, int first, int steps,
                         double *ms_per_step);
/* `warmup` untimed steps from step 0, then RTM_BENCH_WINDOWS windows of `steps` steps timed
 * apart: the median's milliseconds per step. */
enum { RTM_BENCH_WINDOWS = 3 };
int rtm_bench_time_windows(const rtm_backend_t *backend, void *state, int warmup, int steps,
                           double *ms_per_step);

/* Millions of cells a second: `cells` advanced a step in ms_per_step milliseconds. */
double rtm_bench_mcells(double cells, double ms_per_step);
/* The GB/s that rate moves at bytes_per_cell (rtm_bench_bytes_per_cell): the figure set
 * against the copy bandwidth. */
double rtm_bench_gbs(double mcells, int bytes_per_cell);

#ifdef __cplusplus
}
#endif

#endif
