// tensorkit/dense/ops.h: dense compute operations and copies, all run by the kernel engine
// (dense/engine.h, Note [kernel engine]).
//
// Glossary
//   output        the Tensor passed by pointer; it must exist already (dims, dtype, device):
//                 nothing here resizes it. Value-returning forms allocate a fresh one.
//   broadcasting  after padding with dim-1 axes on the left, every axis of every operand has the
//                 broadcast dim or dim 1. An input with dim 1 is repeated.
//   summation     an output with dim 1 where an input has dim n receives the SUM over that axis,
//                 for every operation: Exp(src [4 5], dest [4 1]) gives dest[i] = sum_j
//                 exp(src[i,j]).
//   beta == 0     the output is never read, so NaN or garbage in it cannot leak into the result.
//   on an Error   an operation that throws, a failed allocation (kResourceExhausted) included,
//                 leaves its output as it was: every check and every allocation of work space
//                 comes before the first write (tests/api/alloc_failure_test.cc fails each
//                 allocation in turn).
//   in place      an input may be the very same view as the output (same storage and pattern);
//                 any other overlap between an input and the output throws Error.
//   dtypes        compute ops take every numeric dtype: bool, int8, uint8, int16, int32, int64,
//                 float16, bfloat16, float32, float64 (the 16-bit floats compute in float32);
//                 every operand has the output's dtype, and alpha, beta and Set's value convert
//                 to it first (an integer wraps, a float saturates into an integer dtype). Copy
//                 converts between any two numeric dtypes (float to integer saturates, NaN
//                 becomes 0; anything to bool is "!= 0") and copies string tensors on the CPU.
//                 The results are NumPy's for the same output dtype where NumPy keeps that
//                 dtype; where NumPy raises or returns another dtype, the rules below say what
//                 happens (never undefined behaviour).
//   integers      Add, Sub, Mul, AddProduct, summation, alpha and beta wrap around modulo
//                 2^bits, and so do Neg (Neg of uint8 5 is 251) and Abs (Abs of int8 -128 is
//                 -128), as in NumPy; Relu and Abs of uint8 return the input. Where NumPy differs:
//                 Div truncates toward zero (C's /; NumPy's / gives float64 and // floors),
//                 division by zero gives 0 and MIN / -1 wraps to MIN; Pow with a negative
//                 exponent gives 1/a^|b| truncated (0 unless |a| == 1; NumPy raises); Exp, Log,
//                 Sigmoid, Tanh and Sqrt compute in float64 and convert back as Copy does
//                 (truncated, saturated, NaN -> 0: Sqrt of -4 is 0, Log of 0 is MIN), where
//                 NumPy returns floats.
//   bool          arithmetic on 0 and 1 whose result converts back with "!= 0", which is NumPy's
//                 logic where NumPy has it: Add and Max are or, Mul and Min are and, summation
//                 into a bool output is "any", AddProduct is the or-and (boolean) matrix
//                 product, alpha * x + beta * y is (alpha and x) or (beta and y). Where NumPy
//                 raises or promotes: Sub is xor (NumPy advises ^), Div is and (x / 0 = 0 as for
//                 integers), Pow(a, b) is a or not b (a^0 = 1), Neg, Abs, Relu, Sqrt and Tanh
//                 return the input, Exp and Sigmoid give true, Log gives not x (log 1 = 0,
//                 log 0 = -inf).
//   devices       every operand on one device (only Copy moves between devices); on a CUDA
//                 device the op runs there, enqueued on the current stream (common/stream.h).
//   Max / Min     propagate NaN, like NumPy's maximum / minimum.
#ifndef TENSORKIT_DENSE_OPS_H_
#define TENSORKIT_DENSE_OPS_H_

#include <cstdint>
#include <vector>

#include "tensorkit/common/scalar.h"
#include "tensorkit/dense/elementwise_fns.h"
#include "tensorkit/dense/tensor.h"

namespace tensorkit {

// ---------------------------------------------------------------------------------------------
// Filling and scaling
// ---------------------------------------------------------------------------------------------

// Every element 0 ("" for strings).
void SetZero(Tensor* t);
// Every element v (converted to t's dtype; numeric dtypes only).
void Set(Scalar v, Tensor* t);
// t = alpha * t.
void Scale(Scalar alpha, Tensor* t);

// ---------------------------------------------------------------------------------------------
// Copies and accumulation
// ---------------------------------------------------------------------------------------------

// dest = src with broadcasting and summation; may change dtype and device.
void Copy(const Tensor& src, Tensor* dest);
// t converted to `dtype` by Copy's rules, as a new C-order tensor on t's device; t itself (no
// copy) when it already has that dtype.
Tensor Converted(const Tensor& t, DType dtype);
// dest = alpha * src; same dtype and device.
void CopyScaled(Scalar alpha, const Tensor& src, Tensor* dest);
// dest += src; same dtype and device (only Copy converts).
void AddTo(const Tensor& src, Tensor* dest);
// dest = alpha * src + beta * dest; beta == 0 never reads dest.
void AddTo(Scalar alpha, Scalar beta, const Tensor& src, Tensor* dest);

// ---------------------------------------------------------------------------------------------
// Elementwise functions: dest = f(src), c = f(a, b)
// ---------------------------------------------------------------------------------------------

// Two forms of each function of the list in dense/elementwise_fns.h (its table says what each
// computes): unary Exp, Log, Relu, Sigmoid, Tanh, Abs, Sqrt, Neg and binary Add, Sub, Mul, Div,
// Pow, Max, Min. For Exp and Add:
//   void Exp(const Tensor& src, Tensor* dest);               // dest = exp(src)
//   Tensor Exp(const Tensor& src);                           // a new tensor of src's dims
//   void Add(const Tensor& a, const Tensor& b, Tensor* c);   // c = a + b
//   Tensor Add(const Tensor& a, const Tensor& b);            // of the broadcast dims of a and b
// The value-returning forms give new C-order tensors with the inputs' dtype and device.
#define TK_DECLARE_UNARY(Name)                \
  void Name(const Tensor& src, Tensor* dest); \
  Tensor Name(const Tensor& src);
#define TK_DECLARE_BINARY(Name)                           \
  void Name(const Tensor& a, const Tensor& b, Tensor* c); \
  Tensor Name(const Tensor& a, const Tensor& b);
TENSORKIT_UNARY_FNS(TK_DECLARE_UNARY)
TENSORKIT_BINARY_FNS(TK_DECLARE_BINARY)
#undef TK_DECLARE_UNARY
#undef TK_DECLARE_BINARY

// c = alpha * (a * b) + beta * c with broadcasting and summation: matrix product is
// a [I J 1], b [1 J K], c [I 1 K]; batched, matrix-vector, outer and dot products likewise.
// GEMM-shaped float32/float64 tuples go to BLAS, the rest run in the engine.
void AddProduct(Scalar alpha, Scalar beta, const Tensor& a, const Tensor& b, Tensor* c);

// ---------------------------------------------------------------------------------------------
// Value-returning forms (new C-order tensors; the elementwise functions' are above)
// ---------------------------------------------------------------------------------------------

// Sum over `axes` (negative axes count from the end; {} sums nothing); keepdims leaves them
// as dim-1 axes.
Tensor Sum(const Tensor& t, std::vector<int> axes, bool keepdims = false);
// A view with `dims` when one exists (dense/views.h View), else a C-order copy. One dim may be
// -1 (inferred).
Tensor Reshape(const Tensor& t, const std::vector<int64_t>& dims);

// ---------------------------------------------------------------------------------------------
// Dense copies (new storage, C order)
// ---------------------------------------------------------------------------------------------

// Rows [start, end) of axis 0.
Tensor CopyRows(const Tensor& t, int64_t start, int64_t end);
// Columns [start, end) of axis 1; of a 1-D tensor, elements [start, end) (its columns, as
// NumPy's hstack sees a 1-D array).
Tensor CopyColumns(const Tensor& t, int64_t start, int64_t end);
// Concatenation along `axis` (negative counts from the end): every input has the same dtype,
// device and number of axes, and equal dims except on `axis`. Strings work on the CPU.
Tensor Concatenate(const std::vector<Tensor>& tensors, int axis);
Tensor ConcatenateRows(const std::vector<Tensor>& tensors);  // axis 0
// Axis 1; when every input is 1-D, axis 0 (1-D tensors side by side, as NumPy's hstack).
Tensor ConcatenateColumns(const std::vector<Tensor>& tensors);
// Copies of consecutive pieces of `axis` with the given sizes (which must add up to its dim).
std::vector<Tensor> Split(const Tensor& t, int axis, const std::vector<int64_t>& sizes);

}  // namespace tensorkit

#endif  // TENSORKIT_DENSE_OPS_H_
