/* rtm_codec.h - a lossy fixed-rate codec for 3D fp32 volumes in the style of ZFP (Lindstrom,
 * "Fixed-rate compressed floating-point arrays", IEEE TVCG 20(12), 2014): the C reference
 * (codec.c). The CUDA kernels (solver/cuda/rtm_cuda_codec.h) write and read the same bytes,
 * bit for bit: both compile the block coder of rtm_codec_block.h.
 *
 * Format. A volume [nz][ny][nx] (x fastest) is cut into 4 x 4 x 4 blocks, x-major then y
 * then z (block (bx, by, bz) is number (bz nby + by) nbx + bx, nbx = ceil(nx / 4), ...).
 * Each block takes exactly 64 rate bits, `rate` 64-bit little-endian words, whatever its
 * values: the size is known before the run and any block decodes on its own. A block at a
 * far edge with fewer than 4 values along an axis is padded, in integers, by continuing its
 * lines straight (a b c -> a b c 2c-b; ZFP copies values instead: on volumes cut by their
 * faces, 31 x 29 x 18, this codes edge blocks 4 to 5 times more accurately, as well as whole
 * blocks) and decodes to its present values only. In a block:
 *   - 1 bit: 0 for a block of zeros (+0 or -0; it decodes to +0, the rest of its words
 *     zero), 1 otherwise, then 8 bits: emax + 127, every |value| < 2^emax;
 *   - the values as integers trunc(value 2^(30 - emax)) (block floating point: one exponent,
 *     30-bit significands; subnormals are ordinary small values), decorrelated by a lifted
 *     4-point transform along x, then y, then z; the 64 coefficients ordered by sequency and
 *     written in negabinary;
 *   - their bit planes, the most significant first, embedded-coded (rtm_codec_block.h)
 *     until the block's 64 rate bits are spent.
 * Decoding reverses the steps in integers, with the unread digits of each coefficient that
 * has a one among those read set to the middle of their span (not left zero: truncation is biased,
 * and the bias adds up across the snapshots an image correlates), and rounds each value to the
 * nearest float (the largest finite float where a truncated block near FLT_MAX would overshoot it).
 * A block that holds a NaN or an infinity is refused: it is stored as a block of zeros and
 * the compressor reports the first such block (rtm_codec_block_origin says where it is).
 *
 * Rate: 1 .. 32 bits a value (32 / rate times smaller than fp32). Relative L2 error of a
 * round trip, the worst of 200 draws of tests/solver/test_codec.c (68 x 52 x 44 volumes):
 *   rate                                   1       2       4       8       16
 *   Gaussian, 6 .. 10 cells wide        1.2e-2  1.6e-3  1.2e-4  3.4e-6  1.0e-8
 *   Ricker wavefront, 10 cells a wave   1.1e-1  3.2e-2  5.3e-3  2.8e-4  1.1e-6
 *   plane wave, 16 cells a wavelength      -    5.0e-3  4.5e-4  1.4e-5  5.0e-8
 *   plane wave,  8 cells a wavelength   1.4e-1  3.2e-2  4.7e-3  2.3e-4  8.8e-7
 *   plane wave,  4 cells a wavelength      -    2.2e-1  5.0e-2  3.1e-3  1.2e-5
 *   white noise (the worst case)        1.0     0.82    0.24    1.4e-2  5.6e-5
 * Once the rate covers a block's few large coefficients every added bit a value halves the
 * error; rate 32 leaves float rounding only (~1e-8).
 *
 * A range of planes: compressing planes [z0, z0 + count) of a volume (volume + z0 pitch_z,
 * n[2] = count) with z0 a multiple of 4 gives the bytes that compressing the whole volume
 * puts at offset (z0 / 4) rtm_codec_slab_bytes(n, rate), as long as count is a multiple of 4
 * or the range reaches the volume's last plane; decompressing works the same way. So a store
 * can compress a volume a slab of 4 planes at a time, and read any slab back alone. */
#ifndef RTM_CODEC_H
#define RTM_CODEC_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A block's depth (and width, and length): planes [4 s, 4 s + 4) are blocks of their own */
#define RTM_CODEC_BLOCK_PLANES 4
#define RTM_CODEC_RATE_MIN 1
#define RTM_CODEC_RATE_MAX 32
/* first_refused when no block holds a NaN or an infinity */
#define RTM_CODEC_NO_BLOCK ((size_t)-1)

/* Bytes of the compressed volume n = {nx, ny, nz} at `rate` bits a value: 8 rate bytes a
 * block of 4 x 4 x 4 (partial blocks at the edges count whole). 0 for a rate outside
 * 1 .. 32 or an empty volume. */
size_t rtm_codec_bytes(const int n[3], int rate);

/* Bytes of one slab of 4 planes: the offset of planes [4 s, 4 s + 4) is s times this. */
size_t rtm_codec_slab_bytes(const int n[3], int rate);

/* The first cell (x, y, z) of block number `block` of a volume n. */
void rtm_codec_block_origin(const int n[3], size_t block, int origin[3]);

/* RTM_OK when a volume n, its pitches (floats between rows, between planes), rate and
 * compressed bytes can be coded: n > 0, pitch_y >= nx, pitch_z >= pitch_y ny, rate in
 * 1 .. 32, the bytes 8-byte aligned (RTM_ERR_CONFIG for the rate, which users choose,
 * RTM_ERR_INTERNAL for the rest); logs why not. The host and device coders both ask it. */
int rtm_codec_check(const int n[3], size_t pitch_y, size_t pitch_z, int rate,
                    const void *compressed);

/* Compresses volume[z pitch_z + y pitch_y + x] (x < nx, y < ny, z < nz) into out, 8-byte
 * aligned, rtm_codec_bytes(n, rate) bytes. RTM_ERR_NUMERIC when a block holds a NaN or an
 * infinity (every other block is still coded), with the lowest such block's number in
 * *first_refused (when first_refused is not NULL; RTM_CODEC_NO_BLOCK when none); logs
 * nothing for it: the caller knows what the volume is. */
int rtm_codec_compress(const float *volume, const int n[3], size_t pitch_y, size_t pitch_z,
                       int rate, void *out, size_t *first_refused);

/* Decompresses rtm_codec_compress's bytes `in` (8-byte aligned) into
 * volume[z pitch_z + y pitch_y + x], touching no other element. */
int rtm_codec_decompress(const void *in, const int n[3], int rate, float *volume, size_t pitch_y,
                         size_t pitch_z);

#ifdef __cplusplus
}
#endif

#endif
