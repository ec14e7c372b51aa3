// tensorkit/common/device.h: where memory lives.
//
// Glossary
//   Device       {kind, index}: the CPU (index 0) or one CUDA device.
//   CudaAvailable  true when tensorkit was built with CUDA and a device is visible.
#ifndef TENSORKIT_COMMON_DEVICE_H_
#define TENSORKIT_COMMON_DEVICE_H_

#include <ostream>
#include <string>

namespace tensorkit {

enum class DeviceKind { kCpu, kCuda };

struct Device {
  DeviceKind kind = DeviceKind::kCpu;
  int index = 0;

  static Device Cpu() { return {DeviceKind::kCpu, 0}; }
  static Device Cuda(int index = 0) { return {DeviceKind::kCuda, index}; }
  bool is_cpu() const { return kind == DeviceKind::kCpu; }
  bool is_cuda() const { return kind == DeviceKind::kCuda; }
  bool operator==(const Device& o) const = default;
  // "cpu" or "cuda:1".
  std::string ToString() const;
};

std::ostream& operator<<(std::ostream& os, const Device& d);

// True when this build has the CUDA backend.
bool BuiltWithCuda();
// Number of visible CUDA devices (0 without CUDA, without a driver or without a GPU).
int CudaDeviceCount();
// Why no CUDA device is visible, with the fix ("tensorkit was built without CUDA", "no NVIDIA
// driver is installed", a driver older than the runtime tensorkit was built with, ...); empty
// when at least one device is visible.
std::string CudaUnavailableReason();
// Throws Error naming `op` when `device` does not exist here (e.g. cuda:3 with one GPU).
void CheckDevice(const Device& device, const char* op);

}  // namespace tensorkit

#endif  // TENSORKIT_COMMON_DEVICE_H_
