// Between sparse entries and dense tensors on the device (structure.h): the scatter of ToDense
// (a stable sort by destination; the last entry of each run writes, no atomics), the nonzeros
// of FromDense (count, then compact) and Mul's gather of the dense element each entry meets.
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <cstring>

#include "tensorkit/sparse/cuda/structure_common.cuh"

namespace tensorkit::sparse_cuda {
namespace {

template <typename U>
__global__ void GatherAtKernel(const int64_t* idx, int64_t n, int rank, ArgArray<int64_t> strides,
                               int64_t offset, const U* base, U* out) {
  const int64_t* st = strides.data();
  for (int64_t i = FirstItem(); i < n; i += ItemStep()) {
    int64_t at = offset;
    for (int a = 0; a < rank; ++a) at += idx[i * rank + a] * st[a];
    out[i] = base[at];
  }
}

template <typename P>
__global__ void PositionKernel(const int64_t* idx, int64_t n, int rank, ArgArray<int64_t> dims,
                               uint64_t* keys, P* perm) {
  const int64_t* d = dims.data();
  for (int64_t i = FirstItem(); i < n; i += ItemStep()) {
    keys[i] = static_cast<uint64_t>(sk::PositionOf(idx + i * rank, d, rank));
    perm[i] = static_cast<P>(i);
  }
}

// The last entry of each run of equal (sorted) positions writes its element: one writer each.
template <typename U, typename P>
__global__ void ScatterLastKernel(const uint64_t* keys, const P* perm, int64_t n,
                                  ArgArray<int64_t> dims, ArgArray<int64_t> strides, int rank,
                                  int64_t offset, const U* vals, U* base) {
  const int64_t* d = dims.data();
  const int64_t* st = strides.data();
  for (int64_t i = FirstItem(); i < n; i += ItemStep()) {
    if (i + 1 < n && keys[i + 1] == keys[i]) continue;
    const int64_t pos = static_cast<int64_t>(keys[i]);
    base[sk::MemoryIndexAt(pos, d, st, rank, offset)] = vals[perm[i]];
  }
}

template <typename P>
void ScatterAs(const Tensor& idx, const Tensor& values, Tensor* dense, const On& on) {
  const int64_t n = idx.Dim(0);
  const int rank = static_cast<int>(idx.Dim(1));
  const KernelArray<int64_t> dims(dense->Dims(), on), strides(dense->Strides(), on);
  PermSort<P> s(n, on.device);
  PositionKernel<P><<<Grid(n), kThreads, 0, on.stream>>>(Rows(idx), n, rank, dims.arg(),
                                                         s.keys.Current(), s.perm.Current());
  CheckLaunch(on);
  SortPairs(&s, n, sk::BitsBelow(static_cast<uint64_t>(dense->NumElements())), on);
  BySize(static_cast<int>(DTypeSize(values.dtype())), [&]<typename U>() {
    ScatterLastKernel<U, P><<<Grid(n), kThreads, 0, on.stream>>>(
        s.keys.Current(), s.perm.Current(), n, dims.arg(), strides.arg(), rank,
        dense->pattern().offset, static_cast<const U*>(values.raw_data()),
        static_cast<U*>(dense->storage()->data()));
  });
  CheckLaunch(on);
}

struct NonzeroAt {
  const unsigned char* base;
  int size;
  bool is_float;
  __host__ __device__ bool operator()(int64_t i) const {
    uint64_t x = 0;
    memcpy(&x, base + i * size, static_cast<size_t>(size));  // little-endian: the low bytes
    return !sk::BytesAreZero(x, size, is_float);
  }
};

struct NonzeroCount {
  NonzeroAt at;
  __host__ __device__ int64_t operator()(int64_t i) const { return at(i) ? 1 : 0; }
};

template <typename U>
__global__ void NonzeroRowsKernel(const uint64_t* pos, int64_t m, ArgArray<int64_t> dims, int rank,
                                  const U* base, int64_t* out_idx, U* out_vals) {
  const int64_t* d = dims.data();
  for (int64_t k = FirstItem(); k < m; k += ItemStep()) {
    const int64_t p = static_cast<int64_t>(pos[k]);
    sk::RowAt(p, d, rank, out_idx + k * rank);
    out_vals[k] = base[p];
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// structure.h
// ---------------------------------------------------------------------------------------------

Tensor GatherAt(const Tensor& idx, const Tensor& dense, const std::vector<int64_t>& strides) {
  const On on(idx, "Mul");
  const int64_t n = idx.Dim(0);
  const int rank = static_cast<int>(idx.Dim(1));
  Tensor out = Tensor::Empty({n}, dense.dtype(), idx.device());
  if (n == 0) return out;
  const KernelArray<int64_t> strides_a(strides, on);
  BySize(static_cast<int>(DTypeSize(dense.dtype())), [&]<typename U>() {
    GatherAtKernel<U><<<Grid(n), kThreads, 0, on.stream>>>(
        Rows(idx), n, rank, strides_a.arg(), dense.pattern().offset,
        static_cast<const U*>(dense.storage()->data()), static_cast<U*>(out.raw_data()));
  });
  CheckLaunch(on);
  return out;
}

void Scatter(const Tensor& idx, const Tensor& values, Tensor* dense) {
  const On on(idx, "ToDense");
  const int64_t n = idx.Dim(0);
  if (n == 0) return;
  if (FitsUint32(n)) {
    ScatterAs<uint32_t>(idx, values, dense, on);
  } else {
    ScatterAs<uint64_t>(idx, values, dense, on);
  }
}

void Nonzeros(const Tensor& dense, Tensor* idx, Tensor* values) {
  const On on(dense, "FromDense");
  const int64_t total = dense.NumElements();
  const int rank = dense.NumAxes();
  const int size = static_cast<int>(DTypeSize(dense.dtype()));
  const NonzeroAt at{static_cast<const unsigned char*>(dense.raw_data()), size,
                     (kFloatDTypes & Bit(dense.dtype())) != 0};
  int64_t m = 0;
  DeviceBuffer count(8, on.device);
  if (total > 0) {  // count, then compact into exactly that much room
    auto flags =
        thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), NonzeroCount{at});
    size_t temp = 0;
    TK_CUDA_CHECK(
        on.op, cub::DeviceReduce::Sum(nullptr, temp, flags, count.as<int64_t>(), total, on.stream));
    DeviceBuffer scratch(static_cast<int64_t>(temp), on.device);
    TK_CUDA_CHECK(on.op, cub::DeviceReduce::Sum(scratch.data(), temp, flags, count.as<int64_t>(),
                                                total, on.stream));
    m = FetchOne(count.as<int64_t>(), on);  // the one wait: m sizes the outputs
  }
  *idx = Tensor::Empty({m, rank}, DType::kInt64, dense.device());
  *values = Tensor::Empty({m}, dense.dtype(), dense.device());
  if (m == 0) return;
  DeviceBuffer pos(8 * m, on.device);
  SelectInto(total, at, pos.as<uint64_t>(), count.as<int64_t>(), on);  // m again: not fetched
  const KernelArray<int64_t> dims(dense.Dims(), on);
  BySize(size, [&]<typename U>() {
    NonzeroRowsKernel<U><<<Grid(m), kThreads, 0, on.stream>>>(
        pos.as<uint64_t>(), m, dims.arg(), rank, static_cast<const U*>(dense.raw_data()),
        static_cast<int64_t*>(idx->raw_data()), static_cast<U*>(values->raw_data()));
  });
  CheckLaunch(on);
}

}  // namespace tensorkit::sparse_cuda
