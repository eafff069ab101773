/* imaging_cuda.h - private to solver/rtm: the extern "C" launchers and device calls of
 * imaging_cuda.cu, for image.c and snapshots.c, which stay plain C.
 *
 * Everything runs on the legacy default stream (cudaStreamLegacy), but for the hold's copy
 * (below): it runs after the work a backend queued on its blocking stream and before what the
 * backend queues later (rtm_field_view_t), and it is ordered with itself, so an accumulation
 * that reads a snapshot follows the copy or conversion that produced it. Nothing here
 * synchronises except rtm_imaging_cuda_read, rtm_imaging_cuda_synchronize and
 * rtm_imaging_cuda_hold_wait. Each returns a status; CUDA errors
 * are logged where they happen (rtm_cuda_check.h).
 *
 * Arithmetic shared with the host loops (image.c, snapshots.c), bit for bit:
 *   accumulate  image = fmaf(source, receiver, image), then illumination =
 *               fmaf(source, source, illumination), per cell (__fmaf_rn);
 *   fp16        float -> binary16 rounded to nearest even (__float2half_rn, as
 *               rtm_half_from_float), binary16 -> float exact (__half2float, as
 *               rtm_half_to_float). NaN payloads are the one difference: the device gives its
 *               canonical NaN.
 *
 * Without CUDA in the build, each is a stub that says so and returns RTM_ERR_UNSUPPORTED
 * (no device memory strategy exists then, so no store reaches them). */
#ifndef RTM_IMAGING_CUDA_H
#define RTM_IMAGING_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include "rtm_imaging.h"
#include "rtm_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The interior extents a launcher walks: nx, ny and the local planes. */
typedef struct {
  int nx, ny, nz;
} rtm_imaging_extent_t;

static inline rtm_imaging_extent_t rtm_imaging_extent(const rtm_grid_t *grid) {
  rtm_imaging_extent_t extent = {grid->n[0], grid->n[1], grid->nz_local};
  return extent;
}

#ifdef RTM3D_HAVE_CUDA

/* Makes `device` current for the calls that follow. */
int rtm_imaging_cuda_use_device(int device);
/* d_image += d_source * d_receiver, d_illumination += d_source^2 over the extent's cells,
 * the outputs laid out as image_layout (rtm_layout_dense's, or a box of it: origin shifted);
 * the image alone where d_illumination is NULL (rtm_image_defer_illumination). */
int rtm_imaging_cuda_accumulate(rtm_imaging_extent_t extent, float *d_image, float *d_illumination,
                                rtm_layout_t image_layout, const float *d_source,
                                rtm_layout_t source_layout, const float *d_receiver,
                                rtm_layout_t receiver_layout);
/* d_illumination[i] += s_k[i]^2 for k = count - 1 down to 0, s_k = d_first + k stride,
 * i < cells, one __fmaf_rn each in that order: the accumulations of the backward pass, which
 * images the last snapshot first, bit for bit, with each volume read once. */
int rtm_imaging_cuda_illuminate(size_t cells, float *d_illumination, const float *d_first,
                                size_t stride, int count);
/* The interior of d_field (laid out as `layout`) into dense d_dense: as float, or as
 * binary16 bit patterns of x 2^e, with *d_max_bits (device memory) set to the interior's
 * largest |x| as bits, which gives e (rtm_half_scale_exponent). */
int rtm_imaging_cuda_pack(rtm_imaging_extent_t extent, const float *d_field, rtm_layout_t layout,
                          float *d_dense);
int rtm_imaging_cuda_pack_half(rtm_imaging_extent_t extent, const float *d_field,
                               rtm_layout_t layout, uint16_t *d_dense, uint32_t *d_max_bits);
/* d_out[i] = the binary16 d_half[i] as float times 2^-e, i < cells, e from *d_max_bits as
 * the pack set it. */
int rtm_imaging_cuda_unpack_half(const uint16_t *d_half, float *d_out, size_t cells,
                                 const uint32_t *d_max_bits);
/* The interior of the padded device field d_field into the dense host array, one 2D copy a
 * plane (asynchronous with page-locked memory). */
int rtm_imaging_cuda_pack_to_host(rtm_imaging_extent_t extent, const float *d_field,
                                  rtm_layout_t layout, float *host_dense);
/* The codec (rtm_codec.h, solver/cuda/rtm_cuda_codec.h: the C reference's bytes
 * and floats bit for bit) at `rate` bits a value: the interior of d_field (laid out as
 * `layout`) into d_out, rtm_codec_bytes of the extent, 8-byte aligned, with *d_first_refused
 * (device memory) set to the first block holding a NaN or an infinity, RTM_CODEC_NO_BLOCK for
 * none; and d_in back into the dense d_dense. d_scratch: the coder's device memory,
 * rtm_codec_scratch_bytes of the extent. */
int rtm_imaging_cuda_compress(rtm_imaging_extent_t extent, const float *d_field,
                              rtm_layout_t layout, int rate, void *d_out, void *d_scratch,
                              uint64_t *d_first_refused);
int rtm_imaging_cuda_decompress(rtm_imaging_extent_t extent, const void *d_in, int rate,
                                void *d_scratch, float *d_dense);
/* d_image += s * d_receiver, d_illumination += s^2 with s the values of the blocks d_in
 * (rtm_cuda_codec_decompress_image: accumulate's floats, no volume of s). */
int rtm_imaging_cuda_decompress_accumulate(rtm_imaging_extent_t extent, const void *d_in, int rate,
                                           void *d_scratch, float *d_image, float *d_illumination,
                                           const float *d_receiver, rtm_layout_t receiver_layout);
/* sums[0] = sum of (d_dense - field)^2 and sums[1] = sum of field^2 over the interior of
 * d_field (laid out as `layout`; d_dense dense), in double, on the host when it returns
 * (it waits for the queued work): a decoded snapshot's error without a host copy. */
int rtm_imaging_cuda_difference(rtm_imaging_extent_t extent, const float *d_field,
                                rtm_layout_t layout, const float *d_dense, double sums[2]);
/* The same sums with the decoded values of the blocks d_in in place of d_dense
 * (rtm_cuda_codec_difference: no volume of them is written). */
int rtm_imaging_cuda_difference_blocks(rtm_imaging_extent_t extent, const float *d_field,
                                       rtm_layout_t layout, const void *d_in, int rate,
                                       void *d_scratch, double sums[2]);
/* `bytes` from src to dst, either side host or device (cudaMemcpyDefault), queued. */
int rtm_imaging_cuda_copy(void *dst, const void *src, size_t bytes);
/* `bytes` of device memory to the host, after the queued work: returns when they are there. */
int rtm_imaging_cuda_read(void *host, const void *d_src, size_t bytes);
int rtm_imaging_cuda_zero(void *d_ptr, size_t bytes);
/* Waits for the work queued on the legacy default stream (before memory is freed). */
int rtm_imaging_cuda_synchronize(void);
/* The subsurface-offset gathers' imaging steps on the device (offset_gathers.c's host loop,
 * bit for bit: one __fmaf_rn an element and step, S(x - h) R(x + h)): `count` steps (1 to
 * 4: each element read and written once for all, their fmafs in the arrays' order),
 * d_values dense [ncip][nh][nh][nz_local], the depths [z_begin, z_end) of the rank's planes,
 * elements whose x +- h or y +- h lie in the layer of `n` (the whole grid's x, y extents)
 * left alone. */
int rtm_imaging_cuda_gathers(const rtm_gather_plan_t *plan, const int n[2], long z_begin,
                             long z_end, long nz_local, float *d_values, int count,
                             const float *const d_source[], const rtm_layout_t source_layout[],
                             const float *const d_receiver[], const rtm_layout_t receiver_layout[]);

/* A copy of two device volumes to page-locked host memory that runs behind the work queued
 * after it (a shot's sums held while the next shot propagates): its own non-blocking stream
 * waits for the legacy stream's queued work, then copies; rtm_imaging_cuda_hold_order makes
 * the legacy stream's later work (which writes the volumes) wait for the copy, and
 * rtm_imaging_cuda_hold_wait makes the host wait for it. Made on the first start. */
typedef struct rtm_imaging_cuda_hold rtm_imaging_cuda_hold_t;
int rtm_imaging_cuda_hold_start(rtm_imaging_cuda_hold_t **hold, void *host_a, const void *d_a,
                                void *host_b, const void *d_b, size_t bytes);
int rtm_imaging_cuda_hold_order(rtm_imaging_cuda_hold_t *hold);
int rtm_imaging_cuda_hold_wait(rtm_imaging_cuda_hold_t *hold);
void rtm_imaging_cuda_hold_destroy(rtm_imaging_cuda_hold_t *hold);

#else

typedef struct rtm_imaging_cuda_hold rtm_imaging_cuda_hold_t;

/* Takes the arguments, so that a caller's variables count as used in a build without CUDA. */
static inline int rtm_imaging_cuda_unavailable(int unused, ...) {
  (void)unused;
  rtm_log_error("solver/rtm: device memory, but this build has no CUDA");
  return RTM_ERR_UNSUPPORTED;
}
#define rtm_imaging_cuda_use_device(...) rtm_imaging_cuda_unavailable(0, __VA_ARGS__)
#define rtm_imaging_cuda_accumulate(...) rtm_imaging_cuda_unavailable(0, __VA_ARGS__)
#define rtm_imaging_cuda_illuminate(...) rtm_imaging_cuda_unavailable(0, __VA_ARGS__)
#define rtm_imaging_cuda_pack(...) rtm_imaging_cuda_unavailable(0, __VA_ARGS__)
#define rtm_imaging_cuda_pack_half(...) rtm_imaging_cuda_unavailable(0, __VA_ARGS__)
#define rtm_imaging_cuda_unpack_half(...) rtm_imaging_cuda_unavailable(0, __VA_ARGS__)
#define rtm_imaging_cuda_pack_to_host(...) rtm_imaging_cuda_unavailable(0, __VA_ARGS__)
#define rtm_imaging_cuda_copy(...) rtm_imaging_cuda_unavailable(0, __VA_ARGS__)
#define rtm_imaging_cuda_difference(...) rtm_imaging_cuda_unavailable(0, __VA_ARGS__)
#define rtm_imaging_cuda_difference_blocks(...) rtm_imaging_cuda_unavailable(0, __VA_ARGS__)
#define rtm_imaging_cuda_compress(...) rtm_imaging_cuda_unavailable(0, __VA_ARGS__)
#define rtm_imaging_cuda_decompress(...) rtm_imaging_cuda_unavailable(0, __VA_ARGS__)
#define rtm_imaging_cuda_decompress_accumulate(...) rtm_imaging_cuda_unavailable(0, __VA_ARGS__)
#define rtm_imaging_cuda_read(...) rtm_imaging_cuda_unavailable(0, __VA_ARGS__)
#define rtm_imaging_cuda_zero(...) rtm_imaging_cuda_unavailable(0, __VA_ARGS__)
#define rtm_imaging_cuda_synchronize() rtm_imaging_cuda_unavailable(0)
#define rtm_imaging_cuda_gathers(...) rtm_imaging_cuda_unavailable(0, __VA_ARGS__)
#define rtm_imaging_cuda_hold_start(...) rtm_imaging_cuda_unavailable(0, __VA_ARGS__)
#define rtm_imaging_cuda_hold_order(...) rtm_imaging_cuda_unavailable(0, __VA_ARGS__)
#define rtm_imaging_cuda_hold_wait(...) rtm_imaging_cuda_unavailable(0, __VA_ARGS__)
#define rtm_imaging_cuda_hold_destroy(hold) ((void)(hold))

#endif

#ifdef __cplusplus
}
#endif

#endif
