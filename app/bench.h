/* bench.h - what rtm3d bench and rtm3d tune share (cmd_bench.c, cuda builds only): the
 * device's description and copy bandwidth, the bytes a step must move per cell, the
 * memory check before any allocation, a random starting field, and timed steps. */
#ifndef RTM_APP_BENCH_H
#define RTM_APP_BENCH_H

#include <stddef.h>

#include "rtm_config.h"
#include "rtm_grid.h"
#include "rtm_propagator.h"

/* "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 52 MB L2)"; hopper: compute capability >= 9.0. */
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
/* Milliseconds per step of `steps` steps numbered from `first`, between CUDA events. */
int rtm_bench_time_steps(rtm_propagator_t *prop, int first, int steps, double *ms_per_step);
double rtm_bench_median3(double a, double b, double c);

#endif
