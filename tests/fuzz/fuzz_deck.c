/* fuzz_deck - libFuzzer target for the deck parser: the input as a config file, loaded
 * (rtm_config_load) and validated as `rtm3d model` does. A finding is a crash, a hang or a
 * sanitizer report; refusals (RTM_ERR_*) are the expected answer to most inputs.
 * run/fuzz.sh builds and runs it (clang, -fsanitize=fuzzer,address,undefined). */
#define _POSIX_C_SOURCE 200809L /* getpid */
#include "fuzz_input.h"
#include "rtm_config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = fuzz_input_file("deck", "ini", data, size);
  if (!path) return 0;
  rtm_config_t cfg;
  rtm_config_defaults(&cfg);
  if (rtm_config_load(path, &cfg) == 0) (void)rtm_config_validate(&cfg);
  return 0;
}
