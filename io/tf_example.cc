// tf.Example: a hand-written protobuf wire decoder feeding the spec's outputs, and its writer.
//
// Note [two passes]: pass 1 walks each record once, keeps where each spec feature's values are
// (the last map entry of a key wins), checks the list type, decodes FixedLenFeatures straight
// into [B, *shape] and counts VarLenFeature values. Prefix sums of the counts give the jagged
// offsets; pass 2 decodes the VarLenFeature values into place from the kept positions. Both run
// over fixed chunks of records, so nothing depends on the thread count.
#include "tensorkit/io/tf_example.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <limits>
#include <map>
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

// Out of line: the loop over the bytes of a varint of 2 bytes or more.
uint64_t LongVarint(const Ctx& c, const uint8_t*& p, const uint8_t* end) {
  const uint8_t* start = p;
  uint64_t v = 0;
  for (int i = 0; i < 10; ++i) {
    if (p == end) Fail(c, start, "a varint runs past the end of its message");
    const uint8_t b = *p++;
    v |= uint64_t{b & 0x7fu} << (7 * i);  // a 10th byte keeps only its low bit, as protobuf
    if (b < 0x80) return v;
  }
  Fail(c, start, "a varint longer than 10 bytes");
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
    if constexpr (std::is_same_v<T, std::string>) {
      if (kind == kBytesList && t.wire == 2) {
        const uint64_t len = ReadLength(c, p, end);
        (out++)->assign(reinterpret_cast<const char*>(p), len);
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

// The spec's keys, for the map entries of each record.
class KeyIndex {
 public:
  explicit KeyIndex(const std::vector<const std::string*>& keys) : keys_(keys) {
    for (size_t i = 0; i < keys.size(); ++i) map_.emplace(*keys[i], static_cast<int>(i));
  }
  // The slot of `key`, or -1. Writers usually keep one key order, so the slot after the last
  // one found is tried before the hash.
  int Find(std::string_view key, int* hint) const {
    const int h = *hint;
    if (h < static_cast<int>(keys_.size()) && *keys_[h] == key) {
      *hint = h + 1;
      return h;
    }
    auto it = map_.find(key);
    if (it == map_.end()) return -1;
    *hint = it->second + 1;
    return it->second;
  }

 private:
  std::vector<const std::string*> keys_;
  std::unordered_map<std::string_view, int> map_;
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

// Calls entry(key, value_begin, value_end, second_value) for every map entry of the map at
// top-level field `map_field` of a record, in order: 1, Example.features (also
// SequenceExample.context), or 2, SequenceExample.feature_lists (entries of the same layout: key
// 1, value 2). Several map fields merge, which for a map is their entries in order. An entry
// without a value gives nullptrs; one with two values gives the last and, as second_value, where
// the second began (protobuf would merge them; the parser refuses them, as TensorFlow does).
template <typename Entry>
void ForEachEntry(const Ctx& c, uint32_t map_field, const Entry& entry) {
  ForEachDelimited(c, c.base, c.base + c.size, map_field,
                   [&](const uint8_t* fb, const uint8_t* fe) {
                     ForEachDelimited(c, fb, fe, 1, [&](const uint8_t* p, const uint8_t* eend) {
                       std::string_view key;
                       const uint8_t *value = nullptr, *value_end = nullptr, *second = nullptr;
                       while (p < eend) {
                         const uint8_t* fat = p;
                         const Tag ft = ReadTag(c, p, eend);
                         if (ft.wire == 2 && (ft.field == 1 || ft.field == 2)) {
                           const uint64_t n = ReadLength(c, p, eend);
                           if (ft.field == 1) {
                             key = std::string_view(reinterpret_cast<const char*>(p), n);
                           } else {
                             if (value != nullptr && second == nullptr) second = fat;
                             value = p;
                             value_end = p + n;
                           }
                           p += n;
                         } else {
                           Skip(c, ft, fat, p, eend);
                         }
                       }
                       entry(key, value, value_end, second);
                     });
                   });
}

// Pass 1's walk over one record: slots[s] = the value bytes of the last entry of key s in the
// map at `map_field` (ForEachEntry).
void FindFeatures(const Ctx& c, const KeyIndex& index, Span* slots, uint32_t map_field = 1) {
  int hint = 0;
  ForEachEntry(c, map_field,
               [&](std::string_view key, const uint8_t* value, const uint8_t* value_end,
                   const uint8_t* second) {
                 if (second != nullptr) {
                   Fail(c, second, "a map entry with two values (key '", Excerpt(key), "')");
                 }
                 const int s = index.Find(key, &hint);
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

}  // namespace

const Tensor& ParsedExamples::Fixed(std::string_view key) const {
  return internal::OutputOf(fixed_keys, fixed, key, "ParsedExamples::Fixed", "FixedLenFeature");
}

const JaggedTensor& ParsedExamples::VarLen(std::string_view key) const {
  return internal::OutputOf(var_len_keys, var_len, key, "ParsedExamples::VarLen", "VarLenFeature");
}

ParsedExamples internal::ParseFixedAndVarLen(const std::vector<std::string_view>& records,
                                             const ExampleSpec& spec) {
  const Plan plan = CheckSpec(spec);
  const int64_t B = static_cast<int64_t>(records.size());
  const int F = static_cast<int>(spec.fixed.size()), V = static_cast<int>(spec.var_len.size());
  for (int64_t r = 0; r < B; ++r) {
    TK_CHECK(records[r].size() < kAbsent, kUnsupported, "ParseExamples: record ", r, " has ",
             records[r].size(), " bytes; records of 4 GiB or more are not supported");
  }
  const KeyIndex index(plan.keys);

  ParsedExamples out;
  for (const FixedLenFeature& f : spec.fixed) {
    std::vector<int64_t> dims = {B};
    dims.insert(dims.end(), f.shape.begin(), f.shape.end());
    out.fixed.push_back(Tensor::Empty(dims, f.dtype));
    out.fixed_keys.push_back(f.key);
  }
  // VarLenFeature spans (from their run's start) and counts, record-major [B, V].
  std::vector<Span> var_spans(static_cast<size_t>(B * V));
  std::vector<int64_t> counts(static_cast<size_t>(B * V), 0);

  // Output pointers, fetched once rather than per record.
  std::vector<void*> fixed_data(static_cast<size_t>(F));
  for (int f = 0; f < F; ++f) fixed_data[f] = out.fixed[f].raw_data();
  std::vector<const void*> default_data(static_cast<size_t>(F), nullptr);
  for (int f = 0; f < F; ++f) {
    if (plan.defaults[f].defined()) default_data[f] = plan.defaults[f].raw_data();
  }

  // Pass 1 (Note [two passes]).
  const int S = F + V;
  std::vector<std::vector<Span>> chunk_slots(
      static_cast<size_t>(NumChunks(B, internal::kRecordChunk)));
  internal::ForRecords(B, [&](int64_t chunk, int64_t r) {
    std::vector<Span>& slots = chunk_slots[chunk];
    slots.assign(static_cast<size_t>(S), Span{});
    Ctx c{reinterpret_cast<const uint8_t*>(records[r].data()),
          static_cast<int64_t>(records[r].size()), r};
    FindFeatures(c, index, slots.data());
    for (int s = 0; s < S; ++s) {
      const bool fixed = s < F;
      const DType dtype = fixed ? spec.fixed[s].dtype : spec.var_len[s - F].dtype;
      const Kind want = KindOf(dtype);
      FeatureInfo info;
      const uint8_t* fb = c.base + slots[s].begin;
      if (slots[s].begin != kAbsent) {
        c.key = plan.keys[s];
        info = ScanFeature(c, fb, fb + slots[s].size);
        if (info.kind != kNoList && info.kind != want) {
          Throw(ErrorCode::kInvalidArgument, "ParseExamples: record ", r, ", feature '",
                Excerpt(*plan.keys[s]), "': holds a ", KindName(info.kind), " but the spec's ",
                fixed ? "FixedLenFeature" : "VarLenFeature", " is ", DTypeName(dtype), " (a ",
                KindName(want), ")");
        }
      }
      if (!fixed) {
        if (info.kind == kNoList) continue;
        const size_t k = static_cast<size_t>(r * V + (s - F));
        counts[k] = info.count;
        var_spans[k] = Span{slots[s].begin + info.run_begin, slots[s].size - info.run_begin};
        continue;
      }
      const int64_t n = plan.fixed_count[s];
      Dispatch<internal::kExampleDTypes>(dtype, "ParseExamples", [&]<typename T>() {
        T* dst = static_cast<T*>(fixed_data[s]) + r * n;
        if (info.kind == kNoList) {
          TK_CHECK(default_data[s] != nullptr, kInvalidArgument, "ParseExamples: record ", r,
                   ": required feature '", Excerpt(*plan.keys[s]), "' (FixedLenFeature ",
                   DTypeName(dtype), " ", ShapeString(spec.fixed[s].shape),
                   ") is missing and has no default_value");
          const T* def = static_cast<const T*>(default_data[s]);
          std::copy(def, def + n, dst);
          return;
        }
        TK_CHECK(info.count == n, kInvalidArgument, "ParseExamples: record ", r, ", feature '",
                 Excerpt(*plan.keys[s]), "': holds ", info.count, " values but FixedLenFeature ",
                 "shape ", ShapeString(spec.fixed[s].shape), " needs ", n);
        DecodeFeature(c, want, fb + info.run_begin, fb + slots[s].size, dst);
      });
    }
  });

  // Offsets per VarLenFeature, then pass 2.
  std::vector<Tensor> offsets(V), values(V);
  for (int v = 0; v < V; ++v) {
    offsets[v] = Tensor::Empty({B + 1}, DType::kInt64);
    int64_t* o = offsets[v].data<int64_t>();
    o[0] = 0;
    for (int64_t r = 0; r < B; ++r) o[r + 1] = o[r] + counts[static_cast<size_t>(r * V + v)];
    values[v] = Tensor::Empty({o[B]}, spec.var_len[v].dtype);
  }
  std::vector<void*> var_data(static_cast<size_t>(V));
  std::vector<const int64_t*> var_offsets(static_cast<size_t>(V));
  for (int v = 0; v < V; ++v) {
    var_data[v] = values[v].raw_data();
    var_offsets[v] = offsets[v].data<int64_t>();
  }
  if (V > 0) {
    internal::ForRecords(B, [&](int64_t, int64_t r) {
      Ctx c{reinterpret_cast<const uint8_t*>(records[r].data()),
            static_cast<int64_t>(records[r].size()), r};
      for (int v = 0; v < V; ++v) {
        const Span sp = var_spans[static_cast<size_t>(r * V + v)];
        if (sp.begin == kAbsent) continue;
        const Kind kind = KindOf(spec.var_len[v].dtype);
        c.key = plan.keys[F + v];
        Dispatch<internal::kExampleDTypes>(
            spec.var_len[v].dtype, "ParseExamples", [&]<typename T>() {
              T* dst = static_cast<T*>(var_data[v]) + var_offsets[v][r];
              DecodeFeature(c, kind, c.base + sp.begin, c.base + sp.begin + sp.size, dst);
            });
      }
    });
  }
  for (int v = 0; v < V; ++v) {
    out.var_len.push_back(JaggedTensor::FromOffsets(values[v], offsets[v]));
    out.var_len_keys.push_back(spec.var_len[v].key);
  }
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
  ForRecords(B, [&](int64_t, int64_t r) {
    Ctx c{reinterpret_cast<const uint8_t*>(records[r].data()),
          static_cast<int64_t>(records[r].size()), r};
    Span* slots = spans.data() + r * K;
    FindFeatures(c, index, slots, 2);
    for (int k = 0; k < K; ++k) {
      if (slots[k].begin == kAbsent) continue;
      c.key = key_ptrs[k];
      const Kind want = KindOf(keys[k].dtype);
      const uint8_t* b = c.base + slots[k].begin;
      ForEachStep(c, b, b + slots[k].size, [&](int64_t i, const uint8_t* fb, const uint8_t* fe) {
        const FeatureInfo info = ScanFeature(c, fb, fe);
        if (info.kind != kNoList && info.kind != want) {
          Throw(ErrorCode::kInvalidArgument, "ParseSequenceExamples: record ", r,
                ", feature list '", Excerpt(*key_ptrs[k]), "', step ", i, ": holds a ",
                KindName(info.kind), " but the spec's feature is ", DTypeName(keys[k].dtype),
                " (a ", KindName(want), ")");
        }
        ++steps[r * K + k];
        values[r * K + k] += info.count;
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
      const uint8_t* b = c.base + sp.begin;
      Dispatch<kExampleDTypes>(keys[k].dtype, "ParseSequenceExamples", [&]<typename T>() {
        T* dst = static_cast<T*>(data[k]);
        ForEachStep(c, b, b + sp.size, [&](int64_t i, const uint8_t* fb, const uint8_t* fe) {
          const FeatureInfo info = ScanFeature(c, fb, fe);
          if (info.kind != kNoList) DecodeFeature(c, kind, fb + info.run_begin, fe, dst + at);
          at += info.count;
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
  Table all;  // chunks in order: the first type seen is the first record's
  for (Table& t : parts) {
    for (auto& [key, s] : t) {
      auto it = all.find(key);
      if (it == all.end()) {
        all.emplace(key, s);
        continue;
      }
      ExampleFeatureSummary& a = it->second;
      a.mixed_types = a.mixed_types || s.mixed_types || a.dtype != s.dtype;
      a.min_values = std::min(a.min_values, s.min_values);
      a.max_values = std::max(a.max_values, s.max_values);
      a.records += s.records;
      a.values += s.values;
      a.bytes += s.bytes;
      for (const auto& [length, n] : s.lengths) a.lengths[length] += n;
    }
  }
  std::vector<ExampleFeatureSummary> out;
  for (auto& [key, s] : all) out.push_back(std::move(s));
  return out;
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
