/* VTI/TTI parameters: range checks, conditioning of the FDF system, smoothing of the tilt
 * (the reasons are in rtm_anisotropy.h). */
#include "rtm_anisotropy.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtm_half.h"
#include "rtm_mpi.h"
#include "rtm_status.h"

static const double degrees = 3.14159265358979323846 / 180.0;

/* Thomsen parameters beyond this are not rocks; a file holding percent is the usual cause. */
static const double thomsen_max = 2.0;
/* Angles beyond a full turn are not degrees of anything. */
static const double angle_max_deg = 360.0;

/* Power iteration for the principal axis of the averaged tensor. Where two eigenvalues are
 * close (axes at right angles averaged) it converges slowly; any axis of that plane is then
 * as good as another, so the iterations are capped. */
enum { AXIS_ITERATIONS = 40 };

static void cell_position(const rtm_grid_t *g, size_t cell, char *text, size_t size) {
  const size_t nx = (size_t)g->n[0], ny = (size_t)g->n[1];
  snprintf(text, size, "[z=%zu][y=%zu][x=%zu]", cell / (nx * ny) + (size_t)g->z_offset,
           cell / nx % ny, cell % nx);
}

typedef struct {
  const char *dataset; /* under the model file's root, and model.<dataset> for constants */
  double lo, hi;
  int lo_open; /* lo itself is outside */
  const char *why;
} parameter_range_t;

static int outside(const parameter_range_t *r, double value) {
  if (!isfinite(value) || value > r->hi) return 1;
  return r->lo_open ? !(value > r->lo) : !(value >= r->lo);
}

/* Every value of the parameter within r, or an input error naming the first that is not;
 * `known`, the values' [min, max] when the model has them (NULL else), spares the scan when
 * both lie within (the range is an interval: then every value does). */
static int check_range(const rtm_config_t *cfg, const rtm_grid_t *grid, const float *values,
                       const double *known, const parameter_range_t *r) {
  if (known && !outside(r, known[0]) && !outside(r, known[1])) return RTM_OK;
  const size_t cells = rtm_grid_interior_cells(grid);
  size_t bad = 0, first = SIZE_MAX; /* over the threads: the count, and the first by index */
#pragma omp parallel for schedule(static) reduction(+ : bad) reduction(min : first)
  for (size_t i = 0; i < cells; ++i)
    if (outside(r, values[i])) {
      ++bad;
      if (i < first) first = i;
    }
  if (bad == 0) return RTM_OK;
  char where[96], range[64];
  cell_position(grid, first, where, sizeof where);
  snprintf(range, sizeof range, "%c%g, %g]", r->lo_open ? '(' : '[', r->lo, r->hi);
  if (cfg->model.file[0])
    rtm_log_error("model file %s: dataset /%s has %zu value%s outside %s, the first %g at %s: "
                  "%s",
                  cfg->model.file, r->dataset, bad, bad == 1 ? "" : "s", range, values[first],
                  where, r->why);
  else if (bad == cells)
    rtm_log_error("model.%s = %g is outside %s: %s", r->dataset, values[first], range, r->why);
  else
    rtm_log_error("model.%s: %zu value%s outside %s, the first %g at %s: %s", r->dataset, bad,
                  bad == 1 ? "" : "s", range, values[first], where, r->why);
  return RTM_ERR_INPUT;
}

int rtm_anisotropy_check(const rtm_config_t *cfg, const rtm_grid_t *grid,
                         const rtm_model_t *model) {
  int status = RTM_OK;
  const int tilted = cfg->physics.equation == RTM_EQUATION_TTI;
  if (cfg->physics.equation == RTM_EQUATION_ISO) return RTM_OK;
  if (!model->vp || !model->epsilon || !model->delta ||
      (tilted && (!model->theta_deg || !model->phi_deg)))
    RTM_FAIL(RTM_ERR_INTERNAL, "physics.equation = %s: the model lacks %s", tilted ? "tti" : "vti",
             !model->epsilon ? "epsilon"
             : !model->delta ? "delta"
                             : "theta/phi");
  const parameter_range_t thomsen[2] = {
      {"epsilon", -0.5, thomsen_max, 1,
       "1 + 2 epsilon must be > 0 (vpx = vp sqrt(1 + 2 epsilon)) and Thomsen parameters are "
       "fractions (0.1 for 10%)"},
      {"delta", -0.5, thomsen_max, 1,
       "1 + 2 delta must be > 0 (vpn = vp sqrt(1 + 2 delta)) and Thomsen parameters are "
       "fractions (0.1 for 10%)"},
  };
  const int known = model->range_known;
  RTM_TRY(check_range(cfg, grid, model->epsilon, known ? model->range[RTM_MODEL_EPSILON] : NULL,
                      &thomsen[0]));
  RTM_TRY(check_range(cfg, grid, model->delta, known ? model->range[RTM_MODEL_DELTA] : NULL,
                      &thomsen[1]));
  if (tilted) {
    const parameter_range_t angles[2] = {
        {"theta", -angle_max_deg, angle_max_deg, 0, "the tilt is in degrees"},
        {"phi", -angle_max_deg, angle_max_deg, 0, "the azimuth is in degrees"},
    };
    RTM_TRY(check_range(cfg, grid, model->theta_deg, known ? model->range[RTM_MODEL_THETA] : NULL,
                        &angles[0]));
    RTM_TRY(check_range(cfg, grid, model->phi_deg, known ? model->range[RTM_MODEL_PHI] : NULL,
                        &angles[1]));
  }
fail:
  return status;
}

void rtm_fdf_condition(double epsilon, double delta, double sigma, double *delta_out,
                       double *vsz2_ratio, int *delta_lowered, int *vsz_lowered) {
  int lowered_delta = 0, lowered_vsz = 0;
  if (delta > epsilon) {
    delta = epsilon;
    lowered_delta = 1;
  }
  double ratio = (epsilon - delta) / sigma;
  const double limit = fmin(1.0, 1.0 + 2.0 * delta);
  if (ratio > limit) {
    ratio = limit;
    lowered_vsz = 1;
  }
  *delta_out = delta;
  *vsz2_ratio = ratio;
  if (delta_lowered) *delta_lowered = lowered_delta;
  if (vsz_lowered) *vsz_lowered = lowered_vsz;
}

/* Counts the cells conditioning changes and warns once per kind, naming the first. */
static void count_conditioned(const rtm_config_t *cfg, rtm_anisotropy_t *a) {
  const rtm_model_t *m = a->model;
  const size_t cells = rtm_grid_interior_cells(&a->grid);
  size_t first_delta = SIZE_MAX, first_vsz = SIZE_MAX, delta_count = 0, vsz_count = 0;
  double sigma_needed = 0.0;
  /* over the threads: counts, the first cells by index and the largest sigma needed, all
   * independent of the order the cells are visited in */
#pragma omp parallel for schedule(static) reduction(+ : delta_count, vsz_count)                 \
    reduction(min : first_delta, first_vsz) reduction(max : sigma_needed)
  for (size_t i = 0; i < cells; ++i) {
    double delta, ratio;
    int delta_lowered, vsz_lowered;
    rtm_fdf_condition(m->epsilon[i], m->delta[i], a->sigma, &delta, &ratio, &delta_lowered,
                      &vsz_lowered);
    if (delta_lowered) {
      ++delta_count;
      if (i < first_delta) first_delta = i;
    }
    if (vsz_lowered) {
      ++vsz_count;
      if (i < first_vsz) first_vsz = i;
      sigma_needed = fmax(sigma_needed, (m->epsilon[i] - delta) / fmin(1.0, 1.0 + 2.0 * delta));
    }
  }
  a->delta_lowered = delta_count;
  a->vsz_lowered = vsz_count;
  const char *file = cfg->model.file;
  char where[96], source[RTM_CONFIG_PATH_MAX + 64];
  if (file[0])
    snprintf(source, sizeof source, "model file %s: ", file);
  else
    snprintf(source, sizeof source, "model.epsilon, model.delta: ");
  if (!file[0] && (a->delta_lowered == cells || a->vsz_lowered == cells)) {
    /* constants from the config: one cell says it all */
    if (a->delta_lowered)
      rtm_log_warning("model.delta = %g > model.epsilon = %g: the pseudo-acoustic system grows "
                      "without bound, so delta is set to epsilon (elliptic, vsz = 0)",
                      m->delta[0], m->epsilon[0]);
    else
      rtm_log_warning("vsz^2 = vpz^2 (model.epsilon - model.delta) / physics.sigma exceeds "
                      "min(vpz^2, vpn^2) (epsilon %g, delta %g, sigma %g): no elastic medium has "
                      "such speeds (complex, or shear faster than P); vsz is lowered to min(vpz, "
                      "vpn) (physics.sigma >= "
                      "%.4g avoids this)",
                      m->epsilon[0], m->delta[0], a->sigma, sigma_needed);
    return;
  }
  if (a->delta_lowered) {
    cell_position(&a->grid, first_delta, where, sizeof where);
    rtm_log_warning("%sdelta > epsilon in %zu of %zu cells (the first at %s: epsilon %g, delta "
                    "%g); the pseudo-acoustic system grows without bound there, so delta is "
                    "set to epsilon (elliptic, vsz = 0) in those cells",
                    source, a->delta_lowered, cells, where, m->epsilon[first_delta],
                    m->delta[first_delta]);
  }
  if (a->vsz_lowered) {
    cell_position(&a->grid, first_vsz, where, sizeof where);
    rtm_log_warning("%svsz^2 = vpz^2 (epsilon - delta) / sigma exceeds min(vpz^2, vpn^2) in %zu "
                    "of %zu cells (the first at %s: epsilon %g, delta %g, physics.sigma %g): "
                    "no elastic medium has such speeds (complex, or shear faster than P); vsz "
                    "is lowered to min(vpz, vpn) there (physics.sigma >= %.4g avoids this)",
                    source, a->vsz_lowered, cells, where, m->epsilon[first_vsz],
                    m->delta[first_vsz], a->sigma, sigma_needed);
  }
}

static void axis_from_angles(double theta_deg, double phi_deg, double n[3]) {
  const double theta = theta_deg * degrees, phi = phi_deg * degrees;
  n[0] = sin(theta) * cos(phi);
  n[1] = sin(theta) * sin(phi);
  n[2] = cos(theta);
  if (n[2] < 0.0)
    for (int a = 0; a < 3; ++a)
      n[a] = -n[a];
}

/* Tensor components n_a n_b in the order xx, yy, zz, xy, yz, xz. */
static const int tensor_pair[6][2] = {{0, 0}, {1, 1}, {2, 2}, {0, 1}, {1, 2}, {0, 2}};

/* In-place box average of half-width w along axis `axis` of a dense [nz][ny][nx] volume,
 * cut at the edges (each output averages the cells that exist). */
static int box_average(const rtm_grid_t *g, float *volume, int axis, int w) {
  const long n[3] = {g->n[0], g->n[1], g->nz_local};
  const long stride[3] = {1, n[0], n[0] * n[1]};
  const long length = n[axis];
  /* lines along `axis` are indexed by the other two coordinates */
  const int u = axis == 0 ? 1 : 0, v = axis == 2 ? 1 : 2;
  const long lines = n[u] * n[v];
  int failed = 0;
#ifdef _OPENMP
#pragma omp parallel
#endif
  {
    double *prefix = malloc((size_t)(length + 1) * sizeof *prefix);
    if (!prefix) {
#ifdef _OPENMP
#pragma omp atomic write
#endif
      failed = 1;
    }
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
    for (long line = 0; line < lines; ++line) {
      if (!prefix) continue;
      const long start = (line % n[u]) * stride[u] + (line / n[u]) * stride[v];
      float *x = volume + start;
      prefix[0] = 0.0;
      for (long i = 0; i < length; ++i)
        prefix[i + 1] = prefix[i] + x[i * stride[axis]];
      for (long i = 0; i < length; ++i) {
        const long lo = i - w < 0 ? 0 : i - w, hi = i + w >= length ? length - 1 : i + w;
        x[i * stride[axis]] = (float)((prefix[hi + 1] - prefix[lo]) / (double)(hi - lo + 1));
      }
    }
    free(prefix);
  }
  if (failed) {
    rtm_log_error("physics.smooth_angles: out of memory for a line buffer");
    return RTM_ERR_NOMEM;
  }
  return RTM_OK;
}

/* In-place average of half-width w along z of a dense [nz_local][ny][nx] slab, the window
 * [z - w, z + w] cut at the volume's faces, summed cell by cell in double from its lowest
 * plane up: the same sums whatever the z-slabs, the neighbours' planes brought over
 * (rtm_mpi_exchange_dense_planes). */
static int z_average(const rtm_grid_t *g, float *volume, int w) {
  int status = RTM_OK;
  const size_t plane = (size_t)g->n[0] * (size_t)g->n[1];
  const long nz = g->nz_local;
  float *extended = malloc(((size_t)nz + 2 * (size_t)w) * plane * sizeof *extended);
  if (!extended)
    RTM_FAIL(RTM_ERR_NOMEM, "physics.smooth_angles: out of memory for %ld planes", nz + 2L * w);
  RTM_TRY(rtm_mpi_exchange_dense_planes(g, w, volume, extended));
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
  for (long iz = 0; iz < nz; ++iz) {
    const long z = g->z_offset + iz;
    const long lo = z - w < 0 ? 0 : z - w, hi = z + w >= g->n[2] ? g->n[2] - 1 : z + w;
    /* plane k (global) of the window is row k - z_offset + w of `extended` */
    const float *first = extended + (size_t)(lo - g->z_offset + w) * plane;
    for (size_t i = 0; i < plane; ++i) {
      double sum = 0.0;
      for (long k = 0; k <= hi - lo; ++k)
        sum += first[(size_t)k * plane + i];
      volume[(size_t)iz * plane + i] = (float)(sum / (double)(hi - lo + 1));
    }
  }
fail:
  free(extended);
  return status;
}

/* Smoothed axes: average n n^T over the box, then the principal eigenvector by power
 * iteration from the cell's own axis (whose weight in the average keeps n.T.n > 0). */
static int smooth_axes(rtm_anisotropy_t *a, int w) {
  int status = RTM_OK;
  const rtm_model_t *m = a->model;
  const size_t cells = rtm_grid_interior_cells(&a->grid);
  float *tensor = malloc(cells * 6 * sizeof *tensor);
  a->axis = malloc(cells * 3 * sizeof *a->axis);
  if (!tensor || !a->axis)
    RTM_FAIL(RTM_ERR_NOMEM, "physics.smooth_angles: out of memory (%zu cells)", cells);
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
  for (size_t i = 0; i < cells; ++i) {
    double n[3];
    axis_from_angles(m->theta_deg[i], m->phi_deg[i], n);
    for (int c = 0; c < 6; ++c)
      tensor[(size_t)c * cells + i] = (float)(n[tensor_pair[c][0]] * n[tensor_pair[c][1]]);
  }
  for (int c = 0; c < 6; ++c) {
    for (int axis = 0; axis < 2; ++axis) /* x and y: within the slab's planes */
      RTM_TRY(box_average(&a->grid, tensor + (size_t)c * cells, axis, w));
    RTM_TRY(z_average(&a->grid, tensor + (size_t)c * cells, w));
  }
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
  for (size_t i = 0; i < cells; ++i) {
    double t[3][3], n[3];
    for (int c = 0; c < 6; ++c) {
      const int r = tensor_pair[c][0], s = tensor_pair[c][1];
      t[r][s] = t[s][r] = tensor[(size_t)c * cells + i];
    }
    axis_from_angles(m->theta_deg[i], m->phi_deg[i], n);
    for (int k = 0; k < AXIS_ITERATIONS; ++k) {
      double next[3], norm = 0.0, change = 0.0;
      for (int r = 0; r < 3; ++r) {
        next[r] = t[r][0] * n[0] + t[r][1] * n[1] + t[r][2] * n[2];
        norm += next[r] * next[r];
      }
      norm = sqrt(norm);
      for (int r = 0; r < 3; ++r) {
        next[r] /= norm;
        change += fabs(next[r] - n[r]);
        n[r] = next[r];
      }
      if (change < 1e-7) break; /* stored in float */
    }
    const double sign = n[2] < 0.0 ? -1.0 : 1.0;
    for (int r = 0; r < 3; ++r)
      a->axis[3 * i + (size_t)r] = (float)(sign * n[r]);
  }
fail:
  free(tensor);
  return status;
}

/* Smoothing a uniform axis changes nothing but rounding; skip it (and its memory). On
 * z-slabs uniform means the same angles on every rank, which all decide alike. */
static int uniform_angles(const rtm_anisotropy_t *a, int *uniform) {
  int status = RTM_OK;
  const rtm_model_t *m = a->model;
  const size_t cells = rtm_grid_interior_cells(&a->grid);
  double local = 1.0, angles[4] = {m->theta_deg[0], m->phi_deg[0], -m->theta_deg[0],
                                   -m->phi_deg[0]}; /* max of theta, phi, -theta, -phi */
  int differ = 0;
#pragma omp parallel for schedule(static) reduction(| : differ)
  for (size_t i = 1; i < cells; ++i)
    differ |= m->theta_deg[i] != m->theta_deg[0] || m->phi_deg[i] != m->phi_deg[0];
  if (differ) local = 0.0;
  if (rtm_grid_is_slab(&a->grid)) { /* z-slabs: every rank's angles */
    RTM_TRY(rtm_mpi_allreduce(a->grid.mpi, &local, 1, RTM_MPI_MIN));
    RTM_TRY(rtm_mpi_allreduce(a->grid.mpi, angles, 4,
                              RTM_MPI_MAX)); /* equal on every rank: max = -min */
  }
  *uniform = local > 0.0 && angles[0] == -angles[2] && angles[1] == -angles[3];
fail:
  return status;
}

/* The z pass reaches w planes into the neighbours' slabs, which must hold them: the
 * thinnest slab of the run's cut (a migration's is in units of 4 planes). */
static int check_reach(const rtm_grid_t *g, int w) {
  int status = RTM_OK;
  const int ranks = rtm_grid_is_slab(g) ? rtm_mpi_size(g->mpi) : 1;
  const int thinnest =
      ranks > 1 ? rtm_mpi_thinnest_slab(g->n[2], ranks, rtm_mpi_slab_align(g->mpi)) : g->n[2];
  if (ranks > 1 && w > thinnest)
    RTM_FAIL(RTM_ERR_CONFIG,
             "physics.smooth_angles = %d reaches past the neighbouring slab of %d planes "
             "(grid.nz = %d over %d ranks): lower it to %d or run on fewer ranks",
             w, thinnest, g->n[2], ranks, thinnest);
fail:
  return status;
}

int rtm_anisotropy_prepare(const rtm_config_t *cfg, const rtm_grid_t *grid,
                           const rtm_model_t *model, rtm_anisotropy_t *out) {
  int status = RTM_OK;
  memset(out, 0, sizeof *out);
  if (cfg->physics.equation == RTM_EQUATION_ISO)
    RTM_FAIL(RTM_ERR_INTERNAL, "rtm_anisotropy_prepare: physics.equation is iso");
  RTM_TRY(rtm_anisotropy_check(cfg, grid, model));
  if (!(cfg->physics.sigma > 0.0) || !isfinite(cfg->physics.sigma))
    RTM_FAIL(RTM_ERR_CONFIG, "physics.sigma = %g must be positive and finite", cfg->physics.sigma);
  if (cfg->physics.smooth_angles_cells < 0)
    RTM_FAIL(RTM_ERR_CONFIG, "physics.smooth_angles = %d must be >= 0",
             cfg->physics.smooth_angles_cells);
  out->grid = *grid;
  out->model = model;
  out->tilted = cfg->physics.equation == RTM_EQUATION_TTI;
  out->sigma = cfg->physics.sigma;
  count_conditioned(cfg, out);
  if (out->tilted && cfg->physics.smooth_angles_cells > 0) {
    int uniform = 0;
    RTM_TRY(uniform_angles(out, &uniform));
    if (!uniform) {
      RTM_TRY(check_reach(grid, cfg->physics.smooth_angles_cells));
      RTM_TRY(smooth_axes(out, cfg->physics.smooth_angles_cells));
    }
  }
  return RTM_OK;
fail:
  rtm_anisotropy_release(out);
  return status;
}

void rtm_anisotropy_cell(const rtm_anisotropy_t *a, size_t cell, rtm_fdf_cell_t *out) {
  const rtm_model_t *m = a->model;
  const double vp = m->vp[cell], epsilon = m->epsilon[cell];
  double delta, ratio;
  rtm_fdf_condition(epsilon, m->delta[cell], a->sigma, &delta, &ratio, NULL, NULL);
  out->vpz2 = vp * vp;
  out->vpx2 = out->vpz2 * (1.0 + 2.0 * epsilon);
  out->vpn2 = out->vpz2 * (1.0 + 2.0 * delta);
  out->vsz2 = out->vpz2 * ratio;
  if (!a->tilted) {
    out->axis[0] = out->axis[1] = 0.0;
    out->axis[2] = 1.0;
  } else if (a->axis) {
    for (int r = 0; r < 3; ++r)
      out->axis[r] = a->axis[3 * cell + (size_t)r];
  } else {
    axis_from_angles(m->theta_deg[cell], m->phi_deg[cell], out->axis);
  }
}

const char *const rtm_fdf_stored_name[RTM_FDF_STORED_COUNT] = {
    "vpx2dt2", "vpz2dt2", "vpn2dt2", "vsz2dt2", "axis n_x", "axis n_y", "axis n_z"};

int rtm_anisotropy_stored(const rtm_anisotropy_t *a, size_t cell, double dt2,
                          rtm_precision_t precision, rtm_fdf_cell_t *conditioned,
                          float stored[RTM_FDF_STORED_COUNT]) {
  static const char *const symbol[RTM_FDF_STORED_COUNT] = {
      "vpx^2 dt^2", "vpz^2 dt^2", "vpn^2 dt^2", "vsz^2 dt^2", "n_x", "n_y", "n_z"};
  rtm_fdf_cell_t *c = conditioned;
  rtm_anisotropy_cell(a, cell, c);
  stored[RTM_FDF_VPX2DT2] = (float)(c->vpx2 * dt2);
  stored[RTM_FDF_VPZ2DT2] = (float)(c->vpz2 * dt2);
  stored[RTM_FDF_VPN2DT2] = (float)(c->vpn2 * dt2);
  stored[RTM_FDF_VSZ2DT2] = (float)(c->vsz2 * dt2);
  for (int r = 0; r < 3; ++r)
    stored[RTM_FDF_AXIS_X + r] = (float)c->axis[r];
  if (precision != RTM_PRECISION_FP16) return RTM_OK;
  for (int k = 0; k < RTM_FDF_STORED_COUNT; ++k) {
    if (!rtm_fdf_half_keeps(k, stored[k])) {
      char where[96];
      cell_position(&a->grid, cell, where, sizeof where);
      if (fabsf(stored[k]) >= RTM_HALF_MAX)
        rtm_log_error("memory.model_precision = fp16: %s (%s) = %g at %s is beyond binary16's "
                      "largest value %g (v^2 dt^2 in m^2 fits while v dt < 255.9 m); use "
                      "memory.model_precision = fp32",
                      symbol[k], rtm_fdf_stored_name[k], stored[k], where, RTM_HALF_MAX);
      else
        rtm_log_error("memory.model_precision = fp16: %s (%s) = %g at %s is below binary16's "
                      "smallest normal value %g, where it keeps fewer than its 11 bits (v^2 dt^2 "
                      "in m^2 keeps them while v dt >= 7.8 mm: lengths in km or mm leave that "
                      "range); use memory.model_precision = fp32",
                      symbol[k], rtm_fdf_stored_name[k], stored[k], where,
                      (double)RTM_HALF_MIN_NORMAL);
      return RTM_ERR_CONFIG;
    }
    stored[k] = rtm_half_to_float(rtm_half_from_float(stored[k]));
  }
  return RTM_OK;
}

/* The bits of the parameters rtm_anisotropy_cell reads at `cell`; returns their count. */
static int parameters_of(const rtm_anisotropy_t *a, size_t cell, uint32_t bits[6]) {
  const rtm_model_t *m = a->model;
  float value[6] = {m->vp[cell], m->epsilon[cell], m->delta[cell]};
  int count = 3;
  if (a->tilted && a->axis) {
    for (int r = 0; r < 3; ++r)
      value[count++] = a->axis[3 * cell + (size_t)r];
  } else if (a->tilted) {
    value[count++] = m->theta_deg[cell];
    value[count++] = m->phi_deg[cell];
  }
  memcpy(bits, value, (size_t)count * sizeof *bits);
  return count;
}

size_t rtm_anisotropy_stored_row(const rtm_anisotropy_t *a, size_t first, size_t count, double dt2,
                                 rtm_precision_t precision,
                                 float *const values[RTM_FDF_STORED_COUNT],
                                 rtm_half_t *const halves[RTM_FDF_STORED_COUNT],
                                 rtm_fdf_cell_t *conditioned) {
  uint32_t last[6] = {0};
  int known = 0; /* last, cell and stored hold a cell's parameters and what they give */
  rtm_fdf_cell_t cell = {0};
  float stored[RTM_FDF_STORED_COUNT] = {0};
  for (size_t i = 0; i < count; ++i) {
    uint32_t bits[6];
    const int n = parameters_of(a, first + i, bits);
    int same = known;
    for (int p = 0; p < n; ++p)
      same &= bits[p] == last[p];
    if (!same) { /* in fp32 nothing is refused */
      (void)rtm_anisotropy_stored(a, first + i, dt2, RTM_PRECISION_FP32, &cell, stored);
      memcpy(last, bits, (size_t)n * sizeof *bits);
      known = 1;
    }
    for (int k = 0; k < RTM_FDF_STORED_COUNT; ++k)
      if (values[k]) values[k][i] = stored[k];
    if (conditioned) conditioned[i] = cell;
  }
  size_t beyond = count;
  for (int k = 0; precision == RTM_PRECISION_FP16 && k < RTM_FDF_STORED_COUNT; ++k) {
    if (!values[k]) continue;
    const size_t refused =
        rtm_anisotropy_narrow_row(k, values[k], count, halves ? halves[k] : NULL);
    if (refused < beyond) beyond = refused;
  }
  return beyond;
}

size_t rtm_anisotropy_narrow_row(int k, float *values, size_t count, rtm_half_t *halves) {
  size_t beyond = count;
  uint32_t last = 0;
  rtm_half_t half = 0;
  float widened = 0.0f;
  int keeps = 1;
  for (size_t i = 0; i < count; ++i) {
    uint32_t bits;
    memcpy(&bits, &values[i], sizeof bits);
    if (i == 0 || bits != last) { /* else the last value's narrowing */
      half = rtm_half_from_float(values[i]);
      keeps = rtm_fdf_half_keeps_as(k, values[i], half);
      widened = rtm_half_to_float(half);
      last = bits;
    }
    if (!keeps && beyond == count) beyond = i;
    values[i] = widened;
    if (halves) halves[i] = half;
  }
  return beyond;
}

int rtm_fdf_half_keeps(int k, float value) {
  return rtm_fdf_half_keeps_as(k, value, rtm_half_from_float(value));
}

int rtm_fdf_half_keeps_as(int k, float value, rtm_half_t half) {
  if (!rtm_half_is_finite(half)) return 0;
  /* below the smallest normal a v^2 dt^2 keeps fewer than 11 bits and, from 2^-25 on,
   * none: probe Q (Q1) ran a vti deck in mm cells 16% off, in km units 0.7%, exit 0. The
   * vsz^2 dt^2 is vpz^2 dt^2 times a share that vanishes in elliptic cells, and the axis'
   * components are not scaled by dt: what they lose near zero is below the rounding of the
   * vpz^2 dt^2 they add to, once that is normal. */
  const float magnitude = fabsf(value);
  return k >= RTM_FDF_VSZ2DT2 || magnitude == 0.0f || magnitude >= RTM_HALF_MIN_NORMAL;
}

void rtm_anisotropy_release(rtm_anisotropy_t *a) {
  if (!a) return;
  free(a->axis);
  a->axis = NULL;
}
