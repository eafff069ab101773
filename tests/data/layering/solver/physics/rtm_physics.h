/* A fixture of tests/layering: physics may include the grid below it (allowed). */
#include "rtm_grid.h"
