/* A fixture of tests/layering: physics including the top level of solver/, which includes
 * physics (the loop physics <-> solver/ had before the order was checked). check_layering.cmake must
 * refuse it. */
#include "rtm_physics.h"
#include "rtm_solver.h"
