// tensorkit/common/device.h: where memory lives.
//
// Glossary
//   Device       {kind, index}: the CPU (index 0) or one CUDA device.
//   CudaAvailable  true when tensorkit was built with CUDA and a device is visible.
//   OnCuda       the one device predicate of the tree (Note [device choice]).
//
// Note [device choice]
// ~~~~~~~~~~~~~~~~~~~~
// Every operation of dense/, sparse/, features/ and embed/ makes the checks that do not depend
// on the device, then chooses the device once, at its top: `if (OnCuda(x)) return <CUDA
// body>;`, followed by its CPU body. A CUDA body gets operands on one CUDA device (mixed devices
// are refused first with CheckSameDevice's kDeviceMismatch) and gives the CPU body's results,
// codes and messages. Builds without CUDA link stubs that nothing reaches: no tensor can live on
// a CUDA device there.
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

// True when `d` is a CUDA device, so that an operation runs its CUDA body.
inline bool OnCuda(Device d) { return d.is_cuda(); }
// True when `x` (a Tensor, SparseTensor, CsrMatrix, JaggedTensor: anything with device()) lives
// on a CUDA device. An undefined tensor counts as on the CPU, whose body then throws its "empty"
// error.
template <typename T>
requires requires(const T& x) { Device(x.device()); }
bool OnCuda(const T& x) { return OnCuda(Device(x.device())); }
// Throws Error (kDeviceMismatch) naming `op`, both operands (a_name, b_name), their devices and
// the fix unless they are on one device.
void CheckSameDevice(Device a, Device b, const char* op, const char* a_name = "a",
                     const char* b_name = "b");

}  // namespace tensorkit

#endif  // TENSORKIT_COMMON_DEVICE_H_
