#include "tensorkit/sparse/host_outputs.h"

#include <dlpack/dlpack.h>

#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "tensorkit/common/parallel.h"
#include "tensorkit/dense/external.h"
#include "tensorkit/dense/ops.h"
#include "tensorkit/dense/outputs.h"
#include "tensorkit/sparse/internal.h"

namespace tensorkit {

namespace si = sparse_internal;

namespace {

// 0, 1, ..., n - 1 as int64: the values that string entries sort as.
Tensor Positions(int64_t n) {
  Tensor p = Tensor::Empty({n}, DType::kInt64);
  int64_t* d = p.data<int64_t>();
  ParallelFor(0, n, GrainFor(8), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) d[i] = i;
  });
  return p;
}

}  // namespace

void ReorderInto(const SparseTensor& st, const std::vector<int>& order, OutputAllocator& out,
                 const char* op) {
  TK_CHECK(st.indices().defined(), kInvalidArgument, op,
           ": the SparseTensor is empty (default-constructed); make one with "
           "SparseTensor::Create");
  const int64_t nnz = st.nnz();
  const int rank = st.rank();
  TK_CHECK(si::IsPermutation(order, rank), kInvalidArgument, op, ": order ", ShapeString(order),
           " must be a permutation of all ", rank, " axes 0..", rank - 1, " of shape ",
           ShapeString(st.shape()));
  Tensor indices = AllocateChecked(out, 0, {nnz, rank}, DType::kInt64, Device::Cpu(), op);
  TK_CHECK(!SharesStorage(indices, st.indices()), kInvalidArgument, op,
           ": the indices output shares storage with the input's indices; pass a "
           "separate buffer (or call SparseTensor::Reorder to sort in place)");
  const bool strings = st.dtype() == DType::kString;
  Tensor values;
  StringOutput* string_values = nullptr;
  if (strings) {
    string_values = out.AllocateStrings(1, {nnz});
  } else {
    values = AllocateChecked(out, 1, {nnz}, st.dtype(), Device::Cpu(), op, /*contiguous=*/false);
  }
  Tensor idx = st.indices().HostContiguous();
  // Strings sort as their positions and are then set once, from st's own elements.
  Tensor vals = strings ? Positions(nnz) : st.values().HostContiguous();
  Tensor sorted =
      si::SortEntries(op, static_cast<const int64_t*>(idx.raw_data()), nnz, st.shape(), order, vals,
                      /*may_move=*/false, static_cast<int64_t*>(indices.raw_data()));
  if (strings) {
    const Tensor src = st.values().HostContiguous();
    const std::string* v = src.data<std::string>();
    const int64_t* perm = sorted.data<int64_t>();
    auto view = [&](int64_t i) { return std::string_view(v[perm[i]]); };
    if (string_values->InOrder()) {
      string_values->Set(0, nnz, view);
    } else {
      ParallelFor(0, nnz, GrainFor(32),
                  [&](int64_t b, int64_t e) { string_values->Set(b, e, view); });
    }
  } else {
    Copy(sorted, &values);
  }
  out.Commit();
}

void CheckIndexBounds(const SparseTensor& st, const char* op) {
  TK_CHECK(st.indices().defined(), kInvalidArgument, op,
           ": the SparseTensor is empty (default-constructed); make one with "
           "SparseTensor::Create");
  Tensor idx = st.indices().HostContiguous();
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
