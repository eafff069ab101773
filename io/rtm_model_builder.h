/* rtm_model_builder.h - a model from a short description (rtm3d makemodel): one element a
 * line, applied in order over the grid's nodes, each a keyword and name=value pairs,
 * '#' starting a comment. Lengths in metres, velocities in m/s, angles in degrees.
 *
 *   background vp=V [gradient=G] [epsilon= delta= theta= phi=]
 *       everywhere: vp = V + G (z - oz), G in 1/s (m/s a metre of depth)
 *   layer depth=D vp=V [dip=A] [azimuth=B] [gradient=G] [epsilon= delta= theta= phi=]
 *       every node below a plane replaced: the plane passes depth D under the grid's centre
 *       and dips A degrees toward azimuth B (from +x toward +y); vp = V + G (depth below the
 *       plane); the anisotropy given replaces, the rest is kept
 *   box x=X0,X1 y=Y0,Y1 z=Z0,Z1 [vp=] [epsilon= delta= theta= phi=]
 *       the nodes inside set to the values given
 *   diffractor x= y= z= radius=R vp=V [epsilon= ...]
 *       the nodes within R of the point set (a node at least: R below a cell still marks
 *       the nearest node)
 *   anomaly x= y= z= sigma=S dvp=DV
 *       vp += DV exp(-r^2 / (2 S^2)): a smooth Gaussian
 *
 * Every parameter volume is written (/vp /epsilon /delta /theta /phi), so the file serves
 * iso, vti and tti decks. A description that names an unknown keyword or key, lacks a
 * required key, or gives a value out of range (velocities in (0, 20000], epsilon and delta
 * in [-0.5, 1], radius and sigma > 0) is refused naming file:line and the key. */
#ifndef RTM_MODEL_BUILDER_H
#define RTM_MODEL_BUILDER_H

#include "rtm_io.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The model of the description in `text` (`name` names it in messages, such as the file's
 * path) on the volume's whole grid: values[RTM_IO_PARAMETERS] malloc'd [nz][ny][nx] arrays
 * (rtm_io_model_release frees them). RTM_ERR_INPUT for a bad description. */
int rtm_model_build(const char *text, const char *name, const rtm_io_volume_t *volume,
                    float *values[RTM_IO_PARAMETERS]);

#ifdef __cplusplus
}
#endif

#endif
