/* fuzz_input.h - the fuzz targets' input as a file (the parsers read paths): the bytes
 * written to /tmp/fuzz_NAME_PID.SUFFIX, one path a process, rewritten each input. */
#ifndef RTM_FUZZ_INPUT_H
#define RTM_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The path holding data, or NULL when it cannot be written. */
static inline const char *fuzz_input_file(const char *name, const char *suffix, const uint8_t *data,
                                          size_t size) {
  static char path[96];
  snprintf(path, sizeof path, "/tmp/fuzz_%s_%ld.%s", name, (long)getpid(), suffix);
  FILE *f = fopen(path, "wb");
  if (!f) return NULL;
  const int written = fwrite(data, 1, size, f) == size;
  return fclose(f) == 0 && written ? path : NULL;
}

#endif
