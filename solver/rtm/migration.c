#define _POSIX_C_SOURCE 200809L
/* One migration run, shot after shot (rtm_migration.h): the source side forward with its
 * snapshots, the receiver side over the reversed gather, the imaging condition between. */
#include "rtm_migration.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "imaging_cuda.h"
#include "imaging_impl.h"
#include "reconstruction_impl.h"
#include "rtm_status.h"

struct rtm_migration {
  rtm_config_t cfg; /* the run's, receivers.layout none: neither side records */
  rtm_grid_t grid;
  const rtm_model_t *model;
  rtm_propagator_t source, receiver;
  int steps, imaging_step;
  int device; /* where the fields live: -1 host */
  rtm_image_t *image;
  const rtm_reconstruction_ops_t *reconstruction; /* rtm.reconstruction */
  void *reconstruction_state;
  float *reversed; /* [count][steps + 1], the gather back to front */
  size_t reversed_floats;
  rtm_mem_ledger_t ledger; /* the image and the snapshots; each side has its own */
};

static double wall_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Four samples a period at 2.5 f, where the Ricker's spectrum is 3% of its peak. */
static int auto_imaging_step(const rtm_config_t *cfg, double dt_s) {
  const int step = (int)floor(1.0 / (4.0 * 2.5 * cfg->source.frequency_hz * dt_s));
  return step < 1 ? 1 : step;
}

/* memory.imaging (or memory.strategy), auto resolved as the backends resolve it. */
static const char *imaging_strategy(const rtm_config_t *cfg, int device) {
  const char *strategy = rtm_config_strategy_for(cfg, "imaging");
  if (strcmp(strategy, "auto") == 0) return device >= 0 ? "device" : "host";
  return strategy;
}

/* The imaging step and the snapshots it takes, from the config and dt. */
static int plan_imaging(rtm_migration_t *m, const rtm_config_t *cfg) {
  int status = RTM_OK;
  double dt_s = 0.0;
  RTM_TRY(rtm_resolve_dt(cfg, m->model, &m->grid, &dt_s));
  m->steps = cfg->time.steps;
  m->imaging_step =
      cfg->rtm.imaging_step > 0 ? cfg->rtm.imaging_step : auto_imaging_step(cfg, dt_s);
  if (m->imaging_step > m->steps)
    RTM_FAIL(RTM_ERR_CONFIG,
             "rtm.imaging_step = %d exceeds time.steps = %d: the imaging condition would "
             "never be applied",
             m->imaging_step, m->steps);
fail:
  return status;
}

/* The ways of rtm.reconstruction; the config's enum indexes them. */
static const rtm_reconstruction_ops_t *const reconstructions[] = {&rtm_reconstruction_snapshots,
                                                                  &rtm_reconstruction_boundary};

/* What the reconstruction is made for (the device: -1 before the backend says). */
static rtm_reconstruction_plan_t plan_of(rtm_migration_t *m, const rtm_config_t *cfg, int device) {
  return (rtm_reconstruction_plan_t){.cfg = cfg,
                                     .grid = &m->grid,
                                     .boundary = &m->source.boundary,
                                     .steps = m->steps,
                                     .imaging_step = m->imaging_step,
                                     .device = device,
                                     .strategy = imaging_strategy(cfg, device),
                                     .precision = cfg->rtm.snapshot_precision,
                                     .ledger = &m->ledger};
}

/* The image accumulates where the fields are (image.c): a host strategy of memory.imaging
 * (pinned, host) moves a cuda backend's reconstruction store to host memory, not its image. */
static const char *image_strategy(const rtm_reconstruction_plan_t *plan) {
  return plan->device >= 0 && rtm_imaging_host_strategy(plan->strategy) ? "device" : plan->strategy;
}

/* Host memory available now: MemAvailable of /proc/meminfo (free memory and what the page
 * cache would give back), else the free physical pages, else no limit. */
static size_t host_available_bytes(void) {
  FILE *meminfo = fopen("/proc/meminfo", "r");
  char line[256];
  unsigned long long kib = 0;
  while (meminfo && fgets(line, sizeof line, meminfo))
    if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1) break;
  if (meminfo) fclose(meminfo);
  if (kib > 0) return (size_t)kib * 1024;
  const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? (size_t)pages * (size_t)page : (size_t)-1;
}

/* The preflight, before anything is allocated: what the reconstruction would hold and the
 * image, where they would live (the device the backend takes, or host memory), against what
 * is free there now. The propagators come on top, so a plan that passes may still leave too
 * little for them (the backend then says so); one that cannot fit is refused here, with the
 * settings that shrink it. */
static int preflight(rtm_migration_t *m, const rtm_config_t *cfg) {
  int status = RTM_OK, on_device = 0;
  const rtm_backend_t *backend = NULL;
  size_t available = 0;
  RTM_TRY(rtm_backend_select(cfg->backend.name, &backend));
  const int device = strcmp(backend->name, "cuda") == 0 ? cfg->backend.device : -1;
  const rtm_reconstruction_plan_t plan = plan_of(m, cfg, device);
  const size_t volume = rtm_grid_interior_cells(&m->grid) * sizeof(float);
  const size_t store = m->reconstruction->bytes(&plan, &on_device);
  const int image_beside = on_device || device < 0; /* else it is on the device, the store not */
  const size_t need = store + (image_beside ? 2 * volume : 0);
  if (on_device)
    RTM_TRY(rtm_imaging_cuda_free_bytes(device, &available));
  else
    available = host_available_bytes();
  if (need > available) {
    char advice[512] = "hold it elsewhere (memory.imaging)";
    if (m->reconstruction->advice)
      m->reconstruction->advice(&plan, available, advice, sizeof advice);
    RTM_FAIL(RTM_ERR_NOMEM,
             "rtm.reconstruction = %s needs %.3g GB (with the image) in %s, where %.3g GB are "
             "free: %s",
             m->reconstruction->name, need / 1e9, on_device ? "device memory" : "host memory",
             available / 1e9, advice);
  }
fail:
  return status;
}

static int create_propagators(rtm_migration_t *m, const rtm_config_t *cfg) {
  int status = RTM_OK;
  m->cfg = *cfg;
  m->cfg.receivers.layout = RTM_RECEIVERS_NONE;
  RTM_TRY(rtm_propagator_create(&m->cfg, &m->grid, m->model, &m->source));
  RTM_TRY(rtm_propagator_create(&m->cfg, &m->grid, m->model, &m->receiver));
fail:
  return status;
}

static int create_buffers(rtm_migration_t *m) {
  int status = RTM_OK;
  rtm_field_view_t view;
  RTM_TRY(m->source.backend->view_field(m->source.state, RTM_FIELD_P, RTM_LEVEL_CURRENT, &view));
  m->device = view.device;
  const rtm_reconstruction_plan_t plan = plan_of(m, &m->cfg, m->device);
  RTM_TRY(rtm_image_create(&m->grid, m->device, image_strategy(&plan), &m->ledger, &m->image));
  RTM_TRY(m->reconstruction->create(&plan, &m->reconstruction_state));
fail:
  return status;
}

int rtm_migration_create(const rtm_config_t *cfg, const rtm_grid_t *grid, const rtm_model_t *model,
                         rtm_migration_t **migration) {
  int status = RTM_OK;
  rtm_migration_t *m = calloc(1, sizeof *m);
  *migration = NULL;
  if (!m) RTM_FAIL(RTM_ERR_NOMEM, "out of memory for the migration");
  m->grid = *grid;
  m->model = model;
  rtm_mem_ledger_init(&m->ledger);
  m->reconstruction = reconstructions[cfg->rtm.reconstruction];
  RTM_TRY(plan_imaging(m, cfg));
  RTM_TRY(preflight(m, cfg));
  RTM_TRY(create_propagators(m, cfg));
  RTM_TRY(create_buffers(m));
  *migration = m;
  return RTM_OK;
fail:
  rtm_migration_destroy(m);
  return status;
}

void rtm_migration_destroy(rtm_migration_t *m) {
  if (!m) return;
  if (m->reconstruction && m->reconstruction_state)
    m->reconstruction->destroy(m->reconstruction_state);
  rtm_image_destroy(m->image);
  rtm_propagator_destroy(&m->receiver);
  rtm_propagator_destroy(&m->source);
  free(m->reversed);
  rtm_mem_ledger_release(&m->ledger);
  free(m);
}

/* The receiver side's sources: the adjoint taps of the receivers and the gather reversed in
 * time (sample tau = observed sample steps - tau). */
static int set_receiver_side(rtm_migration_t *m, const double *receivers_m, int count,
                             const float *observed) {
  int status = RTM_OK;
  rtm_points_t receivers = {0}, adjoint = {0};
  const int samples = m->steps + 1;
  const size_t floats = (size_t)count * (size_t)samples;
  if (floats > m->reversed_floats) {
    free(m->reversed);
    m->reversed = malloc(floats * sizeof *m->reversed);
    m->reversed_floats = m->reversed ? floats : 0;
    if (!m->reversed) RTM_FAIL(RTM_ERR_NOMEM, "out of memory for %d reversed traces", count);
  }
  for (int r = 0; r < count; ++r)
    for (int k = 0; k < samples; ++k)
      m->reversed[(size_t)r * samples + k] = observed[(size_t)r * samples + (samples - 1 - k)];
  RTM_TRY(rtm_points_init(&receivers, &m->grid, receivers_m, count, "receiver"));
  RTM_TRY(rtm_adjoint_receivers(&receivers, &m->grid, m->model, &m->receiver.boundary,
                                m->receiver.dt_s, &adjoint));
  const rtm_backend_t *backend = m->receiver.backend;
  RTM_TRY(backend->reset(m->receiver.state));
  RTM_TRY(backend->set_sources(m->receiver.state, &adjoint, m->reversed, samples));
fail:
  rtm_points_release(&adjoint);
  rtm_points_release(&receivers);
  return status;
}

static int drain(const rtm_propagator_t *prop) {
  return prop->backend->synchronize ? prop->backend->synchronize(prop->state) : RTM_OK;
}

/* Forward: the source side to S(steps), the reconstruction told of every level. */
static int forward_pass(rtm_migration_t *m, rtm_migration_progress_t progress, void *context) {
  int status = RTM_OK;
  const rtm_propagator_t *s = &m->source;
  for (int it = 0; it < m->steps; ++it) {
    RTM_TRY(s->backend->step(s->state, it, RTM_REGION_ALL, RTM_FORWARD));
    RTM_TRY(m->reconstruction->after_forward(m->reconstruction_state, s, it + 1));
    if (progress) progress(context, it + 1);
  }
  RTM_TRY(drain(s));
fail:
  return status;
}

/* Time n of the backward pass: S(n) from the reconstruction, and at an imaging step the
 * imaging condition with R(n) in place. */
static int image_at(rtm_migration_t *m, int n, double *imaging_s) {
  int status = RTM_OK;
  const rtm_propagator_t *r = &m->receiver;
  const float *source = NULL;
  rtm_layout_t source_layout;
  rtm_field_view_t view;
  const int wanted = n % m->imaging_step == 0;
  RTM_TRY(m->reconstruction->source_at(m->reconstruction_state, &m->source, n, wanted, &source,
                                       &source_layout));
  if (!wanted) return RTM_OK;
  RTM_TRY(drain(r));
  const double start_s = wall_seconds();
  RTM_TRY(r->backend->view_field(r->state, RTM_FIELD_P, RTM_LEVEL_CURRENT, &view));
  RTM_TRY(rtm_image_accumulate(m->image, source, source_layout, view.padded,
                               rtm_layout_padded(&m->grid)));
  RTM_TRY(rtm_image_read(m->image, NULL, NULL)); /* waits for the accumulation */
  *imaging_s += wall_seconds() - start_s;
fail:
  return status;
}

static int finish_shot(rtm_migration_t *m) {
  if (!m->reconstruction->finish_shot) return RTM_OK;
  return m->reconstruction->finish_shot(m->reconstruction_state, &m->source);
}

/* Backward: after receiver step tau the current level is R(steps - tau). */
static int backward_pass(rtm_migration_t *m, rtm_migration_progress_t progress, void *context,
                         double *imaging_s) {
  int status = RTM_OK;
  const rtm_propagator_t *r = &m->receiver;
  for (int tau = 0; tau < m->steps; ++tau) {
    RTM_TRY(r->backend->step(r->state, tau, RTM_REGION_ALL, RTM_FORWARD));
    RTM_TRY(image_at(m, m->steps - tau, imaging_s));
    if (progress) progress(context, m->steps + tau + 1);
  }
  RTM_TRY(finish_shot(m));
  RTM_TRY(drain(r));
fail:
  return status;
}

int rtm_migration_shot(rtm_migration_t *m, const double source_m[3], const double *receivers_m,
                       int count, const float *observed, rtm_migration_progress_t progress,
                       void *progress_context, rtm_shot_timing_t *timing) {
  int status = RTM_OK;
  rtm_shot_timing_t t = {0.0, 0.0, 0.0};
  RTM_TRY(rtm_propagator_set_shot(&m->source, &m->cfg, source_m));
  RTM_TRY(set_receiver_side(m, receivers_m, count, observed));
  double start_s = wall_seconds();
  RTM_TRY(forward_pass(m, progress, progress_context));
  t.forward_s = wall_seconds() - start_s;
  start_s = wall_seconds();
  RTM_TRY(backward_pass(m, progress, progress_context, &t.imaging_s));
  t.backward_s = wall_seconds() - start_s - t.imaging_s;
  if (timing) *timing = t;
fail:
  return status;
}

/* Zeroes a dense volume outside the non-absorbing interior (`width` cells inside every
 * face). There the source wavefield is the damped one (snapshots), or one the forward pass
 * never had (boundary does not rebuild the layer), so the image means nothing there. Zeroed
 * for every reconstruction, their images agree, and the Laplacian filter that follows does
 * not smear the layer into the interior. */
static void zero_layer(const rtm_grid_t *g, int width, float *dense) {
  const long nx = g->n[0], ny = g->n[1];
  const long x_low = width < nx ? width : nx, x_high = nx - width > x_low ? nx - width : x_low;
  if (!dense || width <= 0) return;
  for (long iz = 0; iz < g->nz_local; ++iz) {
    const long z = g->z_offset + iz;
    const int z_inside = z >= width && z < g->n[2] - width;
    for (long iy = 0; iy < ny; ++iy) {
      float *row = dense + ((size_t)iz * (size_t)ny + (size_t)iy) * (size_t)nx;
      if (!z_inside || iy < width || iy >= ny - width) {
        memset(row, 0, (size_t)nx * sizeof *row);
        continue;
      }
      memset(row, 0, (size_t)x_low * sizeof *row);
      memset(row + x_high, 0, (size_t)(nx - x_high) * sizeof *row);
    }
  }
}

static int same_layout(rtm_layout_t a, rtm_layout_t b) {
  return a.origin == b.origin && a.stride_y == b.stride_y && a.stride_z == b.stride_z;
}

/* A volume the reconstruction handed back (in the fields' memory, dense or padded) as a dense
 * host array; a device's padded volume comes through the host array `padded`. */
static int source_to_host(const rtm_migration_t *m, const float *volume, rtm_layout_t layout,
                          float *padded, float *dense) {
  int status = RTM_OK;
  const rtm_grid_t *g = &m->grid;
  const int is_dense = same_layout(layout, rtm_layout_dense(g));
  if (!is_dense && !same_layout(layout, rtm_layout_padded(g)))
    RTM_FAIL(RTM_ERR_INTERNAL, "rtm.reconstruction = %s handed back a volume of an unknown layout",
             m->reconstruction->name);
  if (m->device < 0 && is_dense) {
    memcpy(dense, volume, rtm_grid_interior_cells(g) * sizeof *dense);
  } else if (m->device < 0) {
    rtm_grid_pack(g, volume, dense);
  } else if (is_dense) {
    RTM_TRY(rtm_imaging_cuda_read(dense, volume, rtm_grid_interior_cells(g) * sizeof *dense));
  } else {
    RTM_TRY(rtm_imaging_cuda_read(padded, volume, g->padded_cells * sizeof *padded));
    rtm_grid_pack(g, padded, dense);
  }
fail:
  return status;
}

int rtm_migration_replay_source(rtm_migration_t *m, const double source_m[3],
                                rtm_migration_visit_t visit, void *context) {
  int status = RTM_OK;
  float *dense = malloc(rtm_grid_interior_cells(&m->grid) * sizeof *dense);
  float *padded = m->device >= 0 ? malloc(m->grid.padded_cells * sizeof *padded) : NULL;
  const float *volume = NULL;
  rtm_layout_t layout;
  if (!dense || (m->device >= 0 && !padded))
    RTM_FAIL(RTM_ERR_NOMEM, "out of memory for the replayed source wavefield");
  RTM_TRY(rtm_propagator_set_shot(&m->source, &m->cfg, source_m));
  RTM_TRY(forward_pass(m, NULL, NULL));
  for (int n = m->steps; n >= 1; --n) {
    const int wanted = n % m->imaging_step == 0;
    RTM_TRY(m->reconstruction->source_at(m->reconstruction_state, &m->source, n, wanted, &volume,
                                         &layout));
    if (!wanted) continue;
    RTM_TRY(source_to_host(m, volume, layout, padded, dense));
    RTM_TRY(visit(context, n, dense));
  }
  RTM_TRY(finish_shot(m));
fail:
  free(padded);
  free(dense);
  return status;
}

int rtm_migration_read(rtm_migration_t *m, float *image, float *illumination) {
  int status = RTM_OK;
  RTM_TRY(rtm_image_read(m->image, image, illumination));
  zero_layer(&m->grid, m->source.boundary.width_cells, image);
  zero_layer(&m->grid, m->source.boundary.width_cells, illumination);
fail:
  return status;
}

int rtm_migration_clear(rtm_migration_t *m) {
  return rtm_image_clear(m->image);
}

double rtm_migration_dt(const rtm_migration_t *m) {
  return m->source.dt_s;
}

int rtm_migration_steps(const rtm_migration_t *m) {
  return m->steps;
}

int rtm_migration_imaging_step(const rtm_migration_t *m) {
  return m->imaging_step;
}

double rtm_migration_velocity_at(const rtm_migration_t *m, const double position_m[3]) {
  rtm_points_t point = {0};
  double v = 0.0, weight_sum = 0.0;
  if (rtm_points_init(&point, &m->grid, position_m, 1, "mute point") != RTM_OK) return 0.0;
  for (int k = 0; k < RTM_POINT_TAPS; ++k) {
    const double w = point.tap_weight[k];
    if (w == 0.0) continue;
    v += w * m->model->vp[rtm_grid_dense_index(&m->grid, point.tap_index[k])];
    weight_sum += w;
  }
  rtm_points_release(&point);
  return weight_sum > 0.0 ? v / weight_sum : 0.0;
}

void rtm_migration_prepare(const rtm_migration_t *m, const double source_m[3],
                           const double *receivers_m, int count, float *observed) {
  const rtm_config_t *cfg = &m->cfg;
  const double f = cfg->source.frequency_hz;
  if (cfg->rtm.mute) {
    const double velocity = isnan(cfg->rtm.mute_velocity_m_s)
                                ? rtm_migration_velocity_at(m, source_m)
                                : cfg->rtm.mute_velocity_m_s;
    const double delay = isnan(cfg->source.delay_s) ? 1.2 / f : cfg->source.delay_s;
    const double taper = isnan(cfg->rtm.mute_taper_s) ? 1.5 / f : cfg->rtm.mute_taper_s;
    rtm_mute_direct(observed, count, m->steps + 1, m->source.dt_s, source_m, receivers_m, velocity,
                    delay, taper);
  }
  if (cfg->rtm.phase_correction)
    rtm_phase_correction(observed, count, m->steps + 1, m->source.dt_s);
}

int rtm_migration_memory(const rtm_migration_t *m, rtm_mem_ledger_t *memory) {
  const rtm_mem_ledger_t *parts[3] = {&m->source.ledger, &m->receiver.ledger, &m->ledger};
  const char *const prefix[3] = {"source ", "receiver ", ""};
  rtm_mem_ledger_init(memory);
  const int count = parts[0]->count + parts[1]->count + parts[2]->count;
  memory->records = malloc((size_t)(count > 0 ? count : 1) * sizeof *memory->records);
  if (!memory->records) {
    rtm_log_error("out of memory for the migration's memory report");
    return RTM_ERR_NOMEM;
  }
  memory->capacity = count;
  for (int p = 0; p < 3; ++p)
    for (int r = 0; r < parts[p]->count; ++r) {
      rtm_mem_record_t *record = &memory->records[memory->count++];
      *record = parts[p]->records[r];
      snprintf(record->label, sizeof record->label, "%s%s", prefix[p], parts[p]->records[r].label);
      memory->total_bytes += record->bytes;
    }
  return RTM_OK;
}

const char *rtm_migration_backend(const rtm_migration_t *m) {
  return m->source.backend->name;
}

void rtm_migration_describe(const rtm_migration_t *m, char *text, size_t size) {
  text[0] = '\0';
  if (m->source.backend->describe) m->source.backend->describe(m->source.state, text, size);
}
