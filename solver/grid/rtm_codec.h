/* rtm_codec.h - a lossy codec for 3D fp32 volumes in the style of ZFP (Lindstrom,
 * "Fixed-rate compressed floating-point arrays", IEEE TVCG 20(12), 2014), its size fixed by
 * the rate and its bits spent where the values are: the C reference (codec.c). The CUDA
 * kernels (solver/cuda/rtm_cuda_codec.h) write and read the same bytes, bit for bit: both
 * compile the block coder of rtm_codec_block.h.
 *
 * Blocks. A volume [nz][ny][nx] (x fastest) is cut into 4 x 4 x 4 blocks, x-major then y
 * then z (block (bx, by, bz) is number (bz nby + by) nbx + bx, nbx = ceil(nx / 4), ...). A
 * block at a far edge with fewer than 4 values along an axis is padded, in integers, by
 * continuing its lines straight (a b c -> a b c 2c-b; ZFP copies values instead: on volumes
 * cut by their faces, 31 x 29 x 18, this codes edge blocks 4 to 5 times more accurately, as
 * well as whole blocks) and decodes to its present values only. A coded block is:
 *   - 1 bit, 1, then 8 bits: emax + 127, every |value| < 2^emax;
 *   - the values as integers trunc(value 2^(30 - emax)) (block floating point: one exponent,
 *     30-bit significands; subnormals are ordinary small values), decorrelated by a lifted
 *     4-point transform along x, then y, then z; the 64 coefficients ordered by sequency and
 *     written in negabinary;
 *   - their bit planes, the most significant first, embedded-coded (rtm_codec_block.h)
 *     until the block's words are spent.
 * Decoding reverses the steps in integers, with the unread digits of each coefficient that
 * has a one among those read set to the middle of their span (not left zero: truncation is
 * biased, and the bias adds up across the snapshots an image correlates), and rounds each
 * value to the nearest float (the largest finite float where a truncated block near FLT_MAX
 * would overshoot it).
 *
 * Slabs. The blocks of 4 planes (a slab: nbx nby blocks) share 8 rate nbx nby bytes, so the
 * size is known before the run and every slab codes and decodes on its own. The slab opens
 * with its block table, a byte a block (its words; 0: a block of zeros), padded to whole
 * words; the blocks' words follow in block order, then zeros. The slab's bits go where the
 * values are: plane p of a block of exponent emax stands for 2^(emax + p - 30), its level
 * emax + p, and every block is coded down to the slab's level, the lowest at which all the
 * blocks' words fit (a block whose planes all lie below it takes no words); the words left
 * over go, in block order, to each block's next plane. Every block then has about the same
 * absolute error, which is what minimises the slab's L2 error for its bits, where a fixed
 * number of bits a block (ZFP's fixed rate, and this codec's before 2026-11-30) spends as
 * much on a block far from the wavefront as on one across it. A block holding a NaN or an
 * infinity is refused: it takes no words (decodes as zeros) and the compressor reports the
 * first such block (rtm_codec_block_origin says where it is).
 *
 * Rate: 1 .. 32 bits a value on average (32 / rate times smaller than fp32), the table's
 * byte a block (1/8 bit a value) included. Relative L2 error of a round trip, the worst of
 * 200 draws of tests/solver/test_codec.c (68 x 52 x 44 volumes;
 * run/experiments/codec_draws.sh):
 *   rate                                   1       2       4       8       16
 *   Gaussian, 6 .. 10 cells wide        5.6e-3  3.4e-4  1.5e-5  2.9e-7  4.5e-9
 *   Ricker wavefront, 10 cells a wave   2.0e-2  2.5e-3  1.3e-4  1.2e-6  8.3e-9
 *   plane wave,  8 cells a wavelength   3.8e-1  5.5e-2  6.1e-3  2.8e-4  1.0e-6
 *   white noise (the worst case)        0.98    0.83    0.29    1.7e-2  6.7e-5
 * A field whose energy is where a peak or a front is (the Gaussian, the Ricker shell, a
 * source wavefield) keeps 8 to 40 times less error at 4 bits a value than with a fixed
 * number of bits a block; one that fills the volume evenly (a plane wave, noise) keeps 1.2
 * to 1.3 times the error a fixed number gives (the table's eighth of a bit a value and the
 * whole words a block cost it), and at 1 bit a value, where a block's first word is all a
 * slab can give, 2.7 times (0.38 against 0.14). Rate 32 leaves float rounding
 * only (~1e-8).
 *
 * A range of planes: compressing planes [z0, z0 + count) of a volume (volume + z0 pitch_z,
 * n[2] = count) with z0 a multiple of 4 gives the bytes that compressing the whole volume
 * puts at offset (z0 / 4) rtm_codec_slab_bytes(n, rate), as long as count is a multiple of 4
 * or the range reaches the volume's last plane; decompressing works the same way. So a store
 * can compress a volume a slab of 4 planes at a time, and read any slab back alone; ranks
 * whose planes start at multiples of 4 code their slabs as one rank would. */
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

/* Bytes of device memory the CUDA coder works in for a volume n (rtm_cuda_codec.h): 44 bytes
 * a block of 64 values (0.7 bytes a cell) and a histogram of 2.3 kB a slab of 4 planes. */
size_t rtm_codec_scratch_bytes(const int n[3]);

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
 * volume[z pitch_z + y pitch_y + x], touching no other element. RTM_ERR_INTERNAL, the slab
 * named, when a slab's block table claims more words than the slab holds (bytes not of this
 * codec; that slab's planes are left partly written; the CUDA decoders decode such blocks
 * as zeros instead, rtm_cuda_codec.h). */
int rtm_codec_decompress(const void *in, const int n[3], int rate, float *volume, size_t pitch_y,
                         size_t pitch_z);

#ifdef __cplusplus
}
#endif

#endif
