/* fuzz_deck - libFuzzer target for the deck parser: the input as a config file, loaded
 * (rtm_config_load) and validated as `rtm3d model` does. A finding is a crash, a hang or a
 * sanitizer report; refusals (RTM_ERR_*) are the expected answer to most inputs.
 * run/fuzz.sh builds and runs it (clang, -fsanitize=fuzzer,address,undefined). */
#define _POSIX_C_SOURCE 200809L
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "rtm_config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static char path[64];
  if (!path[0]) snprintf(path, sizeof path, "/tmp/fuzz_deck_%ld.ini", (long)getpid());
  FILE *f = fopen(path, "wb");
  if (!f) return 0;
  fwrite(data, 1, size, f);
  fclose(f);
  rtm_config_t cfg;
  rtm_config_defaults(&cfg);
  if (rtm_config_load(path, &cfg) == 0) (void)rtm_config_validate(&cfg);
  return 0;
}
