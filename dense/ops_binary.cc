// Typed inner loops of the binary functions (see ops_internal.h).
#include <cmath>

#include "tensorkit/dense/ops_internal.h"

namespace tensorkit::ops_internal {
namespace {

struct AddF {
  template <typename C>
  static C Apply(C a, C b) {
    return engine::AddW(a, b);
  }
};
struct SubF {
  template <typename C>
  static C Apply(C a, C b) {
    return engine::SubW(a, b);
  }
};
struct MulF {
  template <typename C>
  static C Apply(C a, C b) {
    return engine::MulW(a, b);
  }
};
struct DivF {
  template <typename C>
  static C Apply(C a, C b) {
    if constexpr (std::is_integral_v<C>) {
      if (b == 0) return 0;  // defined: integer division by zero gives 0
      if constexpr (std::is_signed_v<C>) {
        if (b == -1) return engine::SubW(C{0}, a);  // MIN / -1 wraps instead of trapping
      }
      return static_cast<C>(a / b);
    } else {
      return a / b;
    }
  }
};
struct PowF {
  template <typename C>
  static C Apply(C a, C b) {
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
        if (e & 1) result = engine::MulW(result, base);
        base = engine::MulW(base, base);
      }
      return result;
    } else {
      return std::pow(a, b);
    }
  }
};
struct MaxF {
  template <typename C>
  static C Apply(C a, C b) {
    return (a > b || a != a) ? a : b;  // NaN in either propagates
  }
};
struct MinF {
  template <typename C>
  static C Apply(C a, C b) {
    return (a < b || a != a) ? a : b;
  }
};

// The loop for functor F in `mode`; kScale exists only for the product (AddProduct).
template <typename T, typename F>
engine::InnerLoop Pick(engine::Mode mode) {
  using engine::Mode;
  if (mode == Mode::kAssign) return &engine::BinaryLoop<T, F, Mode::kAssign>;
  if constexpr (std::is_same_v<F, MulF>) {
    if (mode == Mode::kScale) return &engine::BinaryLoop<T, F, Mode::kScale>;
  }
  TK_INTERNAL_CHECK(mode == Mode::kAxpby);
  return &engine::BinaryLoop<T, F, Mode::kAxpby>;
}

}  // namespace

engine::InnerLoop BinaryKernel(BinaryFn fn, DType dtype, engine::Mode mode, const char* op) {
  return Dispatch<kComputeDTypes>(dtype, op, [&]<typename T>() -> engine::InnerLoop {
    switch (fn) {
      case BinaryFn::kAdd:
        return Pick<T, AddF>(mode);
      case BinaryFn::kSub:
        return Pick<T, SubF>(mode);
      case BinaryFn::kMul:
        return Pick<T, MulF>(mode);
      case BinaryFn::kDiv:
        return Pick<T, DivF>(mode);
      case BinaryFn::kPow:
        return Pick<T, PowF>(mode);
      case BinaryFn::kMax:
        return Pick<T, MaxF>(mode);
      case BinaryFn::kMin:
        return Pick<T, MinF>(mode);
    }
    TK_INTERNAL_CHECK(false);
    return nullptr;
  });
}

}  // namespace tensorkit::ops_internal
