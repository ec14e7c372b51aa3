// tensorkit/features/segment_device.h: the summation order of a segment reduction and one output
// element of it, written once for the host and a CUDA device (not a public header).
// PlanSegmentSum says how a segment's rows are added (segment.cc Note [summation order]:
// TensorFlow's blocks of 8 rows for SparseSegmentReduce, one by one from +0 or the first row for
// the others); segment.cc's vectorised kernel and ReduceSegmentElement both follow it, so the
// device gives the CPU's bits, which are TensorFlow's. The CUDA bodies run ReduceSegmentElement
// with one warp per segment, lanes over the row's elements; host tests run it against the CPU.
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

// How a segment's rows are added (segment.cc Note [summation order]), for the CPU kernel and the
// device body alike.
enum class SegmentOrder {
  kBlocks,      // SparseSegmentReduce: TensorFlow's blocks of kSumBlock rows
  kEigen,       // SegmentReduce: one by one, from +0 when there are several rows
  kFromZero,    // UnsortedSegmentReduce: one by one from +0
  kSequential,  // the gradient: one by one from the first row
};

// Rows in each block after the first of SegmentOrder::kBlocks.
inline constexpr int kSumBlock = 8;

// The steps that reduce a segment of n >= 1 rows, which the CPU kernel and the device body both
// take: the first `first` rows are summed left to right, that sum added to +0 (from_zero; a -0
// row becomes +0) or taken as it is, and multiplied by 1 / root (pre_scale); each next `block`
// rows are summed left to right and added; the total is divided by root (divide). Max and min
// take the plan of one row at a time from the first.
struct SumPlan {
  int64_t first = 1;
  int64_t block = 1;
  bool from_zero = false;
  bool pre_scale = false;
  bool divide = false;
  double root = 1;  // n (mean) or sqrt(n) (sqrtn) in double, rounded to A where it is used
};

// The plan of a segment of n >= 1 rows reduced with accumulator type A. Integer sums wrap, so
// their order does not change them: they always go one row at a time.
template <typename A>
TK_HOST_DEVICE SumPlan PlanSegmentSum(SegmentOrder order, Combiner c, int64_t n);

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

template <typename A>
TK_HOST_DEVICE inline SumPlan PlanSegmentSum(SegmentOrder order, Combiner c, int64_t n) {
  SumPlan p;
  const bool scaled =
      std::is_floating_point_v<A> && (c == Combiner::kMean || c == Combiner::kSqrtN);
  if (!scaled && c != Combiner::kSum) return p;
  if (scaled) {
    const double count = static_cast<double>(n);
    p.root = c == Combiner::kMean ? count : std::sqrt(count);
  }
  if (order == SegmentOrder::kBlocks && std::is_floating_point_v<A> && n > 1) {
    // TensorFlow's blocks: a first block of n % 8 rows (8 for 0, 9 for 1), scaled when n < 10;
    // the division at the end otherwise.
    const int64_t r = n % kSumBlock;
    p.first = r == 0 ? kSumBlock : r == 1 ? kSumBlock + 1 : r;
    p.block = kSumBlock;
    p.pre_scale = scaled && n < 10;
    p.divide = scaled && n >= 10;
    return p;
  }
  // One row of kBlocks is itself; the others divide their sum.
  p.from_zero = order == SegmentOrder::kFromZero || (order == SegmentOrder::kEigen && n > 1);
  p.divide = scaled && order != SegmentOrder::kBlocks;
  return p;
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
  const SumPlan plan = PlanSegmentSum<A>(a.order, a.combiner, n);
  A acc;
  if constexpr (std::is_floating_point_v<A>) {
    if (plan.block > 1) {
      const A scale = plan.pre_scale ? A(1) / static_cast<A>(plan.root) : A(1);
      A sum = x(b);
      for (int64_t q = 1; q < plan.first; ++q) sum = Rounded<false>(sum, x(b + q));
      acc = Rounded<true>(sum, scale);
      for (int64_t j = b + plan.first; j < e; j += plan.block) {
        A block = x(j);
        for (int64_t q = 1; q < plan.block; ++q) block = Rounded<false>(block, x(j + q));
        acc = Rounded<false>(acc, block);
      }
      if (plan.divide) acc = acc / static_cast<A>(plan.root);
      *out = static_cast<T>(acc);
      return;
    }
  }
  // Row by row from the first: a sum adds it to +0 or to -0, which copies it; integers wrap;
  // max / min keep the first of equals.
  const bool summed = a.combiner != Combiner::kMax && a.combiner != Combiner::kMin;
  acc = summed ? AddW<A>(plan.from_zero ? A(0) : static_cast<A>(-0.0), x(b)) : x(b);
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
    if (plan.divide) acc = acc / static_cast<A>(plan.root);
  }
  *out = static_cast<T>(acc);
}

}  // namespace tensorkit::features_internal

#endif  // TENSORKIT_FEATURES_SEGMENT_DEVICE_H_
