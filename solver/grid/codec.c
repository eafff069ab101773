/* The codec's C reference (rtm_codec.h): the volume walked a slab of 4 planes at a time,
 * each slab's blocks analysed, given their words and coded by rtm_codec_block.h, as the CUDA
 * kernels code them. Slabs are independent, so OpenMP threads share them out without
 * changing a bit. */
#include "rtm_codec.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

size_t rtm_codec_scratch_bytes(const int n[3]) {
  if (n[0] <= 0 || n[1] <= 0 || n[2] <= 0) return 0;
  size_t blocks[3];
  rtm_codec_block_counts(n, blocks);
  return rtm_codec_scratch_layout(blocks).bytes;
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

/* ---- a slab of 4 planes: its blocks coded down to a common level ---- */

/* One block as the slab's allocation sees it: its words through each plane 0 .. top. */
typedef struct {
  int kind; /* RTM_CODEC_BLOCK_* */
  int emax, top;
  unsigned char words[RTM_CODEC_PLANES];
  uint32_t coef[RTM_CODEC_VALUES];
} block_plan_t;

/* The words block p takes coded down to `level` (0 where the level is above its top plane). */
static int words_at(const block_plan_t *p, int level) {
  if (p->kind != RTM_CODEC_BLOCK_CODED) return 0;
  const int plane = rtm_codec_plane_at(level, p->emax, p->top);
  return plane < 0 ? 0 : p->words[plane];
}

/* The extent of slab s (its planes: 4, fewer at the volume's end). */
static void slab_extent(const int n[3], size_t s, int slab[3]) {
  slab[0] = n[0];
  slab[1] = n[1];
  slab[2] = rtm_codec_extent(n[2], (int)s);
}

/* Codes slab s of the volume (its first plane at `volume`) into its words `out`, with
 * `plan` room for its blocks. Returns the lowest refused block's number in the slab, or
 * RTM_CODEC_NO_BLOCK. */
static size_t compress_slab(const float *volume, const int n[3], size_t s, size_t pitch_y,
                            size_t pitch_z, int rate, block_plan_t *plan, uint64_t *out) {
  int m[3];
  size_t blocks[3];
  slab_extent(n, s, m);
  rtm_codec_block_counts(m, blocks);
  const size_t count = blocks[0] * blocks[1], table = rtm_codec_table_words(count);
  const size_t capacity = (size_t)rate * count - table;
  size_t refused = RTM_CODEC_NO_BLOCK;
  uint32_t hist[2 * RTM_CODEC_LEVELS] = {0};
  for (size_t b = 0; b < count; ++b) {
    block_plan_t *p = plan + b;
    int extent[3], cost[RTM_CODEC_PLANES];
    const size_t first = rtm_codec_block_place(m, blocks, b, pitch_y, pitch_z, extent);
    uint32_t bits[RTM_CODEC_VALUES];
    rtm_codec_gather(volume + first, extent, pitch_y, pitch_z, bits);
    p->kind = rtm_codec_coefficients(bits, extent, p->coef, &p->emax);
    if (p->kind == RTM_CODEC_BLOCK_REFUSED && refused == RTM_CODEC_NO_BLOCK) refused = b;
    if (p->kind != RTM_CODEC_BLOCK_CODED) continue;
    p->top = rtm_codec_top_plane(p->coef);
    rtm_codec_plane_costs(p->coef, cost);
    for (int plane = 0; plane <= p->top; ++plane) {
      p->words[plane] = (unsigned char)rtm_codec_words_through(cost[plane]);
      hist[rtm_codec_hist_index(p->emax, plane)] += p->words[plane];
    }
  }
  size_t total = 0;
  const int level = rtm_codec_slab_level(hist, capacity, &total);
  size_t left = capacity - total;
  /* the words left over go to the blocks in their order, each taking its next plane's */
  memset(out, 0, table * sizeof *out);
  unsigned char *words_of = (unsigned char *)out;
  size_t at = table;
  uint32_t plane_words[2 * RTM_CODEC_PLANES]; /* the coder's plane masks */
  const rtm_codec_planes_t planes = {plane_words, 1};
  for (size_t b = 0; b < count; ++b) {
    int words = words_at(plan + b, level);
    if (level > RTM_CODEC_LEVEL_MIN) {
      const size_t more = (size_t)(words_at(plan + b, level - 1) - words);
      const size_t granted = more < left ? more : left;
      words += (int)granted;
      left -= granted;
    }
    words_of[b] = (unsigned char)words;
    if (words) rtm_codec_encode_coefficients(plan[b].coef, plan[b].emax, words, out + at, planes);
    at += (size_t)words;
  }
  memset(out + at, 0, ((size_t)rate * count - at) * sizeof *out);
  return refused == RTM_CODEC_NO_BLOCK ? refused : s * count + refused;
}

int rtm_codec_compress(const float *volume, const int n[3], size_t pitch_y, size_t pitch_z,
                       int rate, void *out, size_t *first_refused) {
  int status = RTM_OK;
  RTM_TRY(rtm_codec_check(n, pitch_y, pitch_z, rate, out));
  size_t blocks[3];
  rtm_codec_block_counts(n, blocks);
  const size_t per_slab = blocks[0] * blocks[1];
  const long long slabs = (long long)blocks[2];
  const size_t slab_words = rtm_codec_slab_bytes(n, rate) / sizeof(uint64_t);
  unsigned long long refused = RTM_CODEC_NO_BLOCK;
  int short_of_memory = 0;
#pragma omp parallel for schedule(dynamic) reduction(min : refused) reduction(| : short_of_memory)
  for (long long s = 0; s < slabs; ++s) {
    block_plan_t *plan = malloc(per_slab * sizeof *plan);
    if (!plan) {
      short_of_memory = 1;
      continue;
    }
    const size_t first =
        compress_slab(volume + (size_t)s * RTM_CODEC_EDGE * pitch_z, n, (size_t)s, pitch_y, pitch_z,
                      rate, plan, (uint64_t *)out + (size_t)s * slab_words);
    free(plan);
    if (first < refused) refused = first;
  }
  if (short_of_memory)
    RTM_FAIL(RTM_ERR_NOMEM, "codec: no memory for a slab's plan (%zu blocks)", per_slab);
  if (first_refused) *first_refused = (size_t)refused;
  if (refused != RTM_CODEC_NO_BLOCK) status = RTM_ERR_NUMERIC;
fail:
  return status;
}

/* Decodes slab s's words `in` into its planes (the first at `volume`); RTM_ERR_INTERNAL
 * when its block table claims more words than the slab holds (bytes not of this codec). */
static int decompress_slab(const uint64_t *in, const int n[3], size_t s, int rate, float *volume,
                           size_t pitch_y, size_t pitch_z) {
  int m[3];
  size_t blocks[3];
  slab_extent(n, s, m);
  rtm_codec_block_counts(m, blocks);
  const size_t count = blocks[0] * blocks[1], end = (size_t)rate * count;
  const unsigned char *words_of = (const unsigned char *)in;
  size_t at = rtm_codec_table_words(count);
  for (size_t b = 0; b < count; ++b) {
    if (at + words_of[b] > end) return RTM_ERR_INTERNAL;
    int extent[3];
    const size_t first = rtm_codec_block_place(m, blocks, b, pitch_y, pitch_z, extent);
    uint32_t bits[RTM_CODEC_VALUES];
    rtm_codec_decode_block(in + at, words_of[b], bits);
    rtm_codec_scatter(bits, extent, pitch_y, pitch_z, volume + first);
    at += words_of[b];
  }
  return RTM_OK;
}

int rtm_codec_decompress(const void *in, const int n[3], int rate, float *volume, size_t pitch_y,
                         size_t pitch_z) {
  int status = RTM_OK;
  RTM_TRY(rtm_codec_check(n, pitch_y, pitch_z, rate, in));
  size_t blocks[3];
  rtm_codec_block_counts(n, blocks);
  const long long slabs = (long long)blocks[2];
  const size_t slab_words = rtm_codec_slab_bytes(n, rate) / sizeof(uint64_t);
  long long bad = slabs;
#pragma omp parallel for schedule(dynamic) reduction(min : bad)
  for (long long s = 0; s < slabs; ++s)
    if (decompress_slab((const uint64_t *)in + (size_t)s * slab_words, n, (size_t)s, rate,
                        volume + (size_t)s * RTM_CODEC_EDGE * pitch_z, pitch_y,
                        pitch_z) != RTM_OK &&
        s < bad)
      bad = s;
  if (bad < slabs)
    RTM_FAIL(RTM_ERR_INTERNAL, "codec: slab %lld's block table claims more than its %zu bytes", bad,
             slab_words * sizeof(uint64_t));
fail:
  return status;
}
