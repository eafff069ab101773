/* sim_helper.c - the cpu backend on a homogeneous iso medium with one Ricker point source
 * and a list of receivers, for the propagation regression tests (sim_helper.h). */
#define _POSIX_C_SOURCE 200809L
#include "sim_helper.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rtm_solver.h"
#include "rtm_status.h"

double sim_wavelet(double t_s, double frequency_hz) {
  return rtm_ricker(t_s, frequency_hz, 1.2 / frequency_hz);
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int sim_run(const sim_params_t *params, sim_result_t *result) {
  int status = RTM_OK;
  rtm_grid_t grid;
  rtm_model_t model;
  rtm_boundary_t boundary;
  rtm_points_t sources, receivers;
  rtm_mem_ledger_t ledger;
  rtm_config_t cfg;
  void *state = NULL;
  float *wavelet = NULL;
  memset(&model, 0, sizeof model);
  memset(&boundary, 0, sizeof boundary);
  memset(&sources, 0, sizeof sources);
  memset(&receivers, 0, sizeof receivers);
  memset(&cfg, 0, sizeof cfg);
  memset(result, 0, sizeof *result);
  rtm_mem_ledger_init(&ledger);

  const double spacing[3] = {params->h_m, params->h_m, params->h_m};
  const double origin[3] = {0.0, 0.0, 0.0};
  RTM_TRY(rtm_grid_init(&grid, params->n, spacing, origin));

  const size_t cells = rtm_grid_interior_cells(&grid);
  model.vp = malloc(cells * sizeof *model.vp);
  if (!model.vp) RTM_FAIL(RTM_ERR_NOMEM, "test: no memory for vp");
  for (size_t i = 0; i < cells; ++i)
    model.vp[i] = (float)params->v_m_s;
  RTM_TRY(rtm_model_update_range(&model, &grid));

  cfg.physics.equation = RTM_EQUATION_ISO;
  cfg.time.dt_s = NAN;
  cfg.time.cfl = params->courant;
  cfg.source.frequency_hz = params->frequency_hz;
  double dt = 0.0;
  RTM_TRY(rtm_resolve_dt(&cfg, &model, &grid, &dt));
  const int steps = (int)ceil(params->duration_s / dt);

  RTM_TRY(rtm_boundary_init(&boundary, &grid, params->boundary_width, params->boundary_reflection,
                            model.vp_max, dt));
  RTM_TRY(rtm_points_init(&sources, &grid, params->source_m, 1, "source"));
  RTM_TRY(
      rtm_points_init(&receivers, &grid, params->receiver_m, params->receiver_count, "receiver"));

  /* Source term dt^2 v^2 w(t) / (dx dy dz): then p = w(t - r/v) / (4 pi r). */
  wavelet = malloc((size_t)steps * sizeof *wavelet);
  if (!wavelet) RTM_FAIL(RTM_ERR_NOMEM, "test: no memory for the wavelet");
  const double scale = dt * dt * params->v_m_s * params->v_m_s / pow(params->h_m, 3);
  for (int it = 0; it < steps; ++it)
    wavelet[it] = (float)(scale * sim_wavelet(it * dt, params->frequency_hz));

  const rtm_backend_desc_t desc = {.config = &cfg,
                                   .grid = &grid,
                                   .model = &model,
                                   .boundary = &boundary,
                                   .dt_s = dt,
                                   .steps = steps,
                                   .ledger = &ledger};
  RTM_TRY(rtm_backend_cpu.create(&desc, &state));
  RTM_TRY(rtm_backend_cpu.set_sources(state, &sources, wavelet, steps));
  RTM_TRY(rtm_backend_cpu.set_receivers(state, &receivers, RTM_FIELD_BIT(RTM_FIELD_P)));
  const double start = now_s();
  for (int it = 0; it < steps; ++it)
    RTM_TRY(rtm_backend_cpu.step(state, it, RTM_REGION_ALL, RTM_FORWARD));
  result->seconds = now_s() - start;

  result->traces = malloc((size_t)params->receiver_count * ((size_t)steps + 1) * sizeof(float));
  if (!result->traces) RTM_FAIL(RTM_ERR_NOMEM, "test: no memory for the traces");
  RTM_TRY(rtm_backend_cpu.read_traces(state, RTM_FIELD_P, result->traces));
  result->dt_s = dt;
  result->steps = steps;

fail:
  if (status != RTM_OK) {
    free(result->traces);
    result->traces = NULL;
  }
  rtm_backend_cpu.destroy(state);
  free(wavelet);
  rtm_points_release(&receivers);
  rtm_points_release(&sources);
  rtm_boundary_release(&boundary);
  rtm_model_release(&model);
  rtm_mem_ledger_release(&ledger);
  return status;
}
