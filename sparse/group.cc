// SparseTensor::group: runs of entries that agree on the grouping dims, as zero-copy views.
#include <algorithm>
#include <sstream>

#include "tensorkit/sparse/internal.h"
#include "tensorkit/sparse/sparse_tensor.h"

namespace tensorkit {
namespace si = sparse_internal;

// What an iteration needs: contiguous indices and values, the dims, and where each group starts.
struct SparseTensor::Group::State {
  Tensor indices;  // [nnz, rank], default strides
  Tensor values;   // [nnz], default strides
  const int64_t* rows = nullptr;
  const char* value_bytes = nullptr;  // values.raw_data()
  int64_t value_size = 0;             // bytes per value
  int rank = 0;
  std::vector<int> dims;
  std::vector<int64_t> starts;  // group g is entries [starts[g], starts[g + 1])
  std::vector<int64_t> coords;  // group g's coordinates on dims: [g * dims.size(), + dims.size())
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

// Where each run of rows equal on `dims` starts, and its coordinates on `dims`: one sequential
// pass over the rows, each fixed chunk collecting its own heads, then the lists are joined.
void FindGroups(const int64_t* rows, int64_t n, int r, const std::vector<int>& dims,
                std::vector<int64_t>* starts, std::vector<int64_t>* coords) {
  const int64_t num_chunks = NumChunks(n, si::kChunk);
  const size_t k = dims.size();
  std::vector<std::vector<int64_t>> part_starts(static_cast<size_t>(num_chunks));
  std::vector<std::vector<int64_t>> part_coords(static_cast<size_t>(num_chunks));
  ParallelChunks(n, si::kChunk, [&](int64_t c, int64_t b, int64_t e) {
    std::vector<int64_t>& ps = part_starts[c];
    std::vector<int64_t>& pc = part_coords[c];
    ps.reserve(static_cast<size_t>(e - b) / 4);
    if (k == 1) {  // the common case, without the inner loop
      const int d = dims[0];
      int64_t prev = b > 0 ? rows[(b - 1) * r + d] : 0;
      for (int64_t i = b; i < e; ++i) {
        const int64_t v = rows[i * r + d];
        if (i == 0 || v != prev) {
          ps.push_back(i);
          pc.push_back(v);
        }
        prev = v;
      }
      return;
    }
    for (int64_t i = b; i < e; ++i) {
      const int64_t* row = rows + i * r;
      bool same = i > 0;
      for (size_t j = 0; j < k && same; ++j) same = row[dims[j]] == rows[(i - 1) * r + dims[j]];
      if (same) continue;
      ps.push_back(i);
      for (size_t j = 0; j < k; ++j) pc.push_back(row[dims[j]]);
    }
  });
  std::vector<int64_t> offset(static_cast<size_t>(num_chunks) + 1, 0);
  for (int64_t c = 0; c < num_chunks; ++c) {
    offset[c + 1] = offset[c] + static_cast<int64_t>(part_starts[c].size());
  }
  starts->resize(static_cast<size_t>(offset[num_chunks]));
  coords->resize(static_cast<size_t>(offset[num_chunks]) * k);
  ParallelFor(0, num_chunks, 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      std::copy(part_starts[c].begin(), part_starts[c].end(), starts->begin() + offset[c]);
      std::copy(part_coords[c].begin(), part_coords[c].end(),
                coords->begin() + offset[c] * static_cast<int64_t>(k));
    }
  });
}

}  // namespace

SparseTensor::GroupIterable SparseTensor::group(const std::vector<int>& dims) const {
  CheckCreated("group");
  CheckGroupDims(dims, order_, rank(), OrderKnown());
  auto state = std::make_shared<Group::State>();
  state->indices = si::HostContiguous(indices_);
  state->values = si::HostContiguous(values_);
  state->rows = static_cast<const int64_t*>(state->indices.raw_data());
  state->value_bytes = static_cast<const char*>(state->values.raw_data());
  state->value_size = DTypeSize(state->values.dtype());
  state->rank = rank();
  state->dims = dims;
  const int64_t n = nnz();
  const int r = rank();
  const int64_t* rows = state->rows;
  FindGroups(rows, n, r, dims, &state->starts, &state->coords);
  state->starts.push_back(n);
  GroupIterable it;
  it.state_ = std::move(state);
  return it;
}

SparseTensor::GroupIterable::Iterator SparseTensor::GroupIterable::begin() const {
  const Group::State& s = *state_;
  Iterator it;
  it.starts_ = s.starts.data();
  it.coords_ = s.coords.data();
  it.rows_base_ = s.rows;
  it.values_base_ = s.value_bytes;
  it.value_size_ = s.value_size;
  it.num_dims_ = static_cast<int64_t>(s.dims.size());
  it.num_groups_ = size();
  it.index_ = 0;
  it.group_.state_ = state_.get();
  it.group_.rank_ = s.rank;
  it.group_.dtype_ = s.values.dtype();
  it.Load();
  return it;
}

SparseTensor::GroupIterable::Iterator SparseTensor::GroupIterable::end() const {
  Iterator it;
  it.index_ = size();
  return it;
}

int64_t SparseTensor::GroupIterable::size() const {
  return static_cast<int64_t>(state_->starts.size()) - 1;
}

Tensor SparseTensor::Group::indices() const {
  const Pattern& base = state_->indices.pattern();
  const int64_t r = state_->rank;
  return state_->indices.WithPattern(
      MakePattern({size(), r}, {r, 1}, base.offset + begin_ * r, "Group::indices"));
}

Tensor SparseTensor::Group::values() const {
  const Pattern& base = state_->values.pattern();
  return state_->values.WithPattern(
      MakePattern({size()}, {1}, base.offset + begin_, "Group::values"));
}

}  // namespace tensorkit
