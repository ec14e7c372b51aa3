// tensorkit/features/lookup_device.h: the id of an integer value in a vocabulary, written once for
// the host and a CUDA device (not a public header). The CPU finds tokens in an open-addressing
// table, a device in a sorted array of the tokens (binary search: deterministic, no atomics);
// both turn what they found into an id with IntegerId, Keras's IntegerLookup rule.
#ifndef TENSORKIT_FEATURES_LOOKUP_DEVICE_H_
#define TENSORKIT_FEATURES_LOOKUP_DEVICE_H_

#include <cstdint>

#include "tensorkit/common/host_device.h"
#include "tensorkit/features/hash_device.h"

namespace tensorkit::features_internal {

// What turns a token index into an id (vocabulary.h's glossary: [mask?][OOV ...][tokens]).
struct IntegerIdRule {
  int64_t token_start = 0;  // the id of token 0
  int64_t oov_start = 0;    // the first OOV id
  int64_t num_oov = 0;      // OOV ids
  bool has_mask = false;
  int64_t mask = 0;       // the value that gives id 0
  bool farmhash = false;  // OOV bucket by the decimal string's fingerprint, else floormod
};

TK_HOST_DEVICE inline int64_t FloorMod(int64_t v, int64_t n) {
  const int64_t r = v % n;
  return r < 0 ? r + n : r;
}

// The id of value x, whose token index is `found` (-1 when x is not a token); -1 for an OOV
// value when there are no OOV ids (the caller reports it).
TK_HOST_DEVICE inline int64_t IntegerId(const IntegerIdRule& r, int64_t x, int64_t found) {
  if (r.has_mask && x == r.mask) return 0;
  if (found >= 0) return r.token_start + found;
  if (r.num_oov == 0) return -1;
  if (r.num_oov == 1) return r.oov_start;
  const int64_t bucket =
      r.farmhash
          ? static_cast<int64_t>(IntegerHash(x, false, 0, 0) % static_cast<uint64_t>(r.num_oov))
          : FloorMod(x, r.num_oov);
  return r.oov_start + bucket;
}

// The position of x in keys[0 .. n) (sorted ascending, distinct), or -1.
TK_HOST_DEVICE inline int64_t SortedPosition(const int64_t* keys, int64_t n, int64_t x) {
  int64_t lo = 0, len = n;
  while (len > 0) {  // lower bound with a halving step
    const int64_t half = len / 2;
    if (keys[lo + half] < x) {
      lo += half + 1;
      len -= half + 1;
    } else {
      len = half;
    }
  }
  return lo < n && keys[lo] == x ? lo : -1;
}

}  // namespace tensorkit::features_internal

#endif  // TENSORKIT_FEATURES_LOOKUP_DEVICE_H_
