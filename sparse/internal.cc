#include "tensorkit/sparse/internal.h"

#include <algorithm>
#include <cstring>
#include <sstream>

namespace tensorkit::sparse_internal {

Tensor HostContiguous(const Tensor& t) {
  if (t.device().is_cpu() && t.IsContiguous()) return t;
  return t.To(Device::Cpu());
}

Tensor OnDevice(const Tensor& host, Device device) {
  return device.is_cpu() ? host : host.To(device);
}

std::string RowString(const int64_t* row, int rank) {
  std::ostringstream os;
  os << '[';
  for (int k = 0; k < rank; ++k) os << (k ? " " : "") << row[k];
  os << ']';
  return os.str();
}

bool IsPermutation(const std::vector<int>& p, int n) {
  if (static_cast<int>(p.size()) != n) return false;
  std::vector<bool> seen(static_cast<size_t>(n), false);
  for (int a : p) {
    if (a < 0 || a >= n || seen[a]) return false;
    seen[a] = true;
  }
  return true;
}

int64_t FirstOutOfBounds(const int64_t* idx, int64_t nnz, const std::vector<int64_t>& shape) {
  const int rank = static_cast<int>(shape.size());
  const int64_t num_chunks = NumChunks(nnz, kChunk);
  std::vector<uint8_t> bad(static_cast<size_t>(num_chunks), 0);
  // Fast pass: an unsigned compare catches negative and too large values alike, without branches.
  ParallelChunks(nnz, kChunk, [&](int64_t c, int64_t b, int64_t e) {
    bool any = false;
    for (int64_t i = b; i < e; ++i) {
      const int64_t* row = idx + i * rank;
      for (int k = 0; k < rank; ++k) {
        any |= static_cast<uint64_t>(row[k]) >= static_cast<uint64_t>(shape[k]);
      }
    }
    bad[c] = any;
  });
  for (int64_t c = 0; c < num_chunks; ++c) {
    if (!bad[c]) continue;
    for (int64_t i = c * kChunk; i < std::min(nnz, (c + 1) * kChunk); ++i) {
      for (int k = 0; k < rank; ++k) {
        if (idx[i * rank + k] < 0 || idx[i * rank + k] >= shape[k]) return i;
      }
    }
  }
  return -1;
}

void ThrowOutOfBounds(const char* op, const int64_t* idx, int64_t entry,
                      const std::vector<int64_t>& shape) {
  const int rank = static_cast<int>(shape.size());
  const int64_t* row = idx + entry * rank;
  int axis = 0;
  while (axis < rank && row[axis] >= 0 && row[axis] < shape[axis]) ++axis;
  std::ostringstream why;
  if (axis < rank && row[axis] < 0) {
    why << "axis " << axis << ": " << row[axis] << " < 0";
  } else if (axis < rank) {
    why << "axis " << axis << ": " << row[axis] << " >= " << shape[axis];
  }
  Throw(ErrorCode::kOutOfRange, op, ": entry ", entry, " at ", RowString(row, rank),
        " is out of bounds for shape ", ShapeString(shape), " (", why.str(), ")");
}

void CheckBounds(const char* op, const int64_t* idx, int64_t nnz,
                 const std::vector<int64_t>& shape) {
  const int64_t bad = FirstOutOfBounds(idx, nnz, shape);
  if (bad >= 0) ThrowOutOfBounds(op, idx, bad, shape);
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

Tensor GatherRows(const int64_t* idx, int rank, const std::vector<int64_t>& perm) {
  const int64_t n = static_cast<int64_t>(perm.size());
  Tensor out = Tensor::Empty({n, rank}, DType::kInt64);
  if (n == 0 || rank == 0) return out;
  int64_t* dst = out.data<int64_t>();
  switch (rank) {
    case 1:
      GatherRowsImpl<1>(idx, rank, perm.data(), n, dst);
      break;
    case 2:
      GatherRowsImpl<2>(idx, rank, perm.data(), n, dst);
      break;
    case 3:
      GatherRowsImpl<3>(idx, rank, perm.data(), n, dst);
      break;
    case 4:
      GatherRowsImpl<4>(idx, rank, perm.data(), n, dst);
      break;
    default:
      GatherRowsImpl<0>(idx, rank, perm.data(), n, dst);
  }
  return out;
}

Tensor GatherValues(const Tensor& values, const std::vector<int64_t>& perm, bool may_move) {
  const int64_t n = static_cast<int64_t>(perm.size());
  Tensor out = Tensor::Empty({n}, values.dtype());
  if (n == 0) return out;
  Dispatch(values.dtype(), "GatherValues", [&]<typename T>() {
    T* src = values.data<T>();
    T* dst = out.data<T>();
    ParallelFor(0, n, GrainFor(sizeof(T) + 8), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        if (i + kPrefetch < e) __builtin_prefetch(src + perm[i + kPrefetch]);
        if constexpr (std::is_same_v<T, std::string>) {
          if (may_move) {
            dst[i] = std::move(src[perm[i]]);
            continue;
          }
        }
        dst[i] = src[perm[i]];
      }
    });
  });
  return out;
}

}  // namespace tensorkit::sparse_internal
