/* Backend `cuda`, physics.equation = vti | tti: what the z-marching kernel of tti_cuda.cu
 * needs beyond what every equation shares (backend_cuda_common.c, backend_cuda_impl.h).
 *
 * Device state of its own: the per-cell coefficient volumes of tti_cuda.h padded like p and
 * q (memory.model strategy; float, or binary16 with memory.model_precision = fp16: 2 bytes a
 * cell), and in host memory the stencil weights of each axis. Both p and q are stepped,
 * injected and recorded; sources and receivers use the iso launchers of iso_cuda.cu.
 * kernel.halo = tma encodes tensor maps per level of p and q (common code: boxes of the tile
 * with its halo, as the iso kernel's, and of the tile's own cells) and per coefficient
 * volume (own cells). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_cuda_impl.h"
#include "iso_cuda.h"
#include "rtm_anisotropy.h"
#include "rtm_cuda_check.h"
#include "rtm_half.h"
#include "rtm_backend.h"
#include "rtm_status.h"
#include "tti_cuda.h"

/* rtm_anisotropy_stored hands the values over in the kernel's volume order. */
_Static_assert((int)RTM_TTI_VPX2 == RTM_FDF_VPX2DT2 && (int)RTM_TTI_VPZ2 == RTM_FDF_VPZ2DT2 &&
                   (int)RTM_TTI_VPN2 == RTM_FDF_VPN2DT2 && (int)RTM_TTI_VSZ2 == RTM_FDF_VSZ2DT2 &&
                   (int)RTM_TTI_NX == RTM_FDF_AXIS_X && (int)RTM_TTI_NY == RTM_FDF_AXIS_Y &&
                   (int)RTM_TTI_NZ == RTM_FDF_AXIS_Z &&
                   (int)RTM_TTI_COEFF_MAX == RTM_FDF_STORED_COUNT,
               "tti_cuda.h's coefficient order differs from rtm_anisotropy.h's");

typedef struct {
  rtm_cuda_backend_state_t common; /* first: the common code's view of this state */
  int tilted;                      /* tti; else vti */
  int coeff_half;   /* the coefficient volumes hold binary16 (memory.model_precision = fp16) */
  int cells, slack; /* cells a thread and tma's slack, as rtm_tti_cuda_prepare chose */
  int coeff_count;
  rtm_allocation_t coeff[RTM_TTI_COEFF_MAX];
  rtm_iso_tensor_map_t coeff_map[RTM_TTI_COEFF_MAX]; /* tma: own-cell maps */
  rtm_fd_weights_t weights[3];
} tti_state_t;
_Static_assert(offsetof(tti_state_t, common) == 0, "the common state must come first");

/* Bytes a cell of a coefficient volume: float, or binary16 with memory.model_precision = fp16. */
static size_t coeff_size(const tti_state_t *s) {
  return s->coeff_half ? sizeof(rtm_half_t) : sizeof(float);
}

/* The launchers' shape: the equation's, and kernel.* as b->kernel holds it, the one copy that
 * the tensor maps are made with too, so a launch cannot disagree with its maps. */
static rtm_tti_shape_t shape_of(const tti_state_t *s) {
  const rtm_iso_shape_t *k = &s->common.kernel;
  const rtm_tti_shape_t shape = {
      .tilted = s->tilted,
      .coeff_half = s->coeff_half,
      .halo = k->halo,
      .stages = k->stages,
      .zblock = k->zblock,
      .block = {k->block[0], k->block[1]},
      .cells = s->cells,
      .slack = s->slack,
  };
  return shape;
}

/* The kernel's shape checked on the device, and the cells a thread and slack it chose kept
 * for the launches (shape_of). */
static int prepare_shape(tti_state_t *s, int device) {
  rtm_tti_shape_t shape = shape_of(s);
  const int status = rtm_tti_cuda_prepare(&shape, device);
  s->cells = shape.cells;
  s->slack = shape.slack;
  return status;
}

/* The equation's volumes and precision, and the kernel's shape checked on the device. */
static int tti_prepare(rtm_cuda_backend_state_t *b, const rtm_config_t *cfg) {
  tti_state_t *s = (tti_state_t *)b;
  s->tilted = cfg->physics.equation == RTM_EQUATION_TTI;
  s->coeff_count = s->tilted ? RTM_TTI_COEFF_COUNT : RTM_VTI_COEFF_COUNT;
  s->coeff_half = rtm_config_model_precision(cfg) == RTM_PRECISION_FP16;
  return prepare_shape(s, b->device);
}

static int tti_check_fits(const rtm_cuda_backend_state_t *b) {
  const tti_state_t *s = (const tti_state_t *)b;
  const size_t field_bytes = b->grid.padded_cells * sizeof(float);
  const size_t wave = rtm_cuda_backend_taken_bytes(b->wavefield_strategy, field_bytes);
  /* a medium borrowed from another state takes nothing more */
  const size_t model =
      b->medium_of
          ? 0
          : rtm_cuda_backend_taken_bytes(b->model_strategy, b->grid.padded_cells * coeff_size(s));
  const size_t need = RTM_CUDA_FIELDS * RTM_CUDA_LEVELS * wave + (size_t)s->coeff_count * model;
  char volumes[512];
  snprintf(volumes, sizeof volumes,
           "p and q at two levels 4 x %.2f GB (%s), %d coefficient volumes %d x %.2f GB (%s, %s%s)",
           wave / 1e9, b->wavefield_strategy, s->coeff_count, s->coeff_count, model / 1e9,
           b->model_strategy, s->coeff_half ? "fp16" : "fp32", b->medium_of ? ", shared" : "");
  return rtm_cuda_backend_check_fits(
      b, need, s->tilted ? ", tti" : ", vti", volumes,
      s->coeff_half ? "" : " (memory.model_precision = fp16 halves the coefficients)");
}

typedef struct {
  const tti_state_t *s;
  const rtm_anisotropy_t *prepared;
  double dt2;
} coefficients_fill_t;

/* Cells a row is narrowed in, a piece at a time (its floats on the thread's stack). */
enum { NARROW_PIECE = 256 };

/* Planes [z_first, z_first + count) of every coefficient into the staging blocks, a row a
 * thread at a time (rtm_anisotropy_stored_row): floats, or with coeff_half binary16 (the
 * values rtm_anisotropy_stored gives for fp16, bit for bit) narrowed from a piece of the
 * row's floats. A value beyond binary16's range: the first such cell is found over the
 * threads, then asked again alone, so that its message is said once. */
static int fill_coefficients(void *context, long z_first, long count,
                             unsigned char *const *blocks) {
  const coefficients_fill_t *f = context;
  const tti_state_t *s = f->s;
  const rtm_grid_t *g = &s->common.grid;
  const long nx = g->n[0], ny = g->n[1];
  size_t beyond = SIZE_MAX; /* the first cell (local index) binary16 cannot keep */
#pragma omp parallel for collapse(2) schedule(static) reduction(min : beyond)
  for (long iz = 0; iz < count; ++iz)
    for (long iy = 0; iy < ny; ++iy) {
      const size_t first = ((size_t)(z_first + iz) * ny + iy) * nx;
      const size_t at = (size_t)iz * g->stride_z + (RTM_RADIUS + (size_t)iy) * g->stride_y +
                        RTM_RADIUS; /* the row's first cell in the blocks */
      float *row[RTM_FDF_STORED_COUNT] = {NULL};
      if (!s->coeff_half) {
        for (int k = 0; k < s->coeff_count; ++k)
          row[k] = (float *)blocks[k] + at;
        rtm_anisotropy_stored_row(f->prepared, first, (size_t)nx, f->dt2, RTM_PRECISION_FP32, row,
                                  NULL, NULL);
        continue;
      }
      float piece[RTM_FDF_STORED_COUNT][NARROW_PIECE];
      for (int k = 0; k < s->coeff_count; ++k)
        row[k] = piece[k];
      for (long x = 0; x < nx; x += NARROW_PIECE) {
        const size_t cells = (size_t)(nx - x < NARROW_PIECE ? nx - x : NARROW_PIECE);
        rtm_half_t *halves[RTM_FDF_STORED_COUNT] = {NULL};
        for (int k = 0; k < s->coeff_count; ++k)
          halves[k] = (rtm_half_t *)blocks[k] + at + x;
        const size_t i = rtm_anisotropy_stored_row(f->prepared, first + (size_t)x, cells, f->dt2,
                                                   RTM_PRECISION_FP16, row, halves, NULL);
        if (i < cells && first + (size_t)x + i < beyond) beyond = first + (size_t)x + i;
      }
    }
  if (beyond == SIZE_MAX) return RTM_OK;
  rtm_fdf_cell_t cell;
  float value[RTM_FDF_STORED_COUNT];
  const int status =
      rtm_anisotropy_stored(f->prepared, beyond, f->dt2, RTM_PRECISION_FP16, &cell, value);
  return status != RTM_OK ? status : RTM_ERR_INTERNAL;
}

/* The coefficient volumes from the conditioned parameters, rtm_anisotropy_stored's values
 * (those tti_cpu.c computes with), float or binary16 (rtm_cuda_backend_upload_planes). */
static int upload_coefficients(tti_state_t *s, const rtm_backend_desc_t *desc) {
  int status = RTM_OK;
  rtm_anisotropy_t prepared;
  rtm_allocation_t *dst[RTM_FDF_STORED_COUNT];
  RTM_TRY(rtm_anisotropy_prepare(desc->config, desc->grid, desc->model, &prepared));
  for (int k = 0; k < s->coeff_count; ++k)
    dst[k] = &s->coeff[k];
  coefficients_fill_t fill = {s, &prepared, desc->dt_s * desc->dt_s};
  status = rtm_cuda_backend_upload_planes(&s->common, s->coeff_count, coeff_size(s), dst,
                                          fill_coefficients, &fill);
  rtm_anisotropy_release(&prepared);
fail:
  return status;
}

static int alloc_coefficients(tti_state_t *s) {
  int status = RTM_OK;
  rtm_cuda_backend_state_t *b = &s->common;
  for (int k = 0; k < s->coeff_count; ++k) {
    char label[RTM_MEM_LABEL_MAX]; /* the ledger and the run report say what a volume holds */
    snprintf(label, sizeof label, "%s%s", rtm_fdf_stored_name[k], s->coeff_half ? " (fp16)" : "");
    RTM_TRY(rtm_cuda_backend_alloc(b, b->model_strategy, b->grid.padded_cells * coeff_size(s),
                                   label, &s->coeff[k]));
  }
  return RTM_OK;
fail:
  return status;
}

/* kernel.halo = tma: the maps of the levels (as the iso kernel's) and of the coefficients. */
static int encode_maps(tti_state_t *s) {
  int status = RTM_OK;
  rtm_cuda_backend_state_t *b = &s->common;
  RTM_TRY(rtm_cuda_backend_level_maps(b));
  for (int k = 0; k < s->coeff_count; ++k)
    RTM_TRY(
        s->coeff_half
            ? rtm_iso_cuda_cell_map_half(&b->grid, s->coeff[k].ptr, &b->kernel, &s->coeff_map[k])
            : rtm_iso_cuda_cell_map(&b->grid, s->coeff[k].ptr, &b->kernel, &s->coeff_map[k]));
  return RTM_OK;
fail:
  return status;
}

static int tti_fill(rtm_cuda_backend_state_t *b, const rtm_backend_desc_t *desc) {
  int status = RTM_OK;
  tti_state_t *s = (tti_state_t *)b;
  if (b->medium_of) { /* the same volumes, uploaded by the state they belong to */
    const tti_state_t *owner = (const tti_state_t *)b->medium_of;
    for (int k = 0; k < s->coeff_count; ++k)
      rtm_mem_borrow(&s->coeff[k], &owner->coeff[k]);
  } else {
    RTM_TRY(alloc_coefficients(s));
    RTM_TRY(upload_coefficients(s, desc));
  }
  if (b->kernel.halo == RTM_HALO_TMA) RTM_TRY(encode_maps(s));
  RTM_TRY(rtm_cuda_backend_damping(b, desc->boundary));
  for (int a = 0; a < 3; ++a)
    rtm_fd_weights(b->grid.spacing_m[a], &s->weights[a]);
  RTM_TRY(rtm_cuda_backend_prefetch(b, s->coeff, s->coeff_count));
  return RTM_OK;
fail:
  return status;
}

static int tti_reshape(rtm_cuda_backend_state_t *b) {
  int status = RTM_OK;
  tti_state_t *s = (tti_state_t *)b;
  RTM_TRY(prepare_shape(s, b->device));
  if (b->kernel.halo == RTM_HALO_TMA) RTM_TRY(encode_maps(s));
fail:
  return status;
}

static void tti_release(rtm_cuda_backend_state_t *b) {
  tti_state_t *s = (tti_state_t *)b;
  for (int k = RTM_TTI_COEFF_MAX - 1; k >= 0; --k)
    rtm_cuda_backend_release(&s->coeff[k]);
}

static int tti_launch(rtm_cuda_backend_state_t *b, int centre, int backward, int z_begin, int z_end,
                      cudaStream_t stream) {
  const tti_state_t *s = (const tti_state_t *)b;
  rtm_tti_fields_t f = {
      .p_other = b->level[RTM_FIELD_P][1 - centre].ptr,
      .q_other = b->level[RTM_FIELD_Q][1 - centre].ptr,
      .p = b->level[RTM_FIELD_P][centre].ptr,
      .q = b->level[RTM_FIELD_Q][centre].ptr,
      .eta_dt = {b->eta_dt[0].ptr, b->eta_dt[1].ptr, b->eta_dt[2].ptr},
  };
  for (int k = 0; k < s->coeff_count; ++k)
    f.coeff[k] = s->coeff[k].ptr;
  if (b->kernel.halo == RTM_HALO_TMA) {
    f.p_map = &b->map[RTM_FIELD_P][centre];
    f.q_map = &b->map[RTM_FIELD_Q][centre];
    f.p_other_map = &b->cell_map[RTM_FIELD_P][1 - centre];
    f.q_other_map = &b->cell_map[RTM_FIELD_Q][1 - centre];
    for (int k = 0; k < s->coeff_count; ++k)
      f.coeff_map[k] = &s->coeff_map[k];
  }
  memcpy(f.weights, s->weights, sizeof f.weights);
  f.level_copy = b->level_copy;
  const rtm_tti_shape_t shape = shape_of(s);
  return rtm_tti_cuda_step(&b->grid, &shape, &f, backward, z_begin, z_end, stream);
}

static int tti_check_recorded(unsigned fields) {
  if (!(fields & ~(RTM_FIELD_BIT(RTM_FIELD_P) | RTM_FIELD_BIT(RTM_FIELD_Q)))) return RTM_OK;
  rtm_log_error("backend cuda (vti/tti): receivers asked to record unknown fields (mask %#x)",
                fields);
  return RTM_ERR_INTERNAL;
}

static int tti_check_field(rtm_field_t field, rtm_level_t level) {
  if ((field == RTM_FIELD_P || field == RTM_FIELD_Q) &&
      (level == RTM_LEVEL_CURRENT || level == RTM_LEVEL_PREVIOUS))
    return RTM_OK;
  rtm_log_error("backend cuda (vti/tti): no field %d at level %d", (int)field, (int)level);
  return RTM_ERR_UNSUPPORTED;
}

static void tti_describe(const rtm_cuda_backend_state_t *b, const struct cudaDeviceProp *prop,
                         char *text, size_t size) {
  const tti_state_t *s = (const tti_state_t *)b;
  const rtm_iso_shape_t *k = &b->kernel;
  const char *equation = s->tilted ? "tti" : "vti";
  const rtm_tti_shape_t shape = shape_of(s);
  if (!prop)
    snprintf(text, size, "CUDA device %d, %s", b->device, equation);
  else
    snprintf(text, size,
             "%s (sm_%d%d), %s, halo %s, stages %d, block %dx%d (%d cell%s a thread%s%s), "
             "zblock %d, %s coefficients",
             prop->name, prop->major, prop->minor, equation, rtm_iso_halo_name(k->halo), k->stages,
             k->block[0], k->block[1], s->cells, s->cells == 1 ? "" : "s",
             s->cells == 1                        ? ""
             : rtm_tti_cuda_pairs_along_x(&shape) ? " along x"
                                                  : " along y",
             s->slack == 1 ? ", slack 1" : "", k->zblock, s->coeff_half ? "fp16" : "fp32");
}

const rtm_cuda_physics_t rtm_cuda_physics_tti = {
    .name = "vti/tti",
    .field_count = 2,
    .copies_level = 1,
    .state_bytes = sizeof(tti_state_t),
    .trace_label = {"traces p", "traces q"},
    .prepare = tti_prepare,
    .check_fits = tti_check_fits,
    .fill = tti_fill,
    .reshape = tti_reshape,
    .release = tti_release,
    .check_recorded = tti_check_recorded,
    .launch = tti_launch,
    /* no images_in_step: the imaging condition taken in the tti step (tma, fp32, its loads
     * issued at the iteration's start) ran 1.26 and then 1.14 ms longer a step at 512^3 on
     * an H200, against 0.94 ms for the imaging kernel apart (run/results/end_to_end.md; the
     * two tries: run/experiments/tti_image_in_step*.patch) */
    .check_field = tti_check_field,
    .describe = tti_describe,
};
