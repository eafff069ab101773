/* stream_mix.cu - what the device's DRAM gives a stream of the iso step's mix of traffic,
 * beside the copy the bench measures (issue 34, item 5: is the iso kernel's 75% of copy on an
 * H200 a property of its three reads and one write?). Arrays of N floats (default 512^3, the
 * bench volume), each kernel a float4 a thread over the whole arrays, the median of REPS
 * launches; GB/s counts the bytes each kernel must move, and "iso MCells/s" is that rate
 * divided by the iso step's 16 bytes a cell. Standalone: run/experiments/stream_mix.sh. */
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call)                                                                      \
  do {                                                                                   \
    cudaError_t e_ = (call);                                                             \
    if (e_ != cudaSuccess) {                                                             \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));  \
      std::exit(1);                                                                      \
    }                                                                                    \
  } while (0)

__global__ void copy1(const float4 *__restrict__ a, float4 *__restrict__ b, size_t n) {
  const size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) b[i] = a[i];
}
__global__ void read1(const float4 *__restrict__ a, float *sink, size_t n) {
  const size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float4 v = a[i];
  if (v.x == 12345.f) *sink = v.y; /* never true: keeps the load */
}
/* The iso step's streams without the stencil: p and v read, pp read and written in place. */
__global__ void iso_mix(const float4 *__restrict__ p, float4 *pp, const float4 *__restrict__ v,
                        size_t n) {
  const size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float4 a = p[i], b = pp[i], c = v[i];
  pp[i] = make_float4(2.f * a.x - b.x + c.x * a.x, 2.f * a.y - b.y + c.y * a.y,
                      2.f * a.z - b.z + c.z * a.z, 2.f * a.w - b.w + c.w * a.w);
}
/* The same three reads, the write to a fourth array. */
__global__ void iso_mix_out(const float4 *__restrict__ p, const float4 *__restrict__ pp,
                            const float4 *__restrict__ v, float4 *__restrict__ out, size_t n) {
  const size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float4 a = p[i], b = pp[i], c = v[i];
  out[i] = make_float4(a.x + b.x + c.x, a.y + b.y + c.y, a.z + b.z + c.z, a.w + b.w + c.w);
}

template <typename Launch> static float median_ms(int reps, Launch launch) {
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  launch(); /* warm */
  std::vector<float> ms(reps);
  for (int r = 0; r < reps; ++r) {
    CHECK(cudaEventRecord(start));
    launch();
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    CHECK(cudaEventElapsedTime(&ms[r], start, stop));
  }
  CHECK(cudaGetLastError());
  std::sort(ms.begin(), ms.end());
  return ms[reps / 2];
}

int main(int argc, char **argv) {
  const size_t side = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 512;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 11;
  const size_t n = side * side * side, n4 = n / 4, bytes = n * sizeof(float);
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  float *buf[4];
  for (auto &b : buf) {
    CHECK(cudaMalloc(&b, bytes));
    CHECK(cudaMemset(b, 0, bytes));
  }
  float *sink;
  CHECK(cudaMalloc(&sink, sizeof(float)));
  const int threads = 256;
  const unsigned blocks = (unsigned)((n4 + threads - 1) / threads);
  auto f4 = [&](int k) { return reinterpret_cast<float4 *>(buf[k]); };
  struct Row {
    const char *name;
    double moved;
    float ms;
  };
  std::vector<Row> rows;
  rows.push_back({"cudaMemcpy (the bench's copy)", 2.0 * bytes, median_ms(reps, [&] {
                    CHECK(cudaMemcpyAsync(buf[1], buf[0], bytes, cudaMemcpyDeviceToDevice));
                  })});
  rows.push_back({"copy kernel: 1 read, 1 write", 2.0 * bytes,
                  median_ms(reps, [&] { copy1<<<blocks, threads>>>(f4(0), f4(1), n4); })});
  rows.push_back({"read only", 1.0 * bytes,
                  median_ms(reps, [&] { read1<<<blocks, threads>>>(f4(0), sink, n4); })});
  rows.push_back({"iso's mix: 3 reads, 1 in place", 4.0 * bytes, median_ms(reps, [&] {
                    iso_mix<<<blocks, threads>>>(f4(0), f4(1), f4(2), n4);
                  })});
  rows.push_back({"3 reads, 1 write to a 4th array", 4.0 * bytes, median_ms(reps, [&] {
                    iso_mix_out<<<blocks, threads>>>(f4(0), f4(1), f4(2), f4(3), n4);
                  })});
  const double copy_gbs = rows[0].moved / (rows[0].ms * 1e-3) / 1e9;
  std::printf("%s, %zu^3 floats (%.2f GB an array), median of %d\n", prop.name, side,
              bytes / 1e9, reps);
  std::printf("%-36s %10s %10s %8s %14s\n", "kernel", "ms", "GB/s", "of copy", "iso MCells/s");
  for (const Row &r : rows) {
    const double gbs = r.moved / (r.ms * 1e-3) / 1e9;
    std::printf("%-36s %10.3f %10.1f %7.1f%% %14.0f\n", r.name, r.ms, gbs, 100.0 * gbs / copy_gbs,
                gbs * 1e9 / 16.0 / 1e6);
  }
  for (auto &b : buf)
    CHECK(cudaFree(b));
  CHECK(cudaFree(sink));
  return 0;
}
