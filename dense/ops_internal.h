// tensorkit/dense/ops_internal.h: what ops*.cc share (not a public header): the element
// functions and the choice of typed inner loop per (function, dtype, mode).
//
// Glossary
//   compute set  the dtypes compute ops accept: every numeric dtype (the 16-bit floats compute
//                in float32; dense/ops.h says what each op does on integers and bool).
//   CoeffsBuf    alpha and beta converted to the compute type of a dtype, type-erased so that
//                a runtime-chosen inner loop can read them as engine::Coeffs<C>.
//   SimdPath     the instruction set of the transcendental float32/float64 unary loops (Exp,
//                Log, Sigmoid, Tanh): common/simd_path.h.
#ifndef TENSORKIT_DENSE_OPS_INTERNAL_H_
#define TENSORKIT_DENSE_OPS_INTERNAL_H_

#include <cstdint>

#include "tensorkit/common/dtype.h"
#include "tensorkit/common/scalar.h"
#include "tensorkit/common/simd_path.h"
#include "tensorkit/dense/engine.h"

namespace tensorkit::ops_internal {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

using engine::BinaryFn;
using engine::UnaryFn;

struct CoeffsBuf {
  alignas(16) unsigned char bytes[32] = {};
  bool alpha_is_one = true;
  bool beta_is_zero = true;
  bool beta_is_one = false;
};

// alpha and beta in the compute type of `dtype`; throws Error(kUnsupported) naming `op` for a
// dtype outside the compute set.
CoeffsBuf MakeCoeffs(DType dtype, Scalar alpha, Scalar beta, const char* op);
// A Scalar as element type T: floats convert to integers saturating (NaN -> 0).
template <typename T>
T ScalarAs(Scalar v);

// The typed inner loop; throws Error(kUnsupported) naming `op` for a dtype outside the set.
// Modes other than kAssign and kAxpby exist only for kIdentity and kMul.
engine::InnerLoop UnaryKernel(UnaryFn fn, DType dtype, engine::Mode mode, const char* op);
engine::InnerLoop BinaryKernel(BinaryFn fn, DType dtype, engine::Mode mode, const char* op);
// The SumRowsLoop of UnaryKernel(fn, dtype, kAxpby), or nullptr where there is none.
engine::SumRowsLoop UnarySumRowsKernel(UnaryFn fn, DType dtype);
// out = Convert(in) for any two numeric dtypes, or string to string.
engine::InnerLoop ConvertKernel(DType dst, DType src, const char* op);
// out = value; ctx points at one element of `dtype`.
engine::InnerLoop FillKernel(DType dtype, const char* op);

// ---------------------------------------------------------------------------------------------
// Definitions
// ---------------------------------------------------------------------------------------------

template <typename T>
T ScalarAs(Scalar v) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    if (!v.is_integer()) return engine::detail::SaturatingCast<T>(v.ToDouble());
  }
  return v.To<T>();
}

}  // namespace tensorkit::ops_internal

#endif  // TENSORKIT_DENSE_OPS_INTERNAL_H_
