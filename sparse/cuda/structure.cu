// The CUDA versions of the structural sparse primitives (structure.h): CUB radix sorts, selects
// and reductions, and grid-stride kernels whose per-entry arithmetic is keys.h's (tested on the
// host). Values are moved as bytes of their element size (1, 2, 4 or 8), so only Coalesce's sum
// is instantiated per dtype. The host waits only where structure.h says something is fetched.
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <cstring>
#include <cub/cub.cuh>

#include "tensorkit/common/cuda/by_size.h"
#include "tensorkit/common/cuda/cuda_util.h"
#include "tensorkit/common/cuda/device_buffer.h"
#include "tensorkit/common/dtype.h"
#include "tensorkit/common/wrap.h"
#include "tensorkit/dense/functors.h"
#include "tensorkit/sparse/cuda/structure.h"
#include "tensorkit/sparse/keys.h"

namespace tensorkit::sparse_cuda {
namespace {

namespace cb = cuda_backend;
namespace sk = sparse_keys;
using cb::BySize;
using cb::DeviceBuffer;
using engine::MaxF;
using engine::MinF;

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 1 << 16;  // grid-stride loops cover the rest

// Where a call runs: the tensors' device (made current for the call) and its current stream.
struct On {
  On(const Tensor& t, const char* name)
      : device(t.device().index), guard(device, name), stream(cb::Stream(device)), op(name) {}
  int device;
  cb::DeviceGuard guard;
  cudaStream_t stream;
  const char* op;
};

unsigned Grid(int64_t n) { return static_cast<unsigned>(sk::BlocksFor(n, kThreads, kMaxBlocks)); }

__device__ inline int64_t FirstItem() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ inline int64_t ItemStep() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

void CheckLaunch(const On& on) { TK_CUDA_CHECK(on.op, cudaGetLastError()); }

// `host` in device memory (nothing for an empty vector).
template <typename T>
DeviceBuffer Upload(const std::vector<T>& host, const On& on) {
  const int64_t bytes = static_cast<int64_t>(host.size() * sizeof(T));
  DeviceBuffer b(bytes, on.device);
  if (bytes > 0) {
    cb::Memcpy(b.data(), on.device, host.data(), 0, bytes, cb::CopyKind::kHostToDevice);
  }
  return b;
}

template <typename T>
T FetchOne(const T* p, const On& on) {
  T v{};
  cb::Memcpy(&v, 0, p, on.device, sizeof(T), cb::CopyKind::kDeviceToHost);
  return v;
}

// Row `i` of device rows `idx`, fetched.
std::vector<int64_t> FetchRow(const Tensor& idx, int64_t i, const On& on) {
  const int rank = static_cast<int>(idx.Dim(1));
  std::vector<int64_t> row(static_cast<size_t>(rank));
  if (rank > 0) {
    cb::Memcpy(row.data(), 0, static_cast<const int64_t*>(idx.raw_data()) + i * rank, on.device,
               rank * 8, cb::CopyKind::kDeviceToHost);
  }
  return row;
}

const int64_t* Rows(const Tensor& idx) { return static_cast<const int64_t*>(idx.raw_data()); }

// ---------------------------------------------------------------------------------------------
// The first item with a property: per-thread minimum, one atomicMin per thread that found one.
// The minimum does not depend on timing, so the answer is deterministic.
// ---------------------------------------------------------------------------------------------

template <typename F>
__global__ void MinKernel(int64_t n, F f, unsigned long long* out) {
  unsigned long long best = ~0ull;
  for (int64_t i = FirstItem(); i < n; i += ItemStep()) {
    const unsigned long long v = static_cast<unsigned long long>(f(i));  // -1: none
    best = v < best ? v : best;
  }
  if (best != ~0ull) atomicMin(out, best);
}

// The smallest f(i) >= 0 over i < n (f returns -1 for none), or -1; fetched.
template <typename F>
int64_t MinOver(int64_t n, const F& f, const On& on) {
  if (n <= 0) return -1;
  DeviceBuffer out(8, on.device);
  TK_CUDA_CHECK(on.op, cudaMemsetAsync(out.data(), 0xff, 8, on.stream));
  MinKernel<<<Grid(n), kThreads, 0, on.stream>>>(n, f, out.as<unsigned long long>());
  CheckLaunch(on);
  const unsigned long long v = FetchOne(out.as<unsigned long long>(), on);
  return v == ~0ull ? -1 : static_cast<int64_t>(v);
}

struct OutOfBoundsAt {
  const int64_t* idx;
  const int64_t* shape;
  int rank;
  __host__ __device__ int64_t operator()(int64_t i) const {
    return sk::OutOfBounds(idx + i * rank, shape, rank) ? i : -1;
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
  const int* order;
  int rank, limit;  // limit: the largest bad value of CompareRows(row i, row i - 1)
  __host__ __device__ int64_t operator()(int64_t i) const {
    return i > 0 && sk::CompareRowsIn(idx + i * rank, idx + (i - 1) * rank, order, rank) <= limit
               ? i
               : -1;
  }
};

// ---------------------------------------------------------------------------------------------
// Selecting positions (CUB DeviceSelect over a counting iterator)
// ---------------------------------------------------------------------------------------------

// Positions i < n with pred(i), ascending, into `out` (room for every selected one); returns
// how many (fetched).
template <typename Pred>
int64_t Select(int64_t n, const Pred& pred, uint64_t* out, const On& on) {
  if (n <= 0) return 0;
  DeviceBuffer count(8, on.device);
  const thrust::counting_iterator<int64_t> first(0);
  size_t temp = 0;
  TK_CUDA_CHECK(on.op, cub::DeviceSelect::If(nullptr, temp, first, out, count.as<int64_t>(), n,
                                             pred, on.stream));
  DeviceBuffer scratch(static_cast<int64_t>(temp), on.device);
  TK_CUDA_CHECK(on.op, cub::DeviceSelect::If(scratch.data(), temp, first, out, count.as<int64_t>(),
                                             n, pred, on.stream));
  return FetchOne(count.as<int64_t>(), on);
}

// ---------------------------------------------------------------------------------------------
// Sorting (stable CUB radix sorts of key words, a permutation carried along)
// ---------------------------------------------------------------------------------------------

// Two key and two permutation buffers for cub::DoubleBuffer; P the position type.
template <typename P>
struct PermSort {
  PermSort(int64_t n, int device)
      : k0(8 * n, device),
        k1(8 * n, device),
        p0(static_cast<int64_t>(sizeof(P)) * n, device),
        p1(static_cast<int64_t>(sizeof(P)) * n, device),
        keys(k0.as<uint64_t>(), k1.as<uint64_t>()),
        perm(p0.as<P>(), p1.as<P>()) {}
  DeviceBuffer k0, k1, p0, p1;
  cub::DoubleBuffer<uint64_t> keys;
  cub::DoubleBuffer<P> perm;
};

// Stable sort of n (key, position) pairs by the key's bits [0, bits).
template <typename P>
void SortPairs(PermSort<P>* s, int64_t n, int bits, const On& on) {
  if (n <= 1 || bits == 0) return;
  size_t temp = 0;
  TK_CUDA_CHECK(on.op, cub::DeviceRadixSort::SortPairs(nullptr, temp, s->keys, s->perm, n, 0, bits,
                                                       on.stream));
  DeviceBuffer scratch(static_cast<int64_t>(temp), on.device);
  TK_CUDA_CHECK(on.op, cub::DeviceRadixSort::SortPairs(scratch.data(), temp, s->keys, s->perm, n, 0,
                                                       bits, on.stream));
}

template <typename P>
__global__ void PackFirstKernel(const int64_t* idx, int64_t n, int rank, const int* word,
                                const int* shift, uint64_t* keys, P* perm) {
  for (int64_t i = FirstItem(); i < n; i += ItemStep()) {
    keys[i] = sk::PackWord(idx + i * rank, rank, word, shift, 0);
    perm[i] = static_cast<P>(i);
  }
}

template <typename P>
__global__ void PackGatherKernel(const int64_t* idx, int64_t n, int rank, const int* word,
                                 const int* shift, int w, const P* perm, uint64_t* keys) {
  for (int64_t i = FirstItem(); i < n; i += ItemStep()) {
    keys[i] = sk::PackWord(idx + static_cast<int64_t>(perm[i]) * rank, rank, word, shift, w);
  }
}

template <typename P>
__global__ void DecodeKernel(const uint64_t* keys, int64_t n, int rank, const int* word,
                             const int* shift, const uint64_t* mask, int64_t* out) {
  for (int64_t i = FirstItem(); i < n * rank; i += ItemStep()) {
    const int64_t e = i / rank;
    const int a = static_cast<int>(i - e * rank);
    out[i] = word[a] < 0 ? 0 : sk::FieldOf(keys[e], shift[a], mask[a]);
  }
}

template <typename P>
__global__ void GatherRowsKernel(const int64_t* idx, const P* perm, int64_t n, int rank,
                                 int64_t* out) {
  for (int64_t i = FirstItem(); i < n * rank; i += ItemStep()) {
    const int64_t e = i / rank;
    out[i] = idx[static_cast<int64_t>(perm[e]) * rank + (i - e * rank)];
  }
}

template <typename U, typename P>
__global__ void GatherKernel(const U* src, const P* perm, int64_t n, U* dst) {
  for (int64_t i = FirstItem(); i < n; i += ItemStep()) dst[i] = src[perm[i]];
}

// dst[i] = src[perm[i]] for n values of `size` bytes.
template <typename P>
void GatherValues(const void* src, const P* perm, int64_t n, int size, void* dst, const On& on) {
  if (n == 0) return;
  BySize(size, [&]<typename U>() {
    GatherKernel<U, P><<<Grid(n), kThreads, 0, on.stream>>>(static_cast<const U*>(src), perm, n,
                                                            static_cast<U*>(dst));
  });
  CheckLaunch(on);
}

// The stable permutation of n device rows by the key words (last word sorted left in s->keys).
template <typename P>
void SortRows(const int64_t* idx, int64_t n, int rank, const sk::KeyWords& kw, const int* word,
              const int* shift, PermSort<P>* s, const On& on) {
  PackFirstKernel<P><<<Grid(n), kThreads, 0, on.stream>>>(idx, n, rank, word, shift,
                                                          s->keys.Current(), s->perm.Current());
  CheckLaunch(on);
  for (int w = 0; w < kw.num_words(); ++w) {  // least significant word first: LSD, stable
    if (w > 0) {
      PackGatherKernel<P><<<Grid(n), kThreads, 0, on.stream>>>(
          idx, n, rank, word, shift, w, s->perm.Current(), s->keys.Current());
      CheckLaunch(on);
    }
    SortPairs(s, n, kw.bits[w], on);
  }
}

template <typename P>
void SortEntriesAs(const Tensor& idx, const Tensor& values, const std::vector<int64_t>& shape,
                   const std::vector<int>& order, Tensor* sorted_idx, Tensor* sorted_values,
                   const On& on) {
  const int64_t n = idx.Dim(0);
  const int rank = static_cast<int>(shape.size());
  const sk::KeyWords kw = sk::MakeKeyWords(shape, order);
  std::vector<int> meta = kw.word;  // word by axis, then shift by axis
  meta.insert(meta.end(), kw.shift.begin(), kw.shift.end());
  std::vector<uint64_t> mask(static_cast<size_t>(rank));
  for (int a = 0; a < rank; ++a) {
    const int bits = sk::BitsBelow(static_cast<uint64_t>(shape[a]));
    mask[a] = bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  }
  const DeviceBuffer meta_d = Upload(meta, on);
  const DeviceBuffer mask_d = Upload(mask, on);
  const int* word = meta_d.as<int>();
  const int* shift = rank > 0 ? word + rank : nullptr;
  PermSort<P> s(n, on.device);
  SortRows(Rows(idx), n, rank, kw, word, shift, &s, on);
  int64_t* out = static_cast<int64_t*>(sorted_idx->raw_data());
  if (n * rank > 0) {
    if (kw.num_words() <= 1) {  // every field is in the sorted word: decode, no gather
      DecodeKernel<P><<<Grid(n * rank), kThreads, 0, on.stream>>>(
          s.keys.Current(), n, rank, word, shift, mask_d.as<uint64_t>(), out);
    } else {
      GatherRowsKernel<P>
          <<<Grid(n * rank), kThreads, 0, on.stream>>>(Rows(idx), s.perm.Current(), n, rank, out);
    }
    CheckLaunch(on);
  }
  GatherValues(values.raw_data(), s.perm.Current(), n, static_cast<int>(DTypeSize(values.dtype())),
               sorted_values->raw_data(), on);
}

// ---------------------------------------------------------------------------------------------
// Coalesce
// ---------------------------------------------------------------------------------------------

struct GroupHeadAt {
  const int64_t* idx;
  const int* dims;
  int rank, num_dims;
  __host__ __device__ bool operator()(int64_t i) const {
    if (i == 0) return true;
    bool same = true;
    for (int j = 0; j < num_dims; ++j)
      same &= idx[i * rank + dims[j]] == idx[(i - 1) * rank + dims[j]];
    return !same;
  }
};

// A head of a run of at least min_run equal rows.
struct RunHeadAt {
  const int64_t* idx;
  int64_t n, min_run;
  int rank;
  __host__ __device__ bool operator()(int64_t i) const {
    return sk::StartsRun(idx, i, n, rank, min_run);
  }
};

// Runs (by index) whose length exceeds `limit`.
struct LongerThan {
  const int64_t* len;
  int64_t limit;
  __host__ __device__ bool operator()(int64_t k) const { return len[k] > limit; }
};

// Runs longer than this are combined by a whole block (MergeLongKernel) instead of one thread.
constexpr int64_t kLongRun = 2048;
static_assert(kLongRun >= kThreads,
              "every thread of MergeLongKernel's block has an entry of its run");

__global__ void RunLengthKernel(const uint64_t* heads, int64_t m, int64_t n, int64_t* len) {
  for (int64_t k = FirstItem(); k < m; k += ItemStep()) {
    const int64_t end = k + 1 < m ? static_cast<int64_t>(heads[k + 1]) : n;
    len[k] = end - static_cast<int64_t>(heads[k]);
  }
}

__global__ void PickRunsKernel(const uint64_t* heads, const int64_t* len, const uint64_t* pick,
                               int64_t m, uint64_t* heads_out, int64_t* len_out) {
  for (int64_t j = FirstItem(); j < m; j += ItemStep()) {
    heads_out[j] = heads[pick[j]];
    len_out[j] = len[pick[j]];
  }
}

// One thread per run, combining in entry order: the CPU's sequence of operations, hence its
// bits. Runs longer than kLongRun get only their row here.
template <typename T, typename F>
__global__ void MergeKernel(const int64_t* idx, const T* vals, const uint64_t* heads,
                            const int64_t* len, int64_t m, int rank, int64_t zero_below,
                            int64_t* out_idx, T* out_vals) {
  using C = ComputeType<T>;
  for (int64_t j = FirstItem(); j < m; j += ItemStep()) {
    const int64_t b = static_cast<int64_t>(heads[j]);
    for (int k = 0; k < rank; ++k) out_idx[j * rank + k] = idx[b * rank + k];
    if (len[j] > kLongRun) continue;
    C acc = static_cast<C>(vals[b]);
    for (int64_t i = b + 1; i < b + len[j]; ++i) acc = F::Apply(acc, static_cast<C>(vals[i]));
    if (len[j] < zero_below) acc = F::Apply(acc, C{});
    out_vals[j] = static_cast<T>(acc);
  }
}

// One block per long run (listed in `runs`): each thread combines a fixed stride of the run,
// starting from its own first entry (a long run has one for every thread), then a fixed tree
// combines the threads, so the result does not depend on timing.
template <typename T, typename F>
__global__ void __launch_bounds__(kThreads)
    MergeLongKernel(const T* vals, const uint64_t* heads, const int64_t* len, const uint64_t* runs,
                    int64_t num_runs, int64_t zero_below, T* out_vals) {
  using C = ComputeType<T>;
  __shared__ C part[kThreads];
  for (int64_t r = blockIdx.x; r < num_runs; r += gridDim.x) {
    const int64_t j = static_cast<int64_t>(runs[r]);
    const int64_t b = static_cast<int64_t>(heads[j]), e = b + len[j];
    C acc = static_cast<C>(vals[b + threadIdx.x]);
    for (int64_t i = b + threadIdx.x + kThreads; i < e; i += kThreads) {
      acc = F::Apply(acc, static_cast<C>(vals[i]));
    }
    part[threadIdx.x] = acc;
    __syncthreads();
    for (int half = kThreads / 2; half > 0; half /= 2) {
      if (threadIdx.x < half)
        part[threadIdx.x] = F::Apply(part[threadIdx.x], part[threadIdx.x + half]);
      __syncthreads();
    }
    if (threadIdx.x == 0) {
      C total = part[0];
      if (len[j] < zero_below) total = F::Apply(total, C{});
      out_vals[j] = static_cast<T>(total);
    }
    __syncthreads();  // part is reused by the next run
  }
}

template <typename U>
__global__ void GatherAtKernel(const int64_t* idx, int64_t n, int rank, const int64_t* strides,
                               int64_t offset, const U* base, U* out) {
  for (int64_t i = FirstItem(); i < n; i += ItemStep()) {
    int64_t at = offset;
    for (int a = 0; a < rank; ++a) at += idx[i * rank + a] * strides[a];
    out[i] = base[at];
  }
}

// ---------------------------------------------------------------------------------------------
// Dense conversions
// ---------------------------------------------------------------------------------------------

template <typename P>
__global__ void PositionKernel(const int64_t* idx, int64_t n, int rank, const int64_t* dims,
                               uint64_t* keys, P* perm) {
  for (int64_t i = FirstItem(); i < n; i += ItemStep()) {
    keys[i] = static_cast<uint64_t>(sk::PositionOf(idx + i * rank, dims, rank));
    perm[i] = static_cast<P>(i);
  }
}

// The last entry of each run of equal (sorted) positions writes its element: one writer each.
template <typename U, typename P>
__global__ void ScatterLastKernel(const uint64_t* keys, const P* perm, int64_t n,
                                  const int64_t* dims, const int64_t* strides, int rank,
                                  int64_t offset, const U* vals, U* base) {
  for (int64_t i = FirstItem(); i < n; i += ItemStep()) {
    if (i + 1 < n && keys[i + 1] == keys[i]) continue;
    const int64_t pos = static_cast<int64_t>(keys[i]);
    base[sk::MemoryIndexAt(pos, dims, strides, rank, offset)] = vals[perm[i]];
  }
}

template <typename P>
void ScatterAs(const Tensor& idx, const Tensor& values, Tensor* dense, const On& on) {
  const int64_t n = idx.Dim(0);
  const int rank = static_cast<int>(idx.Dim(1));
  std::vector<int64_t> meta = dense->Dims();  // dims, then strides
  const std::vector<int64_t> strides = dense->Strides();
  meta.insert(meta.end(), strides.begin(), strides.end());
  const DeviceBuffer meta_d = Upload(meta, on);
  const int64_t* dims = meta_d.as<int64_t>();
  PermSort<P> s(n, on.device);
  PositionKernel<P><<<Grid(n), kThreads, 0, on.stream>>>(Rows(idx), n, rank, dims, s.keys.Current(),
                                                         s.perm.Current());
  CheckLaunch(on);
  SortPairs(&s, n, sk::BitsBelow(static_cast<uint64_t>(dense->NumElements())), on);
  BySize(static_cast<int>(DTypeSize(values.dtype())), [&]<typename U>() {
    ScatterLastKernel<U, P><<<Grid(n), kThreads, 0, on.stream>>>(
        s.keys.Current(), s.perm.Current(), n, dims, rank > 0 ? dims + rank : nullptr, rank,
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
__global__ void NonzeroRowsKernel(const uint64_t* pos, int64_t m, const int64_t* dims, int rank,
                                  const U* base, int64_t* out_idx, U* out_vals) {
  for (int64_t k = FirstItem(); k < m; k += ItemStep()) {
    const int64_t p = static_cast<int64_t>(pos[k]);
    sk::RowAt(p, dims, rank, out_idx + k * rank);
    out_vals[k] = base[p];
  }
}

// ---------------------------------------------------------------------------------------------
// Pointers, columns, boxes, copies
// ---------------------------------------------------------------------------------------------

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

__global__ void PermuteColumnsKernel(const int64_t* idx, int64_t n, int rank, const int* perm,
                                     int64_t* out) {
  for (int64_t i = FirstItem(); i < n * rank; i += ItemStep()) {
    const int64_t e = i / rank;
    out[i] = idx[e * rank + perm[i - e * rank]];
  }
}

struct InsideAt {
  const int64_t* idx;
  const int64_t* box;  // start by axis, then size by axis
  int rank, only_axis;
  __host__ __device__ bool operator()(int64_t i) const {
    bool inside = true;
    for (int a = 0; a < rank; ++a) {
      if (only_axis >= 0 && a != only_axis) continue;
      const int64_t v = idx[i * rank + a];
      inside &= v >= box[a] && v - box[a] < box[rank + a];
    }
    return inside;
  }
};

__global__ void GatherShiftedKernel(const int64_t* idx, const uint64_t* pos, int64_t m, int rank,
                                    const int64_t* start, int64_t* out) {
  for (int64_t i = FirstItem(); i < m * rank; i += ItemStep()) {
    const int64_t k = i / rank;
    const int a = static_cast<int>(i - k * rank);
    out[i] = idx[static_cast<int64_t>(pos[k]) * rank + a] - start[a];
  }
}

__global__ void PieceKeyKernel(const int64_t* idx, int64_t n, int rank, int axis,
                               const int64_t* starts, int64_t num, uint64_t* keys, uint64_t* perm) {
  for (int64_t i = FirstItem(); i < n; i += ItemStep()) {
    keys[i] = static_cast<uint64_t>(sk::SliceOf(idx[i * rank + axis], starts, num));
    perm[i] = static_cast<uint64_t>(i);
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

__global__ void CoordsKernel(const int64_t* idx, const uint64_t* heads, int64_t m, int rank,
                             const int* dims, int num_dims, int64_t* out) {
  for (int64_t i = FirstItem(); i < m * num_dims; i += ItemStep()) {
    const int64_t g = i / num_dims;
    out[i] = idx[static_cast<int64_t>(heads[g]) * rank + dims[i - g * num_dims]];
  }
}

bool FitsUint32(int64_t n) { return n <= int64_t{1} << 32; }

}  // namespace

// ---------------------------------------------------------------------------------------------
// structure.h
// ---------------------------------------------------------------------------------------------

int64_t FirstOutOfBounds(const Tensor& idx, const std::vector<int64_t>& shape,
                         std::vector<int64_t>* row) {
  const On on(idx, "ValidateIndices");
  const int rank = static_cast<int>(shape.size());
  if (rank == 0) return -1;
  const DeviceBuffer shape_d = Upload(shape, on);
  const int64_t bad =
      MinOver(idx.Dim(0), OutOfBoundsAt{Rows(idx), shape_d.as<int64_t>(), rank}, on);
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
  const DeviceBuffer order_d = Upload(order, on);
  const int64_t bad =
      MinOver(idx.Dim(0), UnorderedAt{Rows(idx), order_d.as<int>(), rank, strict ? 0 : -1}, on);
  if (bad >= 0) {
    *rows = FetchRow(idx, bad - 1, on);
    const std::vector<int64_t> here = FetchRow(idx, bad, on);
    rows->insert(rows->end(), here.begin(), here.end());
  }
  return bad;
}

namespace {

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
  const int64_t* row;
  int rank;
  __host__ __device__ int64_t operator()(int64_t i) const {
    return sk::SameRow(idx + i * rank, row, rank) ? i : -1;
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
  std::vector<int> meta = kw.word;
  meta.insert(meta.end(), kw.shift.begin(), kw.shift.end());
  const DeviceBuffer meta_d = Upload(meta, on);
  const int* word = meta_d.as<int>();
  PermSort<P> s(n, on.device);
  SortRows(Rows(idx), n, rank, kw, word, rank > 0 ? word + rank : nullptr, &s, on);
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
  *row = FetchRow(idx, bad, on);
  const DeviceBuffer row_d = Upload(*row, on);
  *head = MinOver(n, SameAsAt{Rows(idx), row_d.as<int64_t>(), rank}, on);
  return bad;
}

}  // namespace

int64_t FirstRepeat(const Tensor& idx, const std::vector<int64_t>& shape, int64_t* head,
                    std::vector<int64_t>* row) {
  const On on(idx, "ValidateIndices");
  const int64_t n = idx.Dim(0);
  if (n <= 1) return -1;
  return FitsUint32(n) ? FirstRepeatAs<uint32_t>(idx, shape, head, row, on)
                       : FirstRepeatAs<uint64_t>(idx, shape, head, row, on);
}

void SortEntries(const Tensor& idx, const Tensor& values, const std::vector<int64_t>& shape,
                 const std::vector<int>& order, Tensor* sorted_idx, Tensor* sorted_values) {
  const On on(idx, "Reorder");
  const int64_t n = idx.Dim(0);
  *sorted_idx = Tensor::Empty({n, static_cast<int64_t>(shape.size())}, DType::kInt64, idx.device());
  *sorted_values = Tensor::Empty({n}, values.dtype(), idx.device());
  if (n == 0) return;
  if (FitsUint32(n)) {
    SortEntriesAs<uint32_t>(idx, values, shape, order, sorted_idx, sorted_values, on);
  } else {
    SortEntriesAs<uint64_t>(idx, values, shape, order, sorted_idx, sorted_values, on);
  }
}

bool MergeRuns(const Tensor& idx, const Tensor& values, Tensor* merged_idx, Tensor* merged_values,
               const MergeRule& rule) {
  const On on(idx, "Coalesce");
  const int64_t n = idx.Dim(0);
  const int rank = static_cast<int>(idx.Dim(1));
  const bool plain = rule.op == MergeOp::kSum && rule.min_run <= 1 && rule.zero_below <= 0;
  if (plain && n <= 1) return false;
  // Every run (head and length), then the runs the rule keeps.
  const int64_t slots = std::max<int64_t>(n, 1);
  DeviceBuffer heads(8 * slots, on.device), len(8 * slots, on.device);
  int64_t m = Select(n, RunHeadAt{Rows(idx), n, 1, rank}, heads.as<uint64_t>(), on);
  if (plain && m == n) return false;
  if (m > 0) {
    RunLengthKernel<<<Grid(m), kThreads, 0, on.stream>>>(heads.as<uint64_t>(), m, n,
                                                         len.as<int64_t>());
    CheckLaunch(on);
  }
  if (rule.min_run > 1 && m > 0) {
    DeviceBuffer pick(8 * m, on.device), kept_heads(8 * m, on.device), kept_len(8 * m, on.device);
    const int64_t kept =
        Select(m, LongerThan{len.as<int64_t>(), rule.min_run - 1}, pick.as<uint64_t>(), on);
    if (kept > 0) {
      PickRunsKernel<<<Grid(kept), kThreads, 0, on.stream>>>(
          heads.as<uint64_t>(), len.as<int64_t>(), pick.as<uint64_t>(), kept,
          kept_heads.as<uint64_t>(), kept_len.as<int64_t>());
      CheckLaunch(on);
    }
    heads = std::move(kept_heads);
    len = std::move(kept_len);
    m = kept;
  }
  *merged_idx = Tensor::Empty({m, rank}, DType::kInt64, idx.device());
  *merged_values = Tensor::Empty({m}, values.dtype(), idx.device());
  if (m == 0) return true;
  DeviceBuffer long_runs(8 * m, on.device);
  const int64_t num_long =
      Select(m, LongerThan{len.as<int64_t>(), kLongRun}, long_runs.as<uint64_t>(), on);
  Dispatch<kNumericDTypes>(values.dtype(), on.op, [&]<typename T>() {
    const T* vals = static_cast<const T*>(values.raw_data());
    T* out = static_cast<T*>(merged_values->raw_data());
    const auto launch = [&]<typename F>() {
      MergeKernel<T, F><<<Grid(m), kThreads, 0, on.stream>>>(
          Rows(idx), vals, heads.as<uint64_t>(), len.as<int64_t>(), m, rank, rule.zero_below,
          static_cast<int64_t*>(merged_idx->raw_data()), out);
      if (num_long > 0) {
        MergeLongKernel<T, F>
            <<<static_cast<unsigned>(std::min<int64_t>(num_long, kMaxBlocks)), kThreads, 0,
               on.stream>>>(vals, heads.as<uint64_t>(), len.as<int64_t>(), long_runs.as<uint64_t>(),
                            num_long, rule.zero_below, out);
      }
    };
    switch (rule.op) {
      case MergeOp::kSum:
        return launch.template operator()<engine::AddF>();
      case MergeOp::kProduct:
        return launch.template operator()<engine::MulF>();
      case MergeOp::kMax:
        return launch.template operator()<MaxF>();
      case MergeOp::kMin:
        return launch.template operator()<MinF>();
    }
  });
  CheckLaunch(on);
  return true;
}

Tensor GatherAt(const Tensor& idx, const Tensor& dense, const std::vector<int64_t>& strides) {
  const On on(idx, "Mul");
  const int64_t n = idx.Dim(0);
  const int rank = static_cast<int>(idx.Dim(1));
  Tensor out = Tensor::Empty({n}, dense.dtype(), idx.device());
  if (n == 0) return out;
  const DeviceBuffer strides_d = Upload(strides, on);
  BySize(static_cast<int>(DTypeSize(dense.dtype())), [&]<typename U>() {
    GatherAtKernel<U><<<Grid(n), kThreads, 0, on.stream>>>(
        Rows(idx), n, rank, strides_d.as<int64_t>(), dense.pattern().offset,
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
  if (total > 0) {  // count, then compact into exactly that much room
    DeviceBuffer count(8, on.device);
    auto flags =
        thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), NonzeroCount{at});
    size_t temp = 0;
    TK_CUDA_CHECK(
        on.op, cub::DeviceReduce::Sum(nullptr, temp, flags, count.as<int64_t>(), total, on.stream));
    DeviceBuffer scratch(static_cast<int64_t>(temp), on.device);
    TK_CUDA_CHECK(on.op, cub::DeviceReduce::Sum(scratch.data(), temp, flags, count.as<int64_t>(),
                                                total, on.stream));
    m = FetchOne(count.as<int64_t>(), on);
  }
  *idx = Tensor::Empty({m, rank}, DType::kInt64, dense.device());
  *values = Tensor::Empty({m}, dense.dtype(), dense.device());
  if (m == 0) return;
  DeviceBuffer pos(8 * m, on.device);
  Select(total, at, pos.as<uint64_t>(), on);
  const DeviceBuffer dims = Upload(dense.Dims(), on);
  BySize(size, [&]<typename U>() {
    NonzeroRowsKernel<U><<<Grid(m), kThreads, 0, on.stream>>>(
        pos.as<uint64_t>(), m, dims.as<int64_t>(), rank, static_cast<const U*>(dense.raw_data()),
        static_cast<int64_t*>(idx->raw_data()), static_cast<U*>(values->raw_data()));
  });
  CheckLaunch(on);
}

Tensor RunPointers(const Tensor& idx, int axis, int64_t num) {
  const On on(idx, "FromSparse");
  Tensor ptr = Tensor::Empty({num + 1}, DType::kInt64, idx.device());
  LowerBoundKernel<<<Grid(num + 1), kThreads, 0, on.stream>>>(
      Rows(idx), idx.Dim(0), static_cast<int>(idx.Dim(1)), axis, num,
      static_cast<int64_t*>(ptr.raw_data()));
  CheckLaunch(on);
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
  const DeviceBuffer perm_d = Upload(perm, on);
  PermuteColumnsKernel<<<Grid(n * rank), kThreads, 0, on.stream>>>(
      Rows(idx), n, rank, perm_d.as<int>(), static_cast<int64_t*>(out.raw_data()));
  CheckLaunch(on);
  return out;
}

void SliceBox(const Tensor& idx, const Tensor& values, const std::vector<int64_t>& start,
              const std::vector<int64_t>& size, int only_axis, Tensor* out_idx,
              Tensor* out_values) {
  const On on(idx, "Slice");
  const int64_t n = idx.Dim(0);
  const int rank = static_cast<int>(start.size());
  std::vector<int64_t> box = start;
  box.insert(box.end(), size.begin(), size.end());
  const DeviceBuffer box_d = Upload(box, on);
  DeviceBuffer pos(8 * n, on.device);
  const int64_t m =
      Select(n, InsideAt{Rows(idx), box_d.as<int64_t>(), rank, only_axis}, pos.as<uint64_t>(), on);
  *out_idx = Tensor::Empty({m, rank}, DType::kInt64, idx.device());
  *out_values = Tensor::Empty({m}, values.dtype(), idx.device());
  if (m == 0) return;
  if (rank > 0) {
    GatherShiftedKernel<<<Grid(m * rank), kThreads, 0, on.stream>>>(
        Rows(idx), pos.as<uint64_t>(), m, rank, box_d.as<int64_t>(),
        static_cast<int64_t*>(out_idx->raw_data()));
    CheckLaunch(on);
  }
  GatherValues(values.raw_data(), pos.as<uint64_t>(), m,
               static_cast<int>(DTypeSize(values.dtype())), out_values->raw_data(), on);
}

void SplitEntries(const Tensor& idx, const Tensor& values, int axis,
                  const std::vector<int64_t>& starts, std::vector<Tensor>* piece_idx,
                  std::vector<Tensor>* piece_values) {
  const On on(idx, "Split");
  const int64_t n = idx.Dim(0);
  const int rank = static_cast<int>(idx.Dim(1));
  const int64_t num = static_cast<int64_t>(starts.size()) - 1;
  const int size = static_cast<int>(DTypeSize(values.dtype()));
  std::vector<int64_t> ptr(static_cast<size_t>(num + 1), 0);
  PermSort<uint64_t> s(std::max<int64_t>(n, 1), on.device);
  if (n > 0) {
    const DeviceBuffer starts_d = Upload(starts, on);
    PieceKeyKernel<<<Grid(n), kThreads, 0, on.stream>>>(
        Rows(idx), n, rank, axis, starts_d.as<int64_t>(), num, s.keys.Current(), s.perm.Current());
    CheckLaunch(on);
    SortPairs(&s, n, sk::BitsBelow(static_cast<uint64_t>(num)), on);
    DeviceBuffer ptr_d(8 * (num + 1), on.device);
    // The piece keys (below num, so their order as int64 is the same) as the one-column rows of
    // RunPointers' lower bounds.
    LowerBoundKernel<<<Grid(num + 1), kThreads, 0, on.stream>>>(
        reinterpret_cast<const int64_t*>(s.keys.Current()), n, 1, 0, num, ptr_d.as<int64_t>());
    CheckLaunch(on);
    cb::Memcpy(ptr.data(), 0, ptr_d.data(), on.device, 8 * (num + 1), cb::CopyKind::kDeviceToHost);
  }
  // Row r of `shifts`: piece r's start on `axis`, 0 elsewhere (GatherShiftedKernel subtracts it).
  std::vector<int64_t> shifts(static_cast<size_t>(num * rank), 0);
  for (int64_t r = 0; r < num; ++r) shifts[r * rank + axis] = starts[r];
  const DeviceBuffer shifts_d = Upload(shifts, on);
  for (int64_t r = 0; r < num; ++r) {
    const int64_t m = ptr[r + 1] - ptr[r];
    Tensor out_idx = Tensor::Empty({m, rank}, DType::kInt64, idx.device());
    Tensor out_values = Tensor::Empty({m}, values.dtype(), idx.device());
    const uint64_t* perm = s.perm.Current() + ptr[r];
    if (m > 0 && rank > 0) {
      GatherShiftedKernel<<<Grid(m * rank), kThreads, 0, on.stream>>>(
          Rows(idx), perm, m, rank, shifts_d.as<int64_t>() + r * rank,
          static_cast<int64_t*>(out_idx.raw_data()));
      CheckLaunch(on);
    }
    GatherValues(values.raw_data(), perm, m, size, out_values.raw_data(), on);
    piece_idx->push_back(std::move(out_idx));
    piece_values->push_back(std::move(out_values));
  }
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

std::vector<int64_t> RunHeads(const Tensor& idx, const std::vector<int>& dims,
                              std::vector<int64_t>* coords) {
  const On on(idx, "group");
  const int64_t n = idx.Dim(0);
  const int rank = static_cast<int>(idx.Dim(1));
  const int nd = static_cast<int>(dims.size());
  DeviceBuffer heads(8 * n, on.device);
  const DeviceBuffer dims_d = Upload(dims, on);
  const int64_t m =
      Select(n, GroupHeadAt{Rows(idx), dims_d.as<int>(), rank, nd}, heads.as<uint64_t>(), on);
  std::vector<int64_t> out(static_cast<size_t>(m));
  coords->assign(static_cast<size_t>(m * nd), 0);
  if (m == 0) return out;
  cb::Memcpy(out.data(), 0, heads.data(), on.device, 8 * m, cb::CopyKind::kDeviceToHost);
  if (nd > 0) {
    DeviceBuffer coords_d(8 * m * nd, on.device);
    CoordsKernel<<<Grid(m * nd), kThreads, 0, on.stream>>>(
        Rows(idx), heads.as<uint64_t>(), m, rank, dims_d.as<int>(), nd, coords_d.as<int64_t>());
    CheckLaunch(on);
    cb::Memcpy(coords->data(), 0, coords_d.data(), on.device, 8 * m * nd,
               cb::CopyKind::kDeviceToHost);
  }
  return out;
}

}  // namespace tensorkit::sparse_cuda
