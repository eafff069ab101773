/* sim_helper.h - runs the cpu backend on a homogeneous iso medium with one Ricker point
 * source and a list of receivers; shared by the propagation regression tests. */
#ifndef RTM_TEST_SIM_HELPER_H
#define RTM_TEST_SIM_HELPER_H

typedef struct {
  int n[3];            /* interior cells */
  double h_m;          /* uniform spacing */
  double v_m_s;        /* velocity */
  double frequency_hz; /* Ricker peak; delay 1.2 / f */
  double courant;      /* v dt / h, used through time.cfl (dt = auto) */
  double duration_s;   /* steps = ceil(duration / dt) */
  int boundary_width;  /* cells; 0 = walls at p = 0 just outside the grid */
  double boundary_reflection;
  double source_m[3];
  int receiver_count;
  const double *receiver_m; /* [count][3] */
} sim_params_t;

typedef struct {
  double dt_s;
  int steps;
  float *traces;  /* [receiver_count][steps + 1], malloc'd; free() it */
  double seconds; /* wall time of the time loop */
} sim_result_t;

/* Returns RTM_OK or the status of the first call that failed. */
int sim_run(const sim_params_t *params, sim_result_t *result);

/* Ricker with delay 1.2 / f, the wavelet sim_run injects (before scaling). */
double sim_wavelet(double t_s, double frequency_hz);

#endif
