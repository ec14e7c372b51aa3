// tensorkit/features/segment_device.h: one output element of a segment reduction written once
// for the host and a CUDA device (not a public header). The CUDA bodies run it with one warp
// per segment, lanes over the row's elements; host tests run it against the CPU kernel of
// segment.cc, whose sequences of operations it repeats (segment.cc Note [summation order]:
// TensorFlow's blocks of 8 rows for SparseSegmentReduce, one by one from +0 or the first row
// for the others): so the device gives the CPU's bits, which are TensorFlow's.
#ifndef TENSORKIT_FEATURES_SEGMENT_DEVICE_H_
#define TENSORKIT_FEATURES_SEGMENT_DEVICE_H_

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "tensorkit/common/half.h"
#include "tensorkit/common/host_device.h"
#include "tensorkit/common/wrap.h"
#include "tensorkit/features/combiner.h"
#include "tensorkit/features/device_math.h"

namespace tensorkit::features_internal {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

// How a segment's rows are added (segment.cc's Order): kBlocks for SparseSegmentReduce, kEigen
// for SegmentReduce (one by one, from +0 when there are several rows), kFromZero for
// UnsortedSegmentReduce (one by one from +0).
enum class SegmentOrder { kBlocks, kEigen, kFromZero };

// A segment reduction: output row s reduces the rows data + src(j) * d for j in
// [start[s], start[s + 1]), src(j) = indices[j], or j itself when indices is null; indices
// checked in [0, N). T is data's type, J the indices', A the accumulator's (ComputeType<T>).
// An empty segment's elements are `empty`.
template <typename T, typename J>
struct SegmentJob {
  const T* data = nullptr;
  int64_t d = 0;
  const J* indices = nullptr;
  const int64_t* start = nullptr;
  Combiner combiner = Combiner::kSum;
  SegmentOrder order = SegmentOrder::kBlocks;
  T empty = T(0);
  T* out = nullptr;
};

// An empty segment's value: 0, except for UnsortedSegmentReduce's max (the dtype's lowest) and
// min (its highest), as TensorFlow's unsorted_segment_max / _min.
template <typename T>
T EmptyValue(Combiner c, bool unsorted);

// Element t of output row s.
template <typename A, typename T, typename J>
TK_HOST_DEVICE void ReduceSegmentElement(const SegmentJob<T, J>& a, int64_t s, int64_t t);

// The first position of the sorted ids [0, n) whose id is >= s (n when none): start[s].
template <typename I>
TK_HOST_DEVICE int64_t LowerBoundOf(const I* ids, int64_t n, int64_t s);

// ---------------------------------------------------------------------------------------------
// Definitions
// ---------------------------------------------------------------------------------------------

template <typename T>
T EmptyValue(Combiner c, bool unsorted) {
  if (unsorted && c == Combiner::kMax) {
    if constexpr (std::is_same_v<T, Half>) return Half::FromBits(0xfbff);  // -65504
    if constexpr (std::is_same_v<T, BFloat16>) return BFloat16::FromBits(0xff7f);
    if constexpr (!std::is_same_v<T, Half> && !std::is_same_v<T, BFloat16>) {
      return std::numeric_limits<T>::lowest();
    }
  }
  if (unsorted && c == Combiner::kMin) {
    if constexpr (std::is_same_v<T, Half>) return Half::FromBits(0x7bff);  // 65504
    if constexpr (std::is_same_v<T, BFloat16>) return BFloat16::FromBits(0x7f7f);
    if constexpr (!std::is_same_v<T, Half> && !std::is_same_v<T, BFloat16>) {
      return std::numeric_limits<T>::max();
    }
  }
  return T(0);
}

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
TK_HOST_DEVICE inline void ReduceSegmentElement(const SegmentJob<T, J>& a, int64_t s, int64_t t) {
  const int64_t b = a.start[s], e = a.start[s + 1], n = e - b;
  T* out = a.out + s * a.d + t;
  if (n == 0) {
    *out = a.empty;
    return;
  }
  const auto x = [&](int64_t j) {
    const int64_t row = a.indices == nullptr ? j : static_cast<int64_t>(a.indices[j]);
    return static_cast<A>(a.data[row * a.d + t]);
  };
  const bool scaled = a.combiner == Combiner::kMean || a.combiner == Combiner::kSqrtN;
  const bool summed = a.combiner == Combiner::kSum || scaled;
  const double count = static_cast<double>(n);
  A acc;
  if constexpr (std::is_floating_point_v<A>) {
    if (a.order == SegmentOrder::kBlocks && summed && n > 1) {
      // TensorFlow's blocks: a first block of n % 8 rows (8 for 0, 9 for 1) scaled by 1 / n
      // (1 / sqrt(n)) when n < 10, then blocks of 8, each summed left to right, then the
      // division when n >= 10.
      const int64_t r = n & 7;
      const int64_t first = r == 0 ? 8 : r == 1 ? 9 : r;
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
  // Row by row from the first: a sum starts from +0 (kFromZero, or kEigen with several rows) or
  // adds the row to -0, which copies it; integers wrap; max / min keep the first of equals.
  if (summed) {
    const bool from_zero =
        a.order == SegmentOrder::kFromZero || (a.order == SegmentOrder::kEigen && n > 1);
    acc = AddW<A>(from_zero ? A(0) : static_cast<A>(-0.0), x(b));
  } else {
    acc = x(b);
  }
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
  if constexpr (std::is_floating_point_v<A>) {
    // kBlocks never gets here with a scaled float sum of several rows; one row is itself.
    if (scaled && a.order != SegmentOrder::kBlocks) {
      acc = acc / static_cast<A>(a.combiner == Combiner::kMean ? count : std::sqrt(count));
    }
  }
  *out = static_cast<T>(acc);
}

}  // namespace tensorkit::features_internal

#endif  // TENSORKIT_FEATURES_SEGMENT_DEVICE_H_
