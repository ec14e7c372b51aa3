// SparseSparseProduct: the dense-accumulator kernel (both ways it emits a row: bitmap scan and
// sorted word list) and the GraphBLAS path for very wide matrices, against a map oracle over
// the COO entries, against each other, and across thread counts.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include "spcompute_test_util.h"
#include "tensorkit/common/parallel.h"
#include "tensorkit/sparse/compressed.h"
#include "tensorkit/sparse/internal.h"
#include "tensorkit/sparse/products.h"
#include "test_util.h"

namespace tensorkit {
namespace {

using spcompute_testing::RandomCoo;
using testing::AtThreadCounts;
using testing::ExpectError;

// The product's entries by (row, column): every pair of a's (r, k) and b's (k, c) entries
// contributes, so an entry whose products cancel is still present (as in GraphBLAS).
// Integers sum with wrap-around (uint64), floats exactly (small integer values), bool is the
// or of ands.
template <typename T>
std::map<std::pair<int64_t, int64_t>, T> ProductOracle(const SparseTensor& a,
                                                       const SparseTensor& b) {
  const std::vector<int64_t> ai = a.indices().ToVector<int64_t>();
  const std::vector<int64_t> bi = b.indices().ToVector<int64_t>();
  const std::vector<T> av = a.values().ToVector<T>();
  const std::vector<T> bv = b.values().ToVector<T>();
  std::map<int64_t, std::vector<int64_t>> b_rows;
  for (int64_t f = 0; f < b.nnz(); ++f) b_rows[bi[2 * f]].push_back(f);
  std::map<std::pair<int64_t, int64_t>, uint64_t> isum;
  std::map<std::pair<int64_t, int64_t>, double> fsum;
  for (int64_t e = 0; e < a.nnz(); ++e) {
    for (int64_t f : b_rows[ai[2 * e + 1]]) {
      const std::pair<int64_t, int64_t> key{ai[2 * e], bi[2 * f + 1]};
      isum[key] += static_cast<uint64_t>(static_cast<int64_t>(av[e])) *
                   static_cast<uint64_t>(static_cast<int64_t>(bv[f]));
      fsum[key] += static_cast<double>(av[e]) * static_cast<double>(bv[f]);
    }
  }
  std::map<std::pair<int64_t, int64_t>, T> out;
  for (const auto& [key, s] : isum) {
    if constexpr (std::is_same_v<T, bool>) {
      out[key] = s != 0;  // or of ands: s counts the true pairs
    } else if constexpr (std::is_integral_v<T>) {
      out[key] = static_cast<T>(static_cast<int64_t>(s));
    } else {
      out[key] = static_cast<T>(fsum[key]);
    }
  }
  return out;
}

// Checks a CSR result: valid, duplicate-free, and entry for entry equal to `want`.
template <typename T>
void ExpectEntries(const CsrMatrix& c, const std::map<std::pair<int64_t, int64_t>, T>& want) {
  ASSERT_NO_THROW(c.Validate());
  ASSERT_EQ(c.nnz(), static_cast<int64_t>(want.size()));
  const std::vector<int64_t> ptr = c.row_ptr().ToVector<int64_t>();
  const std::vector<int64_t> col = c.col_indices().ToVector<int64_t>();
  const std::vector<T> val = c.values().ToVector<T>();
  auto it = want.begin();
  for (int64_t r = 0; r < c.rows(); ++r) {
    for (int64_t p = ptr[r]; p < ptr[r + 1]; ++p, ++it) {
      ASSERT_EQ(it->first, std::make_pair(r, col[p])) << "row " << r << " position " << p;
      ASSERT_EQ(val[p], it->second) << "row " << r << " column " << col[p];
    }
  }
}

// Both kernels (dense accumulator and GraphBLAS) give the oracle's entries, for every dtype.
template <typename T>
void CheckShapes(std::mt19937& rng) {
  // {m, k, n, nnz a, nnz b}: rows of every length; n = 3M makes short rows sort their touched
  // words, the narrow cases scan the word bitmap; empty operands and empty dims.
  for (auto [m, k, n, na, nb] : std::vector<std::array<int64_t, 5>>{{6, 5, 7, 12, 15},
                                                                    {40, 60, 400, 1500, 2500},
                                                                    {30, 20, 64, 600, 900},
                                                                    {20, 30, 3000000, 200, 300},
                                                                    {3, 4, 5, 0, 6},
                                                                    {3, 4, 5, 6, 0},
                                                                    {0, 4, 5, 0, 6},
                                                                    {3, 0, 5, 0, 0},
                                                                    {3, 4, 0, 6, 0}}) {
    SCOPED_TRACE(::testing::Message() << DTypeName(DTypeOf<T>) << " m=" << m << " k=" << k
                                      << " n=" << n << " nnz " << na << "," << nb);
    SparseTensor a = RandomCoo<T>(rng, {m, k}, na);
    SparseTensor b = RandomCoo<T>(rng, {k, n}, nb);
    const auto want = ProductOracle<T>(a, b);
    // CsrMatrix::FromSparse keeps duplicates: the kernels must sum them.
    const CsrMatrix ca = CsrMatrix::FromSparse(a), cb = CsrMatrix::FromSparse(b);
    const CsrMatrix c = SparseSparseProduct(ca, cb);
    ExpectEntries<T>(c, want);
    const CsrMatrix g = sparse_internal::GraphBLASProduct(ca, cb);
    ExpectEntries<T>(g, want);
    SparseTensor st = SparseSparseProduct(a, b);
    EXPECT_EQ(st.order(), (std::vector<int>{0, 1}));
    ExpectEntries<T>(CsrMatrix::FromSparse(st), want);
  }
}

TEST(SpGemmTest, EveryDTypeMatchesOracleOnBothKernels) {
  std::mt19937 rng(41);
  CheckShapes<double>(rng);
  CheckShapes<float>(rng);
  CheckShapes<int64_t>(rng);
  CheckShapes<int32_t>(rng);
  CheckShapes<int16_t>(rng);
  CheckShapes<int8_t>(rng);  // products and sums wrap modulo 256, as in GraphBLAS
  CheckShapes<uint8_t>(rng);
  CheckShapes<bool>(rng);
}

// Long and short, dense and sparse result rows; the widest case (2^33 columns) goes through
// GraphBLAS, which hands back unsorted rows of every length. The oracle is a map over the COO
// entries: the widest case is too big for a dense one.
TEST(SpGemmTest, LongResultRowsAreSorted) {
  std::mt19937 rng(29);
  for (auto [m, k, n, na, nb] :
       std::vector<std::array<int64_t, 5>>{{40, 60, 400, 1500, 2500},
                                           {200, 200, 200, 600, 600},
                                           {16, 400, 50000, 3200, 1600},
                                           {4, 50, int64_t{1} << 33, 400, 200}}) {
    SparseTensor a = RandomCoo<float>(rng, {m, k}, na);
    SparseTensor b = RandomCoo<float>(rng, {k, n}, nb);
    ExpectEntries<float>(SparseSparseProduct(CsrMatrix::FromSparse(a), CsrMatrix::FromSparse(b)),
                         ProductOracle<float>(a, b));
  }
}

// A row of the result that covers every column, and one that covers a single column of a wide
// matrix, in the same product.
TEST(SpGemmTest, FullAndSingleColumnRows) {
  const int64_t n = 1000;
  std::vector<int64_t> bi;
  std::vector<double> bv;
  for (int64_t c = 0; c < n; ++c) {  // b row 0: all columns, in reverse; b row 1: column 999
    bi.insert(bi.end(), {0, n - 1 - c});
    bv.push_back(static_cast<double>(c));
  }
  bi.insert(bi.end(), {1, n - 1});
  bv.push_back(5);
  SparseTensor b =
      SparseTensor::Create(Tensor::FromVector(bi, {n + 1, 2}), Tensor::FromVector(bv), {2, n});
  SparseTensor a =
      SparseTensor::Create(Tensor::FromVector(std::vector<int64_t>{0, 0, 1, 1, 2, 0}, {3, 2}),
                           Tensor::FromVector(std::vector<double>{2, 3, 1}), {3, 2});
  ExpectEntries<double>(SparseSparseProduct(CsrMatrix::FromSparse(a), CsrMatrix::FromSparse(b)),
                        ProductOracle<double>(a, b));
}

// Rounding makes the float result depend on summation order; the order is fixed per entry, so
// the bits do not depend on the thread count.
TEST(SpGemmTest, BitIdenticalAtAnyThreadCount) {
  std::mt19937 rng(43);
  const int64_t m = 6000, k = 3000, n = 4000, nnz = 60000;
  std::uniform_real_distribution<float> u(-1, 1);
  auto random = [&](int64_t rows, int64_t cols) {
    std::vector<int64_t> idx(2 * nnz);
    std::vector<float> val(nnz);
    for (int64_t e = 0; e < nnz; ++e) {
      idx[2 * e] = static_cast<int64_t>(rng() % rows);
      idx[2 * e + 1] = static_cast<int64_t>(rng() % cols);
      val[e] = u(rng);
    }
    return CsrMatrix::FromSparse(SparseTensor::Create(Tensor::FromVector(idx, {nnz, 2}),
                                                      Tensor::FromVector(val), {rows, cols}));
  };
  const CsrMatrix a = random(m, k), b = random(k, n);
  const std::vector<CsrMatrix> results =
      AtThreadCounts({1, 2, 3}, [&] { return SparseSparseProduct(a, b); });
  EXPECT_GT(results[0].nnz(), 100000);
  for (int i : {1, 2}) {
    EXPECT_EQ(results[i].row_ptr().ToVector<int64_t>(), results[0].row_ptr().ToVector<int64_t>());
    EXPECT_EQ(results[i].col_indices().ToVector<int64_t>(),
              results[0].col_indices().ToVector<int64_t>());
    EXPECT_EQ(results[i].values().ToVector<float>(), results[0].values().ToVector<float>());
  }
}

TEST(SpGemmTest, RejectsUnsupportedDTypeAndUndefinedOperands) {
  std::mt19937 rng(44);
  const CsrMatrix h = CsrMatrix::FromSparse(RandomCoo<Half>(rng, {3, 3}, 4));
  ExpectError([&] { SparseSparseProduct(h, h); }, ErrorCode::kUnsupported,
              {"SparseSparseProduct", "float16"});
  const CsrMatrix d = CsrMatrix::FromSparse(RandomCoo<double>(rng, {3, 3}, 4));
  EXPECT_THROW(SparseSparseProduct(CsrMatrix(), d), Error);
  // An index outside the shape is named, with the operation that was called.
  SparseTensor bad = SparseTensor::Create(Tensor::FromVector<int64_t>({0, 3}, {1, 2}),
                                          Tensor::FromVector<double>({1}), {3, 3});
  ExpectError([&] { SparseSparseProduct(bad, bad); }, {"SparseSparseProduct", "[0 3]"});
}

}  // namespace
}  // namespace tensorkit
