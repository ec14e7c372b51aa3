#include "tensorkit/sparse/host_outputs.h"

#include <dlpack/dlpack.h>

#include <memory>
#include <utility>

#include "tensorkit/dense/external.h"
#include "tensorkit/dense/ops.h"
#include "tensorkit/sparse/internal.h"

namespace tensorkit {

namespace si = sparse_internal;

void ReorderInto(const SparseTensor& st, const std::vector<int>& order, Tensor* indices,
                 Tensor* values, const char* op) {
  TK_CHECK(st.indices().defined(), kInvalidArgument, op,
           ": the SparseTensor is empty (default-constructed); make one with "
           "SparseTensor::Create");
  TK_CHECK(indices != nullptr && values != nullptr, kInvalidArgument, op,
           ": indices and values outputs must not be null");
  const int64_t nnz = st.nnz();
  const int rank = st.rank();
  TK_CHECK(si::IsPermutation(order, rank), kInvalidArgument, op, ": order ", ShapeString(order),
           " must be a permutation of all ", rank, " axes 0..", rank - 1, " of shape ",
           ShapeString(st.shape()));
  TK_CHECK(indices->dtype() == DType::kInt64 && !si::OnCuda(*indices) &&
               indices->Dims() == std::vector<int64_t>({nnz, rank}) && indices->IsContiguous(),
           kInvalidArgument, op, ": the indices output must be a contiguous CPU int64 [", nnz, " ",
           rank, "] tensor, got ", DTypeName(indices->dtype()), " ", ShapeString(indices->Dims()),
           indices->IsContiguous() ? "" : " (not contiguous)");
  TK_CHECK(values->dtype() == st.dtype() && values->Dims() == std::vector<int64_t>({nnz}),
           kInvalidArgument, op, ": the values output must be ", DTypeName(st.dtype()), " [", nnz,
           "], got ", DTypeName(values->dtype()), " ", ShapeString(values->Dims()));
  TK_CHECK(!SharesStorage(*indices, st.indices()), kInvalidArgument, op,
           ": the indices output shares storage with the input's indices; pass a "
           "separate buffer (or call SparseTensor::Reorder to sort in place)");
  Tensor idx = si::HostContiguous(st.indices());
  Tensor vals = si::HostContiguous(st.values());
  Tensor sorted =
      si::SortEntries(op, static_cast<const int64_t*>(idx.raw_data()), nnz, st.shape(), order, vals,
                      /*may_move=*/false, static_cast<int64_t*>(indices->raw_data()));
  Copy(sorted, values);
}

void CheckIndexBounds(const SparseTensor& st, const char* op) {
  TK_CHECK(st.indices().defined(), kInvalidArgument, op,
           ": the SparseTensor is empty (default-constructed); make one with "
           "SparseTensor::Create");
  Tensor idx = si::HostContiguous(st.indices());
  si::CheckBounds(op, static_cast<const int64_t*>(idx.raw_data()), st.nnz(), st.shape());
}

SparseDLPack ToDLPack(const SparseTensor& st) {
  TK_CHECK(st.indices().defined(), kInvalidArgument,
           "ToDLPack: the SparseTensor is empty (default-constructed); make one with "
           "SparseTensor::Create");
  TK_CHECK(st.dtype() != DType::kString, kUnsupported,
           "ToDLPack: string values cannot be exported (DLPack has no string type)");
  SparseDLPack out;
  out.indices = ToDLPack(st.indices());
  try {
    out.values = ToDLPack(st.values());
  } catch (...) {
    out.indices->deleter(out.indices);
    throw;
  }
  out.shape = st.shape();
  out.order = st.order();
  return out;
}

SparseTensor FromDLPack(DLManagedTensor* indices, DLManagedTensor* values,
                        std::vector<int64_t> shape, std::vector<int> order) {
  // Each deleter must run exactly once whatever fails: by a guard until FromDLPack takes it over.
  auto release = [](DLManagedTensor* m) {
    if (m != nullptr && m->deleter != nullptr) m->deleter(m);
  };
  std::unique_ptr<DLManagedTensor, decltype(release)> indices_guard(indices, release);
  std::unique_ptr<DLManagedTensor, decltype(release)> values_guard(values, release);
  TK_CHECK(indices != nullptr && values != nullptr, kInvalidArgument,
           "FromDLPack: null DLManagedTensor for the ", indices == nullptr ? "indices" : "values",
           " of a SparseTensor");
  Tensor idx = FromDLPack(indices_guard.release());
  Tensor vals = FromDLPack(values_guard.release());
  return SparseTensor::Create(std::move(idx), std::move(vals), std::move(shape), std::move(order));
}

}  // namespace tensorkit
