// Internal, for .cu files only: what every grid-stride kernel launch of sparse/ and features/
// shares. Where a call runs (On: the tensor's device made current, its current stream), the
// launch geometry, uploads of small host arrays and fetches of single numbers, and selecting
// positions with CUB. Everything here is a template or inline, so each .cu file compiles what it
// uses.
//
// Glossary
//   grid-stride loop  `for (i = FirstItem(); i < n; i += ItemStep())`: Grid(n) blocks of kThreads
//                     threads cover any n (at most kMaxBlocks blocks; each thread takes every
//                     ItemStep()-th item).
//   fetched           copied to the host, which waits for the stream there: FetchOne and Select.
//                     Only a count that sizes an output, an answer the caller returns or a
//                     check's verdict is fetched.
#ifndef TENSORKIT_COMMON_CUDA_LAUNCH_CUH_
#define TENSORKIT_COMMON_CUDA_LAUNCH_CUH_

#include <cuda_runtime.h>
#include <thrust/iterator/counting_iterator.h>

#include <cstdint>
#include <cub/cub.cuh>
#include <vector>

#include "tensorkit/common/cuda/cuda_util.h"
#include "tensorkit/common/cuda/device_buffer.h"
#include "tensorkit/common/host_device.h"

namespace tensorkit::common_cuda {

inline constexpr int kThreads = 256;
inline constexpr int64_t kMaxBlocks = 1 << 16;  // grid-stride loops cover the rest

// Where a call runs: the tensors' device (made current for the call) and its current stream.
// `t` is anything with device() (a Tensor).
struct On {
  On(int device_index, const char* name)
      : device(device_index), guard(device, name), stream(Stream(device)), op(name) {}
  template <typename T>
  On(const T& t, const char* name) : On(t.device().index, name) {}
  int device;
  DeviceGuard guard;
  cudaStream_t stream;
  const char* op;
};

inline unsigned Grid(int64_t n) {
  return static_cast<unsigned>(BlocksFor(n, kThreads, kMaxBlocks));
}

__device__ inline int64_t FirstItem() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ inline int64_t ItemStep() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

inline void CheckLaunch(const On& on) { TK_CUDA_CHECK(on.op, cudaGetLastError()); }

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

template <typename T>
T FetchOne(const T* p, const On& on) {
  T v{};
  Memcpy(&v, 0, p, on.device, sizeof(T), CopyKind::kDeviceToHost);
  return v;
}

// CUB keeps a copy of the predicate in every thread; one carrying ArgArrays (larger than this)
// would be copied to local memory, so it is evaluated into flags by FlagKernel instead, which
// reads its parameter in place.
inline constexpr size_t kCopiedPredicateBytes = 64;

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

}  // namespace tensorkit::common_cuda

#endif  // TENSORKIT_COMMON_CUDA_LAUNCH_CUH_
