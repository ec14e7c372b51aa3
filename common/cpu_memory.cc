#include "tensorkit/common/cpu_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <mutex>

#include "tensorkit/common/alloc_fault.h"

namespace tensorkit::cpu_memory {
namespace {

constexpr int64_t kHugePageBytes = int64_t{2} << 20;
constexpr int64_t kSmallAlignment = 64;
constexpr int64_t kPageBytes = 4096;

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kCacheEnabled = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kCacheEnabled = false;
#else
constexpr bool kCacheEnabled = true;
#endif
#else
constexpr bool kCacheEnabled = true;
#endif

struct Block {
  void* p = nullptr;
  int64_t bytes = 0;   // rounded size
  uint64_t stamp = 0;  // when it was freed: the smallest stamp is the oldest
};

// A fixed number of slots, so that Free never allocates (and so never throws), holding at most
// limit() bytes.
template <int kSlots, int64_t (*kLimit)()>
class BlockCache {
 public:
  void* Take(int64_t bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    int best = -1;
    for (int i = 0; i < kSlots; ++i) {
      const Block& b = slots_[i];
      if (b.p == nullptr || b.bytes < bytes || b.bytes - bytes > bytes / 4) continue;
      if (best < 0 || b.bytes < slots_[best].bytes) best = i;
    }
    if (best < 0) return nullptr;
    void* p = slots_[best].p;
    cached_ -= slots_[best].bytes;
    slots_[best] = Block{};
    return p;
  }

  // Keeps `p`, or gives it (or older blocks) back to the system to stay within the limit.
  void Put(void* p, int64_t bytes) noexcept {
    const int64_t limit = kLimit();
    if (bytes > limit) {
      std::free(p);
      return;
    }
    std::array<void*, kSlots> evicted{};
    int num_evicted = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      while (cached_ + bytes > limit || FreeSlot() < 0) {
        const int oldest = Oldest();
        evicted[num_evicted++] = slots_[oldest].p;
        cached_ -= slots_[oldest].bytes;
        slots_[oldest] = Block{};
      }
      slots_[FreeSlot()] = Block{p, bytes, ++clock_};
      cached_ += bytes;
    }
    for (int i = 0; i < num_evicted; ++i) std::free(evicted[i]);  // outside the lock
  }

  int64_t Bytes() {
    std::lock_guard<std::mutex> lock(mu_);
    return cached_;
  }

  void Clear() noexcept {
    std::array<void*, kSlots> all{};
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (int i = 0; i < kSlots; ++i) {
        all[i] = slots_[i].p;
        slots_[i] = Block{};
      }
      cached_ = 0;
    }
    for (void* p : all) std::free(p);
  }

 private:
  int FreeSlot() const {
    for (int i = 0; i < kSlots; ++i) {
      if (slots_[i].p == nullptr) return i;
    }
    return -1;
  }
  // Only called while some slot is used.
  int Oldest() const {
    int oldest = -1;
    for (int i = 0; i < kSlots; ++i) {
      if (slots_[i].p != nullptr && (oldest < 0 || slots_[i].stamp < slots_[oldest].stamp)) {
        oldest = i;
      }
    }
    return oldest;
  }

  std::mutex mu_;
  std::array<Block, kSlots> slots_{};
  int64_t cached_ = 0;
  uint64_t clock_ = 0;
};

int64_t MediumLimit() { return MediumCachedBytesLimit(); }

using LargeCache = BlockCache<16, CachedBytesLimit>;
using MediumCache = BlockCache<128, MediumLimit>;

// Never destroyed: Storage objects may be freed by static destructors of other files.
LargeCache& Cache() {
  static LargeCache* cache = new LargeCache();
  return *cache;
}
MediumCache& Medium() {
  static MediumCache* cache = new MediumCache();
  return *cache;
}

int64_t Rounded(int64_t bytes) {
  const int64_t align = bytes >= kLargeBlockBytes    ? kHugePageBytes
                        : bytes >= kMediumBlockBytes ? kPageBytes
                                                     : kSmallAlignment;
  return (bytes + align - 1) / align * align;
}

}  // namespace

namespace {

// Bytes handed out by Allocate and not yet given to Free (one relaxed add per call).
std::atomic<int64_t> g_live_bytes{0};

void* AllocateUncounted(int64_t bytes) {
  if (alloc_fault::ShouldFail()) return nullptr;  // the tests' injected failure
  const int64_t rounded = Rounded(bytes);
  if (rounded < bytes) return nullptr;  // wrapped around: no such allocation exists
  if (bytes < kLargeBlockBytes) {
    if (kCacheEnabled && bytes >= kMediumBlockBytes) {
      if (void* p = Medium().Take(rounded)) return p;
    }
    return std::aligned_alloc(static_cast<size_t>(kSmallAlignment), static_cast<size_t>(rounded));
  }
  if (kCacheEnabled) {
    if (void* p = Cache().Take(rounded)) return p;
  }
  void* p = std::aligned_alloc(static_cast<size_t>(kHugePageBytes), static_cast<size_t>(rounded));
  if (p != nullptr) AdviseHugePages(p, rounded);
  return p;
}

}  // namespace

void* Allocate(int64_t bytes) {
  void* p = AllocateUncounted(bytes);
  if (p != nullptr) g_live_bytes.fetch_add(bytes, std::memory_order_relaxed);
  return p;
}

int64_t LiveBytes() { return g_live_bytes.load(std::memory_order_relaxed); }

void AdviseHugePages(void* p, int64_t bytes) noexcept {
  // First-touch page faults otherwise dominate filling a fresh 100 MB output; a hint only.
  const uintptr_t begin = reinterpret_cast<uintptr_t>(p);
  const uintptr_t huge = static_cast<uintptr_t>(kHugePageBytes);
  const uintptr_t first = (begin + huge - 1) / huge * huge;
  const uintptr_t last =
      (begin + static_cast<uintptr_t>(std::max<int64_t>(bytes, 0))) / huge * huge;
  if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
}

void Free(void* p, int64_t bytes) noexcept {
  if (p == nullptr) return;
  g_live_bytes.fetch_sub(bytes, std::memory_order_relaxed);
  if (!kCacheEnabled || bytes < kMediumBlockBytes) {
    std::free(p);
    return;
  }
  if (bytes < kLargeBlockBytes) {
    Medium().Put(p, Rounded(bytes));
    return;
  }
  Cache().Put(p, Rounded(bytes));
}

int64_t CachedBytesLimit() {
  static const int64_t limit = [] {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    const int64_t physical = pages > 0 && page > 0 ? int64_t{pages} * page : int64_t{1} << 32;
    return std::min<int64_t>(physical / 16, int64_t{4} << 30);
  }();
  return kCacheEnabled ? limit : 0;
}

int64_t MediumCachedBytesLimit() {
  return std::min<int64_t>(CachedBytesLimit() / 8, int64_t{64} << 20);
}

int64_t CachedBytes() { return Cache().Bytes() + Medium().Bytes(); }

void ReleaseCached() noexcept {
  Cache().Clear();
  Medium().Clear();
}

}  // namespace tensorkit::cpu_memory
