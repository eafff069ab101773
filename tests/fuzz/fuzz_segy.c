/* fuzz_segy - libFuzzer target for the SEG-Y reader (io/segy.c, built with segyio): the
 * input as a .sgy file whose shots are counted (rtm_segy_shot_count) and read, the first,
 * the last and one past it (rtm_segy_read_shot: headers, field records, positions through
 * their scalars, IBM or IEEE samples, each checked finite and bounded). segyio parses the
 * bytes under the reader, so a finding may be the library's; run/fuzz.sh says where a
 * crash's stack points. */
#define _POSIX_C_SOURCE 200809L /* getpid */
#include "fuzz_input.h"
#include "rtm_io.h"
#include "rtm_status.h"

static void read_shot(const char *path, int shot) {
  rtm_io_gather_t gather;
  if (rtm_segy_read_shot(path, shot, &gather) == RTM_OK) rtm_io_gather_release(&gather);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = fuzz_input_file("segy", "sgy", data, size);
  if (!path) return 0;
  int shots = 0;
  if (rtm_segy_shot_count(path, &shots) != RTM_OK) return 0;
  read_shot(path, 0);
  if (shots > 1) read_shot(path, shots - 1);
  read_shot(path, shots); /* none: refused */
  return 0;
}
