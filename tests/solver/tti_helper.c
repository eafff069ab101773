/* tti_helper.c - set-up and driving of the cpu backend on an iso, vti or tti model with one
 * Ricker point source and receivers, for the anisotropic regression tests (tti_helper.h). */
#define _POSIX_C_SOURCE 200809L
#include "tti_helper.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rtm_status.h"

double tti_now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static float *filled(size_t cells, float value) {
  float *a = malloc(cells * sizeof *a);
  if (!a) abort();
  for (size_t i = 0; i < cells; ++i)
    a[i] = value;
  return a;
}

void tti_run_init(tti_run_t *run, const int n[3], double h_m, rtm_equation_t equation) {
  memset(run, 0, sizeof *run);
  rtm_config_defaults(&run->cfg);
  run->cfg.physics.equation = equation;
  run->trace_fields = RTM_FIELD_BIT(RTM_FIELD_P);
  rtm_mem_ledger_init(&run->ledger);
  const double spacing[3] = {h_m, h_m, h_m};
  const double origin[3] = {0.0, 0.0, 0.0};
  if (rtm_grid_init(&run->grid, n, spacing, origin) != RTM_OK) abort();
  run->cells = rtm_grid_interior_cells(&run->grid);
  run->model.vp = filled(run->cells, 2000.0f);
  if (equation != RTM_EQUATION_ISO) {
    run->model.epsilon = filled(run->cells, 0.0f);
    run->model.delta = filled(run->cells, 0.0f);
  }
  if (equation == RTM_EQUATION_TTI) {
    run->model.theta_deg = filled(run->cells, 0.0f);
    run->model.phi_deg = filled(run->cells, 0.0f);
  }
}

tti_cell_t tti_run_cell(const tti_run_t *run, size_t i) {
  const size_t nx = (size_t)run->grid.n[0], ny = (size_t)run->grid.n[1];
  const tti_cell_t cell = {(int)(i % nx), (int)(i / nx % ny), (int)(i / (nx * ny))};
  return cell;
}

int tti_run_start(tti_run_t *run, const double source_m[3], const double *receiver_m,
                  int receiver_count, double frequency_hz, int steps, int boundary_width,
                  double boundary_reflection) {
  int status = RTM_OK;
  const rtm_grid_t *g = &run->grid;
  run->cfg.source.frequency_hz = frequency_hz;
  RTM_TRY(rtm_model_update_range(&run->model, g));
  RTM_TRY(rtm_resolve_dt(&run->cfg, &run->model, g, &run->dt_s));
  run->steps = steps;
  RTM_TRY(rtm_boundary_init(&run->boundary, g, boundary_width, boundary_reflection,
                            run->model.vp_max, run->dt_s));
  RTM_TRY(rtm_points_init(&run->sources, g, source_m, 1, "source"));
  if (receiver_count > 0)
    RTM_TRY(rtm_points_init(&run->receivers, g, receiver_m, receiver_count, "receiver"));

  /* the source cell's vp, as rtm_propagator_create scales it (the source sits on a node) */
  size_t at = g->origin_index;
  for (int t = 0; t < RTM_POINT_TAPS; ++t)
    if (run->sources.tap_weight[t] > 0.5f) at = run->sources.tap_index[t];
  const double vp = run->model.vp[rtm_grid_dense_index(g, at)];
  const double h = g->spacing_m[0];
  const double scale = run->dt_s * run->dt_s * vp * vp / (h * h * h);
  run->wavelet = malloc(((size_t)steps + 1) * sizeof *run->wavelet);
  if (!run->wavelet) RTM_FAIL(RTM_ERR_NOMEM, "test: no memory for the wavelet");
  for (int it = 0; it <= steps; ++it)
    run->wavelet[it] =
        (float)(scale * rtm_ricker(it * run->dt_s, frequency_hz, 1.2 / frequency_hz));

  const rtm_backend_desc_t desc = {.config = &run->cfg,
                                   .grid = g,
                                   .model = &run->model,
                                   .boundary = &run->boundary,
                                   .dt_s = run->dt_s,
                                   .steps = steps,
                                   .ledger = &run->ledger};
  RTM_TRY(rtm_backend_cpu.create(&desc, &run->state));
  RTM_TRY(rtm_backend_cpu.set_sources(run->state, &run->sources, run->wavelet, steps + 1));
  if (receiver_count > 0)
    RTM_TRY(rtm_backend_cpu.set_receivers(run->state, &run->receivers, run->trace_fields));
fail:
  return status;
}

int tti_run_steps(tti_run_t *run, int first, int last) {
  int status = RTM_OK;
  for (int it = first; it < last; ++it)
    RTM_TRY(rtm_backend_cpu.step(run->state, it, RTM_REGION_ALL, RTM_FORWARD));
fail:
  return status;
}

float *tti_run_traces(tti_run_t *run, rtm_field_t field) {
  float *t = malloc((size_t)run->receivers.count * ((size_t)run->steps + 1) * sizeof *t);
  if (!t || rtm_backend_cpu.read_traces(run->state, field, t) != RTM_OK) abort();
  return t;
}

float *tti_run_field(tti_run_t *run, rtm_field_t field) {
  float *f = malloc(run->cells * sizeof *f);
  if (!f || rtm_backend_cpu.read_field(run->state, field, RTM_LEVEL_CURRENT, f) != RTM_OK) abort();
  return f;
}

void tti_run_release(tti_run_t *run) {
  if (run->state) rtm_backend_cpu.destroy(run->state);
  run->state = NULL;
  free(run->wavelet);
  run->wavelet = NULL;
  rtm_points_release(&run->receivers);
  rtm_points_release(&run->sources);
  rtm_boundary_release(&run->boundary);
  rtm_model_release(&run->model);
  rtm_mem_ledger_release(&run->ledger);
}
