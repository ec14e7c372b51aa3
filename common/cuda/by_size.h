// Internal, for the .cu files and the CPU's tile copies (dense/transpose.cc), plain C++: values
// moved as raw bytes of their width, so that kernels which only move elements are compiled once
// per width rather than once per dtype.
#ifndef TENSORKIT_COMMON_CUDA_BY_SIZE_H_
#define TENSORKIT_COMMON_CUDA_BY_SIZE_H_

#include <cstdint>

#include "tensorkit/common/error.h"

namespace tensorkit::cuda_backend {

// Calls f.template operator()<U>() with U the unsigned integer of `bytes` bytes (1, 2, 4, 8).
template <typename F>
void BySize(int64_t bytes, F&& f) {
  switch (bytes) {
    case 1:
      return f.template operator()<uint8_t>();
    case 2:
      return f.template operator()<uint16_t>();
    case 4:
      return f.template operator()<uint32_t>();
    case 8:
      return f.template operator()<uint64_t>();
  }
  TK_INTERNAL_CHECK(false);
}

}  // namespace tensorkit::cuda_backend

#endif  // TENSORKIT_COMMON_CUDA_BY_SIZE_H_
