/* rtm3d tune CONFIG: the fastest kernel.* shape for the deck's equation, model precision and
 * size class on this GPU, measured, and cached for kernel.* = auto (rtm_kernel_choice.h).
 *
 * One propagator is made from the deck (its model, sources and receivers) and started from a
 * random wavefield, as rtm3d bench --matrix does; each candidate shape is set on it
 * (set_kernel: the volumes stay, only the launch shape and the tma maps change) and timed
 * like a bench variant: bench.warmup steps, then the median of three windows of bench.steps.
 * The candidates are halo x stages x tile x zblock, pruned by what the GPU can run (no tma
 * before sm_90; zblocks past the local nz are the whole-nz candidate again; a shape the
 * device refuses is skipped), and ordered by how far they are from what auto chose before,
 * so that a sweep cut by the time limit has tried the nearest first. The five fastest are
 * timed again, one after the other, and the fastest of that second round wins. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "rtm_status.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: rtm3d tune CONFIG [--set section.key=value ...] [--time-limit SECONDS]\n"
          "                  [--halo sync|ldgsts|tma] [--no-save] [--csv FILE] [--quiet]\n\n"
          "Times every kernel.* shape (halo, stages, block_x x block_y, zblock) this GPU can run\n"
          "on the deck's grid, equation and memory.model_precision, on one propagator started\n"
          "from a random wavefield (bench.warmup steps, then the median of three windows of\n"
          "bench.steps), times the five fastest again, and stores the winner in the tune\n"
          "cache, where kernel.* = auto finds it from then on for this GPU, driver, equation,\n"
          "precision and size class (the nearest power-of-two cube: 256^3, 512^3, ...).\n\n"
          "  --time-limit S  stop the sweep after about S seconds (default 170), keeping the\n"
          "                  best so far; the nearest candidates to the current choice go first\n"
          "  --halo NAME     only shapes with this halo (a row for GPUs without TMA, say)\n"
          "  --no-save       measure and print, leave the cache alone\n"
          "  --csv FILE      every candidate's figures as CSV\n"
          "  --quiet         print only the final table\n\n"
          "The cache: $RTM3D_CACHE_DIR/kernels.ini, else $XDG_CACHE_HOME/rtm3d/kernels.ini, else\n"
          "~/.cache/rtm3d/kernels.ini; explicit kernel.* keys in a deck still win over it.\n");
}

#ifdef RTM3D_HAVE_CUDA_BACKEND
#include "rtm_cuda_bench.h"
#include "rtm_cuda_kernel.h"
#include "rtm_grid.h"
#include "rtm_io.h"
#include "rtm_propagator.h"
#include "solver_io.h"

enum { MAX_CANDIDATES = 512, CONFIRM = 5 };

typedef struct {
  rtm_kernel_shape_t shape;
  int distance;     /* dimensions (halo+stages, tile, zblock) that differ from auto's */
  int ran;          /* 1 timed, -1 refused by the device */
  double mcells[2]; /* the sweep's measurement and the confirmation's (0: none) */
  int confirmed;    /* timed again after the sweep: that figure ranks it */
} candidate_t;

typedef struct {
  double time_limit_s;
  const char *halo; /* only this halo (NULL: every one the GPU has) */
  const char *csv;
  int save;
  char **rest;
  int rest_count;
} tune_args_t;

static int split_arguments(int argc, char **argv, tune_args_t *args) {
  int status = RTM_OK;
  for (int i = 0; i < argc; ++i) {
    const char *a = argv[i];
    const int valued = i > 0 && (strcmp(a, "--time-limit") == 0 || strcmp(a, "--halo") == 0 ||
                                 strcmp(a, "--csv") == 0);
    if (valued && i + 1 >= argc) RTM_FAIL(RTM_ERR_USAGE, "tune: %s needs a value", a);
    if (i > 0 && strcmp(a, "--time-limit") == 0) {
      char *end = NULL;
      args->time_limit_s = rtm_text_number(argv[++i], &end);
      if (!end || *end || !(args->time_limit_s > 0.0) || !isfinite(args->time_limit_s))
        RTM_FAIL(RTM_ERR_USAGE, "tune: --time-limit '%s' is not a positive number of seconds",
                 argv[i]);
    } else if (i > 0 && strcmp(a, "--halo") == 0) {
      args->halo = argv[++i];
      if (strcmp(args->halo, "sync") && strcmp(args->halo, "ldgsts") && strcmp(args->halo, "tma"))
        RTM_FAIL(RTM_ERR_USAGE, "tune: --halo '%s' is unknown (sync, ldgsts, tma)", args->halo);
    } else if (i > 0 && strcmp(a, "--csv") == 0) {
      args->csv = argv[++i];
    } else if (i > 0 && strcmp(a, "--no-save") == 0) {
      args->save = 0;
    } else {
      args->rest[args->rest_count++] = argv[i];
    }
  }
fail:
  return status;
}

static int distance(const rtm_kernel_shape_t *a, const rtm_kernel_shape_t *b) {
  return (strcmp(a->halo, b->halo) != 0 || a->stages != b->stages) +
         (a->block[0] != b->block[0] || a->block[1] != b->block[1]) + (a->zblock != b->zblock);
}

/* Every shape to try, nearest to `start` first. iso tiles hold 4 cells a thread along x
 * (at most 512 threads), vti/tti tiles one cell a thread (at most 512 cells; tma tiles of 256
 * cells may take two: tti_cuda.cu's two_cells); the stages each kernel has
 * (rtm_kernel_max_stages). */
static int make_candidates(const rtm_config_t *cfg, int hopper, const char *only_halo,
                           const rtm_kernel_shape_t *start, int nz, candidate_t *list) {
  static const struct {
    const char *halo;
    int stages;
  } halos[] = {{"sync", 2}, {"ldgsts", 2}, {"ldgsts", 3}, {"tma", 2}, {"tma", 3}, {"tma", 4}};
  static const int iso_tiles[][2] = {{32, 8},  {32, 16}, {32, 32}, {64, 4},   {64, 8},
                                     {64, 16}, {128, 4}, {128, 8}, {128, 16}, {256, 4}};
  static const int tti_tiles[][2] = {{16, 16}, {32, 4}, {32, 8},  {32, 16}, {64, 2},
                                     {64, 4},  {64, 8}, {128, 2}, {128, 4}};
  static const int zblocks[] = {0, 16, 32, 64, 128};
  const int iso = cfg->physics.equation == RTM_EQUATION_ISO;
  const int(*tiles)[2] = iso ? iso_tiles : tti_tiles;
  const int tile_count = iso ? (int)(sizeof iso_tiles / sizeof iso_tiles[0])
                             : (int)(sizeof tti_tiles / sizeof tti_tiles[0]);
  int count = 0;
  for (size_t h = 0; h < sizeof halos / sizeof halos[0]; ++h) {
    if (strcmp(halos[h].halo, "tma") == 0 && !hopper) continue;
    if (halos[h].stages > rtm_kernel_max_stages(halos[h].halo, cfg->physics.equation)) continue;
    if (only_halo && strcmp(halos[h].halo, only_halo) != 0) continue;
    for (int t = 0; t < tile_count; ++t)
      for (size_t z = 0; z < sizeof zblocks / sizeof zblocks[0]; ++z) {
        /* a tma box is at most 256 cells a side: the tile and its halo */
        if (strcmp(halos[h].halo, "tma") == 0 &&
            (tiles[t][0] + 2 * RTM_RADIUS > 256 || tiles[t][1] + 2 * RTM_RADIUS > 256))
          continue;
        if (zblocks[z] >= nz) continue; /* the whole nz: zblock 0 */
        candidate_t *c = &list[count++];
        memset(c, 0, sizeof *c);
        snprintf(c->shape.halo, sizeof c->shape.halo, "%s", halos[h].halo);
        c->shape.stages = halos[h].stages;
        c->shape.block[0] = tiles[t][0];
        c->shape.block[1] = tiles[t][1];
        c->shape.zblock = zblocks[z];
        c->distance = distance(&c->shape, start);
      }
  }
  /* stable: by distance, the table order within one */
  for (int i = 1; i < count; ++i)
    for (int j = i; j > 0 && list[j].distance < list[j - 1].distance; --j) {
      candidate_t t = list[j];
      list[j] = list[j - 1];
      list[j - 1] = t;
    }
  return count;
}

/* Warm-up and three windows of the shape on the live propagator; 0 MCells/s and ran = -1
 * when the device refuses the shape (its message printed). */
static int time_candidate(rtm_propagator_t *prop, const rtm_config_t *cfg, double cells,
                          candidate_t *c, double *mcells) {
  int status = RTM_OK;
  double ms = 0.0;
  *mcells = 0.0;
  if (prop->backend->set_kernel(prop->state, &c->shape) != RTM_OK) {
    c->ran = -1;
    return RTM_OK;
  }
  RTM_TRY(rtm_bench_time_windows(prop->backend, prop->state, cfg->bench.warmup_steps,
                                 cfg->bench.steps, &ms));
  c->ran = 1;
  *mcells = rtm_bench_mcells(cells, ms);
fail:
  return status;
}

/* A candidate's figure: the sweep's, or the confirmation's once timed again. */
static double figure_of(const candidate_t *c) {
  return c->confirmed ? c->mcells[1] : c->mcells[0];
}

static void sort_by_speed(candidate_t *list, int count) {
  for (int i = 1; i < count; ++i)
    for (int j = i; j > 0 && figure_of(&list[j]) > figure_of(&list[j - 1]); --j) {
      candidate_t t = list[j];
      list[j] = list[j - 1];
      list[j - 1] = t;
    }
}

/* The sweep as tune's --csv writes it. */
typedef struct {
  const char *device;
  const rtm_kernel_key_t *key;
  const candidate_t *list;
  int count, bytes_per_cell;
  double copy_gbs;
} sweep_t;

static void write_csv(FILE *f, const void *data) {
  const sweep_t *s = data;
  const rtm_kernel_key_t *key = s->key;
  const double copy_gbs = s->copy_gbs;
  fprintf(f, "copy_gb_s,equation,precision,size_class,halo,stages,block_x,block_y,zblock,ran,"
             "mcells_per_s,confirm_mcells_per_s,bytes_per_cell,fraction_of_copy,device\n");
  for (int i = 0; i < s->count; ++i) {
    const candidate_t *c = &s->list[i];
    if (!c->ran) continue;
    fprintf(f, "%.1f,%s,%s,%d,%s,%d,%d,%d,%d,%s,%.1f,%.1f,%d,%.4f,\"%s\"\n", copy_gbs,
            rtm_equation_name(key->equation), rtm_precision_name(key->precision), key->size_class,
            c->shape.halo, c->shape.stages, c->shape.block[0], c->shape.block[1], c->shape.zblock,
            c->ran > 0 ? "yes" : "refused", c->mcells[0], c->mcells[1], s->bytes_per_cell,
            copy_gbs > 0.0 ? rtm_bench_gbs(figure_of(c), s->bytes_per_cell) / copy_gbs : 0.0,
            s->device);
  }
}

static void print_candidate(const char *label, const candidate_t *c, double copy_gbs,
                            int bytes_per_cell) {
  char text[64];
  rtm_kernel_shape_text(&c->shape, text, sizeof text);
  const double mc = figure_of(c);
  printf("%-8s %-20s %9.0f %6.1f%%\n", label, text, mc,
         copy_gbs > 0.0 ? 100.0 * rtm_bench_gbs(mc, bytes_per_cell) / copy_gbs : 0.0);
}

static int tune_cuda(int argc, char **argv) {
  int status = RTM_OK, quiet = 0, hopper = 0, count = 0, tried = 0, cut = 0;
  tune_args_t args = {
      .time_limit_s = 170.0, .save = 1, .rest = calloc((size_t)argc + 1, sizeof *args.rest)};
  rtm_config_t *cfg = calloc(1, sizeof *cfg);
  candidate_t *list = calloc(MAX_CANDIDATES, sizeof *list);
  rtm_grid_t grid;
  rtm_model_t model;
  rtm_propagator_t prop;
  rtm_kernel_key_t key;
  rtm_kernel_shape_t start;
  float *initial = NULL;
  char device[512] = "", why[1024] = "", key_text[512], cache[4096] = "";
  double copy_gbs = 0.0;
  memset(&model, 0, sizeof model);
  memset(&prop, 0, sizeof prop);
  if (!args.rest || !cfg || !list) RTM_FAIL(RTM_ERR_NOMEM, "tune: out of memory");
  RTM_TRY(split_arguments(argc, argv, &args));
  RTM_TRY(rtm_app_load_config(args.rest_count, args.rest, cfg, &quiet, NULL, NULL));
  if (strcmp(cfg->backend.name, "cpu") == 0)
    RTM_FAIL(RTM_ERR_CONFIG, "tune: backend.name = cpu; tune times the cuda kernels");
  if (args.csv) RTM_TRY(rtm_io_aside_probe(args.csv, "tune: --csv")); /* before the sweep */
  RTM_TRY(rtm_bench_describe_device(cfg->backend.device, device, sizeof device, &hopper));
  if (args.halo && strcmp(args.halo, "tma") == 0 && !hopper)
    RTM_FAIL(RTM_ERR_USAGE, "tune: --halo tma needs compute capability 9.0; %s has none", device);
  RTM_TRY(rtm_cuda_kernel_key(cfg, cfg->backend.device, &key));
  rtm_kernel_key_text(&key, key_text, sizeof key_text);
  const int have_cache = rtm_kernel_cache_path(cache, sizeof cache);
  if (args.save && !have_cache)
    RTM_FAIL(RTM_ERR_CONFIG, "tune: no place for the cache (set RTM3D_CACHE_DIR, "
                             "XDG_CACHE_HOME or HOME), or measure only with --no-save");
  /* where the sweep starts: what auto gives now, without the deck's explicit keys */
  rtm_config_t auto_cfg = *cfg;
  snprintf(auto_cfg.kernel.halo, sizeof auto_cfg.kernel.halo, "auto");
  auto_cfg.kernel.stages = auto_cfg.kernel.zblock = RTM_CFG_AUTO_INT;
  auto_cfg.kernel.block[0] = auto_cfg.kernel.block[1] = RTM_CFG_AUTO_INT;
  rtm_kernel_choose(&auto_cfg, &key, have_cache ? cache : NULL, &start, why, sizeof why);
  RTM_TRY(rtm_grid_init(&grid, cfg->grid.n, cfg->grid.spacing_m, cfg->grid.origin_m));
  count = make_candidates(cfg, hopper, args.halo, &start, grid.n[2], list);
  const int bpc = rtm_bench_bytes_per_cell(cfg);
  if (!quiet) {
    printf("device      %s\nkey         %s\nauto now    %s\ncandidates  %d, time limit %.0f s, "
           "%d warm-up + 3 x %d timed steps each\n",
           device, key_text, why, count, args.time_limit_s, cfg->bench.warmup_steps,
           cfg->bench.steps);
    fflush(stdout);
  }
  const double setup_start = rtm_wall_seconds();
  RTM_TRY(rtm_bench_check_device_fits(cfg, &grid));
  RTM_TRY(rtm_app_load_model(cfg, &grid, &model));
  RTM_TRY(rtm_bench_copy_bandwidth(cfg->backend.device, &copy_gbs));
  /* one propagator for every candidate, made with the start shape */
  rtm_config_t run = *cfg;
  snprintf(run.backend.name, sizeof run.backend.name, "cuda");
  snprintf(run.kernel.halo, sizeof run.kernel.halo, "%s", start.halo);
  run.kernel.stages = start.stages;
  run.kernel.block[0] = start.block[0];
  run.kernel.block[1] = start.block[1];
  run.kernel.zblock = start.zblock;
  run.time.steps = cfg->bench.warmup_steps + RTM_BENCH_WINDOWS * cfg->bench.steps;
  RTM_TRY(rtm_propagator_create(&run, &grid, &model, &prop));
  initial = rtm_bench_random_field(&grid);
  if (!initial) RTM_FAIL(RTM_ERR_NOMEM, "tune: out of host memory for the initial field");
  RTM_TRY(rtm_bench_start_from(prop.backend, prop.state, cfg->physics.equation, initial));
  const double cells = (double)rtm_grid_interior_cells(&grid);
  const double sweep_start = rtm_wall_seconds();
  if (!quiet)
    printf("set-up      %.1f s (model, propagator); copy %.0f GB/s; %d B/cell counted\n\n",
           sweep_start - setup_start, copy_gbs, bpc);
  /* the sweep, nearest first, until the candidates or the time run out */
  double slowest_s = 0.0;
  for (int i = 0; i < count; ++i) {
    const double t0 = rtm_wall_seconds();
    if (t0 - sweep_start + slowest_s > args.time_limit_s) {
      cut = count - i;
      break;
    }
    RTM_TRY(time_candidate(&prop, cfg, cells, &list[i], &list[i].mcells[0]));
    ++tried;
    const double took = rtm_wall_seconds() - t0;
    if (took > slowest_s) slowest_s = took;
    if (!quiet) {
      char text[64], label[32];
      rtm_kernel_shape_text(&list[i].shape, text, sizeof text);
      snprintf(label, sizeof label, "[%d/%d]", i + 1, count);
      if (list[i].ran < 0)
        printf("%-9s %-20s refused by the device (above)\n", label, text);
      else
        printf("%-9s %-20s %9.0f MCells/s  %5.1f s\n", label, text, list[i].mcells[0],
               rtm_wall_seconds() - sweep_start);
      fflush(stdout);
    }
  }
  sort_by_speed(list, tried);
  if (tried == 0 || list[0].ran <= 0)
    RTM_FAIL(RTM_ERR_DEVICE, "tune: no candidate ran on %s", device);
  /* the fastest again, one after the other, the winner among them by that second figure: a
   * lucky window does not make a winner, and the GPU runs a few percent slower after a
   * minute of sweeping (clocks), which the sweep's first candidates did not see */
  int confirmed = 0;
  for (; confirmed < CONFIRM && confirmed < tried && list[confirmed].ran > 0; ++confirmed) {
    RTM_TRY(time_candidate(&prop, cfg, cells, &list[confirmed], &list[confirmed].mcells[1]));
    list[confirmed].confirmed = 1;
  }
  sort_by_speed(list, confirmed);
  printf("\n%-8s %-20s %9s %7s\n", "rank", "halo st tile zblock", "MCells/s", "%copy");
  for (int i = 0; i < 5 && i < tried && list[i].ran > 0; ++i) {
    char label[16];
    snprintf(label, sizeof label, "%d", i + 1);
    print_candidate(label, &list[i], copy_gbs, bpc);
  }
  for (int i = 0; i < tried; ++i)
    if (distance(&list[i].shape, &start) == 0) print_candidate("was auto", &list[i], copy_gbs, bpc);
  printf("swept %d of %d candidates in %.0f s%s\n", tried, count, rtm_wall_seconds() - sweep_start,
         cut ? " (the time limit stopped the sweep; --time-limit gives it longer)" : "");
  char winner[64];
  rtm_kernel_shape_text(&list[0].shape, winner, sizeof winner);
  printf("table row   %d,any,%s,%s,%d,%s,%d,%d,%d,%d,%.0f,%s\n", key.cc,
         rtm_equation_name(key.equation), rtm_precision_name(key.precision), key.size_class,
         list[0].shape.halo, list[0].shape.stages, list[0].shape.block[0], list[0].shape.block[1],
         list[0].shape.zblock, figure_of(&list[0]), key.gpu);
  /* the winner saved before the CSV is written: a --csv that fails (a full disk) loses the
   * table, not the minutes of measurement behind the cache's entry */
  if (args.save) {
    RTM_TRY(rtm_kernel_cache_store(cache, &key, &list[0].shape, figure_of(&list[0])));
    printf("saved       %s: kernel.* = auto now runs %s for [%s]\n", cache, winner, key_text);
  } else {
    printf("not saved   (--no-save): the winner is %s\n", winner);
  }
  if (args.csv) {
    const sweep_t sweep = {device, &key, list, count, bpc, copy_gbs};
    RTM_TRY(rtm_io_write_text_aside(args.csv, "tune: --csv", write_csv, &sweep));
  }
fail:
  rtm_propagator_destroy(&prop);
  free(initial);
  rtm_model_release(&model);
  free(list);
  free(cfg);
  free(args.rest);
  return status;
}
#endif

int rtm_cmd_tune(int argc, char **argv) {
  for (int i = 1; i < argc; ++i)
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      usage(stdout);
      return 0;
    }
#ifdef RTM3D_HAVE_CUDA_BACKEND
  return rtm_status_exit_code(tune_cuda(argc, argv));
#else
  rtm_log_error("tune: this build has no cuda backend (configure with RTM3D_ENABLE_CUDA=ON on "
                "a machine with nvcc)");
  return 1;
#endif
}
