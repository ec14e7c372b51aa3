// The baseline of bench_sparse_gpu's Reorder: a raw cub::DeviceRadixSort::SortPairs of the same
// key words (64-bit keys over their used bits, 32-bit positions), timed with CUDA events on the
// current stream of device 0.
#include <algorithm>
#include <cstdint>
#include <cub/cub.cuh>
#include <vector>

#include "bench/gpu/sparse_raw_sort.h"

namespace tensorkit::bench {

double RawSortPairsMs(const uint64_t* keys, int64_t n, int bits, int reps, cudaStream_t s) {
  uint64_t *k0 = nullptr, *k1 = nullptr;
  uint32_t *v0 = nullptr, *v1 = nullptr;
  cudaMallocAsync(&k0, 8 * n, s);
  cudaMallocAsync(&k1, 8 * n, s);
  cudaMallocAsync(&v0, 4 * n, s);
  cudaMallocAsync(&v1, 4 * n, s);
  cub::DoubleBuffer<uint64_t> kb(k0, k1);
  cub::DoubleBuffer<uint32_t> vb(v0, v1);
  size_t temp = 0;
  cub::DeviceRadixSort::SortPairs(nullptr, temp, kb, vb, n, 0, bits, s);
  void* scratch = nullptr;
  cudaMallocAsync(&scratch, temp, s);
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  std::vector<float> ms;
  for (int r = 0; r <= reps; ++r) {  // run 0 warms up
    cudaMemcpyAsync(k0, keys, 8 * n, cudaMemcpyDeviceToDevice, s);
    kb = cub::DoubleBuffer<uint64_t>(k0, k1);
    vb = cub::DoubleBuffer<uint32_t>(v0, v1);
    cudaEventRecord(start, s);
    cub::DeviceRadixSort::SortPairs(scratch, temp, kb, vb, n, 0, bits, s);
    cudaEventRecord(stop, s);
    cudaEventSynchronize(stop);
    float t = 0;
    cudaEventElapsedTime(&t, start, stop);
    if (r > 0) ms.push_back(t);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  for (void* p : {static_cast<void*>(k0), static_cast<void*>(k1), static_cast<void*>(v0),
                  static_cast<void*>(v1), scratch}) {
    cudaFreeAsync(p, s);
  }
  cudaStreamSynchronize(s);
  std::sort(ms.begin(), ms.end());
  return ms.empty() ? 0.0 : ms[ms.size() / 2];
}

}  // namespace tensorkit::bench
