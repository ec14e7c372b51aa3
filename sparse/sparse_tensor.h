// tensorkit/sparse/sparse_tensor.h: COO sparse tensors (see sparse/README.md).
//
// Glossary
//   indices  int64 Tensor [nnz, rank]: row i is the index tuple of entry i.
//   values   Tensor [nnz] of any dtype, kString included: values[i] sits at indices[i].
//   shape    the dense shape; rank = shape.size() (not limited to kMaxAxes).
//   order    the axes by which entries are known to be sorted (lexicographically, order[0]
//            first), or all -1 when unknown.
//   group    the entries that share their coordinates on a set of leading order axes.
#ifndef TENSORKIT_SPARSE_SPARSE_TENSOR_H_
#define TENSORKIT_SPARSE_SPARSE_TENSOR_H_

#include <cstdint>
#include <vector>

#include "tensorkit/dense/tensor.h"

namespace tensorkit {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

class SparseTensor {
 public:
  SparseTensor() = default;
  // Checks shapes, dtypes and order (never index contents): indices int64 [nnz, rank], values
  // [nnz], shape dims >= 0, order empty or all -1 (unknown) or a permutation of 0..rank-1.
  static SparseTensor Create(Tensor indices, Tensor values, std::vector<int64_t> shape,
                             std::vector<int> order = {});

  const Tensor& indices() const { return indices_; }
  const Tensor& values() const { return values_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  const std::vector<int>& order() const { return order_; }
  int64_t nnz() const { return indices_.defined() ? indices_.Dim(0) : 0; }
  int rank() const { return static_cast<int>(shape_.size()); }
  DType dtype() const { return values_.dtype(); }
  Device device() const { return values_.device(); }
  bool OrderKnown() const { return !order_.empty() && order_[0] >= 0; }

  // Bounds; with a known order, strictly increasing in it; else no repeated index.
  bool IndicesValid() const;
  // Same checks; throws Error naming the first bad entry's position and coordinates.
  void ValidateIndices() const;

  // Stable sort by `order` (a permutation of 0..rank-1), in place; sets order().
  void Reorder(const std::vector<int>& order);
  // Sorts in order {0..rank-1} and sums duplicates (OR for bool, last for strings).
  void Coalesce();

  class Group;
  class GroupIterable;
  // Iterates groups of entries sharing coordinates on `dims`; order() must start with `dims`.
  GroupIterable group(const std::vector<int>& dims) const;

  // Scatters into `dense` (dims == shape, same dtype); zero-fills first when `initialize`.
  void ToDense(Tensor* dense, bool initialize = true) const;
  Tensor ToDense() const;
  static SparseTensor FromDense(const Tensor& dense);

  static SparseTensor Concat(const std::vector<SparseTensor>& inputs);
  static SparseTensor Concat(const std::vector<SparseTensor>& inputs, int axis);

 private:
  Tensor indices_;
  Tensor values_;
  std::vector<int64_t> shape_;
  std::vector<int> order_;
};

}  // namespace tensorkit

#endif  // TENSORKIT_SPARSE_SPARSE_TENSOR_H_
