// SegmentReduce, UnsortedSegmentReduce, SparseSegmentReduce and SparseSegmentReduceGrad against
// TensorFlow's kernel tests (segment_reduction_ops_test.py) and the naive reference.
#include "tensorkit/features/segment.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "reference/features_reference.h"
#include "tensorkit/dense/ops.h"
#include "tensorkit/dense/views.h"
#include "tensorkit/features/segment_device.h"
#include "test_util.h"

namespace tensorkit {
namespace {

using testing::AtThreadCounts;
using testing::ExpectError;

constexpr Combiner kAll[] = {Combiner::kSum, Combiner::kMean, Combiner::kSqrtN, Combiner::kMax,
                             Combiner::kMin};

bool TakesCombiner(DType d, Combiner c) {
  return IsFloat(d) || c == Combiner::kSum || c == Combiner::kMax || c == Combiner::kMin;
}

// TensorFlow's _input: 1, 2, 3, ... in the given dims.
template <typename T>
Tensor Iota(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<T> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(static_cast<T>(i + 1));
  return Tensor::FromVector<T>(v, dims);
}

// Random small values: exact in every dtype, so sums are exact only where the dtype allows.
template <typename T>
std::vector<T> RandomData(int64_t n, std::mt19937_64& rng) {
  std::vector<T> v;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t x = static_cast<int64_t>(rng() % 401) - 200;
    if constexpr (std::is_integral_v<T>) {
      v.push_back(static_cast<T>(x));
    } else {
      v.push_back(static_cast<T>(static_cast<float>(x) / 16 + 0.01f * static_cast<float>(x % 7)));
    }
  }
  return v;
}

// ids as a tensor of dtype `dt` (int32 or int64).
Tensor IdTensor(const std::vector<int64_t>& ids, DType dt, std::vector<int64_t> dims = {}) {
  if (dims.empty()) dims = {static_cast<int64_t>(ids.size())};
  if (dt == DType::kInt64) return Tensor::FromVector<int64_t>(ids, dims);
  std::vector<int32_t> v(ids.begin(), ids.end());
  return Tensor::FromVector<int32_t>(v, dims);
}

// Sorted ids for n rows into about `segments` segments, with gaps and leading gaps.
std::vector<int64_t> SortedIds(int64_t n, int64_t segments, std::mt19937_64& rng) {
  std::vector<int64_t> ids;
  for (int64_t k = 0; k < n; ++k) ids.push_back(static_cast<int64_t>(rng() % segments));
  std::sort(ids.begin(), ids.end());
  return ids;
}

// --- SegmentReduce ---------------------------------------------------------------------------

TEST(SegmentReduce, TensorFlowValues) {
  // testValues: [10, 2] of 1..20, ids i / 3, every combiner and dtype.
  std::vector<int64_t> ids;
  for (int64_t i = 0; i < 10; ++i) ids.push_back(i / 3);
  Tensor x = Iota<double>({10, 2});
  Tensor sum = SegmentReduce(x, IdTensor(ids, DType::kInt32), -1, Combiner::kSum);
  EXPECT_EQ(sum.Dims(), (std::vector<int64_t>{4, 2}));
  EXPECT_EQ(sum.ToVector<double>(), (std::vector<double>{9, 12, 27, 30, 45, 48, 19, 20}));
  EXPECT_EQ(SegmentReduce(x, IdTensor(ids, DType::kInt64), -1, Combiner::kMean).ToVector<double>(),
            (std::vector<double>{3, 4, 9, 10, 15, 16, 19, 20}));
  EXPECT_EQ(SegmentReduce(x, IdTensor(ids, DType::kInt64), -1, Combiner::kMax).ToVector<double>(),
            (std::vector<double>{5, 6, 11, 12, 17, 18, 19, 20}));
  EXPECT_EQ(SegmentReduce(Iota<int32_t>({10, 2}), IdTensor(ids, DType::kInt64), -1, Combiner::kMin)
                .ToVector<int32_t>(),
            (std::vector<int32_t>{1, 2, 7, 8, 13, 14, 19, 20}));
  // testSegmentIdsValid.
  EXPECT_EQ(SegmentReduce(Iota<int32_t>({4, 4}), IdTensor({0, 0, 0, 1}, DType::kInt32), -1,
                          Combiner::kSum)
                .ToVector<int32_t>(),
            (std::vector<int32_t>{15, 18, 21, 24, 13, 14, 15, 16}));
}

TEST(SegmentReduce, GapsAndNumSegmentsGiveZeroRows) {
  // Today's TensorFlow fills ids that do not occur (the old "not increasing by 1" error is gone)
  // with 0, for max and min as well.
  Tensor x = Iota<float>({4, 2});
  for (Combiner c : kAll) {
    Tensor out = SegmentReduce(x, IdTensor({1, 1, 3, 3}, DType::kInt64), 6, c);
    ASSERT_EQ(out.Dims(), (std::vector<int64_t>{6, 2}));
    std::vector<float> v = out.ToVector<float>();
    for (int64_t s : {0, 2, 4, 5}) {
      EXPECT_EQ(v[s * 2], 0) << CombinerName(c);
      EXPECT_EQ(v[s * 2 + 1], 0) << CombinerName(c);
    }
  }
  EXPECT_EQ(
      SegmentReduce(x, IdTensor({0, 0, 2, 2}, DType::kInt32), -1, Combiner::kSum).ToVector<float>(),
      (std::vector<float>{4, 6, 0, 0, 12, 14}));
  // No rows: -1 gives no segments, a given count gives zero rows.
  EXPECT_EQ(SegmentReduce(Tensor::Zeros({0, 3}, DType::kFloat32), IdTensor({}, DType::kInt64), -1,
                          Combiner::kSum)
                .Dims(),
            (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(SegmentReduce(Tensor::Zeros({0, 3}, DType::kFloat32), IdTensor({}, DType::kInt64), 2,
                          Combiner::kMax)
                .ToVector<float>(),
            (std::vector<float>(6, 0.0f)));
}

TEST(SegmentReduce, TensorFlowInvalidIds) {
  Tensor x = Iota<int32_t>({4, 4});
  auto run = [&](std::vector<int64_t> ids) {
    return [=] { SegmentReduce(x, IdTensor(ids, DType::kInt32), -1, Combiner::kSum); };
  };
  ExpectError(run({-1, -1, 0, 0}), ErrorCode::kOutOfRange, {"segment_ids[0] = -1", ">= 0"});
  ExpectError(run({0, 1, 0, 1}), ErrorCode::kInvalidArgument,
              {"SegmentReduce", "segment_ids[2] = 0 is less than segment_ids[1] = 1", "sorted",
               "UnsortedSegmentReduce"});
  ExpectError(run({0, 1, 2, 0}), ErrorCode::kInvalidArgument, {"segment_ids[3] = 0"});
  ExpectError(run({0, 0, 0, -1}), ErrorCode::kOutOfRange, {"segment_ids[3] = -1"});
  ExpectError(run({0, 0, 0, -2}), ErrorCode::kOutOfRange, {"segment_ids[3] = -2"});
  // testSegmentIdsSize and testSegmentIdsShape.
  ExpectError(
      [&] {
        SegmentReduce(x, IdTensor({0, 1}, DType::kInt32), -1, Combiner::kSum);
      },
      ErrorCode::kShapeMismatch, {"2 ids", "4 rows"});
  ExpectError(
      [&] {
        SegmentReduce(x, IdTensor({0, 1, 2, 2}, DType::kInt32, {2, 2}), -1, Combiner::kSum);
      },
      ErrorCode::kShapeMismatch, {"segment_ids must be 1-D"});
  ExpectError(
      [&] {
        SegmentReduce(x, IdTensor({0, 1, 2, 3}, DType::kInt64), 3, Combiner::kSum);
      },
      ErrorCode::kOutOfRange, {"segment_ids[3] = 3", "[0, 3)"});
  ExpectError(
      [&] {
        SegmentReduce(x, IdTensor({0, 1, 2, 3}, DType::kInt64), -2, Combiner::kSum);
      },
      ErrorCode::kInvalidArgument, {"num_segments is -2"});
}

// --- Bad dtypes, shapes and sizes, for every op ----------------------------------------------

TEST(SegmentOps, BadDTypesAndShapesAreErrors) {
  Tensor xi = Iota<int64_t>({3, 2});
  Tensor ids = IdTensor({0, 0, 1}, DType::kInt64);
  ExpectError([&] { SegmentReduce(xi, ids, -1, Combiner::kMean); }, ErrorCode::kDTypeMismatch,
              {"combiner mean", "int64", "Converted"});
  ExpectError([&] { UnsortedSegmentReduce(xi, ids, 2, Combiner::kSqrtN); },
              ErrorCode::kDTypeMismatch, {"sqrtn"});
  ExpectError([&] { SparseSegmentReduce(xi, ids, ids, -1, Combiner::kMean); },
              ErrorCode::kDTypeMismatch, {"mean"});
  ExpectError(
      [&] {
        SegmentReduce(Tensor::FromVector<bool>({true, false, true}), ids, -1, Combiner::kSum);
      },
      ErrorCode::kDTypeMismatch, {"bool"});
  ExpectError(
      [&] {
        SegmentReduce(Tensor::FromVector<int16_t>({1, 2, 3}), ids, -1, Combiner::kSum);
      },
      ErrorCode::kDTypeMismatch, {"int16"});
  ExpectError(
      [&] {
        SegmentReduce(Iota<float>({3}), Tensor::FromVector<float>({0, 0, 1}), -1, Combiner::kSum);
      },
      ErrorCode::kDTypeMismatch, {"segment_ids must be int32 or int64"});
  ExpectError([&] { SegmentReduce(Tensor::FromScalar<float>(1), ids, -1, Combiner::kSum); },
              ErrorCode::kShapeMismatch, {"at least one axis"});
  ExpectError([&] { SegmentReduce(Tensor(), ids, -1, Combiner::kSum); },
              ErrorCode::kInvalidArgument, {"undefined"});
  // An output whose size overflows int64 (a Tensor cannot even hold such dims, so data can't).
  Tensor wide = Tensor::Zeros({0, int64_t{1} << 31, 4}, DType::kFloat32);
  ExpectError(
      [&] { SegmentReduce(wide, IdTensor({}, DType::kInt64), int64_t{1} << 31, Combiner::kSum); },
      ErrorCode::kShapeMismatch, {"too large"});
  ExpectError(
      [&] {
        SparseSegmentReduce(wide, IdTensor({}, DType::kInt64), IdTensor({}, DType::kInt64),
                            int64_t{1} << 31, Combiner::kSum);
      },
      ErrorCode::kShapeMismatch, {"too large"});
  ExpectError(
      [&] {
        UnsortedSegmentReduce(wide, IdTensor({}, DType::kInt64), int64_t{1} << 31, Combiner::kSum);
      },
      ErrorCode::kShapeMismatch, {"too large"});
}

// --- Randomised against the reference: every dtype, id dtype and combiner --------------------

template <typename T>
void CheckAllOps(int64_t n, int64_t d, int64_t segments, uint64_t seed) {
  SCOPED_TRACE(::testing::Message()
               << DTypeName(DTypeOf<T>) << " n " << n << " d " << d << " segments " << segments);
  std::mt19937_64 rng(seed);
  const std::vector<T> data = RandomData<T>(n * d, rng);
  const Tensor x = Tensor::FromVector<T>(data, {n, d});
  std::vector<int64_t> self(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) self[k] = k;
  const std::vector<int64_t> sorted = SortedIds(n, segments, rng);
  std::vector<int64_t> unsorted;  // any order, some dropped (negative)
  for (int64_t k = 0; k < n; ++k)
    unsorted.push_back(static_cast<int64_t>(rng() % (segments + 2)) - 2);
  const int64_t kk = 2 * n + 3;
  std::vector<int64_t> gather, gather_ids = SortedIds(kk, segments, rng);
  for (int64_t k = 0; k < kk; ++k) gather.push_back(n == 0 ? 0 : static_cast<int64_t>(rng() % n));
  if (n == 0) gather_ids.clear(), gather.clear();
  const int64_t sorted_out = sorted.empty() ? 0 : sorted.back() + 1;
  const int64_t gather_out = gather_ids.empty() ? 0 : gather_ids.back() + 1;
  for (Combiner c : kAll) {
    if (!TakesCombiner(DTypeOf<T>, c)) continue;
    SCOPED_TRACE(CombinerName(c));
    for (DType it : {DType::kInt32, DType::kInt64}) {
      EXPECT_EQ(SegmentReduce(x, IdTensor(sorted, it), -1, c).template ToVector<T>(),
                ref::SegmentReduce<T>(data, d, self, sorted, sorted_out, c, ref::SumOrder::kEigen));
      EXPECT_EQ(
          SegmentReduce(x, IdTensor(sorted, it), segments + 3, c).template ToVector<T>(),
          ref::SegmentReduce<T>(data, d, self, sorted, segments + 3, c, ref::SumOrder::kEigen));
      EXPECT_EQ(
          UnsortedSegmentReduce(x, IdTensor(unsorted, it), segments, c).template ToVector<T>(),
          ref::SegmentReduce<T>(data, d, self, unsorted, segments, c, ref::SumOrder::kFromZero));
      for (DType jt : {DType::kInt32, DType::kInt64}) {
        EXPECT_EQ(SparseSegmentReduce(x, IdTensor(gather, jt), IdTensor(gather_ids, it), -1, c)
                      .template ToVector<T>(),
                  ref::SegmentReduce<T>(data, d, gather, gather_ids, gather_out, c,
                                        ref::SumOrder::kBlocks));
        if (c == Combiner::kMax || c == Combiner::kMin) continue;
        const int64_t g_rows = segments + 1;
        const std::vector<T> g = RandomData<T>(g_rows * d, rng);
        EXPECT_EQ(SparseSegmentReduceGrad(Tensor::FromVector<T>(g, {g_rows, d}),
                                          IdTensor(gather, jt), IdTensor(gather_ids, it), n + 2, c)
                      .template ToVector<T>(),
                  ref::SparseSegmentGrad<T>(g, d, gather, gather_ids, g_rows, n + 2, c));
      }
    }
  }
}

TEST(SegmentOps, MatchTheReferenceForEveryDType) {
  for (auto [n, d, s] : std::vector<std::array<int64_t, 3>>{
           {40, 3, 7}, {25, 1, 30}, {0, 2, 3}, {13, 0, 4}, {60, 17, 5}}) {
    CheckAllOps<Half>(n, d, s, 1);
    CheckAllOps<BFloat16>(n, d, s, 2);
    CheckAllOps<float>(n, d, s, 3);
    CheckAllOps<double>(n, d, s, 4);
    CheckAllOps<int32_t>(n, d, s, 5);
    CheckAllOps<int64_t>(n, d, s, 6);
  }
}

TEST(SegmentOps, LargeInputsAreBitIdenticalAtOneAndTwoThreads) {
  std::mt19937_64 rng(7);
  const int64_t n = 300000, d = 3, segments = 3000;  // several counting-sort chunks
  const Tensor x = Tensor::FromVector<float>(RandomData<float>(n * d, rng), {n, d});
  const Tensor sorted = IdTensor(SortedIds(n, segments, rng), DType::kInt64);
  std::vector<int64_t> any, rows;
  for (int64_t k = 0; k < n; ++k) any.push_back(static_cast<int64_t>(rng() % segments));
  for (int64_t k = 0; k < n; ++k) rows.push_back(static_cast<int64_t>(rng() % n));
  const Tensor unsorted = IdTensor(any, DType::kInt32);
  const Tensor indices = IdTensor(rows, DType::kInt32);
  const Tensor g = Tensor::FromVector<float>(RandomData<float>(segments * d, rng), {segments, d});
  for (Combiner c : kAll) {
    const auto r = AtThreadCounts({1, 2}, [&] {
      std::vector<std::vector<float>> out;
      out.push_back(SegmentReduce(x, sorted, -1, c).ToVector<float>());
      out.push_back(UnsortedSegmentReduce(x, unsorted, segments, c).ToVector<float>());
      out.push_back(SparseSegmentReduce(x, indices, sorted, segments, c).ToVector<float>());
      if (c != Combiner::kMax && c != Combiner::kMin) {
        out.push_back(SparseSegmentReduceGrad(g, indices, sorted, n, c).ToVector<float>());
      }
      return out;
    });
    EXPECT_EQ(r[0], r[1]) << CombinerName(c);
  }
}

// --- UnsortedSegmentReduce -------------------------------------------------------------------

TEST(UnsortedSegmentReduce, TensorFlowValuesWithFlatAndMatrixIds) {
  const std::vector<int64_t> flat = {0, 4, 0, 8, 3, 8, 4, 7, 7, 3};
  for (std::vector<int64_t> id_dims : {std::vector<int64_t>{10}, std::vector<int64_t>{5, 2}}) {
    std::vector<int64_t> dims = id_dims;
    dims.push_back(2);
    Tensor x = Iota<int32_t>(dims);
    Tensor out =
        UnsortedSegmentReduce(x, IdTensor(flat, DType::kInt64, id_dims), 12, Combiner::kSum);
    EXPECT_EQ(out.Dims(), (std::vector<int64_t>{12, 2}));
    std::vector<int32_t> want(24, 0);
    for (int64_t k = 0; k < 10; ++k) {
      want[flat[k] * 2] += static_cast<int32_t>(2 * k + 1);
      want[flat[k] * 2 + 1] += static_cast<int32_t>(2 * k + 2);
    }
    EXPECT_EQ(out.ToVector<int32_t>(), want);
  }
}

TEST(UnsortedSegmentReduce, EmptySegmentsAndDroppedIds) {
  // Negative ids are dropped; empty max / min rows hold the dtype's lowest / highest value.
  Tensor x = Tensor::FromVector<float>({1, 2, 3, 4});
  Tensor ids = IdTensor({2, -1, 2, -5}, DType::kInt32);
  EXPECT_EQ(UnsortedSegmentReduce(x, ids, 3, Combiner::kSum).ToVector<float>(),
            (std::vector<float>{0, 0, 4}));
  EXPECT_EQ(UnsortedSegmentReduce(x, ids, 3, Combiner::kMean).ToVector<float>(),
            (std::vector<float>{0, 0, 2}));
  EXPECT_EQ(UnsortedSegmentReduce(x, ids, 3, Combiner::kMax).ToVector<float>(),
            (std::vector<float>{std::numeric_limits<float>::lowest(),
                                std::numeric_limits<float>::lowest(), 3}));
  EXPECT_EQ(UnsortedSegmentReduce(Tensor::FromVector<int32_t>({1, 2, 3, 4}), ids, 3, Combiner::kMin)
                .ToVector<int32_t>(),
            (std::vector<int32_t>{INT32_MAX, INT32_MAX, 1}));
  // -1 sizes the output by the largest id.
  EXPECT_EQ(UnsortedSegmentReduce(x, ids, -1, Combiner::kSum).Dims(), (std::vector<int64_t>{3}));
  // testEmptySecondDimension.
  for (DType it : {DType::kInt32, DType::kInt64}) {
    Tensor out = UnsortedSegmentReduce(Tensor::Zeros({2, 0}, DType::kFloat64), IdTensor({0, 1}, it),
                                       2, Combiner::kSum);
    EXPECT_EQ(out.Dims(), (std::vector<int64_t>{2, 0}));
  }
}

TEST(UnsortedSegmentReduce, TensorFlowBadIndices) {
  ExpectError(
      [] {
        UnsortedSegmentReduce(Tensor::FromVector<int32_t>({17}, {1, 1}),
                              IdTensor({7}, DType::kInt32, {1, 1}), 2, Combiner::kSum);
      },
      ErrorCode::kOutOfRange,
      {"UnsortedSegmentReduce", "segment_ids[0, 0] = 7 is out of range [0, 2)"});
  ExpectError(
      [] {
        UnsortedSegmentReduce(Iota<float>({3, 2}), IdTensor({0, 1}, DType::kInt32), 2,
                              Combiner::kSum);
      },
      ErrorCode::kShapeMismatch, {"prefix"});
  ExpectError(
      [] {
        UnsortedSegmentReduce(Iota<float>({3}), IdTensor({0, 1, 1}, DType::kInt32), -3,
                              Combiner::kSum);
      },
      ErrorCode::kInvalidArgument, {"num_segments is -3"});
}

// --- SparseSegmentReduce ---------------------------------------------------------------------

TEST(SparseSegmentReduce, TensorFlowValues) {
  // testValues: [400, 2] data, segment i holding i + 1 random indices.
  std::mt19937_64 rng(11);
  std::vector<int64_t> ids, idx;
  for (int64_t i = 0; i < 20; ++i) {
    for (int64_t j = 0; j <= i; ++j) ids.push_back(i);
  }
  for (size_t k = 0; k < ids.size(); ++k) idx.push_back(static_cast<int64_t>(rng() % 400));
  for (DType dt : {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64}) {
    Tensor x = Converted(Iota<double>({400, 2}), dt);
    for (Combiner c : {Combiner::kSum, Combiner::kMean}) {
      if (!TakesCombiner(dt, c)) continue;
      Tensor out = Converted(
          SparseSegmentReduce(x, IdTensor(idx, DType::kInt32), IdTensor(ids, DType::kInt32), -1, c),
          DType::kFloat64);
      ASSERT_EQ(out.Dims(), (std::vector<int64_t>{20, 2}));
      std::vector<double> v = out.ToVector<double>();
      size_t k = 0;
      for (int64_t s = 0; s < 20; ++s) {
        double want0 = 0, want1 = 0;
        for (int64_t j = 0; j <= s; ++j, ++k) {
          want0 += static_cast<double>(2 * idx[k] + 1);
          want1 += static_cast<double>(2 * idx[k] + 2);
        }
        if (c == Combiner::kMean)
          want0 /= static_cast<double>(s + 1), want1 /= static_cast<double>(s + 1);
        EXPECT_NEAR(v[s * 2], want0, 1e-4 * want0);
        EXPECT_NEAR(v[s * 2 + 1], want1, 1e-4 * want1);
      }
    }
  }
}

TEST(SparseSegmentReduce, TensorFlowWithNumSegments) {
  // testWithNumSegments / testWithEmptySegments: ids [0, 2, 2] of 5, indices [0, 1, 2].
  Tensor x = Iota<float>({3, 4});
  Tensor out = SparseSegmentReduce(x, IdTensor({0, 1, 2}, DType::kInt32),
                                   IdTensor({0, 2, 2}, DType::kInt32), 5, Combiner::kMean);
  EXPECT_EQ(out.ToVector<float>(),
            (std::vector<float>{1, 2, 3, 4, 0, 0, 0, 0, 7, 8, 9, 10, 0, 0, 0, 0, 0, 0, 0, 0}));
  // No entries: zero rows.
  EXPECT_EQ(SparseSegmentReduce(x, IdTensor({}, DType::kInt32), IdTensor({}, DType::kInt32), 2,
                                Combiner::kSqrtN)
                .ToVector<float>(),
            (std::vector<float>(8, 0.0f)));
  EXPECT_EQ(SparseSegmentReduce(x, IdTensor({}, DType::kInt32), IdTensor({}, DType::kInt32), -1,
                                Combiner::kSum)
                .Dims(),
            (std::vector<int64_t>{0, 4}));
  // sqrtn divides by the square root of the count.
  Tensor sq =
      SparseSegmentReduce(Tensor::FromVector<double>({3, 5}), IdTensor({0, 1}, DType::kInt64),
                          IdTensor({0, 0}, DType::kInt64), -1, Combiner::kSqrtN);
  EXPECT_EQ(sq.ToVector<double>(), (std::vector<double>{8 / std::sqrt(2.0)}));
}

TEST(SparseSegmentReduce, MatchesTensorFlowBitForBit) {
  // Values whose float32 sum depends on the order; the expected bits are what
  // tf.raw_ops.SparseSegmentSum / Mean / SqrtN (TensorFlow 2.21, CPU) return for one segment of
  // the first n rows, and SegmentSum / UnsortedSegmentSum for the same rows.
  const std::vector<float> v = {1e8f, 1,    -1e8f, 3.5f, 1e-3f, 7,   -2.25f,
                                1e7f, 0.1f, -1e7f, 5,    0.3f,  2.7f};
  struct Case {
    int64_t n;
    uint32_t sum, mean, sqrtn;
    float dense_sum;
  };
  for (const Case& tc : {Case{13, 1099170316u, 1067612332u, 1083339553u, 16.0f},
                         Case{5, 1080037474u, 1060323407u, 1070098607u, 3.500999927520752f},
                         Case{9, 1259902600u, 1233625664u, 1246458720u, 10000008.0f}}) {
    SCOPED_TRACE(tc.n);
    const Tensor x =
        Tensor::FromVector<float>(std::vector<float>(v.begin(), v.begin() + tc.n), {tc.n, 1});
    std::vector<int64_t> idx(static_cast<size_t>(tc.n)), ids(static_cast<size_t>(tc.n), 0);
    for (int64_t k = 0; k < tc.n; ++k) idx[k] = k;
    auto sparse = [&](Combiner c) {
      return std::bit_cast<uint32_t>(
          SparseSegmentReduce(x, IdTensor(idx, DType::kInt32), IdTensor(ids, DType::kInt32), -1, c)
              .ToVector<float>()[0]);
    };
    EXPECT_EQ(sparse(Combiner::kSum), tc.sum);
    EXPECT_EQ(sparse(Combiner::kMean), tc.mean);
    EXPECT_EQ(sparse(Combiner::kSqrtN), tc.sqrtn);
    EXPECT_EQ(SegmentReduce(x, IdTensor(ids, DType::kInt64), -1, Combiner::kSum).ToVector<float>(),
              (std::vector<float>{tc.dense_sum}));
    EXPECT_EQ(
        UnsortedSegmentReduce(x, IdTensor(ids, DType::kInt64), 1, Combiner::kSum).ToVector<float>(),
        (std::vector<float>{tc.dense_sum}));
  }
}

// Runs segment_device.h's element function on the host over every element of `want`'s rows:
// slot j of output row s reads row src[j] of data (or row j when src is empty); starts from the
// sorted keys by the device's binary search. Returns the result with want's dims and dtype.
template <typename T>
Tensor DeviceFunctionOnHost(const Tensor& data, int64_t d, const std::vector<int64_t>& keys,
                            const std::vector<int64_t>& src, Combiner c,
                            features_internal::SegmentOrder order, bool unsorted,
                            const Tensor& want) {
  const int64_t num_out = want.Dim(0);
  Tensor got = Tensor::Zeros(want.Dims(), want.dtype());
  std::vector<int64_t> start;
  for (int64_t s = 0; s <= num_out; ++s) {
    start.push_back(
        features_internal::LowerBoundOf(keys.data(), static_cast<int64_t>(keys.size()), s));
  }
  features_internal::SegmentJob<T, int64_t> a;
  a.data = data.data<T>();
  a.d = d;
  a.indices = src.empty() ? nullptr : src.data();
  a.start = start.data();
  a.combiner = c;
  a.order = order;
  a.empty = features_internal::EmptyValue<T>(c, unsorted);
  a.out = got.data<T>();
  for (int64_t s = 0; s < num_out; ++s) {
    for (int64_t t = 0; t < d; ++t)
      features_internal::ReduceSegmentElement<ComputeType<T>>(a, s, t);
  }
  return got;
}

bool SameBytes(const Tensor& a, const Tensor& b) {
  return a.Dims() == b.Dims() && a.dtype() == b.dtype() &&
         std::memcmp(a.raw_data(), b.raw_data(),
                     static_cast<size_t>(a.NumElements() * DTypeSize(a.dtype()))) == 0;
}

// The device bodies' element function (segment_device.h) with the device's starts, its slots
// (for unsorted ids: a stable sort by id, negative ids past the end) and empty values, run on
// the host, gives the CPU kernels' bits for the three reductions: every dtype and combiner,
// segments of 0 to 40 rows (every first-block size of TensorFlow's blocks, the n < 10 scaling
// and the division after), gaps, rows of 1 to 70 elements, full-mantissa floats.
TEST(SparseSegmentReduce, TheDeviceElementFunctionGivesTheCpuBits) {
  using features_internal::SegmentOrder;
  std::mt19937_64 rng(31);
  std::uniform_real_distribution<double> any(-100.0, 100.0);
  const auto each = [&]<typename T>() {
    for (int64_t d : {1, 7, 70}) {
      std::vector<int64_t> ids, idx;
      for (int64_t s = 0, n = 0; n <= 40; ++s, ++n) {
        if (s % 5 == 3) ++s;  // a gap
        for (int64_t j = 0; j < n; ++j) ids.push_back(s);
      }
      const int64_t rows = static_cast<int64_t>(ids.size());
      for (int64_t k = 0; k < rows; ++k) idx.push_back(static_cast<int64_t>(rng() % rows));
      std::vector<T> values;
      for (int64_t i = 0; i < rows * d; ++i) {
        if constexpr (std::is_integral_v<T>) {
          values.push_back(static_cast<T>(static_cast<int64_t>(rng()) >> 3));  // sums wrap
        } else {
          // -0 now and then: a sum from +0 and a copy of one row differ on it.
          values.push_back(static_cast<T>(i % 5 == 1 ? -0.0 : any(rng)));
        }
      }
      const Tensor data = Tensor::FromVector<T>(values, {rows, d});
      // Unsorted ids: a shuffle of the sorted ones, some negative (dropped).
      std::vector<int64_t> loose = ids;
      std::shuffle(loose.begin(), loose.end(), rng);
      for (size_t k = 0; k < loose.size(); k += 7) loose[k] = -1 - static_cast<int64_t>(k % 3);
      for (Combiner c : kAll) {
        if (!TakesCombiner(DTypeOf<T>, c)) continue;
        SCOPED_TRACE(::testing::Message()
                     << DTypeName(DTypeOf<T>) << " d=" << d << " " << CombinerName(c));
        const Tensor id_t = IdTensor(ids, DType::kInt64), idx_t = IdTensor(idx, DType::kInt64);
        const Tensor sparse = SparseSegmentReduce(data, idx_t, id_t, -1, c);
        EXPECT_TRUE(SameBytes(
            DeviceFunctionOnHost<T>(data, d, ids, idx, c, SegmentOrder::kBlocks, false, sparse),
            sparse))
            << "SparseSegmentReduce";
        const Tensor sorted = SegmentReduce(data, id_t, -1, c);
        EXPECT_TRUE(SameBytes(
            DeviceFunctionOnHost<T>(data, d, ids, {}, c, SegmentOrder::kEigen, false, sorted),
            sorted))
            << "SegmentReduce";
        const int64_t num_out = ids.back() + 3;  // empty segments at the end too
        const Tensor unsorted =
            UnsortedSegmentReduce(data, IdTensor(loose, DType::kInt64), num_out, c);
        std::vector<int64_t> pos(loose.size());
        for (size_t k = 0; k < pos.size(); ++k) pos[k] = static_cast<int64_t>(k);
        const auto key = [&](int64_t k) { return loose[k] < 0 ? num_out : loose[k]; };
        std::stable_sort(pos.begin(), pos.end(),
                         [&](int64_t x, int64_t y) { return key(x) < key(y); });
        std::vector<int64_t> keys;
        for (int64_t k : pos) keys.push_back(key(k));
        EXPECT_TRUE(SameBytes(
            DeviceFunctionOnHost<T>(data, d, keys, pos, c, SegmentOrder::kFromZero, true, unsorted),
            unsorted))
            << "UnsortedSegmentReduce";
      }
    }
  };
  testing::ForEachType<float, double, Half, BFloat16, int32_t, int64_t>(each);
}

// The one summation plan the CPU kernel and the device body follow: TensorFlow's blocks cover a
// segment exactly, scale it once (before for n < 10, after otherwise); the other orders go one
// row at a time and start from +0 only where TensorFlow's kernels do.
TEST(SparseSegmentReduce, TheSummationPlanCoversEachSegmentOnce) {
  using features_internal::PlanSegmentSum;
  using features_internal::SegmentOrder;
  using features_internal::SumPlan;
  for (int64_t n = 2; n <= 40; ++n) {
    const SumPlan p = PlanSegmentSum<float>(SegmentOrder::kBlocks, Combiner::kMean, n);
    EXPECT_EQ(p.block, 8) << n;
    EXPECT_TRUE(p.first >= 2 && p.first <= 9) << n;
    EXPECT_EQ((n - p.first) % 8, 0) << n;
    EXPECT_EQ(p.pre_scale, n < 10) << n;
    EXPECT_EQ(p.divide, n >= 10) << n;
    EXPECT_EQ(p.root, static_cast<double>(n)) << n;
    EXPECT_FALSE(p.from_zero) << n;
    const SumPlan q = PlanSegmentSum<double>(SegmentOrder::kBlocks, Combiner::kSqrtN, n);
    EXPECT_EQ(q.root, std::sqrt(static_cast<double>(n))) << n;
    // Integer sums wrap to the same value in any order: one row at a time.
    EXPECT_EQ(PlanSegmentSum<int64_t>(SegmentOrder::kBlocks, Combiner::kSum, n).block, 1) << n;
    EXPECT_EQ(PlanSegmentSum<float>(SegmentOrder::kBlocks, Combiner::kMax, n).block, 1) << n;
  }
  const SumPlan one = PlanSegmentSum<float>(SegmentOrder::kBlocks, Combiner::kMean, 1);
  EXPECT_TRUE(one.block == 1 && !one.pre_scale && !one.divide && !one.from_zero);
  for (const Combiner c : {Combiner::kSum, Combiner::kMean}) {
    const bool mean = c == Combiner::kMean;
    for (const int64_t n : {int64_t{1}, int64_t{5}}) {
      const SumPlan eigen = PlanSegmentSum<float>(SegmentOrder::kEigen, c, n);
      EXPECT_EQ(eigen.from_zero, n > 1);
      EXPECT_EQ(eigen.divide, mean);
      EXPECT_TRUE(PlanSegmentSum<float>(SegmentOrder::kFromZero, c, n).from_zero);
      EXPECT_FALSE(PlanSegmentSum<float>(SegmentOrder::kSequential, c, n).from_zero);
      EXPECT_EQ(eigen.block, 1);
    }
  }
}

TEST(SparseSegmentReduce, TensorFlowInvalidInputs) {
  Tensor x = Iota<float>({10, 4});
  auto run = [&](std::vector<int64_t> idx, std::vector<int64_t> ids, int64_t num = -1) {
    return [=] {
      SparseSegmentReduce(x, IdTensor(idx, DType::kInt32), IdTensor(ids, DType::kInt64), num,
                          Combiner::kSum);
    };
  };
  // testIndicesInvalid1 / 2.
  ExpectError(run({0, -1, 4}, {0, 0, 1}), ErrorCode::kOutOfRange,
              {"SparseSegmentReduce", "indices[1] = -1", "[0, 10)"});
  ExpectError(run({0, 1, 10}, {0, 0, 1}), ErrorCode::kOutOfRange, {"indices[2] = 10"});
  // testSegmentsInvalid*: unsorted, negative, too large for num_segments.
  ExpectError(run({0, 1, 2, 3}, {1, 0, 1, 2}), ErrorCode::kInvalidArgument,
              {"segment_ids[1] = 0 is less than segment_ids[0] = 1"});
  ExpectError(run({0, 1, 2, 3}, {-1, 0, 1, 1}), ErrorCode::kOutOfRange, {"segment_ids[0] = -1"});
  ExpectError(run({0, 1, 2, 3}, {0, 1, 2, 5}, 5), ErrorCode::kOutOfRange,
              {"segment_ids[3] = 5", "[0, 5)"});
  ExpectError(run({0, 1}, {0, 1, 2}), ErrorCode::kShapeMismatch, {"indices has 2", "3"});
}

// --- SparseSegmentReduceGrad -----------------------------------------------------------------

// The gradient is the adjoint of the forward map: <grad, F(x)> == <G(grad), x>.
TEST(SparseSegmentReduceGrad, IsTheAdjointOfTheForwardPass) {
  std::mt19937_64 rng(21);
  const int64_t n = 50, d = 3, segments = 12, kk = 90;
  std::vector<int64_t> idx;
  for (int64_t k = 0; k < kk; ++k) idx.push_back(static_cast<int64_t>(rng() % n));
  const std::vector<int64_t> ids = SortedIds(kk, segments, rng);
  const int64_t out_rows = ids.back() + 1;
  const std::vector<double> xv = RandomData<double>(n * d, rng);
  const std::vector<double> gv = RandomData<double>(out_rows * d, rng);
  for (Combiner c : {Combiner::kSum, Combiner::kMean, Combiner::kSqrtN}) {
    const std::vector<double> f =
        SparseSegmentReduce(Tensor::FromVector<double>(xv, {n, d}), IdTensor(idx, DType::kInt64),
                            IdTensor(ids, DType::kInt64), -1, c)
            .ToVector<double>();
    const std::vector<double> g =
        SparseSegmentReduceGrad(Tensor::FromVector<double>(gv, {out_rows, d}),
                                IdTensor(idx, DType::kInt64), IdTensor(ids, DType::kInt64), n, c)
            .ToVector<double>();
    double lhs = 0, rhs = 0;
    for (size_t i = 0; i < f.size(); ++i) lhs += gv[i] * f[i];
    for (size_t i = 0; i < g.size(); ++i) rhs += g[i] * xv[i];
    EXPECT_NEAR(lhs, rhs, 1e-9 * std::max(1.0, std::abs(lhs))) << CombinerName(c);
  }
}

TEST(SparseSegmentReduceGrad, BadInputsAreErrors) {
  Tensor g = Iota<float>({3, 2});
  auto run = [&](std::vector<int64_t> idx, std::vector<int64_t> ids, int64_t rows,
                 Combiner c = Combiner::kMean) {
    return [=] {
      SparseSegmentReduceGrad(g, IdTensor(idx, DType::kInt64), IdTensor(ids, DType::kInt32), rows,
                              c);
    };
  };
  ExpectError(run({0, 1}, {0, 3}, 4), ErrorCode::kOutOfRange,
              {"SparseSegmentReduceGrad", "segment_ids[1] = 3", "[0, 3)"});
  ExpectError(run({0, 4}, {0, 1}, 4), ErrorCode::kOutOfRange, {"indices[1] = 4", "[0, 4)"});
  ExpectError(run({0, 1}, {0, 1}, -1), ErrorCode::kInvalidArgument, {"num_rows is -1"});
  ExpectError(run({0, 1}, {0, 1}, 4, Combiner::kMax), ErrorCode::kInvalidArgument,
              {"combiner max", "no gradient"});
  ExpectError(run({0}, {0, 1}, 4), ErrorCode::kShapeMismatch, {"indices has 1"});
}

}  // namespace
}  // namespace tensorkit
