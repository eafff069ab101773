/* bench.h - what rtm3d bench's files share (cmd_bench.c drives the sweeps, bench_report.c
 * prints and writes their table; cuda builds only): a variant of the kernel and memory
 * strategy, one timed result, and the run's results. The measuring itself is
 * solver/cuda/rtm_cuda_bench.h's. */
#ifndef RTM_APP_BENCH_H
#define RTM_APP_BENCH_H

#include <stdio.h>

#include "rtm_config.h"
#include "rtm_grid.h"
#include "rtm_physics.h"

enum { RTM_BENCH_MAX_RESULTS = 256 };

typedef struct {
  char halo[RTM_CONFIG_NAME_MAX];
  int stages;
  int block[2];
  int zblock;
  char strategy[RTM_CONFIG_NAME_MAX];
} bench_variant_t;

typedef struct {
  const char *kind; /* "single", "halo", "shape", "compression" */
  bench_variant_t v;
  int compressed;     /* every wavefield allocation was granted compression */
  int window_step;    /* compression: first step of the timed window */
  const char *window; /* compression: early | middle | late */
  double ms_per_step, mcells, gbs, fraction;
} bench_result_t;

typedef struct {
  const rtm_config_t *cfg;
  const rtm_grid_t *grid;
  const rtm_model_t *model;
  const float *initial; /* random dense field for matrix runs; NULL = start from rest */
  double copy_gbs;
  int quiet;
  bench_result_t results[RTM_BENCH_MAX_RESULTS];
  int count;
} bench_t;

/* The fastest result from index `from` on, of `strategy` (NULL: any); NULL when none. */
const bench_result_t *rtm_bench_fastest(const bench_t *b, int from, const char *strategy);
/* The device, the copy bandwidth and what is counted, before the first result. */
void rtm_bench_print_preamble(const bench_t *b, const char *device);
/* The table's header, and a result as its row. */
void rtm_bench_print_header(FILE *out);
void rtm_bench_print_row(FILE *out, const bench_result_t *r);
/* Every result again under one header, and the fastest. */
void rtm_bench_print_summary(const bench_t *b);
/* Every result as CSV (--csv) or JSON (--json); RTM_ERR_IO when the file cannot be written. */
int rtm_bench_write_csv(const char *path, const bench_t *b, const char *device);
int rtm_bench_write_json(const char *path, const bench_t *b, const char *device);

#endif
