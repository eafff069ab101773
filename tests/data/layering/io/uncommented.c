#define _POSIX_C_SOURCE 200809L
#include <stdio.h>

int uncommented_fixture(void) { return 0; }
