// SparseTensor <-> dense: ToDense and FromDense against naive loops.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numeric>
#include <random>

#include "sparse/sparse_test_util.h"
#include "tensorkit/dense/transpose_internal.h"
#include "tensorkit/sparse/sparse_tensor.h"

namespace tensorkit {
namespace {

using testing::ExpectError;
using testing::Linear;
using testing::MakeSparse;
using testing::NaiveDense;
using testing::Product;
using testing::RandomRows;
using testing::RandomUniqueRows;
using testing::RandomValues;
using testing::Rows;

TEST(SparseToDense, RandomWithRepeatsLastWins) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 10; ++trial) {
    const std::vector<int64_t> shape = {3 + trial % 4, 5, 2 + trial % 3};
    const int64_t n = 1 + static_cast<int64_t>(rng() % 120);  // repeats are likely
    SparseTensor st = MakeSparse<double>(RandomRows(rng, n, shape), RandomValues(rng, n), shape);
    EXPECT_EQ(st.ToDense().ToVector<double>(), NaiveDense<double>(st));
  }
}

TEST(SparseToDense, ManyRepeatsAcrossChunksIsDeterministic) {
  // Enough entries for several scatter buckets and chunks; few cells, so many repeats.
  std::mt19937_64 rng(12);
  const std::vector<int64_t> shape = {64, 64};
  const int64_t n = 200000;
  SparseTensor st = MakeSparse<double>(RandomRows(rng, n, shape), RandomValues(rng, n), shape);
  const std::vector<double> want = NaiveDense<double>(st);
  for (int threads : {1, 2, 4}) {
    SetNumThreads(threads);
    EXPECT_EQ(st.ToDense().ToVector<double>(), want) << threads << " threads";
  }
  // Sorted with repeats: the sorted path widens chunks over runs of equal indices.
  st.Reorder({0, 1});
  const std::vector<double> sorted_want = NaiveDense<double>(st);
  for (int threads : {1, 2, 4}) {
    SetNumThreads(threads);
    EXPECT_EQ(st.ToDense().ToVector<double>(), sorted_want) << threads << " threads";
  }
  SetNumThreads(2);
}

TEST(SparseToDense, WrongClaimedOrderStillLastWins) {
  // Claims order {0, 1} but is not sorted: repeats are not neighbours.
  SparseTensor st = MakeSparse<int32_t>({0, 0, 1, 1, 0, 0}, {1, 2, 3}, {2, 2}, {0, 1});
  EXPECT_EQ(st.ToDense().ToVector<int32_t>(), (std::vector<int32_t>{3, 0, 0, 2}));
}

TEST(SparseToDense, StridedTargetAndNoInitialize) {
  SparseTensor st = MakeSparse<float>({0, 1, 2, 0}, {5, 7}, {3, 2});
  // A [3, 2] view with strides [1, 3] (a transposed [2, 3] buffer) full of 9s.
  Tensor base = Tensor::FromVector<float>({9, 9, 9, 9, 9, 9}, {2, 3});
  Tensor view = base.WithPattern(MakePattern({3, 2}, {1, 3}));
  st.ToDense(&view, /*initialize=*/false);
  EXPECT_EQ(view.ToVector<float>(), (std::vector<float>{9, 5, 9, 9, 7, 9}));
  st.ToDense(&view, /*initialize=*/true);
  EXPECT_EQ(view.ToVector<float>(), (std::vector<float>{0, 5, 0, 0, 7, 0}));
  EXPECT_EQ(base.ToVector<float>(), (std::vector<float>{0, 0, 7, 5, 0, 0}));
}

TEST(SparseToDense, StringsFillAbsentWithEmpty) {
  SparseTensor st = MakeSparse<std::string>({1, 0, 0, 2}, {"b", "a"}, {2, 3});
  Tensor dense = Tensor::FromVector<std::string>({"x", "x", "x", "x", "x", "x"}, {2, 3});
  st.ToDense(&dense, true);
  EXPECT_EQ(dense.ToVector<std::string>(), (std::vector<std::string>{"", "", "a", "b", "", ""}));
}

TEST(SparseToDense, EveryNumericDType) {
  const std::vector<int64_t> rows = {0, 1, 1, 0};
  for (DType d :
       {DType::kBool, DType::kInt8, DType::kUInt8, DType::kInt16, DType::kInt32, DType::kInt64,
        DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64}) {
    Dispatch<kNumericDTypes>(d, "test", [&]<typename T>() {
      SparseTensor st = MakeSparse<T>(rows, {T(1), T(1)}, {2, 2});
      const std::vector<T> got = st.ToDense().ToVector<T>();
      ASSERT_EQ(got.size(), 4u);
      EXPECT_EQ(static_cast<double>(got[1]), 1.0) << DTypeName(d);
      EXPECT_EQ(static_cast<double>(got[0]), 0.0) << DTypeName(d);
      SparseTensor back = SparseTensor::FromDense(st.ToDense());
      EXPECT_EQ(Rows(back), (std::vector<int64_t>{0, 1, 1, 0})) << DTypeName(d);
    });
  }
}

TEST(SparseToDense, EmptyAndRankZero) {
  SparseTensor empty = MakeSparse<float>({}, {}, {2, 3});
  EXPECT_EQ(empty.ToDense().ToVector<float>(), std::vector<float>(6, 0.0f));
  SparseTensor zero_dim = MakeSparse<float>({}, {}, {0, 3});
  EXPECT_EQ(zero_dim.ToDense().NumElements(), 0);
  SparseTensor scalar = MakeSparse<float>({}, {2.5f}, {});
  Tensor s = scalar.ToDense();
  EXPECT_EQ(s.NumAxes(), 0);
  EXPECT_EQ(s.ToVector<float>(), std::vector<float>{2.5f});
}

TEST(SparseToDense, Misuse) {
  SparseTensor st = MakeSparse<float>({0, 1, 1, 3}, {1, 2}, {2, 3});
  ExpectError([&] { st.ToDense(); }, {"ToDense", "entry 1 at [1 3]", "axis 1: 3 >= 3"});
  SparseTensor ok = MakeSparse<float>({0, 1}, {1}, {2, 3});
  Tensor wrong_dims = Tensor::Zeros({3, 2}, DType::kFloat32);
  ExpectError([&] { ok.ToDense(&wrong_dims); }, {"ToDense", "[3 2]", "[2 3]"});
  Tensor wrong_dtype = Tensor::Zeros({2, 3}, DType::kFloat64);
  ExpectError([&] { ok.ToDense(&wrong_dtype); }, {"ToDense", "float64", "float32"});
  ExpectError([&] { ok.ToDense(nullptr); }, {"ToDense", "null"});
  Tensor untouched = Tensor::FromVector<float>({4, 4, 4, 4, 4, 4}, {2, 3});
  EXPECT_THROW(st.ToDense(&untouched), Error);
  EXPECT_EQ(untouched.ToVector<float>(), std::vector<float>(6, 4.0f));  // nothing written
}

// Naive dense equivalent of st with every absent element `fill` (the last of repeats wins).
template <typename T>
std::vector<T> NaiveFilled(const SparseTensor& st, const T& fill) {
  std::vector<T> out(static_cast<size_t>(Product(st.shape())), fill);
  const std::vector<int64_t> rows = Rows(st);
  const std::vector<T> vals = st.values().ToVector<T>();
  for (int64_t i = 0; i < st.nnz(); ++i) out[Linear(rows, i, st.shape())] = vals[i];
  return out;
}

TEST(SparseToDenseFill, RandomSortedAndUnsortedAcrossBlocks) {
  // Sorted entries take the one-pass fill and scatter over blocks of 65536 elements (repeats
  // straddling block ends included); unsorted ones fill first, then scatter.
  std::mt19937_64 rng(21);
  const Tensor fill = Tensor::FromVector<double>({2.5}, {});
  for (int trial = 0; trial < 8; ++trial) {
    std::vector<int64_t> shape;
    for (int a = 0; a < 1 + trial % 4; ++a) shape.push_back(1 + static_cast<int64_t>(rng() % 9));
    if (trial % 2 == 1) shape = {300 + trial, 700};  // several blocks
    const int64_t n = static_cast<int64_t>(rng() % static_cast<uint64_t>(Product(shape) / 2 + 2));
    SparseTensor st = MakeSparse<double>(RandomRows(rng, n, shape), RandomValues(rng, n), shape);
    for (int threads : {1, 2, 3}) {
      SetNumThreads(threads);
      Tensor dense = Tensor::Empty(shape, DType::kFloat64);
      st.ToDense(&dense, fill);
      EXPECT_EQ(dense.ToVector<double>(), NaiveFilled(st, 2.5)) << trial << " unsorted";
    }
    SparseTensor sorted = st;
    std::vector<int> order(shape.size());
    std::iota(order.begin(), order.end(), 0);
    sorted.Reorder(order);
    for (int threads : {1, 2, 3}) {
      SetNumThreads(threads);
      Tensor dense = Tensor::Empty(shape, DType::kFloat64);
      sorted.ToDense(&dense, fill);
      EXPECT_EQ(dense.ToVector<double>(), NaiveFilled(sorted, 2.5)) << trial << " sorted";
    }
  }
  SetNumThreads(2);
}

TEST(SparseToDenseFill, StridedTargetStringsAndEmpty) {
  SparseTensor st = MakeSparse<float>({0, 1, 2, 0}, {5, 7}, {3, 2}, {0, 1});
  Tensor base = Tensor::FromVector<float>({9, 9, 9, 9, 9, 9}, {2, 3});
  Tensor view = base.WithPattern(MakePattern({3, 2}, {1, 3}));  // transposed
  st.ToDense(&view, Tensor::FromVector<float>({-1}, {}));
  EXPECT_EQ(view.ToVector<float>(), (std::vector<float>{-1, 5, -1, -1, 7, -1}));
  SparseTensor words = MakeSparse<std::string>({1, 0, 0, 2}, {"b", "a"}, {2, 3});
  Tensor dense = Tensor::Empty({2, 3}, DType::kString);
  words.ToDense(&dense, Tensor::FromVector<std::string>({"z"}, {}));
  EXPECT_EQ(dense.ToVector<std::string>(),
            (std::vector<std::string>{"z", "z", "a", "b", "z", "z"}));
  SparseTensor empty = MakeSparse<int32_t>({}, {}, {2, 2}, {0, 1});
  Tensor four = Tensor::Empty({2, 2}, DType::kInt32);
  empty.ToDense(&four, Tensor::FromVector<int32_t>({7}, {}));
  EXPECT_EQ(four.ToVector<int32_t>(), std::vector<int32_t>(4, 7));
}

TEST(SparseToDenseFill, Misuse) {
  SparseTensor ok = MakeSparse<float>({0, 1}, {1}, {2, 3});
  Tensor dense = Tensor::Zeros({2, 3}, DType::kFloat32);
  ExpectError([&] { ok.ToDense(&dense, Tensor::FromVector<double>({1}, {})); },
              {"ToDense", "fill", "float32", "float64"});
  ExpectError(
      [&] {
        ok.ToDense(&dense, Tensor::FromVector<float>({1, 2}, {2}));
      },
      {"ToDense", "fill", "scalar", "[2]"});
  // Out of bounds: nothing is written, not even the fill.
  SparseTensor bad = MakeSparse<float>({0, 1, 1, 3}, {1, 2}, {2, 3}, {0, 1});
  Tensor untouched = Tensor::FromVector<float>({4, 4, 4, 4, 4, 4}, {2, 3});
  ExpectError([&] { bad.ToDense(&untouched, Tensor::FromVector<float>({0}, {})); },
              {"ToDense", "entry 1 at [1 3]"});
  EXPECT_EQ(untouched.ToVector<float>(), std::vector<float>(6, 4.0f));
}

// The message ValidateIndices gives for st, or "" when it passes.
std::string ValidationError(const SparseTensor& st) {
  try {
    st.ValidateIndices();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(SparseFillDense, EqualsValidateThenToDenseOnEveryPath) {
  // Sorted unique, sorted with repeats, unsorted and out-of-bounds entries, of ranks 1 to 5, on
  // small targets and across blocks, plain and streamed, at 1 to 3 threads: FillDense(validate)
  // writes what ToDense writes when ValidateIndices passes and throws its Error when not;
  // without validation it is ToDense.
  std::mt19937_64 rng(31);
  const Tensor fill = Tensor::FromVector<double>({-3.0}, {});
  for (int trial = 0; trial < 40; ++trial) {
    std::vector<int64_t> shape;
    for (int a = 0; a < 1 + trial % 5; ++a) shape.push_back(1 + static_cast<int64_t>(rng() % 7));
    if (trial % 4 == 1) shape = {200 + trial, 900};  // several blocks
    const int64_t cells = Product(shape);
    const int64_t n = static_cast<int64_t>(rng() % static_cast<uint64_t>(cells / 3 + 2));
    const int kind = trial % 5;  // 0 sorted unique, 1 sorted repeats, 2 unsorted, 3 out of bounds
    std::vector<int64_t> rows =
        kind == 0 || kind == 4 ? RandomUniqueRows(rng, n, shape) : RandomRows(rng, n, shape);
    if (kind == 3 && n > 0) {
      const int64_t i = static_cast<int64_t>(rng() % static_cast<uint64_t>(n));
      const size_t a = static_cast<size_t>(rng() % shape.size());
      const int64_t wrong[] = {-1, shape[a], int64_t{1} << 62, std::numeric_limits<int64_t>::min()};
      rows[static_cast<size_t>(i) * shape.size() + a] = wrong[trial % 4];
    }
    SparseTensor st = MakeSparse<double>(rows, RandomValues(rng, n), shape);
    if (kind != 2 && kind != 3) {
      std::vector<int> order(shape.size());
      std::iota(order.begin(), order.end(), 0);
      st.Reorder(order);
    }
    if (kind == 4) st = MakeSparse<double>(Rows(st), st.values().ToVector<double>(), shape);
    const std::string invalid = ValidationError(st);
    for (int64_t streaming : {int64_t{-1}, int64_t{0}}) {
      transpose_internal::SetStreamingBytesForTesting(streaming);
      for (int threads : {1, 2, 3}) {
        SetNumThreads(threads);
        for (bool validate : {true, false}) {
          Tensor dense = Tensor::Empty(shape, DType::kFloat64);
          std::string got;
          try {
            st.FillDense(&dense, fill, validate);
          } catch (const Error& e) {
            got = e.what();
          }
          const std::string context = "trial " + std::to_string(trial) + " threads " +
                                      std::to_string(threads) + " validate " +
                                      std::to_string(validate);
          if (validate && !invalid.empty()) {
            EXPECT_EQ(got, invalid) << context;
          } else if (kind == 3) {
            EXPECT_NE(got.find("ToDense"), std::string::npos) << context << ": " << got;
          } else {
            EXPECT_EQ(got, "") << context;
            EXPECT_EQ(dense.ToVector<double>(), NaiveFilled(st, -3.0)) << context;
          }
        }
      }
    }
  }
  transpose_internal::SetStreamingBytesForTesting(-1);
  SetNumThreads(2);
}

TEST(SparseFillDense, NeverWritesOutsideItsTarget) {
  // The target is the middle of a larger buffer (an offset view); out-of-bounds and unsorted
  // entries next to its edges never reach the guard elements around it.
  const std::vector<int64_t> shape = {3, 70000};  // two blocks
  for (int64_t streaming : {int64_t{-1}, int64_t{0}}) {
    transpose_internal::SetStreamingBytesForTesting(streaming);
    for (const std::vector<int64_t>& rows :
         {std::vector<int64_t>{0, 0, 0, 5, 3, 0}, std::vector<int64_t>{0, 5, 0, -1, 2, 1},
          std::vector<int64_t>{2, 69999, 0, 70000}, std::vector<int64_t>{1, 3, 1, 2, 2, 0},
          std::vector<int64_t>{-1, 69999, 0, 1}}) {
      const int64_t n = static_cast<int64_t>(rows.size()) / 2;
      SparseTensor st = MakeSparse<float>(rows, std::vector<float>(n, 1.0f), shape);
      Tensor buffer = Tensor::FromVector<float>(std::vector<float>(5 * 70000, 9.0f), {5, 70000});
      Tensor view = buffer.WithPattern(MakePattern(shape, {70000, 1}, 70000));
      for (bool validate : {true, false}) {
        try {
          st.FillDense(&view, Tensor::FromVector<float>({0}, {}), validate);
        } catch (const Error&) {
        }
        const std::vector<float> all = buffer.ToVector<float>();
        EXPECT_EQ(std::vector<float>(all.begin(), all.begin() + 70000),
                  std::vector<float>(70000, 9.0f));
        EXPECT_EQ(std::vector<float>(all.begin() + 4 * 70000, all.end()),
                  std::vector<float>(70000, 9.0f));
      }
    }
  }
  transpose_internal::SetStreamingBytesForTesting(-1);
}

TEST(SparseFillDense, OtherOrdersStringsAndEmpty) {
  // Sorted by axis 1 first: valid in its own order though not in C order.
  SparseTensor by_col = MakeSparse<int32_t>({1, 0, 0, 1, 1, 1}, {4, 5, 6}, {2, 2}, {1, 0});
  Tensor dense = Tensor::Empty({2, 2}, DType::kInt32);
  by_col.FillDense(&dense, Tensor::FromVector<int32_t>({-1}, {}));
  EXPECT_EQ(dense.ToVector<int32_t>(), (std::vector<int32_t>{-1, 5, 4, 6}));
  SparseTensor words = MakeSparse<std::string>({0, 2, 1, 0}, {"a", "b"}, {2, 3});
  Tensor text = Tensor::Empty({2, 3}, DType::kString);
  words.FillDense(&text, Tensor::FromVector<std::string>({"z"}, {}));
  EXPECT_EQ(text.ToVector<std::string>(), (std::vector<std::string>{"z", "z", "a", "b", "z", "z"}));
  SparseTensor repeated = MakeSparse<std::string>({0, 2, 0, 2}, {"a", "b"}, {2, 3});
  ExpectError([&] { repeated.FillDense(&text, Tensor::FromVector<std::string>({"z"}, {})); },
              {"ValidateIndices", "entry 1"});
  repeated.FillDense(&text, Tensor::FromVector<std::string>({"z"}, {}), false);
  EXPECT_EQ(text.ToVector<std::string>()[2], "b");
  SparseTensor none = MakeSparse<float>({}, {}, {0, 4});
  Tensor nothing = Tensor::Empty({0, 4}, DType::kFloat32);
  none.FillDense(&nothing, Tensor::FromVector<float>({1}, {}));
  EXPECT_EQ(nothing.NumElements(), 0);
}

TEST(SparseFromDense, RoundTripKeepsCOrder) {
  std::mt19937_64 rng(13);
  const std::vector<int64_t> shape = {4, 5, 6};
  const int64_t total = Product(shape);
  std::vector<float> data(total, 0.0f);
  for (int64_t i = 0; i < total; ++i) {
    if (rng() % 3 == 0) data[i] = static_cast<float>(rng() % 7) + 1.0f;
  }
  Tensor dense = Tensor::FromVector(data, shape);
  SparseTensor st = SparseTensor::FromDense(dense);
  EXPECT_EQ(st.order(), (std::vector<int>{0, 1, 2}));
  EXPECT_TRUE(st.IndicesValid());
  EXPECT_EQ(st.nnz(), std::count_if(data.begin(), data.end(), [](float v) { return v != 0; }));
  EXPECT_EQ(st.ToDense().ToVector<float>(), data);
}

TEST(SparseFromDense, StridedViewAndZeroRules) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // [2, 3] buffer read transposed as [3, 2].
  Tensor base = Tensor::FromVector<float>({0.0f, -0.0f, 1.0f, nan, 0.0f, 2.0f}, {2, 3});
  Tensor view = base.WithPattern(MakePattern({3, 2}, {1, 3}));
  SparseTensor st = SparseTensor::FromDense(view);
  // view = [[0, nan], [-0, 0], [1, 2]]: -0 is zero, NaN is not.
  EXPECT_EQ(Rows(st), (std::vector<int64_t>{0, 1, 2, 0, 2, 1}));
  const std::vector<float> v = st.values().ToVector<float>();
  EXPECT_TRUE(std::isnan(v[0]));
  EXPECT_EQ(v[1], 1.0f);
  EXPECT_EQ(v[2], 2.0f);
  SparseTensor strings =
      SparseTensor::FromDense(Tensor::FromVector<std::string>({"", "a", "", "b"}, {4}));
  EXPECT_EQ(Rows(strings), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(strings.values().ToVector<std::string>(), (std::vector<std::string>{"a", "b"}));
}

TEST(SparseFromDense, LargeIsDeterministicAndEmptyCases) {
  std::mt19937_64 rng(14);
  const std::vector<int64_t> shape = {300, 700};
  std::vector<int32_t> data(Product(shape), 0);
  for (auto& x : data) x = rng() % 5 == 0 ? static_cast<int32_t>(rng() % 100) : 0;
  Tensor dense = Tensor::FromVector(data, shape);
  SetNumThreads(1);
  SparseTensor one = SparseTensor::FromDense(dense);
  SetNumThreads(3);
  SparseTensor three = SparseTensor::FromDense(dense);
  SetNumThreads(2);
  EXPECT_EQ(Rows(one), Rows(three));
  EXPECT_EQ(one.values().ToVector<int32_t>(), three.values().ToVector<int32_t>());
  EXPECT_EQ(one.ToDense().ToVector<int32_t>(), data);
  EXPECT_EQ(SparseTensor::FromDense(Tensor::Zeros({3, 4}, DType::kFloat32)).nnz(), 0);
  EXPECT_EQ(SparseTensor::FromDense(Tensor::Zeros({0, 4}, DType::kFloat32)).nnz(), 0);
  SparseTensor scalar = SparseTensor::FromDense(Tensor::FromScalar(4.0));
  EXPECT_EQ(scalar.rank(), 0);
  EXPECT_EQ(scalar.nnz(), 1);
  EXPECT_THROW(SparseTensor::FromDense(Tensor()), Error);
}

}  // namespace
}  // namespace tensorkit
