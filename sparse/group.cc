// SparseTensor::group: runs of entries that agree on the grouping dims, as zero-copy views.
#include <algorithm>
#include <sstream>

#include "tensorkit/sparse/device_ops.h"
#include "tensorkit/sparse/internal.h"
#include "tensorkit/sparse/sparse_tensor.h"

namespace tensorkit {
namespace si = sparse_internal;

// What an iteration needs: contiguous indices and values and the dims (iterators find each
// group's end by scanning the rows, so group() itself makes no table of boundaries).
struct SparseTensor::Group::State {
  Tensor indices;  // [nnz, rank], default strides
  Tensor values;   // [nnz], default strides
  const int64_t* rows = nullptr;
  const char* value_bytes = nullptr;  // values.raw_data()
  int64_t value_size = 0;             // bytes per value
  int rank = 0;
  std::vector<int> dims;
  int64_t nnz = 0;
  // On a CUDA device only: group starts (then nnz) and coordinates, found there and fetched.
  std::vector<int64_t> starts, coords;
  bool on_device = false;
};

namespace {

// "{1, 2}" as the caller wrote the dims.
std::string BraceList(const std::vector<int>& v) {
  std::ostringstream os;
  os << '{';
  for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
  os << '}';
  return os.str();
}

// The order to suggest: `dims` followed by the other axes in ascending order.
std::vector<int> SuggestedOrder(const std::vector<int>& dims, int rank) {
  std::vector<int> order = dims;
  for (int a = 0; a < rank; ++a) {
    if (std::find(dims.begin(), dims.end(), a) == dims.end()) order.push_back(a);
  }
  return order;
}

void CheckGroupDims(const std::vector<int>& dims, const std::vector<int>& order, int rank,
                    bool order_known) {
  const std::string call = "group(" + BraceList(dims) + ")";
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int d : dims) {
    TK_CHECK(d >= 0 && d < rank, kInvalidArgument, call, ": dim ", d, " is not an axis of a rank-",
             rank, " tensor (axes 0..", rank - 1, ")");
    TK_CHECK(!seen[d], kInvalidArgument, call, ": dim ", d, " is repeated");
    seen[d] = true;
  }
  const std::string fix = "; call Reorder(" + BraceList(SuggestedOrder(dims, rank)) + ") first";
  TK_CHECK(order_known || dims.empty(), kInvalidArgument, call, " needs order starting with ",
           BraceList(dims), " but the order is unknown", fix);
  for (size_t k = 0; k < dims.size(); ++k) {
    TK_CHECK(seen[order[k]], kInvalidArgument, call, " needs order starting with ", BraceList(dims),
             " (in any sequence among themselves) but the order is ", ShapeString(order), fix);
  }
}

// Number of runs of rows equal on `dims`: each fixed chunk counts the entries that differ from
// their predecessor (an integer sum: the same at any thread count).
int64_t CountGroups(const int64_t* rows, int64_t n, int r, const std::vector<int>& dims) {
  if (n == 0) return 0;
  const int64_t num_chunks = NumChunks(n, kChunk);
  std::vector<int64_t> counts(static_cast<size_t>(num_chunks), 0);
  ParallelChunks(n, kChunk, [&](int64_t c, int64_t b, int64_t e) {
    int64_t heads = 0;
    for (int64_t i = std::max<int64_t>(b, 1); i < e; ++i) {
      bool same = true;
      for (int d : dims) same &= rows[i * r + d] == rows[(i - 1) * r + d];
      heads += !same;
    }
    counts[c] = heads;
  });
  int64_t total = 1;  // entry 0 starts a group
  for (int64_t c : counts) total += c;
  return total;
}

}  // namespace

SparseTensor::GroupIterable SparseTensor::group(const std::vector<int>& dims) const {
  si::CheckCreated(*this, "group");
  CheckGroupDims(dims, order_, rank(), OrderKnown());
  auto state = std::make_shared<Group::State>();
  if (OnCuda(*this)) {  // views into device memory; boundaries found on the device
    state->on_device = true;
    sparse_cuda::Group(*this, dims, &state->indices, &state->values, &state->starts,
                       &state->coords);
  } else {
    state->indices = indices_.HostContiguous();
    state->values = values_.HostContiguous();
  }
  state->rows = static_cast<const int64_t*>(state->indices.raw_data());
  state->value_bytes = static_cast<const char*>(state->values.raw_data());
  state->value_size = DTypeSize(state->values.dtype());
  state->rank = rank();
  state->dims = dims;
  state->nnz = nnz();
  GroupIterable it;
  it.state_ = std::move(state);
  return it;
}

SparseTensor::GroupIterable::Iterator SparseTensor::GroupIterable::begin() const {
  const Group::State& s = *state_;
  Iterator it;
  it.rows_base_ = s.rows;
  it.values_base_ = s.value_bytes;
  it.dims_ = s.dims.data();
  it.value_size_ = s.value_size;
  it.nnz_ = s.nnz;
  it.num_dims_ = static_cast<int>(s.dims.size());
  it.group_.state_ = state_.get();
  it.group_.rank_ = s.rank;
  it.group_.dtype_ = s.values.dtype();
  it.group_.coords_.assign(s.dims.size(), 0);
  it.group_.on_device_ = s.on_device;
  if (s.on_device) {
    it.starts_ = s.starts.data();
    it.coords_ = s.coords.data();
  }
  it.group_.begin_ = 0;
  it.Load();
  return it;
}

SparseTensor::GroupIterable::Iterator SparseTensor::GroupIterable::end() const {
  Iterator it;
  it.group_.begin_ = state_->nnz;
  return it;
}

int64_t SparseTensor::GroupIterable::size() const {
  const Group::State& s = *state_;
  if (s.on_device) return static_cast<int64_t>(s.starts.size()) - 1;
  return CountGroups(s.rows, s.nnz, s.rank, s.dims);
}

namespace {

// The pattern of `rows` rows of `cols` numbers from element `offset` of a contiguous buffer:
// valid by construction (C-order strides, stride 0 on dim-1 axes as Pattern requires).
Pattern RowRange(int64_t rows, int64_t cols, int64_t offset, int num_axes) {
  Pattern p;
  p.num_axes = num_axes;
  p.offset = offset;
  p.dims[0] = num_axes == 2 ? cols : rows;
  p.strides[0] = p.dims[0] == 1 ? 0 : 1;
  if (num_axes == 2) {
    p.dims[1] = rows;
    p.strides[1] = rows == 1 ? 0 : cols;
  }
  return p;
}

}  // namespace

// A group is a row range of the contiguous indices and values that State holds, so its views
// skip the constructor's pattern checks (this runs once per group, often for tiny groups).
Tensor SparseTensor::Group::indices() const {
  const Tensor& base = state_->indices;
  return Tensor::ViewUnchecked(base.storage(),
                               RowRange(size(), rank_, base.pattern().offset + begin_ * rank_, 2),
                               DType::kInt64);
}

Tensor SparseTensor::Group::values() const {
  const Tensor& base = state_->values;
  return Tensor::ViewUnchecked(
      base.storage(), RowRange(size(), 1, base.pattern().offset + begin_, 1), base.dtype());
}

}  // namespace tensorkit
