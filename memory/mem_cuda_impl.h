/* mem_cuda_impl.h - private to memory/: the device strategies' tables (mem_cuda.c) for the
 * registry (rtm_memory.c). Only in a build with CUDA (RTM3D_HAVE_CUDA). */
#ifndef RTM_MEM_CUDA_IMPL_H
#define RTM_MEM_CUDA_IMPL_H

#include "rtm_memory.h"

extern const rtm_mem_strategy_t rtm_mem_device;
extern const rtm_mem_strategy_t rtm_mem_vmm;
extern const rtm_mem_strategy_t rtm_mem_vmm_compressed;
extern const rtm_mem_strategy_t rtm_mem_managed;
extern const rtm_mem_strategy_t rtm_mem_pinned;

#endif
