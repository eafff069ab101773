/* preload_impl.h - what the robustness suite's LD_PRELOAD libraries share: whether a path
 * is one the test named, by a string it holds. */
#ifndef RTM3D_PRELOAD_IMPL_H
#define RTM3D_PRELOAD_IMPL_H

#include <stdlib.h>
#include <string.h>

/* Whether path holds one of the comma-separated strings of the environment variable. */
static inline int preload_listed(const char *variable, const char *path) {
  const char *list = getenv(variable);
  if (!list || !path) return 0;
  while (*list) {
    const size_t length = strcspn(list, ",");
    char wanted[256];
    if (length > 0 && length < sizeof wanted) {
      memcpy(wanted, list, length);
      wanted[length] = '\0';
      if (strstr(path, wanted)) return 1;
    }
    list += length + (list[length] == ',');
  }
  return 0;
}

#endif
