/* A fixture of tests/layering: a solver sub-folder the order does not place.
 * check_layering.cmake must refuse it. */
#include "rtm_grid.h"
