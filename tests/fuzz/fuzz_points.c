/* fuzz_points - libFuzzer target for the points-file reader (solver/points/acquisition.c):
 * the input as a file of "x y z" lines, read as shots.file (rtm_shots_init) and as
 * receivers.file (rtm_receiver_positions), each point required inside the volume, and the
 * receivers it accepts given to rtm_points_init, as a run does, which checks them again. The
 * volume: 20 x 20 x 20 cells of 10 m from the origin, so cell centres span [0, 190] m on each axis
 * (the corpus's seeds lie inside). */
#define _POSIX_C_SOURCE 200809L /* getpid */
#include <stdlib.h>

#include "fuzz_input.h"
#include "rtm_grid.h"
#include "rtm_points.h"
#include "rtm_status.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = fuzz_input_file("points", "txt", data, size);
  if (!path) return 0;
  static rtm_config_t cfg; /* 20 KB of paths: not on the stack */
  rtm_config_defaults(&cfg);
  cfg.shots.layout = RTM_SHOTS_FILE;
  cfg.receivers.layout = RTM_RECEIVERS_FILE;
  snprintf(cfg.shots.file, sizeof cfg.shots.file, "%s", path);
  snprintf(cfg.receivers.file, sizeof cfg.receivers.file, "%s", path);
  rtm_grid_t grid;
  if (rtm_grid_init(&grid, (const int[3]){20, 20, 20}, (const double[3]){10.0, 10.0, 10.0},
                    (const double[3]){0.0, 0.0, 0.0}) != RTM_OK)
    abort(); /* the harness's own volume: never refused */
  rtm_shots_t shots;
  if (rtm_shots_init(&cfg, &grid, &shots) == RTM_OK) rtm_shots_release(&shots);
  double *position_m = NULL;
  int count = 0;
  if (rtm_receiver_positions(&cfg, &grid, (const double[3]){0.0, 0.0, 0.0}, &position_m, &count) ==
      RTM_OK) {
    rtm_points_t points;
    if (rtm_points_init(&points, &grid, position_m, count, "receiver") == RTM_OK)
      rtm_points_release(&points);
    free(position_m);
  }
  return 0;
}
