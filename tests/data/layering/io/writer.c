/* A fixture of tests/layering: io including the solver through angle brackets. */
#include <rtm_solver.h>
#include <stdio.h>
