// GPU tests: built always, labelled "gpu" in ctest, skipped when no CUDA device is visible.
#include <gtest/gtest.h>

#include "tensorkit/common/device.h"
#include "tensorkit/common/storage.h"

namespace tensorkit {
namespace {

TEST(GpuDeviceTest, AllocateCopyRoundTrip) {
  if (CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device visible; GPU test skipped";
  auto host = Storage::Allocate(DType::kInt32, 1000, Device::Cpu());
  auto* h = static_cast<int32_t*>(host->data());
  for (int i = 0; i < 1000; ++i) h[i] = i * 3;
  auto dev = Storage::Allocate(DType::kInt32, 1000, Device::Cuda(0), /*zero=*/true);
  CopyBytes(dev->data(), Device::Cuda(0), host->data(), Device::Cpu(), 4000);
  auto back = Storage::Allocate(DType::kInt32, 1000, Device::Cpu());
  CopyBytes(back->data(), Device::Cpu(), dev->data(), Device::Cuda(0), 4000);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(static_cast<int32_t*>(back->data())[i], i * 3);
}

}  // namespace
}  // namespace tensorkit
