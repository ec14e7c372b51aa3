#include "tensorkit/sparse/sparse_tensor.h"

#include <algorithm>

#include "tensorkit/sparse/device_ops.h"
#include "tensorkit/sparse/internal.h"

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
  TK_CHECK(values.Dim(0) == indices.Dim(0), kShapeMismatch, "SparseTensor::Create: ", values.Dim(0),
           " values for ", indices.Dim(0), " index rows");
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
  TK_CHECK(static_cast<int>(order.size()) == rank, kInvalidArgument, "SparseTensor::Create: order ",
           ShapeString(order), " must have ", rank, " entries (rank of shape ", ShapeString(shape),
           ")");
  const bool unknown = std::all_of(order.begin(), order.end(), [](int o) { return o == -1; });
  TK_CHECK(unknown || sparse_internal::IsPermutation(order, rank), kInvalidArgument,
           "SparseTensor::Create: order ", ShapeString(order),
           " is neither all -1 (unknown) nor a permutation of 0..", rank - 1);
  SparseTensor st;
  st.indices_ = std::move(indices);
  st.values_ = std::move(values);
  st.shape_ = std::move(shape);
  st.order_ = std::move(order);
  return st;
}

}  // namespace tensorkit

namespace tensorkit {
namespace si = sparse_internal;

SparseTensor SparseTensor::To(Device device) const {
  si::CheckCreated(*this, "SparseTensor::To");
  TK_CHECK(!OnCuda(device) || dtype() != DType::kString, kUnsupported,
           "SparseTensor::To: string values cannot live on ", device,
           "; sparse tensors with string values stay on the CPU (To(Device::Cpu()))");
  return Create(indices_.To(device), values_.To(device), shape_, order_);
}

bool SparseTensor::IndicesValid() const { return CheckIndices("IndicesValid", false); }

bool SparseTensor::SortedIn(const std::vector<int>& order) const {
  si::CheckCreated(*this, "SortedIn");
  TK_CHECK(si::IsPermutation(order, rank()), kInvalidArgument, "SortedIn: order ",
           ShapeString(order), " must be a permutation of all ", rank(), " axes of shape ",
           ShapeString(shape_));
  if (OnCuda(*this)) return sparse_cuda::SortedIn(*this, order);
  const Tensor idx = indices_.HostContiguous();
  return si::FirstUnordered(static_cast<const int64_t*>(idx.raw_data()), nnz(), rank(), order,
                            /*strict=*/false) < 0;
}

void SparseTensor::ValidateIndices() const { CheckIndices("ValidateIndices", true); }

bool SparseTensor::CheckIndices(const char* op, bool raise) const {
  si::CheckCreated(*this, op);
  if (OnCuda(*this)) return sparse_cuda::CheckIndices(*this, op, raise);
  const Tensor idx = indices_.HostContiguous();
  const int64_t* rows = static_cast<const int64_t*>(idx.raw_data());
  const int64_t n = nnz();
  const int r = rank();
  if (OrderKnown()) {  // one pass; the first bad entry in sequence is the one named
    const int64_t i = si::FirstInvalid(rows, n, shape_, order_, /*strict=*/true);
    if (i < 0) return true;
    if (!raise) return false;
    if (si::OutOfBounds(rows + i * r, shape_.data(), r)) si::ThrowOutOfBounds(op, rows, i, shape_);
    si::ThrowUnordered(op, i, rows + i * r, rows + (i - 1) * r, order_);
  }
  const int64_t out = si::FirstOutOfBounds(rows, n, shape_);
  if (out >= 0) {
    if (raise) si::ThrowOutOfBounds(op, rows, out, shape_);
    return false;
  }
  // Unknown order: sort a permutation (the tensor stays as it is) and look for equal neighbours.
  const std::vector<int64_t> perm = si::SortPermutation(rows, n, shape_, si::Iota(r));
  const std::vector<int64_t> repeats = si::SelectPositions(n, [&](int64_t j) {
    return j > 0 && si::SameRow(rows + perm[j] * r, rows + perm[j - 1] * r, r);
  });
  if (repeats.empty()) return true;
  if (!raise) return false;
  // Within a run of equal rows positions ascend (stable sort): the smallest repeating position
  // is some run's second entry, and the run's first entry is the one it repeats.
  int64_t best = repeats[0];
  for (int64_t j : repeats) best = perm[j] < perm[best] ? j : best;
  int64_t head = best - 1;
  while (head > 0 && si::SameRow(rows + perm[head - 1] * r, rows + perm[best] * r, r)) --head;
  si::ThrowRepeat(op, perm[best], rows + perm[best] * r, r, perm[head]);
}

}  // namespace tensorkit
