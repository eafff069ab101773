/* A fixture of tests/layering: prototypes written by hand at file scope, as backend.c had
 * before the check refused them (a function and an extern object defined elsewhere), beside declarations
 * the check must let be: a static function and a forward declaration of a function the file
 * defines. check_layering.cmake must refuse the first two. */
#include "rtm_solver.h"

extern const struct rtm_backend rtm_backend_cuda;
int rtm_cuda_rank_device(int configured,
                         int *device); /* backend_cuda_common.c */
static int first_device(int configured);
int rtm_backend_device(int configured, int *device);

int rtm_backend_device(int configured, int *device) {
  *device = first_device(configured);
  return rtm_cuda_rank_device(configured, device);
}

static int first_device(int configured) {
  return configured;
}
