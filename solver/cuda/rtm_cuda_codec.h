/* rtm_cuda_codec.h - the codec (solver/grid/rtm_codec.h: format, rates, errors) on the
 * device (codec_cuda.cu): the same bytes from the same volume as the C reference, and the
 * same floats from the same bytes, bit for bit (bytes not of this codec, whose block table
 * claims more words than a slab holds, decode as zeros where the reference refuses them). Device
 * pointers; the work is queued on `stream` and nothing waits for it. Sizes and plane ranges as in
 * rtm_codec.h (rtm_codec_bytes, rtm_codec_slab_bytes); d_scratch is device memory of
 * rtm_codec_scratch_bytes(n) bytes, 256-byte aligned, which the call's work uses until it
 * has run (one scratch a stream). */
#ifndef RTM_CUDA_CODEC_H
#define RTM_CUDA_CODEC_H

#include <stddef.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Compresses d_volume[z pitch_z + y pitch_y + x] (x < nx, y < ny, z < nz) into d_out,
 * 8-byte aligned, rtm_codec_bytes(n, rate) bytes. A block holding a NaN or an infinity is
 * stored as zeros (as the reference stores it); when d_first_refused is not NULL, that
 * device word is set to RTM_CODEC_NO_BLOCK and lowered to the lowest refused block's number
 * (read it back after the stream's work: then it is the reference's *first_refused).
 * Returns RTM_ERR_CONFIG / RTM_ERR_INTERNAL for what rtm_codec_check refuses,
 * RTM_ERR_DEVICE when the launch fails. */
int rtm_cuda_codec_compress(const float *d_volume, const int n[3], size_t pitch_y, size_t pitch_z,
                            int rate, void *d_out, void *d_scratch,
                            unsigned long long *d_first_refused, cudaStream_t stream);

/* Decompresses d_in (8-byte aligned) into d_volume[z pitch_z + y pitch_y + x], touching no
 * other element. */
int rtm_cuda_codec_decompress(const void *d_in, const int n[3], int rate, void *d_scratch,
                              float *d_volume, size_t pitch_y, size_t pitch_z, cudaStream_t stream);

/* The imaging condition straight from the blocks: with s the value rtm_cuda_codec_decompress
 * would write at (x, y, z) and r = d_receiver[z receiver_pitch_z + y receiver_pitch_y + x],
 * image = fmaf(s, r, image), then illumination = fmaf(s, s, illumination) (each rounded
 * once, as solver/rtm's accumulation: the same floats as decompressing, then accumulating),
 * d_image and d_illumination dense [nz][ny][nx]. No volume of s is written or read. */
int rtm_cuda_codec_decompress_image(const void *d_in, const int n[3], int rate, void *d_scratch,
                                    float *d_image, float *d_illumination, const float *d_receiver,
                                    size_t receiver_pitch_y, size_t receiver_pitch_z,
                                    cudaStream_t stream);

/* The round trip's error without a volume of s: d_sums[0] = sum (s - v)^2 and d_sums[1] =
 * sum v^2 over the cells (double, on the device; set, not added to), s the value
 * rtm_cuda_codec_decompress would write at (x, y, z) and v = d_volume[z pitch_z + y pitch_y +
 * x]. The sums' order is the threads', not the reference's: equal to rounding. */
int rtm_cuda_codec_difference(const void *d_in, const int n[3], int rate, void *d_scratch,
                              const float *d_volume, size_t pitch_y, size_t pitch_z, double *d_sums,
                              cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
