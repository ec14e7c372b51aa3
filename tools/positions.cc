// Distinct positions of a sparse tensor's entries, for `info` (density) and `validate` (repeated
// coordinates). Nothing here multiplies the dims: a shape may have more cells than int64 counts.
#include <algorithm>
#include <numeric>

#include "tensorkit/tools/tool.h"

namespace tensorkit::tools {
namespace {

// Positions of host rows `p` (n entries of rank r) that differ from their predecessor's: the
// distinct positions of entries sorted in any order.
int64_t CountRuns(const int64_t* p, int64_t n, int64_t r) {
  int64_t distinct = n > 0 ? 1 : 0;
  for (int64_t k = 1; k < n; ++k)
    distinct += !std::equal(p + k * r, p + (k + 1) * r, p + (k - 1) * r);
  return distinct;
}

}  // namespace

int64_t DistinctIfSorted(const SparseTensor& st) {
  std::vector<int> order = st.order();
  if (!st.OrderKnown()) {
    order.resize(static_cast<size_t>(st.rank()));
    std::iota(order.begin(), order.end(), 0);
    if (!st.SortedIn(order)) return -1;
  }
  const Tensor idx = st.indices().HostContiguous();
  return CountRuns(idx.data<int64_t>(), st.nnz(), st.rank());
}

int64_t DistinctPositions(const SparseTensor& st) {
  const int64_t sorted = DistinctIfSorted(st);
  if (sorted >= 0) return sorted;
  // A sorted copy of the indices only: one byte a value rides along instead of the values.
  SparseTensor keys =
      SparseTensor::Create(st.indices(), Tensor::Zeros({st.nnz()}, DType::kUInt8), st.shape());
  std::vector<int> order(static_cast<size_t>(st.rank()));
  std::iota(order.begin(), order.end(), 0);
  keys.Reorder(order);  // bounds-checked: names the first entry outside the shape
  const Tensor idx = keys.indices().HostContiguous();
  return CountRuns(idx.data<int64_t>(), keys.nnz(), keys.rank());
}

}  // namespace tensorkit::tools
