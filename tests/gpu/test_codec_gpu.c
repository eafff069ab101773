/* The codec's CUDA kernels (solver/cuda/codec_cuda.cu) against its C reference
 * (solver/grid/codec.c), bit for bit: on the cpu test's volumes (smooth, wavefront, plane
 * wave, random), whole and partial blocks, pitched layouts, every rate of 1 .. 32 tried
 * there, the device's compressed bytes equal the reference's and the device's decoded
 * floats (margins included: nothing outside the interior written) equal the reference's; a
 * NaN's block refused with the same number; a plane range compressed alone as the part of
 * the whole; blocks longer than the decoders stage, in a slab the kernels schedule in five
 * rounds; the blocks decoded and imaged in one pass = the reference's floats imaged on
 * the host. Prints the kernels' times (no bound: run/experiments/zfp_check.sh measures them
 * in a migration at 512^3). Exits 77 (skipped) without a CUDA device. */
#include <cuda_runtime_api.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rtm_codec.h"
#include "rtm_cuda_codec.h"
#include "rtm_status.h"
#include "rtm_test_codec.h"
#include "rtm_test_main.h"
#include "rtm_test_random.h"

enum { RATES = 6 };
static const int rates[RATES] = {1, 2, 4, 8, 16, 32};

/* A volume on both sides: interior n, a margin of `pad` floats a row and rows a plane. */
typedef struct {
  int n[3];
  size_t pitch_y, pitch_z, floats, bytes; /* bytes: compressed at rate 32, the largest */
  float *original, *want, *got;           /* host */
  unsigned char *want_bytes, *got_bytes;  /* host */
  float *d_volume, *d_decoded;            /* device */
  void *d_bytes, *d_scratch;              /* d_scratch: the coder's, rtm_codec_scratch_bytes(n) */
  unsigned long long *d_refused;
} pair_t;

static pair_t pair_create(const int n[3], int pad) {
  pair_t p = {{n[0], n[1], n[2]},
              (size_t)(n[0] + pad),
              0,
              0,
              0,
              NULL,
              NULL,
              NULL,
              NULL,
              NULL,
              NULL,
              NULL,
              NULL,
              NULL,
              NULL};
  p.pitch_z = p.pitch_y * (size_t)(n[1] + pad);
  p.floats = p.pitch_z * (size_t)n[2];
  p.bytes = rtm_codec_bytes(n, RTM_CODEC_RATE_MAX);
  p.original = malloc(p.floats * sizeof(float));
  p.want = malloc(p.floats * sizeof(float));
  p.got = malloc(p.floats * sizeof(float));
  p.want_bytes = aligned_alloc(8, p.bytes);
  p.got_bytes = malloc(p.bytes);
  assert_true(p.original && p.want && p.got && p.want_bytes && p.got_bytes);
  assert_int_equal(cudaMalloc((void **)&p.d_volume, p.floats * sizeof(float)), cudaSuccess);
  assert_int_equal(cudaMalloc((void **)&p.d_decoded, p.floats * sizeof(float)), cudaSuccess);
  assert_int_equal(cudaMalloc(&p.d_bytes, p.bytes), cudaSuccess);
  assert_int_equal(cudaMalloc(&p.d_scratch, rtm_codec_scratch_bytes(n)), cudaSuccess);
  assert_int_equal(cudaMalloc((void **)&p.d_refused, sizeof *p.d_refused), cudaSuccess);
  for (size_t i = 0; i < p.floats; ++i)
    p.original[i] = NAN; /* the margins; the interior is filled by the test */
  return p;
}

static void pair_destroy(pair_t *p) {
  free(p->original);
  free(p->want);
  free(p->got);
  free(p->want_bytes);
  free(p->got_bytes);
  cudaFree(p->d_volume);
  cudaFree(p->d_decoded);
  cudaFree(p->d_bytes);
  cudaFree(p->d_scratch);
  cudaFree(p->d_refused);
}

/* Both sides compress p->original and decompress the reference's bytes into NaN-filled
 * volumes; returns the reference's status, having checked that every byte, every float and
 * the refused block's number agree. */
static int compare_at(pair_t *p, int rate) {
  const size_t bytes = rtm_codec_bytes(p->n, rate), volume = p->floats * sizeof(float);
  size_t want_refused = 0;
  const int status = rtm_codec_compress(p->original, p->n, p->pitch_y, p->pitch_z, rate,
                                        p->want_bytes, &want_refused);
  assert_int_equal(cudaMemcpy(p->d_volume, p->original, volume, cudaMemcpyHostToDevice),
                   cudaSuccess);
  /* every byte written, nothing taken from the scratch's last contents */
  assert_int_equal(cudaMemset(p->d_bytes, 0x5a, bytes), cudaSuccess);
  assert_int_equal(cudaMemset(p->d_scratch, 0x5a, rtm_codec_scratch_bytes(p->n)), cudaSuccess);
  assert_int_equal(rtm_cuda_codec_compress(p->d_volume, p->n, p->pitch_y, p->pitch_z, rate,
                                           p->d_bytes, p->d_scratch, p->d_refused, 0),
                   RTM_OK);
  unsigned long long got_refused = 0;
  assert_int_equal(cudaMemcpy(p->got_bytes, p->d_bytes, bytes, cudaMemcpyDeviceToHost),
                   cudaSuccess);
  assert_int_equal(
      cudaMemcpy(&got_refused, p->d_refused, sizeof got_refused, cudaMemcpyDeviceToHost),
      cudaSuccess);
  assert_memory_equal(p->got_bytes, p->want_bytes, bytes);
  assert_true(got_refused == (unsigned long long)want_refused);

  for (size_t i = 0; i < p->floats; ++i)
    p->want[i] = NAN;
  assert_int_equal(rtm_codec_decompress(p->want_bytes, p->n, rate, p->want, p->pitch_y, p->pitch_z),
                   RTM_OK);
  for (size_t i = 0; i < p->floats; ++i)
    p->got[i] = NAN;
  assert_int_equal(cudaMemcpy(p->d_decoded, p->got, volume, cudaMemcpyHostToDevice), cudaSuccess);
  assert_int_equal(rtm_cuda_codec_decompress(p->d_bytes, p->n, rate, p->d_scratch, p->d_decoded,
                                             p->pitch_y, p->pitch_z, 0),
                   RTM_OK);
  assert_int_equal(cudaMemcpy(p->got, p->d_decoded, volume, cudaMemcpyDeviceToHost), cudaSuccess);
  assert_memory_equal(p->got, p->want, volume);
  return status;
}

static void test_volumes(void **state) {
  (void)state;
  rtm_test_rng_t rng = rtm_test_seed("test_volumes");
  /* 132 x 132 x 9: 1089 blocks a slab, more than the allocating CTA's 1024 threads (its
   * scans carried across rounds), and a last slab of one plane */
  const int sizes[][3] = {{68, 52, 44}, {31, 29, 18}, {13, 7, 6}, {2, 3, 5}, {132, 132, 9}};
  const int pads[] = {0, 1, 3, 2, 4};
  for (int s = 0; s < 5; ++s) {
    pair_t p = pair_create(sizes[s], pads[s]);
    for (int kind = 0; kind < CODEC_KINDS; ++kind) {
      codec_fill((codec_kind_t)kind, p.n, p.pitch_y, p.pitch_z,
                 kind == CODEC_PLANE_WAVE ? 4.0 : 8.0, &rng, p.original);
      for (int r = 0; r < RATES; ++r)
        assert_int_equal(compare_at(&p, rates[r]), RTM_OK);
    }
    printf("%2d x %2d x %2d: %d volumes x %d rates, the reference's bytes and floats\n", p.n[0],
           p.n[1], p.n[2], CODEC_KINDS, RATES);
    pair_destroy(&p);
  }
}

/* Zero, constant, subnormal and near-FLT_MAX blocks, and blocks refused for a NaN or an
 * infinity: the same bytes, floats and refused block. */
static void test_special_values(void **state) {
  (void)state;
  rtm_test_rng_t rng = rtm_test_seed("test_special_values");
  const int n[3] = {18, 9, 11};
  pair_t p = pair_create(n, 1);
  codec_fill(CODEC_GAUSSIAN, p.n, p.pitch_y, p.pitch_z, 8.0, &rng, p.original);
  for (int z = 0; z < n[2]; ++z)
    for (int y = 0; y < n[1]; ++y)
      for (int x = 0; x < n[0]; ++x) {
        float *v = p.original + z * p.pitch_z + y * p.pitch_y + x;
        const int block = x / 4 % 4;
        if (block == 0) *v = 0.0f;                             /* zero blocks */
        if (block == 1) *v = *v * 0x1p-140f;                   /* subnormal ones */
        if (block == 2) *v = (x + y + z) % 2 ? 3e38f : -3e38f; /* near FLT_MAX */
      }
  for (int r = 0; r < RATES; ++r)
    assert_int_equal(compare_at(&p, rates[r]), RTM_OK);
  p.original[7 * p.pitch_z + 3 * p.pitch_y + 17] = NAN;
  p.original[9 * p.pitch_z + 2 * p.pitch_y + 6] = -INFINITY;
  for (int r = 0; r < RATES; ++r)
    assert_int_equal(compare_at(&p, rates[r]), RTM_ERR_NUMERIC);
  pair_destroy(&p);
}

/* Planes [z0, z0 + count) compressed alone on the device: the whole's bytes at z0 / 4 slabs. */
static void test_plane_range(void **state) {
  (void)state;
  rtm_test_rng_t rng = rtm_test_seed("test_plane_range");
  const int n[3] = {21, 10, 23}, rate = 4;
  pair_t p = pair_create(n, 2);
  codec_fill(CODEC_RICKER, p.n, p.pitch_y, p.pitch_z, 8.0, &rng, p.original);
  assert_int_equal(compare_at(&p, rate), RTM_OK);
  const int ranges[][2] = {{4, 12}, {8, 15}};
  for (int r = 0; r < 2; ++r) {
    const int m[3] = {n[0], n[1], ranges[r][1]};
    const size_t at = (size_t)ranges[r][0] / 4 * rtm_codec_slab_bytes(n, rate);
    assert_int_equal(rtm_cuda_codec_compress(p.d_volume + ranges[r][0] * p.pitch_z, m, p.pitch_y,
                                             p.pitch_z, rate, p.d_bytes, p.d_scratch, NULL, 0),
                     RTM_OK);
    assert_int_equal(
        cudaMemcpy(p.got_bytes, p.d_bytes, rtm_codec_bytes(m, rate), cudaMemcpyDeviceToHost),
        cudaSuccess);
    assert_memory_equal(p.got_bytes, p.want_bytes + at, rtm_codec_bytes(m, rate));
  }
  pair_destroy(&p);
}

/* Blocks longer than the decoders stage in shared memory (33 words, codec_cuda.cu; no
 * volume of the tests codes a block past 32): a slab of 65 x 65 blocks (five rounds of the
 * allocating and locating CTAs) whose table gives three blocks (the first, one inside and
 * the last) 34, 40 and 47 words of random bits after a header, the others none. Decoded and
 * decoded-and-imaged on the device = the reference's floats, bit for bit. */
static void test_long_blocks(void **state) {
  (void)state;
  rtm_test_rng_t rng = rtm_test_seed("test_long_blocks");
  const int n[3] = {260, 260, 4}, rate = 2;
  const size_t blocks = 65 * 65, table = (blocks + 7) / 8, bytes = rtm_codec_bytes(n, rate);
  const size_t longs[3] = {0, 2000, blocks - 1};
  const int lengths[3] = {34, 40, 47};
  pair_t p = pair_create(n, 0);
  uint64_t *words = (uint64_t *)p.want_bytes;
  memset(words, 0, bytes);
  size_t at = table;
  for (int l = 0; l < 3; ++l) {
    p.want_bytes[longs[l]] = (unsigned char)lengths[l];
    for (int w = 0; w < lengths[l]; ++w)
      words[at + (size_t)w] = rtm_test_next(&rng);
    /* a coded block's header: the flag, an exponent near 2^0 (the 8 bits biased by 127) */
    words[at] = (words[at] & ~0x1ffull) | 1ull | (uint64_t)(127 + l) << 1;
    at += (size_t)lengths[l];
  }
  assert_true(at <= (size_t)rate * blocks);
  const size_t volume = p.floats * sizeof(float);
  assert_int_equal(rtm_codec_decompress(p.want_bytes, n, rate, p.want, p.pitch_y, p.pitch_z),
                   RTM_OK);
  assert_int_equal(cudaMemcpy(p.d_bytes, p.want_bytes, bytes, cudaMemcpyHostToDevice), cudaSuccess);
  assert_int_equal(cudaMemset(p.d_decoded, 0xff, volume), cudaSuccess);
  assert_int_equal(rtm_cuda_codec_decompress(p.d_bytes, n, rate, p.d_scratch, p.d_decoded,
                                             p.pitch_y, p.pitch_z, 0),
                   RTM_OK);
  assert_int_equal(cudaMemcpy(p.got, p.d_decoded, volume, cudaMemcpyDeviceToHost), cudaSuccess);
  assert_memory_equal(p.got, p.want, volume);
  /* imaged with a receiver of ones into zeros: the image is the decoded field */
  float *d_receiver, *d_illumination;
  assert_int_equal(cudaMalloc((void **)&d_receiver, volume), cudaSuccess);
  assert_int_equal(cudaMalloc((void **)&d_illumination, volume), cudaSuccess);
  for (size_t i = 0; i < p.floats; ++i)
    p.got[i] = 1.0f;
  assert_int_equal(cudaMemcpy(d_receiver, p.got, volume, cudaMemcpyHostToDevice), cudaSuccess);
  assert_int_equal(cudaMemset(p.d_decoded, 0, volume), cudaSuccess);
  assert_int_equal(cudaMemset(d_illumination, 0, volume), cudaSuccess);
  assert_int_equal(rtm_cuda_codec_decompress_image(p.d_bytes, n, rate, p.d_scratch, p.d_decoded,
                                                   d_illumination, d_receiver, p.pitch_y, p.pitch_z,
                                                   0),
                   RTM_OK);
  assert_int_equal(cudaMemcpy(p.got, p.d_decoded, volume, cudaMemcpyDeviceToHost), cudaSuccess);
  assert_memory_equal(p.got, p.want, volume);
  size_t nonzero = 0;
  for (size_t i = 0; i < p.floats; ++i)
    nonzero += p.want[i] != 0.0f;
  assert_true(nonzero >= 3 * 60); /* the three long blocks decoded to something */
  printf("%d x %d x %d: blocks of 34, 40 and 47 words decoded and imaged as the reference\n", n[0],
         n[1], n[2]);
  cudaFree(d_receiver);
  cudaFree(d_illumination);
  pair_destroy(&p);
}

/* Decoded and imaged in one pass (rtm_cuda_codec_decompress_image) against the reference's
 * decoded floats imaged on the host (fmaf, image then illumination: what solver/rtm's
 * accumulation does with a decoded snapshot), bit for bit, on whole and partial blocks, an
 * aligned and a misaligned receiver layout, rates 1 .. 32. */
static void test_decompress_image(void **state) {
  (void)state;
  rtm_test_rng_t rng = rtm_test_seed("test_decompress_image");
  const int sizes[][3] = {{64, 24, 16}, {31, 29, 18}};
  const int pads[] = {8, 3}; /* receiver margins: rows of 72 (float4) and of 34 floats */
  for (int c = 0; c < 2; ++c) {
    pair_t p = pair_create(sizes[c], 0);
    const int *n = p.n;
    const size_t cells = (size_t)n[0] * n[1] * n[2];
    const size_t ry = (size_t)(n[0] + pads[c]), rz = ry * (size_t)(n[1] + 1), rcells = rz * n[2];
    float *receiver = malloc(rcells * sizeof(float)), *image = malloc(cells * sizeof(float));
    float *illumination = malloc(cells * sizeof(float)), *got = malloc(cells * sizeof(float));
    assert_true(receiver && image && illumination && got);
    float *d_receiver, *d_image, *d_illumination;
    assert_int_equal(cudaMalloc((void **)&d_receiver, rcells * sizeof(float)), cudaSuccess);
    assert_int_equal(cudaMalloc((void **)&d_image, cells * sizeof(float)), cudaSuccess);
    assert_int_equal(cudaMalloc((void **)&d_illumination, cells * sizeof(float)), cudaSuccess);
    codec_fill(CODEC_RICKER, n, p.pitch_y, p.pitch_z, 8.0, &rng, p.original);
    for (size_t i = 0; i < rcells; ++i)
      receiver[i] = (float)rtm_test_uniform(&rng, -1.0, 1.0);
    for (int r = 0; r < RATES; ++r) {
      const int rate = rates[r];
      assert_int_equal(
          rtm_codec_compress(p.original, n, p.pitch_y, p.pitch_z, rate, p.want_bytes, NULL),
          RTM_OK);
      assert_int_equal(rtm_codec_decompress(p.want_bytes, n, rate, p.want, p.pitch_y, p.pitch_z),
                       RTM_OK);
      for (size_t i = 0; i < cells; ++i) {
        image[i] = (float)rtm_test_uniform(&rng, -1.0, 1.0);
        illumination[i] = (float)rtm_test_uniform(&rng, 0.0, 1.0);
      }
      assert_int_equal(cudaMemcpy(d_image, image, cells * sizeof(float), cudaMemcpyHostToDevice),
                       cudaSuccess);
      assert_int_equal(
          cudaMemcpy(d_illumination, illumination, cells * sizeof(float), cudaMemcpyHostToDevice),
          cudaSuccess);
      assert_int_equal(
          cudaMemcpy(d_receiver, receiver, rcells * sizeof(float), cudaMemcpyHostToDevice),
          cudaSuccess);
      assert_int_equal(
          cudaMemcpy(p.d_bytes, p.want_bytes, rtm_codec_bytes(n, rate), cudaMemcpyHostToDevice),
          cudaSuccess);
      assert_int_equal(rtm_cuda_codec_decompress_image(p.d_bytes, n, rate, p.d_scratch, d_image,
                                                       d_illumination, d_receiver, ry, rz, 0),
                       RTM_OK);
      for (int z = 0; z < n[2]; ++z)
        for (int y = 0; y < n[1]; ++y)
          for (int x = 0; x < n[0]; ++x) {
            const size_t i = ((size_t)z * n[1] + y) * n[0] + x;
            const float sv = p.want[z * p.pitch_z + y * p.pitch_y + x];
            image[i] = fmaf(sv, receiver[z * rz + y * ry + x], image[i]);
            illumination[i] = fmaf(sv, sv, illumination[i]);
          }
      assert_int_equal(cudaMemcpy(got, d_image, cells * sizeof(float), cudaMemcpyDeviceToHost),
                       cudaSuccess);
      assert_memory_equal(got, image, cells * sizeof(float));
      assert_int_equal(
          cudaMemcpy(got, d_illumination, cells * sizeof(float), cudaMemcpyDeviceToHost),
          cudaSuccess);
      assert_memory_equal(got, illumination, cells * sizeof(float));
    }
    printf("%2d x %2d x %2d, receiver rows of %zu: decoded and imaged = decoded, then imaged, "
           "%d rates\n",
           n[0], n[1], n[2], ry, RATES);
    cudaFree(d_receiver);
    cudaFree(d_image);
    cudaFree(d_illumination);
    free(receiver);
    free(image);
    free(illumination);
    free(got);
    pair_destroy(&p);
  }
}

/* Times of the kernels at rates 4 and 6 (the default) on 256^3, the one that images too
 * (printed, no bound: run/experiments/zfp_check.sh measures them in a migration at 512^3). */
static void test_throughput(void **state) {
  (void)state;
  rtm_test_rng_t rng = rtm_test_seed("test_throughput");
  const int n[3] = {256, 256, 256};
  pair_t p = pair_create(n, 0);
  codec_fill(CODEC_RICKER, p.n, p.pitch_y, p.pitch_z, 8.0, &rng, p.original);
  assert_int_equal(
      cudaMemcpy(p.d_volume, p.original, p.floats * sizeof(float), cudaMemcpyHostToDevice),
      cudaSuccess);
  float *d_illumination = NULL;
  assert_int_equal(cudaMalloc((void **)&d_illumination, p.floats * sizeof(float)), cudaSuccess);
  assert_int_equal(cudaMemset(d_illumination, 0, p.floats * sizeof(float)), cudaSuccess);
  cudaEvent_t events[4];
  for (int e = 0; e < 4; ++e)
    assert_int_equal(cudaEventCreate(&events[e]), cudaSuccess);
  const int timed[2] = {4, 6};
  for (int r = 0; r < 2; ++r) {
    const int rate = timed[r];
    for (int rep = 0; rep < 2; ++rep) { /* the first warms up */
      cudaEventRecord(events[0], 0);
      assert_int_equal(rtm_cuda_codec_compress(p.d_volume, n, p.pitch_y, p.pitch_z, rate, p.d_bytes,
                                               p.d_scratch, NULL, 0),
                       RTM_OK);
      cudaEventRecord(events[1], 0);
      assert_int_equal(rtm_cuda_codec_decompress(p.d_bytes, n, rate, p.d_scratch, p.d_decoded,
                                                 p.pitch_y, p.pitch_z, 0),
                       RTM_OK);
      cudaEventRecord(events[2], 0);
      /* imaged with the volume as the receiver, into the decoded volume and illumination */
      assert_int_equal(rtm_cuda_codec_decompress_image(p.d_bytes, n, rate, p.d_scratch, p.d_decoded,
                                                       d_illumination, p.d_volume, p.pitch_y,
                                                       p.pitch_z, 0),
                       RTM_OK);
      cudaEventRecord(events[3], 0);
      assert_int_equal(cudaEventSynchronize(events[3]), cudaSuccess);
    }
    float compress_ms = 0.0f, decompress_ms = 0.0f, image_ms = 0.0f;
    cudaEventElapsedTime(&compress_ms, events[0], events[1]);
    cudaEventElapsedTime(&decompress_ms, events[1], events[2]);
    cudaEventElapsedTime(&image_ms, events[2], events[3]);
    printf("256^3 at rate %d: compress %.3f ms (%.0f GB/s of fp32), decompress %.3f ms "
           "(%.0f GB/s), decompress and image %.3f ms\n",
           rate, compress_ms, p.floats * 4.0 / compress_ms * 1e-6, decompress_ms,
           p.floats * 4.0 / decompress_ms * 1e-6, image_ms);
  }
  for (int e = 0; e < 4; ++e)
    cudaEventDestroy(events[e]);
  cudaFree(d_illumination);
  pair_destroy(&p);
}

RTM_TEST_MAIN_CUDA("test_codec_gpu", NULL, NULL, cmocka_unit_test(test_volumes),
                   cmocka_unit_test(test_special_values), cmocka_unit_test(test_plane_range),
                   cmocka_unit_test(test_long_blocks), cmocka_unit_test(test_decompress_image),
                   cmocka_unit_test(test_throughput))
