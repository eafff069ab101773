/* rtm3d bench's table (bench.h): the preamble naming the device, the copy bandwidth and
 * what is counted; a row a timed variant (kind, halo, stages, tile, zblock, strategy,
 * compression, ms/step, MCells/s, GB/s, share of the copy bandwidth); the summary with the
 * fastest; and the same results as CSV (--csv) and JSON (--json). */
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "rtm_cuda_bench.h"
#include "rtm_io.h"
#include "rtm_status.h"

const bench_result_t *rtm_bench_fastest(const bench_t *b, int from, const char *strategy) {
  const bench_result_t *best = NULL;
  for (int i = from; i < b->count; ++i)
    if ((!strategy || strcmp(b->results[i].v.strategy, strategy) == 0) &&
        (!best || b->results[i].mcells > best->mcells))
      best = &b->results[i];
  return best;
}

void rtm_bench_print_header(FILE *out) {
  fprintf(out, "%-11s %-6s %2s %7s %5s %-14s %4s %6s %9s %9s %8s %6s\n", "kind", "halo", "st",
          "block", "zblk", "strategy", "comp", "step", "ms/step", "MCells/s", "GB/s", "%copy");
}

void rtm_bench_print_row(FILE *out, const bench_result_t *r) {
  char block[16];
  snprintf(block, sizeof block, "%dx%d", r->v.block[0], r->v.block[1]);
  char step[16] = "-";
  if (r->window) snprintf(step, sizeof step, "%d", r->window_step);
  fprintf(out, "%-11s %-6s %2d %7s %5d %-14s %4s %6s %9.3f %9.0f %8.0f %5.1f%%\n",
          r->window ? r->window : r->kind, r->v.halo, r->v.stages, block, r->v.zblock,
          r->v.strategy, r->compressed ? "yes" : "no", step, r->ms_per_step, r->mcells, r->gbs,
          100.0 * r->fraction);
}

void rtm_bench_print_preamble(const bench_t *b, const char *device) {
  const rtm_config_t *cfg = b->cfg;
  printf("device      %s\ncopy        %.0f GB/s (device-to-device cudaMemcpy, read + write)\n"
         "grid        %d x %d x %d, %s, coefficients %s, %d B/cell counted, %d warm-up + %d timed "
         "steps (median of %d windows)\n",
         device, b->copy_gbs, b->grid->n[0], b->grid->n[1], b->grid->n[2],
         rtm_equation_name(cfg->physics.equation),
         rtm_precision_name(rtm_config_model_precision(cfg)), rtm_bench_bytes_per_cell(cfg),
         cfg->bench.warmup_steps, cfg->bench.steps, RTM_BENCH_WINDOWS);
}

void rtm_bench_print_summary(const bench_t *b) {
  printf("\n");
  rtm_bench_print_header(stdout);
  for (int i = 0; i < b->count; ++i)
    rtm_bench_print_row(stdout, &b->results[i]);
  const bench_result_t *best = rtm_bench_fastest(b, 0, NULL);
  if (best)
    printf("best: %s, %d stages, block %dx%d, zblock %d, %s: %.0f MCells/s = %.1f%% of %.0f GB/s\n",
           best->v.halo, best->v.stages, best->v.block[0], best->v.block[1], best->v.zblock,
           best->v.strategy, best->mcells, 100.0 * best->fraction, b->copy_gbs);
}

/* What the CSV and JSON writers print: the bench and the device's line. */
typedef struct {
  const bench_t *b;
  const char *device;
} bench_output_t;

static void write_csv(FILE *f, const void *data) {
  const bench_output_t *o = data;
  const bench_t *b = o->b;
  const char *device = o->device;
  fprintf(f, "device,copy_gb_s,kind,window,window_step,halo,stages,block_x,block_y,zblock,"
             "strategy,compressed,ms_per_step,mcells_per_s,bytes_per_cell,gb_per_s,"
             "fraction_of_copy\n");
  for (int i = 0; i < b->count; ++i) {
    const bench_result_t *r = &b->results[i];
    fprintf(f, "\"%s\",%.1f,%s,%s,%d,%s,%d,%d,%d,%d,%s,%d,%.5f,%.1f,%d,%.1f,%.4f\n", device,
            b->copy_gbs, r->kind, r->window ? r->window : "", r->window ? r->window_step : -1,
            r->v.halo, r->v.stages, r->v.block[0], r->v.block[1], r->v.zblock, r->v.strategy,
            r->compressed, r->ms_per_step, r->mcells, rtm_bench_bytes_per_cell(b->cfg), r->gbs,
            r->fraction);
  }
}

int rtm_bench_write_csv(const char *path, const bench_t *b, const char *device) {
  const bench_output_t output = {b, device};
  return rtm_io_write_text_aside(path, "--csv", write_csv, &output);
}

static void write_json(FILE *f, const void *data) {
  const bench_output_t *o = data;
  const bench_t *b = o->b;
  const char *device = o->device;
  fprintf(f,
          "{\n  \"device\": \"%s\",\n  \"copy_gb_s\": %.1f,\n  \"grid\": [%d, %d, %d],\n"
          "  \"bytes_per_cell\": %d,\n  \"model_precision\": \"%s\",\n  \"warmup_steps\": %d,\n"
          "  \"steps\": %d,\n  \"results\": [\n",
          device, b->copy_gbs, b->grid->n[0], b->grid->n[1], b->grid->n[2],
          rtm_bench_bytes_per_cell(b->cfg), rtm_precision_name(rtm_config_model_precision(b->cfg)),
          b->cfg->bench.warmup_steps, b->cfg->bench.steps);
  for (int i = 0; i < b->count; ++i) {
    const bench_result_t *r = &b->results[i];
    fprintf(f,
            "    {\"kind\": \"%s\", \"window\": \"%s\", \"window_step\": %d, \"halo\": \"%s\", "
            "\"stages\": %d, \"block\": [%d, %d], \"zblock\": %d, \"strategy\": \"%s\", "
            "\"compressed\": %s, \"ms_per_step\": %.5f, \"mcells_per_s\": %.1f, "
            "\"gb_per_s\": %.1f, \"fraction_of_copy\": %.4f}%s\n",
            r->kind, r->window ? r->window : "", r->window ? r->window_step : -1, r->v.halo,
            r->v.stages, r->v.block[0], r->v.block[1], r->v.zblock, r->v.strategy,
            r->compressed ? "true" : "false", r->ms_per_step, r->mcells, r->gbs, r->fraction,
            i + 1 < b->count ? "," : "");
  }
  fprintf(f, "  ]\n}\n");
}

int rtm_bench_write_json(const char *path, const bench_t *b, const char *device) {
  const bench_output_t output = {b, device};
  return rtm_io_write_text_aside(path, "--json", write_json, &output);
}
