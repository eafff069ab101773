/* Backend `cpu`: the reference propagators, the oracle of every GPU kernel.
 *
 * One table for every equation. create picks the physics from physics.equation (iso_cpu.c,
 * or tti_cpu.c for vti and tti); this file does what they share.
 *
 * Time levels. Before forward step `it` the state holds current = f[it], previous =
 * f[it-1] for every field f; the physics writes f[it+1] over f[it-1], then sample `it` of
 * every source wavelet is added to each field of the new level (p, and q for vti/tti),
 * f[it+1] of each recorded field (set_receivers: p, q or both) goes into trace column
 * it + 1, and the levels swap, leaving current = f[it+1], previous = f[it].
 * Backward step `it` is its exact inverse: from current = f[it+1], previous = f[it] it
 * writes f[it-1] over f[it+1], adds sample `it` of every wavelet (f[it+1] held + w[it], so
 * f[it-1] holds + w[it] as well), records f[it-1] into column it - 1 and swaps, leaving
 * current = f[it], previous = f[it-1]. Where the source taps lie outside the damping layer
 * a forward step followed by a backward step with the same `it` restores both levels.
 * set_damping rewrites the physics' damping profiles: none (NULL) for a backward rebuild,
 * then the propagator's own again.
 *
 * Split steps: EDGE_PLANES updates the first and last R local z planes (every plane when
 * nz_local <= 2R) and injects at the taps there; INTERIOR updates the rest and injects at
 * its taps, then records and rotates. Each cell gets its taps' samples once, after its
 * update, either way. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "cpu_backend.h"
#include "rtm_backend_cpu.h"
#include "rtm_mpi.h"
#include "rtm_status.h"

typedef struct {
  const rtm_cpu_physics_t *physics;
  void *fields; /* the physics' state */
  rtm_grid_t grid;
  rtm_mem_ledger_t *ledger;
  int steps;
  /* sources */
  int source_count, samples, source_taps; /* taps a point (rtm_points_t) */
  rtm_allocation_t source_index, source_weight, wavelets;
  /* receivers: traces [count][steps + 1] of each field in trace_fields, indexed by field */
  int receiver_count, receiver_taps, receiver_taps_per_plane;
  unsigned trace_fields;
  rtm_allocation_t receiver_index, receiver_weight, traces[2];
} cpu_state_t;

int rtm_cpu_alloc(rtm_mem_ledger_t *ledger, size_t bytes, const char *label,
                  rtm_allocation_t *out) {
  return rtm_mem_alloc("host", bytes, label, NULL, ledger, out);
}

void rtm_cpu_fill_damping(const rtm_grid_t *grid, const rtm_boundary_t *boundary, float *profiles) {
  for (int a = 0; a < 3; ++a) {
    const size_t bytes = (size_t)grid->n[a] * sizeof(float);
    if (boundary && boundary->eta_dt[a])
      memcpy(profiles, boundary->eta_dt[a], bytes);
    else
      memset(profiles, 0, bytes);
    profiles += grid->n[a];
  }
}

int rtm_cpu_copy_damping(const rtm_backend_desc_t *desc, rtm_mem_ledger_t *ledger,
                         rtm_allocation_t *profiles, const float *eta_dt[3]) {
  int status = RTM_OK;
  const rtm_grid_t *g = desc->grid;
  const size_t cells = (size_t)g->n[0] + (size_t)g->n[1] + (size_t)g->n[2];
  RTM_TRY(rtm_cpu_alloc(ledger, cells * sizeof(float), "boundary.eta_dt", profiles));
  float *eta = profiles->ptr;
  rtm_cpu_fill_damping(g, desc->boundary, eta);
  for (int a = 0; a < 3; ++a) {
    eta_dt[a] = eta;
    eta += g->n[a];
  }
fail:
  return status;
}

/* Keeps an allocation when it is large enough (a new shot with as many points), else
 * replaces it. Host allocations come back zeroed; reused ones are zeroed here. */
static int host_realloc(cpu_state_t *s, size_t bytes, const char *label, rtm_allocation_t *a) {
  if (a->ptr && a->bytes >= bytes) {
    memset(a->ptr, 0, a->bytes);
    return RTM_OK;
  }
  rtm_mem_free(a);
  return rtm_cpu_alloc(s->ledger, bytes, label, a);
}

static int cpu_probe(char *why, size_t why_size) {
  (void)why;
  (void)why_size;
  return RTM_OK;
}

static void cpu_destroy(void *state) {
  cpu_state_t *s = state;
  if (!s) return;
  rtm_mem_free(&s->traces[RTM_FIELD_Q]);
  rtm_mem_free(&s->traces[RTM_FIELD_P]);
  rtm_mem_free(&s->receiver_weight);
  rtm_mem_free(&s->receiver_index);
  rtm_mem_free(&s->wavelets);
  rtm_mem_free(&s->source_weight);
  rtm_mem_free(&s->source_index);
  if (s->physics && s->fields) s->physics->destroy(s->fields);
  free(s);
}

/* Ranks of one node whose OpenMP threads together outnumber its cores take turns on them,
 * each waiting in the halo exchange for a rank that is not running: a 40^3 migrate of 3
 * ranks on 2 cores took 78 s, 1.1 s with one thread a rank (issue 32, D9). Without
 * OMP_NUM_THREADS each rank takes its share of the cores (app/main.c); with a value that
 * oversubscribes them, said once, at the start, naming the fix; nothing is changed. */
static void warn_oversubscribed(const rtm_grid_t *grid) {
#ifdef _OPENMP
  const int ranks = rtm_mpi_local_size(grid->mpi), threads = omp_get_max_threads();
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  if (ranks < 2 || cores < 1 || (long)ranks * threads <= cores) return;
  const long each = cores / ranks > 1 ? cores / ranks : 1;
  rtm_log_warning("%d ranks on this node x %d OpenMP threads each = %ld threads on %ld cores: "
                  "they take turns, and the run can be many times slower; set "
                  "OMP_NUM_THREADS=%ld (mpirun -x OMP_NUM_THREADS=%ld)",
                  ranks, threads, (long)ranks * threads, cores, each, each);
#else
  (void)grid;
#endif
}

static int cpu_create(const rtm_backend_desc_t *desc, void **state) {
  int status = RTM_OK;
  cpu_state_t *s = NULL;
  *state = NULL;
  if (!desc->grid || !desc->model || !desc->model->vp || !(desc->dt_s > 0.0) || desc->steps < 0)
    RTM_FAIL(RTM_ERR_INTERNAL, "backend cpu: incomplete description (grid, model.vp, dt > 0, "
                               "steps >= 0 are required)");
  const rtm_equation_t equation = desc->config ? desc->config->physics.equation : RTM_EQUATION_ISO;
  s = calloc(1, sizeof *s);
  if (!s) RTM_FAIL(RTM_ERR_NOMEM, "backend cpu: out of memory for its state");
  switch (equation) {
  case RTM_EQUATION_ISO: s->physics = &rtm_cpu_physics_iso; break;
  case RTM_EQUATION_VTI:
  case RTM_EQUATION_TTI: s->physics = &rtm_cpu_physics_tti; break;
  default: RTM_FAIL(RTM_ERR_INTERNAL, "backend cpu: unknown physics.equation %d", (int)equation);
  }
  /* the physics' own state is what shares its medium */
  const cpu_state_t *medium_of = desc->medium_of;
  if (medium_of && medium_of->physics != s->physics)
    RTM_FAIL(RTM_ERR_INTERNAL, "backend cpu: a medium shared between two equations");
  rtm_backend_desc_t physics_desc = *desc;
  physics_desc.medium_of = medium_of ? medium_of->fields : NULL;
  warn_oversubscribed(desc->grid);
  s->grid = *desc->grid;
  s->ledger = desc->ledger;
  s->steps = desc->steps;
  status = s->physics->create(&physics_desc, &s->fields);
  if (status != RTM_OK) {
    rtm_log_error("backend cpu: setting up physics.equation = %s failed",
                  rtm_equation_name(equation));
    goto fail;
  }
  *state = s;
  return RTM_OK;
fail:
  cpu_destroy(s);
  return status;
}

static int copy_taps(cpu_state_t *s, const rtm_points_t *points, const char *index_label,
                     const char *weight_label, rtm_allocation_t *index, rtm_allocation_t *weight) {
  int status = RTM_OK;
  const size_t taps = (size_t)points->count * (size_t)points->taps;
  RTM_TRY(host_realloc(s, taps * sizeof(size_t), index_label, index));
  RTM_TRY(host_realloc(s, taps * sizeof(float), weight_label, weight));
  for (size_t t = 0; t < taps; ++t) {
    if (points->tap_weight[t] != 0.0f && points->tap_index[t] >= s->grid.padded_cells)
      RTM_FAIL(RTM_ERR_INTERNAL, "backend cpu: tap index %zu outside the field (%zu cells)",
               points->tap_index[t], s->grid.padded_cells);
  }
  if (taps) {
    memcpy(index->ptr, points->tap_index, taps * sizeof(size_t));
    memcpy(weight->ptr, points->tap_weight, taps * sizeof(float));
  }
  return RTM_OK;
fail:
  return status;
}

static int cpu_set_sources(void *state, const rtm_points_t *points, const float *wavelets,
                           int samples) {
  int status = RTM_OK;
  cpu_state_t *s = state;
  if (samples < 0) RTM_FAIL(RTM_ERR_INTERNAL, "backend cpu: %d wavelet samples", samples);
  s->source_count = 0;
  RTM_TRY(copy_taps(s, points, "sources.tap_index", "sources.tap_weight", &s->source_index,
                    &s->source_weight));
  const size_t values = (size_t)points->count * (size_t)samples;
  RTM_TRY(host_realloc(s, values * sizeof(float), "sources.wavelets", &s->wavelets));
  if (values) memcpy(s->wavelets.ptr, wavelets, values * sizeof(float));
  s->source_count = points->count;
  s->source_taps = points->taps;
  s->samples = samples;
  return RTM_OK;
fail:
  return status;
}

static int cpu_set_receivers(void *state, const rtm_points_t *points, unsigned fields) {
  int status = RTM_OK;
  cpu_state_t *s = state;
  static const char *const trace_label[2] = {"traces.p", "traces.q"};
  s->receiver_count = 0;
  s->trace_fields = 0;
  if (fields & ~(RTM_FIELD_BIT(RTM_FIELD_P) | RTM_FIELD_BIT(RTM_FIELD_Q)))
    RTM_FAIL(RTM_ERR_INTERNAL, "backend cpu: receivers asked to record unknown fields (mask %#x)",
             fields);
  if ((fields & RTM_FIELD_BIT(RTM_FIELD_Q)) &&
      !s->physics->level(s->fields, RTM_FIELD_Q, RTM_LEVEL_CURRENT))
    RTM_FAIL(RTM_ERR_INTERNAL, "backend cpu: receivers cannot record q: the %s equation has no q",
             s->physics->name);
  RTM_TRY(copy_taps(s, points, "receivers.tap_index", "receivers.tap_weight", &s->receiver_index,
                    &s->receiver_weight));
  const size_t samples = (size_t)points->count * ((size_t)s->steps + 1);
  for (int f = RTM_FIELD_P; f <= RTM_FIELD_Q; ++f) {
    if (fields & RTM_FIELD_BIT(f))
      RTM_TRY(host_realloc(s, samples * sizeof(float), trace_label[f], &s->traces[f]));
    else
      rtm_mem_free(&s->traces[f]); /* a shot before may have asked for it */
  }
  s->receiver_count = points->count;
  s->receiver_taps = points->taps;
  s->receiver_taps_per_plane = points->taps_per_plane;
  s->trace_fields = fields;
  return RTM_OK;
fail:
  return status;
}

/* Sample `it` of every source at its taps in local planes [z_begin, z_end) (the planes a
 * split step has just updated). */
static void inject(const cpu_state_t *s, float *field, int it, long z_begin, long z_end) {
  if (it < 0 || it >= s->samples || z_begin >= z_end) return; /* the wavelets have ended */
  const size_t *index = s->source_index.ptr;
  const float *weight = s->source_weight.ptr;
  const float *wavelets = s->wavelets.ptr;
  const size_t begin = (size_t)(z_begin + RTM_RADIUS) * s->grid.stride_z;
  const size_t end = (size_t)(z_end + RTM_RADIUS) * s->grid.stride_z;
  for (int src = 0; src < s->source_count; ++src) {
    const float w = wavelets[(size_t)src * (size_t)s->samples + (size_t)it];
    for (int t = 0; t < s->source_taps; ++t) {
      const size_t k = (size_t)src * (size_t)s->source_taps + (size_t)t;
      if (weight[k] != 0.0f && index[k] >= begin && index[k] < end)
        field[index[k]] += weight[k] * w;
    }
  }
}

static void record(cpu_state_t *s, const float *field, float *traces, int column) {
  if (column < 0 || column > s->steps) return;
  const size_t *index = s->receiver_index.ptr;
  const float *weight = s->receiver_weight.ptr;
  const int taps = s->receiver_taps, per_plane = s->receiver_taps_per_plane;
  for (int r = 0; r < s->receiver_count; ++r) {
    /* the taps of each z plane summed, then the planes in order: ranks that own the planes
     * of a trilinear point (two) sum to the one-rank value (rtm_mpi.h); taps of weight 0 (in
     * another rank's planes) are not read, as on cuda */
    float sum = 0.0f;
    for (int plane = 0; plane < taps / per_plane; ++plane) {
      float plane_sum = 0.0f;
      for (int t = plane * per_plane; t < (plane + 1) * per_plane; ++t) {
        const size_t k = (size_t)r * (size_t)taps + (size_t)t;
        if (weight[k] != 0.0f) plane_sum += weight[k] * field[index[k]];
      }
      sum += plane_sum;
    }
    traces[(size_t)r * ((size_t)s->steps + 1) + (size_t)column] = sum;
  }
}

static int cpu_step(void *state, int it, rtm_region_t region, rtm_direction_t direction) {
  cpu_state_t *s = state;
  if (direction != RTM_FORWARD && direction != RTM_BACKWARD) {
    rtm_log_error("backend cpu: step direction %d is neither forward nor backward", (int)direction);
    return RTM_ERR_INTERNAL;
  }
  const rtm_cpu_physics_t *physics = s->physics;
  const long nz = s->grid.nz_local;
  int low_end = 0, high_begin = 0; /* the edge planes next to the neighbours, and the rest */
  rtm_slab_edges(&s->grid, &low_end, &high_begin);

  /* the new level: forward overwrote previous, backward overwrote current */
  const rtm_level_t written = direction == RTM_FORWARD ? RTM_LEVEL_PREVIOUS : RTM_LEVEL_CURRENT;
  switch (region) {
  case RTM_REGION_ALL:
    physics->update(s->fields, 0, nz, direction);
    for (int f = 0; f < physics->field_count; ++f)
      inject(s, physics->level(s->fields, (rtm_field_t)f, written), it, 0, nz);
    break;
  case RTM_REGION_EDGE_PLANES:
    /* the taps in the edge planes get sample it now, before the planes leave (MPI) */
    if (low_end > 0) physics->update(s->fields, 0, low_end, direction);
    if (high_begin < nz) physics->update(s->fields, high_begin, nz, direction);
    for (int f = 0; f < physics->field_count; ++f) {
      float *level = physics->level(s->fields, (rtm_field_t)f, written);
      if (low_end > 0) inject(s, level, it, 0, low_end);
      if (high_begin < nz) inject(s, level, it, high_begin, nz);
    }
    return RTM_OK;
  case RTM_REGION_INTERIOR:
    if (high_begin > low_end) {
      physics->update(s->fields, low_end, high_begin, direction);
      for (int f = 0; f < physics->field_count; ++f)
        inject(s, physics->level(s->fields, (rtm_field_t)f, written), it, low_end, high_begin);
    }
    break;
  default:
    rtm_log_error("backend cpu: unknown step region %d", (int)region);
    return RTM_ERR_INTERNAL;
  }
  for (int f = RTM_FIELD_P; f <= RTM_FIELD_Q; ++f)
    if (s->trace_fields & RTM_FIELD_BIT(f))
      record(s, physics->level(s->fields, (rtm_field_t)f, written), s->traces[f].ptr,
             direction == RTM_FORWARD ? it + 1 : it - 1);
  physics->rotate(s->fields);
  return RTM_OK;
}

static float *level_of(cpu_state_t *s, rtm_field_t field, rtm_level_t level, int *status) {
  float *padded = NULL;
  if (level != RTM_LEVEL_CURRENT && level != RTM_LEVEL_PREVIOUS) {
    rtm_log_error("backend cpu: unknown time level %d", (int)level);
    *status = RTM_ERR_INTERNAL;
    return NULL;
  }
  if (field == RTM_FIELD_P || field == RTM_FIELD_Q)
    padded = s->physics->level(s->fields, field, level);
  if (!padded) {
    rtm_log_error("backend cpu: the %s equation has no field %s", s->physics->name,
                  field == RTM_FIELD_Q ? "q" : "of that number");
    *status = RTM_ERR_UNSUPPORTED;
  }
  return padded;
}

static int cpu_read_field(void *state, rtm_field_t field, rtm_level_t level, float *dense) {
  int status = RTM_OK;
  const float *padded = level_of(state, field, level, &status);
  if (padded) rtm_grid_pack(&((cpu_state_t *)state)->grid, padded, dense);
  return status;
}

static int cpu_write_field(void *state, rtm_field_t field, rtm_level_t level, const float *dense) {
  int status = RTM_OK;
  float *padded = level_of(state, field, level, &status);
  if (padded) rtm_grid_unpack(&((cpu_state_t *)state)->grid, dense, padded);
  return status;
}

static int cpu_view_field(void *state, rtm_field_t field, rtm_level_t level,
                          rtm_field_view_t *view) {
  int status = RTM_OK;
  *view = (rtm_field_view_t){level_of(state, field, level, &status), -1};
  return status;
}

static int cpu_reset(void *state) {
  cpu_state_t *s = state;
  const rtm_level_t levels[2] = {RTM_LEVEL_CURRENT, RTM_LEVEL_PREVIOUS};
  for (int f = 0; f < s->physics->field_count; ++f)
    for (int l = 0; l < 2; ++l)
      memset(s->physics->level(s->fields, (rtm_field_t)f, levels[l]), 0,
             s->grid.padded_cells * sizeof(float));
  for (int f = 0; f < 2; ++f)
    if (s->traces[f].ptr) memset(s->traces[f].ptr, 0, s->traces[f].bytes);
  return RTM_OK;
}

static int cpu_set_damping(void *state, const rtm_boundary_t *boundary) {
  cpu_state_t *s = state;
  rtm_cpu_fill_damping(&s->grid, boundary, s->physics->damping(s->fields));
  return RTM_OK;
}

static int cpu_read_traces(void *state, rtm_field_t field, float *traces) {
  cpu_state_t *s = state;
  if ((field != RTM_FIELD_P && field != RTM_FIELD_Q) || !(s->trace_fields & RTM_FIELD_BIT(field))) {
    rtm_log_error("backend cpu: traces of %s were not recorded (set_receivers did not ask for "
                  "them)",
                  rtm_field_name(field));
    return RTM_ERR_INTERNAL;
  }
  const size_t values = (size_t)s->receiver_count * ((size_t)s->steps + 1);
  if (values) memcpy(traces, s->traces[field].ptr, values * sizeof(float));
  return RTM_OK;
}

static void cpu_describe(void *state, char *text, size_t size) {
  (void)state;
#ifdef _OPENMP
  snprintf(text, size, "host CPU, %d OpenMP threads", omp_get_max_threads());
#else
  snprintf(text, size, "host CPU, 1 thread (built without OpenMP)");
#endif
}

const rtm_backend_t rtm_backend_cpu = {
    .name = "cpu",
    .description = "reference propagator in C (OpenMP over rows): iso, vti, tti",
    .probe = cpu_probe,
    .create = cpu_create,
    .set_sources = cpu_set_sources,
    .set_receivers = cpu_set_receivers,
    .step = cpu_step,
    .read_field = cpu_read_field,
    .write_field = cpu_write_field,
    .view_field = cpu_view_field,
    .copy_planes = NULL, /* the fields are host memory: view_field */
    .wait_copies = NULL,
    .exchange_planes = NULL,
    .reset = cpu_reset,
    .set_damping = cpu_set_damping,
    .read_traces = cpu_read_traces,
    .synchronize = NULL,
    .describe = cpu_describe,
    .destroy = cpu_destroy,
};
