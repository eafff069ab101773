/* rtm_float_bits.h - a float's bit pattern and back, alike on the host (memcpy) and in a
 * CUDA kernel (the device's intrinsics): what the fp16 scaling (rtm_half.h) and the
 * snapshot codec (rtm_codec_block.h) build their exact power-of-two and integer work on. */
#ifndef RTM_FLOAT_BITS_H
#define RTM_FLOAT_BITS_H

#include <stdint.h>
#include <string.h> /* memcpy */

#ifdef __CUDACC__
#define RTM_FLOAT_BITS_HD __host__ __device__ __forceinline__
#else
#define RTM_FLOAT_BITS_HD inline
#endif

static RTM_FLOAT_BITS_HD uint32_t rtm_float_bits(float value) {
#ifdef __CUDA_ARCH__
  return __float_as_uint(value);
#else
  uint32_t bits;
  memcpy(&bits, &value, sizeof bits);
  return bits;
#endif
}

static RTM_FLOAT_BITS_HD float rtm_bits_float(uint32_t bits) {
#ifdef __CUDA_ARCH__
  return __uint_as_float(bits);
#else
  float value;
  memcpy(&value, &bits, sizeof value);
  return value;
#endif
}

#endif
