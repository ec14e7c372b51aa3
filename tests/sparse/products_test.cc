#include "tensorkit/sparse/products.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "spcompute_test_util.h"
#include "tensorkit/common/parallel.h"
#include "test_util.h"

namespace tensorkit {
namespace {

using spcompute_testing::AsDoubles;
using spcompute_testing::DenseOracle;
using spcompute_testing::RandomCoo;
using spcompute_testing::RandomDense;
using spcompute_testing::TransposedView;
using ::tensorkit::testing::AtThreadCounts;
using ::tensorkit::testing::ErrorOf;

// alpha * (A @ B) + beta * C0 with A given densely [batches][m][k], B [batches or 1][k][n].
std::vector<double> MatmulOracle(const std::vector<double>& a, const std::vector<double>& b,
                                 const std::vector<double>& c0, int64_t batches, int64_t m,
                                 int64_t k, int64_t n, bool b_batched, double alpha, double beta) {
  std::vector<double> out(static_cast<size_t>(batches * m * n));
  for (int64_t t = 0; t < batches; ++t) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t q = 0; q < k; ++q) {
          s += a[(t * m + i) * k + q] * b[((b_batched ? t : 0) * k + q) * n + j];
        }
        const int64_t o = (t * m + i) * n + j;
        out[o] = alpha * s + (beta == 0 ? 0.0 : beta * c0[o]);
      }
    }
  }
  return out;
}

template <typename T>
void CheckSpmm(std::mt19937& rng, int64_t m, int64_t k, int64_t n, int64_t nnz, double beta) {
  SparseTensor a = RandomCoo<T>(rng, {m, k}, nnz);
  Tensor b = RandomDense<T>(rng, {k, n});
  Tensor c = RandomDense<T>(rng, {m, n});
  const std::vector<double> c0 = AsDoubles(c);
  const std::vector<double> want =
      MatmulOracle(DenseOracle(a), AsDoubles(b), c0, 1, m, k, n, false, 2.0, beta);
  Tensor c_csr = c.Clone();
  SparseDenseProduct(2, beta, a, b, &c);
  EXPECT_EQ(AsDoubles(c), want) << DTypeName(DTypeOf<T>) << " m=" << m << " k=" << k << " n=" << n
                                << " nnz=" << nnz;
  SparseDenseProduct(2, beta, CsrMatrix::FromSparse(a), b, &c_csr);  // int32 column path
  EXPECT_EQ(AsDoubles(c_csr), want);
}

TEST(SparseDenseProductTest, MatchesDenseOracleForEveryDType) {
  std::mt19937 rng(11);
  for (auto [m, k, n, nnz] : std::vector<std::array<int64_t, 4>>{
           {9, 7, 5, 30}, {20, 3, 1, 10}, {4, 50, 16, 0}, {1, 1, 3, 3}, {33, 17, 70, 200}}) {
    CheckSpmm<double>(rng, m, k, n, nnz, 0.5);
    CheckSpmm<float>(rng, m, k, n, nnz, 0.0);
    CheckSpmm<int32_t>(rng, m, k, n, nnz, 3.0);
    CheckSpmm<int64_t>(rng, m, k, n, nnz, -1.0);
    CheckSpmm<int8_t>(rng, m, k, n, nnz, 1.0);
    CheckSpmm<Half>(rng, m, k, n, nnz, 1.0);
  }
}

TEST(SparseDenseProductTest, BetaZeroNeverReadsOutput) {
  std::mt19937 rng(12);
  SparseTensor a = RandomCoo<double>(rng, {6, 5}, 12);
  Tensor b = RandomDense<double>(rng, {5, 4});
  Tensor c =
      Tensor::FromVector(std::vector<double>(24, std::numeric_limits<double>::quiet_NaN()), {6, 4});
  SparseDenseProduct(1, 0, a, b, &c);
  EXPECT_EQ(AsDoubles(c),
            MatmulOracle(DenseOracle(a), AsDoubles(b), {}, 1, 6, 5, 4, false, 1.0, 0.0));
}

TEST(SparseDenseProductTest, StridedOperands) {
  std::mt19937 rng(13);
  SparseTensor a = RandomCoo<double>(rng, {8, 6}, 20);
  Tensor bt = RandomDense<double>(rng, {5, 6});  // b = bt^T, a column-major view
  Tensor b = TransposedView(bt);
  Tensor ct = RandomDense<double>(rng, {5, 8});  // c = ct^T
  Tensor c = TransposedView(ct);
  const std::vector<double> want =
      MatmulOracle(DenseOracle(a), AsDoubles(b), AsDoubles(c), 1, 8, 6, 5, false, -1.0, 2.0);
  SparseDenseProduct(-1, 2, a, b, &c);
  EXPECT_EQ(AsDoubles(c), want);
}

TEST(SparseDenseProductTest, SpmvWithStridedVectors) {
  std::mt19937 rng(14);
  SparseTensor a = RandomCoo<float>(rng, {30, 12}, 60);
  Tensor xs = RandomDense<float>(rng, {24});
  Tensor x = xs.WithPattern(MakePattern({12}, {2}, 1));  // odd elements
  Tensor ys = RandomDense<float>(rng, {90});
  Tensor y = ys.WithPattern(MakePattern({30}, {-3}, 89));  // backwards, every third
  const std::vector<double> want =
      MatmulOracle(DenseOracle(a), AsDoubles(x), AsDoubles(y), 1, 30, 12, 1, false, 1.0, 1.0);
  SparseDenseProduct(1, 1, a, x, &y);
  EXPECT_EQ(AsDoubles(y), want);
  // The CSR overload gives the same.
  Tensor y2 = Tensor::Zeros({30}, DType::kFloat32);
  SparseDenseProduct(1, 0, CsrMatrix::FromSparse(a), x, &y2);
  EXPECT_EQ(AsDoubles(y2),
            MatmulOracle(DenseOracle(a), AsDoubles(x), {}, 1, 30, 12, 1, false, 1.0, 0.0));
}

TEST(SparseDenseProductTest, Batched) {
  std::mt19937 rng(15);
  for (int64_t batches : {1, 3}) {
    SparseTensor a = RandomCoo<double>(rng, {batches, 7, 5}, 40);
    for (bool b_batched : {true, false}) {
      Tensor b =
          b_batched ? RandomDense<double>(rng, {batches, 5, 4}) : RandomDense<double>(rng, {5, 4});
      Tensor c = RandomDense<double>(rng, {batches, 7, 4});
      const std::vector<double> want = MatmulOracle(DenseOracle(a), AsDoubles(b), AsDoubles(c),
                                                    batches, 7, 5, 4, b_batched, 3.0, -1.0);
      SparseDenseProduct(3, -1, a, b, &c);
      EXPECT_EQ(AsDoubles(c), want) << "batches=" << batches << " b_batched=" << b_batched;
    }
  }
}

TEST(SparseDenseProductTest, ResultDoesNotDependOnThreadCount) {
  std::mt19937 rng(16);
  SparseTensor a = RandomCoo<float>(rng, {4000, 300}, 60000);
  std::uniform_real_distribution<float> u(-1, 1);  // non-integer values: rounding matters
  std::vector<float> bv(300 * 8);
  for (float& x : bv) x = u(rng);
  Tensor b = Tensor::FromVector(bv, {300, 8});
  const std::vector<std::vector<float>> results = AtThreadCounts({1, 4}, [&] {
    Tensor c = Tensor::Zeros({4000, 8}, DType::kFloat32);
    SparseDenseProduct(0.3, 0, a, b, &c);
    return c.ToVector<float>();
  });
  EXPECT_EQ(results[0], results[1]);
}

// Enough rows that SpMV splits into several tasks; non-integer values make rounding visible.
TEST(SparseDenseProductTest, SpmvResultDoesNotDependOnThreadCount) {
  std::mt19937 rng(17);
  SparseTensor a = RandomCoo<float>(rng, {20000, 300}, 100000);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> xv(300), yv(20000);
  for (float& v : xv) v = u(rng);
  for (float& v : yv) v = u(rng);
  Tensor x = Tensor::FromVector(xv, {300});
  CsrMatrix csr = CsrMatrix::FromSparse(a);
  std::vector<std::vector<float>> results;  // beta 0 and 0.5 at 1, 2 and 4 threads
  for (const auto& pair : AtThreadCounts({1, 2, 4}, [&] {
         std::vector<std::vector<float>> by_beta;
         for (double beta : {0.0, 0.5}) {
           Tensor y = Tensor::FromVector(yv, {20000});
           SparseDenseProduct(0.3, beta, csr, x, &y);
           by_beta.push_back(y.ToVector<float>());
         }
         return by_beta;
       })) {
    results.insert(results.end(), pair.begin(), pair.end());
  }
  for (size_t i = 2; i < results.size(); ++i) EXPECT_EQ(results[i], results[i % 2]);
  // Oracle straight from the COO entries (a dense [20000, 300] copy would be needlessly big).
  const std::vector<int64_t> idx = a.indices().ToVector<int64_t>();
  const std::vector<float> val = a.values().ToVector<float>();
  std::vector<double> ab(20000, 0.0);
  for (int64_t e = 0; e < a.nnz(); ++e) ab[idx[2 * e]] += double{val[e]} * xv[idx[2 * e + 1]];
  for (int beta_i = 0; beta_i < 2; ++beta_i) {
    for (int64_t r = 0; r < 20000; ++r) {
      const double want = 0.3 * ab[r] + 0.5 * beta_i * yv[r];
      ASSERT_NEAR(results[beta_i][r], want, 1e-4) << r;
    }
  }
}

// With at least 8 entries per output element, a 2-D COO operand is multiplied straight from its
// entries (private accumulators per fixed chunk of entries) instead of through CSR.
TEST(SparseDenseProductTest, ManyEntriesPerOutputUseTheCooEntriesDirectly) {
  std::mt19937 rng(18);
  for (auto [m, k, n, nnz] : std::vector<std::array<int64_t, 4>>{
           {10, 7, 1, 400}, {6, 5, 3, 300}, {3, 4, 2, 500}, {1, 9, 1, 64}}) {
    CheckSpmm<double>(rng, m, k, n, nnz, 0.5);
    CheckSpmm<float>(rng, m, k, n, nnz, 0.0);
    CheckSpmm<int64_t>(rng, m, k, n, nnz, -1.0);
    CheckSpmm<int16_t>(rng, m, k, n, nnz, 1.0);
    CheckSpmm<Half>(rng, m, k, n, nnz, 1.0);
  }
  // Strided vectors, and beta == 0 with NaN in c.
  SparseTensor a = RandomCoo<double>(rng, {12, 6}, 200);
  Tensor xs = RandomDense<double>(rng, {12});
  Tensor x = xs.WithPattern(MakePattern({6}, {-2}, 11));
  Tensor ys = Tensor::FromVector(std::vector<double>(24, std::numeric_limits<double>::quiet_NaN()));
  Tensor y = ys.WithPattern(MakePattern({12}, {2}, 0));
  SparseDenseProduct(2, 0, a, x, &y);
  EXPECT_EQ(AsDoubles(y),
            MatmulOracle(DenseOracle(a), AsDoubles(x), {}, 1, 12, 6, 1, false, 2.0, 0.0));
  EXPECT_TRUE(std::isnan(ys.ToVector<double>()[1]));  // the gaps are not written
}

TEST(SparseDenseProductTest, CooEntriesDirectlyAreBitIdenticalAtAnyThreadCount) {
  std::mt19937 rng(19);
  SparseTensor a = RandomCoo<float>(rng, {3000, 200}, 200000);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> xv(200), yv(3000);
  for (float& v : xv) v = u(rng);
  for (float& v : yv) v = u(rng);
  Tensor x = Tensor::FromVector(xv, {200});
  const std::vector<std::vector<float>> results = AtThreadCounts({1, 2, 3}, [&] {
    Tensor y = Tensor::FromVector(yv, {3000});
    SparseDenseProduct(0.7, 0.5, a, x, &y);
    return y.ToVector<float>();
  });
  EXPECT_EQ(results[1], results[0]);
  EXPECT_EQ(results[2], results[0]);
  const std::vector<double> want =
      MatmulOracle(DenseOracle(a), AsDoubles(x), AsDoubles(Tensor::FromVector(yv, {3000})), 1, 3000,
                   200, 1, false, 0.7, 0.5);
  for (int64_t r = 0; r < 3000; ++r) ASSERT_NEAR(results[0][r], want[r], 1e-3) << r;
}

// An entry outside the shape is reported, naming it, and c keeps its contents.
TEST(SparseDenseProductTest, OutOfRangeEntryLeavesOutputUntouched) {
  std::mt19937 rng(20);
  for (int64_t nnz : {5, 400}) {  // through CSR, and straight from the entries
    SparseTensor good = RandomCoo<double>(rng, {10, 4}, nnz);
    std::vector<int64_t> idx = good.indices().ToVector<int64_t>();
    idx[2 * (nnz - 2) + 1] = 4;  // column 4 of a [10, 4] matrix
    SparseTensor a =
        SparseTensor::Create(Tensor::FromVector(idx, {nnz, 2}), good.values(), {10, 4});
    Tensor b = RandomDense<double>(rng, {4, 1});
    Tensor c = RandomDense<double>(rng, {10, 1});
    const std::vector<double> before = AsDoubles(c);
    const std::string msg = ErrorOf([&] { SparseDenseProduct(1, 1, a, b, &c); });
    EXPECT_NE(msg.find("SparseDenseProduct"), std::string::npos) << msg;
    EXPECT_NE(msg.find("4"), std::string::npos) << msg;
    EXPECT_EQ(AsDoubles(c), before);
  }
}

TEST(DenseSparseProductTest, MatchesDenseOracle) {
  std::mt19937 rng(17);
  for (auto [m, k, n, nnz] :
       std::vector<std::array<int64_t, 4>>{{6, 8, 5, 20}, {1, 3, 9, 0}, {12, 10, 10, 60}}) {
    SparseTensor b = RandomCoo<double>(rng, {k, n}, nnz);
    Tensor at = RandomDense<double>(rng, {k, m});
    Tensor a = TransposedView(at);
    Tensor c = RandomDense<double>(rng, {m, n});
    const std::vector<double> want =
        MatmulOracle(AsDoubles(a), DenseOracle(b), AsDoubles(c), 1, m, k, n, false, 2.0, 1.0);
    DenseSparseProduct(2, 1, a, b, &c);
    EXPECT_EQ(AsDoubles(c), want);
    // a vector times a matrix
    Tensor x = RandomDense<double>(rng, {k});
    Tensor y = Tensor::Empty({n}, DType::kFloat64);
    DenseSparseProduct(1, 0, x, CsrMatrix::FromSparse(b), &y);
    EXPECT_EQ(AsDoubles(y),
              MatmulOracle(AsDoubles(x), DenseOracle(b), {}, 1, 1, k, n, false, 1.0, 0.0));
  }
}

TEST(SparseDenseProductTest, RejectsBadInput) {
  std::mt19937 rng(18);
  SparseTensor a = RandomCoo<float>(rng, {4, 3}, 5);
  Tensor b = Tensor::Zeros({3, 2}, DType::kFloat32);
  Tensor c = Tensor::Zeros({4, 2}, DType::kFloat32);
  Tensor wrong_k = Tensor::Zeros({5, 2}, DType::kFloat32);
  Tensor wrong_c = Tensor::Zeros({4, 3}, DType::kFloat32);
  Tensor b64 = Tensor::Zeros({3, 2}, DType::kFloat64);
  EXPECT_NE(ErrorOf([&] { SparseDenseProduct(1, 0, a, wrong_k, &c); }).find("first dim must be 3"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { SparseDenseProduct(1, 0, a, b, &wrong_c); }).find("gives [4 2]"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { SparseDenseProduct(1, 0, a, b64, &c); }).find("dtypes differ"),
            std::string::npos);
  EXPECT_THROW(SparseDenseProduct(1, 0, a, b, nullptr), Error);
  EXPECT_THROW(SparseDenseProduct(1, 0, a, b, &b), Error);  // c overlaps b (and has bad dims)
  Tensor square = Tensor::Zeros({3, 3}, DType::kFloat32);
  SparseTensor sq = RandomCoo<float>(rng, {3, 3}, 4);
  EXPECT_NE(ErrorOf([&] { SparseDenseProduct(1, 0, sq, square, &square); }).find("overlaps"),
            std::string::npos);
  SparseTensor four_d = RandomCoo<float>(rng, {2, 2, 2, 2}, 3);
  EXPECT_NE(ErrorOf([&] { SparseDenseProduct(1, 0, four_d, b, &c); }).find("[B, M, K]"),
            std::string::npos);
  SparseTensor batched = RandomCoo<float>(rng, {2, 4, 3}, 5);
  Tensor b_bad_batch = Tensor::Zeros({3, 3, 2}, DType::kFloat32);
  Tensor c3 = Tensor::Zeros({2, 4, 2}, DType::kFloat32);
  EXPECT_THROW(SparseDenseProduct(1, 0, batched, b_bad_batch, &c3), Error);
  SparseTensor bools = SparseTensor::Create(Tensor::Zeros({1, 2}, DType::kInt64),
                                            Tensor::Zeros({1}, DType::kBool), {4, 3});
  Tensor bb = Tensor::Zeros({3, 2}, DType::kBool), cb = Tensor::Zeros({4, 2}, DType::kBool);
  EXPECT_THROW(SparseDenseProduct(1, 0, bools, bb, &cb), Error);
  Tensor dense_a = Tensor::Zeros({2, 5}, DType::kFloat32);
  Tensor out = Tensor::Zeros({2, 3}, DType::kFloat32);
  EXPECT_NE(ErrorOf([&] { DenseSparseProduct(1, 0, dense_a, a, &out); }).find("last dim must be 4"),
            std::string::npos);
}

TEST(SparseSparseProductTest, MatchesDenseOracle) {
  std::mt19937 rng(19);
  for (auto [m, k, n, na, nb] : std::vector<std::array<int64_t, 5>>{
           {6, 5, 7, 12, 15}, {30, 20, 25, 100, 80}, {3, 4, 5, 0, 6}, {1, 1, 1, 3, 2}}) {
    SparseTensor a = RandomCoo<double>(rng, {m, k}, na);
    SparseTensor b = RandomCoo<double>(rng, {k, n}, nb);
    SparseTensor c = SparseSparseProduct(a, b);
    EXPECT_EQ(c.shape(), (std::vector<int64_t>{m, n}));
    EXPECT_EQ(c.order(), (std::vector<int>{0, 1}));
    EXPECT_EQ(DenseOracle(c),
              MatmulOracle(DenseOracle(a), DenseOracle(b), {}, 1, m, k, n, false, 1.0, 0.0));
    EXPECT_NO_THROW(CsrMatrix::Create(CsrMatrix::FromSparse(c).row_ptr(),
                                      CsrMatrix::FromSparse(c).col_indices(),
                                      CsrMatrix::FromSparse(c).values(), {m, n}));
    // Integer values and the CSR overload.
    SparseTensor ai = RandomCoo<int64_t>(rng, {m, k}, na);
    SparseTensor bi = RandomCoo<int64_t>(rng, {k, n}, nb);
    CsrMatrix ci = SparseSparseProduct(CsrMatrix::FromSparse(ai), CsrMatrix::FromSparse(bi));
    EXPECT_EQ(DenseOracle(ci.ToSparse()),
              MatmulOracle(DenseOracle(ai), DenseOracle(bi), {}, 1, m, k, n, false, 1.0, 0.0));
  }
}

TEST(SparseSparseProductTest, SquareOfOneMatrixAndBoolValues) {
  std::mt19937 rng(23);
  SparseTensor a = RandomCoo<double>(rng, {15, 15}, 40);
  EXPECT_EQ(DenseOracle(SparseSparseProduct(a, a)),
            MatmulOracle(DenseOracle(a), DenseOracle(a), {}, 1, 15, 15, 15, false, 1.0, 0.0));
  // bool: or of ands; every stored result is true (GraphBLAS keeps such results "iso").
  SparseTensor p = RandomCoo<double>(rng, {6, 5}, 8, /*dups=*/false);
  SparseTensor q = RandomCoo<double>(rng, {5, 7}, 8, /*dups=*/false);
  auto to_bool = [](const SparseTensor& st) {
    std::vector<double> v = st.values().ToVector<double>();
    std::vector<bool> b(v.size(), true);
    return SparseTensor::Create(st.indices(), Tensor::FromVector(b), st.shape());
  };
  SparseTensor pb = SparseSparseProduct(to_bool(p), to_bool(q));
  const std::vector<int64_t> pi = p.indices().ToVector<int64_t>(),
                             qi = q.indices().ToVector<int64_t>();
  std::vector<double> dp(30, 0.0), dq(35, 0.0);
  for (int64_t e = 0; e < 8; ++e) {
    dp[pi[2 * e] * 5 + pi[2 * e + 1]] = 1;
    dq[qi[2 * e] * 7 + qi[2 * e + 1]] = 1;
  }
  std::vector<double> want = MatmulOracle(dp, dq, {}, 1, 6, 5, 7, false, 1.0, 0.0);
  for (double& w : want) w = w > 0 ? 1 : 0;
  std::vector<double> got(42, 0.0);
  const std::vector<int64_t> ri = pb.indices().ToVector<int64_t>();
  const std::vector<bool> rv = pb.values().ToVector<bool>();
  for (int64_t e = 0; e < pb.nnz(); ++e) got[ri[2 * e] * 7 + ri[2 * e + 1]] = rv[e] ? 1 : 0;
  EXPECT_EQ(got, want);
}

TEST(SparseSparseProductTest, RejectsBadInput) {
  std::mt19937 rng(20);
  SparseTensor a = RandomCoo<double>(rng, {4, 3}, 5);
  SparseTensor b = RandomCoo<double>(rng, {4, 3}, 5);
  SparseTensor bf = RandomCoo<float>(rng, {3, 3}, 5);
  SparseTensor ah = RandomCoo<Half>(rng, {3, 3}, 5);
  EXPECT_NE(ErrorOf([&] { SparseSparseProduct(a, b); }).find("columns must equal b's rows"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { SparseSparseProduct(a, bf); }).find("dtypes differ"), std::string::npos);
  EXPECT_NE(ErrorOf([&] { SparseSparseProduct(ah, ah); }).find("float16"), std::string::npos);
}

TEST(SparseElementwiseTest, AddAndMultiplyMatchDenseOracle) {
  std::mt19937 rng(21);
  for (std::vector<int64_t> shape :
       std::vector<std::vector<int64_t>>{{7, 6}, {4, 3, 5}, {30}, {2, 3, 2, 2}, {5, 0}}) {
    const int64_t size = spcompute_testing::Product(shape);
    const int64_t nnz = size == 0 ? 0 : size / 2 + 1;
    SparseTensor a = RandomCoo<int64_t>(rng, shape, nnz);
    SparseTensor b = RandomCoo<int64_t>(rng, shape, nnz / 2);
    const std::vector<double> da = DenseOracle(a), db = DenseOracle(b);
    SparseTensor sum = SparseAdd(a, b);
    SparseTensor prod = SparseMultiply(a, b);
    std::vector<double> want_sum(da.size()), want_prod(da.size());
    for (size_t i = 0; i < da.size(); ++i) {
      want_sum[i] = da[i] + db[i];
      want_prod[i] = da[i] * db[i];
    }
    EXPECT_EQ(DenseOracle(sum), want_sum);
    EXPECT_EQ(DenseOracle(prod), want_prod);
    EXPECT_TRUE(sum.IndicesValid());
    EXPECT_LE(prod.nnz(), std::min(a.nnz(), b.nnz()));
  }
  std::mt19937 rng2(22);
  SparseTensor a = RandomCoo<double>(rng2, {3, 3}, 4);
  SparseTensor b = RandomCoo<double>(rng2, {3, 4}, 4);
  EXPECT_NE(ErrorOf([&] { SparseAdd(a, b); }).find("shapes differ"), std::string::npos);
}

}  // namespace
}  // namespace tensorkit
