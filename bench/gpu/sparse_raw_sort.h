// The raw radix sort that bench_gpu compares Reorder with (sparse_raw_sort.cu).
#ifndef TENSORKIT_BENCH_GPU_SPARSE_RAW_SORT_H_
#define TENSORKIT_BENCH_GPU_SPARSE_RAW_SORT_H_

#include <cuda_runtime.h>

#include <cstdint>

namespace tensorkit::bench {

// Median milliseconds over `reps` runs of cub::DeviceRadixSort::SortPairs of n device keys
// (bits [0, bits)) carrying 32-bit positions, on stream `s`; the keys are copied, not sorted.
double RawSortPairsMs(const uint64_t* keys, int64_t n, int bits, int reps, cudaStream_t s);

}  // namespace tensorkit::bench

#endif  // TENSORKIT_BENCH_GPU_SPARSE_RAW_SORT_H_
