// tf.Example: a hand-written protobuf wire decoder feeding the spec's outputs, and its writer.
//
// Note [two passes]: pass 1 walks each record once, keeps where each spec feature's values are
// (the last map entry of a key wins), checks the list type, decodes FixedLenFeatures straight
// into [B, *shape] and counts VarLenFeature values. Prefix sums of the counts give the jagged
// offsets; pass 2 puts the VarLenFeature values in place. Values of a trivially copyable type
// (numbers, BytesRefs) are decoded in pass 1 too, while the record is in cache, into a buffer
// per chunk and feature that pass 2 copies whole (a chunk's values of a feature are one run of
// the output); std::strings are decoded by pass 2 from the kept positions. Both passes run over
// fixed chunks of records, so nothing depends on the thread count, and both read the layout
// writers use by fast paths (Note [fast paths]), anything else by the field loops.
#include "tensorkit/io/tf_example.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <limits>
#include <map>
#include <memory>
#include <unordered_map>

#include "tensorkit/common/error.h"
#include "tensorkit/common/file_util.h"
#include "tensorkit/common/parallel.h"
#include "tensorkit/io/tf_example_internal.h"

namespace tensorkit::io {
namespace {

// The Feature oneof's field numbers.
enum Kind : uint8_t { kNoList = 0, kBytesList = 1, kFloatList = 2, kInt64List = 3 };

const char* KindName(Kind k) {
  switch (k) {
    case kBytesList:
      return "bytes_list";
    case kFloatList:
      return "float_list";
    case kInt64List:
      return "int64_list";
    default:
      return "no list";
  }
}

Kind KindOf(DType d) {
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
const uint8_t* ParseLongVarint(const uint8_t* p, const uint8_t* end, uint64_t* v) {
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
uint64_t LongVarint(const Ctx& c, const uint8_t*& p, const uint8_t* end) {
  uint64_t v = 0;
  const uint8_t* next = ParseLongVarint(p, end, &v);
  if (next == nullptr) {
    if (end - p < 10) Fail(c, p, "a varint runs past the end of its message");
    Fail(c, p, "a varint longer than 10 bytes");
  }
  p = next;
  return v;
}

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

// Values in one list message of type `kind` (field 1, packed or not; other fields skipped).
int64_t CountList(const Ctx& c, Kind kind, const uint8_t* p, const uint8_t* end,
                  int64_t* bytes = nullptr) {
  int64_t n = 0;
  while (p < end) {
    const uint8_t* at = p;
    const Tag t = ReadTag(c, p, end);
    if (t.field != 1) {
      Skip(c, t, at, p, end);
      continue;
    }
    if (kind == kBytesList && t.wire == 2) {
      const uint64_t len = ReadLength(c, p, end);
      p += len;
      ++n;
      if (bytes != nullptr) *bytes += static_cast<int64_t>(len);
    } else if (kind == kFloatList && t.wire == 2) {
      const uint64_t len = ReadLength(c, p, end);
      if (len % 4 != 0) Fail(c, at, "a packed float list of ", len, " bytes (not a multiple of 4)");
      p += len;
      n += static_cast<int64_t>(len / 4);
    } else if (kind == kFloatList && t.wire == 5) {
      Skip(c, t, at, p, end);
      ++n;
    } else if (kind == kInt64List && t.wire == 2) {
      const uint64_t len = ReadLength(c, p, end);
      const uint8_t* e = p + len;
      while (p < e) {
        Varint(c, p, e);
        ++n;
      }
    } else if (kind == kInt64List && t.wire == 0) {
      Varint(c, p, end);
      ++n;
    } else {
      Skip(c, t, at, p, end);
    }
  }
  return n;
}

// Decodes the values CountList counted into out[0..); returns the end of what it wrote.
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

FeatureInfo ScanFeature(const Ctx& c, const uint8_t* begin, const uint8_t* end) {
  FeatureInfo f;
  for (const uint8_t* p = begin; p < end;) {
    const uint8_t* at = p;
    const Tag t = ReadTag(c, p, end);
    if (t.field >= 1 && t.field <= 3 && t.wire == 2) {
      const uint64_t len = ReadLength(c, p, end);
      if (t.field != f.kind) {
        f = FeatureInfo{static_cast<Kind>(t.field), static_cast<uint32_t>(at - begin), 0};
      }
      f.count += CountList(c, f.kind, p, p + len, &f.bytes);
      p += len;
    } else {
      Skip(c, t, at, p, end);
    }
  }
  return f;
}

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
  int Lookup(std::string_view key) const;

  std::vector<std::string_view> keys_;
  std::vector<int> table_;  // per bucket: a slot, or -1 when empty; at most half full
  uint64_t mask_ = 0;
};

KeyIndex::KeyIndex(const std::vector<const std::string*>& keys) {
  for (const std::string* k : keys) keys_.push_back(*k);
  size_t buckets = 8;
  while (buckets < 2 * keys_.size()) buckets *= 2;
  table_.assign(buckets, -1);
  mask_ = buckets - 1;
  for (size_t i = 0; i < keys_.size(); ++i) {
    uint64_t b = Hash(keys_[i]) & mask_;
    while (table_[b] >= 0) b = (b + 1) & mask_;  // keys are unique (checked with the spec)
    table_[b] = static_cast<int>(i);
  }
}

int KeyIndex::Lookup(std::string_view key) const {
  for (uint64_t b = Hash(key) & mask_;; b = (b + 1) & mask_) {
    const int s = table_[b];
    if (s < 0 || Equal(keys_[s], key)) return s;
  }
}

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
MapEntry ReadEntry(const Ctx& c, const uint8_t* p, const uint8_t* end) {
  MapEntry e;
  while (p < end) {
    const uint8_t* at = p;
    const Tag t = ReadTag(c, p, end);
    if (t.wire != 2 || (t.field != 1 && t.field != 2)) {
      Skip(c, t, at, p, end);
      continue;
    }
    const uint64_t n = ReadLength(c, p, end);
    if (t.field == 1) {
      e.key = std::string_view(reinterpret_cast<const char*>(p), n);
    } else {
      if (e.value != nullptr && e.second == nullptr) e.second = at;
      e.value = p;
      e.value_end = p + n;
    }
    p += n;
  }
  return e;
}

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
void FindFeatures(const Ctx& c, const KeyIndex& index, KeyOrder* order, Span* slots,
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

// The spec checked, with each FixedLenFeature's default expanded to prod(shape) elements.
struct Plan {
  std::vector<const std::string*> keys;  // fixed, then var_len
  std::vector<int64_t> fixed_count;      // prod(shape)
  std::vector<Tensor> defaults;          // contiguous [count], undefined when required
};

Plan CheckSpec(const ExampleSpec& spec) {
  Plan plan;
  std::unordered_map<std::string_view, int> seen;
  auto add = [&](const std::string& key, DType dtype, const char* what) {
    TK_CHECK(seen.emplace(key, 1).second, kInvalidArgument, "ParseExamples: key '", Excerpt(key),
             "' appears twice in the spec; each feature is parsed once");
    TK_CHECK(KindOf(dtype) != kNoList, kInvalidArgument, "ParseExamples: ", what, " '",
             Excerpt(key), "' has dtype ", DTypeName(dtype),
             "; tf.Example holds int64, float32 or string");
    plan.keys.push_back(&key);
  };
  for (const FixedLenFeature& f : spec.fixed) {
    add(f.key, f.dtype, "FixedLenFeature");
    int64_t n = 1;
    for (int64_t d : f.shape) {
      TK_CHECK(d >= 0, kInvalidArgument, "ParseExamples: FixedLenFeature '", Excerpt(f.key),
               "' has shape ", ShapeString(f.shape), "; every dim must be >= 0");
      n = CheckedMul(n, d, f.key, "FixedLenFeature shape");
    }
    plan.fixed_count.push_back(n);
    Tensor def;
    if (f.default_value.defined()) {
      const Tensor& d = f.default_value;
      TK_CHECK(d.dtype() == f.dtype, kDTypeMismatch, "ParseExamples: FixedLenFeature '",
               Excerpt(f.key), "' is ", DTypeName(f.dtype), " but its default_value is ",
               DTypeName(d.dtype()));
      TK_CHECK(d.NumElements() == n || d.NumElements() == 1, kShapeMismatch,
               "ParseExamples: FixedLenFeature '", Excerpt(f.key), "' of shape ",
               ShapeString(f.shape), " needs a default_value of ", n,
               " elements (or 1, repeated), got dims ", ShapeString(d.Dims()));
      Dispatch<internal::kExampleDTypes>(f.dtype, "ParseExamples", [&]<typename T>() {
        std::vector<T> v = d.To(Device::Cpu()).ToVector<T>();
        if (v.size() == 1 && n != 1) v.assign(static_cast<size_t>(n), v[0]);
        def = Tensor::FromVector<T>(std::move(v), {n});
      });
    }
    plan.defaults.push_back(def);
  }
  for (const VarLenFeature& f : spec.var_len) add(f.key, f.dtype, "VarLenFeature");
  return plan;
}

// What the passes need of one spec feature (fixed, then var_len), fetched once rather than per
// record.
struct Column {
  const std::string* key;
  DType dtype;
  bool fixed;
  const std::vector<int64_t>* shape = nullptr;  // fixed: of one record's values
  int64_t n = 0;                                // fixed: prod(shape)
  void* data = nullptr;       // the output: [B, n] (fixed), the values (var_len, for pass 2)
  const void* def = nullptr;  // fixed: n default values; nullptr: required
  // var_len: its offsets [B + 1]; pass 1 writes record r's count at [r + 1], summed before pass 2.
  int64_t* offsets = nullptr;
};

// Consecutive columns of one dtype, all fixed or all var_len: the passes visit the columns in
// spec order (the error reported is the first one's) and dispatch on the dtype once per group
// rather than once per column.
struct ColumnGroup {
  int begin, end;
  DType dtype;
  bool fixed;
};

std::vector<ColumnGroup> GroupColumns(const std::vector<Column>& columns) {
  std::vector<ColumnGroup> groups;
  for (int s = 0; s < static_cast<int>(columns.size()); ++s) {
    const Column& col = columns[s];
    if (groups.empty() || groups.back().dtype != col.dtype || groups.back().fixed != col.fixed) {
      groups.push_back({s, s, col.dtype, col.fixed});
    }
    groups.back().end = s + 1;
  }
  return groups;
}

// The general read of a present Feature: its list (of the column's kind, else an Error), where
// its run starts and its count.
FeatureInfo ScanColumn(const Ctx& c, const Column& col, int64_t r, const uint8_t* fb,
                       const uint8_t* fe) {
  const FeatureInfo info = ScanFeature(c, fb, fe);
  const Kind want = KindOf(col.dtype);
  if (info.kind != kNoList && info.kind != want) {
    Throw(ErrorCode::kInvalidArgument, "ParseExamples: record ", r, ", feature '",
          Excerpt(*col.key), "': holds a ", KindName(info.kind), " but the spec's ",
          col.fixed ? "FixedLenFeature" : "VarLenFeature", " is ", DTypeName(col.dtype), " (a ",
          KindName(want), ")");
  }
  return info;
}

// Calls body.template operator()<T>() with T the C++ type a column of `dtype` is written as:
// the dtype's, or BytesRef for strings with refs.
template <typename Body>
void DispatchValue(DType dtype, bool refs, const Body& body) {
  Dispatch<internal::kExampleDTypes>(dtype, "ParseExamples", [&]<typename T>() {
    if constexpr (std::is_same_v<T, std::string>) {
      if (refs) return body.template operator()<internal::BytesRef>();
    }
    body.template operator()<T>();
  });
}

// Pass 1 of a FixedLenFeature: record r's n values into dst, from its Feature at `sp` (the
// fast path first, Note [fast paths]) or, when it holds no list, from the default.
template <typename T>
void ParseFixed(Ctx& c, const Column& col, int64_t r, Span sp, T* dst) {
  if (sp.begin != kAbsent) {
    c.key = col.key;
    const uint8_t* fb = c.base + sp.begin;
    const uint8_t* fe = fb + sp.size;
    const uint8_t* list = nullptr;
    if (OneList(fb, fe, KindOf(col.dtype), &list) && DecodeFast(list, fe, col.n, dst)) return;
    const FeatureInfo info = ScanColumn(c, col, r, fb, fe);
    if (info.kind != kNoList) {
      TK_CHECK(info.count == col.n, kInvalidArgument, "ParseExamples: record ", r, ", feature '",
               Excerpt(*col.key), "': holds ", info.count, " values but FixedLenFeature shape ",
               ShapeString(*col.shape), " needs ", col.n);
      DecodeFeature(c, info.kind, fb + info.run_begin, fe, dst);
      return;
    }
  }
  TK_CHECK(col.def != nullptr, kInvalidArgument, "ParseExamples: record ", r,
           ": required feature '", Excerpt(*col.key), "' (FixedLenFeature ", DTypeName(col.dtype),
           " ", ShapeString(*col.shape), ") is missing and has no default_value");
  const T* def = static_cast<const T*>(col.def);
  std::copy(def, def + col.n, dst);
}

// Pass 1 of a VarLenFeature: record r's value count, and in *lists where the run of its lists
// starts in its Feature at `sp` (left absent when it holds none).
template <typename T>
void CountVarLen(Ctx& c, const Column& col, int64_t r, Span sp, Span* lists) {
  int64_t count = 0;
  if (sp.begin != kAbsent) {
    c.key = col.key;
    const uint8_t* fb = c.base + sp.begin;
    const uint8_t* fe = fb + sp.size;
    const uint8_t* list = nullptr;
    if (OneList(fb, fe, KindOf(col.dtype), &list) && (count = CountFast<T>(list, fe)) >= 0) {
      *lists = sp;
    } else {
      const FeatureInfo info = ScanColumn(c, col, r, fb, fe);
      count = info.count;
      if (info.kind != kNoList) *lists = Span{sp.begin + info.run_begin, sp.size - info.run_begin};
    }
  }
  col.offsets[r + 1] = count;
}

// Pass 1's VarLenFeature values of one chunk (Note [two passes]): written in place without
// being zeroed first, in a buffer that grows by doubling.
struct Staged {
  // Room for n more T after the committed ones.
  template <typename T>
  T* Reserve(int64_t n) {
    const size_t need = size + static_cast<size_t>(n) * sizeof(T);
    if (need > capacity) {
      capacity = std::max({need, 2 * capacity, internal::kRecordChunk * sizeof(T)});
      std::unique_ptr<unsigned char[]> grown(new unsigned char[capacity]);
      if (size > 0) std::memcpy(grown.get(), data.get(), size);
      data = std::move(grown);
    }
    return reinterpret_cast<T*>(data.get() + size);
  }
  template <typename T>
  void Commit(int64_t n) {
    size += static_cast<size_t>(n) * sizeof(T);
  }
  std::unique_ptr<unsigned char[]> data;
  size_t size = 0, capacity = 0;
};

// At least the values of the list [p, end) of T's kind: each takes two bytes or more (bytes:
// tag and length), exactly four (floats) or one or more (varints).
template <typename T>
int64_t MaxValues(const uint8_t* p, const uint8_t* end) {
  if constexpr (kIsBytes<T>) return (end - p) / 2;
  if constexpr (std::is_same_v<T, float>) return (end - p) / 4;
  return end - p;
}

// Pass 1 of a VarLenFeature of a trivially copyable T (Note [two passes]): record r's values
// from its Feature at `sp` appended to *staged; returns their count.
template <typename T>
int64_t StageVarLen(Ctx& c, const Column& col, int64_t r, Span sp, Staged* staged) {
  if (sp.begin == kAbsent) return 0;
  c.key = col.key;
  const uint8_t* fb = c.base + sp.begin;
  const uint8_t* fe = fb + sp.size;
  const uint8_t* list = nullptr;
  if (OneList(fb, fe, KindOf(col.dtype), &list)) {
    const int64_t cap = MaxValues<T>(list, fe);
    const int64_t n = DecodeFastUpTo(list, fe, cap, staged->Reserve<T>(cap));
    if (n >= 0) {
      staged->Commit<T>(n);
      return n;
    }
  }
  const FeatureInfo info = ScanColumn(c, col, r, fb, fe);
  if (info.kind == kNoList || info.count == 0) return 0;
  DecodeFeature(c, info.kind, fb + info.run_begin, fe, staged->Reserve<T>(info.count));
  staged->Commit<T>(info.count);
  return info.count;
}

// Pass 2 of a VarLenFeature: the n values of `lists` (CountVarLen's) into dst.
template <typename T>
void DecodeVarLen(const Ctx& c, Kind kind, Span lists, int64_t n, T* dst) {
  const uint8_t* b = c.base + lists.begin;
  const uint8_t* e = b + lists.size;
  const uint8_t* list = nullptr;
  if (OneList(b, e, kind, &list) && DecodeFast(list, e, n, dst)) return;
  DecodeFeature(c, kind, b, e, dst);
}

// Records [b, e) of the string FixedLenFeatures among `columns` (BytesRefs) into their string
// targets: those that take ranges in any order when `in_order` is false, the others when true.
void SetFixedStrings(const std::vector<internal::FixedTarget>& targets,
                     const std::vector<Column>& columns, int64_t b, int64_t e, bool in_order) {
  for (size_t f = 0; f < targets.size(); ++f) {
    StringOutput* out = targets[f].strings;
    if (out == nullptr || out->InOrder() != in_order) continue;
    const auto* refs = static_cast<const internal::BytesRef*>(columns[f].data);
    const int64_t n = columns[f].n;
    out->SetSpans(b * n, e * n, refs + b * n);
  }
}

}  // namespace

const Tensor& ParsedExamples::Fixed(std::string_view key) const {
  return internal::OutputOf(fixed_keys, fixed, key, "ParsedExamples::Fixed", "FixedLenFeature");
}

const JaggedTensor& ParsedExamples::VarLen(std::string_view key) const {
  return internal::OutputOf(var_len_keys, var_len, key, "ParsedExamples::VarLen", "VarLenFeature");
}

ParsedExamples internal::ParseFixedAndVarLen(const std::vector<std::string_view>& records,
                                             const ExampleSpec& spec,
                                             const std::vector<FixedTarget>* targets) {
  const Plan plan = CheckSpec(spec);
  const int64_t B = static_cast<int64_t>(records.size());
  const int F = static_cast<int>(spec.fixed.size()), V = static_cast<int>(spec.var_len.size());
  for (int64_t r = 0; r < B; ++r) {
    TK_CHECK(records[r].size() < kAbsent, kUnsupported, "ParseExamples: record ", r, " has ",
             records[r].size(), " bytes; records of 4 GiB or more are not supported");
  }
  const KeyIndex index(plan.keys);

  // A column's output: as its dtype, or BytesRef pairs for strings with targets.
  const bool refs = targets != nullptr;
  TK_INTERNAL_CHECK(!refs || static_cast<int>(targets->size()) == F);
  auto empty = [&](std::vector<int64_t> dims, DType dtype) {
    if (!refs || dtype != DType::kString) return Tensor::Empty(dims, dtype);
    dims.push_back(2);
    return Tensor::Empty(dims, DType::kInt64);
  };
  // With refs, string defaults point into the spec's own default_value, which outlives the
  // refs (plan.defaults does not).
  std::vector<std::vector<BytesRef>> ref_defaults(static_cast<size_t>(F));

  ParsedExamples out;
  std::vector<Column> columns;
  for (int f = 0; f < F; ++f) {
    const FixedLenFeature& x = spec.fixed[f];
    std::vector<int64_t> dims = {B};
    dims.insert(dims.end(), x.shape.begin(), x.shape.end());
    if (refs && x.dtype != DType::kString) {
      const Tensor& t = (*targets)[f].numbers;
      TK_INTERNAL_CHECK(t.defined() && t.dtype() == x.dtype && t.IsContiguous() &&
                        t.NumElements() == B * plan.fixed_count[f]);
      out.fixed.push_back(t.WithPattern(DefaultPattern(dims, "ParseExamples")));
    } else {
      out.fixed.push_back(empty(dims, x.dtype));
    }
    out.fixed_keys.push_back(x.key);
    const void* def = plan.defaults[f].defined() ? plan.defaults[f].raw_data() : nullptr;
    if (refs && def != nullptr && x.dtype == DType::kString) {
      const Tensor& d = x.default_value;
      TK_CHECK(d.device().is_cpu() && d.IsContiguous(), kInternal,
               "ParseFixedAndVarLen: with targets the default_value of '", Excerpt(x.key),
               "' must be a contiguous CPU tensor");
      const std::string* v = d.data<std::string>();
      for (int64_t i = 0; i < plan.fixed_count[f]; ++i) {
        const std::string& one = v[d.NumElements() == 1 ? 0 : i];
        ref_defaults[f].push_back(BytesRef{one.data(), static_cast<int64_t>(one.size())});
      }
      def = ref_defaults[f].data();
    }
    columns.push_back(
        Column{&x.key, x.dtype, true, &x.shape, plan.fixed_count[f], out.fixed[f].raw_data(), def});
  }
  // Per VarLenFeature: its offsets, and where its lists start in each record ([B, V]).
  std::vector<Tensor> offsets(V), values(V);
  // Staged: the values decoded by pass 1, per chunk and VarLenFeature ([chunks, V]).
  const size_t chunks = static_cast<size_t>(NumChunks(B, internal::kRecordChunk));
  std::vector<Staged> staged(chunks * V);
  std::vector<Span> var_lists;  // std::strings only: where each record's lists start, [B, V]
  for (const VarLenFeature& f : spec.var_len) {
    if (f.dtype == DType::kString && !refs) var_lists.resize(static_cast<size_t>(B * V));
  }
  for (int v = 0; v < V; ++v) {
    offsets[v] = Tensor::Empty({B + 1}, DType::kInt64);
    Column col{&spec.var_len[v].key, spec.var_len[v].dtype, false};
    col.offsets = offsets[v].data<int64_t>();
    columns.push_back(col);
  }
  const std::vector<ColumnGroup> groups = GroupColumns(columns);

  // Pass 1 (Note [two passes]).
  std::vector<std::vector<Span>> chunk_slots(chunks);
  std::vector<KeyOrder> chunk_orders(chunks, KeyOrder(index.size()));
  internal::ForRecords(B, [&](int64_t chunk, int64_t r) {
    std::vector<Span>& slots = chunk_slots[chunk];
    slots.assign(columns.size(), Span{});
    Ctx c{reinterpret_cast<const uint8_t*>(records[r].data()),
          static_cast<int64_t>(records[r].size()), r};
    FindFeatures(c, index, &chunk_orders[chunk], slots.data());
    for (const ColumnGroup& g : groups) {
      DispatchValue(g.dtype, refs, [&]<typename T>() {
        for (int s = g.begin; s < g.end; ++s) {
          const Column& col = columns[s];
          if (g.fixed) {
            ParseFixed(c, col, r, slots[s], static_cast<T*>(col.data) + r * col.n);
          } else if constexpr (std::is_trivially_copyable_v<T>) {
            col.offsets[r + 1] = StageVarLen<T>(c, col, r, slots[s],
                                                &staged[static_cast<size_t>(chunk * V + s - F)]);
          } else {
            CountVarLen<T>(c, col, r, slots[s], &var_lists[static_cast<size_t>(r * V + s - F)]);
          }
        }
      });
    }
    if (refs && (r + 1 == B || (r + 1) % internal::kRecordChunk == 0)) {
      SetFixedStrings(*targets, columns, chunk * internal::kRecordChunk, r + 1, false);
    }
  });
  if (refs) SetFixedStrings(*targets, columns, 0, B, true);

  // Offsets per VarLenFeature, then pass 2.
  ParallelFor(0, V, 1, [&](int64_t b, int64_t e) {
    for (int64_t v = b; v < e; ++v) {
      int64_t* o = columns[F + v].offsets;
      o[0] = 0;
      for (int64_t r = 0; r < B; ++r) o[r + 1] += o[r];
      values[v] = empty({o[B]}, spec.var_len[v].dtype);
      columns[F + v].data = values[v].raw_data();
    }
  });
  // Staged values: one copy per chunk and feature.
  ParallelFor(0, static_cast<int64_t>(staged.size()), 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const Staged& buf = staged[static_cast<size_t>(i)];
      if (buf.size == 0) continue;
      const Column& col = columns[F + i % V];
      const int64_t first = std::min(B, (i / V) * internal::kRecordChunk);
      const int64_t size =
          col.dtype == DType::kString ? int64_t{sizeof(BytesRef)} : DTypeSize(col.dtype);
      const int64_t last = std::min(B, first + internal::kRecordChunk);
      TK_INTERNAL_CHECK(static_cast<int64_t>(buf.size) ==
                        size * (col.offsets[last] - col.offsets[first]));
      std::memcpy(static_cast<unsigned char*>(col.data) + size * col.offsets[first], buf.data.get(),
                  buf.size);
    }
  });
  if (!var_lists.empty()) {
    internal::ForRecords(B, [&](int64_t, int64_t r) {
      Ctx c{reinterpret_cast<const uint8_t*>(records[r].data()),
            static_cast<int64_t>(records[r].size()), r};
      for (const ColumnGroup& g : groups) {
        if (g.fixed) continue;
        DispatchValue(g.dtype, refs, [&]<typename T>() {
          if constexpr (std::is_trivially_copyable_v<T>) return;  // staged
          for (int s = g.begin; s < g.end; ++s) {
            const Span lists = var_lists[static_cast<size_t>(r * V + s - F)];
            if (lists.begin == kAbsent) continue;
            const Column& col = columns[s];
            c.key = col.key;
            const int64_t at = col.offsets[r];
            DecodeVarLen(c, KindOf(g.dtype), lists, col.offsets[r + 1] - at,
                         static_cast<T*>(col.data) + at);
          }
        });
      }
    });
  }
  out.var_len.resize(static_cast<size_t>(V));
  ParallelFor(0, V, 1, [&](int64_t b, int64_t e) {
    for (int64_t v = b; v < e; ++v)
      out.var_len[v] = JaggedTensor::FromOffsets(values[v], offsets[v]);
  });
  for (int v = 0; v < V; ++v) out.var_len_keys.push_back(spec.var_len[v].key);
  return out;
}

namespace {

// Calls step(i, feature_begin, feature_end) for every Feature (a step) of a FeatureList.
template <typename Step>
void ForEachStep(const Ctx& c, const uint8_t* p, const uint8_t* end, const Step& step) {
  int64_t i = 0;
  ForEachDelimited(c, p, end, 1, [&](const uint8_t* b, const uint8_t* e) { step(i++, b, e); });
}

}  // namespace

std::vector<internal::FeatureListValues> internal::ParseFeatureLists(
    const std::vector<std::string_view>& records, const std::vector<VarLenFeature>& keys) {
  const int64_t B = static_cast<int64_t>(records.size());
  const int K = static_cast<int>(keys.size());
  std::vector<const std::string*> key_ptrs;
  for (const VarLenFeature& k : keys) key_ptrs.push_back(&k.key);
  const KeyIndex index(key_ptrs);
  // Pass 1: where each list is, its steps and values, record-major [B, K].
  std::vector<Span> spans(static_cast<size_t>(B * K));
  std::vector<int64_t> steps(static_cast<size_t>(B * K), 0), values(steps.size(), 0);
  std::vector<KeyOrder> orders(static_cast<size_t>(NumChunks(B, kRecordChunk)), KeyOrder(K));
  ForRecords(B, [&](int64_t chunk, int64_t r) {
    Ctx c{reinterpret_cast<const uint8_t*>(records[r].data()),
          static_cast<int64_t>(records[r].size()), r};
    Span* slots = spans.data() + r * K;
    FindFeatures(c, index, &orders[chunk], slots, 2);
    for (int k = 0; k < K; ++k) {
      if (slots[k].begin == kAbsent) continue;
      c.key = key_ptrs[k];
      const Kind want = KindOf(keys[k].dtype);
      const uint8_t* b = c.base + slots[k].begin;
      Dispatch<kExampleDTypes>(keys[k].dtype, "ParseSequenceExamples", [&]<typename T>() {
        ForEachStep(c, b, b + slots[k].size, [&](int64_t i, const uint8_t* fb, const uint8_t* fe) {
          ++steps[r * K + k];
          const uint8_t* list = nullptr;
          if (OneList(fb, fe, want, &list)) {  // Note [fast paths]
            const int64_t n = CountFast<T>(list, fe);
            if (n >= 0) {
              values[r * K + k] += n;
              return;
            }
          }
          const FeatureInfo info = ScanFeature(c, fb, fe);
          if (info.kind != kNoList && info.kind != want) {
            Throw(ErrorCode::kInvalidArgument, "ParseSequenceExamples: record ", r,
                  ", feature list '", Excerpt(*key_ptrs[k]), "', step ", i, ": holds a ",
                  KindName(info.kind), " but the spec's feature is ", DTypeName(keys[k].dtype),
                  " (a ", KindName(want), ")");
          }
          values[r * K + k] += info.count;
        });
      });
    }
  });
  std::vector<FeatureListValues> out(static_cast<size_t>(K));
  std::vector<int64_t*> step_offsets(K);
  std::vector<void*> data(K);
  // value_start[r, k]: where record r's values of key k start (a prefix sum over records).
  std::vector<int64_t> value_start(static_cast<size_t>(B * K), 0);
  for (int k = 0; k < K; ++k) {
    FeatureListValues& f = out[k];
    f.record_steps = Tensor::Empty({B + 1}, DType::kInt64);
    int64_t* rs = f.record_steps.data<int64_t>();
    rs[0] = 0;
    int64_t total_values = 0;
    f.present.assign(static_cast<size_t>(B), 0);
    for (int64_t r = 0; r < B; ++r) {
      rs[r + 1] = rs[r] + steps[r * K + k];
      value_start[r * K + k] = total_values;
      total_values += values[r * K + k];
      f.present[r] = spans[r * K + k].begin != kAbsent;
    }
    f.step_offsets = Tensor::Empty({rs[B] + 1}, DType::kInt64);
    f.step_offsets.data<int64_t>()[0] = 0;
    f.values = Tensor::Empty({total_values}, keys[k].dtype);
    step_offsets[k] = f.step_offsets.data<int64_t>();
    data[k] = f.values.raw_data();
  }
  // Pass 2: step offsets and values into place.
  ForRecords(B, [&](int64_t, int64_t r) {
    Ctx c{reinterpret_cast<const uint8_t*>(records[r].data()),
          static_cast<int64_t>(records[r].size()), r};
    for (int k = 0; k < K; ++k) {
      const Span sp = spans[r * K + k];
      if (sp.begin == kAbsent) continue;
      c.key = key_ptrs[k];
      const Kind kind = KindOf(keys[k].dtype);
      const int64_t first_step = out[k].record_steps.data<int64_t>()[r];
      int64_t at = value_start[r * K + k];
      const int64_t stop = at + values[r * K + k];  // what pass 1 counted for the record
      const uint8_t* b = c.base + sp.begin;
      Dispatch<kExampleDTypes>(keys[k].dtype, "ParseSequenceExamples", [&]<typename T>() {
        T* dst = static_cast<T*>(data[k]);
        ForEachStep(c, b, b + sp.size, [&](int64_t i, const uint8_t* fb, const uint8_t* fe) {
          const uint8_t* list = nullptr;
          const int64_t n =
              OneList(fb, fe, kind, &list) ? DecodeFastUpTo(list, fe, stop - at, dst + at) : -1;
          if (n >= 0) {
            at += n;
          } else {
            const FeatureInfo info = ScanFeature(c, fb, fe);
            if (info.kind != kNoList) DecodeFeature(c, kind, fb + info.run_begin, fe, dst + at);
            at += info.count;
          }
          step_offsets[k][first_step + i + 1] = at;
        });
      });
    }
  });
  return out;
}

namespace {

DType DTypeOfKind(Kind k) {
  return k == kInt64List ? DType::kInt64 : k == kFloatList ? DType::kFloat32 : DType::kString;
}

}  // namespace

std::vector<ExampleFeatureSummary> SummarizeExamples(const std::vector<std::string_view>& records,
                                                     bool count_lengths) {
  using Table = std::map<std::string, ExampleFeatureSummary, std::less<>>;
  const int64_t n = static_cast<int64_t>(records.size());
  std::vector<Table> parts(static_cast<size_t>(NumChunks(n, internal::kRecordChunk)));
  internal::ForRecords(n, [&](int64_t chunk, int64_t r) {
    Ctx c{reinterpret_cast<const uint8_t*>(records[r].data()),
          static_cast<int64_t>(records[r].size()), r};
    std::map<std::string_view, FeatureInfo> held;  // the last entry of each key
    ForEachEntry(c, 1,
                 [&](std::string_view key, const uint8_t* b, const uint8_t* e, const uint8_t*) {
                   held[key] = b == nullptr ? FeatureInfo{} : ScanFeature(c, b, e);
                 });
    Table& t = parts[chunk];
    for (const auto& [key, f] : held) {
      if (f.kind == kNoList) continue;
      auto it = t.find(key);
      if (it == t.end()) {
        ExampleFeatureSummary s;
        s.key = std::string(key);
        s.dtype = DTypeOfKind(f.kind);
        s.min_values = s.max_values = f.count;
        it = t.emplace(s.key, s).first;
      }
      ExampleFeatureSummary& s = it->second;
      s.mixed_types = s.mixed_types || s.dtype != DTypeOfKind(f.kind);
      s.min_values = std::min(s.min_values, f.count);
      s.max_values = std::max(s.max_values, f.count);
      ++s.records;
      s.values += f.count;
      s.bytes += f.bytes;
      if (count_lengths) ++s.lengths[f.count];
    }
  });
  std::vector<ExampleFeatureSummary> out;  // chunks in order: the first type seen is the first
  for (Table& t : parts) {                 // record's
    std::vector<ExampleFeatureSummary> part;
    part.reserve(t.size());
    for (auto& [key, s] : t) part.push_back(std::move(s));
    MergeExampleSummaries(&out, std::move(part));
  }
  return out;
}

void MergeExampleSummaries(std::vector<ExampleFeatureSummary>* into,
                           std::vector<ExampleFeatureSummary> later) {
  std::vector<ExampleFeatureSummary> out;
  out.reserve(into->size() + later.size());
  auto a = into->begin();
  auto b = later.begin();
  while (a != into->end() || b != later.end()) {
    if (b == later.end() || (a != into->end() && a->key < b->key)) {
      out.push_back(std::move(*a++));
    } else if (a == into->end() || b->key < a->key) {
      out.push_back(std::move(*b++));
    } else {  // one key in both: the earlier records' type stays first
      ExampleFeatureSummary& s = *a;
      s.mixed_types = s.mixed_types || b->mixed_types || s.dtype != b->dtype;
      s.min_values = std::min(s.min_values, b->min_values);
      s.max_values = std::max(s.max_values, b->max_values);
      s.records += b->records;
      s.values += b->values;
      s.bytes += b->bytes;
      for (const auto& [length, n] : b->lengths) s.lengths[length] += n;
      out.push_back(std::move(*a++));
      ++b;
    }
  }
  *into = std::move(out);
}

ParsedExamples ParseExampleBatch(const TFRecordBatch& batch, const ExampleSpec& spec) {
  std::vector<std::string_view> records(static_cast<size_t>(batch.size()));
  for (int64_t i = 0; i < batch.size(); ++i) records[i] = batch[i];
  return ParseExamples(records, spec);
}

// ---------------------------------------------------------------------------------------------
// Writing
// ---------------------------------------------------------------------------------------------

namespace {

void PutVarint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

void PutLengthDelimited(uint32_t field, std::string_view payload, std::string* out) {
  PutVarint(field << 3 | 2, out);
  PutVarint(payload.size(), out);
  out->append(payload);
}

// One feature's values: `n` elements at `data` of `dtype` (int64, float or std::string).
struct FeatureValues {
  const std::string* key;
  DType dtype;
  const void* data;
  int64_t n;
};

// The Feature message of `f`: its list, packed as proto3 writes repeated numbers.
void PutFeature(const FeatureValues& f, std::string* scratch, std::string* out) {
  scratch->clear();
  if (f.dtype == DType::kInt64) {
    std::string packed;
    const auto* v = static_cast<const int64_t*>(f.data);
    for (int64_t i = 0; i < f.n; ++i) PutVarint(static_cast<uint64_t>(v[i]), &packed);
    if (f.n > 0) PutLengthDelimited(1, packed, scratch);
  } else if (f.dtype == DType::kFloat32) {
    if (f.n > 0) {
      PutLengthDelimited(1, std::string_view(static_cast<const char*>(f.data), 4 * f.n), scratch);
    }
  } else {
    const auto* v = static_cast<const std::string*>(f.data);
    for (int64_t i = 0; i < f.n; ++i) PutLengthDelimited(1, v[i], scratch);
  }
  std::string feature;
  PutLengthDelimited(KindOf(f.dtype), *scratch, &feature);
  std::string entry;
  PutLengthDelimited(1, *f.key, &entry);
  PutLengthDelimited(2, feature, &entry);
  PutLengthDelimited(1, entry, out);
}

std::string PutExample(const std::vector<FeatureValues>& features) {
  std::string body, scratch;
  for (const FeatureValues& f : features) PutFeature(f, &scratch, &body);
  std::string out;
  PutLengthDelimited(1, body, &out);
  return out;
}

void CheckWritable(const std::string& key, DType dtype, const char* op) {
  TK_CHECK(KindOf(dtype) != kNoList, kDTypeMismatch, op, ": feature '", Excerpt(key),
           "' has dtype ", DTypeName(dtype),
           "; tf.Example holds int64, float32 and string (convert with Copy first)");
}

void CheckUniqueKeys(const std::vector<const std::string*>& keys, const char* op) {
  std::unordered_map<std::string_view, int> seen;
  for (const std::string* k : keys) {
    TK_CHECK(seen.emplace(*k, 1).second, kInvalidArgument, op, ": key '", Excerpt(*k),
             "' appears twice; a Features map holds each key once");
  }
}

}  // namespace

std::string SerializeExample(const std::vector<std::pair<std::string, Tensor>>& features) {
  std::vector<Tensor> host;
  std::vector<FeatureValues> values;
  std::vector<const std::string*> keys;
  for (const auto& [key, t] : features) {
    t.CheckDefined("SerializeExample");
    CheckWritable(key, t.dtype(), "SerializeExample");
    host.push_back(t.HostContiguous());
    keys.push_back(&key);
  }
  CheckUniqueKeys(keys, "SerializeExample");
  for (size_t i = 0; i < features.size(); ++i) {
    values.push_back(
        {&features[i].first, host[i].dtype(), host[i].raw_data(), host[i].NumElements()});
  }
  return PutExample(values);
}

std::vector<std::string> SerializeExamples(
    const std::vector<std::pair<std::string, Tensor>>& fixed,
    const std::vector<std::pair<std::string, JaggedTensor>>& var_len) {
  int64_t B = -1;
  std::vector<const std::string*> keys;
  auto rows = [&](const std::string& key, int64_t b) {
    TK_CHECK(B < 0 || b == B, kShapeMismatch, "SerializeExamples: feature '", Excerpt(key),
             "' has ", b, " rows but the ones before it have ", B);
    B = b;
    keys.push_back(&key);
  };
  std::vector<Tensor> host;
  for (const auto& [key, t] : fixed) {
    t.CheckDefined("SerializeExamples");
    TK_CHECK(t.NumAxes() >= 1, kShapeMismatch, "SerializeExamples: feature '", Excerpt(key),
             "' is a scalar; fixed features are [B, ...]");
    CheckWritable(key, t.dtype(), "SerializeExamples");
    rows(key, t.Dim(0));
    host.push_back(t.HostContiguous());
  }
  std::vector<Tensor> jvalues;
  for (const auto& [key, j] : var_len) {
    TK_CHECK(j.defined(), kInvalidArgument, "SerializeExamples: feature '", Excerpt(key),
             "' is an undefined JaggedTensor");
    CheckWritable(key, j.dtype(), "SerializeExamples");
    TK_CHECK(j.values().NumAxes() == 1, kShapeMismatch, "SerializeExamples: feature '",
             Excerpt(key), "' has values of dims ", ShapeString(j.values().Dims()),
             "; a tf.Example list is 1-D");
    rows(key, j.batch_size());
    jvalues.push_back(j.values().HostContiguous());
  }
  CheckUniqueKeys(keys, "SerializeExamples");
  if (B < 0) B = 0;
  std::vector<std::string> out(static_cast<size_t>(B));
  ParallelChunks(B, 256, [&](int64_t, int64_t b, int64_t e) {
    std::vector<FeatureValues> row;
    for (int64_t i = b; i < e; ++i) {
      row.clear();
      for (size_t k = 0; k < fixed.size(); ++k) {
        const int64_t n = B > 0 ? host[k].NumElements() / B : 0;
        const char* base = static_cast<const char*>(host[k].raw_data());
        row.push_back(
            {&fixed[k].first, host[k].dtype(), base + i * n * DTypeSize(host[k].dtype()), n});
      }
      for (size_t k = 0; k < var_len.size(); ++k) {
        const int64_t* o = var_len[k].second.offsets_data();
        const char* base = static_cast<const char*>(jvalues[k].raw_data());
        row.push_back({&var_len[k].first, jvalues[k].dtype(),
                       base + o[i] * DTypeSize(jvalues[k].dtype()), o[i + 1] - o[i]});
      }
      out[static_cast<size_t>(i)] = PutExample(row);
    }
  });
  return out;
}

}  // namespace tensorkit::io
