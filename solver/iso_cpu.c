/* Backend `cpu`: the isotropic reference propagator, the oracle of every GPU kernel.
 *
 * Plain loops written for clarity; OpenMP splits the (z, y) rows of a step.
 * Stencil: 8th order (R = 4) along each axis,
 *   lap(p) = sum_a (c0 p + sum_{k=1..4} c_k (p[+k e_a] + p[-k e_a])) / h_a^2,
 * on padded fields whose halos stay zero here (a wall at p = 0 one cell past each face;
 * MPI fills the z halos from the neighbours). With d = eta dt = eta_x + eta_y + eta_z:
 *   forward   p[n+1] = (2 p[n] - (1 - d) p[n-1] + v^2 dt^2 lap(p[n])) / (1 + d)
 *   backward  p[n-1] = (2 p[n] - (1 + d) p[n+1] + v^2 dt^2 lap(p[n])) / (1 - d)
 * The backward step is the forward one solved for p[n-1]: it undoes a forward step to
 * rounding where d = 0, but inside the damping layer it amplifies by (1 + d) / (1 - d) per
 * step, so reverse propagation over many steps must overwrite the layer (RTM boundary
 * saving) rather than trust it.
 *
 * Time levels. Before forward step `it` the state holds current = p[it], previous =
 * p[it-1]; the step writes p[it+1] over p[it-1] (each cell reads its old value first),
 * adds sample `it` of every source wavelet, records p[it+1] into trace column it + 1 and
 * swaps, leaving current = p[it+1], previous = p[it].
 * Backward step `it` is its exact inverse: from current = p[it+1], previous = p[it] it
 * writes p[it-1] over p[it+1], adds sample `it` of every wavelet (p[it+1] held + w[it], so
 * p[it-1] holds + w[it] as well), records p[it-1] into column it - 1 and swaps, leaving
 * current = p[it], previous = p[it-1]. Where the source taps lie outside the damping layer
 * a forward step followed by a backward step with the same `it` restores both levels.
 *
 * Split steps: EDGE_PLANES updates the first and last R local z planes (every plane when
 * nz_local <= 2R); INTERIOR updates the rest, then injects, records and rotates. Each cell
 * is computed by the same expression in both paths, so the split equals ALL bit for bit. */
#include <stdio.h>

#ifdef _OPENMP
#include <omp.h>
#endif
#include <stdlib.h>
#include <string.h>

#include "rtm_solver.h"
#include "rtm_status.h"

#ifdef _OPENMP
#define RTM_OMP_ROWS _Pragma("omp parallel for collapse(2) schedule(static)")
#else
#define RTM_OMP_ROWS
#endif

typedef struct {
  rtm_grid_t grid;
  rtm_mem_ledger_t *ledger;
  double dt_s;
  int steps;
  float c[RTM_RADIUS + 1]; /* rtm_fd2_coeff in float */
  float inv_h2[3];         /* 1 / h_a^2 */
  rtm_allocation_t level[2];
  float *current, *previous; /* point into level[0] / level[1], swapped each step */
  rtm_allocation_t vp2dt2;   /* padded like the fields: v^2 dt^2 per cell */
  rtm_allocation_t eta;      /* eta dt profiles: x [nx], then y [ny], then z [nz global] */
  const float *eta_dt[3];
  /* sources */
  int source_count, samples;
  rtm_allocation_t source_index, source_weight, wavelets;
  /* receivers */
  int receiver_count;
  rtm_allocation_t receiver_index, receiver_weight, traces;
} iso_cpu_t;

static int cpu_probe(char *why, size_t why_size) {
  (void)why;
  (void)why_size;
  return RTM_OK;
}

static int host_alloc(iso_cpu_t *s, size_t bytes, const char *label, rtm_allocation_t *out) {
  return rtm_mem_alloc("host", bytes, label, NULL, s->ledger, out);
}

/* Keeps an allocation when it is large enough (a new shot with as many points), else
 * replaces it. Host allocations come back zeroed; reused ones are zeroed here. */
static int host_realloc(iso_cpu_t *s, size_t bytes, const char *label, rtm_allocation_t *a) {
  if (a->ptr && a->bytes >= bytes) {
    memset(a->ptr, 0, a->bytes);
    return RTM_OK;
  }
  rtm_mem_free(a);
  return host_alloc(s, bytes, label, a);
}

static void cpu_destroy(void *state) {
  iso_cpu_t *s = state;
  if (!s) return;
  rtm_mem_free(&s->traces);
  rtm_mem_free(&s->receiver_weight);
  rtm_mem_free(&s->receiver_index);
  rtm_mem_free(&s->wavelets);
  rtm_mem_free(&s->source_weight);
  rtm_mem_free(&s->source_index);
  rtm_mem_free(&s->eta);
  rtm_mem_free(&s->vp2dt2);
  rtm_mem_free(&s->level[1]);
  rtm_mem_free(&s->level[0]);
  free(s);
}

static int cpu_create(const rtm_backend_desc_t *desc, void **state) {
  int status = RTM_OK;
  iso_cpu_t *s = NULL;
  *state = NULL;
  if (desc->config && desc->config->physics.equation != RTM_EQUATION_ISO)
    RTM_FAIL(RTM_ERR_UNSUPPORTED,
             "backend cpu: physics.equation = %s is not implemented yet (iso only)",
             desc->config->physics.equation == RTM_EQUATION_VTI ? "vti" : "tti");
  if (!desc->grid || !desc->model || !desc->model->vp || !(desc->dt_s > 0.0) || desc->steps < 0)
    RTM_FAIL(RTM_ERR_INTERNAL, "backend cpu: incomplete description (grid, model.vp, dt > 0, "
                               "steps >= 0 are required)");
  s = calloc(1, sizeof *s);
  if (!s) RTM_FAIL(RTM_ERR_NOMEM, "backend cpu: out of memory for its state");
  s->grid = *desc->grid;
  s->ledger = desc->ledger;
  s->dt_s = desc->dt_s;
  s->steps = desc->steps;
  for (int k = 0; k <= RTM_RADIUS; ++k)
    s->c[k] = (float)rtm_fd2_coeff[k];
  for (int a = 0; a < 3; ++a)
    s->inv_h2[a] = (float)(1.0 / (s->grid.spacing_m[a] * s->grid.spacing_m[a]));

  const rtm_grid_t *g = &s->grid;
  const size_t field_bytes = g->padded_cells * sizeof(float);
  RTM_TRY(host_alloc(s, field_bytes, "p.current", &s->level[0]));
  RTM_TRY(host_alloc(s, field_bytes, "p.previous", &s->level[1]));
  s->current = s->level[0].ptr;
  s->previous = s->level[1].ptr;

  RTM_TRY(host_alloc(s, field_bytes, "model.vp2dt2", &s->vp2dt2));
  float *vp2dt2 = s->vp2dt2.ptr;
  const long nx = g->n[0], ny = g->n[1];
  for (long iz = 0; iz < g->nz_local; ++iz)
    for (long iy = 0; iy < ny; ++iy)
      for (long ix = 0; ix < nx; ++ix) {
        double v = desc->model->vp[(iz * ny + iy) * nx + ix];
        vp2dt2[rtm_grid_index(g, ix, iy, iz)] = (float)(v * v * s->dt_s * s->dt_s);
      }

  const size_t profile_cells = (size_t)g->n[0] + (size_t)g->n[1] + (size_t)g->n[2];
  RTM_TRY(host_alloc(s, profile_cells * sizeof(float), "boundary.eta_dt", &s->eta));
  float *eta = s->eta.ptr;
  for (int a = 0; a < 3; ++a) {
    s->eta_dt[a] = eta;
    if (desc->boundary && desc->boundary->eta_dt[a])
      memcpy(eta, desc->boundary->eta_dt[a], (size_t)g->n[a] * sizeof(float));
    eta += g->n[a];
  }
  *state = s;
  return RTM_OK;
fail:
  cpu_destroy(s);
  return status;
}

static int copy_taps(iso_cpu_t *s, const rtm_points_t *points, const char *index_label,
                     const char *weight_label, rtm_allocation_t *index, rtm_allocation_t *weight) {
  int status = RTM_OK;
  const size_t taps = (size_t)points->count * RTM_POINT_TAPS;
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
  iso_cpu_t *s = state;
  if (samples < 0) RTM_FAIL(RTM_ERR_INTERNAL, "backend cpu: %d wavelet samples", samples);
  s->source_count = 0;
  RTM_TRY(copy_taps(s, points, "sources.tap_index", "sources.tap_weight", &s->source_index,
                    &s->source_weight));
  const size_t values = (size_t)points->count * (size_t)samples;
  RTM_TRY(host_realloc(s, values * sizeof(float), "sources.wavelets", &s->wavelets));
  if (values) memcpy(s->wavelets.ptr, wavelets, values * sizeof(float));
  s->source_count = points->count;
  s->samples = samples;
  return RTM_OK;
fail:
  return status;
}

static int cpu_set_receivers(void *state, const rtm_points_t *points) {
  int status = RTM_OK;
  iso_cpu_t *s = state;
  s->receiver_count = 0;
  RTM_TRY(copy_taps(s, points, "receivers.tap_index", "receivers.tap_weight", &s->receiver_index,
                    &s->receiver_weight));
  const size_t samples = (size_t)points->count * ((size_t)s->steps + 1);
  RTM_TRY(host_realloc(s, samples * sizeof(float), "traces.receivers", &s->traces));
  s->receiver_count = points->count;
  return RTM_OK;
fail:
  return status;
}

/* Updates local planes [z_begin, z_end): `out` holds the other level (p[n-1] forward,
 * p[n+1] backward) on entry and the new level on exit; `centre` holds p[n]. */
static void update_planes(const iso_cpu_t *s, const float *restrict centre, float *restrict out,
                          long z_begin, long z_end, rtm_direction_t direction) {
  const rtm_grid_t *g = &s->grid;
  const long nx = g->n[0], ny = g->n[1];
  const long stride[3] = {1, (long)g->stride_y, (long)g->stride_z};
  const float *restrict vp2dt2 = s->vp2dt2.ptr;
  const float *restrict eta_x = s->eta_dt[0];
  const float *restrict eta_y = s->eta_dt[1];
  const float *restrict eta_z = s->eta_dt[2] + g->z_offset;
  const int forward = direction == RTM_FORWARD;
  float c[RTM_RADIUS + 1], inv_h2[3];
  memcpy(c, s->c, sizeof c);
  memcpy(inv_h2, s->inv_h2, sizeof inv_h2);

  RTM_OMP_ROWS
  for (long iz = z_begin; iz < z_end; ++iz) {
    for (long iy = 0; iy < ny; ++iy) {
      const size_t row = rtm_grid_index(g, 0, iy, iz);
      const float *restrict p = centre + row;
      const float *restrict v2 = vp2dt2 + row;
      float *restrict q = out + row;
      for (long ix = 0; ix < nx; ++ix) {
        float lap = 0.0f;
        for (int a = 0; a < 3; ++a) {
          float d2 = c[0] * p[ix];
          for (int k = 1; k <= RTM_RADIUS; ++k)
            d2 += c[k] * (p[ix + k * stride[a]] + p[ix - k * stride[a]]);
          lap += d2 * inv_h2[a];
        }
        const float d = eta_x[ix] + eta_y[iy] + eta_z[iz];
        if (forward)
          q[ix] = (2.0f * p[ix] - (1.0f - d) * q[ix] + v2[ix] * lap) / (1.0f + d);
        else
          q[ix] = (2.0f * p[ix] - (1.0f + d) * q[ix] + v2[ix] * lap) / (1.0f - d);
      }
    }
  }
}

static void inject(const iso_cpu_t *s, float *field, int it) {
  if (it < 0 || it >= s->samples) return; /* the wavelets have ended */
  const size_t *index = s->source_index.ptr;
  const float *weight = s->source_weight.ptr;
  const float *wavelets = s->wavelets.ptr;
  for (int src = 0; src < s->source_count; ++src) {
    const float w = wavelets[(size_t)src * (size_t)s->samples + (size_t)it];
    for (int t = 0; t < RTM_POINT_TAPS; ++t) {
      const size_t k = (size_t)src * RTM_POINT_TAPS + (size_t)t;
      field[index[k]] += weight[k] * w;
    }
  }
}

static void record(iso_cpu_t *s, const float *field, int column) {
  if (column < 0 || column > s->steps) return;
  const size_t *index = s->receiver_index.ptr;
  const float *weight = s->receiver_weight.ptr;
  float *traces = s->traces.ptr;
  for (int r = 0; r < s->receiver_count; ++r) {
    float sum = 0.0f;
    for (int t = 0; t < RTM_POINT_TAPS; ++t) {
      const size_t k = (size_t)r * RTM_POINT_TAPS + (size_t)t;
      sum += weight[k] * field[index[k]];
    }
    traces[(size_t)r * ((size_t)s->steps + 1) + (size_t)column] = sum;
  }
}

static int cpu_step(void *state, int it, rtm_region_t region, rtm_direction_t direction) {
  iso_cpu_t *s = state;
  if (direction != RTM_FORWARD && direction != RTM_BACKWARD) {
    rtm_log_error("backend cpu: step direction %d is neither forward nor backward", (int)direction);
    return RTM_ERR_INTERNAL;
  }
  /* Forward: centre p[it] = current, out = previous. Backward: centre p[it] = previous,
   * out = current (holding p[it+1]). Swapping afterwards is right for both. */
  const float *centre = direction == RTM_FORWARD ? s->current : s->previous;
  float *out = direction == RTM_FORWARD ? s->previous : s->current;
  const long nz = s->grid.nz_local, R = RTM_RADIUS;
  const int edges_only = nz <= 2 * R; /* every plane touches a z neighbour's halo */

  switch (region) {
  case RTM_REGION_ALL: update_planes(s, centre, out, 0, nz, direction); break;
  case RTM_REGION_EDGE_PLANES:
    if (edges_only) {
      update_planes(s, centre, out, 0, nz, direction);
    } else {
      update_planes(s, centre, out, 0, R, direction);
      update_planes(s, centre, out, nz - R, nz, direction);
    }
    return RTM_OK;
  case RTM_REGION_INTERIOR:
    if (!edges_only) update_planes(s, centre, out, R, nz - R, direction);
    break;
  default:
    rtm_log_error("backend cpu: unknown step region %d", (int)region);
    return RTM_ERR_INTERNAL;
  }
  inject(s, out, it);
  record(s, out, direction == RTM_FORWARD ? it + 1 : it - 1);
  float *swap = s->current;
  s->current = s->previous;
  s->previous = swap;
  return RTM_OK;
}

static float *level_of(iso_cpu_t *s, rtm_field_t field, rtm_level_t level) {
  if (field != RTM_FIELD_P) {
    rtm_log_error("backend cpu: the iso equation has no field q");
    return NULL;
  }
  if (level != RTM_LEVEL_CURRENT && level != RTM_LEVEL_PREVIOUS) {
    rtm_log_error("backend cpu: unknown time level %d", (int)level);
    return NULL;
  }
  return level == RTM_LEVEL_CURRENT ? s->current : s->previous;
}

static int cpu_read_field(void *state, rtm_field_t field, rtm_level_t level, float *dense) {
  const float *padded = level_of(state, field, level);
  if (!padded) return field != RTM_FIELD_P ? RTM_ERR_UNSUPPORTED : RTM_ERR_INTERNAL;
  rtm_grid_pack(&((iso_cpu_t *)state)->grid, padded, dense);
  return RTM_OK;
}

static int cpu_write_field(void *state, rtm_field_t field, rtm_level_t level, const float *dense) {
  float *padded = level_of(state, field, level);
  if (!padded) return field != RTM_FIELD_P ? RTM_ERR_UNSUPPORTED : RTM_ERR_INTERNAL;
  rtm_grid_unpack(&((iso_cpu_t *)state)->grid, dense, padded);
  return RTM_OK;
}

static int cpu_read_traces(void *state, float *traces) {
  iso_cpu_t *s = state;
  const size_t values = (size_t)s->receiver_count * ((size_t)s->steps + 1);
  if (values) memcpy(traces, s->traces.ptr, values * sizeof(float));
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
    .description = "reference propagator in C (OpenMP over rows), iso only",
    .probe = cpu_probe,
    .create = cpu_create,
    .set_sources = cpu_set_sources,
    .set_receivers = cpu_set_receivers,
    .step = cpu_step,
    .read_field = cpu_read_field,
    .write_field = cpu_write_field,
    .read_traces = cpu_read_traces,
    .synchronize = NULL,
    .describe = cpu_describe,
    .destroy = cpu_destroy,
};
