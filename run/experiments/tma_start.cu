// TMA experiment: does a tile-mode box load fault when its start in x is not 16-byte
// aligned in global memory? One load per case, outcome printed per case (separate processes).
#include <cuda.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <cstdint>

__global__ void load(const __grid_constant__ CUtensorMap map, int x, int y, unsigned bytes,
                     unsigned *out) {
  __shared__ __align__(128) unsigned char tile[4096];
  __shared__ __align__(8) uint64_t bar;
  if (threadIdx.x == 0) {
    unsigned b = (unsigned)__cvta_generic_to_shared(&bar);
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(b));
    asm volatile("fence.mbarrier_init.release.cluster;");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b), "r"(bytes));
    unsigned d = (unsigned)__cvta_generic_to_shared(tile);
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3, %4}], [%5];" ::"r"(d),
                 "l"(reinterpret_cast<uint64_t>(&map)), "r"(x), "r"(y), "r"(0), "r"(b) : "memory");
    unsigned done = 0;
    while (!done)
      asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;"
                   " selp.u32 %0, 1, 0, p; }" : "=r"(done) : "r"(b) : "memory");
    out[0] = reinterpret_cast<unsigned *>(tile)[0];
  }
}

int main(int argc, char **argv) {
  const int half = atoi(argv[1]), x = atoi(argv[2]), box_x = atoi(argv[3]);
  const size_t e = half ? 2 : 4, nx = 1024, ny = 64;
  void *buf;
  cudaMalloc(&buf, nx * ny * e);
  cudaMemset(buf, 0x3c, nx * ny * e);
  unsigned *out;
  cudaMalloc(&out, 4);
  CUtensorMap map;
  cuuint64_t dims[3] = {nx, ny, 1}, strides[2] = {nx * e, nx * ny * e};
  cuuint32_t box[3] = {(cuuint32_t)box_x, 4, 1}, es[3] = {1, 1, 1};
  CUresult r = cuTensorMapEncodeTiled(&map, half ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
                                      3, buf, dims, strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                      CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  load<<<1, 32>>>(map, x, 4, (unsigned)(box_x * 4 * e), out);
  cudaError_t err = cudaDeviceSynchronize();
  printf("%s box %3d start x %3d (byte %4zu, mod 16 = %2zu): encode %d, kernel %s\n",
         half ? "fp16" : "fp32", box_x, x, x * e, (x * e) % 16, (int)r, cudaGetErrorString(err));
  return err != cudaSuccess;
}
