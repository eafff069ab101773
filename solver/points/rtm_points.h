/* rtm_points.h - solver/points: the point operators and the acquisition geometry.
 *
 * Sources and receivers are point lists with trilinear taps computed here once, so that
 * every backend injects and records the same way; injection and recording use the same
 * weights (each other's adjoint). The acquisition (acquisition.c) turns the config into
 * positions: the shots (the source, a grid or a file of them) and each shot's receivers (a
 * plane, a file, or a patch that moves with the shot). */
#ifndef RTM_POINTS_H
#define RTM_POINTS_H

#include <stddef.h>

#include "rtm_config.h"
#include "rtm_grid.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- point sources and receivers ---- */
#define RTM_POINT_TAPS 8       /* trilinear: taps a point */
#define RTM_POINT_MAX_RADIUS 4 /* sinc: half-width in cells, at most the ghost planes' R */

/* How a point meets the grid (points.interpolation, points.radius): trilinear over the 8
 * cells around it (second-order accurate between nodes), or a tensor product of
 * Kaiser-windowed sincs over 2 radius cells an axis (Hicks 2002, Geophysics 67(1): his b
 * for kmax = pi / 2, the band of 4 points per wavelength); on a node both are the node. */
typedef enum { RTM_POINTS_TRILINEAR = 0, RTM_POINTS_SINC } rtm_points_kind_t;
typedef struct {
  rtm_points_kind_t kind;
  int radius; /* sinc: 1 .. RTM_POINT_MAX_RADIUS */
} rtm_point_operator_t;

typedef struct {
  int count;
  int taps;           /* a point: 8, or (2 radius)^3; plane by plane (z slowest), then y, x */
  int taps_per_plane; /* 4, or (2 radius)^2 */
  double *position_m; /* [count][3] as requested */
  size_t *tap_index;  /* [count][taps] into a padded field of the local grid */
  float *tap_weight;  /* [count][taps]; 0 for taps outside this rank's z-range or outside
                         the volume (a sinc near a face) */
  /* The same taps as the tensor product they are, for a backend that forms the weights where
   * it reads the field (the cuda recorder: 200 bytes a point instead of 12 a tap): tap
   * (i, j, k) of point p, i along x, has weight (float)((wx[i] * wy[j]) * wz[k]) in double,
   * the w of axis_weight[p][0..2][0..width), and index base_index[p] + i + j stride_y +
   * k stride_z (meaningful where the weight is not 0); wz is 0 on planes outside this rank's
   * z-range. NULL for points made another way (copies, parts): the tables above rule. */
  int width;             /* taps an axis: 2, or 2 radius */
  double *axis_weight;   /* [count][3][width] */
  long long *base_index; /* [count] */
} rtm_points_t;

/* Builds trilinear taps for positions (metres) on the local grid. A position outside the
 * global interior is an error naming `what` and the point's number. */
int rtm_points_init(rtm_points_t *points, const rtm_grid_t *grid, const double *position_m,
                    int count, const char *what);
/* The same with the operator `op` (NULL: trilinear). */
int rtm_points_init_operator(rtm_points_t *points, const rtm_grid_t *grid, const double *position_m,
                             int count, const char *what, const rtm_point_operator_t *op);
void rtm_points_release(rtm_points_t *points);
/* The taps' weighted mean of `values` (a dense [nz_local][ny][nx] volume of this rank's
 * slab, the model's vp) at point `point`, of the squares with `squared`; 0 where no tap has
 * weight. Summed plane by plane (the point's taps_per_plane taps of each z plane, then the
 * planes in order) and, on z-slabs, each plane's sums over the ranks, whose taps outside
 * their slab have weight 0: the same sums in the same order whatever the slabs (rtm_mpi.h),
 * so every rank gets the one-rank value. Collective on z-slabs. */
int rtm_points_mean(const rtm_points_t *points, int point, const rtm_grid_t *grid,
                    const float *values, int squared, double *mean);

/* ---- acquisition ---- */
/* The shot positions of the config (shots.layout): single = the [source] position (autos at
 * the centre); grid = shots.x_count x shots.y_count at shots.z (x fastest; step auto = the
 * non-absorbing interior's width / count, first auto = the row centred on that interior,
 * z auto = source.z); file = one "x y z" per line of shots.file ('#' comments; errors name
 * file:line). A shot outside the volume is an error naming it. */
typedef struct {
  int count;
  double *source_m; /* [count][3] */
  int widest;       /* receivers.layout = patch: the shot whose patch keeps the most, else 0 */
} rtm_shots_t;
int rtm_shots_init(const rtm_config_t *cfg, const rtm_grid_t *grid, rtm_shots_t *shots);
void rtm_shots_release(rtm_shots_t *shots);
/* Where a propagator is made ready and weighed: the source (rtm_source_position), but under
 * receivers.layout = patch with many shots the run's shot whose patch keeps the most
 * receivers inside the volume, so that what is checked there is a shot of the run's and the
 * receivers weighed are the most any shot records (a stand-in at the centre could lie where
 * no shot is, its patch wholly outside). */
int rtm_sizing_shot_position(const rtm_config_t *cfg, const rtm_grid_t *grid, double position_m[3]);

/* Source position with "auto" coordinates resolved to the centre of the volume, and so the
 * coordinates the shot layout places itself (x and y under grid, all three under file: the
 * deck's source.x there is ignored, and need not lie inside a smaller grid). */
void rtm_source_position(const rtm_config_t *cfg, const rtm_grid_t *grid, double position_m[3]);

/* Receiver positions [count][3] (malloc'd) from receivers.layout: a plane (autos resolved:
 * z = source depth, first = inner edge of the absorbing layer, step = spacing, count =
 * up to the far inner edge), a text file ("x y z" per line, '#' comments; errors name
 * file:line), a patch (the plane's keys, x_first and y_first as offsets from source_m:
 * receivers that fall outside the volume are left out, with a warning), or none. Patch
 * autos: z = source depth, step = spacing, count = what a plane holds between the layer's
 * inner edges, first = the patch centred on source_m; none inside is an error. */
int rtm_receiver_positions(const rtm_config_t *cfg, const rtm_grid_t *grid,
                           const double source_m[3], double **position_m, int *count);

/* Warns once when points lie inside the absorbing layer (width cells), where they are
 * damped; `what` names one of them ("source", "receiver"). */
void rtm_points_warn_in_layer(const rtm_grid_t *grid, int width, const double *position_m,
                              int count, const char *what);

#ifdef __cplusplus
}
#endif

#endif
