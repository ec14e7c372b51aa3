#include "tensorkit/sparse/compressed.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <string>
#include <tuple>
#include <utility>

#include "spcompute_test_util.h"
#include "tensorkit/common/parallel.h"
#include "test_util.h"

namespace tensorkit {
namespace {

using spcompute_testing::RandomCoo;
using ::tensorkit::testing::AtThreadCounts;

// The expected compression: entries stably sorted by (major, minor).
struct Expected {
  std::vector<int64_t> ptr, minor;
  std::vector<double> values;
};

Expected StableCompress(const SparseTensor& st, int major_axis) {
  const std::vector<int64_t> idx = st.indices().ToVector<int64_t>();
  const std::vector<double> val = st.values().ToVector<double>();
  const int64_t nnz = st.nnz();
  std::vector<int64_t> perm(static_cast<size_t>(nnz));
  std::iota(perm.begin(), perm.end(), 0);
  auto key = [&](int64_t e) {
    return std::make_pair(idx[2 * e + major_axis], idx[2 * e + 1 - major_axis]);
  };
  std::stable_sort(perm.begin(), perm.end(), [&](int64_t x, int64_t y) { return key(x) < key(y); });
  Expected out;
  out.ptr.assign(static_cast<size_t>(st.shape()[major_axis] + 1), 0);
  for (int64_t p : perm) {
    ++out.ptr[key(p).first + 1];
    out.minor.push_back(key(p).second);
    out.values.push_back(val[p]);
  }
  for (size_t r = 1; r < out.ptr.size(); ++r) out.ptr[r] += out.ptr[r - 1];
  return out;
}

void ExpectCsr(const CsrMatrix& m, const Expected& want) {
  EXPECT_EQ(m.row_ptr().ToVector<int64_t>(), want.ptr);
  EXPECT_EQ(m.col_indices().ToVector<int64_t>(), want.minor);
  EXPECT_EQ(m.values().ToVector<double>(), want.values);
}

TEST(CsrMatrixTest, FromSparseMatchesStableSortOnRandomInputs) {
  std::mt19937 rng(1);
  for (auto [rows, cols, nnz] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
           {7, 5, 30}, {50, 3, 20}, {1, 100, 60}, {200, 200, 300}, {3, 4, 0}, {0, 4, 0}}) {
    SparseTensor st = RandomCoo<double>(rng, {rows, cols}, nnz);
    CsrMatrix m = CsrMatrix::FromSparse(st);
    EXPECT_EQ(m.shape(), (std::vector<int64_t>{rows, cols}));
    EXPECT_EQ(m.nnz(), nnz);
    ExpectCsr(m, StableCompress(st, 0));
    m.Validate();
  }
}

TEST(CsrMatrixTest, SortedInputTakesTheFastPathAndSharesValues) {
  std::mt19937 rng(2);
  SparseTensor st = RandomCoo<double>(rng, {40, 30}, 200);
  const Expected want = StableCompress(st, 0);
  // Re-create the tensor already sorted, with and without the order claim.
  std::vector<int64_t> idx;
  for (int64_t r = 0; r < 40; ++r) {
    for (int64_t p = want.ptr[r]; p < want.ptr[r + 1]; ++p) {
      idx.push_back(r);
      idx.push_back(want.minor[p]);
    }
  }
  Tensor values = Tensor::FromVector(want.values);
  for (std::vector<int> order : {std::vector<int>{0, 1}, std::vector<int>{}}) {
    SparseTensor sorted =
        SparseTensor::Create(Tensor::FromVector(idx, {200, 2}), values, {40, 30}, order);
    CsrMatrix m = CsrMatrix::FromSparse(sorted);
    ExpectCsr(m, want);
    EXPECT_TRUE(SharesStorage(m.values(), values));
  }
}

TEST(CsrMatrixTest, WrongOrderClaimStillGivesCorrectResult) {
  std::mt19937 rng(3);
  SparseTensor st = RandomCoo<double>(rng, {20, 20}, 100);
  SparseTensor lying =
      SparseTensor::Create(st.indices(), st.values(), st.shape(), std::vector<int>{0, 1});
  ExpectCsr(CsrMatrix::FromSparse(lying), StableCompress(st, 0));
}

TEST(CsrMatrixTest, StridedIndicesAndValues) {
  std::mt19937 rng(4);
  SparseTensor st = RandomCoo<double>(rng, {30, 10}, 80);
  // indices stored as [2, nnz] (column-major [nnz, 2]); values with step 2.
  const std::vector<int64_t> idx = st.indices().ToVector<int64_t>();
  std::vector<int64_t> cm(idx.size());
  for (int64_t e = 0; e < 80; ++e) {
    cm[e] = idx[2 * e];
    cm[80 + e] = idx[2 * e + 1];
  }
  Tensor idx_cm = Tensor::FromVector(cm, {2, 80});
  Tensor idx_view = idx_cm.WithPattern(MakePattern({80, 2}, {1, 80}));
  std::vector<double> spread(160, -1.0);
  const std::vector<double> val = st.values().ToVector<double>();
  for (int64_t e = 0; e < 80; ++e) spread[2 * e] = val[e];
  Tensor val_view = Tensor::FromVector(spread).WithPattern(MakePattern({80}, {2}));
  SparseTensor strided = SparseTensor::Create(idx_view, val_view, {30, 10});
  ExpectCsr(CsrMatrix::FromSparse(strided), StableCompress(st, 0));
}

TEST(CsrMatrixTest, ResultDoesNotDependOnThreadCount) {
  std::mt19937 rng(5);
  SparseTensor st = RandomCoo<double>(rng, {3000, 500}, 140000);
  const std::vector<CsrMatrix> both =
      AtThreadCounts({1, 4}, [&] { return CsrMatrix::FromSparse(st); });
  const CsrMatrix &one = both[0], &four = both[1];
  EXPECT_EQ(one.row_ptr().ToVector<int64_t>(), four.row_ptr().ToVector<int64_t>());
  EXPECT_EQ(one.col_indices().ToVector<int64_t>(), four.col_indices().ToVector<int64_t>());
  EXPECT_EQ(one.values().ToVector<double>(), four.values().ToVector<double>());
  ExpectCsr(four, StableCompress(st, 0));
}

// Over 4096 rows and 2^20 entries take the bucketed scatter; distinct values show that entries
// with equal (row, column) keep their input order. Rows are not a power of two, so the last
// bucket is partial; the CSC form has as many columns. 5003 rows: about 64 rows a bucket;
// 2^19 + 3 rows: 1024 buckets.
class LargeCompress : public ::testing::TestWithParam<int64_t> {};

TEST_P(LargeCompress, KeepsStableOrderAtAnyThreadCount) {
  std::mt19937 rng(8);
  const int64_t rows = GetParam(), cols = 40, nnz = (int64_t{1} << 20) + 4096;
  std::vector<int64_t> idx(static_cast<size_t>(2 * nnz));
  std::vector<double> val(static_cast<size_t>(nnz));
  for (int64_t e = 0; e < nnz; ++e) {
    const bool copy = e > 0 && rng() % 8 == 0;  // duplicates of earlier entries
    const int64_t src = copy ? static_cast<int64_t>(rng() % e) : e;
    idx[2 * e] = copy ? idx[2 * src] : static_cast<int64_t>(rng() % rows);
    idx[2 * e + 1] = copy ? idx[2 * src + 1] : static_cast<int64_t>(rng() % cols);
    val[e] = static_cast<double>(e);
  }
  SparseTensor st = SparseTensor::Create(Tensor::FromVector(idx, {nnz, 2}), Tensor::FromVector(val),
                                         {rows, cols});
  const Expected want = StableCompress(st, 0);
  std::vector<int64_t> tidx(idx.size());  // the transpose, for CscMatrix
  for (int64_t e = 0; e < nnz; ++e) {
    tidx[2 * e] = idx[2 * e + 1];
    tidx[2 * e + 1] = idx[2 * e];
  }
  SparseTensor tst = SparseTensor::Create(Tensor::FromVector(tidx, {nnz, 2}),
                                          Tensor::FromVector(val), {cols, rows});
  for (const auto& [csr, csc] : AtThreadCounts({1, 3}, [&] {
         return std::make_pair(CsrMatrix::FromSparse(st), CscMatrix::FromSparse(tst));
       })) {
    ExpectCsr(csr, want);
    EXPECT_EQ(csc.col_ptr().ToVector<int64_t>(), want.ptr);
    EXPECT_EQ(csc.row_indices().ToVector<int64_t>(), want.minor);
    EXPECT_EQ(csc.values().ToVector<double>(), want.values);
  }
}
INSTANTIATE_TEST_SUITE_P(CsrMatrixTest, LargeCompress,
                         ::testing::Values(int64_t{5003}, (int64_t{1} << 19) + 3));

TEST(CsrMatrixTest, ToSparseRoundTripsWithOrder01) {
  std::mt19937 rng(6);
  SparseTensor st = RandomCoo<double>(rng, {12, 9}, 50);
  CsrMatrix m = CsrMatrix::FromSparse(st);
  SparseTensor back = m.ToSparse();
  EXPECT_EQ(back.order(), (std::vector<int>{0, 1}));
  EXPECT_EQ(spcompute_testing::DenseOracle(back), spcompute_testing::DenseOracle(st));
  ExpectCsr(CsrMatrix::FromSparse(back), StableCompress(st, 0));
  EXPECT_EQ(m.RowNnz().ToVector<int64_t>().size(), 12u);
}

TEST(CscMatrixTest, FromSparseSortsByColumnThenRow) {
  std::mt19937 rng(7);
  for (int64_t nnz : {0, 1, 40, 500}) {
    SparseTensor st = RandomCoo<double>(rng, {25, 15}, nnz);
    CscMatrix m = CscMatrix::FromSparse(st);
    const Expected want = StableCompress(st, 1);
    EXPECT_EQ(m.col_ptr().ToVector<int64_t>(), want.ptr);
    EXPECT_EQ(m.row_indices().ToVector<int64_t>(), want.minor);
    EXPECT_EQ(m.values().ToVector<double>(), want.values);
    SparseTensor back = m.ToSparse();
    EXPECT_EQ(back.order(), (std::vector<int>{1, 0}));
    EXPECT_EQ(spcompute_testing::DenseOracle(back), spcompute_testing::DenseOracle(st));
    ExpectCsr(m.ToCsr(), StableCompress(st, 0));
    CscMatrix again = CsrMatrix::FromSparse(st).ToCsc();
    EXPECT_EQ(again.row_indices().ToVector<int64_t>(), want.minor);
  }
}

TEST(CsrMatrixTest, IntegerAndFloatValues) {
  SparseTensor st = SparseTensor::Create(Tensor::FromVector<int64_t>({1, 0, 0, 2, 1, 0}, {3, 2}),
                                         Tensor::FromVector<int32_t>({7, 8, 9}), {2, 3});
  CsrMatrix m = CsrMatrix::FromSparse(st);
  EXPECT_EQ(m.row_ptr().ToVector<int64_t>(), (std::vector<int64_t>{0, 1, 3}));
  EXPECT_EQ(m.col_indices().ToVector<int64_t>(), (std::vector<int64_t>{2, 0, 0}));
  EXPECT_EQ(m.values().ToVector<int32_t>(), (std::vector<int32_t>{8, 7, 9}));
}

using ::tensorkit::testing::ErrorOf;

TEST(CsrMatrixTest, CreateValidates) {
  auto make = [](std::vector<int64_t> ptr, std::vector<int64_t> col) {
    const int64_t n = static_cast<int64_t>(col.size());
    return CsrMatrix::Create(Tensor::FromVector(ptr), Tensor::FromVector(col),
                             Tensor::Zeros({n}, DType::kFloat32), {3, 4});
  };
  CsrMatrix ok = make({0, 2, 2, 3}, {1, 3, 0});
  EXPECT_EQ(ok.nnz(), 3);
  EXPECT_NE(ErrorOf([&] {
              make({1, 2, 2, 3}, {1, 3, 0});
            }).find("row_ptr[0] is 1"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] {
              make({0, 2, 1, 3}, {1, 3, 0});
            }).find("decreases at row 1"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] {
              make({0, 2, 2, 2}, {1, 3, 0});
            }).find("must equal nnz 3"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] {
              make({0, 2, 2, 3}, {1, 4, 0});
            }).find("position 1 (row 0)"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] {
              make({0, 2, 2, 3}, {3, 1, 0});
            }).find("row 0 are not sorted"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { make({0, 2, 3}, {1, 3, 0}); }).find("needs 4"), std::string::npos);
  EXPECT_THROW(
      CsrMatrix::Create(Tensor::FromVector<int32_t>({0, 0, 0, 0}), Tensor::FromVector<int64_t>({}),
                        Tensor::Zeros({0}, DType::kFloat32), {3, 4}),
      Error);
  // Duplicated columns in a row are allowed (they are summed by the products).
  EXPECT_EQ(make({0, 2, 2, 3}, {1, 1, 0}).nnz(), 3);
  // CSC names columns.
  EXPECT_NE(ErrorOf([&] {
              CscMatrix::Create(Tensor::FromVector<int64_t>({0, 1, 1, 1, 1}),
                                Tensor::FromVector<int64_t>({5}),
                                Tensor::Zeros({1}, DType::kFloat32), {3, 4});
            }).find("row index 5 at position 0 (col 0)"),
            std::string::npos);
}

TEST(CsrMatrixTest, FromSparseRejectsBadInput) {
  SparseTensor three = SparseTensor::Create(Tensor::Zeros({1, 3}, DType::kInt64),
                                            Tensor::Zeros({1}, DType::kFloat32), {2, 2, 2});
  EXPECT_NE(ErrorOf([&] { CsrMatrix::FromSparse(three); }).find("needs a 2-D"), std::string::npos);
  SparseTensor out_of_range =
      SparseTensor::Create(Tensor::FromVector<int64_t>({0, 0, 1, 7}, {2, 2}),
                           Tensor::Zeros({2}, DType::kFloat32), {2, 2});
  EXPECT_NE(ErrorOf([&] {
              CscMatrix::FromSparse(out_of_range);
            }).find("entry 1 at [1 7] is out of bounds"),
            std::string::npos);
  SparseTensor negative = SparseTensor::Create(Tensor::FromVector<int64_t>({-1, 0}, {1, 2}),
                                               Tensor::Zeros({1}, DType::kFloat32), {2, 2});
  EXPECT_THROW(CsrMatrix::FromSparse(negative), Error);
}

}  // namespace
}  // namespace tensorkit
