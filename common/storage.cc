#include "tensorkit/common/storage.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <string>

#include "tensorkit/common/cpu_memory.h"
#include "tensorkit/common/cuda/backend.h"
#include "tensorkit/common/parallel.h"
#include "tensorkit/common/stream_order.h"

namespace tensorkit {

std::shared_ptr<Storage> Storage::Allocate(DType dtype, int64_t num_elements, Device device,
                                           bool zero) {
  TK_CHECK(num_elements >= 0, kInvalidArgument, "Storage::Allocate: negative element count ",
           num_elements);
  CheckDevice(device, "Storage::Allocate");
  const int64_t esize = DTypeSize(dtype);
  TK_CHECK(num_elements <= std::numeric_limits<int64_t>::max() / esize - kCpuAlignment,
           kResourceExhausted, "Storage::Allocate: ", num_elements, " elements of ",
           DTypeName(dtype), " overflow a 64-bit byte count; split the data into smaller tensors");
  TK_CHECK(dtype != DType::kString || device.is_cpu(), kUnsupported,
           "Storage::Allocate: string tensors live on the CPU only, not on ", device.ToString());
  std::shared_ptr<Storage> s(new Storage());
  s->device_ = device;
  s->dtype_ = dtype;
  s->size_bytes_ = num_elements * esize;
  const int64_t bytes = std::max<int64_t>(s->size_bytes_, 1);
  if (device.is_cpu()) {
    s->data_ = cpu_memory::Allocate(bytes);  // see Note [large block cache]
    TK_CHECK(s->data_ != nullptr, kResourceExhausted, "Storage::Allocate: cannot allocate ", bytes,
             " bytes on cpu (", num_elements, " elements of ", DTypeName(dtype),
             "); the system refused the memory");
    if (dtype == DType::kString) {
      auto* p = static_cast<std::string*>(s->data_);
      for (int64_t i = 0; i < num_elements; ++i) new (p + i) std::string();
      s->num_strings_ = num_elements;
    } else if (zero) {
      // Every thread zeroes a share of a large block (a 256 MB table gradient on one thread
      // costs more than the work that fills it); small ones in one memset.
      char* p = static_cast<char*>(s->data_);
      const int64_t n = s->size_bytes_;
      constexpr int64_t kPiece = int64_t{256} << 10;
      if (n < cpu_memory::kLargeBlockBytes) {
        std::memset(p, 0, static_cast<size_t>(n));
      } else {
        ParallelChunks(n, kPiece, [&](int64_t, int64_t b, int64_t e) {
          std::memset(p + b, 0, static_cast<size_t>(e - b));
        });
      }
    }
  } else {
    // Home is the stream the allocation is ordered on (Malloc uses the current stream too).
    auto uses = std::make_unique<stream_order::StreamUses>(
        device.index, common_cuda::CurrentStream(device.index));
    s->data_ = common_cuda::Malloc(bytes, device.index);
    s->uses_ = std::move(uses);
    if (zero) common_cuda::Memset0(s->data_, s->size_bytes_, device.index);
  }
  return s;
}

std::shared_ptr<Storage> Storage::Wrap(void* data, int64_t size_bytes, Device device,
                                       Deleter deleter, bool read_only) {
  TK_CHECK(size_bytes >= 0, kInvalidArgument, "Storage::Wrap: negative size ", size_bytes);
  TK_CHECK(data != nullptr || size_bytes == 0, kInvalidArgument,
           "Storage::Wrap: null pointer with size ", size_bytes);
  CheckDevice(device, "Storage::Wrap");
  std::shared_ptr<Storage> s(new Storage());
  s->data_ = data;
  s->size_bytes_ = size_bytes;
  s->device_ = device;
  s->deleter_ = deleter ? std::move(deleter) : Deleter([](void*) {});
  s->read_only_.store(read_only, std::memory_order_relaxed);
  if (device.is_cuda()) {
    s->uses_ = std::make_unique<stream_order::StreamUses>(device.index,
                                                          common_cuda::CurrentStream(device.index));
  }
  return s;
}

Storage::Storage() = default;

Storage::~Storage() {
  if (deleter_) {
    // The owner's stream (current at wrapping) first waits for tensorkit's work on the memory.
    if (uses_ != nullptr) uses_->OrderHomeAfterUsers(common_cuda::StreamRuntime());
    deleter_(data_);
    return;
  }
  if (data_ == nullptr) return;
  if (device_.is_cpu()) {
    auto* p = static_cast<std::string*>(data_);
    for (int64_t i = 0; i < num_strings_; ++i) p[i].~basic_string();
    cpu_memory::Free(data_, std::max<int64_t>(size_bytes_, 1));
  } else {
    uses_->Free(common_cuda::StreamRuntime(), data_);
  }
}

void Storage::NoteStreamUse() const {
  uses_->Use(common_cuda::StreamRuntime(), common_cuda::CurrentStream(device_.index));
}

void CopyBytes(void* dst, Device dst_device, const void* src, Device src_device, int64_t bytes) {
  using common_cuda::CopyKind;
  if (bytes <= 0) return;
  if (dst_device.is_cpu() && src_device.is_cpu()) {
    std::memcpy(dst, src, static_cast<size_t>(bytes));
    return;
  }
  const CopyKind kind = src_device.is_cpu()   ? CopyKind::kHostToDevice
                        : dst_device.is_cpu() ? CopyKind::kDeviceToHost
                                              : CopyKind::kDeviceToDevice;
  common_cuda::Memcpy(dst, dst_device.index, src, src_device.index, bytes, kind);
}

void ZeroBytes(void* dst, Device device, int64_t bytes) {
  if (bytes <= 0) return;
  if (device.is_cpu()) {
    std::memset(dst, 0, static_cast<size_t>(bytes));
  } else {
    common_cuda::Memset0(dst, bytes, device.index);
  }
}

void ReleaseCachedCpuMemory() { cpu_memory::ReleaseCached(); }

void ReleaseCachedCudaMemory() {
  if (common_cuda::Built()) common_cuda::ReleaseCached();
}

namespace {
void CheckCudaDevice(Device device, const char* op) {
  CheckDevice(device, op);
  TK_CHECK(device.is_cuda(), kInvalidArgument, op,
           ": the cpu has no CUDA memory pool; pass a CUDA device such as cuda:0");
}
}  // namespace

CudaMemoryStats CudaMemoryStatistics(Device device) {
  CheckCudaDevice(device, "CudaMemoryStatistics");
  const common_cuda::PoolStats p = common_cuda::PoolStatistics(device.index);
  return {p.reserved, p.used, p.reserved_peak, p.used_peak};
}

void ResetCudaMemoryPeaks(Device device) {
  CheckCudaDevice(device, "ResetCudaMemoryPeaks");
  common_cuda::ResetPoolPeaks(device.index);
}

}  // namespace tensorkit
