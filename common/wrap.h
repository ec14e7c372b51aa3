// tensorkit/common/wrap.h: the one definition of element arithmetic that wraps around.
//
// Glossary
//   wrap     integer results are taken modulo 2^bits of the type, as NumPy does for the same
//            output dtype: computed in an unsigned type at least as wide as `unsigned`, so there
//            is neither signed-overflow UB nor the int promotion of narrow types (uint16 * uint16
//            would overflow int).
//   bool     AddW is logical or, MulW logical and (NumPy's bool + and *); SubW is exclusive or.
//   floats   plain arithmetic in the type given (callers pass the compute type: float for the
//            16-bit floats).
// The dense functors (dense/functors.h, on the CPU and on CUDA devices) and the sparse compute
// files use these and nothing else.
#ifndef TENSORKIT_COMMON_WRAP_H_
#define TENSORKIT_COMMON_WRAP_H_

#include <type_traits>

#include "tensorkit/common/host_device.h"

namespace tensorkit {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

template <typename C>
TK_HOST_DEVICE C AddW(C a, C b);
template <typename C>
TK_HOST_DEVICE C SubW(C a, C b);
template <typename C>
TK_HOST_DEVICE C MulW(C a, C b);

// ---------------------------------------------------------------------------------------------
// Definitions
// ---------------------------------------------------------------------------------------------

namespace wrap_detail {
// The unsigned type integer arithmetic on C happens in.
template <typename C>
using Unsigned = std::common_type_t<std::make_unsigned_t<C>, unsigned>;
}  // namespace wrap_detail

template <typename C>
TK_HOST_DEVICE C AddW(C a, C b) {
  if constexpr (std::is_same_v<C, bool>) {
    return a || b;
  } else if constexpr (std::is_integral_v<C>) {
    using U = wrap_detail::Unsigned<C>;
    return static_cast<C>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return static_cast<C>(a + b);
  }
}

template <typename C>
TK_HOST_DEVICE C SubW(C a, C b) {
  if constexpr (std::is_same_v<C, bool>) {
    return a != b;
  } else if constexpr (std::is_integral_v<C>) {
    using U = wrap_detail::Unsigned<C>;
    return static_cast<C>(static_cast<U>(a) - static_cast<U>(b));
  } else {
    return static_cast<C>(a - b);
  }
}

template <typename C>
TK_HOST_DEVICE C MulW(C a, C b) {
  if constexpr (std::is_same_v<C, bool>) {
    return a && b;
  } else if constexpr (std::is_integral_v<C>) {
    using U = wrap_detail::Unsigned<C>;
    return static_cast<C>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    return static_cast<C>(a * b);
  }
}

}  // namespace tensorkit

#endif  // TENSORKIT_COMMON_WRAP_H_
