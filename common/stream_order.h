// Internal: the stream bookkeeping of one device buffer, so that its memory is never returned
// (or handed to a new allocation) while work on some stream may still use it. Plain C++ with no
// CUDA include: storage.cc keeps one per CUDA Storage, cuda/runtime.cu supplies the real
// Runtime, and tests/common/stream_order_test.cc checks the rules with a fake one.
//
// Glossary
//   home        the stream that was current when the buffer was allocated (or wrapped). Its
//               memory goes back to the pool on home, the stream that stream-ordered allocation
//               ties it to.
//   user        any other stream on which tensorkit enqueued work that read or wrote the buffer
//               (recorded at each access through Storage::data(); see common/stream.h).
//   Order(a, b) `b` waits, on the device, for the work enqueued on `a` so far (an event recorded
//               on a, waited on by b); the host does not wait.
//   per-thread  cudaStreamPerThread: a handle whose meaning depends on the calling thread, so it
//               cannot be ordered from another thread. A buffer that saw it is freed after a
//               device synchronisation instead.
//
// Note [stream-ordered lifetimes]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// The rules, which cover a tensor used under a StreamGuard and freed after it, a tensor made in
// one thread and used or freed in another, and the source of a copy between two devices:
//   1. First use on a new stream: the first time a stream other than home (or a user already
//      seen) touches the buffer, it waits for the work enqueued on home so far. A tensor
//      produced on one stream and handed over after the producer enqueued its work (a thread
//      hand-off always is) is complete for its new user. Later accesses add nothing, so streams
//      sharing a read-only tensor stay concurrent.
//   2. Free: home waits for every user, then the memory is freed on home. Frees never block
//      the host (except after a per-thread handle: a device synchronisation).
//   3. Wrapped memory (DLPack, a host framework's buffer): home is the stream current at
//      wrapping; before the owner's deleter runs, home waits for every user, so an owner that
//      frees stream-ordered on that stream frees after tensorkit's work.
#ifndef TENSORKIT_COMMON_STREAM_ORDER_H_
#define TENSORKIT_COMMON_STREAM_ORDER_H_

#include <mutex>
#include <vector>

namespace tensorkit::stream_order {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

using StreamId = void*;  // a cudaStream_t

// The runtime calls the bookkeeping needs (cuda/runtime.cu; a fake in the tests).
class Runtime {
 public:
  // `after` (a stream of `after_device`) waits for the work enqueued on `before` (a stream of
  // `before_device`) so far. May throw Error.
  virtual void Order(int before_device, StreamId before, int after_device, StreamId after) = 0;
  // Returns `ptr` to the pool of `device`, stream-ordered on `stream`. Never throws.
  virtual void FreeAsync(int device, void* ptr, StreamId stream) noexcept = 0;
  // The host waits for all work on `device`. Never throws (errors are dropped).
  virtual void SynchronizeDevice(int device) noexcept = 0;
  // True for handles whose stream depends on the calling thread.
  virtual bool IsPerThread(StreamId stream) const = 0;

 protected:
  ~Runtime() = default;
};

class StreamUses {
 public:
  StreamUses(int device, StreamId home) : device_(device), home_(home) {}
  StreamUses(const StreamUses&) = delete;
  StreamUses& operator=(const StreamUses&) = delete;

  // An access from work about to be enqueued on `stream` (a stream of this buffer's device):
  // rule 1. Thread-safe. Throws Error when the runtime cannot order the streams.
  void Use(Runtime& rt, StreamId stream);
  // Rule 2: frees `ptr` after every use. Never throws; call once, when the last owner goes.
  void Free(Runtime& rt, void* ptr) noexcept;
  // Rule 3: orders home after every user (before a wrapped buffer's deleter). Never throws.
  void OrderHomeAfterUsers(Runtime& rt) noexcept;

  int device() const { return device_; }
  StreamId home() const { return home_; }
  // The users recorded so far, in the order of their first use (for tests and diagnostics).
  std::vector<StreamId> Users() const;

 private:
  // Home waits for every user; where that cannot be done by events (a per-thread handle, or a
  // runtime call that failed) the host waits for the whole device instead.
  void OrderAfterUsers(Runtime& rt) noexcept;

  const int device_;
  const StreamId home_;
  mutable std::mutex mutex_;
  std::vector<StreamId> users_;  // distinct, never home; empty for most buffers
  bool saw_per_thread_ = false;
};

}  // namespace tensorkit::stream_order

#endif  // TENSORKIT_COMMON_STREAM_ORDER_H_
