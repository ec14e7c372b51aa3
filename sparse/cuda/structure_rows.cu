// Index rows on the device (structure.h): compressed pointers from sorted rows and back, column
// permutations, shifted copies (Concat) and the heads of runs (group).
#include <algorithm>

#include "tensorkit/sparse/cuda/structure_common.cuh"

namespace tensorkit::sparse_cuda {
namespace {

__global__ void ExpandKernel(const int64_t* ptr, const int64_t* minor, int64_t num, int64_t nnz,
                             int major_axis, int64_t* out) {
  for (int64_t p = FirstItem(); p < nnz; p += ItemStep()) {
    out[2 * p + major_axis] = sk::SliceOf(p, ptr, num);
    out[2 * p + 1 - major_axis] = minor[p];
  }
}

__global__ void LowerBoundKernel(const int64_t* idx, int64_t n, int rank, int axis, int64_t num,
                                 int64_t* ptr) {
  for (int64_t k = FirstItem(); k <= num; k += ItemStep()) {
    int64_t lo = 0, hi = n;
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (idx[mid * rank + axis] < k) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    ptr[k] = lo;
  }
}

__global__ void PermuteColumnsKernel(const int64_t* idx, int64_t n, int rank, ArgArray<int> perm,
                                     int64_t* out) {
  const int* p = perm.data();
  for (int64_t i = FirstItem(); i < n * rank; i += ItemStep()) {
    const int64_t e = i / rank;
    out[i] = idx[e * rank + p[i - e * rank]];
  }
}

__global__ void CopyShiftedKernel(const int64_t* src, int64_t n, int rank, int axis, int64_t shift,
                                  int64_t* dst) {
  for (int64_t i = FirstItem(); i < n * rank; i += ItemStep()) {
    const int64_t e = i / rank;
    const bool on_axis = i - e * rank == axis;  // unsigned: unvalidated indices may not overflow
    dst[i] = static_cast<int64_t>(static_cast<uint64_t>(src[i]) +
                                  (on_axis ? static_cast<uint64_t>(shift) : 0));
  }
}

struct GroupHeadAt {
  const int64_t* idx;
  ArgArray<int> dims;
  int rank, num_dims;
  __host__ __device__ bool operator()(int64_t i) const {
    if (i == 0) return true;
    const int* d = dims.data();
    bool same = true;
    for (int j = 0; j < num_dims; ++j) same &= idx[i * rank + d[j]] == idx[(i - 1) * rank + d[j]];
    return !same;
  }
};

// out = the m heads, then each head's coordinates on `dims` (m * num_dims numbers): one buffer,
// so that one copy brings both to the host.
__global__ void HeadsAndCoordsKernel(const int64_t* idx, const uint64_t* heads, int64_t m, int rank,
                                     ArgArray<int> dims, int num_dims, int64_t* out) {
  const int* d = dims.data();
  for (int64_t i = FirstItem(); i < m * (num_dims + 1); i += ItemStep()) {
    if (i < m) {
      out[i] = static_cast<int64_t>(heads[i]);
    } else {
      const int64_t c = i - m;
      const int64_t g = c / num_dims;
      out[i] = idx[static_cast<int64_t>(heads[g]) * rank + d[c - g * num_dims]];
    }
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// structure.h
// ---------------------------------------------------------------------------------------------

void LowerBounds(const int64_t* idx, int64_t n, int rank, int axis, int64_t num, int64_t* ptr,
                 const On& on) {
  LowerBoundKernel<<<Grid(num + 1), kThreads, 0, on.stream>>>(idx, n, rank, axis, num, ptr);
  CheckLaunch(on);
}

Tensor RunPointers(const Tensor& idx, int axis, int64_t num) {
  const On on(idx, "FromSparse");
  Tensor ptr = Tensor::Empty({num + 1}, DType::kInt64, idx.device());
  LowerBounds(Rows(idx), idx.Dim(0), static_cast<int>(idx.Dim(1)), axis, num,
              static_cast<int64_t*>(ptr.raw_data()), on);
  return ptr;
}

Tensor ExpandPointers(const Tensor& ptr, const Tensor& minor, int major_axis) {
  const On on(ptr, "ToSparse");
  const int64_t nnz = minor.Dim(0);
  Tensor out = Tensor::Empty({nnz, 2}, DType::kInt64, ptr.device());
  if (nnz == 0) return out;
  ExpandKernel<<<Grid(nnz), kThreads, 0, on.stream>>>(
      static_cast<const int64_t*>(ptr.raw_data()), static_cast<const int64_t*>(minor.raw_data()),
      ptr.Dim(0) - 1, nnz, major_axis, static_cast<int64_t*>(out.raw_data()));
  CheckLaunch(on);
  return out;
}

Tensor PermuteColumns(const Tensor& idx, const std::vector<int>& perm) {
  const On on(idx, "Permute");
  const int64_t n = idx.Dim(0);
  const int rank = static_cast<int>(perm.size());
  Tensor out = Tensor::Empty({n, rank}, DType::kInt64, idx.device());
  if (n * rank == 0) return out;
  const KernelArray<int> perm_a(perm, on);
  PermuteColumnsKernel<<<Grid(n * rank), kThreads, 0, on.stream>>>(
      Rows(idx), n, rank, perm_a.arg(), static_cast<int64_t*>(out.raw_data()));
  CheckLaunch(on);
  return out;
}

void CopyRowsShifted(const Tensor& src, int axis, int64_t shift, int64_t row0, Tensor* dst) {
  const On on(src, "Concat");
  const int64_t n = src.Dim(0);
  const int rank = static_cast<int>(src.Dim(1));
  if (n * rank == 0) return;
  CopyShiftedKernel<<<Grid(n * rank), kThreads, 0, on.stream>>>(
      Rows(src), n, rank, axis, shift, static_cast<int64_t*>(dst->raw_data()) + row0 * rank);
  CheckLaunch(on);
}

// Two waits: the number of groups sizes the host outputs, then one copy brings the heads and
// their coordinates together.
std::vector<int64_t> RunHeads(const Tensor& idx, const std::vector<int>& dims,
                              std::vector<int64_t>* coords) {
  const On on(idx, "group");
  const int64_t n = idx.Dim(0);
  const int rank = static_cast<int>(idx.Dim(1));
  const int nd = static_cast<int>(dims.size());
  DeviceBuffer heads(8 * n, on.device);
  const KernelArray<int> dims_a(dims, on);
  const int64_t m =
      Select(n, GroupHeadAt{Rows(idx), dims_a.arg(), rank, nd}, heads.as<uint64_t>(), on);
  std::vector<int64_t> out(static_cast<size_t>(m));
  coords->assign(static_cast<size_t>(m * nd), 0);
  if (m == 0) return out;
  const int64_t total = m * (nd + 1);
  DeviceBuffer both_d(8 * total, on.device);
  HeadsAndCoordsKernel<<<Grid(total), kThreads, 0, on.stream>>>(
      Rows(idx), heads.as<uint64_t>(), m, rank, dims_a.arg(), nd, both_d.as<int64_t>());
  CheckLaunch(on);
  std::vector<int64_t> both(static_cast<size_t>(total));
  cb::Memcpy(both.data(), 0, both_d.data(), on.device, 8 * total, cb::CopyKind::kDeviceToHost);
  std::copy(both.begin(), both.begin() + m, out.begin());
  std::copy(both.begin() + m, both.end(), coords->begin());
  return out;
}

}  // namespace tensorkit::sparse_cuda
