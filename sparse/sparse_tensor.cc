#include "tensorkit/sparse/sparse_tensor.h"

#include <algorithm>

namespace tensorkit {

SparseTensor SparseTensor::Create(Tensor indices, Tensor values, std::vector<int64_t> shape,
                                  std::vector<int> order) {
  indices.CheckDefined("SparseTensor::Create (indices)");
  values.CheckDefined("SparseTensor::Create (values)");
  TK_CHECK(indices.dtype() == DType::kInt64, kDTypeMismatch,
           "SparseTensor::Create: indices must be int64, got ", DTypeName(indices.dtype()));
  TK_CHECK(indices.NumAxes() == 2, kShapeMismatch,
           "SparseTensor::Create: indices must be [nnz, rank], got dims ",
           ShapeString(indices.Dims()));
  TK_CHECK(values.NumAxes() == 1, kShapeMismatch,
           "SparseTensor::Create: values must be [nnz], got dims ", ShapeString(values.Dims()));
  TK_CHECK(values.Dim(0) == indices.Dim(0), kShapeMismatch, "SparseTensor::Create: ",
           values.Dim(0), " values for ", indices.Dim(0), " index rows");
  TK_CHECK(indices.Dim(1) == static_cast<int64_t>(shape.size()), kShapeMismatch,
           "SparseTensor::Create: indices have ", indices.Dim(1), " columns but shape ",
           ShapeString(shape), " has rank ", shape.size());
  TK_CHECK(indices.device() == values.device(), kDeviceMismatch,
           "SparseTensor::Create: indices on ", indices.device(), " but values on ",
           values.device());
  for (int64_t d : shape) {
    TK_CHECK(d >= 0, kInvalidArgument, "SparseTensor::Create: negative dim ", d, " in shape ",
             ShapeString(shape));
  }
  const int rank = static_cast<int>(shape.size());
  if (order.empty()) order.assign(rank, -1);
  TK_CHECK(static_cast<int>(order.size()) == rank, kInvalidArgument,
           "SparseTensor::Create: order ", ShapeString(order), " must have ", rank,
           " entries (rank of shape ", ShapeString(shape), ")");
  const bool unknown = std::all_of(order.begin(), order.end(), [](int o) { return o == -1; });
  if (!unknown) {
    std::vector<int> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    for (int i = 0; i < rank; ++i) {
      TK_CHECK(sorted[i] == i, kInvalidArgument, "SparseTensor::Create: order ",
               ShapeString(order), " is neither all -1 (unknown) nor a permutation of 0..",
               rank - 1);
    }
  }
  SparseTensor st;
  st.indices_ = std::move(indices);
  st.values_ = std::move(values);
  st.shape_ = std::move(shape);
  st.order_ = std::move(order);
  return st;
}

}  // namespace tensorkit
