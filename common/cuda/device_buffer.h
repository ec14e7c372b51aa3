// Internal: scratch memory on a CUDA device that frees itself.
//
// Glossary
//   DeviceBuffer  `bytes` of stream-ordered device memory (backend.h Malloc on the current
//                 stream of `device`), freed on the current stream when it goes out of scope.
//                 Kernels enqueued before the free still see the memory (stream order), so a
//                 scratch buffer may die as soon as the last kernel using it is enqueued.
//                 Move-only; zero bytes allocate nothing.
#ifndef TENSORKIT_COMMON_CUDA_DEVICE_BUFFER_H_
#define TENSORKIT_COMMON_CUDA_DEVICE_BUFFER_H_

#include <cstdint>
#include <utility>

#include "tensorkit/common/cuda/backend.h"

namespace tensorkit::common_cuda {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(int64_t bytes, int device)
      : data_(bytes > 0 ? Malloc(bytes, device) : nullptr), bytes_(bytes), device_(device) {}
  ~DeviceBuffer() { Release(); }
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)),
        bytes_(std::exchange(other.bytes_, 0)),
        device_(other.device_) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      Release();
      data_ = std::exchange(other.data_, nullptr);
      bytes_ = std::exchange(other.bytes_, 0);
      device_ = other.device_;
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* data() const { return data_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(data_);
  }
  int64_t bytes() const { return bytes_; }
  int device() const { return device_; }

 private:
  void Release() noexcept {
    if (data_ != nullptr) Free(data_, device_);
    data_ = nullptr;
    bytes_ = 0;
  }

  void* data_ = nullptr;
  int64_t bytes_ = 0;
  int device_ = 0;
};

}  // namespace tensorkit::common_cuda

#endif  // TENSORKIT_COMMON_CUDA_DEVICE_BUFFER_H_
