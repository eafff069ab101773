/* A fixture of tests/layering: cuda including the cpu backend, its sibling of one level.
 * check_layering.cmake must refuse it. */
#include "rtm_backend_cpu.h"
#include "rtm_backend_cuda.h"
