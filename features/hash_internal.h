// tensorkit/features/hash_internal.h: the byte view of hashable values shared by hashing,
// crossing and vocabulary lookups (not a public header).
#ifndef TENSORKIT_FEATURES_HASH_INTERNAL_H_
#define TENSORKIT_FEATURES_HASH_INTERNAL_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "tensorkit/common/parallel.h"
#include "tensorkit/dense/tensor.h"

namespace tensorkit::features_internal {

// Room for the decimal form of any int64 ("-9223372036854775808").
using DecimalBuffer = std::array<char, 24>;
// The decimal string of v (tf.strings.as_string's), written into *buf.
std::string_view DecimalOf(int64_t v, DecimalBuffer* buf);
// Throws unless values is a defined kString, int32 or int64 tensor on the CPU.
void CheckHashable(const Tensor& values, const char* op);

// Calls fn(i, bytes_of(i)) for i in [0, n), in parallel over fixed chunks; fn must only write
// slot i. For byte strings held by any container (a TensorFlow buffer among them).
template <typename BytesOf, typename Fn>
void ForEachBytes(int64_t n, const BytesOf& bytes_of, const Fn& fn) {
  ParallelChunks(n, int64_t{1} << 12, [&](int64_t, int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) fn(i, bytes_of(i));
  });
}

// Calls fn(i, bytes) for every value in C order, i its position: a string's bytes or an
// integer's decimal string. Parallel over fixed chunks; fn must only write slot i.
template <typename Fn>
void ForEachHashInput(const Tensor& values, const Fn& fn) {
  const Tensor v = values.HostContiguous();
  const int64_t n = v.NumElements();
  switch (v.dtype()) {
    case DType::kString: {
      const std::string* s = v.data<std::string>();
      ForEachBytes(
          n, [s](int64_t i) { return std::string_view(s[i]); }, fn);
      break;
    }
    case DType::kInt32:
    case DType::kInt64: {
      const bool wide = v.dtype() == DType::kInt64;
      const void* p = v.raw_data();
      ParallelChunks(n, int64_t{1} << 12, [&](int64_t, int64_t b, int64_t e) {
        DecimalBuffer buf;
        for (int64_t i = b; i < e; ++i) {
          const int64_t x =
              wide ? static_cast<const int64_t*>(p)[i] : static_cast<const int32_t*>(p)[i];
          fn(i, DecimalOf(x, &buf));
        }
      });
      break;
    }
    default:
      break;  // CheckHashable refused it
  }
}

}  // namespace tensorkit::features_internal

#endif  // TENSORKIT_FEATURES_HASH_INTERNAL_H_
