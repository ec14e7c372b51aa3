// tensorkit/dense/functors.h: the per-element semantics of every dense operation, written once
// and compiled for both executors (the CPU loops of engine.h and the CUDA kernels of
// dense/cuda/): conversions, wrap-around integer arithmetic, how a result is written (Mode),
// and one functor per elementwise function (internal; not installed).
//
// Glossary
//   compute type  C = ComputeType<T>: float for the 16-bit floats, T otherwise.
//   functor       a struct with `template <typename C> static C Apply(C...)`, TK_HOST_DEVICE.
//   Mode          how an output is written: assign f, assign alpha*f, or alpha*f + beta*out.
//   UnaryFn, BinaryFn  the runtime names of the functors, generated from the one list of
//                 functions (dense/elementwise_fns.h) plus kIdentity; DispatchUnary /
//                 DispatchBinary map a name to its functor type NameF (the only switch over
//                 them, also generated).
// Floating-point functions use only +, -, *, / and bit casts (dense/simd_math.h) where the CPU
// vectorises them; the CUDA build compiles with --fmad=false, so both executors round alike.
#ifndef TENSORKIT_DENSE_FUNCTORS_H_
#define TENSORKIT_DENSE_FUNCTORS_H_

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "tensorkit/common/dtype.h"
#include "tensorkit/common/host_device.h"
#include "tensorkit/common/wrap.h"
#include "tensorkit/dense/elementwise_fns.h"
#include "tensorkit/dense/simd_math.h"

namespace tensorkit::engine {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

enum class Mode { kAssign, kScale, kAxpby };

// alpha and beta in the compute type.
template <typename C>
struct Coeffs {
  C alpha{1};
  C beta{0};
};

#define TK_FN_ENUM(Name) k##Name,
// kIdentity (Copy, AddTo, Scale, summation) is no public function of its own.
enum class UnaryFn { kIdentity, TENSORKIT_UNARY_FNS(TK_FN_ENUM) };
enum class BinaryFn { TENSORKIT_BINARY_FNS(TK_FN_ENUM) };
#undef TK_FN_ENUM

// Element conversion with defined results everywhere: float to integer saturates (NaN -> 0),
// anything to bool is "!= 0", 16-bit floats go through float.
template <typename D, typename S>
TK_HOST_DEVICE D Convert(S x);

// Wrap-around integer arithmetic (common/wrap.h, shared with sparse/); plain for floats.
using ::tensorkit::AddW;
using ::tensorkit::MulW;
using ::tensorkit::SubW;

// Calls f.template operator()<Functor>() for the functor named by `fn`.
template <typename F>
decltype(auto) DispatchUnary(UnaryFn fn, F&& f);
template <typename F>
decltype(auto) DispatchBinary(BinaryFn fn, F&& f);

// ---------------------------------------------------------------------------------------------
// Definitions
// ---------------------------------------------------------------------------------------------

namespace detail {

template <typename T>
inline constexpr bool kIsHalf = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

// Float (or double) to integer I with saturation; NaN gives 0.
template <typename I>
TK_HOST_DEVICE I SaturatingCast(double x) {
  if (x != x) return 0;
  constexpr double kLo = static_cast<double>(std::numeric_limits<I>::min());
  // The first value above the range: 2^(bits-1) for signed, 2^bits for unsigned I.
  constexpr double kHi = 2.0 * static_cast<double>(std::numeric_limits<I>::max() / 2 + 1);
  if (x >= kHi) return std::numeric_limits<I>::max();
  if (!(x >= kLo)) return std::numeric_limits<I>::min();
  return static_cast<I>(x);
}

// Loads element type T as compute type C.
template <typename C, typename T>
TK_HOST_DEVICE C Load(const T& v) {
  if constexpr (kIsHalf<T>) {
    return static_cast<C>(static_cast<float>(v));
  } else {
    return static_cast<C>(v);
  }
}

// Stores compute type C as element type T.
template <typename T, typename C>
TK_HOST_DEVICE T Store(C v) {
  if constexpr (kIsHalf<T>) {
    return T(static_cast<float>(v));
  } else {
    return static_cast<T>(v);
  }
}

// out = f, alpha*f or alpha*f + beta*out by mode (beta*out only reads out in kAxpby).
template <Mode M, typename T, typename C>
TK_HOST_DEVICE void Put(T* out, C f, const Coeffs<C>& k) {
  if constexpr (M == Mode::kAssign) {
    *out = Store<T>(f);
  } else if constexpr (M == Mode::kScale) {
    *out = Store<T>(MulW(k.alpha, f));
  } else {
    *out = Store<T>(AddW(MulW(k.alpha, f), MulW(k.beta, Load<C>(*out))));
  }
}

// A result computed in double, back in compute type C as Copy converts (integers truncate and
// saturate, NaN -> 0; bool is "!= 0").
template <typename C>
TK_HOST_DEVICE C FromDouble(double v);

// Integers go through double for the floating-point functions.
template <typename C>
using FloatOf = std::conditional_t<std::is_integral_v<C>, double, C>;

}  // namespace detail

template <typename D, typename S>
TK_HOST_DEVICE D Convert(S x) {
  if constexpr (std::is_same_v<D, S>) {
    return x;
  } else if constexpr (std::is_same_v<D, bool>) {
    if constexpr (detail::kIsHalf<S>) {
      return static_cast<float>(x) != 0.0f;
    } else {
      return x != S{0};
    }
  } else if constexpr (std::is_integral_v<D> &&
                       (std::is_floating_point_v<S> || detail::kIsHalf<S>)) {
    return detail::SaturatingCast<D>(detail::Load<double>(x));
  } else if constexpr (detail::kIsHalf<D>) {
    return D(detail::Load<float>(x));
  } else {
    return detail::Load<D>(x);
  }
}

template <typename C>
TK_HOST_DEVICE C detail::FromDouble(double v) {
  if constexpr (std::is_integral_v<C>) {
    return Convert<C>(v);
  } else {
    return static_cast<C>(v);
  }
}

// ---------------------------------------------------------------------------------------------
// Unary functors: Identity, and NameF for each Name of TENSORKIT_UNARY_FNS
// ---------------------------------------------------------------------------------------------

// The identity (Copy, AddTo, Scale, summation).
struct Identity {
  template <typename C>
  TK_HOST_DEVICE static C Apply(C x) {
    return x;
  }
};

struct ExpF {
  template <typename C>
  TK_HOST_DEVICE static C Apply(C x) {
    if constexpr (std::is_same_v<C, float>) {
      return simd_math::ExpF32(x);
    } else if constexpr (std::is_same_v<C, double>) {
      return simd_math::ExpF64(x);
    } else {
      return detail::FromDouble<C>(std::exp(static_cast<double>(x)));
    }
  }
};

struct LogF {
  template <typename C>
  TK_HOST_DEVICE static C Apply(C x) {
    if constexpr (std::is_same_v<C, float>) {
      return simd_math::LogF32(x);
    } else if constexpr (std::is_same_v<C, double>) {
      return simd_math::LogF64(x);
    } else {
      return detail::FromDouble<C>(std::log(static_cast<double>(x)));
    }
  }
};

struct ReluF {
  template <typename C>
  TK_HOST_DEVICE static C Apply(C x) {
    if constexpr (std::is_unsigned_v<C>) {  // bool and uint8: nothing is negative
      return x;
    } else {
      return x < C{0} ? C{0} : x;  // NaN stays NaN
    }
  }
};

struct SigmoidF {
  template <typename C>
  TK_HOST_DEVICE static C Apply(C x) {
    // With e = exp(-|x|) <= 1 nothing overflows: 1/(1+e) for x >= 0, e/(1+e) below, which
    // keeps the subnormal results of large negative x.
    if constexpr (std::is_same_v<C, float>) {
      const float e = simd_math::ExpF32(x < 0.0f ? x : -x);
      return (x < 0.0f ? e : 1.0f) / (1.0f + e);
    } else if constexpr (std::is_same_v<C, double>) {
      const double e = simd_math::ExpF64(x < 0.0 ? x : -x);
      return (x < 0.0 ? e : 1.0) / (1.0 + e);
    } else {
      return detail::FromDouble<C>(1.0 / (1.0 + std::exp(-static_cast<double>(x))));
    }
  }
};

struct TanhF {
  template <typename C>
  TK_HOST_DEVICE static C Apply(C x) {
    if constexpr (std::is_same_v<C, float>) {
      return simd_math::TanhF32(x);
    } else {
      return detail::FromDouble<C>(std::tanh(static_cast<detail::FloatOf<C>>(x)));
    }
  }
};

struct AbsF {
  template <typename C>
  TK_HOST_DEVICE static C Apply(C x) {
    if constexpr (std::is_unsigned_v<C>) {
      return x;
    } else if constexpr (std::is_integral_v<C>) {
      return x < 0 ? SubW(C{0}, x) : x;  // MIN stays MIN, like two's complement
    } else {
      return std::abs(x);
    }
  }
};

struct SqrtF {
  template <typename C>
  TK_HOST_DEVICE static C Apply(C x) {
    return detail::FromDouble<C>(std::sqrt(static_cast<detail::FloatOf<C>>(x)));
  }
};

struct NegF {
  template <typename C>
  TK_HOST_DEVICE static C Apply(C x) {
    if constexpr (std::is_integral_v<C>) {
      return SubW(C{0}, x);  // wraps for unsigned types; the identity for bool
    } else {
      return -x;
    }
  }
};

// ---------------------------------------------------------------------------------------------
// Binary functors: NameF for each Name of TENSORKIT_BINARY_FNS
// ---------------------------------------------------------------------------------------------

struct AddF {
  template <typename C>
  TK_HOST_DEVICE static C Apply(C a, C b) {
    return AddW(a, b);
  }
};

struct SubF {
  template <typename C>
  TK_HOST_DEVICE static C Apply(C a, C b) {
    return SubW(a, b);
  }
};

struct MulF {
  template <typename C>
  TK_HOST_DEVICE static C Apply(C a, C b) {
    return MulW(a, b);
  }
};

struct DivF {
  template <typename C>
  TK_HOST_DEVICE static C Apply(C a, C b) {
    if constexpr (std::is_integral_v<C>) {
      if (b == 0) return 0;  // defined: integer division by zero gives 0
      if constexpr (std::is_signed_v<C>) {
        if (b == -1) return SubW(C{0}, a);  // MIN / -1 wraps instead of trapping
      }
      return static_cast<C>(a / b);
    } else {
      return a / b;
    }
  }
};

struct PowF {
  template <typename C>
  TK_HOST_DEVICE static C Apply(C a, C b) {
    if constexpr (std::is_same_v<C, bool>) {
      return a || !b;  // a^0 = 1, a^1 = a
    } else if constexpr (std::is_integral_v<C>) {
      if constexpr (std::is_signed_v<C>) {
        if (b < 0) {  // 1 / a^|b| truncated toward zero
          if (a == 1) return 1;
          if (a == -1) return (b & 1) ? -1 : 1;
          return 0;
        }
      }
      C result = 1, base = a;
      for (C e = b; e > 0; e >>= 1) {
        if (e & 1) result = MulW(result, base);
        base = MulW(base, base);
      }
      return result;
    } else {
      return std::pow(a, b);
    }
  }
};

struct MaxF {
  template <typename C>
  TK_HOST_DEVICE static C Apply(C a, C b) {
    return (a > b || a != a) ? a : b;  // NaN in either propagates
  }
};

struct MinF {
  template <typename C>
  TK_HOST_DEVICE static C Apply(C a, C b) {
    return (a < b || a != a) ? a : b;
  }
};

// One case of the switches below (Fn is the enum switched over).
#define TK_FN_CASE(Name) \
  case Fn::k##Name:      \
    return f.template operator()<Name##F>();

template <typename F>
decltype(auto) DispatchUnary(UnaryFn fn, F&& f) {
  using Fn = UnaryFn;
  // clang-format off
  switch (fn) {
    case UnaryFn::kIdentity:
      return f.template operator()<Identity>();
    TENSORKIT_UNARY_FNS(TK_FN_CASE)
  }
  // clang-format on
  Throw(ErrorCode::kInternal, "internal error: unknown unary function ", static_cast<int>(fn));
}

template <typename F>
decltype(auto) DispatchBinary(BinaryFn fn, F&& f) {
  using Fn = BinaryFn;
  // clang-format off
  switch (fn) {
    TENSORKIT_BINARY_FNS(TK_FN_CASE)
  }
  // clang-format on
  Throw(ErrorCode::kInternal, "internal error: unknown binary function ", static_cast<int>(fn));
}

#undef TK_FN_CASE

}  // namespace tensorkit::engine

#endif  // TENSORKIT_DENSE_FUNCTORS_H_
