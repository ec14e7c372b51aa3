// Size computations at the edges of int64: shapes whose element count is exactly 2^63 - 1, is
// 2^63 (one past), or is 2^64 + 2 (wraps around to a small positive count in unchecked
// arithmetic), and dims whose sums overflow. Every public operation that multiplies or adds
// sizes either computes the right answer or refuses with an Error naming the operation; none
// crashes, wraps silently or tries to allocate a wrapped size.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <vector>

#include "tensorkit/tensorkit.h"
#include "test_util.h"

namespace tensorkit {
namespace {

using testing::ExpectError;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t k2to31 = int64_t{1} << 31;
constexpr int64_t k2to32 = int64_t{1} << 32;
constexpr int64_t k2to62 = int64_t{1} << 62;
// 2^63 - 1 = 7^2 * 73 * 127 * 337 * 92737 * 649657: the largest count that fits.
const std::vector<int64_t> kExactMax = {7, 7, 73, 127, 337, 92737, 649657};
// 2^63: one past.
const std::vector<int64_t> kOnePast = {k2to32, k2to31};
// 3 * 6148914691236517206 = 2^64 + 2, which wraps to 2 in 64-bit arithmetic.
const std::vector<int64_t> kWraps = {3, 6148914691236517206};

int64_t Product(const std::vector<int64_t>& dims) {
  __int128 p = 1;
  for (int64_t d : dims) p *= d;
  return p > kMax ? -1 : static_cast<int64_t>(p);
}

// Expects an Error (any code but kInternal) whose message names `op`.
template <typename F>
void ExpectRefused(F&& call, const std::string& op) {
  try {
    call();
    ADD_FAILURE() << op << ": no Error thrown";
  } catch (const Error& e) {
    EXPECT_NE(e.code(), ErrorCode::kInternal) << e.what();
    EXPECT_NE(std::string(e.what()).find(op), std::string::npos) << e.what();
  }
}

TEST(SizeEdges, TheEdgeShapesAreWhatTheySay) {
  EXPECT_EQ(Product(kExactMax), kMax);
  EXPECT_EQ(Product(kOnePast), -1);
  EXPECT_EQ(Product(kWraps), -1);
  int64_t wrapped = 1;
  for (int64_t d : kWraps) wrapped = static_cast<int64_t>(static_cast<uint64_t>(wrapped) * d);
  EXPECT_EQ(wrapped, 2);
}

TEST(SizeEdges, DenseCreationRefusesCountsAndByteSizesThatDoNotFit) {
  // The count fits but no byte size does: refused before any allocation.
  ExpectError([] { Tensor::Empty(kExactMax, DType::kUInt8); }, ErrorCode::kResourceExhausted,
              {"Storage::Allocate"});
  ExpectError([] { Tensor::Zeros(kExactMax, DType::kFloat64); }, ErrorCode::kResourceExhausted,
              {"Storage::Allocate"});
  for (const auto& dims : {kOnePast, kWraps}) {
    EXPECT_THROW(Tensor::Empty(dims, DType::kUInt8), Error);
    EXPECT_THROW(Tensor::Zeros(dims, DType::kFloat32), Error);
  }
  // A zero dim makes the count 0, however large the others.
  Tensor none = Tensor::Empty({0, k2to62, k2to62}, DType::kFloat32);
  EXPECT_EQ(none.NumElements(), 0);
  EXPECT_EQ(Tensor::Zeros({k2to62, k2to62, 0}, DType::kInt64).NumElements(), 0);
}

TEST(SizeEdges, PatternsRefuseMemoryIndexesThatOverflow) {
  // Views never broadcast (a dim > 1 has a nonzero stride), so a pattern's count is bounded by
  // its memory; what can overflow is offset + (d - 1) * stride, with either sign of stride.
  ExpectRefused([] { MakePattern({k2to31, k2to31}, {0, 0}); }, "MakePattern");
  EXPECT_NO_THROW(MakePattern({2}, {kMax}));
  ExpectRefused([] { MakePattern({3}, {kMax / 2 + 1}); }, "MakePattern");
  EXPECT_NO_THROW(MakePattern({2}, {-kMax}, kMax));
  ExpectRefused([] { MakePattern({2}, {-kMax}, kMax - 1); }, "MakePattern");
  ExpectRefused([] { MakePattern({2}, {std::numeric_limits<int64_t>::min()}, kMax); },
                "MakePattern");
  ExpectRefused([] { MakePattern({2, 2}, {kMax, kMax}); }, "MakePattern");
  ExpectRefused([] { MakePattern(kWraps, {kWraps[1], 1}); }, "MakePattern");
  // Every index of [0, 2^63) once: distinct and in range, but 2^63 elements do not count.
  ExpectRefused([] { MakePattern({k2to62, 2}, {2, 1}); }, "MakePattern");
  EXPECT_EQ(MakePattern({k2to62 - 1, 2}, {2, 1}).NumElements(), kMax - 1);
  // A pattern that fits int64 but not the storage is refused by the tensor.
  auto storage = Storage::Allocate(DType::kFloat32, 4, Device::Cpu());
  ExpectRefused([&] { Tensor(storage, MakePattern({2}, {kMax}), DType::kFloat32); }, "Tensor");
  EXPECT_NO_THROW(Tensor(storage, MakePattern({2}, {-3}, 3), DType::kFloat32));
  EXPECT_THROW(Tensor(storage, MakePattern({2}, {-3}, 2), DType::kFloat32), Error);
}

TEST(SizeEdges, SlicesWithExtremeStepsCountWithoutOverflow) {
  Tensor t = Tensor::FromVector(std::vector<int32_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  // (end - start + step - 1) / step would overflow; the count is still 1.
  Tensor s = Slice(t, 0, 0, 10, kMax);
  EXPECT_EQ(s.ToVector<int32_t>(), std::vector<int32_t>{0});
  Tensor r = Slice(t, 0, 9, -1, std::numeric_limits<int64_t>::min() + 1);
  EXPECT_EQ(r.ToVector<int32_t>(), std::vector<int32_t>{9});
  Tensor every3 = Slice(t, 0, 1, 10, 3);
  EXPECT_EQ(every3.ToVector<int32_t>(), (std::vector<int32_t>{1, 4, 7}));
}

TEST(SizeEdges, ViewsOfEmptyTensorsKeepHugeDimsExact) {
  Tensor none = Tensor::Empty({0}, DType::kFloat32);
  auto v = View(none, {k2to62, 0, k2to62});
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->Dims(), (std::vector<int64_t>{k2to62, 0, k2to62}));
  EXPECT_EQ(v->NumElements(), 0);
  Tensor split = SplitAxis(Tensor::Empty({0, 4}, DType::kInt8), 0, {k2to62, 0});
  EXPECT_EQ(split.Dims(), (std::vector<int64_t>{k2to62, 0, 4}));
}

TEST(SizeEdges, DenseConcatenationRefusesADimSumThatOverflows) {
  // Zero-element inputs may have any dims: the joined dim is what can overflow.
  Tensor a = Tensor::Empty({0, k2to62 - 1}, DType::kFloat32);
  Tensor b = Tensor::Empty({0, k2to62}, DType::kFloat32);
  Tensor two = Concatenate({a, b}, 1);
  EXPECT_EQ(two.Dims(), (std::vector<int64_t>{0, kMax}));
  ExpectRefused([&] { Concatenate({a, b, a}, 1); }, "Concatenate");
  ExpectRefused(
      [&] {
        Concatenate(
            {Tensor::Empty({0, kMax}, DType::kFloat32), Tensor::Empty({0, 1}, DType::kFloat32)}, 1);
      },
      "Concatenate");
  ExpectRefused([&] { Split(Tensor::Empty({0, 4}, DType::kFloat32), 1, {kMax, kMax}); }, "Split");
}

SparseTensor OneEntry(std::vector<int64_t> index, std::vector<int64_t> shape) {
  const int64_t rank = static_cast<int64_t>(index.size());
  return SparseTensor::Create(Tensor::FromVector(std::move(index), {1, rank}),
                              Tensor::FromVector(std::vector<float>{2.5f}), std::move(shape));
}

TEST(SizeEdges, SparseShapesBeyondInt64VolumeSortAndReduceButDoNotDensify) {
  // Sparse shapes need no volume: sorting uses per-axis key fields, not a linear position.
  const int64_t big = kMax;
  Tensor idx = Tensor::FromVector(
      std::vector<int64_t>{big - 1, 0, 5, 3, 7, big - 1, 3, 1, big - 2, 0, 0, 7}, {4, 3});
  Tensor vals = Tensor::FromVector(std::vector<float>{1, 2, 3, 4});
  SparseTensor st = SparseTensor::Create(idx, vals, {big, 8, big});
  st.ValidateIndices();
  st.Reorder({0, 1, 2});
  EXPECT_EQ(st.indices().ToVector<int64_t>(),
            (std::vector<int64_t>{0, 0, 7, 3, 1, big - 2, 3, 7, big - 1, big - 1, 0, 5}));
  EXPECT_EQ(st.values().ToVector<float>(), (std::vector<float>{4, 3, 2, 1}));
  st.Reorder({2, 0, 1});
  EXPECT_EQ(st.values().ToVector<float>(), (std::vector<float>{1, 4, 3, 2}));
  // Reducing every axis needs no volume either.
  Tensor total = ReduceSum(st, {0, 1, 2});
  EXPECT_EQ(total.ToVector<float>(), std::vector<float>{10});
  // A dense result of that shape cannot exist: refused, not wrapped.
  for (const auto& shape : {kOnePast, kWraps}) {
    SparseTensor one = OneEntry({0, 1}, shape);
    ExpectRefused([&] { one.ToDense(); }, "ToDense");
  }
  SparseTensor one = OneEntry({1, 1}, kWraps);
  one.Coalesce();
  EXPECT_EQ(one.nnz(), 1);
}

TEST(SizeEdges, SparseConcatenationRefusesADimSumThatOverflows) {
  SparseTensor a = OneEntry({0, 0}, {1, k2to62 - 1});
  SparseTensor b = OneEntry({0, 1}, {1, k2to62});
  SparseTensor two = SparseTensor::Concat({a, b}, 1);
  EXPECT_EQ(two.shape(), (std::vector<int64_t>{1, kMax}));
  EXPECT_EQ(two.indices().ToVector<int64_t>(), (std::vector<int64_t>{0, 0, 0, k2to62}));
  ExpectRefused([&] { SparseTensor::Concat({a, b, a}, 1); }, "Concat");
  ExpectRefused(
      [&] {
        SparseTensor::Concat({OneEntry({0, 0}, {1, kMax}), OneEntry({0, 0}, {1, 1})}, 1);
      },
      "Concat");
}

TEST(SizeEdges, CompressedPointersAreCheckedInWideArithmetic) {
  // The last pointer must equal nnz and pointers must not decrease; a pointer near the top of
  // int64 with few entries is an Error, and so is one that wrapped negative.
  Tensor minor = Tensor::FromVector(std::vector<int64_t>{0, 1});
  Tensor vals = Tensor::FromVector(std::vector<float>{1, 2});
  for (int64_t bad : {kMax, std::numeric_limits<int64_t>::min(), int64_t{1} << 31}) {
    ExpectRefused(
        [&] {
          CsrMatrix::Create(Tensor::FromVector(std::vector<int64_t>{0, bad, 2}), minor, vals,
                            {2, 2});
        },
        "CsrMatrix");
  }
  CsrMatrix ok =
      CsrMatrix::Create(Tensor::FromVector(std::vector<int64_t>{0, 1, 2}), minor, vals, {2, kMax});
  EXPECT_EQ(ok.ToSparse().indices().ToVector<int64_t>(), (std::vector<int64_t>{0, 0, 1, 1}));
  // [kMax, 2]: the pointer array would need kMax + 1 entries, which no index count fits.
  ExpectRefused([&] { CsrMatrix::FromSparse(OneEntry({0, 0}, {kMax, 2})); }, "CsrMatrix");
}

TEST(SizeEdges, JaggedLengthsAndPaddingRefuseSumsAndProductsThatOverflow) {
  Tensor values = Tensor::FromVector(std::vector<float>{1, 2, 3});
  ExpectRefused(
      [&] {
        JaggedTensor::FromLengths(values, Tensor::FromVector(std::vector<int64_t>{kMax, 1, 3}));
      },
      "FromLengths");
  ExpectRefused(
      [&] {
        JaggedTensor::FromLengths(values, Tensor::FromVector(std::vector<int64_t>{kMax, kMax, 4}));
      },
      "FromLengths");
  JaggedTensor j =
      JaggedTensor::FromLengths(values, Tensor::FromVector(std::vector<int64_t>{1, 2}));
  // [B, max_length] with B * max_length past int64.
  ExpectRefused([&] { j.ToPadded(kMax / 2 + 1, Scalar(0.0f)); }, "ToPadded");
}

TEST(SizeEdges, SegmentOutputsRefuseRowCountsThatOverflow) {
  Tensor data = Tensor::FromVector(std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}, {2, 4});
  Tensor ids = Tensor::FromVector(std::vector<int64_t>{0, 1});
  ExpectRefused([&] { UnsortedSegmentReduce(data, ids, kMax / 4 + 1, Combiner::kSum); },
                "UnsortedSegmentReduce");
  ExpectRefused([&] { SegmentReduce(data, ids, kMax / 2, Combiner::kMax); }, "SegmentReduce");
  ExpectRefused(
      [&] {
        SparseSegmentReduce(data, Tensor::FromVector(std::vector<int64_t>{0, 1}), ids, kMax / 4 + 1,
                            Combiner::kMean);
      },
      "SparseSegmentReduce");
}

}  // namespace
}  // namespace tensorkit
