// tensorkit/common/storage.h: reference-counted memory on one device.
//
// Glossary
//   Storage     one allocation (or one wrapped external buffer) on one device. Tensors hold it
//               through std::shared_ptr, so views share it and the last owner frees it.
//   external    memory tensorkit does not own (DLPack, a host framework's buffer); a deleter
//               given at wrapping time runs when the last reference goes.
//   CPU memory is 64-byte aligned (large blocks 2 MiB aligned, on huge pages, and reused after
//   they are freed); CUDA memory comes from the stream-ordered allocator.
//   kString storage holds constructed std::string objects and destroys them when freed.
#ifndef TENSORKIT_COMMON_STORAGE_H_
#define TENSORKIT_COMMON_STORAGE_H_

#include <cstdint>
#include <functional>
#include <memory>

#include "tensorkit/common/device.h"
#include "tensorkit/common/dtype.h"

namespace tensorkit {

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
  // when the Storage is destroyed.
  static std::shared_ptr<Storage> Wrap(void* data, int64_t size_bytes, Device device,
                                       Deleter deleter);

  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  int64_t size_bytes() const { return size_bytes_; }
  Device device() const { return device_; }
  bool owns_memory() const { return !deleter_; }

 private:
  Storage() = default;
  void* data_ = nullptr;
  int64_t size_bytes_ = 0;
  Device device_;
  DType dtype_ = DType::kUInt8;  // for destroying strings
  int64_t num_strings_ = 0;
  Deleter deleter_;
};

// Copies `bytes` bytes between any two devices (host<->device, device<->device).
void CopyBytes(void* dst, Device dst_device, const void* src, Device src_device, int64_t bytes);
// Zero-fills `bytes` bytes on `device`.
void ZeroBytes(void* dst, Device device, int64_t bytes);
// Gives back to the system the large CPU blocks that freed tensors left for reuse (at most 1/16
// of physical memory, 4 GiB, is kept; see common/cpu_memory.h). For long-lived processes that
// want their memory back after a burst of big tensors.
void ReleaseCachedCpuMemory();

}  // namespace tensorkit

#endif  // TENSORKIT_COMMON_STORAGE_H_
