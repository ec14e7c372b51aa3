// Validation on the device (structure.h): the first entry out of bounds, out of order or
// repeated, each a per-thread minimum with one atomicMin per thread (MinOver), so the answer
// does not depend on timing. Each check fetches its verdict (one wait); only on failure is more
// fetched, the entry an error message names. Shapes, orders and key layouts are ArgArrays.
#include "tensorkit/sparse/cuda/structure_common.cuh"

namespace tensorkit::sparse_cuda {
namespace {

struct OutOfBoundsAt {
  const int64_t* idx;
  ArgArray<int64_t> shape;
  int rank;
  __host__ __device__ int64_t operator()(int64_t i) const {
    return sk::OutOfBounds(idx + i * rank, shape.data(), rank) ? i : -1;
  }
};

struct AxisOutOfBoundsAt {
  const int64_t* idx;
  int rank, axis;
  int64_t dim;
  __host__ __device__ int64_t operator()(int64_t i) const {
    return static_cast<uint64_t>(idx[i * rank + axis]) >= static_cast<uint64_t>(dim) ? i : -1;
  }
};

struct UnorderedAt {
  const int64_t* idx;
  ArgArray<int> order;
  int rank, limit;  // limit: the largest bad value of CompareRows(row i, row i - 1)
  __host__ __device__ int64_t operator()(int64_t i) const {
    if (i == 0) return -1;
    const int cmp = sk::CompareRowsIn(idx + i * rank, idx + (i - 1) * rank, order.data(), rank);
    return cmp <= limit ? i : -1;
  }
};

// Entries j > 0 of the sorted sequence equal to entry j - 1 repeat it: the smallest original
// position among them is the first repeating entry.
template <typename P>
struct RepeatAt {
  const uint64_t* keys;
  const P* perm;
  __host__ __device__ int64_t operator()(int64_t j) const {
    return j > 0 && keys[j] == keys[j - 1] ? static_cast<int64_t>(perm[j]) : -1;
  }
};

template <typename P>
struct RowRepeatAt {
  const int64_t* rows;  // sorted
  const P* perm;
  int rank;
  __host__ __device__ int64_t operator()(int64_t j) const {
    return j > 0 && sk::SameRow(rows + j * rank, rows + (j - 1) * rank, rank)
               ? static_cast<int64_t>(perm[j])
               : -1;
  }
};

struct SameAsAt {
  const int64_t* idx;
  ArgArray<int64_t> row;
  int rank;
  __host__ __device__ int64_t operator()(int64_t i) const {
    return sk::SameRow(idx + i * rank, row.data(), rank) ? i : -1;
  }
};

template <typename P>
int64_t FirstRepeatAs(const Tensor& idx, const std::vector<int64_t>& shape, int64_t* head,
                      std::vector<int64_t>* row, const On& on) {
  const int64_t n = idx.Dim(0);
  const int rank = static_cast<int>(shape.size());
  std::vector<int> order(static_cast<size_t>(rank));
  for (int a = 0; a < rank; ++a) order[a] = a;
  const sk::KeyWords kw = sk::MakeKeyWords(shape, order);
  const KeyLayout layout(kw, on);
  PermSort<P> s(n, on.device);
  SortRows(Rows(idx), n, rank, kw, layout, &s, on);
  // Equal rows are neighbours now; with several words only the last one is sorted in s.keys,
  // so compare the rows themselves then.
  int64_t bad;
  if (kw.num_words() <= 1) {
    bad = MinOver(n, RepeatAt<P>{s.keys.Current(), s.perm.Current()}, on);
  } else {
    Tensor sorted = Tensor::Empty({n, rank}, DType::kInt64, idx.device());
    GatherRowsKernel<P><<<Grid(n * rank), kThreads, 0, on.stream>>>(
        Rows(idx), s.perm.Current(), n, rank, static_cast<int64_t*>(sorted.raw_data()));
    CheckLaunch(on);
    bad = MinOver(n, RowRepeatAt<P>{Rows(sorted), s.perm.Current(), rank}, on);
  }
  if (bad < 0) return -1;
  *row = FetchRow(idx, bad, on);  // an error from here on: the message names the row and its head
  const KernelArray<int64_t> row_a(*row, on);
  *head = MinOver(n, SameAsAt{Rows(idx), row_a.arg(), rank}, on);
  return bad;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// structure.h
// ---------------------------------------------------------------------------------------------

int64_t FirstOutOfBounds(const Tensor& idx, const std::vector<int64_t>& shape,
                         std::vector<int64_t>* row) {
  const On on(idx, "ValidateIndices");
  const int rank = static_cast<int>(shape.size());
  if (rank == 0) return -1;
  const KernelArray<int64_t> shape_a(shape, on);
  const int64_t bad = MinOver(idx.Dim(0), OutOfBoundsAt{Rows(idx), shape_a.arg(), rank}, on);
  if (bad >= 0) *row = FetchRow(idx, bad, on);
  return bad;
}

int64_t FirstOutOfBoundsOn(const Tensor& idx, int axis, int64_t dim, std::vector<int64_t>* row) {
  const On on(idx, "Split");
  const int rank = static_cast<int>(idx.Dim(1));
  const int64_t bad = MinOver(idx.Dim(0), AxisOutOfBoundsAt{Rows(idx), rank, axis, dim}, on);
  if (bad >= 0) *row = FetchRow(idx, bad, on);
  return bad;
}

int64_t FirstUnordered(const Tensor& idx, const std::vector<int>& order, bool strict,
                       std::vector<int64_t>* rows) {
  const On on(idx, "ValidateIndices");
  const int rank = static_cast<int>(order.size());
  const KernelArray<int> order_a(order, on);
  const int64_t bad =
      MinOver(idx.Dim(0), UnorderedAt{Rows(idx), order_a.arg(), rank, strict ? 0 : -1}, on);
  if (bad >= 0) {
    *rows = FetchRow(idx, bad - 1, on);
    const std::vector<int64_t> here = FetchRow(idx, bad, on);
    rows->insert(rows->end(), here.begin(), here.end());
  }
  return bad;
}

int64_t FirstRepeat(const Tensor& idx, const std::vector<int64_t>& shape, int64_t* head,
                    std::vector<int64_t>* row) {
  const On on(idx, "ValidateIndices");
  const int64_t n = idx.Dim(0);
  if (n <= 1) return -1;
  return FitsUint32(n) ? FirstRepeatAs<uint32_t>(idx, shape, head, row, on)
                       : FirstRepeatAs<uint64_t>(idx, shape, head, row, on);
}

}  // namespace tensorkit::sparse_cuda
