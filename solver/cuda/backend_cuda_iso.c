/* Backend `cuda`, physics.equation = iso: what the isotropic z-marching kernels of
 * iso_cuda.cu need beyond what every equation shares (backend_cuda_common.c,
 * backend_cuda_impl.h).
 *
 * Device state of its own: v^2 dt^2 padded like p (memory.model strategy), and in host
 * memory the stencil and 1 / h^2 in float. iso has no q: p alone is stepped, injected and
 * recorded. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_cuda_impl.h"
#include "iso_cuda.h"
#include "rtm_cuda_check.h"
#include "rtm_backend.h"
#include "rtm_status.h"

typedef struct {
  rtm_cuda_backend_state_t common; /* first: the common code's view of this state */
  rtm_allocation_t v2dt2;
  rtm_iso_tensor_map_t v2dt2_map; /* tma: v^2 dt^2, tile boxes */
  float stencil[RTM_RADIUS + 1];  /* the cpu reference's float coefficients */
  float inv_h2[3];
} iso_state_t;
_Static_assert(offsetof(iso_state_t, common) == 0, "the common state must come first");

static int iso_prepare(rtm_cuda_backend_state_t *b, const rtm_config_t *cfg) {
  (void)cfg; /* kernel.* is in b->kernel already, the iso launchers' own shape; the table's
                signature carries cfg for vti/tti's equation and model precision */
  return rtm_iso_cuda_prepare(&b->kernel, b->device);
}

/* Names each field in the message. */
static int iso_check_fits(const rtm_cuda_backend_state_t *b) {
  const size_t field_bytes = b->grid.padded_cells * sizeof(float);
  const size_t wave = rtm_cuda_backend_taken_bytes(b->wavefield_strategy, field_bytes);
  /* a medium borrowed from another state takes nothing more */
  const size_t model =
      b->medium_of ? 0 : rtm_cuda_backend_taken_bytes(b->model_strategy, field_bytes);
  char volumes[512];
  snprintf(volumes, sizeof volumes,
           "p[n] %.2f GB (%s), p[n-1] %.2f GB (%s), v^2 dt^2 %.2f GB (%s%s)", wave / 1e9,
           b->wavefield_strategy, wave / 1e9, b->wavefield_strategy, model / 1e9, b->model_strategy,
           b->medium_of ? ", shared" : "");
  return rtm_cuda_backend_check_fits(b, RTM_CUDA_LEVELS * wave + model, "", volumes, "");
}

typedef struct {
  const rtm_grid_t *grid;
  const rtm_model_t *model;
  double dt_s;
} v2dt2_fill_t;

/* Planes [z_first, z_first + count) of v^2 dt^2 into a staging block, over the threads. */
static int fill_v2dt2(void *context, long z_first, long count, unsigned char *const *blocks) {
  const v2dt2_fill_t *f = context;
  const rtm_grid_t *g = f->grid;
  const long nx = g->n[0], ny = g->n[1];
  const double dt_s = f->dt_s;
#pragma omp parallel for collapse(2) schedule(static)
  for (long iz = 0; iz < count; ++iz)
    for (long iy = 0; iy < ny; ++iy) {
      const float *vp = f->model->vp + ((size_t)(z_first + iz) * ny + iy) * nx;
      float *row = (float *)blocks[0] + (size_t)iz * g->stride_z +
                   (RTM_RADIUS + (size_t)iy) * g->stride_y + RTM_RADIUS;
      for (long ix = 0; ix < nx; ++ix) { /* the cpu reference's expression, bit for bit */
        const double v = vp[ix];
        row[ix] = (float)(v * v * dt_s * dt_s);
      }
    }
  return RTM_OK;
}

/* v^2 dt^2 into the padded layout (rtm_cuda_backend_upload_planes). */
static int upload_model(iso_state_t *s, const rtm_model_t *model, double dt_s) {
  v2dt2_fill_t fill = {&s->common.grid, model, dt_s};
  rtm_allocation_t *dst[1] = {&s->v2dt2};
  return rtm_cuda_backend_upload_planes(&s->common, 1, sizeof(float), dst, fill_v2dt2, &fill);
}

static int iso_fill(rtm_cuda_backend_state_t *b, const rtm_backend_desc_t *desc) {
  int status = RTM_OK;
  iso_state_t *s = (iso_state_t *)b;
  if (b->medium_of) { /* the same v^2 dt^2, uploaded by the state it belongs to */
    rtm_mem_borrow(&s->v2dt2, &((const iso_state_t *)b->medium_of)->v2dt2);
  } else {
    RTM_TRY(rtm_cuda_backend_alloc(b, b->model_strategy, b->grid.padded_cells * sizeof(float),
                                   "v2dt2", &s->v2dt2));
    RTM_TRY(upload_model(s, desc->model, desc->dt_s));
  }
  RTM_TRY(rtm_cuda_backend_damping(b, desc->boundary));
  for (int a = 0; a < 3; ++a)
    s->inv_h2[a] = (float)(1.0 / (b->grid.spacing_m[a] * b->grid.spacing_m[a]));
  for (int k = 0; k <= RTM_RADIUS; ++k)
    s->stencil[k] = (float)rtm_fd2_coeff[k];
  if (b->kernel.halo == RTM_HALO_TMA) {
    RTM_TRY(rtm_cuda_backend_level_maps(b));
    RTM_TRY(rtm_iso_cuda_cell_map(&b->grid, s->v2dt2.ptr, &b->kernel, &s->v2dt2_map));
  }
  RTM_TRY(rtm_cuda_backend_prefetch(b, &s->v2dt2, 1));
  return RTM_OK;
fail:
  return status;
}

static int iso_reshape(rtm_cuda_backend_state_t *b) {
  int status = RTM_OK;
  iso_state_t *s = (iso_state_t *)b;
  RTM_TRY(rtm_iso_cuda_prepare(&b->kernel, b->device));
  if (b->kernel.halo == RTM_HALO_TMA) {
    RTM_TRY(rtm_cuda_backend_level_maps(b));
    RTM_TRY(rtm_iso_cuda_cell_map(&b->grid, s->v2dt2.ptr, &b->kernel, &s->v2dt2_map));
  }
fail:
  return status;
}

static void iso_release(rtm_cuda_backend_state_t *b) {
  rtm_cuda_backend_release(&((iso_state_t *)b)->v2dt2);
}

static int iso_launch(rtm_cuda_backend_state_t *b, int centre, int backward, int z_begin, int z_end,
                      cudaStream_t stream) {
  const iso_state_t *s = (const iso_state_t *)b;
  rtm_iso_fields_t f = {
      .p_other = b->level[RTM_FIELD_P][1 - centre].ptr,
      .p = b->level[RTM_FIELD_P][centre].ptr,
      .v2dt2 = s->v2dt2.ptr,
      .eta_dt = {b->eta_dt[0].ptr, b->eta_dt[1].ptr, b->eta_dt[2].ptr},
  };
  if (b->kernel.halo == RTM_HALO_TMA) {
    f.p_map = &b->map[RTM_FIELD_P][centre];
    f.p_other_map = &b->cell_map[RTM_FIELD_P][1 - centre];
    f.v2dt2_map = &s->v2dt2_map;
  }
  memcpy(f.stencil, s->stencil, sizeof f.stencil);
  memcpy(f.inv_h2, s->inv_h2, sizeof f.inv_h2);
  f.level_copy = b->level_copy;
  f.image = b->step_image_set ? &b->step_image : NULL;
  return rtm_iso_cuda_step(&b->grid, &b->kernel, &f, backward, z_begin, z_end, stream);
}

/* Every iso shape has the imaging instances (iso_cuda.cu's EXTRA_IMAGE). */
static int iso_images_in_step(const rtm_cuda_backend_state_t *b) {
  (void)b;
  return 1;
}

static int iso_check_recorded(unsigned fields) {
  if (!(fields & ~RTM_FIELD_BIT(RTM_FIELD_P))) return RTM_OK;
  rtm_log_error("backend cuda (iso): receivers record p only, not fields %#x", fields);
  return RTM_ERR_INTERNAL;
}

static int iso_check_field(rtm_field_t field, rtm_level_t level) {
  (void)level; /* any level but the current one is the previous */
  if (field == RTM_FIELD_P) return RTM_OK;
  rtm_log_error("cuda backend (iso): there is no field q");
  return RTM_ERR_UNSUPPORTED;
}

static void iso_describe(const rtm_cuda_backend_state_t *b, const struct cudaDeviceProp *prop,
                         char *text, size_t size) {
  const rtm_iso_shape_t *k = &b->kernel;
  if (!prop)
    snprintf(text, size, "CUDA device %d", b->device);
  else
    snprintf(text, size, "%s (sm_%d%d), halo %s, %d stages, block %dx%d, zblock %d", prop->name,
             prop->major, prop->minor, rtm_iso_halo_name(k->halo), k->stages, k->block[0],
             k->block[1], k->zblock);
}

const rtm_cuda_physics_t rtm_cuda_physics_iso = {
    .name = "iso",
    .field_count = 1, /* p: iso has no q */
    .copies_level = 1,
    .images_in_step = iso_images_in_step,
    .state_bytes = sizeof(iso_state_t),
    .trace_label = {"traces", NULL},
    .prepare = iso_prepare,
    .check_fits = iso_check_fits,
    .fill = iso_fill,
    .reshape = iso_reshape,
    .release = iso_release,
    .check_recorded = iso_check_recorded,
    .launch = iso_launch,
    .check_field = iso_check_field,
    .describe = iso_describe,
};
