// Compute ops of dense/ops.h against the naive reference (tests/reference/reference.h):
// random strided layouts, broadcasting and summation in every position, dim 0 and 1.
#include "tensorkit/dense/ops.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "reference/reference.h"
#include "tensorkit/common/parallel.h"
#include "tensorkit/dense/engine.h"
#include "tensorkit/dense/views.h"
#include "test_util.h"

namespace tensorkit {
namespace {

using ref::Rng;

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

// The reference accumulates integers and bool in uint64 (wrap-around without UB; truncating to
// the element type afterwards gives the same result as wrapping at every step, and a bool sum
// is nonzero exactly when some term is) and floats in double.
template <typename T>
using AccOf = std::conditional_t<std::is_integral_v<T>, uint64_t, double>;

template <typename T>
double AsDouble(T v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return static_cast<float>(v);
  } else {
    return static_cast<double>(v);
  }
}

template <typename T>
double Tolerance() {
  if constexpr (std::is_same_v<T, float>) return 2e-5;
  if constexpr (std::is_same_v<T, double>) return 1e-12;
  if constexpr (std::is_same_v<T, Half>) return 4e-3;
  if constexpr (std::is_same_v<T, BFloat16>) return 3e-2;
  return 0;
}

// Element-by-element comparison of two tensors of type T (NaN matches NaN, infinities exact).
// `mag`, when defined, holds the sum of |terms| behind each expected value: the tolerance
// grows with it, since the library sums in T and the reference in double.
template <typename T>
void ExpectNear(const Tensor& actual, const Tensor& expected, const std::string& what,
                const Tensor& mag = Tensor()) {
  ASSERT_EQ(actual.Dims(), expected.Dims()) << what;
  const std::vector<T> a = ref::Elements<T>(actual), e = ref::Elements<T>(expected);
  const std::vector<T> m = mag.defined() ? ref::Elements<T>(mag) : std::vector<T>();
  for (size_t i = 0; i < a.size(); ++i) {
    const double x = AsDouble(a[i]), y = AsDouble(e[i]);
    const double scale = std::max(1.0, std::abs(y)) + (m.empty() ? 0.0 : std::abs(AsDouble(m[i])));
    if (std::isnan(y)) {
      EXPECT_TRUE(std::isnan(x)) << what << " at " << i << ": " << x << " vs NaN";
    } else if (std::isinf(y) || Tolerance<T>() == 0) {
      EXPECT_EQ(x, y) << what << " at " << i;
    } else {
      EXPECT_NEAR(x, y, Tolerance<T>() * scale) << what << " at " << i;
    }
  }
}

// Random dims of an operand over `space`: each axis kept or made 1, leading axes maybe dropped.
std::vector<int64_t> SubDims(Rng& rng, const std::vector<int64_t>& space, int one_in) {
  std::vector<int64_t> d = space;
  for (int64_t& x : d) {
    if (std::uniform_int_distribution<int>(0, one_in - 1)(rng) == 0) x = 1;
  }
  size_t drop = std::uniform_int_distribution<size_t>(0, d.size())(rng);
  while (drop-- > 0 && !d.empty() && d.front() == 1) d.erase(d.begin());
  return d;
}

// A double as T the way dense/ops.h documents conversions: bool is "!= 0"; integers truncate
// toward zero and saturate at their limits, NaN gives 0.
template <typename T>
T FromDouble(double v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v != 0;
  } else if constexpr (std::is_integral_v<T>) {
    if (std::isnan(v)) return 0;
    if (v <= static_cast<double>(std::numeric_limits<T>::min())) {
      return std::numeric_limits<T>::min();
    }
    if (v >= static_cast<double>(std::numeric_limits<T>::max())) {
      return std::numeric_limits<T>::max();
    }
    return static_cast<T>(std::trunc(v));
  } else {
    return static_cast<T>(v);
  }
}

// The low bits of v as T (two's complement).
template <typename T>
T Wrap(uint64_t v) {
  return static_cast<T>(v);
}

// Naive scalar versions of every op, on T (integers wrap like the library documents).
template <typename T>
T RefUnary(const std::string& op, T x) {
  const double d = AsDouble(x);
  if (op == "Exp") return FromDouble<T>(std::exp(d));
  if (op == "Log") return FromDouble<T>(std::log(d));
  if (op == "Sigmoid") return FromDouble<T>(1.0 / (1.0 + std::exp(-d)));
  if (op == "Tanh") return FromDouble<T>(std::tanh(d));
  if (op == "Sqrt") return FromDouble<T>(std::sqrt(d));
  if (op == "Relu") return d < 0 ? T(0) : x;
  if constexpr (std::is_integral_v<T>) {  // negation wraps (and is the identity on bool)
    const T negated = std::is_same_v<T, bool> ? x : Wrap<T>(uint64_t{0} - uint64_t(x));
    if (op == "Abs") return d < 0 ? negated : x;
    if (op == "Neg") return negated;
  }
  if (op == "Abs") return d < 0 ? FromDouble<T>(-d) : x;
  if (op == "Neg") return FromDouble<T>(-d);
  ADD_FAILURE() << "unknown op " << op;
  return x;
}

template <typename T>
T RefBinary(const std::string& op, T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {  // the int64 result of 0 and 1, then "!= 0"
    return RefBinary<int64_t>(op, a, b) != 0;
  } else if constexpr (std::is_integral_v<T>) {
    using U = uint64_t;
    if (op == "Add") return Wrap<T>(U(a) + U(b));
    if (op == "Sub") return Wrap<T>(U(a) - U(b));
    if (op == "Mul") return Wrap<T>(U(a) * U(b));
    if (op == "Div") {
      if (b == 0) return T(0);
      if (std::is_signed_v<T> && a == std::numeric_limits<T>::min() && AsDouble(b) == -1) return a;
      return T(a / b);
    }
    if (op == "Pow") {
      if (AsDouble(b) < 0) return a == 1 ? T(1) : AsDouble(a) == -1 ? T(b % 2 ? -1 : 1) : T(0);
      U r = 1;
      for (T e = 0; e < b; ++e) r = U(r * U(a));
      return Wrap<T>(r);
    }
  } else {
    const double x = AsDouble(a), y = AsDouble(b);
    if (op == "Add") return FromDouble<T>(x + y);
    if (op == "Sub") return FromDouble<T>(x - y);
    if (op == "Mul") return FromDouble<T>(x * y);
    if (op == "Div") return FromDouble<T>(x / y);
    if (op == "Pow") return FromDouble<T>(std::pow(x, y));
  }
  const double x = AsDouble(a), y = AsDouble(b);
  if (op == "Max") return (std::isnan(x) || x > y) ? a : b;
  if (op == "Min") return (std::isnan(x) || x < y) ? a : b;
  ADD_FAILURE() << "unknown op " << op;
  return a;
}

using UnaryOp = void (*)(const Tensor&, Tensor*);
using BinaryOp = void (*)(const Tensor&, const Tensor&, Tensor*);

const std::vector<std::pair<std::string, UnaryOp>>& UnaryOps() {
  static const std::vector<std::pair<std::string, UnaryOp>> ops = {
      {"Exp", &Exp},   {"Log", &Log}, {"Relu", &Relu}, {"Sigmoid", &Sigmoid},
      {"Tanh", &Tanh}, {"Abs", &Abs}, {"Sqrt", &Sqrt}, {"Neg", &Neg}};
  return ops;
}

const std::vector<std::pair<std::string, BinaryOp>>& BinaryOps() {
  static const std::vector<std::pair<std::string, BinaryOp>> ops = {
      {"Add", &Add}, {"Sub", &Sub}, {"Mul", &Mul}, {"Div", &Div},
      {"Pow", &Pow}, {"Max", &Max}, {"Min", &Min}};
  return ops;
}

// A coefficient, passed as a double, of T in the reference's accumulator type: converted to T
// first as documented (saturating for integers, "!= 0" for bool).
template <typename T, typename Acc>
Acc ToAcc(double v) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<Acc>(FromDouble<T>(v));
  } else {
    return v;
  }
}

// Fills `out` with the reference: alpha * (sum over summed axes of f(inputs)) + beta * out.
// Returns, for floating T, the sum of |f| per output element (for ExpectNear's tolerance).
template <typename T, typename F>
Tensor Reference(const std::vector<Tensor>& ins, const Tensor& out, F f, double alpha = 1,
                 double beta = 0) {
  using Acc = AccOf<T>;
  auto call = [&](const std::vector<Acc>& v) {
    std::vector<T> t;
    for (Acc x : v) t.push_back(static_cast<T>(x));
    return f(t);
  };
  Tensor mag;
  if constexpr (!std::is_integral_v<T>) {
    mag = Tensor::Empty(out.Dims(), DTypeOf<T>);
    ref::ElementwiseRef<T, double>(
        ins, mag, [&](const std::vector<double>& v) { return std::abs(AsDouble(call(v))); },
        std::abs(alpha), 0.0);
  }
  ref::ElementwiseRef<T, Acc>(
      ins, out, [&](const std::vector<Acc>& v) { return static_cast<Acc>(call(v)); },
      ToAcc<T, Acc>(alpha), ToAcc<T, Acc>(beta));
  return mag;
}

// ---------------------------------------------------------------------------------------------
// Elementwise ops: random strided layouts, broadcasting, summation, dim 0 and 1
// ---------------------------------------------------------------------------------------------

template <typename T>
void CheckRandomUnary(uint64_t seed, int rounds) {
  Rng rng(seed);
  for (int round = 0; round < rounds; ++round) {
    for (const auto& [name, op] : UnaryOps()) {
      const std::vector<int64_t> space = ref::RandomDims(rng, 0, 4, 5);
      std::vector<int64_t> in_dims = SubDims(rng, space, 4), out_dims = SubDims(rng, space, 3);
      if (std::is_integral_v<T> && name == "Exp") out_dims = space;  // no overflowing sums
      Tensor src = ref::RandomStridedTensor<T>(rng, in_dims);
      Tensor out = ref::RandomStridedTensor<T>(rng, out_dims);
      Tensor expected = out.Clone();
      Tensor mag = Reference<T>({src}, expected,
                                [&](const std::vector<T>& v) { return RefUnary(name, v[0]); });
      op(src, &out);
      ExpectNear<T>(out, expected,
                    name + " src " + ShapeString(in_dims) + " out " + ShapeString(out.Dims()) +
                        " " + DTypeName(DTypeOf<T>),
                    mag);
    }
  }
}

TEST(OpsTest, UnaryRandomInt32) { CheckRandomUnary<int32_t>(1, 6); }
TEST(OpsTest, UnaryRandomInt64) { CheckRandomUnary<int64_t>(2, 6); }
TEST(OpsTest, UnaryRandomFloat32) { CheckRandomUnary<float>(3, 6); }
TEST(OpsTest, UnaryRandomFloat64) { CheckRandomUnary<double>(4, 6); }
TEST(OpsTest, UnaryRandomFloat16) { CheckRandomUnary<Half>(5, 2); }
TEST(OpsTest, UnaryRandomBFloat16) { CheckRandomUnary<BFloat16>(6, 2); }
TEST(OpsTest, UnaryRandomBool) { CheckRandomUnary<bool>(7, 4); }
TEST(OpsTest, UnaryRandomInt8) { CheckRandomUnary<int8_t>(8, 4); }
TEST(OpsTest, UnaryRandomUInt8) { CheckRandomUnary<uint8_t>(9, 4); }
TEST(OpsTest, UnaryRandomInt16) { CheckRandomUnary<int16_t>(10, 4); }

template <typename T>
void CheckRandomBinary(uint64_t seed, int rounds) {
  Rng rng(seed);
  for (int round = 0; round < rounds; ++round) {
    for (const auto& [name, op] : BinaryOps()) {
      const std::vector<int64_t> space = ref::RandomDims(rng, 0, 4, 5);
      const std::vector<int64_t> ad = SubDims(rng, space, 4), bd = SubDims(rng, space, 4);
      std::vector<int64_t> od = SubDims(rng, space, 3);
      if (std::is_integral_v<T> && name == "Pow") od = space;  // no overflowing sums
      Tensor a = ref::RandomStridedTensor<T>(rng, ad), b = ref::RandomStridedTensor<T>(rng, bd);
      Tensor c = ref::RandomStridedTensor<T>(rng, od);
      Tensor expected = c.Clone();
      Tensor mag = Reference<T>(
          {a, b}, expected, [&](const std::vector<T>& v) { return RefBinary(name, v[0], v[1]); });
      op(a, b, &c);
      ExpectNear<T>(c, expected,
                    name + " a " + ShapeString(ad) + " b " + ShapeString(bd) + " c " +
                        ShapeString(od) + " " + DTypeName(DTypeOf<T>),
                    mag);
    }
  }
}

TEST(OpsTest, BinaryRandomInt32) { CheckRandomBinary<int32_t>(11, 6); }
TEST(OpsTest, BinaryRandomInt64) { CheckRandomBinary<int64_t>(12, 6); }
TEST(OpsTest, BinaryRandomFloat32) { CheckRandomBinary<float>(13, 6); }
TEST(OpsTest, BinaryRandomFloat64) { CheckRandomBinary<double>(14, 6); }
TEST(OpsTest, BinaryRandomFloat16) { CheckRandomBinary<Half>(15, 2); }
TEST(OpsTest, BinaryRandomBFloat16) { CheckRandomBinary<BFloat16>(16, 2); }
TEST(OpsTest, BinaryRandomBool) { CheckRandomBinary<bool>(17, 4); }
TEST(OpsTest, BinaryRandomInt8) { CheckRandomBinary<int8_t>(18, 4); }
TEST(OpsTest, BinaryRandomUInt8) { CheckRandomBinary<uint8_t>(19, 4); }
TEST(OpsTest, BinaryRandomInt16) { CheckRandomBinary<int16_t>(20, 4); }

// Bigger layouts so that the parallel split, the inner-axis chunks and the transpose tiles run.
TEST(OpsTest, LargeLayoutsMatchReference) {
  Rng rng(21);
  const std::vector<std::vector<int64_t>> shapes = {{300, 257}, {7, 33, 130}, {2, 3, 40, 41}};
  for (const auto& dims : shapes) {
    Tensor a = ref::RandomStridedTensor<float>(rng, dims);
    Tensor b = ref::RandomStridedTensor<float>(rng, {dims.back()});
    Tensor c = Tensor::Empty(dims, DType::kFloat32);
    Add(a, b, &c);
    Tensor expected = c.Clone();
    Reference<float>({a, b}, expected, [](const std::vector<float>& v) { return v[0] + v[1]; });
    ExpectNear<float>(c, expected, "Add " + ShapeString(dims));
    // A transposed destination: tiles on the copy.
    Tensor t = Tensor::Empty(std::vector<int64_t>(dims.rbegin(), dims.rend()), DType::kFloat32);
    std::vector<int> perm(dims.size());
    for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int>(perm.size() - 1 - i);
    Tensor tv = Permute(t, perm);
    Copy(a, &tv);
    EXPECT_EQ(ref::Elements<float>(tv), ref::Elements<float>(a)) << ShapeString(dims);
  }
}

// ---------------------------------------------------------------------------------------------
// AddTo, CopyScaled, Scale, Set: alpha, beta, and beta == 0 never reading the output
// ---------------------------------------------------------------------------------------------

template <typename T>
void CheckAddTo(uint64_t seed) {
  Rng rng(seed);
  const std::vector<std::pair<double, double>> coeffs = {{1, 1}, {2, 0}, {-3, 2}, {1, 0}, {0, 1}};
  for (int round = 0; round < 8; ++round) {
    for (const auto& [alpha, beta] : coeffs) {
      const std::vector<int64_t> space = ref::RandomDims(rng, 0, 4, 5);
      const std::vector<int64_t> sd = SubDims(rng, space, 4);
      const std::vector<int64_t> dd =
          ref::PadLeft(SubDims(rng, space, 3), std::max(sd.size(), space.size()));
      Tensor src = ref::RandomStridedTensor<T>(rng, sd),
             dest = ref::RandomStridedTensor<T>(rng, dd);
      if constexpr (std::is_floating_point_v<T>) {
        if (beta == 0) Set(std::numeric_limits<double>::quiet_NaN(), &dest);  // must not leak
      }
      Tensor expected = dest.Clone();
      Reference<T>(
          {src}, expected, [](const std::vector<T>& v) { return v[0]; }, alpha, beta);
      if (alpha == 1 && beta == 1) {
        AddTo(src, &dest);
      } else {
        AddTo(alpha, beta, src, &dest);
      }
      ExpectNear<T>(dest, expected, "AddTo " + ShapeString(sd) + " -> " + ShapeString(dd));
    }
  }
}

TEST(OpsTest, AddToInt32) { CheckAddTo<int32_t>(31); }
TEST(OpsTest, AddToInt64) { CheckAddTo<int64_t>(32); }
TEST(OpsTest, AddToFloat32) { CheckAddTo<float>(33); }
TEST(OpsTest, AddToFloat64) { CheckAddTo<double>(34); }
TEST(OpsTest, AddToFloat16) { CheckAddTo<Half>(35); }
TEST(OpsTest, AddToBFloat16) { CheckAddTo<BFloat16>(36); }
TEST(OpsTest, AddToBool) { CheckAddTo<bool>(37); }
TEST(OpsTest, AddToInt8) { CheckAddTo<int8_t>(38); }
TEST(OpsTest, AddToUInt8) { CheckAddTo<uint8_t>(39); }
TEST(OpsTest, AddToInt16) { CheckAddTo<int16_t>(40); }

// Scale, CopyScaled, Set and Copy's summation into dim-1 outputs, for every numeric dtype T.
template <typename T>
void CheckFillScaleAndSum(uint64_t seed) {
  Rng rng(seed);
  const std::string type = DTypeName(DTypeOf<T>);
  for (int round = 0; round < 6; ++round) {
    const std::vector<int64_t> space = ref::RandomDims(rng, 0, 4, 5);
    const std::vector<int64_t> sd = SubDims(rng, space, 4), dd = SubDims(rng, space, 3);
    const double alpha = round % 3 == 0 ? -3 : round % 3 == 1 ? 2 : 0;
    // Scale: t = alpha * t.
    Tensor t = ref::RandomStridedTensor<T>(rng, sd);
    Tensor expected = t.Clone();
    Reference<T>(
        {t.Clone()}, expected, [](const std::vector<T>& v) { return v[0]; }, alpha, 0);
    Scale(alpha, &t);
    ExpectNear<T>(t, expected, "Scale " + ShapeString(sd) + " " + type);
    // CopyScaled with broadcasting and summation.
    Tensor src = ref::RandomStridedTensor<T>(rng, sd), dest = ref::RandomStridedTensor<T>(rng, dd);
    if (!Broadcastable(src.pattern(), dest.pattern())) continue;
    expected = dest.Clone();
    Tensor mag = Reference<T>(
        {src}, expected, [](const std::vector<T>& v) { return v[0]; }, alpha, 0);
    CopyScaled(alpha, src, &dest);
    ExpectNear<T>(dest, expected, "CopyScaled " + ShapeString(sd) + " -> " + ShapeString(dd), mag);
    // Copy: summation in T, and from float32 (converted first, then summed in T).
    expected = dest.Clone();
    mag = Reference<T>({src}, expected, [](const std::vector<T>& v) { return v[0]; });
    Copy(src, &dest);
    ExpectNear<T>(dest, expected, "Copy sum " + ShapeString(sd) + " -> " + ShapeString(dd), mag);
    Tensor floats = ref::RandomStridedTensor<float>(rng, sd);
    Tensor converted = Tensor::Empty(sd, DTypeOf<T>);
    ref::ForEachIndex(sd, [&](const ref::Index& i) {
      ref::Set<T>(converted, i, FromDouble<T>(ref::Get<float>(floats, i)));
    });
    expected = dest.Clone();
    mag = Reference<T>({converted}, expected, [](const std::vector<T>& v) { return v[0]; });
    Copy(floats, &dest);
    ExpectNear<T>(dest, expected, "Copy float32 sum -> " + ShapeString(dd) + " " + type, mag);
  }
  // Set: integers wrap, floats saturate into integer dtypes, bool is "!= 0".
  Tensor t = ref::RandomStridedTensor<T>(rng, {3, 4});
  for (const Scalar v : {Scalar(3), Scalar(-1), Scalar(2.5), Scalar(1e10), Scalar(0)}) {
    Set(v, &t);
    const T want = v.is_integer() ? (std::is_floating_point_v<ComputeType<T>>
                                         ? FromDouble<T>(v.ToDouble())
                                         : Wrap<T>(static_cast<uint64_t>(v.ToInt64())))
                                  : FromDouble<T>(v.ToDouble());
    for (const T x : ref::Elements<T>(t)) {
      EXPECT_EQ(AsDouble(x), AsDouble(want)) << "Set " << v << " " << type;
    }
  }
}

TEST(OpsTest, FillScaleAndSumBool) { CheckFillScaleAndSum<bool>(91); }
TEST(OpsTest, FillScaleAndSumInt8) { CheckFillScaleAndSum<int8_t>(92); }
TEST(OpsTest, FillScaleAndSumUInt8) { CheckFillScaleAndSum<uint8_t>(93); }
TEST(OpsTest, FillScaleAndSumInt16) { CheckFillScaleAndSum<int16_t>(94); }
TEST(OpsTest, FillScaleAndSumInt32) { CheckFillScaleAndSum<int32_t>(95); }
TEST(OpsTest, FillScaleAndSumInt64) { CheckFillScaleAndSum<int64_t>(96); }
TEST(OpsTest, FillScaleAndSumFloat16) { CheckFillScaleAndSum<Half>(97); }
TEST(OpsTest, FillScaleAndSumBFloat16) { CheckFillScaleAndSum<BFloat16>(98); }
TEST(OpsTest, FillScaleAndSumFloat32) { CheckFillScaleAndSum<float>(99); }
TEST(OpsTest, FillScaleAndSumFloat64) { CheckFillScaleAndSum<double>(100); }

// Summed outer axes long enough for the engine's grouped rows (engine::kSumRowGroup), with
// tails, strided and reversed layouts, several summed axes, alpha and beta; and the same bits at
// 1, 2 and 3 threads.
template <typename T>
void CheckLongSummedAxes(uint64_t seed) {
  Rng rng(seed);
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> shapes = {
      {{8, 33}, {1, 33}},        {{37, 70}, {1, 70}},
      {{19, 5, 40}, {1, 1, 40}}, {{23, 4, 17}, {1, 4, 17}},
      {{3, 61, 9}, {3, 1, 9}},   {{70, 2}, {1, 2}},
      {{9, 300}, {1, 300}},      {{2, 16, 3, 11}, {1, 16, 1, 11}}};
  const std::vector<std::pair<double, double>> coeffs = {{1, 0}, {1, 1}, {2, -1}};
  for (const auto& [sd, dd] : shapes) {
    for (const auto& [alpha, beta] : coeffs) {
      Tensor src = ref::RandomStridedTensor<T>(rng, sd),
             dest = ref::RandomStridedTensor<T>(rng, dd);
      Tensor expected = dest.Clone();
      Tensor mag = Reference<T>(
          {src}, expected, [](const std::vector<T>& v) { return v[0]; }, alpha, beta);
      AddTo(alpha, beta, src, &dest);
      ExpectNear<T>(
          dest, expected,
          "AddTo " + ShapeString(sd) + " -> " + ShapeString(dd) + " " + DTypeName(DTypeOf<T>), mag);
    }
  }
}

TEST(OpsTest, LongSummedAxesInt32) { CheckLongSummedAxes<int32_t>(101); }
TEST(OpsTest, LongSummedAxesInt8) { CheckLongSummedAxes<int8_t>(102); }
TEST(OpsTest, LongSummedAxesFloat16) { CheckLongSummedAxes<Half>(103); }
TEST(OpsTest, LongSummedAxesFloat32) { CheckLongSummedAxes<float>(104); }
TEST(OpsTest, LongSummedAxesFloat64) { CheckLongSummedAxes<double>(105); }

TEST(OpsTest, LongSummedAxesSameBitsAtAnyThreadCount) {
  Rng rng(106);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(517 * 300);
  for (float& x : v) x = dist(rng);
  Tensor a = Tensor::FromVector(v, {517, 300});
  Tensor a3 = Tensor::FromVector(v, {11, 47, 300});
  const auto sums = testing::AtThreadCounts({1, 2, 3}, [&] {
    Tensor s0 = Tensor::Zeros({1, 300}, DType::kFloat32),
           s1 = Tensor::Zeros({1, 47, 1}, DType::kFloat32);
    Copy(a, &s0);
    Copy(a3, &s1);
    std::vector<float> out = s0.ToVector<float>(), more = s1.ToVector<float>();
    out.insert(out.end(), more.begin(), more.end());
    return out;
  });
  for (const std::vector<float>& s : sums) {
    ASSERT_EQ(s.size(), sums[0].size());
    EXPECT_EQ(std::memcmp(s.data(), sums[0].data(), s.size() * sizeof(float)), 0);
  }
}

TEST(OpsTest, CopyScaledScaleAndSet) {
  Rng rng(41);
  Tensor src = ref::RandomStridedTensor<double>(rng, {4, 1, 6});
  Tensor dest = ref::RandomStridedTensor<double>(rng, {3, 4, 5, 6});
  Set(std::nan(""), &dest);
  CopyScaled(2.5, src, &dest);
  Tensor expected = dest.Clone();
  Reference<double>(
      {src}, expected, [](const std::vector<double>& v) { return v[0]; }, 2.5, 0);
  ExpectNear<double>(dest, expected, "CopyScaled");
  Scale(-2, &dest);
  Reference<double>(
      {src}, expected, [](const std::vector<double>& v) { return v[0]; }, -5, 0);
  ExpectNear<double>(dest, expected, "Scale");
  Tensor ints = ref::RandomStridedTensor<int64_t>(rng, {3, 7});
  Set(42, &ints);
  for (int64_t v : ints.ToVector<int64_t>()) EXPECT_EQ(v, 42);
  Set(1e30, &ints);  // saturates instead of overflowing
  for (int64_t v : ints.ToVector<int64_t>()) EXPECT_EQ(v, std::numeric_limits<int64_t>::max());
  SetZero(&ints);
  for (int64_t v : ints.ToVector<int64_t>()) EXPECT_EQ(v, 0);
  Tensor strings = Tensor::FromVector(std::vector<std::string>{"a", "bc"});
  SetZero(&strings);
  EXPECT_EQ(strings.ToVector<std::string>(), (std::vector<std::string>{"", ""}));
}

// Summation over an input with a dim 0: the sum is empty, so the output is beta * output.
TEST(OpsTest, SumOverEmptyAxis) {
  Tensor src = Tensor::Zeros({0, 3}, DType::kFloat32);
  Tensor dest = Tensor::FromVector(std::vector<float>{1, 2, 3}, {1, 3});
  AddTo(1, 2, src, &dest);
  EXPECT_EQ(dest.ToVector<float>(), (std::vector<float>{2, 4, 6}));
  Exp(src, &dest);
  EXPECT_EQ(dest.ToVector<float>(), (std::vector<float>{0, 0, 0}));
}

// ---------------------------------------------------------------------------------------------
// Integer edge cases are defined (no UB): wrap-around, division by zero
// ---------------------------------------------------------------------------------------------

TEST(OpsTest, IntegerEdgeCases) {
  const int32_t kMin = std::numeric_limits<int32_t>::min();
  const int32_t kMax = std::numeric_limits<int32_t>::max();
  Tensor a = Tensor::FromVector(std::vector<int32_t>{7, kMin, kMax, -7, 0});
  Tensor b = Tensor::FromVector(std::vector<int32_t>{0, -1, 1, 2, 0});
  EXPECT_EQ(Div(a, b).ToVector<int32_t>(), (std::vector<int32_t>{0, kMin, kMax, -3, 0}));
  EXPECT_EQ(Add(a, b).ToVector<int32_t>(), (std::vector<int32_t>{7, kMax, kMin, -5, 0}));
  EXPECT_EQ(Neg(a).ToVector<int32_t>(), (std::vector<int32_t>{-7, kMin, -kMax, 7, 0}));
  EXPECT_EQ(Abs(a).ToVector<int32_t>(), (std::vector<int32_t>{7, kMin, kMax, 7, 0}));
  Tensor e = Tensor::FromVector(std::vector<int32_t>{-1, -2, 31, 0, -3});
  Tensor base = Tensor::FromVector(std::vector<int32_t>{2, -1, 2, 0, 1});
  EXPECT_EQ(Pow(base, e).ToVector<int32_t>(), (std::vector<int32_t>{0, 1, kMin, 1, 1}));
  EXPECT_EQ(Log(Tensor::FromVector(std::vector<int32_t>{-1, 0})).ToVector<int32_t>(),
            (std::vector<int32_t>{0, kMin}));  // NaN -> 0, -inf saturates
}

// The narrow integer types wrap where int would overflow (int16 products promote to int, whose
// overflow would be undefined) and follow the documented rules where NumPy raises.
TEST(OpsTest, NarrowIntegerEdgeCases) {
  Tensor a8 = Tensor::FromVector(std::vector<int8_t>{127, -128, -128, 7, -4, 0});
  Tensor b8 = Tensor::FromVector(std::vector<int8_t>{1, -1, 1, 0, 2, 0});
  EXPECT_EQ(Add(a8, b8).ToVector<int8_t>(), (std::vector<int8_t>{-128, 127, -127, 7, -2, 0}));
  EXPECT_EQ(Div(a8, b8).ToVector<int8_t>(), (std::vector<int8_t>{127, -128, -128, 0, -2, 0}));
  EXPECT_EQ(Abs(a8).ToVector<int8_t>(), (std::vector<int8_t>{127, -128, -128, 7, 4, 0}));
  EXPECT_EQ(Sqrt(a8).ToVector<int8_t>(), (std::vector<int8_t>{11, 0, 0, 2, 0, 0}));
  EXPECT_EQ(Log(a8).ToVector<int8_t>(), (std::vector<int8_t>{4, 0, 0, 1, 0, -128}));
  EXPECT_EQ(Exp(a8).ToVector<int8_t>(), (std::vector<int8_t>{127, 0, 0, 127, 0, 1}));
  Tensor a16 = Tensor::FromVector(std::vector<int16_t>{300, -32768, 255});
  Tensor b16 = Tensor::FromVector(std::vector<int16_t>{300, -32768, 257});
  // 90000 - 65536, 2^30 mod 2^16, 65535 - 65536.
  EXPECT_EQ(Mul(a16, b16).ToVector<int16_t>(), (std::vector<int16_t>{24464, 0, -1}));
  Tensor u8 = Tensor::FromVector(std::vector<uint8_t>{5, 0, 2, 3, 200});
  Tensor e8 = Tensor::FromVector(std::vector<uint8_t>{1, 0, 8, 5, 2});
  EXPECT_EQ(Neg(u8).ToVector<uint8_t>(), (std::vector<uint8_t>{251, 0, 254, 253, 56}));
  EXPECT_EQ(Pow(u8, e8).ToVector<uint8_t>(), (std::vector<uint8_t>{5, 1, 0, 243, 64}));
  EXPECT_EQ(Sub(e8, u8).ToVector<uint8_t>(), (std::vector<uint8_t>{252, 0, 6, 2, 58}));
  Tensor sum = Tensor::Zeros({1}, DType::kUInt8);
  Copy(u8, &sum);  // 210 mod 256
  EXPECT_EQ(sum.ToVector<uint8_t>(), (std::vector<uint8_t>{210}));
  AddTo(3, 1, u8, &sum);  // 210 + 3 * 210 = 840 = 72 mod 256
  EXPECT_EQ(sum.ToVector<uint8_t>(), (std::vector<uint8_t>{72}));
}

// Bool arithmetic, the whole truth table of every op (dense/ops.h, "bool").
TEST(OpsTest, BoolTruthTables) {
  const Tensor a = Tensor::FromVector(std::vector<bool>{false, false, true, true});
  const Tensor b = Tensor::FromVector(std::vector<bool>{false, true, false, true});
  using V = std::vector<bool>;
  const V a_or_b = {false, true, true, true}, a_and_b = {false, false, false, true};
  EXPECT_EQ(Add(a, b).ToVector<bool>(), a_or_b);
  EXPECT_EQ(Max(a, b).ToVector<bool>(), a_or_b);
  EXPECT_EQ(Mul(a, b).ToVector<bool>(), a_and_b);
  EXPECT_EQ(Min(a, b).ToVector<bool>(), a_and_b);
  EXPECT_EQ(Div(a, b).ToVector<bool>(), a_and_b);
  EXPECT_EQ(Sub(a, b).ToVector<bool>(), (V{false, true, true, false}));
  EXPECT_EQ(Pow(a, b).ToVector<bool>(), (V{true, false, true, true}));
  const std::vector<Tensor (*)(const Tensor&)> identities = {&Neg, &Abs, &Relu, &Sqrt, &Tanh};
  for (auto op : identities) EXPECT_EQ(op(a).ToVector<bool>(), a.ToVector<bool>());
  EXPECT_EQ(Exp(a).ToVector<bool>(), (V{true, true, true, true}));
  EXPECT_EQ(Sigmoid(a).ToVector<bool>(), (V{true, true, true, true}));
  EXPECT_EQ(Log(a).ToVector<bool>(), (V{true, true, false, false}));
  // Summation into a bool output is "any"; AddProduct is the or-and product.
  Tensor any = Tensor::Zeros({2, 1}, DType::kBool);
  Copy(Reshape(a, {2, 2}), &any);
  EXPECT_EQ(any.ToVector<bool>(), (V{false, true}));
  Tensor c = Tensor::Zeros({2, 1, 2}, DType::kBool);
  AddProduct(1, 0, Reshape(a, {2, 2, 1}), Reshape(b, {1, 2, 2}), &c);
  EXPECT_EQ(c.ToVector<bool>(), (V{false, false, false, true}));  // [0 0; 1 1] @ [0 1; 0 1]
  AddTo(0, 1, a, &any);  // (0 and a) or (1 and any) keeps any
  EXPECT_EQ(any.ToVector<bool>(), (V{false, true}));
}

TEST(OpsTest, MaxMinPropagateNaN) {
  const float nan = std::nanf("");
  Tensor a = Tensor::FromVector(std::vector<float>{nan, 1, 2});
  Tensor b = Tensor::FromVector(std::vector<float>{1, nan, 3});
  for (const Tensor& r : {Max(a, b), Min(a, b)}) {
    std::vector<float> v = r.ToVector<float>();
    EXPECT_TRUE(std::isnan(v[0]) && std::isnan(v[1]));
  }
  EXPECT_EQ(Max(a, b).ToVector<float>()[2], 3);
  EXPECT_EQ(Min(a, b).ToVector<float>()[2], 2);
}

// ---------------------------------------------------------------------------------------------
// AddProduct: GEMM shapes (plain, transposed, batched, vector) and generic triples
// ---------------------------------------------------------------------------------------------

// A tensor with `dims` whose memory layout is a random permutation of axes (so GEMM operands
// come transposed), built from a C-order tensor by Permute.
template <typename T>
Tensor PermutedLayout(Rng& rng, const std::vector<int64_t>& dims) {
  std::vector<int> perm(dims.size());
  for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int>(i);
  std::shuffle(perm.begin(), perm.end(), rng);
  std::vector<int64_t> base_dims(dims.size());
  for (size_t i = 0; i < perm.size(); ++i) base_dims[perm[i]] = dims[i];
  Tensor base = ref::RandomTensor<T>(rng, base_dims);
  return Permute(base, perm);
}

template <typename T>
void CheckAddProduct(uint64_t seed, int rounds) {
  Rng rng(seed);
  auto dim = [&](int hi) { return std::uniform_int_distribution<int64_t>(1, hi)(rng); };
  for (int round = 0; round < rounds; ++round) {
    const int64_t bt = dim(3), i = dim(9), j = dim(9), k = dim(9);
    const auto shapes = testing::ProductShapes(bt, i, j, k);
    for (const auto& [ad, bd, cd] : shapes) {
      for (int layout = 0; layout < 2; ++layout) {
        Tensor a = layout ? PermutedLayout<T>(rng, ad) : ref::RandomStridedTensor<T>(rng, ad);
        Tensor b = layout ? PermutedLayout<T>(rng, bd) : ref::RandomStridedTensor<T>(rng, bd);
        Tensor c = layout ? PermutedLayout<T>(rng, cd) : ref::RandomStridedTensor<T>(rng, cd);
        const double alpha = round % 2 ? 1.5 : 1, beta = round % 3 == 0 ? 0 : -2;
        if constexpr (std::is_floating_point_v<T>) {
          if (beta == 0) Set(std::nan(""), &c);
        }
        Tensor expected = c.Clone();
        Tensor mag = Reference<T>(
            {a, b}, expected,
            [](const std::vector<T>& v) { return RefBinary<T>("Mul", v[0], v[1]); },
            std::is_integral_v<T> ? 1 : alpha, beta);
        AddProduct(std::is_integral_v<T> ? 1 : alpha, beta, a, b, &c);
        ExpectNear<T>(c, expected,
                      "AddProduct a " + ShapeString(ad) + " b " + ShapeString(bd) + " c " +
                          ShapeString(cd) + " layout " + std::to_string(layout),
                      mag);
      }
    }
  }
}

TEST(OpsTest, AddProductFloat32) { CheckAddProduct<float>(51, 6); }
TEST(OpsTest, AddProductFloat64) { CheckAddProduct<double>(52, 6); }
TEST(OpsTest, AddProductInt32) { CheckAddProduct<int32_t>(53, 3); }
TEST(OpsTest, AddProductInt64) { CheckAddProduct<int64_t>(54, 2); }
TEST(OpsTest, AddProductBool) { CheckAddProduct<bool>(55, 2); }
TEST(OpsTest, AddProductInt8) { CheckAddProduct<int8_t>(56, 2); }
TEST(OpsTest, AddProductUInt8) { CheckAddProduct<uint8_t>(57, 2); }
TEST(OpsTest, AddProductInt16) { CheckAddProduct<int16_t>(58, 2); }
TEST(OpsTest, AddProductFloat16) { CheckAddProduct<Half>(59, 2); }
TEST(OpsTest, AddProductBFloat16) { CheckAddProduct<BFloat16>(60, 2); }

// ---------------------------------------------------------------------------------------------
// In-place use, overlap, determinism
// ---------------------------------------------------------------------------------------------

TEST(OpsTest, InPlaceWorks) {
  Tensor x = Tensor::FromVector(std::vector<float>{1, -2, 3, -4}, {2, 2});
  Relu(x, &x);
  EXPECT_EQ(x.ToVector<float>(), (std::vector<float>{1, 0, 3, 0}));
  Tensor row = Tensor::FromVector(std::vector<float>{10, 20}, {2});
  Add(x, row, &x);
  EXPECT_EQ(x.ToVector<float>(), (std::vector<float>{11, 20, 13, 20}));
  Tensor t = Transpose(x, 0, 1);
  Neg(t, &t);
  EXPECT_EQ(x.ToVector<float>(), (std::vector<float>{-11, -20, -13, -20}));
  // In place with summation: c is a but sums over b's axis 0.
  Tensor a = Tensor::FromVector(std::vector<float>{1, 2}, {1, 2});
  Tensor b = Tensor::FromVector(std::vector<float>{1, 2, 3, 4}, {2, 2});
  Add(a, b, &a);
  EXPECT_EQ(a.ToVector<float>(), (std::vector<float>{1 + 1 + 1 + 3, 2 + 2 + 2 + 4}));
}

TEST(OpsTest, PartialOverlapIsRejected) {
  Tensor x = Tensor::FromVector(std::vector<float>{1, 2, 3, 4, 5});
  Tensor head = Slice(x, 0, 0, 4), tail = Slice(x, 0, 1, 5);
  try {
    Copy(head, &tail);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("Copy: input src"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("overlaps"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Add(head, head, &tail), Error);
  Tensor m = Tensor::Zeros({3, 3}, DType::kFloat32);
  Tensor mt = Transpose(m, 0, 1);
  EXPECT_THROW(Exp(mt, &m), Error);
  // Disjoint views of one storage are fine.
  Tensor first = Slice(x, 0, 0, 2), last = Slice(x, 0, 3, 5);
  Copy(first, &last);
  EXPECT_EQ(x.ToVector<float>(), (std::vector<float>{1, 2, 3, 1, 2}));
}

// The halves of a matrix are disjoint at any size: copying one into the other is legal (the
// overlap test once gave up above 2^22 elements and refused this).
TEST(OpsTest, CopyRightHalfIntoLeftHalfOfLargeMatrix) {
  const int64_t rows = 4100, cols = 2050, half = cols / 2;
  std::vector<float> values(rows * cols);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);  // all exact
  Tensor m = Tensor::FromVector(values, {rows, cols});
  Tensor left = Slice(m, 1, 0, half), right = Slice(m, 1, half, cols);
  Copy(right, &left);
  const std::vector<float> after = m.ToVector<float>();
  int64_t wrong = 0;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      wrong += after[r * cols + c] != values[r * cols + (c < half ? c + half : c)];
    }
  }
  EXPECT_EQ(wrong, 0);
  // A view that does overlap is still refused at that size.
  Tensor shifted = Slice(m, 1, 1, half + 1);
  EXPECT_THROW(Copy(right, &shifted), Error);
  Tensor square = Slice(left, 0, 0, half);
  EXPECT_THROW(Copy(Transpose(square, 0, 1), &square), Error);
}

// Sums and products must be bit-identical at any thread count.
TEST(OpsTest, DeterministicAcrossThreadCounts) {
  Rng rng(61);
  std::vector<float> v(600 * 700);
  std::uniform_real_distribution<float> u(-1, 1);
  for (float& x : v) x = u(rng);
  Tensor t = Tensor::FromVector(v, {600, 700});
  Tensor tt = Transpose(t, 0, 1);
  const auto runs = testing::AtThreadCounts({1, 2, 4}, [&] {
    std::vector<std::vector<float>> out;
    out.push_back(Sum(t, {0}).ToVector<float>());
    out.push_back(Sum(t, {1}).ToVector<float>());
    out.push_back(Sum(t, {0, 1}).ToVector<float>());
    out.push_back(Sum(tt, {1}).ToVector<float>());
    Tensor e = Tensor::Empty({600, 1}, DType::kFloat32);
    Exp(t, &e);
    out.push_back(e.ToVector<float>());
    Tensor h = Tensor::Empty({1, 700}, DType::kFloat16);
    Tensor th = Tensor::Empty({600, 700}, DType::kFloat16);
    Copy(t, &th);
    Copy(th, &h);
    std::vector<Half> hv = h.ToVector<Half>();
    std::vector<float> hf(hv.begin(), hv.end());
    out.push_back(hf);
    return out;
  });
  for (size_t r = 1; r < runs.size(); ++r) {
    for (size_t i = 0; i < runs[0].size(); ++i) {
      ASSERT_EQ(runs[0][i].size(), runs[r][i].size());
      EXPECT_EQ(
          0, std::memcmp(runs[0][i].data(), runs[r][i].data(), runs[0][i].size() * sizeof(float)))
          << "result " << i << " at thread count run " << r;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Errors name the op and the values
// ---------------------------------------------------------------------------------------------

// Runs fn and returns the Error it throws (failing the test when it does not throw).
template <typename F>
Error Catch(F fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no Error thrown";
  return Error(ErrorCode::kInternal, "");
}

bool Contains(const Error& e, const std::string& s) {
  return std::string(e.what()).find(s) != std::string::npos;
}

TEST(OpsTest, BadInputErrors) {
  Tensor f = Tensor::Zeros({2, 3}, DType::kFloat32), i = Tensor::Zeros({2, 3}, DType::kInt32);
  Tensor g = Tensor::Zeros({4, 3}, DType::kFloat32);
  Error e = Catch([&] { Add(f, i, &f); });
  EXPECT_EQ(e.code(), ErrorCode::kDTypeMismatch);
  EXPECT_TRUE(Contains(e, "Add: b is int32")) << e.what();
  e = Catch([&] { Mul(f, g, &f); });
  EXPECT_EQ(e.code(), ErrorCode::kShapeMismatch);
  EXPECT_TRUE(Contains(e, "Mul: dims of a [2 3], b [4 3]")) << e.what();
  e = Catch([&] { Exp(g, &f); });
  EXPECT_TRUE(Contains(e, "Exp: dims of src [4 3], output dest [2 3]")) << e.what();
  e = Catch([&] { AddProduct(1, 0, f, g, &f); });
  EXPECT_EQ(e.code(), ErrorCode::kShapeMismatch);
  Tensor u8 = Tensor::Zeros({2}, DType::kUInt8);
  Tensor strings = Tensor::FromVector(std::vector<std::string>{"a", "b"});
  e = Catch([&] { Exp(strings, &strings); });
  EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
  EXPECT_TRUE(Contains(e, "Exp")) << e.what();
  e = Catch([&] { AddTo(strings, &strings); });
  EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
  EXPECT_TRUE(Contains(e, "AddTo")) << e.what();
  e = Catch([&] { Exp(f, nullptr); });
  EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
  Tensor undefined;
  e = Catch([&] { Copy(undefined, &f); });
  EXPECT_TRUE(Contains(e, "Copy")) << e.what();
  e = Catch([&] { Sum(f, {0, -2}); });
  EXPECT_TRUE(Contains(e, "twice")) << e.what();
  e = Catch([&] { Sum(f, {2}); });
  EXPECT_EQ(e.code(), ErrorCode::kOutOfRange);
  Tensor s = Tensor::FromVector(std::vector<std::string>{"a", "b"});
  e = Catch([&] { Copy(s, &u8); });
  EXPECT_EQ(e.code(), ErrorCode::kDTypeMismatch);
  Tensor s1 = Tensor::FromVector(std::vector<std::string>{""}, {1});
  e = Catch([&] { Copy(s, &s1); });
  EXPECT_TRUE(Contains(e, "string")) << e.what();
}

// An output no machine can hold is a failed allocation (kResourceExhausted), not a range error
// nor std::bad_alloc: here 2^22 x 2^22 float32 (64 TiB) from two 16 MiB inputs.
TEST(OpsTest, OutputTooLargeToAllocateIsResourceExhausted) {
  const int64_t n = int64_t{1} << 22;
  Tensor col = Tensor::Zeros({n, 1}, DType::kFloat32), row = Tensor::Zeros({1, n}, DType::kFloat32);
  Error e = Catch([&] { Add(col, row); });
  EXPECT_EQ(e.code(), ErrorCode::kResourceExhausted) << e.what();
  EXPECT_TRUE(Contains(e, "cannot allocate")) << e.what();
  e = Catch([&] { Tensor::Empty({int64_t{1} << 61}, DType::kFloat64); });  // 2^64 bytes
  EXPECT_EQ(e.code(), ErrorCode::kResourceExhausted) << e.what();
}

// ---------------------------------------------------------------------------------------------
// Value-returning forms
// ---------------------------------------------------------------------------------------------

TEST(OpsTest, ValueReturningForms) {
  Rng rng(71);
  Tensor a = ref::RandomStridedTensor<float>(rng, {3, 1, 5});
  Tensor b = ref::RandomStridedTensor<float>(rng, {4, 1});
  Tensor c = Add(a, b);
  EXPECT_EQ(c.Dims(), (std::vector<int64_t>{3, 4, 5}));
  Tensor expected = Tensor::Empty({3, 4, 5}, DType::kFloat32);
  Reference<float>({a, b}, expected, [](const std::vector<float>& v) { return v[0] + v[1]; });
  ExpectNear<float>(c, expected, "Add value");
  Tensor e = Exp(a);
  EXPECT_EQ(e.Dims(), a.Dims());
  EXPECT_TRUE(e.IsContiguous());
  EXPECT_THROW(Add(a, Tensor::Zeros({2, 1, 1}, DType::kFloat32)), Error);

  Tensor t = ref::RandomStridedTensor<int64_t>(rng, {3, 4, 5});
  for (const std::vector<int>& axes :
       std::vector<std::vector<int>>{{}, {0}, {1}, {-1}, {0, 2}, {0, 1, 2}}) {
    Tensor keep = Sum(t, axes, true);
    std::vector<int64_t> kd = t.Dims(), dd;
    for (int ax : axes) kd[(ax + 3) % 3] = 1;
    for (size_t x = 0; x < kd.size(); ++x) {
      if (std::find_if(axes.begin(), axes.end(), [&](int ax) {
            return static_cast<size_t>((ax + 3) % 3) == x;
          }) == axes.end()) {
        dd.push_back(kd[x]);
      }
    }
    Tensor want = Tensor::Empty(kd, DType::kInt64);
    Reference<int64_t>({t}, want, [](const std::vector<int64_t>& v) { return v[0]; });
    EXPECT_EQ(keep.Dims(), kd);
    EXPECT_EQ(keep.ToVector<int64_t>(), want.ToVector<int64_t>());
    Tensor drop = Sum(t, axes);
    EXPECT_EQ(drop.Dims(), dd);
    EXPECT_EQ(drop.ToVector<int64_t>(), want.ToVector<int64_t>());
  }

  Tensor m = Tensor::FromVector(std::vector<int32_t>{1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor r = Reshape(m, {3, 2});
  EXPECT_TRUE(SharesStorage(r, m));  // a view
  Tensor rt = Reshape(Transpose(m, 0, 1), {6});
  EXPECT_FALSE(SharesStorage(rt, m));  // needs a copy
  EXPECT_EQ(rt.ToVector<int32_t>(), (std::vector<int32_t>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(Reshape(m, {-1}).Dims(), (std::vector<int64_t>{6}));
}

}  // namespace
}  // namespace tensorkit
