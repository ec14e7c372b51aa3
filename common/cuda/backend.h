// Internal: the CUDA runtime calls the common layer needs, behind a header with no CUDA include
// so that device.cc and storage.cc compile the same with and without CUDA. Implemented in
// cuda/runtime.cu, or in no_gpu/runtime_stub.cc (throwing "built without CUDA"). Lives in
// cuda/, which is never installed.
//
// Glossary
//   current stream  the stream every tensorkit operation on a device enqueues on, per thread:
//                   the per-thread default stream unless a cuda::StreamGuard set another.
//   asynchronous    allocation, zeroing, device-to-device copies and kernels are only enqueued;
//                   a copy to the host waits for the stream, since the host reads the result.
#ifndef TENSORKIT_COMMON_CUDA_BACKEND_H_
#define TENSORKIT_COMMON_CUDA_BACKEND_H_

#include <cstdint>

namespace tensorkit::common_cuda {

enum class CopyKind { kHostToDevice, kDeviceToHost, kDeviceToDevice };

bool Built();
int DeviceCount();
// Stream-ordered allocation on the current stream of `device`; out of memory is an Error with
// code kResourceExhausted.
void* Malloc(int64_t bytes, int device);
// Stream-ordered free; never throws (it runs in destructors), errors are dropped.
void Free(void* ptr, int device) noexcept;
// Copies `bytes`; `dst_device`/`src_device` are the CUDA devices of the sides that are on one
// (ignored for the host side). Returns when the host may use (or reuse) its side.
void Memcpy(void* dst, int dst_device, const void* src, int src_device, int64_t bytes,
            CopyKind kind);
void Memset0(void* dst, int64_t bytes, int device);
// Waits for the current stream of `device`.
void Synchronize(int device);
// The current stream of `device` in this thread (a cudaStream_t), and setting it.
void* CurrentStream(int device);
void SetCurrentStream(int device, void* stream);
// Loads cuBLAS and cuSPARSE now rather than on first use (cuda/libraries.h); throws Error
// (kUnsupported) naming `op`, the library file and the fix when one cannot be loaded.
void LoadLibraries(const char* op);

}  // namespace tensorkit::common_cuda

#endif  // TENSORKIT_COMMON_CUDA_BACKEND_H_
