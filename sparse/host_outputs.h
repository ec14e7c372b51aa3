// tensorkit/sparse/host_outputs.h: sparse operations that write into tensors the caller owns,
// and the sparse DLPack exchange.
//
// Glossary
//   caller-owned output  a Tensor over memory a host framework allocated (for example a
//                        TensorFlow op's allocate_output), made by the OutputAllocator the
//                        caller passes (common/outputs.h); the operation writes its result
//                        there instead of allocating, so nothing is copied at the boundary.
//   sparse DLPack        a SparseTensor as two DLPack tensors (indices int64 [nnz, rank] and
//                        values [nnz]) plus its shape and order, the way frameworks without a
//                        sparse DLPack type (NumPy, PyTorch, TensorFlow) can take it.
#ifndef TENSORKIT_SPARSE_HOST_OUTPUTS_H_
#define TENSORKIT_SPARSE_HOST_OUTPUTS_H_

#include <cstdint>
#include <vector>

#include "tensorkit/common/outputs.h"
#include "tensorkit/dense/tensor.h"
#include "tensorkit/sparse/sparse_tensor.h"

struct DLManagedTensor;  // from dlpack/dlpack.h

namespace tensorkit {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

// What SparseTensor::Reorder(order) computes, its outputs made by `out` (common/outputs.h):
// output 0 the indices (contiguous int64 [nnz, rank] on the CPU, sharing no storage with st's
// indices), output 1 the values ([nnz] of st's dtype, any strides; string values through
// AllocateStrings, as views of st's strings: none is copied twice). The sorted rows are decoded
// straight into output 0; `st` is not modified; out.Commit() ends it. Throws Error (nothing
// written to the values, no Commit) naming `op` (the caller's operation) and the first entry
// outside st.shape().
void ReorderInto(const SparseTensor& st, const std::vector<int>& order, OutputAllocator& out,
                 const char* op = "ReorderInto");

// Throws Error(kOutOfRange) naming `op`, the first entry outside st.shape() and its
// coordinates; repeats and order are not looked at (ValidateIndices checks those too).
void CheckIndexBounds(const SparseTensor& st, const char* op);

// A SparseTensor as DLPack: both DLManagedTensors share st's storage (no copy) and their
// consumer calls each deleter exactly once.
struct SparseDLPack {
  DLManagedTensor* indices = nullptr;
  DLManagedTensor* values = nullptr;
  std::vector<int64_t> shape;
  std::vector<int> order;  // st.order(): empty or all -1 when unknown
};
// Throws Error for string values (DLPack has no string type).
SparseDLPack ToDLPack(const SparseTensor& st);
// Takes ownership of both DLManagedTensors (their deleters run when the last Tensor goes, also
// when this throws) and builds the SparseTensor over them without copying; the checks are
// SparseTensor::Create's.
SparseTensor FromDLPack(DLManagedTensor* indices, DLManagedTensor* values,
                        std::vector<int64_t> shape, std::vector<int> order = {});

}  // namespace tensorkit

#endif  // TENSORKIT_SPARSE_HOST_OUTPUTS_H_
