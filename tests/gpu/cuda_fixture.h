/* cuda_fixture.h - what the GPU tests of the propagation kernels share (test_cuda_backend
 * for iso, test_cuda_tti for vti and tti): the 45 x 37 x 29 configuration with an off-grid
 * source, 96 off-grid receivers and an absorbing layer, drawn fresh from a printed seed; a
 * run of a configuration through rtm_propagator; its comparison with a cpu reference run;
 * the split, backward and write/read checks on a pair of propagators; and a propagator
 * moved to another shot against one created there. Include after
 * <cmocka.h>: the checks assert. */
#ifndef RTM_TEST_CUDA_FIXTURE_H
#define RTM_TEST_CUDA_FIXTURE_H

#include <stddef.h>

#include "rtm_config.h"
#include "rtm_grid.h"
#include "rtm_propagator.h"
#include "rtm_solver.h"
#include "rtm_test_random.h"

/* A run's results, read back after its last step. */
typedef struct {
  float *p, *q;             /* the current fields, dense; q NULL for iso */
  float *traces, *q_traces; /* [receiver_count][steps + 1]; q_traces NULL unless recorded */
  int receiver_count;
  int compressed; /* the wavefields were granted vmm-compressed memory */
} cuda_run_t;

enum { CUDA_REFERENCES = 4 };

typedef struct {
  int steps;        /* 300 unless RTM3D_TEST_STEPS says otherwise, at least 50 */
  rtm_config_t cfg; /* the cpu and cuda runs start from it */
  rtm_grid_t grid;
  rtm_model_t model;
  int hopper;                            /* compute capability 9.0 or above: tma runs */
  cuda_run_t reference[CUDA_REFERENCES]; /* cpu runs, as the test names them */
} cuda_fixture_t;

/* Sets the model at dense index i, cell (ix, iy, iz), from draws of rng. */
typedef void (*cuda_cell_maker_t)(cuda_fixture_t *f, size_t i, int ix, int iy, int iz,
                                  rtm_test_rng_t *rng);

/* A fixture for `equation`: steps, a seed printed under the test's name, the configuration
 * and grid, the model's arrays for the equation set cell by cell (x fastest) by fill_cell,
 * and the device's compute capability. The test adds its references. NULL on failure. */
cuda_fixture_t *cuda_fixture_create(const char *test, rtm_equation_t equation,
                                    cuda_cell_maker_t fill_cell);

/* Layered vp with a gradient and 5% cell-by-cell noise (one draw). */
float cuda_layered_vp(const rtm_grid_t *grid, int ix, int iy, int iz, rtm_test_rng_t *rng);
/* Frees the references, the model and the fixture; for cmocka's group teardown. */
int cuda_fixture_teardown(void **state);

/* The fixture's configuration on `backend` ("cpu", "cuda") with memory `strategy`. */
rtm_config_t cuda_with_backend(const cuda_fixture_t *f, const char *backend, const char *strategy);

/* A kernel tile in cells and the planes per z-chunk (0: all of nz). */
typedef struct {
  int block[2];
  int zblock;
} cuda_shape_t;

void cuda_set_kernel(rtm_config_t *cfg, const char *halo, int stages, const cuda_shape_t *shape);

/* rtm_propagator_create refuses cfg as a config error. */
void cuda_check_refused(const cuda_fixture_t *f, const rtm_config_t *cfg);

/* The fixture's configuration on cuda device memory with each of `count` tiles (block x,
 * block y) is refused as a config error. */
void cuda_check_tiles_refused(const cuda_fixture_t *f, const int (*tiles)[2], size_t count);

/* `steps` forward steps of cfg on the model; the results in *out (cuda_run_free). Returns
 * the status of the first call that failed, with nothing left allocated. */
int cuda_run(const cuda_fixture_t *f, const rtm_config_t *cfg, const rtm_model_t *model,
             cuda_run_t *out);
void cuda_run_free(cuda_run_t *run);

/* rtm_propagator_set_shot on cfg (its receivers made a patch that moves with the shot): a
 * propagator created at cfg's source, run, moved to a second shot near a face (whose patch
 * loses receivers) and run again equals, bit for bit, one created at the second shot. */
void cuda_check_set_shot(const cuda_fixture_t *f, const rtm_config_t *cfg);

/* got against ref: the same receivers; p, q (where both have it), the p traces and the q
 * traces (recorded by both or by neither) within `tolerance` in relative L2. Prints the
 * errors after `what`. */
void cuda_compare(const cuda_fixture_t *f, const cuda_run_t *got, const cuda_run_t *ref,
                  double tolerance, const char *what);

/* Two propagators of cfg, `all` stepped 40 times by RTM_REGION_ALL and `split` by the edge
 * planes then the interior: the fields they hold must be equal bit for bit. */
void cuda_step_all_and_split(const cuda_fixture_t *f, const rtm_config_t *cfg,
                             rtm_propagator_t *all, rtm_propagator_t *split);

/* After 40 forward steps (cuda_step_all_and_split, no damping layer): a forward step 40 and
 * a backward step 40 give back the current and previous `field` to fp32 rounding (two
 * updates of O(1) relative rounding each: 1e-5 relative L2). */
void cuda_check_backward_undoes_forward(const cuda_fixture_t *f, rtm_propagator_t *prop,
                                        rtm_field_t field);

/* `field` written at the previous level reads back unchanged: values (i % modulus) - offset. */
void cuda_check_write_read(const cuda_fixture_t *f, rtm_propagator_t *prop, rtm_field_t field,
                           int modulus, float offset);

#endif
