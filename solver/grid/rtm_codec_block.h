/* rtm_codec_block.h - one 4x4x4 block of the codec (rtm_codec.h, where the format
 * is described), as static inline functions that the C reference (codec.c) and the CUDA
 * kernels (solver/cuda/codec_cuda.cu) both compile: one text, so one set of bits.
 *
 * After the block's exponent is read off the largest magnitude's bits, everything is integer
 * arithmetic (the float -> integer and integer -> float conversions included, done on the
 * bit patterns with round to nearest even), so neither the compiler's contraction nor the
 * device's flush-to-zero setting can change a bit. Signed sums go through uint32_t (wrapping,
 * defined in C) and halving is an arithmetic right shift of an int32_t (what GCC, Clang and
 * NVCC do with a signed >>).
 *
 * Written for registers: every loop over a block's 64 values has constant bounds and is
 * unrolled on the device (RTM_CODEC_UNROLL), values outside a partial block are masked, not
 * skipped by a shorter loop, and the sequency order is applied through constant ranks, so a
 * thread holds its block in registers; the bit planes are coded a significant coefficient
 * at a time, not a bit at a time. The plane costs (rtm_codec_plane_costs) index their
 * per-plane counts by a coefficient's top plane, bytes that the analysing kernel keeps in
 * shared memory (rtm_codec_plane_records). tests/solver/test_codec.c
 * keeps the plane coder's bit-by-bit statement and checks this one against it. */
#ifndef RTM_CODEC_BLOCK_H
#define RTM_CODEC_BLOCK_H

#include <stddef.h>
#include <stdint.h>

#include "rtm_float_bits.h"

#ifdef __CUDACC__
#define RTM_CODEC_HD __host__ __device__ __forceinline__
#else
#define RTM_CODEC_HD inline
#endif
#ifdef __CUDA_ARCH__ /* the device pass: the host compilers do not know the pragma */
#define RTM_CODEC_UNROLL _Pragma("unroll")
#else
#define RTM_CODEC_UNROLL
#endif

enum {
  RTM_CODEC_EDGE = 4,      /* a block is 4 x 4 x 4 values */
  RTM_CODEC_VALUES = 64,   /* values a block */
  RTM_CODEC_PLANES = 32,   /* bit planes of a coefficient */
  RTM_CODEC_HEADER = 9,    /* bits: 1 (nonzero block) + 8 (biased exponent) */
  RTM_CODEC_INT_BITS = 30, /* the block's largest magnitude becomes < 2^30 */
  RTM_CODEC_BIAS = 127     /* exponent bias of the header, as a float's */
};

/* The coefficients (index x + 4y + 16z after the transform) in the order they are coded:
 * by total sequency x + y + z, then by x^2 + y^2 + z^2 (the even mixes of a sequency, whose
 * coefficients are the larger on smooth data, before the pure ones), then by index. */
#define RTM_CODEC_SEQUENCY_ORDER                                                                   \
  {                                                                                                \
    0, 1, 4, 16, 5, 17, 20, 2, 8, 32, 21, 6, 9, 18, 24, 33, 36, 3, 12, 48, 22, 25, 37, 10, 34, 40, \
        7, 13, 19, 28, 49, 52, 26, 38, 41, 23, 29, 53, 11, 14, 35, 44, 50, 56, 42, 27, 30, 39, 45, \
        54, 57, 15, 51, 60, 43, 46, 58, 31, 55, 61, 47, 59, 62, 63                                 \
  }
/* Its inverse: the place in that order of the coefficient at index j (the test checks it). */
#define RTM_CODEC_SEQUENCY_RANK                                                                    \
  {                                                                                                \
    0, 1, 7, 17, 2, 4, 11, 26, 8, 12, 23, 38, 18, 27, 39, 51, 3, 5, 13, 28, 6, 10, 20, 35, 14, 21, \
        32, 45, 29, 36, 46, 57, 9, 15, 24, 40, 16, 22, 33, 47, 25, 34, 44, 54, 41, 48, 55, 60, 19, \
        30, 42, 52, 31, 37, 49, 58, 43, 50, 56, 61, 53, 59, 62, 63                                 \
  }

/* The coefficient coded i-th (table 0), and the place of coefficient i (table 1). The coder
 * asks them in unrolled loops, where i is a constant: on the device the local tables fold
 * away (a coefficient's register, a constant shift), on the host they are table reads. */
static RTM_CODEC_HD int rtm_codec_sequency(int table, int i) {
#ifdef __CUDA_ARCH__
  const unsigned char tables[2][RTM_CODEC_VALUES] = {RTM_CODEC_SEQUENCY_ORDER,
                                                     RTM_CODEC_SEQUENCY_RANK};
#else
  static const unsigned char tables[2][RTM_CODEC_VALUES] = {RTM_CODEC_SEQUENCY_ORDER,
                                                            RTM_CODEC_SEQUENCY_RANK};
#endif
  return tables[table][i];
}
static RTM_CODEC_HD int rtm_codec_order(int i) {
  return rtm_codec_sequency(0, i);
}
static RTM_CODEC_HD int rtm_codec_rank(int j) {
  return rtm_codec_sequency(1, j);
}

/* ---- bits (a float's pattern: rtm_float_bits.h) ---- */

/* Index of the highest set bit of a non-zero word. */
static RTM_CODEC_HD int rtm_codec_top_bit(uint32_t word) {
#ifdef __CUDA_ARCH__
  return 31 - __clz(word);
#else
  return 31 - __builtin_clz(word);
#endif
}

/* Index of the lowest set bit of a non-zero 64-bit word. */
static RTM_CODEC_HD int rtm_codec_low_bit(uint64_t word) {
#ifdef __CUDA_ARCH__
  return __ffsll((long long)word) - 1;
#else
  return __builtin_ctzll(word);
#endif
}

/* ---- the block exponent and the block-floating-point conversion ---- */

/* The device converts with float instructions where they give the same bits (below; the
 * ranges are where they are exact, which tests/solver/test_codec.c checks on the host). */
#define RTM_CODEC_FAST_EMAX_MIN (-96)
#define RTM_CODEC_FAST_EXPONENT_MAX 96

/* The block's exponent emax from the largest |value|'s bits (the sign cleared): every value
 * of the block is below 2^emax in magnitude. A normal float of biased exponent E is below
 * 2^(E - 126); subnormals (E = 0) are below 2^-126, so emax >= -126 and emax + 127 fits the
 * header's 8 bits (1 .. 255). The caller has set aside zero and non-finite blocks. */
static RTM_CODEC_HD int rtm_codec_exponent(uint32_t max_abs_bits) {
  const int biased = (int)(max_abs_bits >> 23);
  return biased == 0 ? -126 : biased - 126;
}

/* trunc(value 2^(30 - emax)) from value's bits: its significand shifted, the sign applied.
 * |result| < 2^30 for every value of a block of exponent emax. */
static RTM_CODEC_HD int32_t rtm_codec_to_int(uint32_t bits, int emax) {
#ifdef __CUDA_ARCH__
  /* Where 2^(30 - emax) is a normal float (emax >= -96) the product is the exact scaled value
   * or below 1 in magnitude (a subnormal value, or a normal one pushed below 2^-126), and
   * truncation gives what the bits below give, flush-to-zero or not: two instructions. */
  if (emax >= RTM_CODEC_FAST_EMAX_MIN)
    return __float2int_rz(__uint_as_float(bits) * __uint_as_float((uint32_t)(157 - emax) << 23));
#endif
  const int biased = (int)((bits >> 23) & 0xff);
  const uint32_t significand = (bits & 0x7fffffu) | (biased ? 0x800000u : 0u);
  /* value = significand 2^(max(biased, 1) - 150) */
  const int shift = (biased ? biased : 1) - 150 + RTM_CODEC_INT_BITS - emax;
  const uint32_t magnitude = shift >= 0    ? significand << shift
                             : shift > -32 ? significand >> -shift
                                           : 0u;
  return (int32_t)((bits >> 31) ? 0u - magnitude : magnitude);
}

/* magnitude 2^-shift rounded to the nearest integer, ties to even. */
static RTM_CODEC_HD uint64_t rtm_codec_round_shift(uint64_t magnitude, int shift) {
  if (shift <= 0) return magnitude << -shift;
  if (shift > 40) return 0; /* magnitude < 2^32: below half */
  const uint64_t kept = magnitude >> shift, rest = magnitude & ((1ull << shift) - 1ull);
  const uint64_t half = 1ull << (shift - 1);
  return kept + (rest > half || (rest == half && (kept & 1ull)));
}

/* The bits of the float nearest q 2^exponent (ties to even, through the subnormals), the
 * largest finite float where that would overflow (a decoded block near FLT_MAX whose
 * truncated coefficients overshoot): the inverse of rtm_codec_to_int to its rounding. */
static RTM_CODEC_HD uint32_t rtm_codec_from_int(int32_t q, int exponent) {
  if (q == 0) return 0u;
#ifdef __CUDA_ARCH__
  /* Where every q 2^exponent is normal and below 2^128 (-126 <= exponent <= 96), it is q
   * rounded to a float (nearest even, as below) with exponent added to its exponent field. */
  if (exponent >= -126 && exponent <= RTM_CODEC_FAST_EXPONENT_MAX)
    return __float_as_uint(__int2float_rn(q)) + ((uint32_t)exponent << 23);
#endif
  const uint32_t sign = q < 0 ? 0x80000000u : 0u;
  const uint32_t magnitude = q < 0 ? 0u - (uint32_t)q : (uint32_t)q;
  const int lead = rtm_codec_top_bit(magnitude);
  const int top = lead + exponent; /* 2^top <= |value| < 2^(top + 1) */
  if (top > 127) return sign | 0x7f7fffffu;
  if (top < -126) /* subnormal: units of 2^-149; 2^23 after rounding is the least normal */
    return sign | (uint32_t)rtm_codec_round_shift(magnitude, -149 - exponent);
  /* 24 significant bits, the implicit one included: it adds 1 to the exponent field
   * top + 126, and a significand rounded up to 2^24 carries into the next binade */
  const uint32_t kept = (uint32_t)rtm_codec_round_shift(magnitude, lead - 23);
  const uint32_t bits = ((uint32_t)(top + 126) << 23) + kept;
  return sign | (bits >= 0x7f800000u ? 0x7f7fffffu : bits);
}

/* ---- the decorrelating transform: a lifted, non-orthogonal 4-point transform ----
 *
 * Lindstrom's (2014) transform of 4 values (x, y, z, w) along a line, 1/16 of
 *    ( 4  4  4  4)      mean
 *    ( 5  1 -1 -5)      slope
 *    (-4  4  4 -4)      curvature
 *    (-2  6 -6  2)      the rest
 * in five lifting steps whose halvings drop a low bit each: inputs below 2^30 in magnitude
 * do not overflow 32 bits, and the inverse reproduces the inputs to a few units (the two
 * low bits the block's integers spare). */

static RTM_CODEC_HD int32_t rtm_codec_add(int32_t a, int32_t b) {
  return (int32_t)((uint32_t)a + (uint32_t)b);
}
static RTM_CODEC_HD int32_t rtm_codec_sub(int32_t a, int32_t b) {
  return (int32_t)((uint32_t)a - (uint32_t)b);
}
static RTM_CODEC_HD int32_t rtm_codec_half(int32_t a) {
  return a >> 1;
}
static RTM_CODEC_HD int32_t rtm_codec_twice(int32_t a) {
  return (int32_t)((uint32_t)a << 1);
}

/* line p[0], p[s], p[2s], p[3s] in place */
static RTM_CODEC_HD void rtm_codec_lift_forward(int32_t *p, int s) {
  int32_t x = p[0], y = p[s], z = p[2 * s], w = p[3 * s];
  x = rtm_codec_half(rtm_codec_add(x, w)); /* (x + w) / 2 */
  w = rtm_codec_sub(w, x);                 /* (w - x) / 2 */
  z = rtm_codec_half(rtm_codec_add(z, y));
  y = rtm_codec_sub(y, z);
  x = rtm_codec_half(rtm_codec_add(x, z)); /* the mean */
  z = rtm_codec_sub(z, x);
  w = rtm_codec_half(rtm_codec_add(w, y));
  y = rtm_codec_sub(y, w);
  w = rtm_codec_add(w, rtm_codec_half(y));
  y = rtm_codec_sub(y, rtm_codec_half(w));
  p[0] = x;
  p[s] = y;
  p[2 * s] = z;
  p[3 * s] = w;
}

/* the steps above undone in reverse order, each halving's sum recovered by doubling */
static RTM_CODEC_HD void rtm_codec_lift_inverse(int32_t *p, int s) {
  int32_t x = p[0], y = p[s], z = p[2 * s], w = p[3 * s];
  y = rtm_codec_add(y, rtm_codec_half(w));
  w = rtm_codec_sub(w, rtm_codec_half(y));
  y = rtm_codec_add(y, w);
  w = rtm_codec_sub(rtm_codec_twice(w), y);
  z = rtm_codec_add(z, x);
  x = rtm_codec_sub(rtm_codec_twice(x), z);
  y = rtm_codec_add(y, z);
  z = rtm_codec_sub(rtm_codec_twice(z), y);
  w = rtm_codec_add(w, x);
  x = rtm_codec_sub(rtm_codec_twice(x), w);
  p[0] = x;
  p[s] = y;
  p[2 * s] = z;
  p[3 * s] = w;
}

/* The 3D transform: along x (the 16 lines of stride 1), then y (stride 4), then z (16). */
static RTM_CODEC_HD void rtm_codec_transform_forward(int32_t *block) {
  RTM_CODEC_UNROLL
  for (int line = 0; line < 16; ++line)
    rtm_codec_lift_forward(block + 4 * line, 1);
  RTM_CODEC_UNROLL
  for (int line = 0; line < 16; ++line)
    rtm_codec_lift_forward(block + (line & 3) + 16 * (line >> 2), 4);
  RTM_CODEC_UNROLL
  for (int line = 0; line < 16; ++line)
    rtm_codec_lift_forward(block + line, 16);
}

static RTM_CODEC_HD void rtm_codec_transform_inverse(int32_t *block) {
  RTM_CODEC_UNROLL
  for (int line = 0; line < 16; ++line)
    rtm_codec_lift_inverse(block + line, 16);
  RTM_CODEC_UNROLL
  for (int line = 0; line < 16; ++line)
    rtm_codec_lift_inverse(block + (line & 3) + 16 * (line >> 2), 4);
  RTM_CODEC_UNROLL
  for (int line = 0; line < 16; ++line)
    rtm_codec_lift_inverse(block + 4 * line, 1);
}

/* Two's complement <-> negabinary (base -2): small magnitudes of either sign then have
 * their leading ones in low bit planes, and a coefficient needs no sign bit. */
#define RTM_CODEC_NEGABINARY_MASK 0xaaaaaaaau
static RTM_CODEC_HD uint32_t rtm_codec_to_negabinary(int32_t q) {
  return ((uint32_t)q + RTM_CODEC_NEGABINARY_MASK) ^ RTM_CODEC_NEGABINARY_MASK;
}
static RTM_CODEC_HD int32_t rtm_codec_from_negabinary(uint32_t u) {
  return (int32_t)((u ^ RTM_CODEC_NEGABINARY_MASK) - RTM_CODEC_NEGABINARY_MASK);
}

/* ---- the bit stream of a block: 64-bit words, filled from their least significant bit ---- */

static RTM_CODEC_HD uint64_t rtm_codec_low_bits(uint64_t word, int count) {
  return count >= 64 ? word : word & ((1ull << count) - 1ull);
}
static RTM_CODEC_HD uint64_t rtm_codec_shift_down(uint64_t word, int count) {
  return count >= 64 ? 0ull : word >> count;
}

typedef struct {
  uint64_t *word;  /* the next word to store */
  uint64_t buffer; /* bits not yet stored, in its low `filled` bits */
  int filled;      /* 0 .. 63 */
} rtm_codec_writer_t;

/* the low `count` (0 .. 64) bits of value */
static RTM_CODEC_HD void rtm_codec_put(rtm_codec_writer_t *w, uint64_t value, int count) {
  value = rtm_codec_low_bits(value, count);
  w->buffer |= value << w->filled;
  w->filled += count;
  if (w->filled >= 64) {
    *w->word++ = w->buffer;
    w->filled -= 64; /* the bits of value that did not fit */
    w->buffer = w->filled ? value >> (count - w->filled) : 0ull;
  }
}

typedef struct {
  const uint64_t *word; /* the next word to load */
  uint64_t buffer;      /* bits not yet read, in its low `left` bits, zeros above */
  int left;             /* 0 .. 64 */
} rtm_codec_reader_t;

/* the next `count` (0 .. 64) bits */
static RTM_CODEC_HD uint64_t rtm_codec_get(rtm_codec_reader_t *r, int count) {
  if (count <= r->left) {
    const uint64_t value = rtm_codec_low_bits(r->buffer, count);
    r->buffer = rtm_codec_shift_down(r->buffer, count);
    r->left -= count;
    return value;
  }
  const uint64_t next = *r->word++;
  const uint64_t value = r->buffer | (next << r->left); /* left < count <= 64 */
  const int taken = count - r->left;
  r->buffer = rtm_codec_shift_down(next, taken);
  r->left = 64 - taken;
  return rtm_codec_low_bits(value, count);
}

/* The next `count` (0 .. 64) bits, left unread; the block's words must hold them. */
static RTM_CODEC_HD uint64_t rtm_codec_peek(const rtm_codec_reader_t *r, int count) {
  if (count <= r->left) return rtm_codec_low_bits(r->buffer, count);
  return rtm_codec_low_bits(r->buffer | (*r->word << r->left), count);
}

/* ---- embedded coding of the 64 negabinary coefficients, bit plane by bit plane ----
 *
 * From the most significant plane down, until `budget` bits are spent, the coefficients
 * taken in sequency order. The first n of them are those already found significant (a one
 * seen in a higher plane): their bits of this plane go out verbatim, n of them. The rest are
 * coded by group tests: a bit saying whether any coefficient from n on has a one in this
 * plane; if so, one bit a coefficient up to and including the first that has (the last
 * coefficient's one is implied when all before it are zero), which becomes significant, and
 * again. On smooth data the low-sequency coefficients are large and the others small, so a
 * plane costs about n + a few bits, and truncating the stream drops the least significant
 * bits of the whole block first.
 *
 * Coefficients are held in transform order (index x + 4y + 16z); a plane's bits are a 64-bit
 * mask in sequency order, and a group test with its scan is one or two writes: the scan's
 * zeros and its one are the mask's bits from n to its next set bit. The encoder takes the
 * masks of all 32 planes at once, the coefficients' bits transposed (rtm_codec_transpose),
 * into the caller's words (rtm_codec_planes_t: a plane's mask is wanted a plane at a time,
 * at an index registers cannot take); the decoder moves each plane's bits into the
 * coefficients as it reads them. */

/* The 32 x 32 bit matrix m (bit c of word r) transposed in place (bit r of word c): five
 * rounds of swapping blocks of 16, 8, 4, 2 and 1 bits across the diagonal (Warren, Hacker's
 * Delight, 7-3), 16 swaps of six operations a round (2 x 480 for a block's 64 coefficients),
 * where gathering a plane's bits one coefficient at a time took two or three operations a
 * bit (64 x 2 or 3 a plane, for every plane coded). */
static RTM_CODEC_HD void rtm_codec_transpose(uint32_t *m) {
  uint32_t mask = 0x0000ffffu;
  RTM_CODEC_UNROLL
  for (int s = 16; s > 0; s >>= 1, mask ^= mask << s) {
    RTM_CODEC_UNROLL
    for (int k = 0; k < 16; ++k) {
      const int r = k / s * 2 * s + k % s; /* the 16 rows whose bit s is clear */
      const uint32_t t = ((m[r] >> s) ^ m[r + s]) & mask;
      m[r + s] ^= t;
      m[r] ^= t << s;
    }
  }
}

/* Where a coder keeps a block's plane masks: 2 RTM_CODEC_PLANES words, `stride` apart, word p
 * holding plane p's bits of the coefficients 0 .. 31 in sequency order (bit i of the i-th),
 * word RTM_CODEC_PLANES + p those of 32 .. 63. The C reference gives it an array on its
 * stack, a kernel its thread's column of a shared array. */
typedef struct {
  uint32_t *word;
  int stride;
} rtm_codec_planes_t;

static RTM_CODEC_HD uint64_t rtm_codec_plane_mask(rtm_codec_planes_t planes, int plane) {
  return (uint64_t)planes.word[(RTM_CODEC_PLANES + plane) * planes.stride] << 32 |
         planes.word[plane * planes.stride];
}

/* The masks of every plane from the coefficients (transform order): each half of the
 * sequency order transposed. */
static RTM_CODEC_HD void rtm_codec_planes_from(const uint32_t *coef, rtm_codec_planes_t planes) {
  RTM_CODEC_UNROLL
  for (int half = 0; half < 2; ++half) {
    uint32_t m[32];
    RTM_CODEC_UNROLL
    for (int i = 0; i < 32; ++i)
      m[i] = coef[rtm_codec_order(32 * half + i)];
    rtm_codec_transpose(m);
    RTM_CODEC_UNROLL
    for (int p = 0; p < RTM_CODEC_PLANES; ++p)
      planes.word[(RTM_CODEC_PLANES * half + p) * planes.stride] = m[p];
  }
}

/* The decoder's inverse, a plane at a time from the top: every coefficient moves up a bit
 * and takes bit rank(j) of bits as its lowest (rtm_codec_decode_planes shifts them to their
 * planes at the end). */
static RTM_CODEC_HD void rtm_codec_plane_shift_in(uint32_t *coef, uint64_t bits) {
  const uint32_t half[2] = {(uint32_t)bits, (uint32_t)(bits >> 32)};
  RTM_CODEC_UNROLL
  for (int j = 0; j < RTM_CODEC_VALUES; ++j) {
    const int rank = rtm_codec_rank(j);
    const uint32_t top = half[rank / 32] << (31 - rank % 32);
    coef[j] = coef[j] << 1 | top >> 31;
  }
}

static RTM_CODEC_HD void rtm_codec_encode_planes(const uint32_t *coef, int budget,
                                                 rtm_codec_writer_t *w, rtm_codec_planes_t planes) {
  rtm_codec_planes_from(coef, planes);
  int n = 0;
  for (int plane = RTM_CODEC_PLANES - 1; plane >= 0 && budget > 0; --plane) {
    const uint64_t bits = rtm_codec_plane_mask(planes, plane);
    const int verbatim = n < budget ? n : budget;
    rtm_codec_put(w, bits, verbatim);
    budget -= verbatim;
    while (n < RTM_CODEC_VALUES && budget > 0) {
      const uint64_t rest = rtm_codec_shift_down(bits, n);
      if (!rest) { /* the group test: none from n on */
        rtm_codec_put(w, 0ull, 1);
        --budget;
        break;
      }
      /* the group test's one, then the scan: a bit a coefficient from n to the next one, the
       * one included, except that the last coefficient's one is implied (zeros up to it) */
      const int next = n + rtm_codec_low_bit(rest);
      const int implied = next == RTM_CODEC_VALUES - 1;
      const int scanned = implied ? next - n : next - n + 1;
      const int written = 1 + (scanned < budget - 1 ? scanned : budget - 1);
      rtm_codec_put(w, implied ? 1ull : 1ull | 2ull << (next - n), written);
      budget -= written;
      n = next + 1; /* significant (or the budget is spent, and n no longer matters) */
    }
  }
}

/* The decoder follows the encoder's budget step for step; a coefficient is made significant
 * only where the stream says so (a one read, or the implied last one), not where the budget
 * ran out in the middle of a group's scan.
 *
 * Then it rounds (after zfp's ZFP_ROUND_LAST). The digits a coefficient's stream did not
 * reach would decode as zeros, and a negabinary number cut short that way is biased: its K
 * dropped digits span [-Mk, 2^K - 1 - Mk] (Mk the 1010.. mask of K bits), from -2/3 to 1/3
 * of the last digit read or from -1/3 to 2/3. Each coefficient with a one among its digits
 * read takes instead the unread digits whose value is the middle of that span rounded
 * toward zero (0x55555555 >> (planes read + 1): the unread digits 00101.., from the first
 * unread down). One whose digits read are all zero stays zero: it is small where the
 * transform did its work, and the middle of its span is not (rounded too, as zfp does, a
 * Gaussian field at 4 bits a value lost 2x to 4x in accuracy; these alone gain 10 to 15% on
 * the volumes of tests/solver/test_codec.c, and images that correlate 200 snapshots 15 to
 * 40%, the bias being what adds up across them; at 1 bit a value, where little is read, the
 * image lost). */
static RTM_CODEC_HD void rtm_codec_decode_planes(rtm_codec_reader_t *r, int budget,
                                                 uint32_t *coef) {
  RTM_CODEC_UNROLL
  for (int j = 0; j < RTM_CODEC_VALUES; ++j)
    coef[j] = 0u;
  int n = 0, top = -1, last = 0; /* the first plane holding a one, the last one read */
  int known = 0; /* coefficients (a prefix in sequency order) whose bit of `last` was read */
  for (int plane = RTM_CODEC_PLANES - 1; plane >= 0 && budget > 0; --plane) {
    const int verbatim = n < budget ? n : budget;
    uint64_t bits = rtm_codec_get(r, verbatim);
    budget -= verbatim;
    known = verbatim;
    while (n < RTM_CODEC_VALUES && budget > 0) {
      /* the group test's bit and its scan's, read at once */
      const int room = RTM_CODEC_VALUES - 1 - n; /* the scan's bits when no one is read */
      const int span = room < budget - 1 ? room : budget - 1;
      const uint64_t window = rtm_codec_peek(r, span + 1);
      if (!(window & 1u)) { /* none from n on */
        (void)rtm_codec_get(r, 1);
        --budget;
        known = RTM_CODEC_VALUES;
        break;
      }
      const uint64_t scan = window >> 1;
      if (scan) {
        const int zeros = rtm_codec_low_bit(scan);
        (void)rtm_codec_get(r, zeros + 2);
        budget -= zeros + 2;
        n += zeros;
      } else {
        (void)rtm_codec_get(r, span + 1);
        budget -= span + 1;
        if (span < room) { /* the budget ran out mid-scan */
          known = n + span;
          break;
        }
        n = RTM_CODEC_VALUES - 1; /* the implied one */
      }
      bits |= 1ull << n;
      ++n;
      known = n;
    }
    if (bits && top < 0) top = plane;
    if (top >= 0) rtm_codec_plane_shift_in(coef, bits);
    last = plane;
  }
  if (top < 0) return; /* no coefficient significant: all zero */
  /* the planes read, 32 - last, for the first `known` in sequency order, one fewer for the
   * rest: the rounding digits for each (none where fewer than 3 digits are left; `known`
   * counts all the digits of the last plane that were read, zeros of a group test too) */
  const int planes = RTM_CODEC_PLANES - last;
  const uint32_t whole = planes < 30 ? 0x55555555u >> (planes + 1) : 0u;
  const uint32_t short_one = planes < 31 ? 0x55555555u >> planes : 0u;
  RTM_CODEC_UNROLL
  for (int j = 0; j < RTM_CODEC_VALUES; ++j) {
    const int rank = rtm_codec_rank(j);
    coef[j] = coef[j] ? coef[j] << last | (rank < known ? whole : short_one) : 0u;
  }
}

/* ---- a block of a volume: gathered with its edge padding, and scattered back ---- */

/* The block's extent along each axis: 4, or fewer at the volume's far edges. */
static RTM_CODEC_HD int rtm_codec_extent(int n, int block) {
  const int left = n - RTM_CODEC_EDGE * block;
  return left < RTM_CODEC_EDGE ? left : RTM_CODEC_EDGE;
}

/* Blocks along x, y, z of a volume n. */
static RTM_CODEC_HD void rtm_codec_block_counts(const int n[3], size_t blocks[3]) {
  for (int a = 0; a < 3; ++a)
    blocks[a] = ((size_t)n[a] + RTM_CODEC_EDGE - 1) / RTM_CODEC_EDGE;
}

/* The offset of block number `block`'s first value (x-major block order) and its extents. */
static RTM_CODEC_HD size_t rtm_codec_block_place(const int n[3], const size_t blocks[3],
                                                 size_t block, size_t pitch_y, size_t pitch_z,
                                                 int count[3]) {
  const size_t bx = block % blocks[0], by = block / blocks[0] % blocks[1],
               bz = block / blocks[0] / blocks[1];
  count[0] = rtm_codec_extent(n[0], (int)bx);
  count[1] = rtm_codec_extent(n[1], (int)by);
  count[2] = rtm_codec_extent(n[2], (int)bz);
  return RTM_CODEC_EDGE * (bz * pitch_z + by * pitch_y + bx);
}

/* The bits of the block whose first value is `first`, count[3] values along x, y, z, at
 * index x + 4y + 16z; zero where the block has no value (rtm_codec_pad fills those in
 * integers). */
static RTM_CODEC_HD void rtm_codec_gather(const float *first, const int count[3], size_t pitch_y,
                                          size_t pitch_z, uint32_t *bits) {
  RTM_CODEC_UNROLL
  for (int z = 0; z < RTM_CODEC_EDGE; ++z)
    RTM_CODEC_UNROLL
  for (int y = 0; y < RTM_CODEC_EDGE; ++y)
    RTM_CODEC_UNROLL
  for (int x = 0; x < RTM_CODEC_EDGE; ++x) {
    const int present = x < count[0] && y < count[1] && z < count[2];
    bits[x + 4 * y + 16 * z] =
        present ? rtm_float_bits(first[(size_t)z * pitch_z + (size_t)y * pitch_y + x]) : 0u;
  }
}

/* A line of count (1 .. 4) block integers p[0], p[s], .. extended to 4 by linear
 * extrapolation (a -> a a a a, a b -> a b 2b-a 3b-2a, a b c -> a b c 2c-b), clamped to the
 * block's range (|q| < 2^30, which the transform needs). A padded value is never decoded:
 * it is there to cost few bits, and a line continued straight leaves the transform's slope
 * and curvature coefficients what the present values make them. ZFP's copies (a b c a)
 * put a step at the edge instead: on a Gaussian cut by the volume's faces (31 x 29 x 18)
 * the round trip at 4 bits a value was 5.3e-4 with them against 1.1e-4 with this, the error
 * of whole blocks (1.2e-4 at 32 x 32 x 20). */
static RTM_CODEC_HD void rtm_codec_pad_line(int32_t *p, int count, int s) {
  const int64_t limit = (1ll << RTM_CODEC_INT_BITS) - 1;
  RTM_CODEC_UNROLL
  for (int i = 1; i < RTM_CODEC_EDGE; ++i)
    if (i >= count) {
      int64_t next = p[(i - 1) * s];
      if (i >= 2) next = 2 * next - p[(i - 2) * s];
      p[i * s] = (int32_t)(next > limit ? limit : next < -limit ? -limit : next);
    }
}

/* The block's integers padded along x (the present rows), then y (the present planes), then
 * z: afterwards all 64 are set. */
static RTM_CODEC_HD void rtm_codec_pad(int32_t *q, const int count[3]) {
  RTM_CODEC_UNROLL
  for (int z = 0; z < RTM_CODEC_EDGE; ++z)
    RTM_CODEC_UNROLL
  for (int y = 0; y < RTM_CODEC_EDGE; ++y)
    if (z < count[2] && y < count[1]) rtm_codec_pad_line(q + 4 * y + 16 * z, count[0], 1);
  RTM_CODEC_UNROLL
  for (int z = 0; z < RTM_CODEC_EDGE; ++z)
    RTM_CODEC_UNROLL
  for (int x = 0; x < RTM_CODEC_EDGE; ++x)
    if (z < count[2]) rtm_codec_pad_line(q + x + 16 * z, count[1], 4);
  RTM_CODEC_UNROLL
  for (int i = 0; i < 16; ++i)
    rtm_codec_pad_line(q + i, count[2], 16);
}

static RTM_CODEC_HD void rtm_codec_scatter(const uint32_t *bits, const int count[3], size_t pitch_y,
                                           size_t pitch_z, float *first) {
  RTM_CODEC_UNROLL
  for (int z = 0; z < RTM_CODEC_EDGE; ++z)
    RTM_CODEC_UNROLL
  for (int y = 0; y < RTM_CODEC_EDGE; ++y)
    RTM_CODEC_UNROLL
  for (int x = 0; x < RTM_CODEC_EDGE; ++x)
    if (x < count[0] && y < count[1] && z < count[2])
      first[(size_t)z * pitch_z + (size_t)y * pitch_y + x] =
          rtm_bits_float(bits[x + 4 * y + 16 * z]);
}

/* ---- a whole block ---- */

/* What rtm_codec_coefficients found in a block. */
enum {
  RTM_CODEC_BLOCK_CODED = 0,  /* values to code: its exponent and coefficients are set */
  RTM_CODEC_BLOCK_ZERO = 1,   /* every value +0 or -0: nothing to code */
  RTM_CODEC_BLOCK_REFUSED = 2 /* a NaN or an infinity: coded as a block of zeros */
};

/* The present values' bits (rtm_codec_gather's: zero where absent) as the block's exponent
 * and its 64 negabinary coefficients in transform order (index x + 4y + 16z): block
 * floating point, the edge padding, the forward transform. */
static RTM_CODEC_HD int rtm_codec_coefficients(const uint32_t *bits, const int count[3],
                                               uint32_t *coef, int *emax) {
  uint32_t max_abs = 0;
  RTM_CODEC_UNROLL
  for (int i = 0; i < RTM_CODEC_VALUES; ++i) {
    const uint32_t a = bits[i] & 0x7fffffffu;
    max_abs = a > max_abs ? a : max_abs;
  }
  if (max_abs >= 0x7f800000u) return RTM_CODEC_BLOCK_REFUSED;
  if (max_abs == 0) return RTM_CODEC_BLOCK_ZERO;
  *emax = rtm_codec_exponent(max_abs);
  int32_t q[RTM_CODEC_VALUES];
  RTM_CODEC_UNROLL
  for (int i = 0; i < RTM_CODEC_VALUES; ++i)
    q[i] = rtm_codec_to_int(bits[i], *emax);
  if (count[0] < RTM_CODEC_EDGE || count[1] < RTM_CODEC_EDGE || count[2] < RTM_CODEC_EDGE)
    rtm_codec_pad(q, count);
  rtm_codec_transform_forward(q);
  RTM_CODEC_UNROLL
  for (int j = 0; j < RTM_CODEC_VALUES; ++j)
    coef[j] = rtm_codec_to_negabinary(q[j]);
  return RTM_CODEC_BLOCK_CODED;
}

/* The highest plane where a coefficient has a one (-1 when none). */
static RTM_CODEC_HD int rtm_codec_top_plane(const uint32_t *coef) {
  uint32_t planes = 0;
  RTM_CODEC_UNROLL
  for (int j = 0; j < RTM_CODEC_VALUES; ++j)
    planes |= coef[j];
  return planes ? rtm_codec_top_bit(planes) : -1;
}

/* The counts behind the plane costs (rtm_codec_plane_costs, below), in the caller's bytes (indexed
 * by a coefficient's top plane, they would not stay in registers; the analysing kernel keeps them
 * in shared memory, stride apart): last[q stride] = 1 + M'_q, M'_q the last coefficient whose top
 * plane is q (0 where none), and count[q stride] = k_q. */
static RTM_CODEC_HD void rtm_codec_plane_records(const uint32_t *coef, unsigned char *last,
                                                 unsigned char *count, int stride) {
  for (int q = 0; q < RTM_CODEC_PLANES; ++q) {
    last[q * stride] = 0;
    count[q * stride] = 0;
  }
  int higher = -1; /* the highest top plane among the coefficients after i */
  RTM_CODEC_UNROLL
  for (int i = RTM_CODEC_VALUES - 1; i >= 0; --i) {
    const uint32_t c = coef[rtm_codec_order(i)];
    if (!c) continue;
    const int top = rtm_codec_top_bit(c);
    if (!last[top * stride]) last[top * stride] = (unsigned char)(i + 1);
    if (top >= higher) {
      ++count[top * stride];
      higher = top;
    }
  }
}

/* Plane q's bits, from its records (last_q, count_q: rtm_codec_plane_records'), the planes
 * taken from the top down; *prefix_last is M_(q+1) (-1 above the first plane), then M_q. */
static RTM_CODEC_HD int rtm_codec_plane_cost(int last_q, int count_q, int *prefix_last) {
  const int above = *prefix_last;
  if (last_q - 1 > above) *prefix_last = last_q - 1;
  const int m = *prefix_last;
  return m + 1 + count_q + (m < RTM_CODEC_VALUES - 1) -
         (m == RTM_CODEC_VALUES - 1 && above < RTM_CODEC_VALUES - 1);
}

/* What rtm_codec_encode_planes spends with an unbounded budget: cost[p] is the bits written
 * from the top plane through the end of plane p (the header not counted). Given exactly
 * cost[p] bits, the encoder stops at the end of plane p.
 *
 * Counted from each coefficient's top plane s_i (i in sequency order), not plane by plane:
 * after plane q the significant prefix is 0 .. M_q, M_q the last coefficient with s_i >= q
 * (the group tests find every one beyond the prefix), so plane q writes M_(q+1) + 1 bits
 * verbatim, its k_q new coefficients' tests and scans up to M_q (k_q + M_q - M_(q+1) bits,
 * one fewer where the scan ends at the last coefficient, whose one is implied) and a final
 * zero test while M_q < 63: M_q + 1 + k_q + [M_q < 63] - [M_q = 63 > M_(q+1)]. k_q counts the
 * coefficients of top plane q after every coefficient of a higher one. Sixty-four top bits
 * and 32 sums, where coding the planes takes 64 bits a plane (tests/solver/test_codec.c
 * checks this against the encoder's bits, plane by plane). */
static RTM_CODEC_HD void rtm_codec_plane_costs(const uint32_t *coef, int *cost) {
  unsigned char last[RTM_CODEC_PLANES], count[RTM_CODEC_PLANES];
  rtm_codec_plane_records(coef, last, count, 1);
  int prefix_last = -1, spent = 0;
  for (int q = RTM_CODEC_PLANES - 1; q >= 0; --q) {
    spent += rtm_codec_plane_cost(last[q], count[q], &prefix_last);
    cost[q] = spent;
  }
}

/* Levels: plane p of a block of exponent emax stands for 2^(emax + p - 30) (before the
 * transform's gain, which every block shares), level emax + p. A slab's blocks are coded
 * down to a common level (rtm_codec.h), so a block's level range is [emax, emax + top]:
 * RTM_CODEC_LEVEL_MIN .. RTM_CODEC_LEVEL_MAX, RTM_CODEC_LEVELS of them and one above. */
enum {
  RTM_CODEC_LEVEL_MIN = -126,
  RTM_CODEC_LEVEL_MAX = 128 + RTM_CODEC_PLANES - 1,
  RTM_CODEC_LEVELS = RTM_CODEC_LEVEL_MAX - RTM_CODEC_LEVEL_MIN + 2
};

/* The plane a block of exponent emax whose highest plane with a one is `top` is coded
 * through at `level` (0 where every plane is), -1 where the level lies above its top. */
static RTM_CODEC_HD int rtm_codec_plane_at(int level, int emax, int top) {
  if (level > emax + top) return -1;
  return level > emax ? level - emax : 0;
}

/* A slab's histogram, 2 RTM_CODEC_LEVELS counts of words (uint32_t; levels counted from
 * RTM_CODEC_LEVEL_MIN): at k ("direct") the words of the blocks coded through plane 1 .. top
 * at level k, at RTM_CODEC_LEVELS + k ("below") those of the blocks whose every plane is
 * coded at level k and under (emax = k): a block adds its words through plane p at
 * rtm_codec_hist_index(emax, p), p = 0 .. top. */
static RTM_CODEC_HD int rtm_codec_hist_index(int emax, int plane) {
  return plane == 0 ? RTM_CODEC_LEVELS + emax - RTM_CODEC_LEVEL_MIN
                    : emax + plane - RTM_CODEC_LEVEL_MIN;
}

/* The slab's level from its histogram: the lowest whose words, direct[k] plus the below
 * counts at k and above, fit in `capacity` (what fits at a level fits at every level above);
 * *total := those words. */
static RTM_CODEC_HD int rtm_codec_slab_level(const uint32_t *hist, size_t capacity, size_t *total) {
  uint64_t suffix = 0, fits = 0;
  for (int k = RTM_CODEC_LEVELS - 1; k >= 0; --k) {
    suffix += hist[RTM_CODEC_LEVELS + k];
    const uint64_t at = hist[k] + suffix;
    if (at > capacity) {
      *total = (size_t)fits;
      return k + 1 + RTM_CODEC_LEVEL_MIN;
    }
    fits = at;
  }
  *total = (size_t)fits;
  return RTM_CODEC_LEVEL_MIN;
}

/* A slab's block table: a byte a block (its words), in whole words. */
static RTM_CODEC_HD size_t rtm_codec_table_words(size_t blocks) {
  return (blocks + 7) / 8;
}

/* The words a block takes coded through plane p (0 .. 31): its header and planes rounded up. */
static RTM_CODEC_HD int rtm_codec_words_through(int cost_p) {
  return (RTM_CODEC_HEADER + cost_p + 63) / 64;
}

/* The device coder's scratch (rtm_codec_scratch_bytes), byte offsets of its parts: each
 * slab's histogram (words at each level: direct, then below, RTM_CODEC_LEVELS uint32 each),
 * each block's head (uint32: (emax - RTM_CODEC_LEVEL_MIN) << 8 | (top + 1), 0 for a block
 * not coded), each block's word offset in its slab (uint32), the order in which the kernels
 * take a slab's blocks (uint32, a block's number in its slab, at the slab's place) and each
 * block's words through each plane (bytes, plane-major: curve + plane blocks + block). */
typedef struct {
  size_t hist, head, offsets, order, curve, bytes;
} rtm_codec_scratch_t;

static RTM_CODEC_HD size_t rtm_codec_round_up(size_t bytes) {
  return (bytes + 255) / 256 * 256;
}

static RTM_CODEC_HD rtm_codec_scratch_t rtm_codec_scratch_layout(const size_t blocks[3]) {
  const size_t total = blocks[0] * blocks[1] * blocks[2];
  rtm_codec_scratch_t l;
  l.hist = 0;
  l.head = rtm_codec_round_up(blocks[2] * 2 * RTM_CODEC_LEVELS * sizeof(uint32_t));
  l.offsets = l.head + rtm_codec_round_up(total * sizeof(uint32_t));
  l.order = l.offsets + rtm_codec_round_up(total * sizeof(uint32_t));
  l.curve = l.order + rtm_codec_round_up(total * sizeof(uint32_t));
  l.bytes = l.curve + rtm_codec_round_up(total * RTM_CODEC_PLANES);
  return l;
}

/* The block's header and planes in `count` words (64 count bits, the planes cut where they
 * run out), zeros after the planes where they end first; count >= 1. */
static RTM_CODEC_HD void rtm_codec_encode_coefficients(const uint32_t *coef, int emax, int count,
                                                       uint64_t *words, rtm_codec_planes_t planes) {
  rtm_codec_writer_t w = {words, 0ull, 0};
  rtm_codec_put(&w, 1u | (uint64_t)(emax + RTM_CODEC_BIAS) << 1, RTM_CODEC_HEADER);
  rtm_codec_encode_planes(coef, 64 * count - RTM_CODEC_HEADER, &w, planes);
  while (w.word < words + count)
    rtm_codec_put(&w, 0ull, 64 - w.filled);
}

/* A block of `count` words (0: a block of zeros) back to the bits of its 64 values. */
static RTM_CODEC_HD void rtm_codec_decode_block(const uint64_t *words, int count, uint32_t *bits) {
  rtm_codec_reader_t r = {words, 0ull, 0};
  const uint32_t header = count > 0 ? (uint32_t)rtm_codec_get(&r, RTM_CODEC_HEADER) : 0u;
  if (!(header & 1u)) {
    RTM_CODEC_UNROLL
    for (int i = 0; i < RTM_CODEC_VALUES; ++i)
      bits[i] = 0u;
    return;
  }
  const int emax = (int)(header >> 1) - RTM_CODEC_BIAS;
  uint32_t coef[RTM_CODEC_VALUES];
  rtm_codec_decode_planes(&r, 64 * count - RTM_CODEC_HEADER, coef);
  int32_t q[RTM_CODEC_VALUES];
  RTM_CODEC_UNROLL
  for (int j = 0; j < RTM_CODEC_VALUES; ++j)
    q[j] = rtm_codec_from_negabinary(coef[j]);
  rtm_codec_transform_inverse(q);
  RTM_CODEC_UNROLL
  for (int i = 0; i < RTM_CODEC_VALUES; ++i)
    bits[i] = rtm_codec_from_int(q[i], emax - RTM_CODEC_INT_BITS);
}

#endif
