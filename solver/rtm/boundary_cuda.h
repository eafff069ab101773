/* boundary_cuda.h - private to solver/rtm: the device side of the store of rtm.reconstruction =
 * boundary (boundary_cuda.cu); the shell it moves: rtm_boundary_shell.h.
 *
 * The device side: pack (field -> shell) and unpack (shell -> field) kernels on the legacy
 * default stream, as the imaging's (imaging_cuda.h), and for a store in host memory
 * (memory.imaging = pinned or host) the copies between a ring of device buffers and the host
 * slots on a stream of their own, so that they overlap the steps. Their order with the
 * legacy stream goes through two events a buffer: the legacy stream acquires a buffer (waits
 * for the last copy in or out of it), packs into it or unpacks from it and releases it
 * (records that it is done); a copy waits for the last release of its buffer and records
 * its own end. Without CUDA in the build, each device call is a stub that says so. */
#ifndef BOUNDARY_CUDA_H
#define BOUNDARY_CUDA_H

#include <stddef.h>

#include "imaging_cuda.h"
#include "rtm_boundary_shell.h"
#include "rtm_imaging.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The copies of a store in host memory: their stream and a buffer's two events. */
typedef struct boundary_cuda_copies boundary_cuda_copies_t;

#ifdef RTM3D_HAVE_CUDA

/* d_shell[i] = d_field[element i] (pack), or d_field[element i] = d_shell[i] (unpack), on the
 * legacy default stream. */
int boundary_cuda_pack(const rtm_boundary_shell_t *shell, rtm_layout_t layout, const float *d_field,
                       float *d_shell);
int boundary_cuda_unpack(const rtm_boundary_shell_t *shell, rtm_layout_t layout,
                         const float *d_shell, float *d_field);
/* A copy stream (non-blocking: it does not wait for the steps) and the events of `buffers`
 * buffers, on the current device. */
int boundary_cuda_copies_create(int buffers, boundary_cuda_copies_t **copies);
/* Waits for the copies queued, then frees them (NULL: nothing). */
void boundary_cuda_copies_destroy(boundary_cuda_copies_t *copies);
/* The legacy stream waits for the last copy in or out of `buffer`. */
int boundary_cuda_acquire(boundary_cuda_copies_t *copies, int buffer);
/* The legacy stream's work on `buffer` queued so far is all a copy of it waits for. */
int boundary_cuda_release(boundary_cuda_copies_t *copies, int buffer);
/* `bytes` from src to dst (host or device), queued on the copy stream after the last release
 * of `buffer`. */
int boundary_cuda_copy(boundary_cuda_copies_t *copies, int buffer, void *dst, const void *src,
                       size_t bytes);

#else

#define boundary_cuda_pack(...) rtm_imaging_cuda_unavailable(0, __VA_ARGS__)
#define boundary_cuda_unpack(...) rtm_imaging_cuda_unavailable(0, __VA_ARGS__)
#define boundary_cuda_copies_create(...) rtm_imaging_cuda_unavailable(0, __VA_ARGS__)
#define boundary_cuda_copies_destroy(copies) ((void)(copies))
#define boundary_cuda_acquire(...) rtm_imaging_cuda_unavailable(0, __VA_ARGS__)
#define boundary_cuda_release(...) rtm_imaging_cuda_unavailable(0, __VA_ARGS__)
#define boundary_cuda_copy(...) rtm_imaging_cuda_unavailable(0, __VA_ARGS__)

#endif

#ifdef __cplusplus
}
#endif

#endif
