// Naive feature crosses for the tests: every cross recomputed from scratch by recursion, items
// hashed by TensorFlow's rules written out once more, independently of features/cross.cc.
#ifndef TENSORKIT_TESTS_REFERENCE_CROSS_REFERENCE_H_
#define TENSORKIT_TESTS_REFERENCE_CROSS_REFERENCE_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <variant>
#include <vector>

#include "tensorkit/features/cross.h"
#include "tensorkit/features/hash.h"

namespace tensorkit::reference {

using CrossItem = std::variant<std::string, int64_t>;
struct RefFeature {
  bool dense = false;
  std::vector<std::vector<CrossItem>> rows;
};

inline uint64_t RefItemHash(const CrossOptions& o, bool dense, const CrossItem& item) {
  const bool keyed = o.output == CrossOutput::kHashedKeyed;
  auto hash = [&](std::string_view s) {
    return keyed && o.strong_hash ? StrongKeyedHash(o.salt[0], o.salt[1], s) : Fingerprint64(s);
  };
  if (const auto* s = std::get_if<std::string>(&item)) return hash(*s);
  const int64_t v = std::get<int64_t>(item);
  if (!keyed || (dense && !o.strong_hash)) return static_cast<uint64_t>(v);
  const uint32_t low = static_cast<uint32_t>(static_cast<uint64_t>(v));
  char bytes[4] = {static_cast<char>(low & 0xff), static_cast<char>((low >> 8) & 0xff),
                   static_cast<char>((low >> 16) & 0xff), static_cast<char>(low >> 24)};
  return hash(std::string_view(bytes, 4));
}

inline std::string RefItemString(const CrossItem& item) {
  if (const auto* s = std::get_if<std::string>(&item)) return *s;
  return std::to_string(std::get<int64_t>(item));
}

// Row b's crosses: the items chosen so far in `chosen`, features f.. still to choose.
inline void RefRowCrosses(const std::vector<RefFeature>& fs, const CrossOptions& o, size_t b,
                          size_t f, std::vector<const CrossItem*>* chosen,
                          std::vector<int64_t>* hashed, std::vector<std::string>* strings) {
  if (f == fs.size()) {
    if (o.output == CrossOutput::kStrings) {
      std::string s;
      for (size_t i = 0; i < chosen->size(); ++i) {
        if (i > 0) s += o.separator;
        s += RefItemString(*(*chosen)[i]);
      }
      strings->push_back(s);
      return;
    }
    const bool keyed = o.output == CrossOutput::kHashedKeyed;
    uint64_t h = keyed ? RefItemHash(o, fs[0].dense, *(*chosen)[0]) : o.hash_key;
    for (size_t i = keyed ? 1 : 0; i < chosen->size(); ++i) {
      h = FingerprintCat64(h, RefItemHash(o, fs[i].dense, *(*chosen)[i]));
    }
    const uint64_t mod = o.num_buckets > 0 ? static_cast<uint64_t>(o.num_buckets) : INT64_MAX;
    hashed->push_back(static_cast<int64_t>(h % mod));
    return;
  }
  for (const CrossItem& item : fs[f].rows[b]) {
    chosen->push_back(&item);
    RefRowCrosses(fs, o, b, f + 1, chosen, hashed, strings);
    chosen->pop_back();
  }
}

// Crosses per row: hashed values (or strings for kStrings).
struct RefCrosses {
  std::vector<std::vector<int64_t>> hashed;
  std::vector<std::vector<std::string>> strings;
};
inline RefCrosses RefCross(const std::vector<RefFeature>& fs, const CrossOptions& o) {
  RefCrosses out;
  const size_t batch = fs.empty() ? 0 : fs[0].rows.size();
  out.hashed.resize(batch);
  out.strings.resize(batch);
  for (size_t b = 0; b < batch; ++b) {
    std::vector<const CrossItem*> chosen;
    RefRowCrosses(fs, o, b, 0, &chosen, &out.hashed[b], &out.strings[b]);
  }
  return out;
}

}  // namespace tensorkit::reference

#endif  // TENSORKIT_TESTS_REFERENCE_CROSS_REFERENCE_H_
