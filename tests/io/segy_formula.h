/* segy_formula.h - the gathers test_segy writes and segy_second_reader.py expects: shot k
 * (of SEGY_FORMULA_SHOTS) has 3 + k receivers; positions on whole millimetres; samples from
 * a formula rounded to float once. Keep segy_second_reader.py in step with it. */
#ifndef SEGY_FORMULA_H
#define SEGY_FORMULA_H

enum {
  SEGY_FORMULA_SHOTS = 2,
  SEGY_FORMULA_MAX_RECEIVERS = 4,
  SEGY_FORMULA_SAMPLES = 51,
  SEGY_FORMULA_DT_US = 2000
};

static inline int segy_formula_receivers(int shot) {
  return 3 + shot;
}

static inline void segy_formula_source(int shot, double m[3]) {
  m[0] = 100.25 + 50.0 * shot;
  m[1] = 200.5;
  m[2] = 30.125;
}

static inline void segy_formula_receiver(int shot, int r, double m[3]) {
  m[0] = 10.5 * r + shot;
  m[1] = 20.25 + r;
  m[2] = 5.0 + 0.5 * r;
}

static inline float segy_formula_sample(int shot, int r, int s) {
  return (float)((shot + 1) * 0.5 - r * 0.25 + s * 1e-3);
}

#endif
