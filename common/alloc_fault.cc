#include "tensorkit/common/alloc_fault.h"

#include <atomic>
#include <cstdlib>

#include "tensorkit/common/error.h"

namespace tensorkit::alloc_fault {
namespace {

std::atomic<bool> g_armed{false};
std::atomic<bool> g_sticky{false};
std::atomic<int64_t> g_target{0};
std::atomic<int64_t> g_count{0};

}  // namespace

void FailNth(int64_t k, bool sticky) {
  g_armed.store(false, std::memory_order_seq_cst);
  g_count.store(0, std::memory_order_seq_cst);
  g_target.store(k < 1 ? 1 : k, std::memory_order_seq_cst);
  g_sticky.store(sticky, std::memory_order_seq_cst);
  g_armed.store(true, std::memory_order_seq_cst);
}

int64_t Disarm() {
  g_armed.store(false, std::memory_order_seq_cst);
  return g_count.load(std::memory_order_seq_cst);
}

bool ShouldFail() noexcept {
  if (!g_armed.load(std::memory_order_relaxed)) return false;
  const int64_t n = g_count.fetch_add(1, std::memory_order_seq_cst) + 1;
  const int64_t k = g_target.load(std::memory_order_seq_cst);
  return n == k || (n > k && g_sticky.load(std::memory_order_seq_cst));
}

void* Malloc(size_t bytes) noexcept { return ShouldFail() ? nullptr : std::malloc(bytes); }

void* Calloc(size_t count, size_t size) noexcept {
  return ShouldFail() ? nullptr : std::calloc(count, size);
}

void* Realloc(void* p, size_t bytes) noexcept {
  return ShouldFail() ? nullptr : std::realloc(p, bytes);
}

void Free(void* p) noexcept { std::free(p); }

void ThrowAllocationFailure(const char* op, const char* what) {
  Throw(ErrorCode::kResourceExhausted, op, ": could not allocate the outputs or the work space (",
        what, "); the inputs are too large for this machine");
}

}  // namespace tensorkit::alloc_fault
