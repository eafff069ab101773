/* rtm_backend_cpu.h - the cpu reference backend's table (cpu_backend.c): plain loops, the
 * oracle every GPU kernel is tested against. The registry (rtm_solver.h) lists it; tests
 * drive it directly. */
#ifndef RTM_BACKEND_CPU_H
#define RTM_BACKEND_CPU_H

#include "rtm_backend.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const rtm_backend_t rtm_backend_cpu;

#ifdef __cplusplus
}
#endif

#endif
