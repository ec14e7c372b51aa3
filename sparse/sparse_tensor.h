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
#include <iterator>
#include <memory>
#include <span>
#include <string>
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
  // A copy with indices and values on `device` (Tensor::To of each); shape and order kept.
  SparseTensor To(Device device) const;

  // Bounds; with a known order, strictly increasing in it; else no repeated index.
  bool IndicesValid() const;
  // Same checks; throws Error naming the first bad entry's position and coordinates.
  void ValidateIndices() const;
  // True when the entries already are in `order` (a permutation of all axes): non-decreasing,
  // repeats allowed, whatever order() says. Changes nothing; bounds are not checked.
  bool SortedIn(const std::vector<int>& order) const;

  // Stable sort by `order` (a permutation of 0..rank-1), in place; sets order(). Always sorts.
  // Indices and values are replaced by new tensors (other handles to the old ones keep the old
  // entries). Throws Error naming the first entry outside shape().
  void Reorder(const std::vector<int>& order);
  // Sorts in order {0..rank-1}, sets that order and merges repeated indices: numbers are summed
  // (in entry order), bools OR-ed, strings keep the last entry. Bounds-checked like Reorder.
  void Coalesce();

  class Group;
  class GroupIterable;
  // Iterates groups of entries sharing coordinates on `dims`; order() must start with `dims`.
  GroupIterable group(const std::vector<int>& dims) const;

  // Scatters into `dense` (dims == shape, same dtype, any strides); first fills it with zero
  // ("" for strings) when `initialize`. Of repeated indices the last entry wins. Throws Error
  // naming the first entry outside shape() (before writing anything); on any Error, a failed
  // allocation included, `dense` is unchanged.
  void ToDense(Tensor* dense, bool initialize = true) const;
  // The same, every element that no entry writes set to `fill` (a scalar of the values' dtype,
  // e.g. TensorFlow's default_value). With sorted entries and a contiguous target the fill and
  // the scatter are one pass over `dense`.
  void ToDense(Tensor* dense, const Tensor& fill) const;
  // ToDense(dense, fill) for a target whose contents before the call do not matter (a new
  // output), after ValidateIndices()' checks when `validate`. With entries in C order and a
  // contiguous target this is one pass over the entries and `dense`, checking as it writes, so
  // on an Error (the same ValidateIndices and ToDense throw) `dense` may be partly written.
  void FillDense(Tensor* dense, const Tensor& fill, bool validate = true) const;
  // A new dense tensor on the tensor's device (shape() must have at most kMaxAxes axes).
  Tensor ToDense() const;
  // The nonzero elements of `dense` in C order (order {0..rank-1}), on dense's device. Zero:
  // == 0 for numbers (so +0 and -0; NaN is kept), false for bool, "" for strings.
  static SparseTensor FromDense(const Tensor& dense);

  // Along the inputs' common order[0] (the primary axis), TensorFlow's rules: every input has a
  // known order with the same order[0], equal rank, dtype, device and dims except the primary
  // one. The output order is the inputs' order when they all agree, else unknown.
  static SparseTensor Concat(const std::vector<SparseTensor>& inputs);
  // Along `axis` (negative counts from the end); needs no order. The output order is the inputs'
  // common order when they all share one that starts with `axis`, else unknown.
  static SparseTensor Concat(const std::vector<SparseTensor>& inputs, int axis);

 private:
  // IndicesValid's checks; on failure throws Error naming `op` and the first bad entry when
  // `raise`, else returns false.
  bool CheckIndices(const char* op, bool raise) const;

  Tensor indices_;
  Tensor values_;
  std::vector<int64_t> shape_;
  std::vector<int> order_;
};

// One group of SparseTensor::group(dims): entries [begin, end) of the (sorted) tensor.
class SparseTensor::Group {
 public:
  // The coordinates of this group on the grouping dims, in the order the dims were given.
  const std::vector<int64_t>& group() const { return coords_; }
  // Zero-copy views: [size, rank] index rows and [size] values of the group's entries.
  Tensor indices() const;
  Tensor values() const;
  // Entry positions [begin, end) in the tensor that group() iterated.
  int64_t begin() const { return begin_; }
  int64_t end() const { return end_; }
  int64_t size() const { return end_ - begin_; }
  // The same entries without building Tensors (for tight loops over many small groups):
  // size() * rank index numbers, row-major, and size() values (T must be the values' CType).
  // Host memory only: for a tensor on a CUDA device use indices() and values().
  std::span<const int64_t> index_span() const;
  template <typename T>
  std::span<const T> value_span() const;

 private:
  friend class SparseTensor;
  friend class GroupIterable;
  struct State;
  const State* state_ = nullptr;
  int64_t begin_ = 0;
  int64_t end_ = 0;
  std::vector<int64_t> coords_;
  const int64_t* rows_ = nullptr;  // first index row of the group
  const void* values_ = nullptr;   // first value of the group
  DType dtype_ = DType::kFloat32;
  int rank_ = 0;
  bool on_device_ = false;  // rows_ and values_ point into CUDA device memory
};

// The range that SparseTensor::group returns; keeps the data it iterates alive.
class SparseTensor::GroupIterable {
 public:
  class Iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = Group;
    using difference_type = std::ptrdiff_t;
    using pointer = const Group*;
    using reference = const Group&;

    const Group& operator*() const { return group_; }
    const Group* operator->() const { return &group_; }
    Iterator& operator++() {
      group_.begin_ = group_.end_;
      ++index_;
      Load();
      return *this;
    }
    bool operator==(const Iterator& o) const { return group_.begin_ == o.group_.begin_; }
    bool operator!=(const Iterator& o) const { return group_.begin_ != o.group_.begin_; }

   private:
    friend class GroupIterable;
    // Finds the end of the group that starts at group_.begin_ by scanning the rows (inline:
    // stepping through many small groups is hot, and the scan needs no table of boundaries).
    void Load();
    // Copied from the iterable's state, so that a step needs no call into the library.
    const int64_t* rows_base_ = nullptr;
    const char* values_base_ = nullptr;
    const int* dims_ = nullptr;
    int64_t value_size_ = 0;
    int64_t nnz_ = 0;
    int num_dims_ = 0;
    // On a CUDA device the boundaries come from a table found there: group g is entries
    // [starts_[g], starts_[g + 1]) with coordinates coords_[g * num_dims_ ..].
    const int64_t* starts_ = nullptr;
    const int64_t* coords_ = nullptr;
    int64_t index_ = 0;
    Group group_;
  };

  Iterator begin() const;
  Iterator end() const;
  // Number of groups (counted by one parallel pass over the entries on each call; iterating
  // needs no count).
  int64_t size() const;

 private:
  friend class SparseTensor;
  std::shared_ptr<const Group::State> state_;
};

// ---------------------------------------------------------------------------------------------
// Definitions
// ---------------------------------------------------------------------------------------------

inline std::span<const int64_t> SparseTensor::Group::index_span() const {
  TK_CHECK(!on_device_, kUnsupported,
           "Group::index_span: the entries are on a CUDA device; use indices() (a device view) "
           "or group a copy made with To(Device::Cpu())");
  return {rows_, static_cast<size_t>(size() * rank_)};
}

inline void SparseTensor::GroupIterable::Iterator::Load() {
  const int64_t b = group_.begin_;
  if (b >= nnz_) return;
  const int r = group_.rank_;
  const int64_t* first = rows_base_ + b * r;
  int64_t e = b + 1;
  if (starts_ != nullptr) {
    e = starts_[index_ + 1];
    for (int j = 0; j < num_dims_; ++j) group_.coords_[j] = coords_[index_ * num_dims_ + j];
  } else if (num_dims_ == 1) {  // the common case: one strided column
    const int d = dims_[0];
    const int64_t v = first[d];
    while (e < nnz_ && rows_base_[e * r + d] == v) ++e;
    group_.coords_[0] = v;
  } else {
    for (; e < nnz_; ++e) {
      bool same = true;
      for (int j = 0; j < num_dims_; ++j) same &= rows_base_[e * r + dims_[j]] == first[dims_[j]];
      if (!same) break;
    }
    for (int j = 0; j < num_dims_; ++j) group_.coords_[j] = first[dims_[j]];
  }
  group_.end_ = e;
  group_.rows_ = first;
  group_.values_ = values_base_ + b * value_size_;
}

template <typename T>
std::span<const T> SparseTensor::Group::value_span() const {
  TK_CHECK(DTypeOf<T> == dtype_, kDTypeMismatch, "Group::value_span: requested ",
           DTypeName(DTypeOf<T>), " from ", DTypeName(dtype_), " values");
  TK_CHECK(!on_device_, kUnsupported,
           "Group::value_span: the entries are on a CUDA device; use values() (a device view) "
           "or group a copy made with To(Device::Cpu())");
  return {static_cast<const T*>(values_), static_cast<size_t>(size())};
}

}  // namespace tensorkit

#endif  // TENSORKIT_SPARSE_SPARSE_TENSOR_H_
