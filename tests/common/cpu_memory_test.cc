#include "tensorkit/common/cpu_memory.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "tensorkit/common/storage.h"

namespace tensorkit::cpu_memory {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

// The cache is off under AddressSanitizer (so use-after-free stays detectable).
bool CacheOn() { return CachedBytesLimit() > 0; }

TEST(CpuMemory, LargeBlocksAreReusedForTheirSize) {
  if (!CacheOn()) GTEST_SKIP() << "block cache disabled in this build (sanitizer)";
  ReleaseCached();
  void* a = Allocate(64 * kMiB);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % (2 * kMiB), 0u);
  Free(a, 64 * kMiB);
  EXPECT_EQ(CachedBytes(), 64 * kMiB);
  void* b = Allocate(60 * kMiB);  // within 1/4 of the cached block: reused
  EXPECT_EQ(b, a);
  EXPECT_EQ(CachedBytes(), 0);
  Free(b, 60 * kMiB);
  void* c = Allocate(32 * kMiB);  // half the cached block: too wasteful, a new one
  EXPECT_NE(c, a);
  void* d = Allocate(100 * kMiB);  // larger than any cached block: a new one
  EXPECT_NE(d, a);
  Free(c, 32 * kMiB);
  Free(d, 100 * kMiB);
  ReleaseCached();
  EXPECT_EQ(CachedBytes(), 0);
}

TEST(CpuMemory, CacheStaysWithinItsLimit) {
  if (!CacheOn()) GTEST_SKIP() << "block cache disabled in this build (sanitizer)";
  ReleaseCached();
  // Blocks are never touched, so they cost address space, not memory.
  const int64_t third = CachedBytesLimit() / 3 / (2 * kMiB) * (2 * kMiB);
  std::vector<void*> blocks;
  for (int i = 0; i < 5; ++i) blocks.push_back(Allocate(third + i * 2 * kMiB));
  for (int i = 0; i < 5; ++i) {
    Free(blocks[i], third + i * 2 * kMiB);
    EXPECT_LE(CachedBytes(), CachedBytesLimit());
  }
  EXPECT_GT(CachedBytes(), 0);
  // Too large to keep at all.
  void* huge = Allocate(CachedBytesLimit() + 2 * kMiB);
  ASSERT_NE(huge, nullptr);
  const int64_t before = CachedBytes();
  Free(huge, CachedBytesLimit() + 2 * kMiB);
  EXPECT_EQ(CachedBytes(), before);
  ReleaseCached();
  EXPECT_EQ(CachedBytes(), 0);
}

TEST(CpuMemory, MediumBlocksAreReusedWithinTheirOwnLimit) {
  if (!CacheOn()) GTEST_SKIP() << "block cache disabled in this build (sanitizer)";
  ReleaseCached();
  constexpr int64_t kKiB = 1024;
  void* a = Allocate(300 * kKiB);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 64, 0u);
  Free(a, 300 * kKiB);
  EXPECT_EQ(CachedBytes(), 300 * kKiB);
  void* b = Allocate(262 * kKiB);  // within 1/4: reused
  EXPECT_EQ(b, a);
  EXPECT_EQ(CachedBytes(), 0);
  Free(b, 262 * kKiB);
  void* c = Allocate(100 * kKiB);  // a third of it: a new block
  EXPECT_NE(c, b);
  Free(c, 100 * kKiB);
  // Many freed medium blocks: the cache keeps at most its limit.
  std::vector<void*> blocks;
  const int64_t size = 3 * kMiB;
  for (int64_t i = 0; i < 2 * MediumCachedBytesLimit() / size + 4; ++i) {
    blocks.push_back(Allocate(size));
  }
  for (void* p : blocks) {
    Free(p, size);
    EXPECT_LE(CachedBytes(), MediumCachedBytesLimit());
  }
  EXPECT_GT(CachedBytes(), 0);
  ReleaseCached();
  EXPECT_EQ(CachedBytes(), 0);
}

TEST(CpuMemory, SmallBlocksAreNotCached) {
  const int64_t before = CachedBytes();
  void* p = Allocate(1000);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
  Free(p, 1000);
  EXPECT_EQ(CachedBytes(), before);
}

TEST(CpuMemory, ZeroedStorageIsZeroAfterReuseOfADirtyBlock) {
  const int64_t n = 4 * 1024 * 1024;  // 16 MiB of float32
  void* first = nullptr;
  {
    auto s = Storage::Allocate(DType::kFloat32, n, Device::Cpu());
    first = s->data();
    std::memset(s->data(), 0xff, static_cast<size_t>(n * 4));
  }
  auto z = Storage::Allocate(DType::kFloat32, n, Device::Cpu(), /*zero=*/true);
  if (CacheOn()) {
    EXPECT_EQ(z->data(), first);
  }
  const auto* bytes = static_cast<const unsigned char*>(z->data());
  for (int64_t i = 0; i < n * 4; i += 4093) ASSERT_EQ(bytes[i], 0) << i;
  ReleaseCachedCpuMemory();
  EXPECT_EQ(CachedBytes(), 0);
}

}  // namespace
}  // namespace tensorkit::cpu_memory
