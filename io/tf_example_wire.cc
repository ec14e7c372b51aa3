// The parts of the tf.Example wire decoder (tf_example_wire.h) that run off its fast paths: the
// field loops' scan of a Feature, map entries in any layout, long varints and their errors, and
// the building of the key index.
#include "tensorkit/io/tf_example_wire.h"

namespace tensorkit::io::internal {
namespace {

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

}  // namespace

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

KeyIndex::KeyIndex(const std::vector<const std::string*>& keys) {
  for (const std::string* k : keys) keys_.push_back(*k);
  table_.Reset(keys_.size(), 8);
  for (size_t i = 0; i < keys_.size(); ++i) {
    // Keys are unique (checked with the spec).
    table_.PlaceNew(Hash(keys_[i]), Table::Slot{{}, static_cast<int>(i)});
  }
}

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

}  // namespace tensorkit::io::internal
