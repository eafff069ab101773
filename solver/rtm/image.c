/* The image and the source illumination (rtm_imaging.h): two dense interior volumes where the
 * fields are, the host loop below or imaging_cuda.cu's kernel adding one imaging step to
 * them with the same fused multiply-adds. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "imaging_cuda.h"
#include "imaging_impl.h"
#include "rtm_imaging.h"
#include "rtm_status.h"

struct rtm_image {
  rtm_grid_t grid;
  int device; /* -1: host memory */
  rtm_allocation_t image, illumination;
  rtm_device_hold_t deferred; /* a device's copy to the host behind later work, its clear */
  int illumination_deferred; /* the accumulations add the image alone (rtm_image_illuminate) */
  int box[3][2];             /* rtm_image_accumulate's cells, [from, to) along x, y and local z */
};

void rtm_image_keep_interior(rtm_image_t *image, int width) {
  const rtm_grid_t *g = &image->grid;
  const long low[3] = {width / 4 * 4, width, width - g->z_offset};
  const long high[3] = {(g->n[0] - width + 3) / 4 * 4, g->n[1] - width,
                        g->n[2] - width - g->z_offset};
  const long size[3] = {g->n[0], g->n[1], g->nz_local};
  for (int a = 0; a < 3; ++a) {
    const long from = width > 0 && low[a] > 0 ? low[a] : 0;
    const long to = width > 0 && high[a] < size[a] ? high[a] : size[a];
    image->box[a][0] = (int)(from < size[a] ? from : size[a]);
    image->box[a][1] = (int)(to > image->box[a][0] ? to : image->box[a][0]);
  }
}

/* A layout's origin moved to the box's first cell. */
static rtm_layout_t at_box(rtm_layout_t layout, const int box[3][2]) {
  layout.origin += box[0][0] + box[1][0] * layout.stride_y + box[2][0] * layout.stride_z;
  return layout;
}

/* imaging_impl.h: the image's and the gathers' deferred copies and clears. */
int rtm_device_hold_settle(rtm_device_hold_t *deferred, rtm_allocation_t *const volumes[],
                           int count) {
  int status = RTM_OK;
  if (deferred->hold_pending) {
    deferred->hold_pending = 0;
    RTM_TRY(rtm_imaging_cuda_hold_order(deferred->hold));
  }
  if (deferred->clear_pending) {
    deferred->clear_pending = 0;
    for (int k = 0; k < count; ++k)
      RTM_TRY(rtm_imaging_cuda_zero(volumes[k]->ptr, volumes[k]->bytes));
  }
fail:
  return status;
}

/* Before work that uses the volumes on the device: it waits for a hold's copy, then zeroes
 * them when a clear is pending (rtm_image_clear: the zeroing waits for the copy, so it is
 * done where the volumes are next used, not on the way of the steps between). */
static int order_after_hold(rtm_image_t *image) {
  rtm_allocation_t *const volumes[2] = {&image->image, &image->illumination};
  return rtm_device_hold_settle(&image->deferred, volumes, 2);
}

rtm_layout_t rtm_layout_padded(const rtm_grid_t *grid) {
  rtm_layout_t layout = {(long long)grid->origin_index, (long long)grid->stride_y,
                         (long long)grid->stride_z};
  return layout;
}

rtm_layout_t rtm_layout_dense(const rtm_grid_t *grid) {
  rtm_layout_t layout = {0, grid->n[0], (long long)grid->n[0] * grid->n[1]};
  return layout;
}

/* A cpu backend's image is in host memory and a cuda backend's in device memory, where each
 * accumulates it: refuse the strategies that would put it on the other side. */
static int check_image_strategy(const char *strategy, int device) {
  if (device < 0 && strcmp(strategy, "host") != 0) {
    rtm_log_error("memory.imaging (or memory.strategy) = %s: the cpu backend's fields are in "
                  "host memory, and so is its image: use host",
                  strategy);
    return RTM_ERR_CONFIG;
  }
  if (device >= 0 && rtm_imaging_host_strategy(strategy)) {
    rtm_log_error("memory.imaging (or memory.strategy) = %s: the cuda backend accumulates its "
                  "image where its fields are, in device memory (device, vmm, vmm-compressed, "
                  "managed)",
                  strategy);
    return RTM_ERR_CONFIG;
  }
  return RTM_OK;
}

int rtm_image_create(const rtm_grid_t *grid, int device, const char *strategy,
                     rtm_mem_ledger_t *ledger, rtm_image_t **image) {
  int status = RTM_OK;
  rtm_image_t *created = NULL;
  *image = NULL;
  strategy = rtm_imaging_strategy(strategy, device);
  RTM_TRY(check_image_strategy(strategy, device));
  created = calloc(1, sizeof *created);
  if (!created) RTM_FAIL(RTM_ERR_NOMEM, "out of host memory for the image's state");
  created->grid = *grid;
  created->device = device;
  rtm_image_keep_interior(created, 0);
  const size_t bytes = rtm_grid_interior_cells(grid) * sizeof(float);
  RTM_TRY(rtm_imaging_alloc(strategy, bytes, "image", device, ledger, &created->image));
  RTM_TRY(
      rtm_imaging_alloc(strategy, bytes, "illumination", device, ledger, &created->illumination));
  *image = created;
  return RTM_OK;
fail:
  if (status == RTM_ERR_NOMEM)
    rtm_log_error("the image and the illumination (2 x %.3f GB, grid %d x %d x %d local) do not "
                  "fit in memory.imaging = %s",
                  rtm_grid_interior_cells(grid) * sizeof(float) / 1e9, grid->n[0], grid->n[1],
                  grid->nz_local, strategy);
  rtm_image_destroy(created);
  return status;
}

/* One row of cells: image first, then illumination, one fma each; the image alone where
 * illumination is NULL. */
IMAGING_FMA_CLONES static void accumulate_row(float *image, float *illumination,
                                              const float *source, const float *receiver, long nx) {
  if (!illumination) {
    IMAGING_OMP_SIMD
    for (long ix = 0; ix < nx; ++ix)
      image[ix] = fmaf(source[ix], receiver[ix], image[ix]);
    return;
  }
  IMAGING_OMP_SIMD
  for (long ix = 0; ix < nx; ++ix) {
    const float s = source[ix];
    image[ix] = fmaf(s, receiver[ix], image[ix]);
    illumination[ix] = fmaf(s, s, illumination[ix]);
  }
}

/* Over the box's cells (rtm_image_keep_interior), every layout moved to its first cell. */
static void accumulate_host(rtm_image_t *image, const float *source, rtm_layout_t source_layout,
                            const float *receiver, rtm_layout_t receiver_layout) {
  const long nx = image->box[0][1] - image->box[0][0], ny = image->box[1][1] - image->box[1][0],
             nz = image->box[2][1] - image->box[2][0];
  const rtm_layout_t dense = at_box(rtm_layout_dense(&image->grid), image->box);
  source_layout = at_box(source_layout, image->box);
  receiver_layout = at_box(receiver_layout, image->box);
  float *image_dense = image->image.ptr;
  float *illumination_dense = image->illumination_deferred ? NULL : image->illumination.ptr;
  IMAGING_OMP_ROWS
  for (long iz = 0; iz < nz; ++iz)
    for (long iy = 0; iy < ny; ++iy) {
      const long long s =
          source_layout.origin + iz * source_layout.stride_z + iy * source_layout.stride_y;
      const long long r =
          receiver_layout.origin + iz * receiver_layout.stride_z + iy * receiver_layout.stride_y;
      const long long d = dense.origin + iz * dense.stride_z + iy * dense.stride_y;
      accumulate_row(image_dense + d, illumination_dense ? illumination_dense + d : NULL,
                     source + s, receiver + r, nx);
    }
}

int rtm_image_accumulate(rtm_image_t *image, const float *source, rtm_layout_t source_layout,
                         const float *receiver, rtm_layout_t receiver_layout) {
  int status = RTM_OK;
  if (!image || !source || !receiver)
    RTM_FAIL(RTM_ERR_INTERNAL, "rtm_image_accumulate: an image, a source and a receiver field "
                               "are required");
  if (image->device < 0) {
    accumulate_host(image, source, source_layout, receiver, receiver_layout);
    return RTM_OK;
  }
  RTM_TRY(rtm_imaging_cuda_use_device(image->device));
  RTM_TRY(order_after_hold(image));
  const rtm_imaging_extent_t box = {image->box[0][1] - image->box[0][0],
                                    image->box[1][1] - image->box[1][0],
                                    image->box[2][1] - image->box[2][0]};
  RTM_TRY(rtm_imaging_cuda_accumulate(
      box, image->image.ptr, image->illumination_deferred ? NULL : image->illumination.ptr,
      at_box(rtm_layout_dense(&image->grid), image->box), source, at_box(source_layout, image->box),
      receiver, at_box(receiver_layout, image->box)));
  return RTM_OK;
fail:
  return status;
}

void rtm_image_defer_illumination(rtm_image_t *image, int deferred) {
  image->illumination_deferred = deferred;
}

/* Cells a host thread takes at a time: its piece of the illumination stays in its cache
 * while every slot's piece streams past it. */
enum { ILLUMINATE_PIECE = 4096 };

/* illumination[i] += s_k[i]^2, k = count - 1 down to 0, over one piece of cells. */
IMAGING_FMA_CLONES static void illuminate_piece(float *illumination, const float *first,
                                                size_t stride, int count, size_t cells) {
  for (int k = count - 1; k >= 0; --k) {
    const float *s = first + (size_t)k * stride;
    IMAGING_OMP_SIMD
    for (size_t i = 0; i < cells; ++i)
      illumination[i] = fmaf(s[i], s[i], illumination[i]);
  }
}

int rtm_image_illuminate(rtm_image_t *image, const float *first, size_t stride, int count) {
  int status = RTM_OK;
  const size_t cells = image->image.bytes / sizeof(float);
  if (count <= 0) return RTM_OK;
  if (!first || stride < cells)
    RTM_FAIL(RTM_ERR_INTERNAL, "rtm_image_illuminate: %d volumes of %zu cells %zu apart", count,
             cells, stride);
  if (image->device >= 0) {
    RTM_TRY(rtm_imaging_cuda_use_device(image->device));
    RTM_TRY(order_after_hold(image));
    RTM_TRY(rtm_imaging_cuda_illuminate(cells, image->illumination.ptr, first, stride, count));
    return RTM_OK;
  }
  float *illumination = image->illumination.ptr;
  const long pieces = (long)((cells + ILLUMINATE_PIECE - 1) / ILLUMINATE_PIECE);
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
  for (long p = 0; p < pieces; ++p) {
    const size_t at = (size_t)p * ILLUMINATE_PIECE;
    const size_t piece = cells - at < ILLUMINATE_PIECE ? cells - at : ILLUMINATE_PIECE;
    illuminate_piece(illumination + at, first + at, stride, count, piece);
  }
fail:
  return status;
}

int rtm_image_accumulate_blocks(rtm_image_t *image, const void *blocks, int rate, void *scratch,
                                const float *receiver, rtm_layout_t receiver_layout) {
  int status = RTM_OK;
  if (!image || !blocks || !receiver || image->device < 0 || image->illumination_deferred)
    RTM_FAIL(RTM_ERR_INTERNAL, "rtm_image_accumulate_blocks: a device image that adds its "
                               "illumination, the blocks and a receiver field are required");
  RTM_TRY(rtm_imaging_cuda_use_device(image->device));
  RTM_TRY(order_after_hold(image));
  RTM_TRY(rtm_imaging_cuda_decompress_accumulate(rtm_imaging_extent(&image->grid), blocks, rate,
                                                 scratch, image->image.ptr, image->illumination.ptr,
                                                 receiver, receiver_layout));
fail:
  return status;
}

int rtm_image_step_request(rtm_image_t *image, const float *source, rtm_layout_t source_layout,
                           rtm_step_image_t *request) {
  int status = RTM_OK;
  if (image->device < 0) return RTM_ERR_UNSUPPORTED;
  RTM_TRY(rtm_imaging_cuda_use_device(image->device));
  RTM_TRY(order_after_hold(image)); /* on the legacy stream, which the next step waits for */
  *request = (rtm_step_image_t){.source = source,
                                .source_origin = source_layout.origin,
                                .source_stride_y = source_layout.stride_y,
                                .source_stride_z = source_layout.stride_z,
                                .image = image->image.ptr,
                                .illumination =
                                    image->illumination_deferred ? NULL : image->illumination.ptr};
  memcpy(request->box, image->box, sizeof request->box);
fail:
  return status;
}

int rtm_image_read(rtm_image_t *image, float *image_dense, float *illumination_dense) {
  int status = RTM_OK;
  const size_t bytes = image->image.bytes;
  if (image->device < 0) {
    if (image_dense) memcpy(image_dense, image->image.ptr, bytes);
    if (illumination_dense) memcpy(illumination_dense, image->illumination.ptr, bytes);
    return RTM_OK;
  }
  RTM_TRY(rtm_imaging_cuda_use_device(image->device));
  /* a hold's copy may still be landing in the same host arrays, from its own stream */
  if (image->deferred.hold) RTM_TRY(rtm_imaging_cuda_hold_wait(image->deferred.hold));
  RTM_TRY(order_after_hold(image)); /* a pending clear */
  if (image_dense) RTM_TRY(rtm_imaging_cuda_read(image_dense, image->image.ptr, bytes));
  if (illumination_dense)
    RTM_TRY(rtm_imaging_cuda_read(illumination_dense, image->illumination.ptr, bytes));
  return RTM_OK;
fail:
  return status;
}

int rtm_image_hold(rtm_image_t *image, float *image_dense, float *illumination_dense) {
  int status = RTM_OK;
  if (image->device < 0) return rtm_image_read(image, image_dense, illumination_dense);
  RTM_TRY(rtm_imaging_cuda_use_device(image->device));
  RTM_TRY(order_after_hold(image)); /* a pending clear; the last hold's copy, on its stream */
  RTM_TRY(rtm_imaging_cuda_hold_start(&image->deferred.hold, image_dense, image->image.ptr,
                                      illumination_dense, image->illumination.ptr,
                                      image->image.bytes));
  image->deferred.hold_pending = 1;
fail:
  return status;
}

int rtm_image_hold_wait(rtm_image_t *image) {
  int status = RTM_OK;
  if (image->device < 0 || !image->deferred.hold) return RTM_OK;
  RTM_TRY(rtm_imaging_cuda_use_device(image->device));
  RTM_TRY(rtm_imaging_cuda_hold_wait(image->deferred.hold));
fail:
  return status;
}

int rtm_image_clear(rtm_image_t *image) {
  if (image->device >= 0) {
    image->deferred.clear_pending =
        1; /* zeroed where the volumes are next used (order_after_hold) */
    return RTM_OK;
  }
  memset(image->image.ptr, 0, image->image.bytes);
  memset(image->illumination.ptr, 0, image->illumination.bytes);
  return RTM_OK;
}

void rtm_image_destroy(rtm_image_t *image) {
  if (!image) return;
  /* Queued accumulations still read and write the volumes: let them finish first. */
  if (image->device >= 0 && (image->image.ptr || image->illumination.ptr) &&
      rtm_imaging_cuda_use_device(image->device) == RTM_OK)
    (void)rtm_imaging_cuda_synchronize();
  if (image->device >= 0 && image->deferred.hold &&
      rtm_imaging_cuda_use_device(image->device) == RTM_OK)
    rtm_imaging_cuda_hold_destroy(image->deferred.hold);
  rtm_mem_free(&image->illumination);
  rtm_mem_free(&image->image);
  free(image);
}
