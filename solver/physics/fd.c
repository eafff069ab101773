/* 8th-order (R = 4) central-difference coefficients (docs/design.md "The propagator"). */
#include "rtm_physics.h"

/* d2f/dx2 ~ (c0 f0 + sum_k c_k (f_k + f_-k)) / h^2, exact for polynomials of degree <= 9. */
const double rtm_fd2_coeff[RTM_RADIUS + 1] = {-205.0 / 72.0, 8.0 / 5.0, -1.0 / 5.0, 8.0 / 315.0,
                                              -1.0 / 560.0};

/* df/dx ~ sum_k c_{k-1} (f_k - f_-k) / h, exact for polynomials of degree <= 8. */
const double rtm_fd1_coeff[RTM_RADIUS] = {4.0 / 5.0, -1.0 / 5.0, 4.0 / 105.0, -1.0 / 280.0};

void rtm_fd_weights(double h, rtm_fd_weights_t *weights) {
  for (int k = 0; k <= RTM_RADIUS; ++k)
    weights->c2[k] = (float)rtm_fd2_coeff[k];
  weights->inv_h2 = (float)(1.0 / (h * h));
  for (int k = 0; k < RTM_RADIUS; ++k)
    weights->w1[k] = (float)(rtm_fd1_coeff[k] / h);
}
