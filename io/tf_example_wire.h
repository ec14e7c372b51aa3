// tensorkit/io/tf_example_wire.h: internal to io/ (not installed): the protobuf wire decoder of
// tf.Example and SequenceExample records, its fast paths, and the index of a spec's keys, which
// the Example parse (tf_example.cc), the SequenceExample parse (tf_example_sequence.cc), the
// summary (tf_example_summary.cc) and the writer (tf_example_writer.cc) share.
//
// Glossary
//   Ctx         one record being decoded: its bytes, its number and the feature being read, which
//               every error names.
//   Span        where a feature's (or a list's) bytes are in its record; kAbsent when missing.
//   Kind        the Feature oneof's list: bytes_list, float_list or int64_list.
//   fast path   a decode of the layout writers use (Note [fast paths]); the field loops read any
//               other layout and name the errors.
//   KeyIndex    the spec's keys, found per map entry by a predicted order (KeyOrder), else by an
//               open-addressing table (common/hash_table.h).
//
// What runs per value stays here, inline, so that each parse compiles its loops as one piece;
// the general reads that run only off the fast paths, and the errors, are in tf_example_wire.cc.
#ifndef TENSORKIT_IO_TF_EXAMPLE_WIRE_H_
#define TENSORKIT_IO_TF_EXAMPLE_WIRE_H_

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "tensorkit/common/error.h"
#include "tensorkit/common/file_util.h"
#include "tensorkit/common/hash_table.h"
#include "tensorkit/io/tf_example_internal.h"

namespace tensorkit::io::internal {

// The Feature oneof's field numbers.
enum Kind : uint8_t { kNoList = 0, kBytesList = 1, kFloatList = 2, kInt64List = 3 };

// Its name in messages: "bytes_list", ...
const char* KindName(Kind k);

inline Kind KindOf(DType d) {
  switch (d) {
    case DType::kInt64:
      return kInt64List;
    case DType::kFloat32:
      return kFloatList;
    case DType::kString:
      return kBytesList;
    default:
      return kNoList;
  }
}

constexpr uint32_t kAbsent = std::numeric_limits<uint32_t>::max();
// Where a feature's bytes are in its record.
struct Span {
  uint32_t begin = kAbsent;
  uint32_t size = 0;
};

// One record being parsed: errors name it, the feature (when inside one) and the byte.
struct Ctx {
  const uint8_t* base;
  int64_t size;
  int64_t record;
  const std::string* key = nullptr;
};

template <typename... Parts>
[[noreturn]] void Fail(const Ctx& c, const uint8_t* at, const Parts&... what) {
  if (c.key != nullptr) {
    Throw(ErrorCode::kCorrupt, "ParseExamples: record ", c.record, ", feature '", Excerpt(*c.key),
          "': malformed tf.Example at byte ", at - c.base, " of ", c.size, ": ", what...);
  }
  Throw(ErrorCode::kCorrupt, "ParseExamples: record ", c.record, ": malformed tf.Example at byte ",
        at - c.base, " of ", c.size, ": ", what...);
}

// Reads the varint at p (at most 10 bytes, before `end`) into *v and returns the byte after it,
// or nullptr when it has no last byte there: the fast paths then give up and the checked reads
// name the error. A 10th byte keeps only its low bit, as protobuf keeps it.
inline const uint8_t* ParseLongVarint(const uint8_t* p, const uint8_t* end, uint64_t* v) {
  uint64_t x = 0;
  const uint8_t* stop = end - p < 10 ? end : p + 10;
  for (int shift = 0; p < stop; shift += 7) {
    const uint8_t b = *p++;
    x |= uint64_t{b & 0x7fu} << shift;
    if (b < 0x80) {
      *v = x;
      return p;
    }
  }
  return nullptr;
}

// Most varints of a tf.Example are one byte: that case inline.
[[gnu::always_inline]] inline const uint8_t* ParseVarint(const uint8_t* p, const uint8_t* end,
                                                         uint64_t* v) {
  if (p < end && *p < 0x80) {
    *v = *p;
    return p + 1;
  }
  return ParseLongVarint(p, end, v);
}

// Out of line: varints of 2 bytes or more, and their errors.
uint64_t LongVarint(const Ctx& c, const uint8_t*& p, const uint8_t* end);

// Tags, lengths and most values of a tf.Example are single-byte varints: that case inline.
[[gnu::always_inline]] inline uint64_t Varint(const Ctx& c, const uint8_t*& p, const uint8_t* end) {
  if (p < end && *p < 0x80) return *p++;
  return LongVarint(c, p, end);
}

struct Tag {
  uint32_t field;
  uint32_t wire;
};
[[gnu::always_inline]] inline Tag ReadTag(const Ctx& c, const uint8_t*& p, const uint8_t* end) {
  const uint8_t* at = p;
  const uint64_t t = Varint(c, p, end);
  if ((t >> 3) == 0 || (t >> 3) > 0x1fffffff) Fail(c, at, "field number ", t >> 3, " is invalid");
  return {static_cast<uint32_t>(t >> 3), static_cast<uint32_t>(t & 7)};
}

// The length of a length-delimited field, checked against what is left of its message.
[[gnu::always_inline]] inline uint64_t ReadLength(const Ctx& c, const uint8_t*& p,
                                                  const uint8_t* end) {
  const uint8_t* at = p;
  const uint64_t n = Varint(c, p, end);
  if (n > static_cast<uint64_t>(end - p)) {
    Fail(c, at, "a length of ", n, " bytes runs past the end of its message (", end - p,
         " bytes left)");
  }
  return n;
}

// Skips a field that is not wanted here, as protobuf skips unknown fields.
inline void Skip(const Ctx& c, Tag t, const uint8_t* at, const uint8_t*& p, const uint8_t* end) {
  switch (t.wire) {
    case 0:
      Varint(c, p, end);
      return;
    case 1:
    case 5: {
      const int64_t n = t.wire == 1 ? 8 : 4;
      if (end - p < n) Fail(c, at, "a ", n, "-byte field runs past the end of its message");
      p += n;
      return;
    }
    case 2:
      p += ReadLength(c, p, end);
      return;
    case 3:
    case 4:
      Fail(c, at, "field ", t.field, " is a group (wire type ", t.wire,
           "), which tf.Example does not use");
    default:
      Fail(c, at, "field ", t.field, " has the invalid wire type ", t.wire);
  }
}

// The C++ types a bytes value is written as: a std::string (a kString tensor), or a BytesRef
// into its record (internal::ParseFixedAndVarLen with targets).
template <typename T>
inline constexpr bool kIsBytes =
    std::is_same_v<T, std::string> || std::is_same_v<T, internal::BytesRef>;

inline void SetBytes(std::string* out, const uint8_t* p, uint64_t n) {
  out->assign(reinterpret_cast<const char*>(p), n);
}
inline void SetBytes(internal::BytesRef* out, const uint8_t* p, uint64_t n) {
  *out = internal::BytesRef{reinterpret_cast<const char*>(p), static_cast<int64_t>(n)};
}

// Decodes the values of a list message (as CountList counts them) into out[0..); returns the end of
// what it wrote.
template <typename T>
T* DecodeList(const Ctx& c, Kind kind, const uint8_t* p, const uint8_t* end, T* out) {
  while (p < end) {
    const uint8_t* at = p;
    const Tag t = ReadTag(c, p, end);
    if (t.field != 1) {
      Skip(c, t, at, p, end);
      continue;
    }
    if constexpr (kIsBytes<T>) {
      if (kind == kBytesList && t.wire == 2) {
        const uint64_t len = ReadLength(c, p, end);
        SetBytes(out++, p, len);
        p += len;
        continue;
      }
    } else if constexpr (std::is_same_v<T, float>) {
      if (t.wire == 2) {
        const uint64_t len = ReadLength(c, p, end);
        if (len > 0) std::memcpy(out, p, len);  // little-endian IEEE floats, as stored
        out += len / 4;
        p += len;
        continue;
      }
      if (t.wire == 5) {
        std::memcpy(out++, p, 4);
        p += 4;
        continue;
      }
    } else {
      if (t.wire == 2) {
        const uint64_t len = ReadLength(c, p, end);
        const uint8_t* e = p + len;
        while (p < e) *out++ = static_cast<int64_t>(Varint(c, p, e));
        continue;
      }
      if (t.wire == 0) {
        *out++ = static_cast<int64_t>(Varint(c, p, end));
        continue;
      }
    }
    Skip(c, t, at, p, end);
  }
  return out;
}

// A Feature message: its final list type (the oneof's last one set), where the run of that
// type starts (earlier lists of another type were cleared by it) and how many values it holds.
struct FeatureInfo {
  Kind kind = kNoList;
  uint32_t run_begin = 0;  // offset in the Feature
  int64_t count = 0;
  int64_t bytes = 0;  // kBytesList: the bytes of its values
};

// The Feature [begin, end) read by the field loops: its last list's kind, run and count.
FeatureInfo ScanFeature(const Ctx& c, const uint8_t* begin, const uint8_t* end);

// Decodes every list of `kind` in [p, end) (a Feature from its run's start) into out.
template <typename T>
void DecodeFeature(const Ctx& c, Kind kind, const uint8_t* p, const uint8_t* end, T* out) {
  while (p < end) {
    const uint8_t* at = p;
    const Tag t = ReadTag(c, p, end);
    if (t.field == kind && t.wire == 2) {
      const uint64_t len = ReadLength(c, p, end);
      out = DecodeList(c, kind, p, p + len, out);
      p += len;
    } else {
      Skip(c, t, at, p, end);
    }
  }
}

// Note [fast paths]: writers lay a Feature out as one list field, and the list as one packed
// field (numbers) or its values back to back (bytes). The functions below read that layout
// only, with no tag loop and no error path: on anything else (another layout, malformed bytes)
// they return false or -1, having written nothing that the general path (ScanFeature,
// DecodeFeature) does not write again, and that path then reads the Feature and names any
// error. So values and errors are the general path's, and only their cost differs.

// The payload of [p, end) when it is a single length-delimited field with a one-byte tag
// (p[0], which the caller checks) spanning it; else nullptr.
inline const uint8_t* SoleField(const uint8_t* p, const uint8_t* end) {
  if (end - p < 2 || p[0] >= 0x80 || (p[0] & 7) != 2) return nullptr;
  uint64_t n = 0;
  const uint8_t* q = ParseVarint(p + 1, end, &n);
  return q != nullptr && n == static_cast<uint64_t>(end - q) ? q : nullptr;
}

// The list [*list, end) of a Feature [p, end) that is one list field of the kind `want`.
inline bool OneList(const uint8_t* p, const uint8_t* end, Kind want, const uint8_t** list) {
  if (p == end || p[0] != (want << 3 | 2)) return false;
  *list = SoleField(p, end);
  return *list != nullptr;
}

// n little-endian IEEE floats, as stored, from p. One float (a FixedLenFeature of shape [])
// is the common case: copied inline rather than by a call.
inline void CopyFloats(float* out, const uint8_t* p, int64_t n) {
  if (n == 1) {
    std::memcpy(out, p, 4);
  } else if (n > 0) {
    std::memcpy(out, p, static_cast<size_t>(4 * n));
  }
}

// The values in the list [p, end) of T's kind, or -1 (Note [fast paths]).
template <typename T>
int64_t CountFast(const uint8_t* p, const uint8_t* end) {
  if (p == end) return 0;
  if constexpr (kIsBytes<T>) {
    int64_t n = 0;
    for (uint64_t len = 0; p < end; p += len, ++n) {
      if (p[0] != 0x0a || (p = ParseVarint(p + 1, end, &len)) == nullptr ||
          len > static_cast<uint64_t>(end - p)) {
        return -1;
      }
    }
    return n;
  } else {
    const uint8_t* q = p[0] == 0x0a ? SoleField(p, end) : nullptr;
    if (q == nullptr) return -1;
    if constexpr (std::is_same_v<T, float>) {
      return (end - q) % 4 == 0 ? (end - q) / 4 : -1;
    } else {
      int64_t n = 0;
      for (uint64_t v = 0; q < end; ++n) {
        if ((q = ParseVarint(q, end, &v)) == nullptr) return -1;
      }
      return n;
    }
  }
}

// Decodes the list [p, end) of T's kind, laid out as writers lay it out, into out[0..cap) and
// returns how many values it holds; -1 for any other layout or more than cap values (Note [fast
// paths]).
template <typename T>
int64_t DecodeFastUpTo(const uint8_t* p, const uint8_t* end, int64_t cap, T* out) {
  if (p == end) return 0;
  int64_t k = 0;
  if constexpr (kIsBytes<T>) {
    for (uint64_t len = 0; p < end; p += len) {
      if (k == cap || p[0] != 0x0a || (p = ParseVarint(p + 1, end, &len)) == nullptr ||
          len > static_cast<uint64_t>(end - p)) {
        return -1;
      }
      SetBytes(&out[k++], p, len);
    }
  } else {
    const uint8_t* q = p[0] == 0x0a ? SoleField(p, end) : nullptr;
    if (q == nullptr) return -1;
    if constexpr (std::is_same_v<T, float>) {
      if ((end - q) % 4 != 0 || (end - q) / 4 > cap) return -1;
      k = (end - q) / 4;
      CopyFloats(out, q, k);
    } else {
      for (uint64_t v = 0; q < end;) {
        if (k == cap || (q = ParseVarint(q, end, &v)) == nullptr) return -1;
        out[k++] = static_cast<int64_t>(v);
      }
    }
  }
  return k;
}

// Decodes the list [p, end) of T's kind into out[0..n) when it holds exactly n values, laid out
// as writers lay it out; else false (Note [fast paths]).
template <typename T>
bool DecodeFast(const uint8_t* p, const uint8_t* end, int64_t n, T* out) {
  return DecodeFastUpTo(p, end, n, out) == n;
}

// The T stored at p, unaligned.
template <typename T>
T Load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// a[0..n) == b[0..n). Keys are short: two overlapping loads from each end settle most without a
// call to memcmp.
inline bool SameBytes(const char* a, const char* b, size_t n) {
  if (n > 16) return std::memcmp(a, b, n) == 0;
  if (n >= 8) {
    return Load<uint64_t>(a) == Load<uint64_t>(b) &&
           Load<uint64_t>(a + n - 8) == Load<uint64_t>(b + n - 8);
  }
  if (n >= 4) {
    return Load<uint32_t>(a) == Load<uint32_t>(b) &&
           Load<uint32_t>(a + n - 4) == Load<uint32_t>(b + n - 4);
  }
  return n == 0 || (a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1]);
}

// The order of the keys in the records being read: writers keep one order per batch, though
// not always the spec's (protobuf's map serialisers write their hash order). next[s] is the slot
// that followed slot s in the last record (next[K]: its first), tried before the table. Kept per
// chunk of records, so it only speeds up lookups and never changes their results.
struct KeyOrder {
  explicit KeyOrder(int keys) : next(static_cast<size_t>(keys) + 1), start(keys), prev(keys) {
    for (int s = 0; s < keys; ++s) next[s] = s + 1;
    next[keys] = 0;
  }
  void NewRecord() { prev = start; }
  std::vector<int> next;
  int start, prev;
};

// The spec's keys, for the map entries of each record: the slot KeyOrder predicts is tried first
// (a length check and SameBytes); else an open-addressing table over the key bytes, without a
// std::string or a node per lookup.
class KeyIndex {
 public:
  explicit KeyIndex(const std::vector<const std::string*>& keys);
  int size() const { return static_cast<int>(keys_.size()); }
  // The slot of `key`, or -1; a found key becomes `order`'s prediction after its predecessor.
  int Find(std::string_view key, KeyOrder* order) const {
    int& guess = order->next[order->prev];
    const int h = guess;
    if (h < static_cast<int>(keys_.size()) && Equal(keys_[h], key)) {
      order->prev = h;
      return h;
    }
    const int s = Lookup(key);
    if (s >= 0) guess = order->prev = s;
    return s;
  }

 private:
  static bool Equal(std::string_view a, std::string_view b) {
    return a.size() == b.size() && SameBytes(a.data(), b.data(), a.size());
  }
  // FNV-1a: short keys, and a table that holds only the spec's keys, need nothing stronger.
  static uint64_t Hash(std::string_view key) {
    uint64_t h = 14695981039346656037ull;
    for (const char ch : key) h = (h ^ static_cast<uint8_t>(ch)) * 1099511628211ull;
    return h;
  }
  // The slot of `key`, or -1 (ProbeTable's kEmpty).
  int Lookup(std::string_view key) const {
    return table_.Find(Hash(key), [&](const Table::Slot& s) { return Equal(keys_[s.index], key); });
  }

  using Table = ProbeTable<int>;
  std::vector<std::string_view> keys_;
  Table table_;  // the slots of keys_, sized once
};

// Calls f(begin, end) for the payload of every length-delimited field `field` in [p, end), in
// order; other fields are skipped as protobuf skips unknown ones.
template <typename F>
void ForEachDelimited(const Ctx& c, const uint8_t* p, const uint8_t* end, uint32_t field,
                      const F& f) {
  while (p < end) {
    const uint8_t* at = p;
    const Tag t = ReadTag(c, p, end);
    if (t.field != field || t.wire != 2) {
      Skip(c, t, at, p, end);
      continue;
    }
    const uint64_t n = ReadLength(c, p, end);
    f(p, p + n);
    p += n;
  }
}

// One entry of a map<string, Feature> (or <string, FeatureList>): its key, its value's bytes
// (nullptrs when it has none) and, when it holds two values, where the second began.
struct MapEntry {
  std::string_view key;
  const uint8_t* value = nullptr;
  const uint8_t* value_end = nullptr;
  const uint8_t* second = nullptr;
};

// The map entry field at p (before `end`) as writers lay it out: tag 1, its length, then key
// (a length of one byte) and value, each once. Returns the byte after it, or nullptr for any
// other layout, which ForEachEntry's field loop then reads.
[[gnu::always_inline]] inline const uint8_t* ReadPlainEntry(const uint8_t* p, const uint8_t* end,
                                                            MapEntry* e) {
  uint64_t size = 0;
  const uint8_t* q = p[0] == 0x0a ? ParseVarint(p + 1, end, &size) : nullptr;
  // size >= 4 first: the key's tag and length, then the value's tag and length, lie inside.
  if (q == nullptr || size > static_cast<uint64_t>(end - q) || size < 4 || q[0] != 0x0a ||
      q[1] >= 0x80 || size < 4u + q[1]) {
    return nullptr;
  }
  const uint8_t* entry_end = q + size;
  const uint8_t* v = q + 2 + q[1];
  uint64_t n = 0;
  const uint8_t* value = v[0] == 0x12 ? ParseVarint(v + 1, entry_end, &n) : nullptr;
  if (value == nullptr || n != static_cast<uint64_t>(entry_end - value)) return nullptr;
  *e = MapEntry{std::string_view(reinterpret_cast<const char*>(q + 2), q[1]), value, entry_end};
  return entry_end;
}

// Reads the map entry [p, end) in any layout: key 1, value 2, other fields skipped.
MapEntry ReadEntry(const Ctx& c, const uint8_t* p, const uint8_t* end);

// Calls entry(key, value_begin, value_end, second_value) for every map entry of the map at
// top-level field `map_field` of a record, in order: 1, Example.features (also
// SequenceExample.context), or 2, SequenceExample.feature_lists (entries of the same layout: key
// 1, value 2). Several map fields merge, which for a map is their entries in order. An entry
// without a value gives nullptrs; one with two values gives the last and, as second_value, where
// the second began (protobuf would merge them; the parser refuses them, as TensorFlow does).
template <typename Entry>
void ForEachEntry(const Ctx& c, uint32_t map_field, const Entry& entry) {
  ForEachDelimited(c, c.base, c.base + c.size, map_field,
                   [&](const uint8_t* p, const uint8_t* end) {
                     while (p < end) {
                       MapEntry e;
                       if (const uint8_t* next = ReadPlainEntry(p, end, &e)) {
                         entry(e.key, e.value, e.value_end, e.second);
                         p = next;
                         continue;
                       }
                       const uint8_t* at = p;
                       const Tag t = ReadTag(c, p, end);
                       if (t.field != 1 || t.wire != 2) {
                         Skip(c, t, at, p, end);
                         continue;
                       }
                       const uint64_t n = ReadLength(c, p, end);
                       e = ReadEntry(c, p, p + n);
                       entry(e.key, e.value, e.value_end, e.second);
                       p += n;
                     }
                   });
}

// Pass 1's walk over one record: slots[s] = the value bytes of the last entry of key s in the
// map at `map_field` (ForEachEntry).
inline void FindFeatures(const Ctx& c, const KeyIndex& index, KeyOrder* order, Span* slots,
                         uint32_t map_field = 1) {
  order->NewRecord();
  ForEachEntry(c, map_field,
               [&](std::string_view key, const uint8_t* value, const uint8_t* value_end,
                   const uint8_t* second) {
                 if (second != nullptr) {
                   Fail(c, second, "a map entry with two values (key '", Excerpt(key), "')");
                 }
                 const int s = index.Find(key, order);
                 if (s < 0) return;
                 // No value is an empty Feature (missing) or an empty FeatureList (present, no
                 // steps).
                 slots[s] = value == nullptr ? Span{0, 0}
                                             : Span{static_cast<uint32_t>(value - c.base),
                                                    static_cast<uint32_t>(value_end - value)};
               });
}

}  // namespace tensorkit::io::internal

#endif  // TENSORKIT_IO_TF_EXAMPLE_WIRE_H_
