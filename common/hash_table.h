// tensorkit/common/hash_table.h: internal (not a public API): the one open-addressing table of
// the tree, an index over entries that its user keeps in its own arrays. Vocabulary's token
// table, VocabularyCounter's count tables and the tf.Example key index (io/tf_example_wire.h)
// are built on it.
//
// Glossary
//   entry    what the user stores (a token, a token with its count, a spec's key), in an array
//            of its own; the table holds only where each entry is.
//   bucket   one Slot of the table: the index of an entry, kEmpty when it holds none, and an
//            optional tag.
//   tag      what a slot keeps beside the index so that most probes settle without touching
//            the entry (Vocabulary keeps a token's fingerprint or the integer itself); NoTag
//            keeps nothing, and the slot is the index alone.
//   probe    the walk from bucket hash & mask over the following buckets (linear probing) to
//            the bucket of an equal entry or the first empty one.
//
// What differs between users stays with them: the hash (each keeps its own, so that results
// and speed do not depend on this table), the key storage and equality (a callback on the slot),
// whether the table grows (Crowded, then Rebuild) or is sized once (Reset). Every user keeps the
// table at most half full, so probes stay short; that rule is the table's.
#ifndef TENSORKIT_COMMON_HASH_TABLE_H_
#define TENSORKIT_COMMON_HASH_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace tensorkit {

// The tag of a table whose slots keep the index alone.
struct NoTag {};

template <typename Index, typename Tag = NoTag>
class ProbeTable {
 public:
  // The index of an empty bucket: -1, or the largest value of an unsigned Index.
  static constexpr Index kEmpty = static_cast<Index>(-1);
  // Whether a bucket with this index is empty. A signed Index tests the sign, which the compiler
  // folds into a caller's own `found >= 0`.
  static constexpr bool IsEmpty(Index i) {
    if constexpr (std::is_signed_v<Index>) {
      return i < 0;
    } else {
      return i == kEmpty;
    }
  }

  struct Slot {
    [[no_unique_address]] Tag tag;
    Index index = kEmpty;
  };

  // Empties the table into the fewest buckets, a power of two and at least min_buckets, that
  // hold n entries at most half full.
  void Reset(size_t n, size_t min_buckets) {
    size_t buckets = min_buckets;
    while (buckets < 2 * n) buckets *= 2;
    slots_.assign(buckets, Slot{});
    mask_ = buckets - 1;
  }

  // Whether n entries would fill more than half of the buckets (a growing user then rebuilds).
  bool Crowded(size_t n) const { return n * 2 > slots_.size(); }

  // Empties the table into twice the buckets (min_buckets when it has none) and puts back the
  // slots of entries [0, n): slot_of(k) gives entry k's hash and slot (entries are distinct).
  template <typename SlotOf>
  void Rebuild(size_t n, size_t min_buckets, const SlotOf& slot_of) {
    const size_t buckets = slots_.empty() ? min_buckets : slots_.size() * 2;
    slots_.assign(buckets, Slot{});
    mask_ = buckets - 1;
    for (size_t k = 0; k < n; ++k) {
      const auto [hash, slot] = slot_of(k);
      PlaceNew(hash, slot);
    }
  }

  // Puts the slot of an entry known to be absent in the first empty bucket of hash's probe.
  void PlaceNew(uint64_t hash, Slot slot) {
    *Probe(hash, [](const Slot&) { return false; }) = slot;
  }

  bool empty() const { return slots_.empty(); }

  // The first bucket of hash's probe (for a prefetch).
  const Slot* BucketOf(uint64_t hash) const { return &slots_[hash & mask_]; }

  // The bucket of the entry that same(slot) accepts on hash's probe, else the empty bucket where
  // the probe ended, into which an insert writes its slot. same sees filled slots only.
  template <typename Same>
  Slot* Probe(uint64_t hash, const Same& same) {
    for (uint64_t b = hash & mask_;; b = (b + 1) & mask_) {
      Slot& s = slots_[b];
      if (IsEmpty(s.index) || same(s)) return &s;
    }
  }
  template <typename Same>
  const Slot* Probe(uint64_t hash, const Same& same) const {
    return const_cast<ProbeTable*>(this)->Probe(hash, same);
  }

  // The index of the entry that same(slot) accepts, or kEmpty. (Probe's loop, returning the
  // index itself: a lookup's hot path then keeps no bucket pointer across same's call.)
  template <typename Same>
  Index Find(uint64_t hash, const Same& same) const {
    for (uint64_t b = hash & mask_;; b = (b + 1) & mask_) {
      const Slot& s = slots_[b];
      if (IsEmpty(s.index)) return kEmpty;
      if (same(s)) return s.index;
    }
  }

 private:
  std::vector<Slot> slots_;
  uint64_t mask_ = 0;
};

}  // namespace tensorkit

#endif  // TENSORKIT_COMMON_HASH_TABLE_H_
