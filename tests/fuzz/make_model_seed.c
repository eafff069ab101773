/* make_model_seed OUT.h5 - a valid 6 x 5 x 4 tti model file of 10 m cells, the seed of
 * fuzz_model's corpus (run/fuzz.sh). */
#include <stdio.h>

#include "rtm_io.h"

int main(int argc, char **argv) {
  enum { CELLS = 6 * 5 * 4 };
  static float vp[CELLS], epsilon[CELLS], delta[CELLS], theta[CELLS], phi[CELLS];
  for (int i = 0; i < CELLS; ++i) {
    vp[i] = 2000.0f + 10.0f * (float)i;
    epsilon[i] = 0.2f;
    delta[i] = 0.1f;
    theta[i] = 30.0f;
    phi[i] = 45.0f;
  }
  const float *const values[RTM_IO_PARAMETERS] = {vp, epsilon, delta, theta, phi};
  const rtm_io_volume_t volume = {
      .n = {6, 5, 4}, .spacing_m = {10.0, 10.0, 10.0}, .z_offset = 0, .nz_local = 4};
  if (argc != 2) {
    fprintf(stderr, "usage: make_model_seed OUT.h5\n");
    return 2;
  }
  return rtm_io_write_model(argv[1], &volume, values) == 0 ? 0 : 1;
}
