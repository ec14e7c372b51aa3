// tensorkit/features/segment_device.h: one output element of SparseSegmentReduce written once
// for the host and a CUDA device (not a public header). The CUDA body runs it with one warp per
// segment, lanes over the row's elements; host tests run it against the CPU kernel of
// segment.cc, whose sequence of operations it repeats (segment.cc Note [summation order],
// TensorFlow's blocks of 8 rows): so the device gives the CPU's bits, which are TensorFlow's.
#ifndef TENSORKIT_FEATURES_SEGMENT_DEVICE_H_
#define TENSORKIT_FEATURES_SEGMENT_DEVICE_H_

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "tensorkit/common/host_device.h"
#include "tensorkit/common/wrap.h"
#include "tensorkit/features/combiner.h"
#include "tensorkit/features/device_math.h"

namespace tensorkit::features_internal {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

// A sparse segment reduction: output row s reduces the rows data + indices[j] * d for j in
// [start[s], start[s + 1]); indices checked in [0, N). T is data's type, J the indices', A the
// accumulator's (ComputeType<T>).
template <typename T, typename J>
struct SparseSegmentJob {
  const T* data = nullptr;
  int64_t d = 0;
  const J* indices = nullptr;
  const int64_t* start = nullptr;
  Combiner combiner = Combiner::kSum;
  T* out = nullptr;
};

// Element t of output row s (0 for an empty segment).
template <typename A, typename T, typename J>
TK_HOST_DEVICE void ReduceSparseSegmentElement(const SparseSegmentJob<T, J>& a, int64_t s,
                                               int64_t t);

// The first position of the sorted ids [0, n) whose id is >= s (n when none): start[s].
template <typename I>
TK_HOST_DEVICE int64_t LowerBoundOf(const I* ids, int64_t n, int64_t s);

// ---------------------------------------------------------------------------------------------
// Definitions
// ---------------------------------------------------------------------------------------------

template <typename I>
TK_HOST_DEVICE inline int64_t LowerBoundOf(const I* ids, int64_t n, int64_t s) {
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (static_cast<int64_t>(ids[mid]) < s) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

template <typename A, typename T, typename J>
TK_HOST_DEVICE inline void ReduceSparseSegmentElement(const SparseSegmentJob<T, J>& a, int64_t s,
                                                      int64_t t) {
  const int64_t b = a.start[s], e = a.start[s + 1], n = e - b;
  T* out = a.out + s * a.d + t;
  if (n == 0) {
    *out = T(0);
    return;
  }
  const auto x = [&](int64_t j) {
    return static_cast<A>(a.data[static_cast<int64_t>(a.indices[j]) * a.d + t]);
  };
  const bool scaled = a.combiner == Combiner::kMean || a.combiner == Combiner::kSqrtN;
  const bool summed = a.combiner == Combiner::kSum || scaled;
  A acc;
  if constexpr (std::is_floating_point_v<A>) {
    if (summed && n > 1) {
      // TensorFlow's blocks: a first block of n % 8 rows (8 for 0, 9 for 1) scaled by 1 / n
      // (1 / sqrt(n)) when n < 10, then blocks of 8, each summed left to right, then the
      // division when n >= 10.
      const int64_t r = n & 7;
      const int64_t first = r == 0 ? 8 : r == 1 ? 9 : r;
      const double count = static_cast<double>(n);
      const A root = static_cast<A>(a.combiner == Combiner::kMean ? count : std::sqrt(count));
      const A scale = scaled && n < 10 ? A(1) / root : A(1);
      A sum = x(b);
      for (int64_t q = 1; q < first; ++q) sum = Rounded<false>(sum, x(b + q));
      acc = Rounded<true>(sum, scale);
      for (int64_t j = b + first; j < e; j += 8) {
        A block = x(j);
        for (int q = 1; q < 8; ++q) block = Rounded<false>(block, x(j + q));
        acc = Rounded<false>(acc, block);
      }
      if (scaled && n >= 10) acc = acc / root;
      *out = static_cast<T>(acc);
      return;
    }
  }
  // One row, or max / min, or integers: from the first row on (a sum adds it to -0, which
  // copies it; integers wrap).
  acc = summed ? AddW<A>(static_cast<A>(-0.0), x(b)) : x(b);
  for (int64_t j = b + 1; j < e; ++j) {
    const A v = x(j);
    if (a.combiner == Combiner::kMax) {
      acc = acc < v ? v : acc;
    } else if (a.combiner == Combiner::kMin) {
      acc = v < acc ? v : acc;
    } else {
      acc = AddW<A>(acc, v);
    }
  }
  *out = static_cast<T>(acc);
}

}  // namespace tensorkit::features_internal

#endif  // TENSORKIT_FEATURES_SEGMENT_DEVICE_H_
