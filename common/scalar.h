// tensorkit/common/scalar.h: a number passed to an operation (alpha, beta, a fill value).
//
// Glossary
//   Scalar  holds an integer exactly (int64) or a floating value (double); converts implicitly
//           from every C++ arithmetic type, and to any element type with To<T>().
#ifndef TENSORKIT_COMMON_SCALAR_H_
#define TENSORKIT_COMMON_SCALAR_H_

#include <cstdint>
#include <ostream>
#include <type_traits>

#include "tensorkit/common/half.h"

namespace tensorkit {

class Scalar {
 public:
  Scalar() = default;
  template <typename T, typename = std::enable_if_t<std::is_arithmetic_v<T>>>
  Scalar(T v) {  // NOLINT: implicit by design
    if constexpr (std::is_same_v<T, bool>) {
      is_int_ = true;
      i_ = v ? 1 : 0;
    } else if constexpr (std::is_integral_v<T>) {
      is_int_ = true;
      i_ = static_cast<int64_t>(v);
    } else {
      d_ = static_cast<double>(v);
    }
  }
  Scalar(Half v) : d_(static_cast<float>(v)) {}      // NOLINT
  Scalar(BFloat16 v) : d_(static_cast<float>(v)) {}  // NOLINT

  bool is_integer() const { return is_int_; }
  double ToDouble() const { return is_int_ ? static_cast<double>(i_) : d_; }
  int64_t ToInt64() const { return is_int_ ? i_ : static_cast<int64_t>(d_); }

  // The value as element type T (bool: nonzero; 16-bit floats via float).
  template <typename T>
  T To() const {
    if constexpr (std::is_same_v<T, bool>) {
      return is_int_ ? i_ != 0 : d_ != 0.0;
    } else if constexpr (std::is_integral_v<T>) {
      return is_int_ ? static_cast<T>(i_) : static_cast<T>(d_);
    } else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
      return T(static_cast<float>(ToDouble()));
    } else {
      return static_cast<T>(ToDouble());
    }
  }

  bool operator==(const Scalar& o) const {
    return is_int_ && o.is_int_ ? i_ == o.i_ : ToDouble() == o.ToDouble();
  }

 private:
  bool is_int_ = false;
  int64_t i_ = 0;
  double d_ = 0.0;
};

inline std::ostream& operator<<(std::ostream& os, const Scalar& s) {
  if (s.is_integer()) return os << s.ToInt64();
  return os << s.ToDouble();
}

}  // namespace tensorkit

#endif  // TENSORKIT_COMMON_SCALAR_H_
