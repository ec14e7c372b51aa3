// Internal to the .cu files of the structural primitives (structure.h): what several of them
// share, beside common/cuda/launch.cuh (the call's device and stream On, launch sizes, uploads,
// FetchOne and Select, shared with features/): small host metadata handed to kernels
// (ArgArray), row fetches, and the CUB building blocks (first item with a property, stable
// radix sort of key words with a permutation, byte-wise gathers). Everything here is a template or
// inline, so each .cu file compiles what it uses.
//
// Glossary
//   metadata     a few host numbers a kernel reads for every entry: shapes, dims, strides, an
//                axis order, key-word layouts, a box, piece starts.
//   ArgArray     metadata by value in the kernel's parameters (at most kArgCapacity numbers):
//                nothing is copied and nothing waits. A longer list is copied to device memory
//                by Upload instead, still without a wait; kernels read either through data().
//   fetched      copied to the host, which waits for the stream there: FetchOne, FetchRow,
//                Select and MinOver. Only a count that sizes an output, an answer the caller
//                returns or a check's verdict is fetched (structure.h, "fetched").
#ifndef TENSORKIT_SPARSE_CUDA_STRUCTURE_COMMON_CUH_
#define TENSORKIT_SPARSE_CUDA_STRUCTURE_COMMON_CUH_

#include <thrust/iterator/counting_iterator.h>

#include <cstdint>
#include <cub/cub.cuh>
#include <vector>

#include "tensorkit/common/cuda/cuda_util.h"
#include "tensorkit/common/cuda/device_buffer.h"
#include "tensorkit/common/cuda/launch.cuh"
#include "tensorkit/common/dtype.h"
#include "tensorkit/dense/tensor.h"
#include "tensorkit/sparse/cuda/structure.h"
#include "tensorkit/sparse/keys.h"

namespace tensorkit::sparse_cuda {

namespace cb = common_cuda;
namespace sk = sparse_keys;
using cb::CheckLaunch;
using cb::DeviceBuffer;
using cb::FetchOne;
using cb::FirstItem;
using cb::Grid;
using cb::ItemStep;
using cb::kMaxBlocks;
using cb::kThreads;
using cb::On;
using cb::Select;
using cb::SelectInto;
using cb::Upload;

// ---------------------------------------------------------------------------------------------
// Metadata for kernels (the Glossary's ArgArray)
// ---------------------------------------------------------------------------------------------

// Numbers by value: 64 covers every rank in practice and every dense rank (kMaxAxes), and keeps
// a kernel's parameters (at most three such arrays, about 1.1 KiB) far below the 4 KiB limit.
inline constexpr int kArgCapacity = 64;

// A kernel parameter: `size` numbers in v, or (more than N) in device memory at dev.
template <typename T, int N = kArgCapacity>
struct ArgArray {
  T v[N];
  const T* dev;
  int64_t size;
  __host__ __device__ const T* data() const { return dev != nullptr ? dev : v; }
};
// Select (common/cuda/launch.cuh) evaluates large predicates into flags first.
static_assert(sizeof(ArgArray<int>) > cb::kCopiedPredicateBytes,
              "every predicate with an ArgArray takes the flag path");

// The host side of an ArgArray: the numbers copied in, or uploaded when they do not fit (the
// buffer lives as long as this, which outlives the launches that read it).
template <typename T, int N = kArgCapacity>
class KernelArray {
 public:
  KernelArray(const std::vector<T>& host, const On& on) {
    arg_.size = static_cast<int64_t>(host.size());
    if (host.size() <= static_cast<size_t>(N)) {
      for (size_t i = 0; i < host.size(); ++i) arg_.v[i] = host[i];
    } else {
      buffer_ = Upload(host, on);
      arg_.dev = buffer_.as<T>();
    }
  }
  const ArgArray<T, N>& arg() const { return arg_; }

 private:
  ArgArray<T, N> arg_{};  // zeros, dev null
  DeviceBuffer buffer_;
};

// ---------------------------------------------------------------------------------------------
// Fetches (the host waits)
// ---------------------------------------------------------------------------------------------

// Row `i` of device rows `idx`, fetched.
inline std::vector<int64_t> FetchRow(const Tensor& idx, int64_t i, const On& on) {
  const int rank = static_cast<int>(idx.Dim(1));
  std::vector<int64_t> row(static_cast<size_t>(rank));
  if (rank > 0) {
    cb::Memcpy(row.data(), 0, static_cast<const int64_t*>(idx.raw_data()) + i * rank, on.device,
               rank * 8, cb::CopyKind::kDeviceToHost);
  }
  return row;
}

inline const int64_t* Rows(const Tensor& idx) {
  return static_cast<const int64_t*>(idx.raw_data());
}

// True when positions below n fit 32-bit permutations (half the sort's traffic).
inline bool FitsUint32(int64_t n) { return n <= int64_t{1} << 32; }

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

// ---------------------------------------------------------------------------------------------
// Selecting positions (CUB DeviceSelect over a counting iterator)
// ---------------------------------------------------------------------------------------------

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

// The key-word layout (sk::KeyWords) by axis, for the kernels.
struct KeyLayout {
  KeyLayout(const sk::KeyWords& kw, const On& on) : word(kw.word, on), shift(kw.shift, on) {}
  KernelArray<int> word, shift;
};

template <typename P>
__global__ void PackFirstKernel(const int64_t* idx, int64_t n, int rank, ArgArray<int> word,
                                ArgArray<int> shift, uint64_t* keys, P* perm) {
  const int* wd = word.data();
  const int* sh = shift.data();
  for (int64_t i = FirstItem(); i < n; i += ItemStep()) {
    keys[i] = sk::PackWord(idx + i * rank, rank, wd, sh, 0);
    perm[i] = static_cast<P>(i);
  }
}

template <typename P>
__global__ void PackGatherKernel(const int64_t* idx, int64_t n, int rank, ArgArray<int> word,
                                 ArgArray<int> shift, int w, const P* perm, uint64_t* keys) {
  const int* wd = word.data();
  const int* sh = shift.data();
  for (int64_t i = FirstItem(); i < n; i += ItemStep()) {
    keys[i] = sk::PackWord(idx + static_cast<int64_t>(perm[i]) * rank, rank, wd, sh, w);
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

// The stable permutation of n device rows by the key words kw (laid out for the kernels in
// `layout`; last word sorted left in s->keys).
template <typename P>
void SortRows(const int64_t* idx, int64_t n, int rank, const sk::KeyWords& kw,
              const KeyLayout& layout, PermSort<P>* s, const On& on) {
  PackFirstKernel<P><<<Grid(n), kThreads, 0, on.stream>>>(
      idx, n, rank, layout.word.arg(), layout.shift.arg(), s->keys.Current(), s->perm.Current());
  CheckLaunch(on);
  for (int w = 0; w < kw.num_words(); ++w) {  // least significant word first: LSD, stable
    if (w > 0) {
      PackGatherKernel<P>
          <<<Grid(n), kThreads, 0, on.stream>>>(idx, n, rank, layout.word.arg(), layout.shift.arg(),
                                                w, s->perm.Current(), s->keys.Current());
      CheckLaunch(on);
    }
    SortPairs(s, n, kw.bits[w], on);
  }
}

// ptr[k] = the first of n rows (of `rank` numbers, sorted by column `axis`) whose index on
// `axis` is >= k, for k <= num (structure_rows.cu).
void LowerBounds(const int64_t* idx, int64_t n, int rank, int axis, int64_t num, int64_t* ptr,
                 const On& on);

}  // namespace tensorkit::sparse_cuda

#endif  // TENSORKIT_SPARSE_CUDA_STRUCTURE_COMMON_CUH_
