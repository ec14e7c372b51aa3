// Internal to the .cu files of the structural primitives (structure.h): what several of them
// share. Launch sizes and the call's device and stream (On), small host metadata handed to
// kernels (ArgArray), transfers of the few numbers the host waits for, and the CUB building
// blocks (first item with a property, select, stable radix sort of key words with a
// permutation, byte-wise gathers). Everything here is a template or inline, so each .cu file
// compiles what it uses.
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
#include "tensorkit/common/dtype.h"
#include "tensorkit/dense/tensor.h"
#include "tensorkit/sparse/cuda/structure.h"
#include "tensorkit/sparse/keys.h"

namespace tensorkit::sparse_cuda {

namespace cb = common_cuda;
namespace sk = sparse_keys;
using cb::DeviceBuffer;

inline constexpr int kThreads = 256;
inline constexpr int64_t kMaxBlocks = 1 << 16;  // grid-stride loops cover the rest

// Where a call runs: the tensors' device (made current for the call) and its current stream.
struct On {
  On(const Tensor& t, const char* name)
      : device(t.device().index), guard(device, name), stream(cb::Stream(device)), op(name) {}
  int device;
  cb::DeviceGuard guard;
  cudaStream_t stream;
  const char* op;
};

inline unsigned Grid(int64_t n) {
  return static_cast<unsigned>(sk::BlocksFor(n, kThreads, kMaxBlocks));
}

__device__ inline int64_t FirstItem() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ inline int64_t ItemStep() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

inline void CheckLaunch(const On& on) { TK_CUDA_CHECK(on.op, cudaGetLastError()); }

// ---------------------------------------------------------------------------------------------
// Metadata for kernels (the Glossary's ArgArray)
// ---------------------------------------------------------------------------------------------

// `host` (pageable: a std::vector) in device memory, nothing for an empty vector. The host does
// not wait: cudaMemcpyAsync has staged a pageable source when it returns, so the vector may go
// at once, and the kernels that read the copy are enqueued after it on the same stream.
template <typename T>
DeviceBuffer Upload(const std::vector<T>& host, const On& on) {
  const int64_t bytes = static_cast<int64_t>(host.size() * sizeof(T));
  DeviceBuffer b(bytes, on.device);
  if (bytes > 0) {
    TK_CUDA_CHECK(on.op, cudaMemcpyAsync(b.data(), host.data(), static_cast<size_t>(bytes),
                                         cudaMemcpyHostToDevice, on.stream));
  }
  return b;
}

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

template <typename T>
T FetchOne(const T* p, const On& on) {
  T v{};
  cb::Memcpy(&v, 0, p, on.device, sizeof(T), cb::CopyKind::kDeviceToHost);
  return v;
}

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

// CUB keeps a copy of the predicate in every thread; one carrying ArgArrays (larger than this)
// would be copied to local memory, so it is evaluated into flags by FlagKernel instead, which
// reads its parameter in place.
inline constexpr size_t kCopiedPredicateBytes = 64;
static_assert(sizeof(ArgArray<int>) > kCopiedPredicateBytes,
              "every predicate with an ArgArray takes the flag path");

template <typename Pred>
__global__ void FlagKernel(int64_t n, Pred pred, unsigned char* flags) {
  for (int64_t i = FirstItem(); i < n; i += ItemStep()) flags[i] = pred(i) ? 1 : 0;
}

// Positions i < n with pred(i), ascending, into `out` (room for every selected one); how many
// into *count on the device. Nothing waits.
template <typename Pred>
void SelectInto(int64_t n, const Pred& pred, uint64_t* out, int64_t* count, const On& on) {
  if (n <= 0) {
    TK_CUDA_CHECK(on.op, cudaMemsetAsync(count, 0, 8, on.stream));
    return;
  }
  const thrust::counting_iterator<int64_t> first(0);
  size_t temp = 0;
  if constexpr (sizeof(Pred) <= kCopiedPredicateBytes) {
    TK_CUDA_CHECK(on.op,
                  cub::DeviceSelect::If(nullptr, temp, first, out, count, n, pred, on.stream));
    DeviceBuffer scratch(static_cast<int64_t>(temp), on.device);
    TK_CUDA_CHECK(
        on.op, cub::DeviceSelect::If(scratch.data(), temp, first, out, count, n, pred, on.stream));
  } else {
    DeviceBuffer flags(n, on.device);
    FlagKernel<<<Grid(n), kThreads, 0, on.stream>>>(n, pred, flags.as<unsigned char>());
    CheckLaunch(on);
    const unsigned char* f = flags.as<unsigned char>();
    TK_CUDA_CHECK(on.op,
                  cub::DeviceSelect::Flagged(nullptr, temp, first, f, out, count, n, on.stream));
    DeviceBuffer scratch(static_cast<int64_t>(temp), on.device);
    TK_CUDA_CHECK(on.op, cub::DeviceSelect::Flagged(scratch.data(), temp, first, f, out, count, n,
                                                    on.stream));
  }
}

// The same, returning how many (fetched).
template <typename Pred>
int64_t Select(int64_t n, const Pred& pred, uint64_t* out, const On& on) {
  if (n <= 0) return 0;
  DeviceBuffer count(8, on.device);
  SelectInto(n, pred, out, count.as<int64_t>(), on);
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
