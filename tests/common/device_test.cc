#include "tensorkit/common/device.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tensorkit/common/cuda/backend.h"
#include "tensorkit/common/error.h"
#include "tensorkit/common/storage.h"
#include "tensorkit/common/stream.h"

namespace tensorkit {
namespace {

using ::testing::HasSubstr;

TEST(DeviceTest, NamesAndEquality) {
  EXPECT_EQ(Device::Cpu().ToString(), "cpu");
  EXPECT_EQ(Device::Cuda(2).ToString(), "cuda:2");
  EXPECT_EQ(Device::Cuda(1), Device::Cuda(1));
  EXPECT_NE(Device::Cuda(1), Device::Cuda(0));
  EXPECT_NE(Device::Cpu(), Device::Cuda(0));
}

TEST(DeviceTest, NonexistentDeviceIsAClearError) {
  const int n = CudaDeviceCount();
  try {
    CheckDevice(Device::Cuda(n + 3), "Tensor::Zeros");
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("Tensor::Zeros"));
    EXPECT_THAT(e.what(), HasSubstr("cuda:" + std::to_string(n + 3)));
  }
  EXPECT_THROW(CheckDevice(Device::Cuda(-1), "op"), Error);
  EXPECT_THROW(CheckDevice(Device{DeviceKind::kCpu, 5}, "op"), Error);
  EXPECT_THROW(Storage::Allocate(DType::kFloat32, 4, Device::Cuda(n + 1)), Error);
}

// With no device visible, the Error says why (no driver, a driver older than the runtime, no
// GPU, or a build without CUDA) rather than only "0 devices".
TEST(DeviceTest, NoDeviceErrorsSayWhy) {
  if (CudaDeviceCount() > 0) {
    EXPECT_EQ(CudaUnavailableReason(), "");
    return;
  }
  const std::string why = CudaUnavailableReason();
  EXPECT_FALSE(why.empty());
  if (!BuiltWithCuda()) {
    EXPECT_EQ(why, "tensorkit was built without CUDA");
  }
  try {
    CheckDevice(Device::Cuda(0), "Tensor::Zeros");
    FAIL() << "expected Error";
  } catch (const Error& e) {
    if (BuiltWithCuda()) {
      EXPECT_THAT(e.what(), HasSubstr(why));
    }
  }
}

TEST(DeviceTest, CpuAlwaysExists) { EXPECT_NO_THROW(CheckDevice(Device::Cpu(), "op")); }

// The stream interface on devices that have no stream or do not exist (the device side is in
// tests/gpu/dense_gpu_test.cc).
TEST(DeviceTest, StreamsNeedAnExistingCudaDevice) {
  EXPECT_NO_THROW(cuda::Synchronize(Device::Cpu()));  // nothing to wait for
  auto expect = [](auto&& call, const std::string& op, const std::string& what) {
    try {
      call();
      ADD_FAILURE() << "expected Error from " << op;
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), HasSubstr(op));
      EXPECT_THAT(e.what(), HasSubstr(what));
    }
  };
  expect([] { cuda::StreamGuard g(Device::Cpu(), nullptr); }, "cuda::StreamGuard", "cpu");
  expect([] { cuda::CurrentStream(Device::Cpu()); }, "cuda::CurrentStream", "cpu");
  const Device missing = Device::Cuda(CudaDeviceCount());
  expect([&] { cuda::StreamGuard g(missing, nullptr); }, "cuda::StreamGuard", missing.ToString());
  expect([&] { cuda::Synchronize(missing); }, "cuda::Synchronize", missing.ToString());
}

// cuBLAS and cuSPARSE are loaded on first use, without a device: every function tensorkit lists
// must exist in the installed libraries (a misspelt or missing one is named here, not later on
// a GPU). Where the libraries are not installed the Error says which file and how to fix it.
TEST(DeviceTest, CudaLibrariesLoadOnDemand) {
  if (!BuiltWithCuda()) {
    EXPECT_THROW(common_cuda::LoadLibraries("test"), Error);
    return;
  }
  try {
    common_cuda::LoadLibraries("test");
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
    EXPECT_THAT(e.what(), HasSubstr("cannot load lib"));
    EXPECT_THAT(e.what(), HasSubstr("LD_LIBRARY_PATH"));
    EXPECT_THAT(e.what(), ::testing::Not(HasSubstr("has no function")));
  }
}

// The one device predicate and the one same-device check of the tree.
TEST(DeviceTest, OnCudaAndCheckSameDevice) {
  struct Held {  // anything with device(), as a Tensor or a SparseTensor
    Device d;
    Device device() const { return d; }
  };
  EXPECT_FALSE(OnCuda(Device::Cpu()));
  EXPECT_TRUE(OnCuda(Device::Cuda(1)));
  EXPECT_FALSE(OnCuda(Held{Device::Cpu()}));
  EXPECT_TRUE(OnCuda(Held{Device::Cuda(0)}));
  CheckSameDevice(Device::Cuda(1), Device::Cuda(1), "Op");  // no Error
  try {
    CheckSameDevice(Device::Cpu(), Device::Cuda(1), "Op", "values", "weights");
    ADD_FAILURE() << "no Error thrown";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kDeviceMismatch);
    EXPECT_THAT(e.what(), HasSubstr("Op: values is on cpu but weights is on cuda:1; move weights "
                                    "with To(cpu)"));
  }
}

}  // namespace
}  // namespace tensorkit
