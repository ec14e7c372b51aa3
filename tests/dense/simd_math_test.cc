// The vectorisable exp/log/tanh of dense/simd_math.h, run through the public ops on every
// instruction-set path this CPU supports: accuracy against the C library (in double for the
// float32 functions), special values like std::exp / std::log, and bit-identical results
// across paths. Also the chunked parallel sum of one long summed axis: bit-identical at any
// thread count.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "dense/simd_paths.h"
#include "tensorkit/common/parallel.h"
#include "tensorkit/dense/engine.h"
#include "tensorkit/dense/ops.h"
#include "tensorkit/dense/ops_internal.h"

namespace tensorkit {
namespace {

using testing::PathGuard;
using testing::PathName;
using testing::SupportedPaths;

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

// Distance in representable values (ulps) between a and b; NaN is 0 from NaN and far from
// anything else; inf is one step past the largest finite value.
template <typename T>
int64_t UlpDiff(T a, T b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0 : INT64_MAX;
  using I = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
  auto ordered = [](T v) -> int64_t {
    const I bits = std::bit_cast<I>(v);
    return bits < 0 ? -static_cast<int64_t>(bits & std::numeric_limits<I>::max()) : bits;
  };
  const int64_t d = ordered(a) - ordered(b);
  return d < 0 ? -d : d;
}

// Floats from lo to hi (same sign, lo closer to 0) visiting every `step`-th representable
// value, plus the special values every function must get right.
std::vector<float> FloatSweep(float lo, float hi, int32_t step) {
  std::vector<float> v;
  const int32_t a = std::bit_cast<int32_t>(lo), b = std::bit_cast<int32_t>(hi);
  for (int64_t i = a; i <= b; i += step) v.push_back(std::bit_cast<float>(static_cast<int32_t>(i)));
  return v;
}

std::vector<float> SpecialFloats() {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  std::vector<float> v = {0.0f,
                          -0.0f,
                          kInf,
                          -kInf,
                          std::numeric_limits<float>::quiet_NaN(),
                          std::numeric_limits<float>::min(),
                          std::numeric_limits<float>::denorm_min(),
                          std::numeric_limits<float>::max(),
                          -std::numeric_limits<float>::max(),
                          1.0f,
                          -1.0f};
  // Around the thresholds of exp: overflow (88.72), the normal/subnormal boundary (-87.34),
  // the last nonzero result (-103.97) and the clamps of ExpF32 (89, -104).
  for (float t : {88.7228394f, -87.3365479f, -103.972076f, -103.278931f, 89.0f, -104.0f}) {
    float x = t;
    for (int k = 0; k < 8; ++k) x = std::nextafter(x, -kInf);
    for (int k = 0; k < 16; ++k, x = std::nextafter(x, kInf)) v.push_back(x);
  }
  return v;
}

// The float32 result of `op` on `xs` for path `p`, via the public op (so through the engine's
// dispatched inner loop).
std::vector<float> RunFloatOp(void (*op)(const Tensor&, Tensor*), const std::vector<float>& xs) {
  Tensor in = Tensor::FromVector(xs);
  Tensor out = Tensor::Empty({static_cast<int64_t>(xs.size())}, DType::kFloat32);
  op(in, &out);
  return out.ToVector<float>();
}

std::vector<double> RunDoubleOp(void (*op)(const Tensor&, Tensor*), const std::vector<double>& xs) {
  Tensor in = Tensor::FromVector(xs);
  Tensor out = Tensor::Empty({static_cast<int64_t>(xs.size())}, DType::kFloat64);
  op(in, &out);
  return out.ToVector<double>();
}

// Checks op against ref (exact up to double rounding) within max_ulp on every path, and that
// every path gives the default path's bits.
void CheckFloatOp(const std::string& name, void (*op)(const Tensor&, Tensor*),
                  double (*ref)(double), const std::vector<float>& xs, int64_t max_ulp) {
  PathGuard guard;
  std::vector<float> base;
  for (SimdPath p : SupportedPaths()) {
    SetSimdPathForTesting(p);
    const std::vector<float> got = RunFloatOp(op, xs);
    int64_t worst = 0;
    for (size_t i = 0; i < xs.size(); ++i) {
      const float want = static_cast<float>(ref(static_cast<double>(xs[i])));
      const int64_t d = UlpDiff(got[i], want);
      worst = std::max(worst, d);
      ASSERT_LE(d, max_ulp) << name << " path " << PathName(p) << " x=" << xs[i] << " ("
                            << std::hexfloat << xs[i] << ") got " << got[i] << " want " << want;
    }
    if (base.empty()) {
      base = got;
    } else {
      for (size_t i = 0; i < xs.size(); ++i) {
        ASSERT_EQ(std::bit_cast<uint32_t>(got[i]), std::bit_cast<uint32_t>(base[i]))
            << name << " path " << PathName(p) << " differs from default at x=" << xs[i];
      }
    }
    ::testing::Test::RecordProperty(name + "_" + PathName(p) + "_max_ulp", std::to_string(worst));
  }
}

void CheckDoubleOp(const std::string& name, void (*op)(const Tensor&, Tensor*),
                   double (*ref)(double), const std::vector<double>& xs, int64_t max_ulp) {
  PathGuard guard;
  std::vector<double> base;
  for (SimdPath p : SupportedPaths()) {
    SetSimdPathForTesting(p);
    const std::vector<double> got = RunDoubleOp(op, xs);
    for (size_t i = 0; i < xs.size(); ++i) {
      const double want = ref(xs[i]);
      ASSERT_LE(UlpDiff(got[i], want), max_ulp)
          << name << " path " << PathName(p) << " x=" << std::hexfloat << xs[i] << " got " << got[i]
          << " want " << want;
    }
    if (base.empty()) {
      base = got;
    } else {
      for (size_t i = 0; i < xs.size(); ++i) {
        ASSERT_EQ(std::bit_cast<uint64_t>(got[i]), std::bit_cast<uint64_t>(base[i]))
            << name << " path " << PathName(p) << " differs from default at x=" << xs[i];
      }
    }
  }
}

double RefExp(double x) { return std::exp(x); }
double RefLog(double x) { return std::log(x); }
double RefTanh(double x) { return std::tanh(x); }
double RefSigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// Random doubles of magnitude in [2^lo_exp, 2^hi_exp), of either sign when `both_signs`.
std::vector<double> RandomDoubles(int lo_exp, int hi_exp, bool both_signs, int n) {
  std::mt19937_64 rng(12345);
  std::uniform_real_distribution<double> mant(1.0, 2.0);
  std::uniform_int_distribution<int> ex(lo_exp, hi_exp - 1);
  std::vector<double> v;
  for (int i = 0; i < n; ++i) {
    double x = std::ldexp(mant(rng), ex(rng));
    if (both_signs && (rng() & 1)) x = -x;
    v.push_back(x);
  }
  return v;
}

std::vector<double> SpecialDoubles() {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  std::vector<double> v = {0.0,
                           -0.0,
                           kInf,
                           -kInf,
                           std::numeric_limits<double>::quiet_NaN(),
                           std::numeric_limits<double>::min(),
                           std::numeric_limits<double>::denorm_min(),
                           std::numeric_limits<double>::max(),
                           1.0,
                           -1.0};
  // exp: overflow (709.78), subnormal results (-708.40) and the last nonzero one (-745.13).
  for (double t : {709.782712893384, -708.3964185322641, -745.1332191019411, 710.0, -746.0}) {
    double x = t;
    for (int k = 0; k < 8; ++k) x = std::nextafter(x, -kInf);
    for (int k = 0; k < 16; ++k, x = std::nextafter(x, kInf)) v.push_back(x);
  }
  return v;
}

template <typename V>
V Concat(V a, const V& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// ---------------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------------

TEST(SimdMathTest, PathsAreConsistent) {
  EXPECT_TRUE(SimdPathSupported(SimdPath::kDefault));
  EXPECT_TRUE(SimdPathSupported(BestSimdPath()));
  if (SimdPathSupported(SimdPath::kAvx512)) {
    EXPECT_EQ(BestSimdPath(), SimdPath::kAvx512);
  }
}

TEST(SimdMathTest, ExpFloat32) {
  const std::vector<float> xs = Concat(
      Concat(FloatSweep(0.0f, 100.0f, 6151), FloatSweep(-0.0f, -110.0f, 6151)), SpecialFloats());
  CheckFloatOp("Exp", &Exp, &RefExp, xs, 1);
}

TEST(SimdMathTest, SigmoidFloat32) {
  const std::vector<float> xs = Concat(
      Concat(FloatSweep(0.0f, 100.0f, 4099), FloatSweep(-0.0f, -110.0f, 4099)), SpecialFloats());
  CheckFloatOp("Sigmoid", &Sigmoid, &RefSigmoid, xs, 2);
}

TEST(SimdMathTest, LogFloat32) {
  // Every 8191st positive float from the smallest subnormal to inf, negatives, specials.
  const std::vector<float> xs =
      Concat(Concat(FloatSweep(0.0f, std::numeric_limits<float>::infinity(), 8191),
                    FloatSweep(-0.0f, -1e30f, 1000003)),
             SpecialFloats());
  CheckFloatOp("Log", &Log, &RefLog, xs, 1);
}

TEST(SimdMathTest, TanhFloat32) {
  const std::vector<float> xs = Concat(
      Concat(FloatSweep(0.0f, 30.0f, 6151), FloatSweep(-0.0f, -30.0f, 6151)), SpecialFloats());
  CheckFloatOp("Tanh", &Tanh, &RefTanh, xs, 1);
  // Every float within 2^15 of where the function switches from its polynomial to its
  // exponential form (0.55), and of the 2^-12 below which it returns x, on both sides of zero.
  std::vector<float> edges;
  for (float e : {0.55f, 0.000244140625f}) {
    const int32_t b = std::bit_cast<int32_t>(e);
    for (int32_t d = -(1 << 15); d <= (1 << 15); ++d) {
      const float x = std::bit_cast<float>(b + d);
      edges.push_back(x);
      edges.push_back(-x);
    }
  }
  CheckFloatOp("Tanh", &Tanh, &RefTanh, edges, 1);
  // tanh keeps the sign of zero.
  const std::vector<float> z = RunFloatOp(&Tanh, {-0.0f});
  EXPECT_TRUE(std::signbit(z[0]));
}

// Infinities, NaN, zeros and results that overflow or vanish: exactly the C library's values.
TEST(SimdMathTest, SpecialValuesMatchTheCLibrary) {
  PathGuard guard;
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const std::vector<float> xs = {kInf,    -kInf,  std::numeric_limits<float>::quiet_NaN(),
                                 0.0f,    -0.0f,  100.0f,
                                 -110.0f, 1.0f,   -1.0f,
                                 20.0f,   -20.0f, std::numeric_limits<float>::denorm_min()};
  // Where the C library's result is NaN, infinite, zero or +-1 the result must be the same
  // value (sign of zero included); elsewhere the sweeps' ulp bounds apply.
  auto check = [](const char* what, SimdPath p, auto x, auto got, auto want) {
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << what << " " << PathName(p) << " x=" << x;
    } else if (!std::isfinite(want) || want == 0 || std::abs(want) == 1) {
      EXPECT_EQ(got, want) << what << " " << PathName(p) << " x=" << x;
      EXPECT_EQ(std::signbit(got), std::signbit(want)) << what << " " << PathName(p) << " x=" << x;
    }
  };
  for (SimdPath p : SupportedPaths()) {
    SetSimdPathForTesting(p);
    const std::vector<float> e = RunFloatOp(&Exp, xs), l = RunFloatOp(&Log, xs),
                             t = RunFloatOp(&Tanh, xs);
    const std::vector<double> xd(xs.begin(), xs.end());
    const std::vector<double> ed = RunDoubleOp(&Exp, xd), ld = RunDoubleOp(&Log, xd);
    for (size_t i = 0; i < xs.size(); ++i) {
      check("Exp", p, xs[i], e[i], std::exp(xs[i]));
      check("Log", p, xs[i], l[i], std::log(xs[i]));
      check("Tanh", p, xs[i], t[i], std::tanh(xs[i]));
      check("Exp f64", p, xd[i], ed[i], std::exp(xd[i]));
      check("Log f64", p, xd[i], ld[i], std::log(xd[i]));
    }
  }
}

TEST(SimdMathTest, ExpFloat64) {
  std::vector<double> xs = Concat(RandomDoubles(-30, 9, true, 60000), SpecialDoubles());
  for (double& x : xs) x = std::isfinite(x) ? std::fmod(x, 750.0) : x;
  CheckDoubleOp("Exp", &Exp, &RefExp, xs, 2);
}

TEST(SimdMathTest, SigmoidFloat64) {
  std::vector<double> xs = Concat(RandomDoubles(-30, 9, true, 30000), SpecialDoubles());
  CheckDoubleOp("Sigmoid", &Sigmoid, &RefSigmoid, xs, 3);
}

TEST(SimdMathTest, LogFloat64) {
  // Subnormals through the largest finite values, some negatives, specials.
  const std::vector<double> xs =
      Concat(Concat(RandomDoubles(-1074, 1024, false, 60000), RandomDoubles(-1, 1, false, 20000)),
             Concat(RandomDoubles(-20, 20, true, 2000), SpecialDoubles()));
  CheckDoubleOp("Log", &Log, &RefLog, xs, 2);
}

// A contiguous tensor summed into one element: one long summed axis, cut into fixed chunks.
TEST(ParallelSumTest, SumAllIsBitIdenticalAtAnyThreadCount) {
  const int before = GetNumThreads();
  const int64_t n = 3 * engine::kSumChunk + 777;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  double exact = 0, mag = 0;
  for (float& x : v) {
    x = dist(rng);
    exact += x;
    mag += std::abs(x);
  }
  std::vector<int64_t> vi(n);
  int64_t exact_i = 0;
  for (int64_t i = 0; i < n; ++i) exact_i += vi[i] = static_cast<int64_t>(rng() % 2001) - 1000;
  Tensor a = Tensor::FromVector(v, {3, n / 3}), ai = Tensor::FromVector(vi);
  std::vector<uint32_t> bits;
  for (int threads : {1, 2, 4}) {
    SetNumThreads(threads);
    Tensor s = Tensor::Zeros({1, 1}, DType::kFloat32);
    Copy(a, &s);
    const float total = s.ToVector<float>()[0];
    const float via_sum = Sum(a, {0, 1}).ToVector<float>()[0];
    bits.push_back(std::bit_cast<uint32_t>(total));
    bits.push_back(std::bit_cast<uint32_t>(via_sum));
    EXPECT_NEAR(total, exact, 1e-6 * mag) << threads << " threads";
    Tensor si = Tensor::Zeros({1}, DType::kInt64);
    Copy(ai, &si);
    EXPECT_EQ(si.ToVector<int64_t>()[0], exact_i) << threads << " threads";
  }
  SetNumThreads(before);
  for (uint32_t b : bits) EXPECT_EQ(b, bits[0]);
}

}  // namespace
}  // namespace tensorkit
