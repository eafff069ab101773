/* The fixed-rate codec's C reference (rtm_codec.h): the volume walked block by block, each
 * block coded by rtm_codec_block.h, as the CUDA kernels code it. Blocks are independent, so
 * OpenMP threads share them out without changing a bit. */
#include "rtm_codec.h"

#include <stdint.h>

#include "rtm_codec_block.h"
#include "rtm_status.h"

static int rate_valid(int rate) {
  return rate >= RTM_CODEC_RATE_MIN && rate <= RTM_CODEC_RATE_MAX;
}

size_t rtm_codec_slab_bytes(const int n[3], int rate) {
  if (!rate_valid(rate) || n[0] <= 0 || n[1] <= 0 || n[2] <= 0) return 0;
  size_t blocks[3];
  rtm_codec_block_counts(n, blocks);
  return blocks[0] * blocks[1] * (size_t)rate * sizeof(uint64_t);
}

size_t rtm_codec_bytes(const int n[3], int rate) {
  size_t blocks[3];
  rtm_codec_block_counts(n, blocks);
  return rtm_codec_slab_bytes(n, rate) * blocks[2];
}

void rtm_codec_block_origin(const int n[3], size_t block, int origin[3]) {
  size_t blocks[3];
  rtm_codec_block_counts(n, blocks);
  origin[0] = (int)(block % blocks[0]) * RTM_CODEC_EDGE;
  origin[1] = (int)(block / blocks[0] % blocks[1]) * RTM_CODEC_EDGE;
  origin[2] = (int)(block / blocks[0] / blocks[1]) * RTM_CODEC_EDGE;
}

int rtm_codec_check(const int n[3], size_t pitch_y, size_t pitch_z, int rate,
                    const void *compressed) {
  int status = RTM_OK;
  if (!rate_valid(rate))
    RTM_FAIL(RTM_ERR_CONFIG, "codec: rate %d bits a value is outside %d .. %d", rate,
             RTM_CODEC_RATE_MIN, RTM_CODEC_RATE_MAX);
  if (n[0] <= 0 || n[1] <= 0 || n[2] <= 0)
    RTM_FAIL(RTM_ERR_INTERNAL, "codec: empty volume %d x %d x %d", n[0], n[1], n[2]);
  if (pitch_y < (size_t)n[0] || pitch_z < pitch_y * (size_t)n[1])
    RTM_FAIL(RTM_ERR_INTERNAL, "codec: pitches %zu, %zu too small for %d x %d", pitch_y, pitch_z,
             n[0], n[1]);
  if ((uintptr_t)compressed % sizeof(uint64_t))
    RTM_FAIL(RTM_ERR_INTERNAL, "codec: compressed bytes not 8-byte aligned");
fail:
  return status;
}

int rtm_codec_compress(const float *volume, const int n[3], size_t pitch_y, size_t pitch_z,
                       int rate, void *out, size_t *first_refused) {
  int status = RTM_OK;
  RTM_TRY(rtm_codec_check(n, pitch_y, pitch_z, rate, out));
  size_t blocks[3];
  rtm_codec_block_counts(n, blocks);
  const long long total = (long long)(blocks[0] * blocks[1] * blocks[2]);
  uint64_t *words = out;
  long long refused = total;
#pragma omp parallel for schedule(static) reduction(min : refused)
  for (long long b = 0; b < total; ++b) {
    int count[3];
    const size_t first = rtm_codec_block_place(n, blocks, (size_t)b, pitch_y, pitch_z, count);
    uint32_t bits[RTM_CODEC_VALUES];
    rtm_codec_gather(volume + first, count, pitch_y, pitch_z, bits);
    if (rtm_codec_encode_block(bits, count, rate, words + (size_t)b * (size_t)rate) && b < refused)
      refused = b;
  }
  if (first_refused) *first_refused = refused < total ? (size_t)refused : RTM_CODEC_NO_BLOCK;
  if (refused < total) status = RTM_ERR_NUMERIC;
fail:
  return status;
}

int rtm_codec_decompress(const void *in, const int n[3], int rate, float *volume, size_t pitch_y,
                         size_t pitch_z) {
  int status = RTM_OK;
  RTM_TRY(rtm_codec_check(n, pitch_y, pitch_z, rate, in));
  size_t blocks[3];
  rtm_codec_block_counts(n, blocks);
  const long long total = (long long)(blocks[0] * blocks[1] * blocks[2]);
  const uint64_t *words = in;
#pragma omp parallel for schedule(static)
  for (long long b = 0; b < total; ++b) {
    int count[3];
    const size_t first = rtm_codec_block_place(n, blocks, (size_t)b, pitch_y, pitch_z, count);
    uint32_t bits[RTM_CODEC_VALUES];
    rtm_codec_decode_block(words + (size_t)b * (size_t)rate, rate, bits);
    rtm_codec_scatter(bits, count, pitch_y, pitch_z, volume + first);
  }
fail:
  return status;
}
