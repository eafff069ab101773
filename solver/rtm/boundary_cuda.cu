/* boundary_cuda.cu - the device side of rtm.reconstruction = boundary (boundary_cuda.h): the
 * shell's pack and unpack kernels on the legacy default stream, and the copies of a store in
 * host memory on a stream of their own, ordered with the legacy stream by events. */
#include <cuda_runtime.h>
#include <stdlib.h>

#include "boundary_cuda.h"
#include "rtm_cuda_check.h"

namespace {

constexpr int SHELL_THREADS = 256;
constexpr long long MAX_SHELL_BLOCKS = 1 << 16;

} // namespace

struct boundary_cuda_copies {
  cudaStream_t stream;
  int buffers;
  cudaEvent_t *released; /* [buffers]: recorded on the legacy stream */
  cudaEvent_t *copied;   /* [buffers]: recorded on the copy stream */
};

/* to_shell: shell[i] = field[element i]; else field[element i] = shell[i]. One level of one
 * field. Thread mapping: one shell cell per thread, a grid-stride loop over the cells (in
 * index order, so that a warp reads and writes mostly consecutive x). */
template <bool to_shell>
static __global__ void shell_kernel(rtm_boundary_shell_t shell, rtm_layout_t layout,
                                    float *__restrict__ field, float *__restrict__ compact) {
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < shell.cells;
       i += (long long)gridDim.x * blockDim.x) {
    const long long element = rtm_boundary_shell_element(&shell, layout, i);
    if (to_shell)
      compact[i] = field[element];
    else
      field[element] = compact[i];
  }
}

template <bool to_shell>
static int launch_shell(const rtm_boundary_shell_t *shell, rtm_layout_t layout, float *d_field,
                        float *d_shell, const char *name) {
  int status = RTM_OK;
  if (shell->cells <= 0) return RTM_OK;
  const long long blocks = (shell->cells + SHELL_THREADS - 1) / SHELL_THREADS;
  shell_kernel<to_shell><<<(unsigned)(blocks < MAX_SHELL_BLOCKS ? blocks : MAX_SHELL_BLOCKS),
                           SHELL_THREADS, 0, cudaStreamLegacy>>>(*shell, layout, d_field, d_shell);
  RTM_CUDA_TRY_LAUNCH(name);
fail:
  return status;
}

extern "C" int boundary_cuda_pack(const rtm_boundary_shell_t *shell, rtm_layout_t layout,
                                  const float *d_field, float *d_shell) {
  /* the kernel only reads the field when it packs */
  return launch_shell<true>(shell, layout, const_cast<float *>(d_field), d_shell,
                            "shell_kernel<pack>");
}

extern "C" int boundary_cuda_unpack(const rtm_boundary_shell_t *shell, rtm_layout_t layout,
                                    const float *d_shell, float *d_field) {
  return launch_shell<false>(shell, layout, d_field, const_cast<float *>(d_shell),
                             "shell_kernel<unpack>");
}

extern "C" void boundary_cuda_copies_destroy(boundary_cuda_copies_t *copies) {
  if (!copies) return;
  if (copies->stream) (void)cudaStreamSynchronize(copies->stream);
  for (int b = 0; b < copies->buffers; ++b) {
    if (copies->released && copies->released[b]) (void)cudaEventDestroy(copies->released[b]);
    if (copies->copied && copies->copied[b]) (void)cudaEventDestroy(copies->copied[b]);
  }
  if (copies->stream) (void)cudaStreamDestroy(copies->stream);
  free(copies->released);
  free(copies->copied);
  free(copies);
}

extern "C" int boundary_cuda_copies_create(int buffers, boundary_cuda_copies_t **copies) {
  int status = RTM_OK;
  boundary_cuda_copies_t *created =
      static_cast<boundary_cuda_copies_t *>(calloc(1, sizeof *created));
  *copies = NULL;
  if (!created) RTM_FAIL(RTM_ERR_NOMEM, "out of host memory for the boundary store's copies");
  created->released = static_cast<cudaEvent_t *>(calloc((size_t)buffers, sizeof(cudaEvent_t)));
  created->copied = static_cast<cudaEvent_t *>(calloc((size_t)buffers, sizeof(cudaEvent_t)));
  if (!created->released || !created->copied)
    RTM_FAIL(RTM_ERR_NOMEM, "out of host memory for the boundary store's events");
  created->buffers = buffers;
  /* non-blocking: a copy must not wait for the steps queued on the blocking streams */
  RTM_CUDA_TRY(cudaStreamCreateWithFlags(&created->stream, cudaStreamNonBlocking));
  for (int b = 0; b < buffers; ++b) {
    RTM_CUDA_TRY(cudaEventCreateWithFlags(&created->released[b], cudaEventDisableTiming));
    RTM_CUDA_TRY(cudaEventCreateWithFlags(&created->copied[b], cudaEventDisableTiming));
  }
  *copies = created;
  return RTM_OK;
fail:
  boundary_cuda_copies_destroy(created);
  return status;
}

/* An event never recorded is complete (cudaStreamWaitEvent), so a buffer's first use waits
 * for nothing. */
extern "C" int boundary_cuda_acquire(boundary_cuda_copies_t *copies, int buffer) {
  int status = RTM_OK;
  RTM_CUDA_TRY(cudaStreamWaitEvent(cudaStreamLegacy, copies->copied[buffer], 0));
fail:
  return status;
}

extern "C" int boundary_cuda_release(boundary_cuda_copies_t *copies, int buffer) {
  int status = RTM_OK;
  RTM_CUDA_TRY(cudaEventRecord(copies->released[buffer], cudaStreamLegacy));
fail:
  return status;
}

extern "C" int boundary_cuda_copy(boundary_cuda_copies_t *copies, int buffer, void *dst,
                                  const void *src, size_t bytes) {
  int status = RTM_OK;
  RTM_CUDA_TRY(cudaStreamWaitEvent(copies->stream, copies->released[buffer], 0));
  RTM_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, copies->stream));
  RTM_CUDA_TRY(cudaEventRecord(copies->copied[buffer], copies->stream));
fail:
  return status;
}
