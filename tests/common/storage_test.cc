#include "tensorkit/common/storage.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "tensorkit/common/device.h"

namespace tensorkit {
namespace {

using ::testing::HasSubstr;

TEST(StorageTest, CpuAllocationIsAlignedAndZeroed) {
  for (int64_t n : {0, 1, 7, 1000}) {
    auto s = Storage::Allocate(DType::kFloat32, n, Device::Cpu(), /*zero=*/true);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(s->data()) % kCpuAlignment, 0u);
    EXPECT_EQ(s->size_bytes(), n * 4);
    EXPECT_TRUE(s->owns_memory());
    const float* p = static_cast<const float*>(s->data());
    for (int64_t i = 0; i < n; ++i) EXPECT_EQ(p[i], 0.0f);
  }
}

TEST(StorageTest, StringStorageConstructsAndDestroys) {
  auto s = Storage::Allocate(DType::kString, 3, Device::Cpu());
  auto* p = static_cast<std::string*>(s->data());
  EXPECT_TRUE(p[2].empty());
  p[1] = std::string(1000, 'x');  // heap-allocated: ASan would report a leak if not destroyed
}

TEST(StorageTest, AbsurdSizeIsAClearError) {
  try {
    Storage::Allocate(DType::kFloat64, std::numeric_limits<int64_t>::max() / 2, Device::Cpu());
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kResourceExhausted);
    EXPECT_THAT(e.what(), HasSubstr("Storage::Allocate"));
  }
  // Fits in int64 but no machine has it: the allocator refuses, we report it.
  try {
    Storage::Allocate(DType::kUInt8, int64_t{1} << 60, Device::Cpu());
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kResourceExhausted);
    EXPECT_THAT(e.what(), HasSubstr("cannot allocate"));
    EXPECT_STREQ(ErrorCodeName(e.code()), "ResourceExhausted");
  }
  EXPECT_THROW(Storage::Allocate(DType::kFloat32, -1, Device::Cpu()), Error);
}

TEST(StorageTest, WrapRunsTheDeleterOnce) {
  int calls = 0;
  std::vector<float> buffer(16, 1.0f);
  {
    auto s = Storage::Wrap(buffer.data(), 64, Device::Cpu(), [&](void* p) {
      EXPECT_EQ(p, buffer.data());
      ++calls;
    });
    EXPECT_FALSE(s->owns_memory());
    auto copy = s;  // shared: still one deleter call
    EXPECT_EQ(calls, 0);
  }
  EXPECT_EQ(calls, 1);
  EXPECT_THROW(Storage::Wrap(nullptr, 8, Device::Cpu(), nullptr), Error);
  EXPECT_NO_THROW(Storage::Wrap(nullptr, 0, Device::Cpu(), nullptr));
}

TEST(StorageTest, ReadOnlyIsSetByTheWrapperAndNeverCleared) {
  std::vector<float> buffer(4, 0.0f);
  EXPECT_FALSE(Storage::Allocate(DType::kFloat32, 4, Device::Cpu())->read_only());
  EXPECT_FALSE(Storage::Wrap(buffer.data(), 16, Device::Cpu(), nullptr)->read_only());
  auto s = Storage::Wrap(buffer.data(), 16, Device::Cpu(), nullptr, /*read_only=*/true);
  EXPECT_TRUE(s->read_only());
  auto w = Storage::Wrap(buffer.data(), 16, Device::Cpu(), nullptr);
  w->MarkReadOnly();
  w->MarkReadOnly();
  EXPECT_TRUE(w->read_only());
}

TEST(StorageTest, CopyAndZeroBytesOnCpu) {
  auto a = Storage::Allocate(DType::kInt32, 4, Device::Cpu());
  auto b = Storage::Allocate(DType::kInt32, 4, Device::Cpu());
  int32_t* pa = static_cast<int32_t*>(a->data());
  for (int i = 0; i < 4; ++i) pa[i] = i + 1;
  CopyBytes(b->data(), Device::Cpu(), a->data(), Device::Cpu(), 16);
  EXPECT_EQ(static_cast<int32_t*>(b->data())[3], 4);
  ZeroBytes(b->data(), Device::Cpu(), 16);
  EXPECT_EQ(static_cast<int32_t*>(b->data())[3], 0);
}

}  // namespace
}  // namespace tensorkit
