// The CUDA bodies of the structural operations (device_ops.h, Note [sparse CUDA bodies]): the
// SparseTensor methods, sparse_ops.h and the compressed matrices, built from cuda/structure.h
// and the dense engine.
#include <utility>

#include "tensorkit/dense/ops.h"
#include "tensorkit/dense/views.h"
#include "tensorkit/sparse/device_ops.h"
#include "tensorkit/sparse/reshape_internal.h"

namespace tensorkit::sparse_cuda {
namespace si = sparse_internal;

// --- Shared steps ------------------------------------------------------------------------------

void CheckBounds(const char* op, const Tensor& idx, const std::vector<int64_t>& shape) {
  std::vector<int64_t> row;
  const int64_t bad = FirstOutOfBounds(idx, shape, &row);
  if (bad >= 0) si::ThrowOutOfBoundsRow(op, row.data(), bad, shape);
}

SparseTensor Merge(const Tensor& idx, const Tensor& values, const std::vector<int64_t>& shape,
                   const MergeRule& rule, const char* op) {
  const Tensor rows = idx.Contiguous();
  CheckBounds(op, rows, shape);
  return MergeChecked(rows, values, shape, rule);
}

SparseTensor MergeChecked(const Tensor& idx, const Tensor& values,
                          const std::vector<int64_t>& shape, const MergeRule& rule) {
  const Tensor rows = idx.Contiguous();
  const std::vector<int> order = si::Iota(static_cast<int>(shape.size()));
  Tensor sorted_idx, sorted_values, merged_idx, merged_values;
  SortEntries(rows, values.Contiguous(), shape, order, &sorted_idx, &sorted_values);
  const bool merged = MergeRuns(sorted_idx, sorted_values, &merged_idx, &merged_values, rule);
  return SparseTensor::Create(merged ? merged_idx : sorted_idx,
                              merged ? merged_values : sorted_values, shape, order);
}

// --- SparseTensor --------------------------------------------------------------------------------

bool CheckIndices(const SparseTensor& st, const char* op, bool raise) {
  const Tensor idx = st.indices().Contiguous();
  const std::vector<int64_t>& shape = st.shape();
  const int r = st.rank();
  std::vector<int64_t> rows;
  const int64_t out = FirstOutOfBounds(idx, shape, &rows);
  if (st.OrderKnown()) {  // as on the CPU, the first bad entry in sequence is the one named
    std::vector<int64_t> pair;
    const int64_t i = FirstUnordered(idx, st.order(), /*strict=*/true, &pair);
    if (out < 0 && i < 0) return true;
    if (!raise) return false;
    if (out >= 0 && (i < 0 || out <= i)) si::ThrowOutOfBoundsRow(op, rows.data(), out, shape);
    si::ThrowUnordered(op, i, pair.data() + r, pair.data(), st.order());
  }
  if (out >= 0) {
    if (raise) si::ThrowOutOfBoundsRow(op, rows.data(), out, shape);
    return false;
  }
  int64_t head = -1;
  const int64_t entry = FirstRepeat(idx, shape, &head, &rows);
  if (entry < 0) return true;
  if (!raise) return false;
  si::ThrowRepeat(op, entry, rows.data(), r, head);
}

bool SortedIn(const SparseTensor& st, const std::vector<int>& order) {
  std::vector<int64_t> rows;  // found on the device; only the answer comes back
  return FirstUnordered(st.indices().Contiguous(), order, /*strict=*/false, &rows) < 0;
}

SparseTensor Reorder(const SparseTensor& st, const std::vector<int>& order) {
  const Tensor idx = st.indices().Contiguous();
  CheckBounds("Reorder", idx, st.shape());
  Tensor sorted_idx, sorted_values;
  SortEntries(idx, st.values().Contiguous(), st.shape(), order, &sorted_idx, &sorted_values);
  return SparseTensor::Create(std::move(sorted_idx), std::move(sorted_values), st.shape(), order);
}

SparseTensor Coalesce(const SparseTensor& st) {
  return Merge(st.indices(), st.values(), st.shape(), {}, "Coalesce");
}

void Group(const SparseTensor& st, const std::vector<int>& dims, Tensor* indices, Tensor* values,
           std::vector<int64_t>* starts, std::vector<int64_t>* coords) {
  *indices = st.indices().Contiguous();
  *values = st.values().Contiguous();
  *starts = RunHeads(*indices, dims, coords);
  starts->push_back(st.nnz());
}

// Note [scatter without races] of dense_convert.cc on the device: a stable sort by destination,
// and only the last entry of each run of equal destinations writes.
void ToDense(const SparseTensor& st, Tensor* dense, bool zero, const Tensor* fill) {
  const Tensor idx = st.indices().Contiguous();
  CheckBounds("ToDense", idx, st.shape());
  if (zero) {
    SetZero(dense);
  } else if (fill != nullptr) {
    Copy(fill->To(dense->device()), dense);  // the scalar broadcast over the target
  }
  Scatter(idx, st.values().Contiguous(), dense);
}

SparseTensor FromDense(const Tensor& dense) {
  Tensor indices, values;  // count, then compact
  Nonzeros(dense.Contiguous(), &indices, &values);
  return SparseTensor::Create(std::move(indices), std::move(values), dense.Dims(),
                              si::Iota(dense.NumAxes()));
}

SparseTensor Concat(const std::vector<SparseTensor>& inputs, int axis,
                    const std::vector<int64_t>& shape, int64_t total,
                    const std::vector<int>& order) {
  const Device device = inputs[0].device();
  Tensor indices = Tensor::Empty({total, inputs[0].rank()}, DType::kInt64, device);
  Tensor values = Tensor::Empty({total}, inputs[0].dtype(), device);
  int64_t row0 = 0, shift = 0;
  for (const SparseTensor& in : inputs) {
    if (in.nnz() > 0) {  // the rows by a kernel, the values by the engine
      CopyRowsShifted(in.indices().Contiguous(), axis, shift, row0, &indices);
      Tensor piece = tensorkit::Slice(values, 0, row0, row0 + in.nnz());
      Copy(in.values(), &piece);
    }
    row0 += in.nnz();
    shift += in.shape()[axis];
  }
  return SparseTensor::Create(std::move(indices), std::move(values), shape, order);
}

// --- sparse_ops.h --------------------------------------------------------------------------------

SparseTensor Slice(const SparseTensor& st, const std::vector<int64_t>& start,
                   const std::vector<int64_t>& size) {
  Tensor indices, values;
  SliceBox(st.indices().Contiguous(), st.values().Contiguous(), start, size,
           /*only_axis=*/-1, &indices, &values);
  return SparseTensor::Create(std::move(indices), std::move(values), size, st.order());
}

void ReshapeIndices(const SparseTensor& st, const std::vector<int64_t>& new_dims, Tensor* out,
                    const char* op) {
  const Tensor idx = st.indices().Contiguous();
  CheckBounds(op, idx, st.shape());
  si::ReshapeInEngine(idx, st.shape(), new_dims, out);
}

// Every axis bounds-checked, then one stable sort by piece groups the entries,
// O(nnz + pieces) like the CPU's counting pass.
std::vector<SparseTensor> Split(const SparseTensor& st, int axis,
                                const std::vector<int64_t>& sizes) {
  const Tensor idx = st.indices().Contiguous();
  CheckBounds("Split", idx, st.shape());  // every axis, as on the CPU
  std::vector<int64_t> starts{0};
  for (int64_t size : sizes) starts.push_back(starts.back() + size);
  std::vector<Tensor> indices, values;
  SplitEntries(idx, st.values().Contiguous(), axis, starts, &indices, &values);
  std::vector<SparseTensor> pieces;
  pieces.reserve(sizes.size());
  for (size_t r = 0; r < sizes.size(); ++r) {
    std::vector<int64_t> shape = st.shape();
    shape[axis] = sizes[r];
    pieces.push_back(
        SparseTensor::Create(std::move(indices[r]), std::move(values[r]), shape, st.order()));
  }
  return pieces;
}

Tensor PermuteIndices(const SparseTensor& st, const std::vector<int>& perm) {
  return PermuteColumns(st.indices().Contiguous(), perm);
}

// --- compressed.h --------------------------------------------------------------------------------

// A stable sort by (major, minor) gives the CPU's arrays (a stable counting sort by major key,
// then stable sorts within slices: the same unique result); the pointers are lower bounds in the
// sorted major keys.
si::Compressed CompressSparse(const SparseTensor& st, int major_axis, const char* op) {
  const Tensor idx = st.indices().Contiguous();
  CheckBounds(op, idx, st.shape());
  si::Compressed out;
  Tensor sorted;
  SortEntries(idx, st.values().Contiguous(), st.shape(), {major_axis, 1 - major_axis}, &sorted,
              &out.values);
  out.ptr = RunPointers(sorted, major_axis, st.shape()[major_axis]);
  out.minor = tensorkit::Select(sorted, 1, 1 - major_axis).Clone();
  return out;
}

// The minor-index checks run over the expanded rows: the first entry out of bounds and the first
// out of order, found on the device; only those rows are fetched, and the earlier one is named
// as on the CPU.
void ValidateCompressed(const Tensor& ptr, const Tensor& minor, int64_t num_major,
                        int64_t num_minor, int major_axis, const char* op, const char* major_name,
                        const char* minor_name) {
  const Tensor host_ptr = ptr.To(Device::Cpu());
  si::CheckCompressedPointers(host_ptr.data<int64_t>(), num_major, minor.Dim(0), op, major_name,
                              minor_name);
  const Tensor rows = ExpandPointers(ptr, minor, major_axis);
  const int mi = 1 - major_axis;
  std::vector<int64_t> out_row, pair;
  const int64_t p_out = FirstOutOfBoundsOn(rows, mi, num_minor, &out_row);
  const int64_t p_uns = FirstUnordered(rows, {major_axis, mi}, false, &pair);
  if (p_out >= 0 && (p_uns < 0 || p_out <= p_uns)) {
    si::ThrowMinorOutside(op, major_name, minor_name, out_row[mi], p_out, out_row[major_axis],
                          num_minor);
  }
  if (p_uns >= 0) {
    si::ThrowMinorUnsorted(op, major_name, minor_name, pair[mi], pair[2 + mi], p_uns,
                           pair[2 + major_axis]);
  }
}

}  // namespace tensorkit::sparse_cuda
