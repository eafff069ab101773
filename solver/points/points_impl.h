/* points_impl.h - what the point operators (points.c) and the acquisition (acquisition.c)
 * share: the one test of "inside the volume", so that a receiver the acquisition keeps is
 * one rtm_points_init accepts, and one it leaves out is one it would refuse. */
#ifndef RTM_POINTS_IMPL_H
#define RTM_POINTS_IMPL_H

#include "rtm_grid.h"

/* 1 when coordinate_m lies on the global span of cell centres along axis (0 x, 1 y, 2 z),
 * within a rounding tolerance of its ends; 0 otherwise (NaN included). */
int rtm_points_axis_inside(const rtm_grid_t *grid, int axis, double coordinate_m);

#endif
