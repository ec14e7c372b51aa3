// SummarizeExamples: which features the records hold, with what list types and how many values,
// read by the wire decoder's general Feature scan (tf_example_wire.h).
#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "tensorkit/common/parallel.h"
#include "tensorkit/io/tf_example.h"
#include "tensorkit/io/tf_example_internal.h"
#include "tensorkit/io/tf_example_wire.h"

namespace tensorkit::io {
namespace {

using internal::Ctx;
using internal::FeatureInfo;
using internal::ForEachEntry;
using internal::kFloatList;
using internal::Kind;
using internal::kInt64List;
using internal::kNoList;
using internal::ScanFeature;

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

}  // namespace tensorkit::io
