#include "tensorkit/common/device.h"

#include "tensorkit/common/cuda/backend.h"
#include "tensorkit/common/error.h"
#include "tensorkit/common/stream.h"

namespace tensorkit {

std::string Device::ToString() const {
  return is_cpu() ? std::string("cpu") : "cuda:" + std::to_string(index);
}

std::ostream& operator<<(std::ostream& os, const Device& d) { return os << d.ToString(); }

bool BuiltWithCuda() { return common_cuda::Built(); }

int CudaDeviceCount() {
  static const int count = common_cuda::Built() ? common_cuda::DeviceCount() : 0;
  return count;
}

std::string CudaUnavailableReason() {
  if (!common_cuda::Built()) return "tensorkit was built without CUDA";
  return CudaDeviceCount() > 0 ? std::string() : common_cuda::NoDeviceReason();
}

void CheckSameDevice(Device a, Device b, const char* op, const char* a_name, const char* b_name) {
  TK_CHECK(a == b, kDeviceMismatch, op, ": ", a_name, " is on ", a, " but ", b_name, " is on ", b,
           "; move ", b_name, " with To(", a, ")");
}

void CheckDevice(const Device& device, const char* op) {
  if (device.is_cpu()) {
    TK_CHECK(device.index == 0, kInvalidArgument, op, ": cpu device index must be 0, not ",
             device.index);
    return;
  }
  TK_CHECK(device.is_cuda(), kInvalidArgument, op, ": unknown device kind ",
           static_cast<int>(device.kind));
  TK_CHECK(BuiltWithCuda(), kUnsupported, op, ": device ", device.ToString(),
           " requested but tensorkit was built without CUDA; rebuild with TENSORKIT_CUDA=ON");
  const int n = CudaDeviceCount();
  // Conditions and the hint are computed first: inside the macro's arguments the formatter
  // reads "index < n, ..." as template brackets.
  const bool exists = device.index >= 0 && device.index < n;
  const std::string hint =
      n > 0 ? " (use cuda:0 .. cuda:" + std::to_string(n - 1) + ")" : std::string();
  const std::string why = n == 0 ? " (" + CudaUnavailableReason() + ")" : std::string();
  TK_CHECK(exists, kInvalidArgument, op, ": device ", device.ToString(), " does not exist; ", n,
           " CUDA device(s) are visible", hint, why);
}

namespace cuda {

void Synchronize(Device device) {
  CheckDevice(device, "cuda::Synchronize");
  if (device.is_cuda()) common_cuda::Synchronize(device.index);
}

Stream CurrentStream(Device device) {
  CheckDevice(device, "cuda::CurrentStream");
  TK_CHECK(device.is_cuda(), kInvalidArgument,
           "cuda::CurrentStream: the cpu has no stream; pass a CUDA device");
  return static_cast<Stream>(common_cuda::CurrentStream(device.index));
}

uint64_t SynchronizationCount() { return common_cuda::SynchronizationCount(); }

StreamGuard::StreamGuard(Device device, Stream stream) : device_(device) {
  CheckDevice(device, "cuda::StreamGuard");
  TK_CHECK(device.is_cuda(), kInvalidArgument,
           "cuda::StreamGuard: the cpu has no stream; pass a CUDA device such as cuda:0");
  common_cuda::CheckStreamDevice(device.index, stream, "cuda::StreamGuard");
  previous_ = static_cast<Stream>(common_cuda::CurrentStream(device.index));
  common_cuda::SetCurrentStream(device.index, stream);
}

StreamGuard::~StreamGuard() { common_cuda::SetCurrentStream(device_.index, previous_); }

}  // namespace cuda
}  // namespace tensorkit
