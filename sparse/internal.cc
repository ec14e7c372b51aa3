// The sparse primitives of internal.h that are not templates (the index-row checks live in
// index_rows.cc, sorting in sort.cc, compression in compressed.cc).
#include "tensorkit/sparse/internal.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <numeric>
#include <sstream>

namespace tensorkit::sparse_internal {

bool IsPermutation(const std::vector<int>& p, int n) {
  if (static_cast<int>(p.size()) != n) return false;
  std::vector<bool> seen(static_cast<size_t>(n), false);
  for (int a : p) {
    if (a < 0 || a >= n || seen[a]) return false;
    seen[a] = true;
  }
  return true;
}

namespace {

// Entries this far ahead are prefetched: random reads overlap instead of waiting one by one.
constexpr int64_t kPrefetch = 16;

// GatherRows for a rank known at compile time (kRank > 0) or at run time (kRank == 0).
template <int kRank>
void GatherRowsImpl(const int64_t* idx, int rank, const int64_t* perm, int64_t n, int64_t* dst) {
  const int r = kRank > 0 ? kRank : rank;
  ParallelFor(0, n, GrainFor(8 * (r + 1)), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      if (i + kPrefetch < e) __builtin_prefetch(idx + perm[i + kPrefetch] * r);
      const int64_t* src = idx + perm[i] * r;
      for (int k = 0; k < r; ++k) dst[i * r + k] = src[k];
    }
  });
}

}  // namespace

Tensor GatherRows(const int64_t* idx, int rank, const int64_t* perm, int64_t n) {
  Tensor out = Tensor::Empty({n, rank}, DType::kInt64);
  if (n == 0 || rank == 0) return out;
  int64_t* dst = out.data<int64_t>();
  switch (rank) {
    case 1:
      GatherRowsImpl<1>(idx, rank, perm, n, dst);
      break;
    case 2:
      GatherRowsImpl<2>(idx, rank, perm, n, dst);
      break;
    case 3:
      GatherRowsImpl<3>(idx, rank, perm, n, dst);
      break;
    case 4:
      GatherRowsImpl<4>(idx, rank, perm, n, dst);
      break;
    default:
      GatherRowsImpl<0>(idx, rank, perm, n, dst);
  }
  return out;
}

Tensor GatherValues(const Tensor& values, const int64_t* perm, int64_t n, bool may_move) {
  Tensor out = Tensor::Empty({n}, values.dtype());
  if (n == 0) return out;
  const int64_t stride = values.Stride(0);
  Dispatch(values.dtype(), "GatherValues", [&]<typename T>() {
    T* src = values.data<T>();
    T* dst = out.data<T>();
    ParallelFor(0, n, GrainFor(sizeof(T) + 8), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        if (i + kPrefetch < e) __builtin_prefetch(src + perm[i + kPrefetch] * stride);
        if constexpr (std::is_same_v<T, std::string>) {
          if (may_move) {
            dst[i] = std::move(src[perm[i] * stride]);
            continue;
          }
        }
        dst[i] = src[perm[i] * stride];
      }
    });
  });
  return out;
}

}  // namespace tensorkit::sparse_internal
