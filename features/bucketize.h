// tensorkit/features/bucketize.h: numbers into bucket ids by sorted boundaries, and the quantile
// boundaries that make the buckets about equally full.
//
// Glossary
//   boundaries      a non-decreasing list b[0] <= ... <= b[n-1] of finite or infinite numbers
//                   (no NaN). Bucket i holds the values v with b[i-1] <= v < b[i]; bucket 0 the
//                   values below b[0], bucket n the values at or above b[n-1].
//   bucket id       the index of the first boundary greater than the value (std::upper_bound),
//                   an int32 in [0, n]: TensorFlow's Bucketize. A NaN value is greater than
//                   nothing, so it lands in bucket n (what TensorFlow's upper_bound gives).
//   comparison type the type in which a value meets a boundary, as C++ compares them (and so
//                   TensorFlow's kernel): with float boundaries int32, int64 and float values
//                   compare as float (16777219 becomes 16777220.0f), double values as double;
//                   with double boundaries every value compares as double.
//   structure       a dense Tensor, a JaggedTensor or a SparseTensor: the output has the same
//                   structure (same dims, offsets and weights, or indices, shape and order;
//                   shared, not copied) with int32 values.
//   rank            of a value x within n numbers: how many are below x (or at most x).
//   quantile sketch a mergeable summary of a stream of numbers (QuantileSketch, quantiles.h)
//                   whose quantiles are within a stated rank error.
#ifndef TENSORKIT_FEATURES_BUCKETIZE_H_
#define TENSORKIT_FEATURES_BUCKETIZE_H_

#include <initializer_list>
#include <vector>

#include "tensorkit/dense/tensor.h"
#include "tensorkit/features/jagged.h"
#include "tensorkit/sparse/sparse_tensor.h"

namespace tensorkit {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

// The bucket id of every value (TensorFlow's Bucketize, whose attribute is a list of float).
// Values int32, int64, float32 or float64 of any dims and strides, on the CPU or a CUDA device
// (computed there by the same search, with the same ids); output int32 of the same dims on the
// values' device. A boundary below its predecessor
// or a NaN boundary is an Error naming its position (TensorFlow only asks for sorted ones).
// Results do not depend on the thread count.
Tensor Bucketize(const Tensor& values, const std::vector<float>& boundaries);
// The same with double boundaries (every value compares as double, see the glossary).
Tensor Bucketize(const Tensor& values, const std::vector<double>& boundaries);
// Boundaries as a 1-D float32 or float64 tensor (on any device): the same as the vector of its
// elements.
Tensor Bucketize(const Tensor& values, const Tensor& boundaries);
// A braced list of boundaries means float ones, TensorFlow's (it would fit either vector).
Tensor Bucketize(const Tensor& values, std::initializer_list<float> boundaries);

// The same into *out: a contiguous CPU int32 tensor with the values' dims (a host framework's
// output buffer), else an Error.
void Bucketize(const Tensor& values, const std::vector<float>& boundaries, Tensor* out);
void Bucketize(const Tensor& values, const std::vector<double>& boundaries, Tensor* out);

// The same for the values of a jagged or sparse tensor (the structure is kept).
JaggedTensor Bucketize(const JaggedTensor& values, const std::vector<float>& boundaries);
JaggedTensor Bucketize(const JaggedTensor& values, const std::vector<double>& boundaries);
SparseTensor Bucketize(const SparseTensor& values, const std::vector<float>& boundaries);
SparseTensor Bucketize(const SparseTensor& values, const std::vector<double>& boundaries);

}  // namespace tensorkit

#endif  // TENSORKIT_FEATURES_BUCKETIZE_H_
