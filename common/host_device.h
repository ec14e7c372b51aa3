// tensorkit/common/host_device.h: marking functions that run on the host and on a CUDA device.
//
// Glossary
//   TK_HOST_DEVICE  __host__ __device__ under nvcc, nothing for a host compiler: the per-element
//                   functions (conversions, 16-bit floats, the elementwise functors) are written
//                   once and compiled for both the CPU and the CUDA executor.
//   BlocksFor       the launch arithmetic of a grid-stride loop, tested on the host.
#ifndef TENSORKIT_COMMON_HOST_DEVICE_H_
#define TENSORKIT_COMMON_HOST_DEVICE_H_

#if defined(__CUDACC__)
#define TK_HOST_DEVICE __host__ __device__
#else
#define TK_HOST_DEVICE
#endif

#include <cstdint>

namespace tensorkit {

// Blocks of `threads` threads for a grid-stride loop over n items: enough for one item per
// thread, at most `max_blocks`, at least 1.
TK_HOST_DEVICE inline int64_t BlocksFor(int64_t n, int threads, int64_t max_blocks) {
  const int64_t blocks = n / threads + (n % threads != 0);
  return blocks < 1 ? 1 : (blocks > max_blocks ? max_blocks : blocks);
}

}  // namespace tensorkit

#endif  // TENSORKIT_COMMON_HOST_DEVICE_H_
