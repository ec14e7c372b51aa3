#include "tensorkit/common/device.h"

#include "tensorkit/common/backend_cuda.h"
#include "tensorkit/common/error.h"

namespace tensorkit {

std::string Device::ToString() const {
  return is_cpu() ? std::string("cpu") : "cuda:" + std::to_string(index);
}

std::ostream& operator<<(std::ostream& os, const Device& d) { return os << d.ToString(); }

bool BuiltWithCuda() { return cuda_backend::Built(); }

int CudaDeviceCount() {
  static const int count = cuda_backend::Built() ? cuda_backend::DeviceCount() : 0;
  return count;
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
  TK_CHECK(exists, kInvalidArgument, op, ": device ", device.ToString(), " does not exist; ", n,
           " CUDA device(s) are visible", hint);
}

}  // namespace tensorkit
