/* checkpoint_testing.h - the checks of rtm.reconstruction = checkpoint that the cpu test
 * (test_checkpoint.c) and the GPU test (test_checkpoint_gpu.c) run on their backend:
 *
 *   source wavefield   S(n) as the checkpoint reconstruction brings it back
 *                      (rtm_migration_replay_source) against S(n) read after the forward
 *                      step to n of a plain propagator of the same shot, every imaging step,
 *                      bit for bit: a recomputed step is the same float operations on the
 *                      same inputs;
 *   image              the survey of migration_helper.h migrated with snapshots (fp32) and
 *                      with checkpoint from the same gathers: image and illumination bit
 *                      for bit (the bar is 1e-3 relative L2; the recomputed S(n) are
 *                      the stored ones, and the imaging condition takes them in the same
 *                      order), and the recomputation per shot equal to revolve's optimum. */
#ifndef RTM_TEST_CHECKPOINT_TESTING_H
#define RTM_TEST_CHECKPOINT_TESTING_H

#include <stddef.h>

typedef struct {
  const char *backend;  /* backend.name */
  const char *equation; /* physics.equation */
  const char *imaging;  /* memory.imaging: "" for the default */
  int steps, imaging_step, checkpoints;
} checkpoint_case_t;

/* S(n) of the checkpoint replay equals the forward pass's at every imaging step. */
void checkpoint_check_source(const checkpoint_case_t *c);
/* The checkpoint image equals the snapshots image; the recomputation is optimal. */
void checkpoint_check_image(const checkpoint_case_t *c);

#endif
