// FillEmptyRows and FillEmptyRowsGrad against TensorFlow's kernel tests and the naive reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "reference/features_reference.h"
#include "staged_outputs.h"
#include "tensorkit/common/simd_path.h"
#include "tensorkit/dense/ops.h"
#include "tensorkit/dense/outputs.h"
#include "tensorkit/dense/views.h"
#include "tensorkit/features/fill_device.h"
#include "tensorkit/features/segment.h"
#include "test_util.h"

namespace tensorkit {
namespace {

using testing::AtThreadCounts;
using testing::ExpectError;

SparseTensor Make(std::vector<int64_t> idx, const Tensor& values, std::vector<int64_t> shape) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  const int64_t nnz = rank == 0 ? 0 : static_cast<int64_t>(idx.size()) / rank;
  return SparseTensor::Create(Tensor::FromVector<int64_t>(std::move(idx), {nnz, rank}), values,
                              std::move(shape));
}

std::vector<int> Iota(int n) {
  std::vector<int> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = i;
  return v;
}

// TensorFlow's 5x6 test tensor (sparse_ops_test.py, SparseFillEmptyRowsTest).
const std::vector<int64_t> k5x6 = {0, 0, 1, 0, 1, 3, 1, 4, 3, 2, 3, 3};

TEST(FillEmptyRows, TensorFlowFillNumber) {
  SparseTensor st = Make(k5x6, Tensor::FromVector<int32_t>({0, 10, 13, 14, 32, 33}), {5, 6});
  FillEmptyRowsResult r = FillEmptyRows(st, -1);
  EXPECT_EQ(r.output.indices().ToVector<int64_t>(),
            (std::vector<int64_t>{0, 0, 1, 0, 1, 3, 1, 4, 2, 0, 3, 2, 3, 3, 4, 0}));
  EXPECT_EQ(r.output.values().ToVector<int32_t>(),
            (std::vector<int32_t>{0, 10, 13, 14, -1, 32, 33, -1}));
  EXPECT_EQ(r.output.shape(), (std::vector<int64_t>{5, 6}));
  EXPECT_EQ(r.empty_row_indicator.ToVector<bool>(),
            (std::vector<bool>{false, false, true, false, true}));
  EXPECT_EQ(r.reverse_index_map.ToVector<int64_t>(), (std::vector<int64_t>{0, 1, 2, 3, 5, 6}));
  EXPECT_EQ(r.output.order(), (std::vector<int>{0, 1}));
}

TEST(FillEmptyRows, TensorFlowFillFloatAndString) {
  SparseTensor f = Make(k5x6, Tensor::FromVector<double>({0, 10, 13, 14, 32, 33}), {5, 6});
  EXPECT_EQ(FillEmptyRows(f, -1.0).output.values().ToVector<double>(),
            (std::vector<double>{0, 10, 13, 14, -1, 32, 33, -1}));
  SparseTensor s =
      Make(k5x6, Tensor::FromVector<std::string>({"a", "b", "c", "d", "e", "f"}), {5, 6});
  FillEmptyRowsResult r = FillEmptyRows(s, std::string(""));
  EXPECT_EQ(r.output.values().ToVector<std::string>(),
            (std::vector<std::string>{"a", "b", "c", "d", "", "e", "f", ""}));
  EXPECT_EQ(r.empty_row_indicator.ToVector<bool>(),
            (std::vector<bool>{false, false, true, false, true}));
}

TEST(FillEmptyRows, TensorFlowNoEmptyRowsSharesTheInput) {
  Tensor values = Tensor::FromVector<int32_t>({0, 10, 13, 14});
  SparseTensor st = Make({0, 0, 1, 0, 1, 3, 1, 4}, values, {2, 6});
  FillEmptyRowsResult r = FillEmptyRows(st, -1);
  EXPECT_TRUE(SharesStorage(r.output.values(), values));
  EXPECT_TRUE(SharesStorage(r.output.indices(), st.indices()));
  EXPECT_EQ(r.empty_row_indicator.ToVector<bool>(), (std::vector<bool>{false, false}));
  EXPECT_EQ(r.reverse_index_map.ToVector<int64_t>(), (std::vector<int64_t>{0, 1, 2, 3}));
}

TEST(FillEmptyRows, TensorFlowUnorderedKeepsInputOrderWithinARow) {
  // testNoEmptyRowsAndUnordered.
  FillEmptyRowsResult a = FillEmptyRows(
      Make({1, 2, 1, 3, 0, 1, 0, 3}, Tensor::FromVector<int64_t>({1, 3, 2, 4}), {2, 5}), -1);
  EXPECT_EQ(a.output.indices().ToVector<int64_t>(), (std::vector<int64_t>{0, 1, 0, 3, 1, 2, 1, 3}));
  EXPECT_EQ(a.output.values().ToVector<int64_t>(), (std::vector<int64_t>{2, 4, 1, 3}));
  EXPECT_EQ(a.reverse_index_map.ToVector<int64_t>(), (std::vector<int64_t>{2, 3, 0, 1}));
  EXPECT_EQ(a.output.order(), (std::vector<int>{0, 1}));  // the result happens to be sorted
  // testUnordered: row 2 keeps [2 3] before [2 2], so the output is not sorted.
  FillEmptyRowsResult b = FillEmptyRows(
      Make({2, 3, 2, 2, 0, 1, 0, 3}, Tensor::FromVector<int64_t>({1, 3, 2, 4}), {3, 5}), -1);
  EXPECT_EQ(b.output.indices().ToVector<int64_t>(),
            (std::vector<int64_t>{0, 1, 0, 3, 1, 0, 2, 3, 2, 2}));
  EXPECT_EQ(b.output.values().ToVector<int64_t>(), (std::vector<int64_t>{2, 4, -1, 1, 3}));
  EXPECT_EQ(b.empty_row_indicator.ToVector<bool>(), (std::vector<bool>{false, true, false}));
  EXPECT_FALSE(b.output.OrderKnown());
}

TEST(FillEmptyRows, TensorFlowEmptyInputs) {
  FillEmptyRowsResult a = FillEmptyRows(Make({}, Tensor::Zeros({0}, DType::kFloat32), {2, 5}), -1);
  EXPECT_EQ(a.output.indices().ToVector<int64_t>(), (std::vector<int64_t>{0, 0, 1, 0}));
  EXPECT_EQ(a.output.values().ToVector<float>(), (std::vector<float>{-1, -1}));
  EXPECT_EQ(a.empty_row_indicator.ToVector<bool>(), (std::vector<bool>{true, true}));
  EXPECT_EQ(a.reverse_index_map.NumElements(), 0);
  FillEmptyRowsResult b = FillEmptyRows(Make({}, Tensor::Zeros({0}, DType::kFloat32), {0, 3}), -1);
  EXPECT_EQ(b.output.nnz(), 0);
  EXPECT_EQ(b.output.indices().Dims(), (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(b.output.shape(), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(b.empty_row_indicator.NumElements(), 0);
}

TEST(FillEmptyRows, BadInputsAreErrors) {
  // TensorFlow's testInvalidIndices: entry 2 has row 99 of 2.
  ExpectError(
      [] {
        FillEmptyRows(
            Make({1, 2, 1, 3, 99, 1, 99, 3}, Tensor::FromVector<int64_t>({1, 3, 2, 4}), {2, 5}),
            -1);
      },
      ErrorCode::kOutOfRange, {"FillEmptyRows", "entry 2 at [99 1]", "axis 0: 99 >= 2"});
  // Other axes are checked too (TensorFlow checks only the row), negative ones as well.
  ExpectError(
      [] {
        FillEmptyRows(Make({0, 0, 1, 5}, Tensor::FromVector<int64_t>({1, 2}), {2, 5}), 0);
      },
      ErrorCode::kOutOfRange, {"entry 1 at [1 5]", "axis 1"});
  ExpectError(
      [] {
        FillEmptyRows(Make({1, 0, 0, -1}, Tensor::FromVector<int64_t>({1, 2}), {2, 5}), 0);
      },
      ErrorCode::kOutOfRange, {"entry 1 at [0 -1]", "axis 1: -1 < 0"});
  ExpectError(
      [] {
        FillEmptyRows(Make({0, 0}, Tensor::FromVector<int64_t>({1}), {0, 5}), 0);
      },
      ErrorCode::kInvalidArgument, {"FillEmptyRows", "no rows", "1 entries"});
  ExpectError(
      [] {
        FillEmptyRows(SparseTensor::Create(Tensor::Zeros({1, 0}, DType::kInt64),
                                           Tensor::FromVector<float>({1}), {}),
                      0);
      },
      ErrorCode::kShapeMismatch, {"rank >= 1"});
  ExpectError([] { FillEmptyRows(SparseTensor(), 0); }, ErrorCode::kInvalidArgument,
              {"FillEmptyRows", "default-constructed"});
  SparseTensor s = Make({0, 0}, Tensor::FromVector<std::string>({"x"}), {2, 2});
  ExpectError([&] { FillEmptyRows(s, 0); }, ErrorCode::kDTypeMismatch, {"std::string"});
  SparseTensor n = Make({0, 0}, Tensor::FromVector<float>({1}), {2, 2});
  ExpectError([&] { FillEmptyRows(n, std::string("x")); }, ErrorCode::kDTypeMismatch,
              {"float32", "Scalar"});
}

// Random entries of `shape` (repeats allowed), about `empty_frac` of the rows left empty,
// sorted in C order or shuffled.
struct RandomInput {
  std::vector<int64_t> idx;
  int64_t nnz = 0;
};

RandomInput RandomRows(const std::vector<int64_t>& shape, int64_t nnz, double empty_frac,
                       bool sorted, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const int rank = static_cast<int>(shape.size());
  std::vector<int64_t> used_rows;
  for (int64_t r = 0; r < shape[0]; ++r) {
    if (std::uniform_real_distribution<double>(0, 1)(rng) >= empty_frac) used_rows.push_back(r);
  }
  RandomInput in;
  if (used_rows.empty()) return in;
  std::vector<std::vector<int64_t>> rows;
  for (int64_t i = 0; i < nnz; ++i) {
    std::vector<int64_t> row(static_cast<size_t>(rank));
    row[0] = used_rows[rng() % used_rows.size()];
    for (int a = 1; a < rank; ++a) row[a] = static_cast<int64_t>(rng() % shape[a]);
    rows.push_back(row);
  }
  if (sorted) std::sort(rows.begin(), rows.end());
  for (const auto& row : rows) in.idx.insert(in.idx.end(), row.begin(), row.end());
  in.nnz = nnz;
  return in;
}

template <typename T>
std::vector<T> RandomValues(int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<T> v;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t x = static_cast<int64_t>(rng() % 200) - 100;
    if constexpr (std::is_same_v<T, std::string>) {
      v.push_back("s" + std::to_string(x));
    } else if constexpr (std::is_same_v<T, bool>) {
      v.push_back(x > 0);
    } else if constexpr (std::is_same_v<T, uint8_t>) {
      v.push_back(static_cast<T>(x + 100));
    } else {
      v.push_back(static_cast<T>(static_cast<float>(x) / 4));
    }
  }
  return v;
}

template <typename T>
void CheckAgainstReference(const std::vector<int64_t>& shape, int64_t nnz, double empty_frac,
                           bool sorted, uint64_t seed) {
  SCOPED_TRACE(::testing::Message() << DTypeName(DTypeOf<T>) << " shape " << ShapeString(shape)
                                    << " nnz " << nnz << " sorted " << sorted);
  const RandomInput in = RandomRows(shape, nnz, empty_frac, sorted, seed);
  const int rank = static_cast<int>(shape.size());
  const std::vector<T> values = RandomValues<T>(in.nnz, seed + 1);
  const SparseTensor st = SparseTensor::Create(Tensor::FromVector<int64_t>(in.idx, {in.nnz, rank}),
                                               Tensor::FromVector<T>(values), shape);
  T fill;
  if constexpr (std::is_same_v<T, std::string>) {
    fill = "fill";
  } else {
    fill = static_cast<T>(7);
  }
  const ref::FilledRows<T> want = ref::FillEmptyRows<T>(in.idx, values, rank, shape[0], fill);
  const auto results = AtThreadCounts({1, 2}, [&] {
    if constexpr (std::is_same_v<T, std::string>) {
      return FillEmptyRows(st, fill);
    } else {
      return FillEmptyRows(st, Scalar(7));
    }
  });
  for (const FillEmptyRowsResult& r : results) {
    EXPECT_EQ(r.output.indices().ToVector<int64_t>(), want.indices);
    EXPECT_EQ(r.output.values().ToVector<T>(), want.values);
    EXPECT_EQ(r.empty_row_indicator.ToVector<bool>(), want.empty);
    EXPECT_EQ(r.reverse_index_map.ToVector<int64_t>(), want.reverse);
    EXPECT_EQ(r.output.shape(), shape);
    // The order is claimed exactly when it holds.
    EXPECT_EQ(r.output.OrderKnown(), r.output.SortedIn(Iota(rank)));
    if (sorted) {
      EXPECT_TRUE(r.output.OrderKnown());
    }
  }
}

TEST(FillEmptyRows, MatchesTheReferenceForEveryDType) {
  for (bool sorted : {false, true}) {
    CheckAgainstReference<bool>({30, 4}, 40, 0.3, sorted, 1);
    CheckAgainstReference<int8_t>({30, 4}, 40, 0.3, sorted, 2);
    CheckAgainstReference<uint8_t>({30, 4}, 40, 0.3, sorted, 3);
    CheckAgainstReference<int16_t>({30, 4}, 40, 0.3, sorted, 4);
    CheckAgainstReference<int32_t>({30, 4}, 40, 0.3, sorted, 5);
    CheckAgainstReference<int64_t>({30, 4}, 40, 0.3, sorted, 6);
    CheckAgainstReference<Half>({30, 4}, 40, 0.3, sorted, 7);
    CheckAgainstReference<BFloat16>({30, 4}, 40, 0.3, sorted, 8);
    CheckAgainstReference<float>({30, 4}, 40, 0.3, sorted, 9);
    CheckAgainstReference<double>({30, 4}, 40, 0.3, sorted, 10);
    CheckAgainstReference<std::string>({30, 4}, 40, 0.3, sorted, 11);
  }
}

TEST(FillEmptyRows, MatchesTheReferenceForRanksAndEmptiness) {
  for (bool sorted : {false, true}) {
    CheckAgainstReference<float>({50}, 30, 0.5, sorted, 20);        // rank 1
    CheckAgainstReference<float>({20, 3, 4}, 60, 0.2, sorted, 21);  // rank 3
    CheckAgainstReference<float>({20, 3, 4}, 0, 0.0, sorted, 22);   // no entries
    CheckAgainstReference<float>({20, 3}, 50, 0.0, sorted, 23);     // no empty rows likely
    CheckAgainstReference<int64_t>({1, 1}, 3, 0.0, sorted, 24);     // repeats in one cell
    CheckAgainstReference<float>({100, 2}, 10, 0.95, sorted, 25);   // mostly empty
  }
}

TEST(FillEmptyRows, LargeInputsAreTheSameAtEveryThreadCount) {
  // Enough entries and rows for several chunks and row tasks.
  for (bool sorted : {false, true}) {
    const std::vector<int64_t> shape = {30000, 50};
    const RandomInput in = RandomRows(shape, 200000, 0.1, sorted, 30 + sorted);
    const SparseTensor st =
        SparseTensor::Create(Tensor::FromVector<int64_t>(in.idx, {in.nnz, 2}),
                             Tensor::FromVector<float>(RandomValues<float>(in.nnz, 31)), shape);
    const auto r = AtThreadCounts({1, 2}, [&] { return FillEmptyRows(st, 0.5); });
    EXPECT_EQ(r[0].output.indices().ToVector<int64_t>(), r[1].output.indices().ToVector<int64_t>());
    EXPECT_EQ(r[0].output.values().ToVector<float>(), r[1].output.values().ToVector<float>());
    EXPECT_EQ(r[0].reverse_index_map.ToVector<int64_t>(),
              r[1].reverse_index_map.ToVector<int64_t>());
    // Every input entry lands where the reverse map says, and rows come out grouped.
    const std::vector<int64_t> out = r[1].output.indices().ToVector<int64_t>();
    const std::vector<int64_t> rev = r[1].reverse_index_map.ToVector<int64_t>();
    for (int64_t i = 0; i < in.nnz; i += 997) {
      EXPECT_EQ(out[rev[i] * 2], in.idx[i * 2]);
      EXPECT_EQ(out[rev[i] * 2 + 1], in.idx[i * 2 + 1]);
    }
    for (size_t i = 2; i < out.size(); i += 2) ASSERT_LE(out[i - 2], out[i]);
  }
}

// The row check of sorted rank-2 input has a vector loop per SIMD path: every path gives the
// same outputs (and order claim), or the same error, for clean input and for a bad entry at
// either end, at odd and even places and on both sides of the chunks' edges (65536 entries).
TEST(FillEmptyRows, TheRowCheckIsTheSameOnEverySimdPath) {
  const std::vector<int64_t> shape = {40000, 30};
  const RandomInput in = RandomRows(shape, 140000, 0.1, true, 51);
  const Tensor values = Tensor::FromVector<float>(RandomValues<float>(in.nnz, 52));
  // (entry, coordinate, new value): out of bounds both ways, a row below its predecessor's, a
  // column below its predecessor's in the same row (allowed: only the order claim changes).
  std::vector<std::tuple<int64_t, int, int64_t>> edits = {{-1, 0, 0}};
  for (int64_t at : {int64_t{0}, int64_t{1}, int64_t{2}, int64_t{65534}, int64_t{65535},
                     int64_t{65536}, int64_t{65537}, in.nnz - 2, in.nnz - 1}) {
    edits.push_back({at, 1, shape[1]});
    edits.push_back({at, 0, -1});
    if (at > 0) edits.push_back({at, 0, in.idx[2 * (at - 1)] - 1});
    if (at > 0 && in.idx[2 * at] == in.idx[2 * (at - 1)] && in.idx[2 * (at - 1) + 1] > 0) {
      edits.push_back({at, 1, in.idx[2 * (at - 1) + 1] - 1});
    }
  }
  for (const auto& [at, axis, value] : edits) {
    std::vector<int64_t> idx = in.idx;
    if (at >= 0) idx[2 * at + axis] = value;
    const SparseTensor st =
        SparseTensor::Create(Tensor::FromVector<int64_t>(idx, {in.nnz, 2}), values, shape);
    SCOPED_TRACE(::testing::Message() << "entry " << at << " axis " << axis << " = " << value);
    std::string want_error;
    FillEmptyRowsResult want;
    bool first = true;
    for (SimdPath path : {SimdPath::kDefault, SimdPath::kAvx2, SimdPath::kAvx512}) {
      if (!SimdPathSupported(path)) continue;
      SetSimdPathForTesting(path);
      std::string error;
      FillEmptyRowsResult got;
      try {
        got = FillEmptyRows(st, Scalar(2));
      } catch (const Error& e) {
        error = e.what();
      }
      if (first) {
        want_error = error;
        want = got;
        first = false;
        continue;
      }
      EXPECT_EQ(error, want_error);
      if (!error.empty() || !want_error.empty()) continue;
      EXPECT_EQ(got.output.indices().ToVector<int64_t>(),
                want.output.indices().ToVector<int64_t>());
      EXPECT_EQ(got.output.values().ToVector<float>(), want.output.values().ToVector<float>());
      EXPECT_EQ(got.output.order(), want.output.order());
      EXPECT_EQ(got.empty_row_indicator.ToVector<bool>(),
                want.empty_row_indicator.ToVector<bool>());
      EXPECT_EQ(got.reverse_index_map.ToVector<int64_t>(),
                want.reverse_index_map.ToVector<int64_t>());
    }
    SetSimdPathForTesting(BestSimdPath());
  }
}

// Rows in order, columns not (TensorFlow's ordered-rows case): the reference's output at every
// thread count, with entries of one row and gaps of empty rows on both sides of the fixed
// chunks' edges (65536 entries), the order claimed only when the columns are in order too.
TEST(FillEmptyRows, OrderedRowsWithUnorderedColumnsAcrossChunks) {
  struct Case {
    std::vector<int64_t> shape;
    int64_t nnz;
    double empty_frac;
  };
  // Few rows: the reference is quadratic.
  for (const Case& c : {Case{{300, 50}, 140000, 0.1}, Case{{7, 3}, 140000, 0.3},
                        Case{{200, 2, 3}, 150000, 0.5}, Case{{5}, 70000, 0.0}}) {
    RandomInput in = RandomRows(c.shape, c.nnz, c.empty_frac, false, 41);
    const int rank = static_cast<int>(c.shape.size());
    std::vector<int64_t> perm(static_cast<size_t>(in.nnz));
    std::iota(perm.begin(), perm.end(), 0);
    std::stable_sort(perm.begin(), perm.end(),
                     [&](int64_t a, int64_t b) { return in.idx[a * rank] < in.idx[b * rank]; });
    std::vector<int64_t> idx;
    for (int64_t p : perm) {
      idx.insert(idx.end(), in.idx.begin() + p * rank, in.idx.begin() + (p + 1) * rank);
    }
    for (bool columns_sorted : {false, true}) {
      if (columns_sorted) {
        std::vector<std::vector<int64_t>> rows;
        for (int64_t i = 0; i < in.nnz; ++i) {
          rows.emplace_back(idx.begin() + i * rank, idx.begin() + (i + 1) * rank);
        }
        std::sort(rows.begin(), rows.end());
        idx.clear();
        for (const auto& row : rows) idx.insert(idx.end(), row.begin(), row.end());
      }
      SCOPED_TRACE(::testing::Message()
                   << ShapeString(c.shape) << " columns sorted " << columns_sorted);
      const std::vector<float> values = RandomValues<float>(in.nnz, 42);
      const SparseTensor st = SparseTensor::Create(Tensor::FromVector<int64_t>(idx, {in.nnz, rank}),
                                                   Tensor::FromVector<float>(values), c.shape);
      const ref::FilledRows<float> want =
          ref::FillEmptyRows<float>(idx, values, rank, c.shape[0], 7.0f);
      for (const FillEmptyRowsResult& r :
           AtThreadCounts({1, 2, 3}, [&] { return FillEmptyRows(st, Scalar(7)); })) {
        EXPECT_EQ(r.output.indices().ToVector<int64_t>(), want.indices);
        EXPECT_EQ(r.output.values().ToVector<float>(), want.values);
        EXPECT_EQ(r.empty_row_indicator.ToVector<bool>(), want.empty);
        EXPECT_EQ(r.reverse_index_map.ToVector<int64_t>(), want.reverse);
        EXPECT_EQ(r.output.OrderKnown(), r.output.SortedIn(Iota(rank)));
        EXPECT_EQ(r.output.OrderKnown(), columns_sorted || rank == 1);
      }
    }
  }
  // One row fills the first chunk; the next entry, in the second chunk, skips rows 1 to 4.
  std::vector<int64_t> idx;
  for (int64_t i = 0; i < 65536; ++i) idx.insert(idx.end(), {0, 65535 - i});
  idx.insert(idx.end(), {5, 0, 5, 1, 8, 0});
  const int64_t n = static_cast<int64_t>(idx.size()) / 2;
  const std::vector<float> values = RandomValues<float>(n, 43);
  const SparseTensor st = SparseTensor::Create(Tensor::FromVector<int64_t>(idx, {n, 2}),
                                               Tensor::FromVector<float>(values), {10, 65536});
  const ref::FilledRows<float> want = ref::FillEmptyRows<float>(idx, values, 2, 10, 7.0f);
  for (const FillEmptyRowsResult& r :
       AtThreadCounts({1, 2}, [&] { return FillEmptyRows(st, Scalar(7)); })) {
    EXPECT_EQ(r.output.indices().ToVector<int64_t>(), want.indices);
    EXPECT_EQ(r.output.values().ToVector<float>(), want.values);
    EXPECT_EQ(r.empty_row_indicator.ToVector<bool>(), want.empty);
    EXPECT_EQ(r.reverse_index_map.ToVector<int64_t>(), want.reverse);
    EXPECT_FALSE(r.output.OrderKnown());
  }
}

// Unsorted rows with at least 65536 entries take the bucketed placement (Note [bucketed
// placement]): the reference's outputs at 1 to 3 threads, for several ranks and dtypes, rows
// packed into one bucket or spread over many, one row holding most entries, and the C order
// claimed exactly when every row's columns came in order.
template <typename T>
void CheckBucketed(const std::vector<int64_t>& shape, int64_t nnz, double empty_frac,
                   int arrangement, uint64_t seed) {
  SCOPED_TRACE(::testing::Message() << DTypeName(DTypeOf<T>) << " shape " << ShapeString(shape)
                                    << " arrangement " << arrangement);
  RandomInput in = RandomRows(shape, nnz, empty_frac, false, seed);
  const int rank = static_cast<int>(shape.size());
  std::vector<std::vector<int64_t>> rows;
  for (int64_t i = 0; i < in.nnz; ++i) {
    rows.emplace_back(in.idx.begin() + i * rank, in.idx.begin() + (i + 1) * rank);
    if (arrangement == 1 && i % 4 != 0) rows.back()[0] = shape[0] / 2;  // one row holds most
  }
  if (arrangement == 2) {
    // Columns first: rows out of order, each row's columns in order.
    std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
      return std::vector<int64_t>(a.begin() + 1, a.end()) <
                 std::vector<int64_t>(b.begin() + 1, b.end()) ||
             (std::vector<int64_t>(a.begin() + 1, a.end()) ==
                  std::vector<int64_t>(b.begin() + 1, b.end()) &&
              a[0] < b[0]);
    });
  }
  std::vector<int64_t> idx;
  for (const auto& row : rows) idx.insert(idx.end(), row.begin(), row.end());
  const std::vector<T> values = RandomValues<T>(in.nnz, seed + 1);
  const SparseTensor st = SparseTensor::Create(Tensor::FromVector<int64_t>(idx, {in.nnz, rank}),
                                               Tensor::FromVector<T>(values), shape);
  const ref::FilledRows<T> want =
      ref::FillEmptyRows<T>(idx, values, rank, shape[0], static_cast<T>(7));
  for (const FillEmptyRowsResult& r :
       AtThreadCounts({1, 2, 3}, [&] { return FillEmptyRows(st, Scalar(7)); })) {
    EXPECT_EQ(r.output.indices().ToVector<int64_t>(), want.indices);
    EXPECT_EQ(r.output.values().ToVector<T>(), want.values);
    EXPECT_EQ(r.empty_row_indicator.ToVector<bool>(), want.empty);
    EXPECT_EQ(r.reverse_index_map.ToVector<int64_t>(), want.reverse);
    EXPECT_EQ(r.output.OrderKnown(), r.output.SortedIn(Iota(rank)));
    if (arrangement == 2 || rank == 1) {
      EXPECT_TRUE(r.output.OrderKnown());
    }
  }
}

TEST(FillEmptyRows, BucketedPlacementMatchesTheReference) {
  // Few rows: the reference is quadratic.
  CheckBucketed<float>({300, 50}, 140000, 0.1, 0, 51);
  CheckBucketed<float>({300, 50}, 140000, 0.1, 1, 52);
  CheckBucketed<float>({300, 50}, 140000, 0.1, 2, 53);
  CheckBucketed<double>({40}, 70000, 0.2, 0, 54);
  CheckBucketed<int8_t>({90, 3, 4}, 70000, 0.3, 0, 55);
  CheckBucketed<int64_t>({1, 9}, 70000, 0.0, 0, 56);  // one row, one bucket
  CheckBucketed<bool>({200, 7}, 66000, 0.6, 2, 57);
}

// Many rows of a few entries each (too many for the quadratic reference): the bucketed
// placement gives what the ordered-rows path gives for the same entries sorted stably by row,
// the reverse map carried through that sort.
TEST(FillEmptyRows, BucketedPlacementMatchesTheOrderedRowsPath) {
  for (const std::vector<int64_t>& shape :
       {std::vector<int64_t>{200000, 10}, std::vector<int64_t>{300000}}) {
    const int rank = static_cast<int>(shape.size());
    const RandomInput in = RandomRows(shape, 400000, 0.4, false, 61);
    std::vector<int64_t> perm(static_cast<size_t>(in.nnz));
    std::iota(perm.begin(), perm.end(), 0);
    std::stable_sort(perm.begin(), perm.end(),
                     [&](int64_t a, int64_t b) { return in.idx[a * rank] < in.idx[b * rank]; });
    std::vector<int64_t> sorted_idx;
    const std::vector<float> values = RandomValues<float>(in.nnz, 62);
    std::vector<float> sorted_values;
    for (int64_t p : perm) {
      sorted_idx.insert(sorted_idx.end(), in.idx.begin() + p * rank,
                        in.idx.begin() + (p + 1) * rank);
      sorted_values.push_back(values[static_cast<size_t>(p)]);
    }
    const FillEmptyRowsResult want =
        FillEmptyRows(SparseTensor::Create(Tensor::FromVector<int64_t>(sorted_idx, {in.nnz, rank}),
                                           Tensor::FromVector<float>(sorted_values), shape),
                      Scalar(-1));
    const std::vector<int64_t> sorted_rev = want.reverse_index_map.ToVector<int64_t>();
    std::vector<int64_t> want_rev(static_cast<size_t>(in.nnz));
    for (size_t j = 0; j < perm.size(); ++j) want_rev[static_cast<size_t>(perm[j])] = sorted_rev[j];
    const SparseTensor st =
        SparseTensor::Create(Tensor::FromVector<int64_t>(in.idx, {in.nnz, rank}),
                             Tensor::FromVector<float>(values), shape);
    for (const FillEmptyRowsResult& r :
         AtThreadCounts({1, 2}, [&] { return FillEmptyRows(st, Scalar(-1)); })) {
      EXPECT_EQ(r.output.indices().ToVector<int64_t>(), want.output.indices().ToVector<int64_t>());
      EXPECT_EQ(r.output.values().ToVector<float>(), want.output.values().ToVector<float>());
      EXPECT_EQ(r.empty_row_indicator.ToVector<bool>(), want.empty_row_indicator.ToVector<bool>());
      EXPECT_EQ(r.reverse_index_map.ToVector<int64_t>(), want_rev);
      EXPECT_EQ(r.output.OrderKnown(), r.output.SortedIn(Iota(rank)));
    }
  }
}

TEST(FillEmptyRows, StridedValuesAndIndices) {
  // Values every other element of a longer tensor; indices a transposed view.
  Tensor long_values = Tensor::FromVector<float>({1, 0, 2, 0, 3, 0});
  Tensor values = Slice(long_values, 0, 0, 6, 2);
  Tensor idx_t = Tensor::FromVector<int64_t>({2, 0, 2, 0, 1, 3}, {2, 3});  // rows: [2 0], [0 1],
  Tensor idx = Transpose(idx_t, 0, 1);                                     // [2 3]
  FillEmptyRowsResult r = FillEmptyRows(SparseTensor::Create(idx, values, {4, 4}), 9);
  EXPECT_EQ(r.output.indices().ToVector<int64_t>(),
            (std::vector<int64_t>{0, 1, 1, 0, 2, 0, 2, 3, 3, 0}));
  EXPECT_EQ(r.output.values().ToVector<float>(), (std::vector<float>{2, 9, 1, 3, 9}));
}

// The device body's slots (fill_device.h) with its plan (entries sorted stably by row, each
// row's first grouped entry, the empty rows before each row) and its mapping (a thread per
// grouped entry, a thread per row) write the CPU body's outputs: ranks 1 to 3, sorted and
// shuffled entries, repeats, empty and full batches.
TEST(FillEmptyRows, TheDeviceSlotsGiveTheCpuOutput) {
  struct Case {
    std::vector<int64_t> shape;
    int64_t nnz;
    double empty_frac;
  };
  const std::vector<Case> cases = {{{30, 4}, 40, 0.3}, {{50}, 30, 0.5},  {{20, 3, 4}, 60, 0.2},
                                   {{20, 3}, 0, 0.0},  {{1, 1}, 3, 0.0}, {{100, 2}, 10, 0.95},
                                   {{40, 5}, 200, 0.0}};
  uint64_t seed = 60;
  for (const Case& c : cases) {
    for (bool sorted : {false, true}) {
      SCOPED_TRACE(::testing::Message() << ShapeString(c.shape) << " sorted " << sorted);
      const RandomInput in = RandomRows(c.shape, c.nnz, c.empty_frac, sorted, ++seed);
      const int rank = static_cast<int>(c.shape.size());
      const std::vector<float> values = RandomValues<float>(in.nnz, seed);
      const SparseTensor st =
          SparseTensor::Create(Tensor::FromVector<int64_t>(in.idx, {in.nnz, rank}),
                               Tensor::FromVector<float>(values), c.shape);
      const FillEmptyRowsResult want = FillEmptyRows(st, -3);
      // The plan.
      const int64_t rows = c.shape[0], nnz = in.nnz;
      std::vector<int64_t> perm(static_cast<size_t>(nnz));
      std::iota(perm.begin(), perm.end(), 0);
      std::stable_sort(perm.begin(), perm.end(),
                       [&](int64_t x, int64_t y) { return in.idx[x * rank] < in.idx[y * rank]; });
      std::vector<int64_t> start(static_cast<size_t>(rows) + 1, 0), empties(start.size(), 0);
      for (int64_t i = 0; i < nnz; ++i) ++start[in.idx[i * rank] + 1];
      for (int64_t r = 0; r < rows; ++r) {
        start[r + 1] += start[r];
        empties[r + 1] = empties[r] + (start[r + 1] == start[r]);
      }
      // The kernels.
      const int64_t out_n = nnz + empties[rows];
      std::vector<int64_t> out_idx(static_cast<size_t>(out_n * rank), -1), rev(perm.size());
      std::vector<float> out_val(static_cast<size_t>(out_n), 0);
      std::vector<bool> empty(static_cast<size_t>(rows));
      for (int64_t q = 0; q < nnz; ++q) {
        const int64_t i = perm[q];
        const int64_t slot = features_internal::EntrySlot(empties.data(), in.idx[i * rank], q);
        rev[i] = slot;
        for (int a = 0; a < rank; ++a) out_idx[slot * rank + a] = in.idx[i * rank + a];
        out_val[slot] = values[i];
      }
      for (int64_t r = 0; r < rows; ++r) {
        empty[r] = start[r + 1] == start[r];
        if (!empty[r]) continue;
        const int64_t slot = features_internal::DefaultSlot(start.data(), empties.data(), r);
        for (int a = 0; a < rank; ++a) out_idx[slot * rank + a] = a == 0 ? r : 0;
        out_val[slot] = -3;
      }
      EXPECT_EQ(want.output.indices().ToVector<int64_t>(), out_idx);
      EXPECT_EQ(want.output.values().ToVector<float>(), out_val);
      EXPECT_EQ(want.reverse_index_map.ToVector<int64_t>(), rev);
      EXPECT_EQ(want.empty_row_indicator.ToVector<bool>(), empty);
    }
  }
}

// --- FillEmptyRowsGrad -----------------------------------------------------------------------

// A host framework's buffers: the outputs are written into what the allocator hands out.
TEST(FillEmptyRows, AllocatorBuffersReceiveTheOutputs) {
  for (bool sorted : {true, false}) {
    std::vector<int64_t> idx = k5x6;
    if (!sorted) std::swap_ranges(idx.begin(), idx.begin() + 2, idx.end() - 2);
    SparseTensor st = Make(idx, Tensor::FromVector<float>({0, 10, 13, 14, 32, 33}), {5, 6});
    std::vector<Tensor> given(4);
    std::vector<int> calls;
    CallbackOutputs allocate([&](int k, const std::vector<int64_t>& dims, DType dtype) {
      calls.push_back(k);
      return given[k] = Tensor::Zeros(dims, dtype);
    });
    const FillEmptyRowsResult r = FillEmptyRows(st, -1.0f, allocate);
    const FillEmptyRowsResult want = FillEmptyRows(st, -1.0f);
    EXPECT_EQ(calls, (std::vector<int>{0, 1, 2, 3}));
    EXPECT_TRUE(SharesStorage(r.output.indices(), given[0]));
    EXPECT_TRUE(SharesStorage(r.output.values(), given[1]));
    EXPECT_TRUE(SharesStorage(r.empty_row_indicator, given[2]));
    EXPECT_TRUE(SharesStorage(r.reverse_index_map, given[3]));
    EXPECT_EQ(r.output.indices().ToVector<int64_t>(), want.output.indices().ToVector<int64_t>());
    EXPECT_EQ(r.output.values().ToVector<float>(), want.output.values().ToVector<float>());
    EXPECT_EQ(r.empty_row_indicator.ToVector<bool>(), want.empty_row_indicator.ToVector<bool>());
    EXPECT_EQ(r.reverse_index_map.ToVector<int64_t>(), want.reverse_index_map.ToVector<int64_t>());
    EXPECT_EQ(r.output.order(), want.output.order());
  }
  // An allocator that hands out the wrong tensor is an Error, not a write out of bounds.
  SparseTensor st = Make(k5x6, Tensor::FromVector<float>({0, 10, 13, 14, 32, 33}), {5, 6});
  CallbackOutputs small(
      [](int, const std::vector<int64_t>&, DType dtype) { return Tensor::Zeros({1}, dtype); });
  ExpectError([&] { FillEmptyRows(st, 0.0f, small); }, ErrorCode::kInvalidArgument,
              {"FillEmptyRows", "allocator", "output 0"});
}

using testing::StagedOutputs;

TEST(FillEmptyRows, AnAllocationRefusedHalfWayShowsNoOutput) {
  SparseTensor st = Make(k5x6, Tensor::FromVector<float>({0, 10, 13, 14, 32, 33}), {5, 6});
  for (int fail_at = 0; fail_at < 4; ++fail_at) {
    StagedOutputs out(fail_at);
    ExpectError([&] { FillEmptyRows(st, 0.0f, out); }, ErrorCode::kResourceExhausted,
                {"output " + std::to_string(fail_at)});
    EXPECT_EQ(out.staged.size(), static_cast<size_t>(fail_at));
    EXPECT_EQ(out.commits, 0);
    EXPECT_TRUE(out.shown.empty());
  }
  StagedOutputs out(-1);
  const FillEmptyRowsResult r = FillEmptyRows(st, 0.0f, out);
  EXPECT_EQ(out.commits, 1);
  ASSERT_EQ(out.shown.size(), 4u);
  EXPECT_TRUE(SharesStorage(out.shown[1], r.output.values()));
  EXPECT_EQ(r.output.values().ToVector<float>(),
            FillEmptyRows(st, 0.0f).output.values().ToVector<float>());
  // Nothing moves (sorted, no empty row): only the maps are made; the input is the output.
  SparseTensor full = Make({0, 0, 1, 1}, Tensor::FromVector<float>({1, 2}), {2, 2});
  StagedOutputs maps(-1);
  const FillEmptyRowsResult same = FillEmptyRows(full, 0.0f, maps);
  EXPECT_EQ(maps.shown.size(), 2u);
  EXPECT_TRUE(SharesStorage(same.output.values(), full.values()));
  EXPECT_TRUE(SharesStorage(same.reverse_index_map, maps.shown[1]));
  EXPECT_EQ(same.reverse_index_map.ToVector<int64_t>(), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(same.empty_row_indicator.ToVector<bool>(), (std::vector<bool>{false, false}));
}

TEST(FillEmptyRowsGrad, TensorFlowCases) {
  // The gradient of the 5x6 fill: entries moved to 0 1 2 3 5 6; slots 4 and 7 were filled.
  FillEmptyRowsGradResult g =
      FillEmptyRowsGrad(Tensor::FromVector<int64_t>({0, 1, 2, 3, 5, 6}),
                        Tensor::FromVector<float>({1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(g.d_values.ToVector<float>(), (std::vector<float>{1, 2, 3, 4, 6, 7}));
  EXPECT_EQ(g.d_default_value.NumAxes(), 0);
  EXPECT_EQ(g.d_default_value.ToVector<float>(), (std::vector<float>{5 + 8}));
  // testSparseFillEmptyRowsGradEmpty.
  FillEmptyRowsGradResult e =
      FillEmptyRowsGrad(Tensor::Zeros({0}, DType::kInt64), Tensor::Zeros({0}, DType::kFloat64));
  EXPECT_EQ(e.d_values.NumElements(), 0);
  EXPECT_EQ(e.d_default_value.ToVector<double>(), (std::vector<double>{0}));
}

TEST(FillEmptyRowsGrad, RoundTripsWithFillEmptyRows) {
  for (uint64_t seed : {40, 41}) {
    const std::vector<int64_t> shape = {200, 7};
    const RandomInput in = RandomRows(shape, 300, 0.3, seed == 41, seed);
    const SparseTensor st =
        SparseTensor::Create(Tensor::FromVector<int64_t>(in.idx, {in.nnz, 2}),
                             Tensor::FromVector<float>(RandomValues<float>(in.nnz, seed)), shape);
    const FillEmptyRowsResult f = FillEmptyRows(st, 0);
    const std::vector<double> grad = RandomValues<double>(f.output.nnz(), seed + 5);
    const std::vector<int64_t> rev = f.reverse_index_map.ToVector<int64_t>();
    const auto want = ref::FillEmptyRowsGrad<double>(rev, grad);
    const auto got = AtThreadCounts({1, 2}, [&] {
      return FillEmptyRowsGrad(f.reverse_index_map, Tensor::FromVector<double>(grad));
    });
    for (const auto& g : got) {
      EXPECT_EQ(g.d_values.ToVector<double>(), want.first);
      EXPECT_EQ(g.d_default_value.ToVector<double>(), (std::vector<double>{want.second}));
    }
  }
}

// The device body's sums (fill_device.h: fixed chunks of 65536 positions, each in position
// order, joined in chunk order) give the CPU's bits for a gradient of several chunks whose float
// sums depend on their order.
TEST(FillEmptyRowsGrad, TheDeviceChunkSumsGiveTheCpuBits) {
  std::mt19937_64 rng(70);
  std::uniform_real_distribution<float> x(-1000.0f, 1000.0f);
  const int64_t n_full = 3 * 65536 + 123;
  std::vector<float> grad(static_cast<size_t>(n_full));
  for (float& g : grad) g = x(rng) * (1.0f + x(rng));
  std::vector<int64_t> rev;
  for (int64_t j = 0; j < n_full; ++j) {
    if (rng() % 3 != 0) rev.push_back(j);
  }
  rev.push_back(rev[5]);  // a repeated map entry marks its position once
  const FillEmptyRowsGradResult want =
      FillEmptyRowsGrad(Tensor::FromVector<int64_t>(rev), Tensor::FromVector<float>(grad));
  std::vector<uint8_t> used(static_cast<size_t>(n_full), 0);
  for (int64_t r : rev) used[r] = 1;
  std::vector<float> parts;
  for (int64_t c = 0; c * 65536 < n_full; ++c) {
    parts.push_back(features_internal::UnusedSum<float>(grad.data(), used.data(), c * 65536,
                                                        std::min(n_full, (c + 1) * 65536)));
  }
  const float total =
      features_internal::SumInOrder(parts.data(), static_cast<int64_t>(parts.size()));
  const float got = want.d_default_value.ToVector<float>()[0];
  EXPECT_EQ(std::memcmp(&got, &total, sizeof(float)), 0) << got << " vs " << total;
}

template <typename T>
void CheckGradDType() {
  SCOPED_TRACE(DTypeName(DTypeOf<T>));
  const std::vector<int64_t> rev = {4, 0, 2, 2, 7};
  const std::vector<T> grad = RandomValues<T>(9, 50);
  const auto want = ref::FillEmptyRowsGrad<T>(rev, grad);
  const FillEmptyRowsGradResult g =
      FillEmptyRowsGrad(Tensor::FromVector<int64_t>(rev), Tensor::FromVector<T>(grad));
  EXPECT_EQ(g.d_values.ToVector<T>(), want.first);
  EXPECT_EQ(g.d_default_value.ToVector<T>(), (std::vector<T>{want.second}));
}

TEST(FillEmptyRowsGrad, EveryNumericDType) {
  CheckGradDType<int8_t>();
  CheckGradDType<uint8_t>();
  CheckGradDType<int16_t>();
  CheckGradDType<int32_t>();
  CheckGradDType<int64_t>();
  CheckGradDType<Half>();
  CheckGradDType<BFloat16>();
  CheckGradDType<float>();
  CheckGradDType<double>();
}

TEST(FillEmptyRowsGrad, BadInputsAreErrors) {
  Tensor grad = Tensor::FromVector<float>({1, 2, 3});
  // TensorFlow's CVE fix: every map entry must name a gradient position.
  ExpectError(
      [&] {
        FillEmptyRowsGrad(Tensor::FromVector<int64_t>({0, 3}), grad);
      },
      ErrorCode::kOutOfRange, {"FillEmptyRowsGrad", "reverse_index_map[1] = 3", "[0, 3)"});
  ExpectError([&] { FillEmptyRowsGrad(Tensor::FromVector<int64_t>({-1}), grad); },
              ErrorCode::kOutOfRange, {"reverse_index_map[0] = -1"});
  ExpectError(
      [&] {
        FillEmptyRowsGrad(Tensor::FromVector<int64_t>({0}), Tensor::Zeros({0}, DType::kFloat32));
      },
      ErrorCode::kOutOfRange, {"[0, 0)"});
  ExpectError([&] { FillEmptyRowsGrad(Tensor::FromVector<int32_t>({0}), grad); },
              ErrorCode::kDTypeMismatch, {"int64"});
  ExpectError(
      [&] {
        FillEmptyRowsGrad(Tensor::FromVector<int64_t>({0}, {1, 1}), grad);
      },
      ErrorCode::kShapeMismatch, {"1-D"});
  ExpectError(
      [&] {
        FillEmptyRowsGrad(Tensor::FromVector<int64_t>({0}), Tensor::FromVector<float>({1}, {1, 1}));
      },
      ErrorCode::kShapeMismatch, {"grad_values"});
  ExpectError(
      [&] {
        FillEmptyRowsGrad(Tensor::FromVector<int64_t>({0}), Tensor::FromVector<bool>({true}));
      },
      ErrorCode::kUnsupported, {"FillEmptyRowsGrad", "bool"});
  ExpectError([&] { FillEmptyRowsGrad(Tensor(), grad); }, ErrorCode::kInvalidArgument,
              {"defined tensors"});
}

}  // namespace
}  // namespace tensorkit
