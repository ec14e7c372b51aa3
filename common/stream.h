// tensorkit/common/stream.h: how tensorkit's CUDA work is ordered, and running it on a
// caller's stream. Includes no CUDA header: a cudaStream_t converts to cuda::Stream as it is.
//
// Glossary
//   current stream  per thread and per device, the stream every tensorkit operation on that
//                   device enqueues its kernels, copies, allocations and frees on. By default
//                   each thread has its own stream, taken on first use from a pool of 32 per
//                   device that tensorkit makes and keeps (blocking with respect to the legacy
//                   default stream, as cudaStreamPerThread is; threads beyond 32 share).
//   asynchronous    operations on CUDA tensors return once their work is enqueued; tensorkit
//                   waits only where the host needs a value (ToVector, a copy to the CPU, a
//                   count that decides an allocation). SynchronizationCount() counts the waits.
//   StreamGuard     for a scope, makes a caller's stream (e.g. a host framework's) the current
//                   stream of one device in this thread, so tensorkit's work is ordered with
//                   the caller's; the previous stream is restored at the end of the scope.
//
// Note [tensors across streams and threads]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// A CUDA tensor's memory remembers the stream it was made on (its home) and every other stream
// tensorkit used it on. What tensorkit does, so that you need not:
//   - Freeing is always safe. The memory goes back to the pool only after the work of every
//     stream that used it, whichever thread drops the last reference and whatever stream is
//     current then: a tensor read under a StreamGuard may be dropped after the guard, one made
//     in one thread may be read and dropped in another.
//   - Handing over is safe. The first time another stream uses a tensor, that stream waits
//     (on the device, not the host) for the work enqueued on the tensor's home before the use:
//     a tensor made in one thread and passed to another, or made outside a guard and used
//     inside one, is complete for its new user.
//   - Copies between two devices wait for the source's stream and make it wait for the copy.
// What stays yours: a tensor written in place (Assign, the output of an op that writes into
// it) on one stream while another stream already uses it must be ordered by you, e.g. with
// cuda::Synchronize in the writer's thread before the reader goes on, or with a CUDA event.
// A stream given to a StreamGuard must outlive the tensors used on it (their frees are ordered
// after it). cudaStreamPerThread given to a guard cannot be ordered from another thread, so a
// tensor that saw it is freed after a device synchronisation.
#ifndef TENSORKIT_COMMON_STREAM_H_
#define TENSORKIT_COMMON_STREAM_H_

#include <cstdint>

#include "tensorkit/common/device.h"

struct CUstream_st;  // CUDA's stream object; cudaStream_t is CUstream_st*

namespace tensorkit::cuda {

using Stream = CUstream_st*;

// Waits until everything tensorkit enqueued on `device`'s current stream in this thread is done.
// Does nothing for the CPU; throws Error for a CUDA device that does not exist here.
void Synchronize(Device device);

// The current stream of `device` in this thread (this thread's pool stream unless a guard set
// one).
Stream CurrentStream(Device device);

// How many times tensorkit has made the host wait for a device (stream or device
// synchronisations, copies to the host, counts fetched to size an output) in this process. For
// tests and profiling: the difference around a call is that call's host waits. 0 without CUDA.
uint64_t SynchronizationCount();

class StreamGuard {
 public:
  // `device` must be a CUDA device that exists; `stream` a live stream created on it (or one of
  // CUDA's default-stream handles): a stream of another device is an Error at once.
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
