/* fuzz_model - libFuzzer target for the model reader: the input as an HDF5 model file,
 * read for a tti run of a small volume (rtm_io_read_model: every parameter, its shape,
 * spacing and values checked). HDF5 itself parses the bytes first, so a finding may be the
 * library's; run/fuzz.sh says where a crash's stack points. */
#define _POSIX_C_SOURCE 200809L /* getpid */
#include "fuzz_input.h"
#include "rtm_io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = fuzz_input_file("model", "h5", data, size);
  if (!path) return 0;
  /* the corpus's models are 6 x 5 x 4 cells of 10 m (run/fuzz.sh writes them) */
  const rtm_io_volume_t volume = {
      .n = {6, 5, 4}, .spacing_m = {10.0, 10.0, 10.0}, .z_offset = 0, .nz_local = 4};
  float *values[RTM_IO_PARAMETERS] = {NULL};
  if (rtm_io_read_model(path, &volume, RTM_EQUATION_TTI, values) == 0) rtm_io_model_release(values);
  return 0;
}
