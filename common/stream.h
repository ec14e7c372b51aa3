// tensorkit/common/stream.h: how tensorkit's CUDA work is ordered, and running it on a
// caller's stream. Includes no CUDA header: a cudaStream_t converts to cuda::Stream as it is.
//
// Glossary
//   current stream  per thread and per device, the stream every tensorkit operation on that
//                   device enqueues its kernels, copies, allocations and frees on. The default
//                   is CUDA's per-thread default stream (cudaStreamPerThread).
//   asynchronous    operations on CUDA tensors return once their work is enqueued; tensorkit
//                   waits only where the host needs a value (ToVector, a copy to the CPU, a
//                   result that decides an allocation).
//   StreamGuard     for a scope, makes a caller's stream (e.g. a host framework's) the current
//                   stream of one device in this thread, so tensorkit's work is ordered with
//                   the caller's; the previous stream is restored at the end of the scope.
//                   Memory freed inside the scope is returned on that stream, so a tensor
//                   allocated on one stream and still used on another needs a Synchronize first.
#ifndef TENSORKIT_COMMON_STREAM_H_
#define TENSORKIT_COMMON_STREAM_H_

#include "tensorkit/common/device.h"

struct CUstream_st;  // CUDA's stream object; cudaStream_t is CUstream_st*

namespace tensorkit::cuda {

using Stream = CUstream_st*;

// Waits until everything tensorkit enqueued on `device`'s current stream in this thread is done.
// Does nothing for the CPU; throws Error for a CUDA device that does not exist here.
void Synchronize(Device device);

// The current stream of `device` in this thread (cudaStreamPerThread unless a guard set one).
Stream CurrentStream(Device device);

class StreamGuard {
 public:
  // `device` must be a CUDA device that exists; `stream` a live stream created on it.
  StreamGuard(Device device, Stream stream);
  ~StreamGuard();
  StreamGuard(const StreamGuard&) = delete;
  StreamGuard& operator=(const StreamGuard&) = delete;

 private:
  Device device_;
  Stream previous_;
};

}  // namespace tensorkit::cuda

#endif  // TENSORKIT_COMMON_STREAM_H_
