/* A fixture of tests/layering: io including the solver, as io/rtm_io.h did before the
 * architecture issue. check_layering.cmake must refuse it. */
#include "rtm_solver.h"
#include "rtm_status.h"
