// Concat, Slice, Split and Permute of SparseTensors against naive dense computations.
#include "tensorkit/sparse/sparse_ops.h"

#include <gtest/gtest.h>

#include <random>

#include "sparse/sparse_test_util.h"
#include "tensorkit/dense/transpose_internal.h"

namespace tensorkit {
namespace {

using testing::ExpectError;
using testing::MakeSparse;
using testing::NaiveDense;
using testing::Product;
using testing::RandomRows;
using testing::RandomUniqueRows;
using testing::RandomValues;
using testing::Rows;

// A SparseTensor with the nonzeros of a row-major matrix, sorted in `order`.
SparseTensor FromMatrix(const std::vector<float>& m, int64_t rows, int64_t cols,
                        const std::vector<int>& order) {
  SparseTensor st = SparseTensor::FromDense(Tensor::FromVector(m, {rows, cols}));
  st.Reorder(order);
  return st;
}

// Naive dense concatenation of C-order arrays along `axis`.
template <typename T>
std::vector<T> NaiveConcat(const std::vector<std::vector<T>>& parts,
                           const std::vector<std::vector<int64_t>>& shapes, int axis) {
  int64_t outer = 1;
  for (int a = 0; a < axis; ++a) outer *= shapes[0][a];
  std::vector<T> out;
  for (int64_t o = 0; o < outer; ++o) {
    for (size_t k = 0; k < parts.size(); ++k) {
      const int64_t block = static_cast<int64_t>(parts[k].size()) / std::max<int64_t>(outer, 1);
      out.insert(out.end(), parts[k].begin() + o * block, parts[k].begin() + (o + 1) * block);
    }
  }
  return out;
}

// ----- Concat -------------------------------------------------------------------------------

TEST(SparseConcat, SeedMatrixExampleAlongColumns) {
  SparseTensor m1 = FromMatrix({0, 0, 1, 2, 0, 0, 3, 0, 4}, 3, 3, {1, 0});
  SparseTensor m2 = FromMatrix({0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 1, 0}, 3, 5, {1, 0});
  EXPECT_EQ(m1.nnz(), 4);
  EXPECT_EQ(m2.nnz(), 3);
  SparseTensor conc = SparseTensor::Concat({m1, m2});
  EXPECT_EQ(conc.shape(), (std::vector<int64_t>{3, 8}));
  EXPECT_EQ(conc.order(), (std::vector<int>{1, 0}));
  EXPECT_EQ(conc.nnz(), 7);
  EXPECT_TRUE(conc.IndicesValid());
  EXPECT_EQ(
      conc.ToDense().ToVector<float>(),
      (std::vector<float>{0, 0, 1, 0, 0, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 3, 0, 4, 2, 0, 0, 1, 0}));
}

TEST(SparseConcat, SeedStringExampleOrders) {
  std::mt19937_64 rng(21);
  auto make = [&](std::vector<int64_t> shape, std::vector<int> order, int64_t n) {
    std::vector<std::string> vals;
    for (int64_t i = 0; i < n; ++i) vals.push_back(std::to_string(1000 + rng() % 1000));
    SparseTensor st = MakeSparse<std::string>(RandomUniqueRows(rng, n, shape), vals, shape);
    st.Reorder(order);
    return st;
  };
  SparseTensor st1 = make({10, 20, 5}, {1, 0, 2}, 30);
  SparseTensor st2 = make({10, 10, 5}, {1, 0, 2}, 20);
  SparseTensor st3 = make({10, 30, 5}, {1, 2, 0}, 40);  // order[0] matches
  SparseTensor conc = SparseTensor::Concat({st1, st2, st3});
  EXPECT_EQ(conc.nnz(), st1.nnz() + st2.nnz() + st3.nnz());
  EXPECT_EQ(conc.shape(), (std::vector<int64_t>{10, 60, 5}));
  EXPECT_EQ(conc.order(), (std::vector<int>{-1, -1, -1}));
  EXPECT_EQ(conc.ToDense().ToVector<std::string>(),
            NaiveConcat<std::string>({NaiveDense<std::string>(st1), NaiveDense<std::string>(st2),
                                      NaiveDense<std::string>(st3)},
                                     {st1.shape(), st2.shape(), st3.shape()}, 1));
  st3.Reorder({1, 0, 2});
  SparseTensor conc2 = SparseTensor::Concat({st1, st2, st3});
  EXPECT_EQ(conc2.order(), (std::vector<int>{1, 0, 2}));
  EXPECT_TRUE(conc2.IndicesValid());
}

TEST(SparseConcat, AnyAxisMatchesDenseConcatenation) {
  std::mt19937_64 rng(22);
  for (int axis = 0; axis < 3; ++axis) {
    std::vector<SparseTensor> inputs;
    std::vector<std::vector<double>> dense;
    std::vector<std::vector<int64_t>> shapes;
    for (int k = 0; k < 3; ++k) {
      std::vector<int64_t> shape = {3, 4, 2};
      shape[axis] = 1 + k;
      const int64_t n = static_cast<int64_t>(rng() % (Product(shape) + 1));
      SparseTensor st =
          MakeSparse<double>(RandomUniqueRows(rng, n, shape), RandomValues(rng, n), shape);
      dense.push_back(NaiveDense<double>(st));
      shapes.push_back(shape);
      inputs.push_back(st);
    }
    SparseTensor conc = SparseTensor::Concat(inputs, axis - 3);  // negative axis
    EXPECT_EQ(conc.ToDense().ToVector<double>(), NaiveConcat(dense, shapes, axis)) << axis;
    EXPECT_EQ(conc.order(), (std::vector<int>{-1, -1, -1}));
  }
}

// Outputs above the streaming threshold (set to 0 here) are written through a buffer with
// non-temporal stores: the same rows and values as the plain copies, for every rank, an axis
// other than 0, and 1-byte values whose chunks start off the 64-byte lines.
TEST(SparseConcat, StreamedOutputsMatchThePlainCopies) {
  std::mt19937_64 rng(23);
  for (int trial = 0; trial < 12; ++trial) {
    const int rank = 1 + trial % 4;
    const int axis = trial % rank;
    std::vector<SparseTensor> inputs;
    for (int k = 0; k < 3; ++k) {
      std::vector<int64_t> shape(static_cast<size_t>(rank), 50);
      const int64_t n = static_cast<int64_t>(rng() % 3000);
      std::vector<double> v = RandomValues(rng, n);
      if (trial % 2 == 0) {
        inputs.push_back(MakeSparse<double>(RandomRows(rng, n, shape), v, shape));
      } else {
        std::vector<int8_t> b(v.begin(), v.end());
        inputs.push_back(MakeSparse<int8_t>(RandomRows(rng, n, shape), b, shape));
      }
    }
    const SparseTensor plain = SparseTensor::Concat(inputs, axis);
    transpose_internal::SetStreamingBytesForTesting(0);
    const SparseTensor streamed = SparseTensor::Concat(inputs, axis);
    transpose_internal::SetStreamingBytesForTesting(-1);
    EXPECT_EQ(Rows(streamed), Rows(plain)) << "trial " << trial;
    EXPECT_EQ(streamed.shape(), plain.shape()) << "trial " << trial;
    if (trial % 2 == 0) {
      EXPECT_EQ(streamed.values().ToVector<double>(), plain.values().ToVector<double>());
    } else {
      EXPECT_EQ(streamed.values().ToVector<int8_t>(), plain.values().ToVector<int8_t>());
    }
  }
}

TEST(SparseConcat, AxisConcatKeepsOrderOnlyWhenItStartsWithTheAxis) {
  SparseTensor a = MakeSparse<float>({0, 1, 1, 0}, {1, 2}, {2, 2}, {0, 1});
  SparseTensor b = MakeSparse<float>({0, 0, 1, 1}, {3, 4}, {2, 2}, {0, 1});
  SparseTensor rows = SparseTensor::Concat({a, b}, 0);
  EXPECT_EQ(rows.order(), (std::vector<int>{0, 1}));
  EXPECT_TRUE(rows.IndicesValid());
  SparseTensor cols = SparseTensor::Concat({a, b}, 1);
  EXPECT_EQ(cols.order(), (std::vector<int>{-1, -1}));
  EXPECT_EQ(cols.shape(), (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(Rows(cols), (std::vector<int64_t>{0, 1, 1, 0, 0, 2, 1, 3}));
}

TEST(SparseConcat, EmptyInputsAndSingleInput) {
  SparseTensor a = MakeSparse<int64_t>({}, {}, {2, 3}, {0, 1});
  SparseTensor b = MakeSparse<int64_t>({1, 2}, {7}, {4, 3}, {0, 1});
  SparseTensor conc = SparseTensor::Concat({a, b, a});
  EXPECT_EQ(conc.shape(), (std::vector<int64_t>{8, 3}));
  EXPECT_EQ(Rows(conc), (std::vector<int64_t>{3, 2}));
  SparseTensor one = SparseTensor::Concat({b});
  EXPECT_EQ(Rows(one), Rows(b));
  EXPECT_EQ(SparseTensor::Concat({a, a}, 1).nnz(), 0);
}

TEST(SparseConcat, Misuse) {
  SparseTensor a = MakeSparse<float>({0, 1}, {1}, {2, 3}, {0, 1});
  ExpectError([&] { SparseTensor::Concat({}); }, {"Concat", "no inputs"});
  ExpectError([&] { SparseTensor::Concat({}, 0); }, {"Concat", "no inputs"});
  SparseTensor unknown = MakeSparse<float>({0, 1}, {1}, {2, 3});
  ExpectError(
      [&] {
        SparseTensor::Concat({a, unknown});
      },
      {"Concat", "input 1", "unknown order", "Concat(inputs, axis)"});
  SparseTensor rank3 = MakeSparse<float>({0, 1, 0}, {1}, {2, 3, 1}, {0, 1, 2});
  ExpectError([&] { SparseTensor::Concat({a, rank3}); }, {"Concat", "input 1", "rank 3"});
  SparseTensor by_col = MakeSparse<float>({0, 1}, {1}, {2, 3}, {1, 0});
  ExpectError([&] { SparseTensor::Concat({a, by_col}); }, {"Concat", "order[0]", "[1 0]"});
  SparseTensor other_cols = MakeSparse<float>({0, 1}, {1}, {2, 4}, {0, 1});
  ExpectError(
      [&] {
        SparseTensor::Concat({a, other_cols});
      },
      {"Concat", "[2 4]", "[2 3]", "axis 0"});
  SparseTensor ints = MakeSparse<int32_t>({0, 1}, {1}, {2, 3}, {0, 1});
  ExpectError([&] { SparseTensor::Concat({a, ints}); }, {"Concat", "int32", "float32"});
  ExpectError([&] { SparseTensor::Concat({a}, 2); }, {"Concat", "axis 2", "out of range"});
  SparseTensor scalar = MakeSparse<float>({}, {1}, {});
  ExpectError([&] { SparseTensor::Concat({scalar}, 0); }, {"Concat", "rank-0"});
}

// ----- Slice / Split / Permute --------------------------------------------------------------

// Naive dense box of a C-order array.
std::vector<double> NaiveBox(const std::vector<double>& d, const std::vector<int64_t>& shape,
                             const std::vector<int64_t>& start, const std::vector<int64_t>& size) {
  std::vector<double> out;
  for (int64_t i = 0; i < size[0]; ++i) {
    for (int64_t j = 0; j < size[1]; ++j) {
      for (int64_t k = 0; k < size[2]; ++k) {
        out.push_back(d[((start[0] + i) * shape[1] + start[1] + j) * shape[2] + start[2] + k]);
      }
    }
  }
  return out;
}

TEST(SparseSlice, RandomBoxesMatchDense) {
  std::mt19937_64 rng(23);
  const std::vector<int64_t> shape = {5, 6, 4};
  SparseTensor st =
      MakeSparse<double>(RandomUniqueRows(rng, 50, shape), RandomValues(rng, 50), shape);
  st.Reorder({2, 0, 1});
  const std::vector<double> dense = NaiveDense<double>(st);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<int64_t> start(3), size(3);
    for (int a = 0; a < 3; ++a) {
      start[a] = static_cast<int64_t>(rng() % (shape[a] + 1));
      size[a] = static_cast<int64_t>(rng() % (shape[a] - start[a] + 1));
    }
    SparseTensor box = Slice(st, start, size);
    EXPECT_EQ(box.shape(), size);
    EXPECT_EQ(box.order(), st.order());
    EXPECT_TRUE(box.IndicesValid());
    EXPECT_EQ(box.ToDense().ToVector<double>(), NaiveBox(dense, shape, start, size));
  }
  SparseTensor rest = Slice(st, {1, 2, 0}, {-1, -1, -1});
  EXPECT_EQ(rest.shape(), (std::vector<int64_t>{4, 4, 4}));
}

TEST(SparseSlice, Misuse) {
  SparseTensor st = MakeSparse<float>({0, 1}, {1}, {2, 3});
  ExpectError([&] { Slice(st, {0}, {1, 1}); }, {"Slice", "one entry per axis"});
  ExpectError([&] { Slice(st, {3, 0}, {0, 1}); }, {"Slice", "start 3", "axis 0"});
  ExpectError([&] { Slice(st, {1, 1}, {1, 3}); }, {"Slice", "size 3", "axis 1", "at most 2"});
}

TEST(SparseSplit, PiecesReassembleWithConcat) {
  std::mt19937_64 rng(24);
  const std::vector<int64_t> shape = {7, 4};
  SparseTensor st =
      MakeSparse<int32_t>(RandomUniqueRows(rng, 15, shape), std::vector<int32_t>(15, 3), shape);
  st.Reorder({0, 1});
  std::vector<SparseTensor> pieces = Split(st, 0, int64_t{3});  // sizes 3, 2, 2
  ASSERT_EQ(pieces.size(), 3u);
  EXPECT_EQ(pieces[0].shape(), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(pieces[2].shape(), (std::vector<int64_t>{2, 4}));
  for (const SparseTensor& p : pieces) EXPECT_TRUE(p.IndicesValid());
  SparseTensor back = SparseTensor::Concat(pieces);
  EXPECT_EQ(Rows(back), Rows(st));
  std::vector<SparseTensor> cols = Split(st, -1, std::vector<int64_t>{1, 0, 3});
  ASSERT_EQ(cols.size(), 3u);
  EXPECT_EQ(cols[1].nnz(), 0);
  EXPECT_EQ(SparseTensor::Concat(cols, 1).ToDense().ToVector<int32_t>(),
            st.ToDense().ToVector<int32_t>());
  ExpectError([&] { Split(st, 0, std::vector<int64_t>{3, 3}); }, {"Split", "add up to dim 7"});
  ExpectError([&] { Split(st, 2, int64_t{2}); }, {"Split", "axis 2", "out of range"});
  ExpectError([&] { Split(st, 0, int64_t{0}); }, {"Split", ">= 1"});
}

// Every axis is checked, not only the split axis: an entry outside the shape on another axis
// would make an invalid piece (TensorFlow's SparseSplit refuses it too). Both paths: few pieces
// (one counting pass) and many (a counting sort by piece).
TEST(SparseSplit, RefusesAnEntryOutOfBoundsOnAnyAxis) {
  SparseTensor st = MakeSparse<float>({1, 1, 0, 9}, {1, 2}, {4, 6});
  ExpectError([&] { Split(st, 0, int64_t{2}); },
              {"Split", "entry 1", "[0 9]", "out of bounds", "[4 6]"});
  ExpectError([&] { Split(st, 0, std::vector<int64_t>{1, 3}); }, {"Split", "entry 1", "[0 9]"});
  SparseTensor neg = MakeSparse<float>({0, -1}, {1}, {4, 6});
  ExpectError([&] { Split(neg, 0, int64_t{4}); }, {"Split", "entry 0", "[0 -1]"});
  ExpectError([&] { Split(neg, 1, int64_t{3}); }, {"Split", "entry 0", "[0 -1]"});
  SparseTensor tall = MakeSparse<int32_t>({5, 0, 7, 6, 8, 1}, {1, 2, 3}, {300, 6});
  ExpectError([&] { Split(tall, 0, int64_t{300}); }, {"Split", "entry 1", "[7 6]"});
  // In bounds everywhere: every entry lands in its piece.
  SparseTensor ok = MakeSparse<int32_t>({5, 0, 7, 5, 8, 1}, {1, 2, 3}, {300, 6});
  const std::vector<SparseTensor> pieces = Split(ok, 0, int64_t{300});
  EXPECT_EQ(pieces[7].nnz(), 1);
  EXPECT_EQ(Rows(pieces[7]), (std::vector<int64_t>{0, 5}));
}

TEST(SparsePermute, MatchesDenseTransposeAndUpdatesOrder) {
  std::mt19937_64 rng(25);
  const std::vector<int64_t> shape = {3, 4, 5};
  SparseTensor st =
      MakeSparse<double>(RandomUniqueRows(rng, 20, shape), RandomValues(rng, 20), shape);
  st.Reorder({0, 1, 2});
  SparseTensor p = Permute(st, {2, 0, 1});
  EXPECT_EQ(p.shape(), (std::vector<int64_t>{5, 3, 4}));
  EXPECT_EQ(p.order(), (std::vector<int>{1, 2, 0}));
  EXPECT_TRUE(p.IndicesValid());  // still sorted in the mapped order
  EXPECT_TRUE(SharesStorage(p.values(), st.values()));
  const std::vector<double> d = NaiveDense<double>(st), pd = p.ToDense().ToVector<double>();
  for (int64_t i = 0; i < 3; ++i) {
    for (int64_t j = 0; j < 4; ++j) {
      for (int64_t k = 0; k < 5; ++k) {
        ASSERT_EQ(pd[(k * 3 + i) * 4 + j], d[(i * 4 + j) * 5 + k]);
      }
    }
  }
  SparseTensor m = MakeSparse<float>({0, 1, 1, 0}, {1, 2}, {2, 3}, {0, 1});
  SparseTensor t = Transpose(m, 0, 1);
  EXPECT_EQ(t.order(), (std::vector<int>{1, 0}));
  EXPECT_EQ(t.shape(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(Rows(t), (std::vector<int64_t>{1, 0, 0, 1}));
  EXPECT_EQ(Rows(Transpose(m, std::vector<int>{1, 0})), Rows(t));
  ExpectError([&] { Permute(m, {0, 0}); }, {"Permute", "permutation"});
}

}  // namespace
}  // namespace tensorkit
