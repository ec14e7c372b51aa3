// Typed inner loops of the unary functions (see ops_internal.h).
#include <bit>
#include <cmath>
#include <cstdint>
#include <new>

#include "tensorkit/dense/ops_internal.h"

namespace tensorkit::ops_internal {
namespace {

using engine::detail::SaturatingCast;

// Applies a floating-point function; integers go through float64 and convert back saturating.
template <typename C, typename G>
C ViaFloat(C x, const G& g) {
  if constexpr (std::is_integral_v<C>) {
    return SaturatingCast<C>(g(static_cast<double>(x)));
  } else {
    return g(x);
  }
}

// exp for float32 without calls or branches, so that loops over it vectorise: x = n*ln2 + r
// with |r| <= ln2/2, e^r by a degree-6 polynomial (about 1 ulp), times 2^n built from the
// exponent bits in two halves so that results below FLT_MIN come out subnormal and large x
// overflow to inf. NaN passes through.
inline float FastExp(float x) {
  const float xc = x > 89.0f ? 89.0f : (x < -104.0f ? -104.0f : x);  // NaN -> -104 here
  const float kShift = 12582912.0f;                                  // 1.5 * 2^23
  const float n = (xc * 1.44269504088896341f + kShift) - kShift;     // round to nearest
  float r = xc - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const int32_t ni = static_cast<int32_t>(n);  // in [-150, 129]: always representable
  const int32_t h = ni / 2;
  const float s1 = std::bit_cast<float>((h + 127) << 23);
  const float s2 = std::bit_cast<float>((ni - h + 127) << 23);
  const float result = p * s1 * s2;
  return x != x ? x : result;
}

struct ExpF {
  template <typename C>
  static C Apply(C x) {
    if constexpr (std::is_same_v<C, float>) {
      return FastExp(x);
    } else {
      return ViaFloat(x, [](auto v) { return std::exp(v); });
    }
  }
};
struct LogF {
  template <typename C>
  static C Apply(C x) {
    return ViaFloat(x, [](auto v) { return std::log(v); });
  }
};
struct ReluF {
  template <typename C>
  static C Apply(C x) {
    return x < C{0} ? C{0} : x;  // NaN stays NaN
  }
};
struct SigmoidF {
  template <typename C>
  static C Apply(C x) {
    if constexpr (std::is_same_v<C, float>) {
      return 1.0f / (1.0f + FastExp(-x));
    } else {
      return ViaFloat(x, [](auto v) {
        using V = decltype(v);
        return V{1} / (V{1} + std::exp(-v));
      });
    }
  }
};
struct TanhF {
  template <typename C>
  static C Apply(C x) {
    return ViaFloat(x, [](auto v) { return std::tanh(v); });
  }
};
struct AbsF {
  template <typename C>
  static C Apply(C x) {
    if constexpr (std::is_integral_v<C>) {
      return x < 0 ? engine::SubW(C{0}, x) : x;  // MIN stays MIN, like two's complement
    } else {
      return std::abs(x);
    }
  }
};
struct SqrtF {
  template <typename C>
  static C Apply(C x) {
    return ViaFloat(x, [](auto v) { return std::sqrt(v); });
  }
};
struct NegF {
  template <typename C>
  static C Apply(C x) {
    if constexpr (std::is_integral_v<C>) {
      return engine::SubW(C{0}, x);
    } else {
      return -x;
    }
  }
};

// The loop for functor F in `mode`; kScale exists only for the identity (Scale, CopyScaled).
template <typename T, typename F>
engine::InnerLoop Pick(engine::Mode mode) {
  using engine::Mode;
  if (mode == Mode::kAssign) return &engine::UnaryLoop<T, F, Mode::kAssign>;
  if constexpr (std::is_same_v<F, engine::Identity>) {
    if (mode == Mode::kScale) return &engine::UnaryLoop<T, F, Mode::kScale>;
  }
  TK_INTERNAL_CHECK(mode == Mode::kAxpby);
  return &engine::UnaryLoop<T, F, Mode::kAxpby>;
}

}  // namespace

engine::InnerLoop UnaryKernel(UnaryFn fn, DType dtype, engine::Mode mode, const char* op) {
  return Dispatch<kComputeDTypes>(dtype, op, [&]<typename T>() -> engine::InnerLoop {
    switch (fn) {
      case UnaryFn::kIdentity:
        return Pick<T, engine::Identity>(mode);
      case UnaryFn::kExp:
        return Pick<T, ExpF>(mode);
      case UnaryFn::kLog:
        return Pick<T, LogF>(mode);
      case UnaryFn::kRelu:
        return Pick<T, ReluF>(mode);
      case UnaryFn::kSigmoid:
        return Pick<T, SigmoidF>(mode);
      case UnaryFn::kTanh:
        return Pick<T, TanhF>(mode);
      case UnaryFn::kAbs:
        return Pick<T, AbsF>(mode);
      case UnaryFn::kSqrt:
        return Pick<T, SqrtF>(mode);
      case UnaryFn::kNeg:
        return Pick<T, NegF>(mode);
    }
    TK_INTERNAL_CHECK(false);
    return nullptr;
  });
}

CoeffsBuf MakeCoeffs(DType dtype, Scalar alpha, Scalar beta, const char* op) {
  CoeffsBuf buf;
  if ((kComputeDTypes & Bit(dtype)) == 0) {  // only plain assignment runs on other dtypes
    buf.alpha_is_one = alpha == Scalar(1);
    buf.beta_is_zero = beta == Scalar(0);
    buf.beta_is_one = beta == Scalar(1);
    return buf;
  }
  Dispatch<kComputeDTypes>(dtype, op, [&]<typename T>() {
    using C = ComputeType<T>;
    static_assert(sizeof(engine::Coeffs<C>) <= sizeof(buf.bytes));
    engine::Coeffs<C> k{ScalarAs<C>(alpha), ScalarAs<C>(beta)};
    new (buf.bytes) engine::Coeffs<C>(k);
    buf.alpha_is_one = k.alpha == C{1};
    buf.beta_is_zero = k.beta == C{0};
    buf.beta_is_one = k.beta == C{1};
  });
  return buf;
}

}  // namespace tensorkit::ops_internal
