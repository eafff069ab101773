/* The isotropic physics of backend `cpu` (cpu_backend.c does sources, receivers, levels).
 *
 * Plain loops written for clarity; OpenMP splits the (z, y) rows of a step.
 * Stencil: 8th order (R = 4) along each axis,
 *   lap(p) = sum_a (c0 p + sum_{k=1..4} c_k (p[+k e_a] + p[-k e_a])) / h_a^2,
 * in float, each c_k term, each axis after x and the v^2 dt^2 lap term fused into the sum
 * they join (fmaf, exactly rounded: the GPU kernels' __fmaf_rn give the same floats),
 * on padded fields whose halos stay zero here (a wall at p = 0 one cell past each face;
 * MPI fills the z halos from the neighbours). With d = eta dt = eta_x + eta_y + eta_z:
 *   forward   p[n+1] = (2 p[n] - (1 - d) p[n-1] + v^2 dt^2 lap(p[n])) / (1 + d)
 *   backward  p[n-1] = (2 p[n] - (1 + d) p[n+1] + v^2 dt^2 lap(p[n])) / (1 - d)
 * The backward step is the forward one solved for p[n-1]: it undoes a forward step to
 * rounding where d = 0, but inside the damping layer it amplifies by (1 + d) / (1 - d) per
 * step, so reverse propagation over many steps must overwrite the layer (RTM boundary
 * saving) rather than trust it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_backend.h"
#include "rtm_status.h"

typedef struct {
  rtm_grid_t grid;
  float c[RTM_RADIUS + 1]; /* rtm_fd2_coeff in float */
  float inv_h2[3];         /* 1 / h_a^2 */
  rtm_allocation_t level[2];
  float *current, *previous; /* point into level[0] / level[1], swapped each step */
  rtm_allocation_t vp2dt2;   /* padded like the fields: v^2 dt^2 per cell */
  rtm_allocation_t eta;      /* eta dt profiles: x [nx], then y [ny], then z [nz global] */
  const float *eta_dt[3];
} iso_cpu_t;

static void iso_destroy(void *state) {
  iso_cpu_t *s = state;
  if (!s) return;
  rtm_mem_free(&s->eta);
  rtm_mem_free(&s->vp2dt2);
  rtm_mem_free(&s->level[1]);
  rtm_mem_free(&s->level[0]);
  free(s);
}

static int iso_create(const rtm_backend_desc_t *desc, void **state) {
  int status = RTM_OK;
  iso_cpu_t *s = NULL;
  *state = NULL;
  s = calloc(1, sizeof *s);
  if (!s) RTM_FAIL(RTM_ERR_NOMEM, "backend cpu: out of memory for its state");
  s->grid = *desc->grid;
  const double dt_s = desc->dt_s;
  for (int k = 0; k <= RTM_RADIUS; ++k)
    s->c[k] = (float)rtm_fd2_coeff[k];
  for (int a = 0; a < 3; ++a)
    s->inv_h2[a] = (float)(1.0 / (s->grid.spacing_m[a] * s->grid.spacing_m[a]));

  const rtm_grid_t *g = &s->grid;
  const size_t field_bytes = g->padded_cells * sizeof(float);
  RTM_TRY(rtm_cpu_alloc(desc->ledger, field_bytes, "p.current", &s->level[0]));
  RTM_TRY(rtm_cpu_alloc(desc->ledger, field_bytes, "p.previous", &s->level[1]));
  s->current = s->level[0].ptr;
  s->previous = s->level[1].ptr;

  if (desc->medium_of) { /* the same v^2 dt^2, made by the state it belongs to */
    rtm_mem_borrow(&s->vp2dt2, &((const iso_cpu_t *)desc->medium_of)->vp2dt2);
  } else {
    RTM_TRY(rtm_cpu_alloc(desc->ledger, field_bytes, "model.vp2dt2", &s->vp2dt2));
    float *vp2dt2 = s->vp2dt2.ptr;
    const long nx = g->n[0], ny = g->n[1];
    for (long iz = 0; iz < g->nz_local; ++iz)
      for (long iy = 0; iy < ny; ++iy)
        for (long ix = 0; ix < nx; ++ix) {
          double v = desc->model->vp[(iz * ny + iy) * nx + ix];
          vp2dt2[rtm_grid_index(g, ix, iy, iz)] = (float)(v * v * dt_s * dt_s);
        }
  }
  RTM_TRY(rtm_cpu_copy_damping(desc, desc->ledger, &s->eta, s->eta_dt));
  *state = s;
  return RTM_OK;
fail:
  iso_destroy(s);
  return status;
}

/* One row of the update: q holds the other level on entry and the new one on exit, p the
 * centre level, v2 v^2 dt^2, eta_x the row's x profile; eta_y + eta_z are the row's (added
 * in that order after eta_x, as the formula reads). */
RTM_SIMD_CLONES static void iso_row(float *restrict q, const float *restrict p,
                                    const float *restrict v2, const float *restrict eta_x,
                                    float eta_y, float eta_z, float sign, long nx,
                                    const long stride[3], const float c[RTM_RADIUS + 1],
                                    const float inv_h2[3]) {
  RTM_OMP_SIMD
  for (long ix = 0; ix < nx; ++ix) {
    float lap = 0.0f;
    for (int a = 0; a < 3; ++a) {
      float d2 = c[0] * p[ix];
      for (int k = 1; k <= RTM_RADIUS; ++k)
        d2 = fmaf(c[k], p[ix + k * stride[a]] + p[ix - k * stride[a]], d2);
      /* x's term a product (fmaf(d2, h, +0) would turn a -0 into +0), then fused */
      lap = a == 0 ? d2 * inv_h2[0] : fmaf(d2, inv_h2[a], lap);
    }
    /* sd = +d forward, -d backward: negation is exact, so 1 - sd and 1 + sd are the
     * two formulas' factors bit for bit, and the loop has no branch (it vectorises) */
    const float sd = sign * (eta_x[ix] + eta_y + eta_z);
    q[ix] = fmaf(v2[ix], lap, 2.0f * p[ix] - (1.0f - sd) * q[ix]) / (1.0f + sd);
  }
}

/* Updates local planes [z_begin, z_end): `out` holds the other level (p[n-1] forward,
 * p[n+1] backward) on entry and the new level on exit; `centre` holds p[n]. */
static void iso_update(void *state, long z_begin, long z_end, rtm_direction_t direction) {
  const iso_cpu_t *s = state;
  /* Forward: centre p[it] = current, out = previous. Backward: centre p[it] = previous,
   * out = current (holding p[it+1]). Swapping afterwards is right for both. */
  const float *restrict centre = direction == RTM_FORWARD ? s->current : s->previous;
  float *restrict out = direction == RTM_FORWARD ? s->previous : s->current;
  const rtm_grid_t *g = &s->grid;
  const long nx = g->n[0], ny = g->n[1];
  const long stride[3] = {1, (long)g->stride_y, (long)g->stride_z};
  const float *restrict vp2dt2 = s->vp2dt2.ptr;
  const float *restrict eta_x = s->eta_dt[0];
  const float *restrict eta_y = s->eta_dt[1];
  const float *restrict eta_z = s->eta_dt[2] + g->z_offset;
  const float sign = direction == RTM_FORWARD ? 1.0f : -1.0f;
  float c[RTM_RADIUS + 1], inv_h2[3];
  memcpy(c, s->c, sizeof c);
  memcpy(inv_h2, s->inv_h2, sizeof inv_h2);

  RTM_OMP_ROWS
  for (long iz = z_begin; iz < z_end; ++iz) {
    for (long iy = 0; iy < ny; ++iy) {
      const size_t row = rtm_grid_index(g, 0, iy, iz);
      iso_row(out + row, centre + row, vp2dt2 + row, eta_x, eta_y[iy], eta_z[iz], sign, nx,
              stride, c, inv_h2);
    }
  }
}

static float *iso_level(void *state, rtm_field_t field, rtm_level_t level) {
  iso_cpu_t *s = state;
  if (field != RTM_FIELD_P) return NULL;
  return level == RTM_LEVEL_CURRENT ? s->current : s->previous;
}

static float *iso_damping(void *state) {
  return ((iso_cpu_t *)state)->eta.ptr;
}

static void iso_rotate(void *state) {
  iso_cpu_t *s = state;
  float *swap = s->current;
  s->current = s->previous;
  s->previous = swap;
}

const rtm_cpu_physics_t rtm_cpu_physics_iso = {
    .name = "iso",
    .field_count = 1,
    .create = iso_create,
    .update = iso_update,
    .level = iso_level,
    .rotate = iso_rotate,
    .damping = iso_damping,
    .destroy = iso_destroy,
};
