// Tests of dense/gemm.h against a naive triple loop.
#include "tensorkit/dense/gemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "tensorkit/common/error.h"
#include "tensorkit/common/parallel.h"
#include "tensorkit/common/simd_path.h"

namespace tensorkit::gemm {
namespace {

// Restores the thread count a test changes.
class ThreadCountGuard {
 public:
  ThreadCountGuard() : saved_(GetNumThreads()) {}
  ~ThreadCountGuard() { SetNumThreads(saved_); }

 private:
  int saved_;
};

// A row-major operand stored rows x cols with leading dimension ld >= cols.
template <typename T>
struct Matrix {
  int64_t rows = 0, cols = 0, ld = 1;
  std::vector<T> data;
  T& at(int64_t i, int64_t j) { return data[i * ld + j]; }
  T at(int64_t i, int64_t j) const { return data[i * ld + j]; }
};

template <typename T>
Matrix<T> RandomMatrix(int64_t rows, int64_t cols, int64_t pad, std::mt19937& rng) {
  Matrix<T> x{rows, cols, std::max<int64_t>(1, cols + pad), {}};
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  x.data.resize(std::max<int64_t>(1, rows * x.ld));
  for (auto& v : x.data) v = static_cast<T>(dist(rng));
  return x;
}

// op(X)[i, j]: X[i, j], or X[j, i] when transposed.
template <typename T>
double OpAt(const Matrix<T>& x, bool trans, int64_t i, int64_t j) {
  return trans ? x.at(j, i) : x.at(i, j);
}

// The oracle: C = alpha*op(A)*op(B) + beta*C in double, and a bound on its rounding error
// (sum of |terms|) for each element.
template <typename T>
void NaiveGemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const Matrix<T>& a,
               const Matrix<T>& b, double beta, const Matrix<T>& c, std::vector<double>* ref,
               std::vector<double>* mag) {
  ref->assign(m * n, 0.0);
  mag->assign(m * n, 0.0);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double s = 0, sa = 0;
      for (int64_t p = 0; p < k; ++p) {
        const double t = OpAt(a, ta, i, p) * OpAt(b, tb, p, j);
        s += t;
        sa += std::fabs(t);
      }
      const double old = beta == 0 ? 0.0 : beta * c.at(i, j);
      (*ref)[i * n + j] = alpha * s + old;
      (*mag)[i * n + j] = std::fabs(alpha) * sa + std::fabs(old);
    }
  }
}

template <typename T>
constexpr DType kDType = std::is_same_v<T, float> ? DType::kFloat32 : DType::kFloat64;
template <typename T>
constexpr double kTol = std::is_same_v<T, float> ? 3e-5 : 1e-13;

// Checks c against the oracle, element by element; reports the first element out of tolerance.
template <typename T>
void ExpectNear(const Matrix<T>& c, const std::vector<double>& ref, const std::vector<double>& mag,
                const std::string& what) {
  for (int64_t i = 0; i < c.rows; ++i) {
    for (int64_t j = 0; j < c.cols; ++j) {
      const double r = ref[i * c.cols + j];
      const double tol = kTol<T> * mag[i * c.cols + j] + 1e-30;
      // Written so that NaN fails too.
      if (!(std::fabs(c.at(i, j) - r) <= tol)) {
        FAIL() << what << " at (" << i << ", " << j << "): got " << c.at(i, j) << ", expected " << r
               << " within " << tol;
      }
    }
  }
}

// One random product of the given sizes compared with the oracle. Leading dimensions exceed the
// row lengths by `pad`, or by a random 0..2 when pad < 0.
template <typename T>
void CheckRandomProduct(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha,
                        double beta, std::mt19937& rng, int64_t pad = -1) {
  auto p = [&] { return pad >= 0 ? pad : static_cast<int64_t>(rng() % 3); };
  const Matrix<T> a = ta ? RandomMatrix<T>(k, m, p(), rng) : RandomMatrix<T>(m, k, p(), rng);
  const Matrix<T> b = tb ? RandomMatrix<T>(n, k, p(), rng) : RandomMatrix<T>(k, n, p(), rng);
  Matrix<T> c = RandomMatrix<T>(m, n, p(), rng);
  std::vector<double> ref, mag;
  NaiveGemm(ta, tb, m, n, k, alpha, a, b, beta, c, &ref, &mag);
  Gemm(kDType<T>, ta, tb, m, n, k, alpha, a.data.data(), a.ld, b.data.data(), b.ld, beta,
       c.data.data(), c.ld);
  ExpectNear(c, ref, mag,
             "m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k) +
                 " ta=" + std::to_string(ta) + " tb=" + std::to_string(tb));
}

template <typename T>
class GemmTyped : public ::testing::Test {};
using GemmTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(GemmTyped, GemmTypes);

TYPED_TEST(GemmTyped, RandomSizesAllTransposes) {
  std::mt19937 rng(1234);
  std::uniform_int_distribution<int64_t> size(1, 70);
  const double alphas[] = {1.0, -0.5, 2.0};
  const double betas[] = {0.0, 1.0, -1.5};
  for (int trial = 0; trial < 24; ++trial) {
    const bool ta = trial & 1, tb = (trial >> 1) & 1;
    CheckRandomProduct<TypeParam>(ta, tb, size(rng), size(rng), size(rng), alphas[trial % 3],
                                  betas[(trial / 3) % 3], rng);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

TYPED_TEST(GemmTyped, VectorShapes) {
  std::mt19937 rng(7);
  // m, n or k equal to 1: row/column vectors and outer products.
  for (auto [m, n, k] : {std::tuple{1, 33, 17}, {29, 1, 17}, {31, 37, 1}, {1, 1, 50}, {1, 1, 1}}) {
    for (int t = 0; t < 4; ++t) {
      // Tight leading dimensions too: a vector may then have row and column stride 1.
      CheckRandomProduct<TypeParam>(t & 1, t & 2, m, n, k, 1.5, 0.5, rng, 0);
      CheckRandomProduct<TypeParam>(t & 1, t & 2, m, n, k, 1.5, 0.5, rng);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

// Products large enough to be cut into tiles of C: row tiles (each needs its rows of op(A), with
// A transposed or not) and column tiles (its columns of op(B)).
TYPED_TEST(GemmTyped, TiledProducts) {
  std::mt19937 rng(21);
  for (bool trans : {false, true}) {
    CheckRandomProduct<TypeParam>(trans, !trans, 1030, 16, 160, 0.5, 0.0, rng);
    CheckRandomProduct<TypeParam>(!trans, trans, 16, 1030, 160, 0.5, 2.0, rng);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

TYPED_TEST(GemmTyped, BetaZeroNeverReadsC) {
  using T = TypeParam;
  std::mt19937 rng(3);
  const Matrix<T> a = RandomMatrix<T>(9, 12, 0, rng);
  const Matrix<T> b = RandomMatrix<T>(12, 10, 0, rng);
  Matrix<T> c = RandomMatrix<T>(9, 10, 0, rng);
  std::vector<double> ref, mag;
  NaiveGemm(false, false, 9, 10, 12, 2.0, a, b, 0.0, c, &ref, &mag);
  std::fill(c.data.begin(), c.data.end(), std::numeric_limits<T>::quiet_NaN());
  Gemm(kDType<T>, false, false, 9, 10, 12, 2.0, a.data.data(), a.ld, b.data.data(), b.ld, 0.0,
       c.data.data(), c.ld);
  ExpectNear(c, ref, mag, "beta=0 with NaN in C");
}

TYPED_TEST(GemmTyped, KZeroScalesC) {
  using T = TypeParam;
  std::vector<T> c = {1, -2, 3, 4, 5, -6};
  Gemm(kDType<T>, false, false, 2, 3, 0, 1.0, nullptr, 1, nullptr, 3, -2.0, c.data(), 3);
  EXPECT_EQ(c, (std::vector<T>{-2, 4, -6, -8, -10, 12}));
  // beta == 0 and k == 0: zeros even over NaN.
  std::fill(c.begin(), c.end(), std::numeric_limits<T>::quiet_NaN());
  Gemm(kDType<T>, true, true, 2, 3, 0, 1.0, nullptr, 2, nullptr, 1, 0.0, c.data(), 3);
  EXPECT_EQ(c, std::vector<T>(6, T(0)));
}

TYPED_TEST(GemmTyped, AlphaZeroNeverReadsAOrB) {
  using T = TypeParam;
  const T nan = std::numeric_limits<T>::quiet_NaN();
  std::vector<T> a(6, nan), b(6, nan), c = {1, 2, 3, 4};
  Gemm(kDType<T>, false, false, 2, 2, 3, 0.0, a.data(), 3, b.data(), 2, 3.0, c.data(), 2);
  EXPECT_EQ(c, (std::vector<T>{3, 6, 9, 12}));
}

TYPED_TEST(GemmTyped, EmptyOutputTouchesNothing) {
  using T = TypeParam;
  std::vector<T> c(4, T(7));
  Gemm(kDType<T>, false, false, 0, 4, 5, 1.0, nullptr, 5, nullptr, 4, 0.0, c.data(), 4);
  Gemm(kDType<T>, false, false, 4, 0, 5, 1.0, nullptr, 5, nullptr, 1, 0.0, c.data(), 1);
  Gemm(kDType<T>, false, false, 0, 0, 0, 1.0, nullptr, 1, nullptr, 1, 0.0, nullptr, 1);
  EXPECT_EQ(c, std::vector<T>(4, T(7)));
}

// Runs fn, expecting Error with `code` whose message contains `part`.
template <typename Fn>
void ExpectError(Fn fn, ErrorCode code, const std::string& part) {
  try {
    fn();
    ADD_FAILURE() << "no Error; expected one containing '" << part << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

TEST(Gemm, RejectsBadArguments) {
  std::vector<float> a(64), b(64), c(64);
  const float* pa = a.data();
  const float* pb = b.data();
  float* pc = c.data();
  const auto f32 = DType::kFloat32;
  ExpectError([&] { Gemm(f32, false, false, -1, 2, 2, 1, pa, 2, pb, 2, 0, pc, 2); },
              ErrorCode::kInvalidArgument, "Gemm: sizes m=-1");
  // No transpose: A is m x k (lda >= k); transposed: A is k x m (lda >= m).
  ExpectError([&] { Gemm(f32, false, false, 2, 3, 4, 1, pa, 3, pb, 3, 0, pc, 3); },
              ErrorCode::kInvalidArgument, "Gemm: lda 3 is less than 4");
  ExpectError([&] { Gemm(f32, true, false, 2, 3, 4, 1, pa, 1, pb, 3, 0, pc, 3); },
              ErrorCode::kInvalidArgument, "Gemm: lda 1 is less than 2");
  ExpectError([&] { Gemm(f32, false, false, 2, 3, 4, 1, pa, 4, pb, 2, 0, pc, 3); },
              ErrorCode::kInvalidArgument, "Gemm: ldb 2 is less than 3");
  ExpectError([&] { Gemm(f32, false, true, 2, 3, 4, 1, pa, 4, pb, 3, 0, pc, 3); },
              ErrorCode::kInvalidArgument, "Gemm: ldb 3 is less than 4");
  ExpectError([&] { Gemm(f32, false, false, 2, 3, 4, 1, pa, 4, pb, 3, 0, pc, 2); },
              ErrorCode::kInvalidArgument, "Gemm: ldc 2 is less than 3");
  ExpectError([&] { Gemm(f32, false, false, 2, 3, 4, 1, pa, 4, pb, 3, 0, pc, 0); },
              ErrorCode::kInvalidArgument, "ldc 0");
  ExpectError([&] { Gemm(f32, false, false, 2, 3, 4, 1, nullptr, 4, pb, 3, 0, pc, 3); },
              ErrorCode::kInvalidArgument, "Gemm: A is null");
  ExpectError([&] { Gemm(f32, false, false, 2, 3, 4, 1, pa, 4, pb, 3, 0, nullptr, 3); },
              ErrorCode::kInvalidArgument, "Gemm: C is null");
  ExpectError([&] { Gemm(DType::kInt32, false, false, 2, 3, 4, 1, pa, 4, pb, 3, 0, pc, 3); },
              ErrorCode::kUnsupported, "Gemm");
  ExpectError(
      [&] { GemmBatched(f32, false, false, 2, 2, 2, 1, pa, 2, 4, pb, 2, 4, 0, pc, 2, 0, 3); },
      ErrorCode::kInvalidArgument, "GemmBatched: stride_c is 0");
  ExpectError(
      [&] { GemmBatched(f32, false, false, 2, 2, 2, 1, pa, 2, 4, pb, 2, 4, 0, pc, 2, 4, -1); },
      ErrorCode::kInvalidArgument, "GemmBatched: batch -1");
  const int64_t huge = std::numeric_limits<int64_t>::max() / 2 + 1;
  ExpectError(
      [&] { GemmBatched(f32, false, false, 2, 2, 2, 1, pa, 2, huge, pb, 2, 4, 0, pc, 2, 4, 3); },
      ErrorCode::kInvalidArgument, "overflows int64");
}

// Each product of a batch against the oracle; B shared by all products (stride 0).
TYPED_TEST(GemmTyped, BatchedMatchesNaive) {
  using T = TypeParam;
  std::mt19937 rng(99);
  for (auto [m, n, k, batch, ta, tb] : {std::tuple{13, 17, 11, 9, false, false},
                                        {40, 30, 50, 3, true, false},
                                        {5, 6, 7, 33, false, true},
                                        {20, 20, 20, 1, true, true}}) {
    const int64_t a_rows = ta ? k : m, a_cols = ta ? m : k;
    const int64_t b_rows = tb ? n : k, b_cols = tb ? k : n;
    std::vector<Matrix<T>> as, cs;
    const Matrix<T> b = RandomMatrix<T>(b_rows, b_cols, 1, rng);
    // One buffer per operand kind, products one after another with a gap of 5 elements.
    const int64_t stride_a = a_rows * (a_cols + 2) + 5, stride_c = m * (n + 1) + 5;
    std::vector<T> abuf(batch * stride_a), cbuf(batch * stride_c);
    std::vector<std::vector<double>> refs(batch), mags(batch);
    for (int64_t i = 0; i < batch; ++i) {
      as.push_back(RandomMatrix<T>(a_rows, a_cols, 2, rng));
      cs.push_back(RandomMatrix<T>(m, n, 1, rng));
      std::copy(as[i].data.begin(), as[i].data.end(), abuf.begin() + i * stride_a);
      std::copy(cs[i].data.begin(), cs[i].data.end(), cbuf.begin() + i * stride_c);
      NaiveGemm(ta, tb, m, n, k, 0.75, as[i], b, -0.5, cs[i], &refs[i], &mags[i]);
    }
    GemmBatched(kDType<T>, ta, tb, m, n, k, 0.75, abuf.data(), as[0].ld, stride_a, b.data.data(),
                b.ld, 0, -0.5, cbuf.data(), cs[0].ld, stride_c, batch);
    for (int64_t i = 0; i < batch; ++i) {
      std::copy(cbuf.begin() + i * stride_c, cbuf.begin() + i * stride_c + cs[i].data.size(),
                cs[i].data.begin());
      ExpectNear(cs[i], refs[i], mags[i], "batch item " + std::to_string(i));
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

TEST(GemmBatched, BetaZeroAndDegenerate) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // 4 products of 2x2 identity times B_i, C full of NaN, beta 0.
  std::vector<float> a = {1, 0, 0, 1}, b(16), c(16, nan);
  for (int i = 0; i < 16; ++i) b[i] = static_cast<float>(i);
  GemmBatched(DType::kFloat32, false, false, 2, 2, 2, 1, a.data(), 2, 0, b.data(), 2, 4, 0,
              c.data(), 2, 4, 4);
  EXPECT_EQ(c, b);
  // k == 0 with beta 0 over NaN gives zeros; batch 0 and m == 0 touch nothing.
  std::fill(c.begin(), c.end(), nan);
  GemmBatched(DType::kFloat32, false, false, 2, 2, 0, 1, nullptr, 1, 0, nullptr, 2, 0, 0, c.data(),
              2, 4, 4);
  EXPECT_EQ(c, std::vector<float>(16, 0.0f));
  GemmBatched(DType::kFloat32, false, false, 2, 2, 2, 1, nullptr, 2, 4, nullptr, 2, 4, 0, nullptr,
              2, 4, 0);
  GemmBatched(DType::kFloat32, false, false, 0, 2, 2, 1, nullptr, 2, 4, nullptr, 2, 4, 0, nullptr,
              2, 4, 5);
  EXPECT_EQ(c, std::vector<float>(16, 0.0f));
}

// Results must be bit-identical at any thread count, whether each product runs alone on all
// threads or products run side by side on one thread each.
TEST(Gemm, BitIdenticalAtAnyThreadCount) {
  ThreadCountGuard guard;
  std::mt19937 rng(5);
  // Square-ish, skinny and transposed, and one cut into tiles (BLIS may take different paths).
  for (auto [m, n, k, ta, tb] : {std::tuple{190, 230, 170, false, false},
                                 {40, 600, 300, true, true},
                                 {1100, 64, 64, true, false}}) {
    const int64_t batch = 6;
    // op(A_i) is m x k: A_i is stored m x k, or k x m when transposed; B (shared) likewise.
    const int64_t lda = ta ? m : k, ldb = tb ? k : n, size_a = m * k;
    const Matrix<float> a = RandomMatrix<float>(batch * size_a, 1, 0, rng);
    const Matrix<float> b = RandomMatrix<float>(k * n, 1, 0, rng);
    auto run = [&](int threads, bool batched) {
      SetNumThreads(threads);
      std::vector<float> c(batch * m * n);
      if (batched) {
        GemmBatched(DType::kFloat32, ta, tb, m, n, k, 1, a.data.data(), lda, size_a, b.data.data(),
                    ldb, 0, 0, c.data(), n, m * n, batch);
      } else {
        for (int64_t i = 0; i < batch; ++i) {
          Gemm(DType::kFloat32, ta, tb, m, n, k, 1, a.data.data() + i * size_a, lda, b.data.data(),
               ldb, 0, c.data() + i * m * n, n);
        }
      }
      return c;
    };
    const std::vector<float> ref = run(1, false);
    for (int threads : {1, 2, 3}) {
      for (bool batched : {false, true}) {
        const std::vector<float> c = run(threads, batched);
        EXPECT_EQ(0, std::memcmp(c.data(), ref.data(), c.size() * sizeof(float)))
            << "m=" << m << " threads=" << threads << " batched=" << batched;
      }
    }
  }
}

// Called from inside a ParallelFor body (nested oneTBB tasks): the same bits as from outside.
TEST(Gemm, InsideParallelForMatchesOutside) {
  ThreadCountGuard guard;
  SetNumThreads(2);
  std::mt19937 rng(11);
  const int64_t m = 150, n = 140, k = 130, count = 4;
  const Matrix<double> a = RandomMatrix<double>(m, k, 0, rng);
  const Matrix<double> b = RandomMatrix<double>(k, n, 0, rng);
  std::vector<double> outside(m * n);
  Gemm(DType::kFloat64, false, false, m, n, k, 1, a.data.data(), k, b.data.data(), n, 0,
       outside.data(), n);
  std::vector<std::vector<double>> inside(count, std::vector<double>(m * n));
  ParallelFor(0, count, 1, [&](int64_t ib, int64_t ie) {
    for (int64_t i = ib; i < ie; ++i) {
      Gemm(DType::kFloat64, false, false, m, n, k, 1, a.data.data(), k, b.data.data(), n, 0,
           inside[i].data(), n);
    }
  });
  for (int64_t i = 0; i < count; ++i) {
    EXPECT_EQ(inside[i], outside) << i;
  }
}

TEST(Gemm, BackendNameNamesKernelsAndWhy) {
  const std::string name = BackendName();
  EXPECT_EQ(name.rfind("blis(", 0), 0u) << name;
  EXPECT_NE(name.find("): "), std::string::npos) << name;
  EXPECT_NE(name.find("sgemm micro-tile "), std::string::npos) << name;
}

// BLIS 0.9 takes its AVX2 "haswell" kernels on Intel AVX-512 parts whose brand string it cannot
// read; tensorkit must choose the AVX-512 ones on any CPU that can run them.
TEST(Gemm, AvxFiveTwelveCpusGetAvxFiveTwelveKernels) {
  if (!SimdPathSupported(SimdPath::kAvx512)) {
    GTEST_SKIP() << "this CPU (or OS) lacks AVX-512 F/DQ/BW/VL; BackendName: " << BackendName();
  }
  if (std::getenv("BLIS_ARCH_TYPE") != nullptr) GTEST_SKIP() << "BLIS_ARCH_TYPE is set by hand";
  const std::string name = BackendName();
  EXPECT_EQ(name.rfind("blis(skx)", 0), 0u) << name;
  // The kernels really are in use: a product gives the right answer through them.
  std::vector<float> a(64 * 64, 1.0f), b(64 * 64, 2.0f), c(64 * 64, 0.0f);
  Gemm(DType::kFloat32, false, false, 64, 64, 64, 1.0, a.data(), 64, b.data(), 64, 0.0, c.data(),
       64);
  for (float v : c) ASSERT_EQ(v, 128.0f);
}

// ctest runs this with BLIS_ARCH_TYPE=3 (BLIS 0.9's "haswell"): the user's choice wins, which is
// also how a benchmark forces the AVX2 kernels on an AVX-512 machine to show what skx buys.
TEST(Gemm, BlisArchTypeFromTheEnvironmentWins) {
  const char* env = std::getenv("BLIS_ARCH_TYPE");
  if (env == nullptr) GTEST_SKIP() << "runs as ctest's dense.gemm_blis_arch_override";
  const std::string name = BackendName();
  EXPECT_NE(name.find("BLIS_ARCH_TYPE set in the environment"), std::string::npos) << name;
  if (std::string(env) == "3") {
    EXPECT_EQ(name.rfind("blis(haswell)", 0), 0u) << name;
  }
  std::vector<double> a(96 * 80, 0.5), b(80 * 70, 4.0), c(96 * 70, 1.0);
  Gemm(DType::kFloat64, false, false, 96, 70, 80, 1.0, a.data(), 80, b.data(), 70, 1.0, c.data(),
       70);
  for (double v : c) ASSERT_EQ(v, 161.0);
}

TEST(Gemm, WithoutAvxFiveTwelveBlisKeepsItsOwnChoice) {
  if (SimdPathSupported(SimdPath::kAvx512)) {
    GTEST_SKIP() << "this CPU has AVX-512; BackendName: " << BackendName();
  }
  if (std::getenv("BLIS_ARCH_TYPE") != nullptr) GTEST_SKIP() << "BLIS_ARCH_TYPE is set by hand";
  const std::string name = BackendName();
  EXPECT_EQ(name.find("blis(skx)"), std::string::npos) << name;
  EXPECT_NE(name.find("BLIS's own choice"), std::string::npos) << name;
}

}  // namespace
}  // namespace tensorkit::gemm
