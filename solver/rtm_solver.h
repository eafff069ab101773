/* rtm_solver.h - the propagator's shared pieces and the backend interface.
 *
 * Physics (DESIGN.md): iso p_tt = v^2 lap(p) + s, leapfrog in time, 8th order in space,
 * an absorbing damping layer of boundary.width cells inside every face:
 *   p_tt + 2 eta p_t = v^2 lap(p) + s
 *   p[n+1] = (2 p[n] - (1 - eta dt) p[n-1] + dt^2 v^2 lap(p[n]) + dt^2 s[n]) / (1 + eta dt)
 * with eta(x) = eta_x(ix) + eta_y(iy) + eta_z(iz) from 1D profiles.
 *
 * Backends (cpu reference, cuda) implement rtm_backend_t, a const table looked up by name
 * (the libCEED / sqlite vfs shape). Sources and receivers are point lists with trilinear
 * taps computed here once, so every backend injects and records the same way. */
#ifndef RTM_SOLVER_H
#define RTM_SOLVER_H

#include <stddef.h>

#include "rtm_config.h"
#include "rtm_grid.h"
#include "rtm_memory.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- finite-difference coefficients (8th order, R = 4) ---- */
/* Second derivative: c[0] centre, c[k] for offsets +-k (divide by h^2). */
extern const double rtm_fd2_coeff[RTM_RADIUS + 1];
/* First derivative: c[k-1] for offset +k, antisymmetric (divide by h). */
extern const double rtm_fd1_coeff[RTM_RADIUS];

/* The stencils' floats along an axis of spacing h, as the vti/tti reference (tti_cpu.c) and
 * kernel (tti_cuda.cu) use them, in the same order and with fused multiply-adds, so that
 * the two agree bit for bit. The second derivative keeps the iso kernel's weights and its
 * final 1 / h^2: weights rounded otherwise (c_k / h^2 each) sum to another tiny non-zero,
 * a zeroth-order term whose effect grows steadily (3.9e-5 against the iso run after 300
 * steps) where eps = delta = 0 must reproduce it. The first derivative, antisymmetric, has
 * no such term and folds 1 / h into its weights. */
typedef struct {
  float c2[RTM_RADIUS + 1]; /* rtm_fd2_coeff in float */
  float inv_h2;             /* 1 / h^2 */
  float w1[RTM_RADIUS];     /* rtm_fd1_coeff[k] / h */
} rtm_fd_weights_t;
void rtm_fd_weights(double h, rtm_fd_weights_t *weights);

/* ---- model parameters: dense [nz_local][ny][nx] arrays on the host ---- */
typedef struct {
  float *vp;        /* m/s, always present */
  float *epsilon;   /* NULL for iso */
  float *delta;
  float *theta_deg; /* NULL for iso and vti */
  float *phi_deg;
  double vp_min, vp_max;
  double epsilon_max;
} rtm_model_t;

/* Fills a model of the grid's local z-range from the config: the HDF5 file named by
 * model.file (io module does the reading, see rtm_io.h) or constants. */
void rtm_model_release(rtm_model_t *model);
/* Computes vp_min, vp_max, epsilon_max; fails on non-positive or non-finite velocity. */
int rtm_model_update_range(rtm_model_t *model, const rtm_grid_t *grid);

/* ---- stability and sampling ---- */
/* Largest stable leapfrog dt for the 8th-order Laplacian: 2 / (v sqrt(S sum 1/h_a^2)),
 * S = |symbol of the 2nd-derivative stencil at Nyquist| = 6.5016. */
double rtm_stable_dt(double v_max, const double spacing_m[3]);
/* Resolves time.dt (auto or explicit) against the stability limit; an unstable explicit dt
 * or cfl is an error naming the key. Warns below 5 points per shortest wavelength
 * (v_min / (2.5 f_peak), the Ricker spectrum being 3% of its peak there). */
int rtm_resolve_dt(const rtm_config_t *cfg, const rtm_model_t *model, const rtm_grid_t *grid,
                   double *dt_s);

/* ---- wavelets ---- */
/* Ricker w(t) = (1 - 2 pi^2 f^2 (t - t0)^2) exp(-pi^2 f^2 (t - t0)^2). */
double rtm_ricker(double t_s, double frequency_hz, double delay_s);

/* ---- point sources and receivers ---- */
#define RTM_POINT_TAPS 8 /* trilinear */
typedef struct {
  int count;
  double *position_m;  /* [count][3] as requested */
  size_t *tap_index;   /* [count][8] into a padded field of the local grid */
  float *tap_weight;   /* [count][8]; 0 for taps outside this rank's z-range */
} rtm_points_t;

/* Builds trilinear taps for positions (metres) on the local grid. A position outside the
 * global interior is an error naming `what` and the point's number. */
int rtm_points_init(rtm_points_t *points, const rtm_grid_t *grid, const double *position_m,
                    int count, const char *what);
void rtm_points_release(rtm_points_t *points);

/* ---- absorbing boundary: 1D damping profiles, eta * dt per cell along each axis ---- */
typedef struct {
  int width_cells;
  float *eta_dt[3]; /* [n[a]] over the global interior of axis a */
} rtm_boundary_t;

int rtm_boundary_init(rtm_boundary_t *boundary, const rtm_grid_t *grid, int width_cells,
                      double reflection, double v_max, double dt_s);
void rtm_boundary_release(rtm_boundary_t *boundary);

/* ---- backends ---- */
typedef enum { RTM_FIELD_P = 0, RTM_FIELD_Q = 1 } rtm_field_t;
/* A set of fields as a bit mask: RTM_FIELD_BIT(RTM_FIELD_P) | RTM_FIELD_BIT(RTM_FIELD_Q). */
#define RTM_FIELD_BIT(field) (1u << (unsigned)(field))
/* "p", "q" (the datasets' and the config's names), "?" for anything else. */
static inline const char *rtm_field_name(rtm_field_t field) {
  return field == RTM_FIELD_P ? "p" : field == RTM_FIELD_Q ? "q" : "?";
}
typedef enum { RTM_LEVEL_CURRENT = 0, RTM_LEVEL_PREVIOUS = 1 } rtm_level_t;
/* A step may be split so that a halo exchange overlaps the interior: EDGE_PLANES first
 * (the R planes next to each z neighbour), then INTERIOR, which also injects, records and
 * rotates the time levels. ALL does both. */
typedef enum { RTM_REGION_ALL = 0, RTM_REGION_EDGE_PLANES, RTM_REGION_INTERIOR } rtm_region_t;
typedef enum { RTM_FORWARD = 1, RTM_BACKWARD = -1 } rtm_direction_t;

typedef struct {
  const rtm_config_t *config;  /* kernel and memory choices */
  const rtm_grid_t *grid;      /* this rank's grid */
  const rtm_model_t *model;    /* host parameters of the local z-range */
  const rtm_boundary_t *boundary;
  double dt_s;
  int steps;                   /* traces hold steps + 1 samples */
  rtm_mem_ledger_t *ledger;    /* every allocation is recorded here */
} rtm_backend_desc_t;

typedef struct rtm_backend {
  const char *name;
  const char *description;
  /* RTM_OK when this build and machine can run the backend; else the reason in why. */
  int (*probe)(char *why, size_t why_size);
  int (*create)(const rtm_backend_desc_t *desc, void **state);
  /* wavelets [count][samples], already scaled (dt^2 v^2 / (dx dy dz) times amplitude);
   * step `it` adds sample `it` to the new level. */
  int (*set_sources)(void *state, const rtm_points_t *points, const float *wavelets,
                     int samples);
  /* Receivers record each field of `fields` (RTM_FIELD_BIT mask; receivers.fields, p by
   * default) into its own traces [count][steps + 1]; only those are allocated. A field the
   * physics lacks (q for iso) is an internal error: the config refuses it first. */
  int (*set_receivers)(void *state, const rtm_points_t *points, unsigned fields);
  /* Forward: level it+1 from it and it-1, then records sample it+1 of every receiver.
   * Backward: level it-1 from it and it+1 (for reverse propagation); it undoes forward
   * step `it`: from current = p[it+1], previous = p[it] to current = p[it], previous =
   * p[it-1], adding wavelet sample `it` and recording column it - 1 (iso_cpu.c). Both
   * record every field set_receivers asked for, from the new level. */
  int (*step)(void *state, int it, rtm_region_t region, rtm_direction_t direction);
  /* Whole fields as dense interior arrays [nz_local][ny][nx] (snapshots, checkpoints). */
  int (*read_field)(void *state, rtm_field_t field, rtm_level_t level, float *dense);
  int (*write_field)(void *state, rtm_field_t field, rtm_level_t level, const float *dense);
  /* The samples of `field` recorded so far: [count][steps + 1]. A field set_receivers did
   * not ask for is an internal error. */
  int (*read_traces)(void *state, rtm_field_t field, float *traces);
  /* Waits for queued work (timing); may be NULL for synchronous backends. */
  int (*synchronize)(void *state);
  /* One line naming where it runs ("NVIDIA H100 80GB HBM3 (sm_90)", "host, 2 OpenMP
   * threads") for the run report; may be NULL. */
  void (*describe)(void *state, char *text, size_t size);
  void (*destroy)(void *state);
} rtm_backend_t;

/* Registry lookup: "cpu", "cuda", or "auto" (cuda when its probe passes, else cpu).
 * Unknown names list the known ones; a backend that cannot run says why. */
int rtm_backend_select(const char *name, const rtm_backend_t **backend);
const char *rtm_backend_known_names(void);

extern const rtm_backend_t rtm_backend_cpu;

#ifdef __cplusplus
}
#endif

#endif
