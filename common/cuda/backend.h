// Internal: the CUDA runtime calls the common layer needs, behind a header with no CUDA include
// so that device.cc and storage.cc compile the same with and without CUDA. Implemented in
// cuda/runtime.cu, or in no_gpu/runtime_stub.cc (throwing "built without CUDA"). Lives in
// cuda/, which is never installed.
//
// Glossary
//   current stream  the stream every tensorkit operation on a device enqueues on, per thread:
//                   the thread's own stream from tensorkit's pool unless a cuda::StreamGuard set
//                   another (common/stream.h).
//   asynchronous    allocation, zeroing, device-to-device copies and kernels are only enqueued;
//                   a copy to the host waits for the stream, since the host reads the result.
//   host wait       a call that blocks the host until device work is done. Each one adds one to
//                   SynchronizationCount(), which tests use to hold operations to their budget.
#ifndef TENSORKIT_COMMON_CUDA_BACKEND_H_
#define TENSORKIT_COMMON_CUDA_BACKEND_H_

#include <cstdint>
#include <string>

namespace tensorkit {
namespace stream_order {
class Runtime;
}

namespace common_cuda {

enum class CopyKind { kHostToDevice, kDeviceToHost, kDeviceToDevice };

bool Built();
int DeviceCount();
// Why no device is visible when DeviceCount() is 0 (no driver, a driver older than the runtime,
// no GPU), with the fix; empty when there are devices.
std::string NoDeviceReason();
// Stream-ordered allocation on the current stream of `device`; out of memory is an Error with
// code kResourceExhausted.
void* Malloc(int64_t bytes, int device);
// Stream-ordered free on the current stream (scratch memory used on that stream only); never
// throws (it runs in destructors), errors are dropped.
void Free(void* ptr, int device) noexcept;
// Copies `bytes`; `dst_device`/`src_device` are the CUDA devices of the sides that are on one
// (ignored for the host side). Returns when the host may use (or reuse) its side: a copy to the
// host waits for it, one from pageable host memory returns once the driver staged the source,
// one from pinned host memory waits for the copy. Between two devices nothing waits: the copy
// runs on the destination's current stream after the source's current stream's work, and the
// source's stream then waits for the copy, so later writes or frees there come after it.
void Memcpy(void* dst, int dst_device, const void* src, int src_device, int64_t bytes,
            CopyKind kind);
void Memset0(void* dst, int64_t bytes, int device);
// Waits for the current stream of `device`.
void Synchronize(int device);
// The current stream of `device` in this thread (a cudaStream_t), and setting it.
void* CurrentStream(int device);
void SetCurrentStream(int device, void* stream);
// Throws Error (kInvalidArgument) naming `op` when `stream` is a stream of a device other than
// `device` (the legacy and per-thread default handles belong to every device).
void CheckStreamDevice(int device, void* stream, const char* op);
// The runtime behind the stream bookkeeping of device storage (common/stream_order.h).
stream_order::Runtime& StreamRuntime();
// Host waits so far in this process (see the glossary).
uint64_t SynchronizationCount();
// The stream-ordered pool of `device`: bytes reserved from the driver and in use, now and at
// their peak since the last ResetPeaks.
struct PoolStats {
  int64_t reserved = 0, used = 0, reserved_peak = 0, used_peak = 0;
};
PoolStats PoolStatistics(int device);
void ResetPoolPeaks(int device);
// How many cuBLAS and cuSPARSE handles and cuBLAS workspaces (one per stream) `device` has made
// so far (for tests).
struct LibraryHandleCounts {
  uint64_t cublas = 0, cusparse = 0, cublas_workspaces = 0;
};
LibraryHandleCounts LibraryHandles(int device);
// Waits for every device tensorkit used, then returns the pools' unused memory to the driver.
void ReleaseCached();
// Loads cuBLAS and cuSPARSE now rather than on first use (cuda/libraries.h); throws Error
// (kUnsupported) naming `op`, the library file and the fix when one cannot be loaded.
void LoadLibraries(const char* op);

}  // namespace common_cuda
}  // namespace tensorkit

#endif  // TENSORKIT_COMMON_CUDA_BACKEND_H_
