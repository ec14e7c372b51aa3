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
//   in place      an input may be the very same view as the output (same storage and pattern);
//                 any other overlap between an input and the output throws Error.
//   dtypes        compute ops take int32, int64, float32, float64, float16 and bfloat16 (the
//                 16-bit floats compute in float32); every operand has the output's dtype. Copy
//                 converts between any two numeric dtypes (float to integer saturates, NaN
//                 becomes 0; anything to bool is "!= 0") and copies string tensors on the CPU.
//   integers      arithmetic wraps around on overflow; Div by zero gives 0 (and MIN / -1 wraps);
//                 Pow with a negative exponent gives 1/a^|b| truncated (0 unless |a| == 1);
//                 Exp, Log, Sigmoid, Tanh and Sqrt compute in float64 and convert back
//                 saturating (NaN -> 0).
//   devices       every operand on one device (only Copy moves between devices); on a CUDA
//                 device the op runs there, enqueued on the current stream (common/stream.h).
//   Max / Min     propagate NaN, like NumPy's maximum / minimum.
#ifndef TENSORKIT_DENSE_OPS_H_
#define TENSORKIT_DENSE_OPS_H_

#include <cstdint>
#include <vector>

#include "tensorkit/common/scalar.h"
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
// dest = alpha * src; same dtype and device.
void CopyScaled(Scalar alpha, const Tensor& src, Tensor* dest);
// dest += src; same dtype and device (only Copy converts).
void AddTo(const Tensor& src, Tensor* dest);
// dest = alpha * src + beta * dest; beta == 0 never reads dest.
void AddTo(Scalar alpha, Scalar beta, const Tensor& src, Tensor* dest);

// ---------------------------------------------------------------------------------------------
// Elementwise functions: dest = f(src), c = f(a, b)
// ---------------------------------------------------------------------------------------------

void Exp(const Tensor& src, Tensor* dest);
void Log(const Tensor& src, Tensor* dest);
void Relu(const Tensor& src, Tensor* dest);
void Sigmoid(const Tensor& src, Tensor* dest);
void Tanh(const Tensor& src, Tensor* dest);
void Abs(const Tensor& src, Tensor* dest);
void Sqrt(const Tensor& src, Tensor* dest);
void Neg(const Tensor& src, Tensor* dest);

void Add(const Tensor& a, const Tensor& b, Tensor* c);
void Sub(const Tensor& a, const Tensor& b, Tensor* c);
void Mul(const Tensor& a, const Tensor& b, Tensor* c);
void Div(const Tensor& a, const Tensor& b, Tensor* c);
void Pow(const Tensor& a, const Tensor& b, Tensor* c);
void Max(const Tensor& a, const Tensor& b, Tensor* c);
void Min(const Tensor& a, const Tensor& b, Tensor* c);

// c = alpha * (a * b) + beta * c with broadcasting and summation: matrix product is
// a [I J 1], b [1 J K], c [I 1 K]; batched, matrix-vector, outer and dot products likewise.
// GEMM-shaped float32/float64 tuples go to BLAS, the rest run in the engine.
void AddProduct(Scalar alpha, Scalar beta, const Tensor& a, const Tensor& b, Tensor* c);

// ---------------------------------------------------------------------------------------------
// Value-returning forms (new C-order tensors)
// ---------------------------------------------------------------------------------------------

Tensor Exp(const Tensor& src);
Tensor Log(const Tensor& src);
Tensor Relu(const Tensor& src);
Tensor Sigmoid(const Tensor& src);
Tensor Tanh(const Tensor& src);
Tensor Abs(const Tensor& src);
Tensor Sqrt(const Tensor& src);
Tensor Neg(const Tensor& src);

// The output has the broadcast dims of a and b.
Tensor Add(const Tensor& a, const Tensor& b);
Tensor Sub(const Tensor& a, const Tensor& b);
Tensor Mul(const Tensor& a, const Tensor& b);
Tensor Div(const Tensor& a, const Tensor& b);
Tensor Pow(const Tensor& a, const Tensor& b);
Tensor Max(const Tensor& a, const Tensor& b);
Tensor Min(const Tensor& a, const Tensor& b);

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
// Columns [start, end) of axis 1 (t needs at least 2 axes).
Tensor CopyColumns(const Tensor& t, int64_t start, int64_t end);
// Concatenation along `axis` (negative counts from the end): every input has the same dtype,
// device and number of axes, and equal dims except on `axis`. Strings work on the CPU.
Tensor Concatenate(const std::vector<Tensor>& tensors, int axis);
Tensor ConcatenateRows(const std::vector<Tensor>& tensors);     // axis 0
Tensor ConcatenateColumns(const std::vector<Tensor>& tensors);  // axis 1
// Copies of consecutive pieces of `axis` with the given sizes (which must add up to its dim).
std::vector<Tensor> Split(const Tensor& t, int axis, const std::vector<int64_t>& sizes);

}  // namespace tensorkit

#endif  // TENSORKIT_DENSE_OPS_H_
