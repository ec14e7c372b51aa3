// tensorkit/common/storage.h: reference-counted memory on one device.
//
// Glossary
//   Storage     one allocation (or one wrapped external buffer) on one device. Tensors hold it
//               through std::shared_ptr, so views share it and the last owner frees it.
//   external    memory tensorkit does not own (DLPack, a host framework's buffer); a deleter
//               given at wrapping time runs when the last reference goes.
//   read-only   memory that must not be written (Arrow buffers, a NumPy array with
//               writeable=False): a flag its wrapper sets. Views share it with the Storage.
//               The library's operations do not consult it (an output is written as given);
//               exporters do (the Python package's buffer protocol and DLPack 1.x capsule say
//               read-only, and the older DLPack capsule, which cannot, refuses).
//   CPU memory is 64-byte aligned (large blocks 2 MiB aligned, on huge pages, and reused after
//   they are freed); CUDA memory comes from the stream-ordered allocator, on the current
//   stream, and its pool keeps freed memory for reuse until ReleaseCachedCudaMemory.
//   stream uses  CUDA storage records the streams its memory is used on (each data() call
//               from a stream other than the one it was made on) and is freed only after the
//               work of all of them; see common/stream.h for the rule.
//   kString storage holds constructed std::string objects and destroys them when freed.
#ifndef TENSORKIT_COMMON_STORAGE_H_
#define TENSORKIT_COMMON_STORAGE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>

#include "tensorkit/common/device.h"
#include "tensorkit/common/dtype.h"

namespace tensorkit {
namespace stream_order {
class StreamUses;
}

inline constexpr int64_t kCpuAlignment = 64;

class Storage {
 public:
  using Deleter = std::function<void(void*)>;

  // Allocates room for `num_elements` of `dtype` on `device`; zero-fills when `zero` (strings
  // are always constructed empty). Throws Error for negative or overflowing sizes, for a device
  // that does not exist, and when the memory cannot be had.
  static std::shared_ptr<Storage> Allocate(DType dtype, int64_t num_elements, Device device,
                                           bool zero = false);
  // Wraps `data` (size_bytes long, on `device`) without copying; `deleter` (may be empty) runs
  // when the Storage is destroyed. `read_only`: see the glossary.
  static std::shared_ptr<Storage> Wrap(void* data, int64_t size_bytes, Device device,
                                       Deleter deleter, bool read_only = false);

  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  // The memory. For CUDA storage this also records the current stream as a user (see the
  // glossary): call it in the thread and under the stream that will enqueue the work.
  void* data() const {
    if (uses_ != nullptr) NoteStreamUse();
    return data_;
  }
  int64_t size_bytes() const { return size_bytes_; }
  Device device() const { return device_; }
  bool owns_memory() const { return !deleter_; }
  // Whether the memory must not be written (see the glossary).
  bool read_only() const { return read_only_.load(std::memory_order_relaxed); }
  // Marks the memory read-only, for storage that another wrapper made (WrapExternal,
  // FromDLPack); there is no way back. Mark it before handing the Storage out: views exported
  // writable earlier stay so.
  void MarkReadOnly() { read_only_.store(true, std::memory_order_relaxed); }

 private:
  Storage();
  void NoteStreamUse() const;
  void* data_ = nullptr;
  int64_t size_bytes_ = 0;
  Device device_;
  DType dtype_ = DType::kUInt8;  // for destroying strings
  int64_t num_strings_ = 0;
  Deleter deleter_;
  std::atomic<bool> read_only_{false};
  std::unique_ptr<stream_order::StreamUses> uses_;  // CUDA storage only
};

// Copies `bytes` bytes between any two devices (host<->device, device<->device).
void CopyBytes(void* dst, Device dst_device, const void* src, Device src_device, int64_t bytes);
// Zero-fills `bytes` bytes on `device`.
void ZeroBytes(void* dst, Device device, int64_t bytes);
// Gives back to the system the large CPU blocks that freed tensors left for reuse (at most 1/16
// of physical memory, 4 GiB, is kept; see common/cpu_memory.h). For long-lived processes that
// want their memory back after a burst of big tensors.
void ReleaseCachedCpuMemory();
// The same for CUDA: waits for the work of every device tensorkit used, then returns the memory
// that freed tensors left in the devices' stream-ordered pools to the driver (the pools keep all
// of it otherwise, so that the next allocation does not map memory again). Does nothing in a
// build without CUDA. Throws Error when a device reports a failure.
void ReleaseCachedCudaMemory();

// The stream-ordered pool of one CUDA device, in bytes: `reserved` is held from the driver,
// `used` is in live allocations (tensors and tensorkit's scratch); the peaks are the highest
// values since the process started or ResetCudaMemoryPeaks. Throws Error for the CPU, in a build
// without CUDA and for a device that does not exist.
struct CudaMemoryStats {
  int64_t reserved_bytes = 0;
  int64_t used_bytes = 0;
  int64_t reserved_peak_bytes = 0;
  int64_t used_peak_bytes = 0;
};
CudaMemoryStats CudaMemoryStatistics(Device device);
void ResetCudaMemoryPeaks(Device device);

}  // namespace tensorkit

#endif  // TENSORKIT_COMMON_STORAGE_H_
