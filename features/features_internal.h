// tensorkit/features/features_internal.h: checks and helpers shared by features/ sources (not a
// public header).
#ifndef TENSORKIT_FEATURES_FEATURES_INTERNAL_H_
#define TENSORKIT_FEATURES_FEATURES_INTERNAL_H_

#include <algorithm>
#include <cstdint>
#include <new>
#include <stdexcept>
#include <vector>

#include "tensorkit/common/alloc_fault.h"
#include "tensorkit/common/parallel.h"
#include "tensorkit/dense/tensor.h"

namespace tensorkit::features_internal {

// The dtypes of ids, segment ids, lengths and integer features.
inline constexpr DTypeSet kIdDTypes = Bit(DType::kInt32) | Bit(DType::kInt64);

// Throws unless values is defined with at least one axis (the item axis).
void CheckJaggedValues(const Tensor& values, const char* op);
// A contiguous int64 offsets tensor on the CPU (offsets itself when it is one).
Tensor HostOffsets(const Tensor& offsets);
// Throws naming the first bad offset unless off[0] == 0, off is non-decreasing and
// off[n - 1] == num_values.
void CheckOffsets(const int64_t* off, int64_t n, int64_t num_values, const char* op);
// Throws kDTypeMismatch unless lengths are int32 or int64.
void CheckLengthsDType(const Tensor& lengths, const char* op);
// The CPU int64 offsets [B + 1] of lengths (int32 or int64 [B], any device): each length >= 0
// and their sum == num_values, else an Error naming the first bad length.
Tensor OffsetsFromLengths(const Tensor& lengths, int64_t num_values, const char* op);
// Throws kUnsupported unless `t` (called `what`) is on the CPU: "op runs on the CPU in this
// version". `t` may be undefined (an optional input).
void CheckOnCpu(const Tensor& t, const char* what, const char* op);
// Runs body(), reporting a failed host allocation as Error(kResourceExhausted) naming `op`.
using alloc_fault::ReportingAllocationFailure;
// Throws unless weights is a float tensor [n] on values' device.
void CheckWeights(const Tensor& weights, int64_t n, const Tensor& values, const char* op);

// Stable counting sort (FillEmptyRows, UnsortedSegmentReduce, SparseSegmentReduceGrad): items
// 0..n-1 are grouped by key, input order kept within a key. Each fixed chunk of items counts its
// keys in its own histogram, and the histograms become per-chunk write cursors, so chunk c's
// items of key k land after those of earlier chunks: the one stable order, whatever the number
// of chunks (which only follows the thread count to bound the histograms' memory).
struct CountingPlan {
  int64_t chunk = 1;  // items per chunk
  int64_t num_chunks = 0;
  std::vector<int64_t> start;   // [num_keys + 1]: the first slot of each key; start[num_keys] slots
  std::vector<int64_t> count;   // [num_keys]: the items with that key
  std::vector<int64_t> cursor;  // [num_chunks * num_keys]: where chunk c puts its next key-k item
};
// For items whose key(i) in [0, num_keys) never decreases: start[k] = the first item with key
// >= k, for k in [0, num_keys] (start [num_keys + 1]); O(n + num_keys), parallel.
template <typename Key>
void StartsOfSortedKeys(int64_t n, int64_t num_keys, const Key& key, int64_t* start);
// Plans the sort of items with key(i) in [0, num_keys), or negative for an item to drop (keys
// must be checked before). Key k takes max(count[k], min_slots) slots, its items first.
template <typename Key>
CountingPlan PlanCountingSort(int64_t n, int64_t num_keys, int64_t min_slots, const Key& key);
// Calls place(i, slot) for every kept item, from the plan's chunks in parallel (consumes the
// cursors).
template <typename Key, typename Place>
void PlaceItems(CountingPlan* plan, int64_t n, const Key& key, const Place& place);

template <typename Key>
void StartsOfSortedKeys(int64_t n, int64_t num_keys, const Key& key, int64_t* start) {
  // Item i writes the starts of the keys after its predecessor's, up to its own: each start is
  // written once, by the first item at or past it.
  ParallelChunks(n, int64_t{1} << 16, [&](int64_t, int64_t b, int64_t e) {
    int64_t prev = b == 0 ? -1 : static_cast<int64_t>(key(b - 1));
    for (int64_t i = b; i < e; ++i) {
      const int64_t k = key(i);
      for (int64_t r = prev + 1; r <= k; ++r) start[r] = i;
      prev = k;
    }
  });
  const int64_t after = n == 0 ? 0 : static_cast<int64_t>(key(n - 1)) + 1;
  std::fill(start + after, start + num_keys + 1, n);
}

template <typename Key>
CountingPlan PlanCountingSort(int64_t n, int64_t num_keys, int64_t min_slots, const Key& key) {
  CountingPlan plan;
  const int64_t per_key = std::max<int64_t>(1, (n + num_keys) / (num_keys + 1));
  plan.num_chunks = std::max<int64_t>(
      1, std::min({int64_t{GetNumThreads()}, std::max<int64_t>(1, n >> 16), per_key}));
  plan.chunk = std::max<int64_t>(1, (n + plan.num_chunks - 1) / plan.num_chunks);
  plan.num_chunks = std::max<int64_t>(1, NumChunks(n, plan.chunk));
  plan.cursor.assign(static_cast<size_t>(plan.num_chunks * num_keys), 0);
  ParallelChunks(n, plan.chunk, [&](int64_t c, int64_t b, int64_t e) {
    int64_t* h = plan.cursor.data() + c * num_keys;
    for (int64_t i = b; i < e; ++i) {
      const int64_t k = key(i);
      if (k >= 0) ++h[k];
    }
  });
  plan.start.assign(static_cast<size_t>(num_keys + 1), 0);
  plan.count.assign(static_cast<size_t>(num_keys), 0);
  int64_t slot = 0;
  for (int64_t k = 0; k < num_keys; ++k) {
    plan.start[k] = slot;
    int64_t pos = slot;
    for (int64_t c = 0; c < plan.num_chunks; ++c) {
      int64_t& h = plan.cursor[c * num_keys + k];
      const int64_t items = h;
      h = pos;
      pos += items;
    }
    plan.count[k] = pos - slot;
    slot += std::max(pos - slot, min_slots);
  }
  plan.start[num_keys] = slot;
  return plan;
}

template <typename Key, typename Place>
void PlaceItems(CountingPlan* plan, int64_t n, const Key& key, const Place& place) {
  const int64_t num_keys = static_cast<int64_t>(plan->count.size());
  ParallelChunks(n, plan->chunk, [&](int64_t c, int64_t b, int64_t e) {
    int64_t* cur = plan->cursor.data() + c * num_keys;
    for (int64_t i = b; i < e; ++i) {
      const int64_t k = key(i);
      if (k >= 0) place(i, cur[k]++);
    }
  });
}

}  // namespace tensorkit::features_internal

#endif  // TENSORKIT_FEATURES_FEATURES_INTERNAL_H_
