// SequenceExample feature lists: each record's lists of the spec's keys found (the last map entry
// of a key wins), their steps and values counted in pass 1, then step offsets and values put in
// place in pass 2, over the same fixed chunks of records as the Example parse (Note [two passes]
// in tf_example.cc; the fast paths of tf_example_wire.h).
#include <string>
#include <string_view>
#include <vector>

#include "tensorkit/common/error.h"
#include "tensorkit/common/file_util.h"
#include "tensorkit/common/parallel.h"
#include "tensorkit/io/tf_example_internal.h"
#include "tensorkit/io/tf_example_wire.h"

namespace tensorkit::io {
namespace internal {
namespace {

// Calls step(i, feature_begin, feature_end) for every Feature (a step) of a FeatureList.
template <typename Step>
void ForEachStep(const Ctx& c, const uint8_t* p, const uint8_t* end, const Step& step) {
  int64_t i = 0;
  ForEachDelimited(c, p, end, 1, [&](const uint8_t* b, const uint8_t* e) { step(i++, b, e); });
}

// Pass 1's findings per record and key, record-major [B, K]: where the list is, its steps and
// its values.
struct ListCounts {
  std::vector<Span> spans;
  std::vector<int64_t> steps, values;
};

// Pass 1: each record's feature lists of `keys` found, their steps and values counted (the list
// types checked at every step).
ListCounts CountLists(const std::vector<std::string_view>& records,
                      const std::vector<VarLenFeature>& keys,
                      const std::vector<const std::string*>& key_ptrs) {
  const int64_t B = static_cast<int64_t>(records.size());
  const int K = static_cast<int>(keys.size());
  const KeyIndex index(key_ptrs);
  ListCounts counts;
  counts.spans.resize(static_cast<size_t>(B * K));
  counts.steps.assign(static_cast<size_t>(B * K), 0);
  counts.values.assign(counts.steps.size(), 0);
  std::vector<Span>& spans = counts.spans;
  std::vector<int64_t>& steps = counts.steps;
  std::vector<int64_t>& values = counts.values;
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
  return counts;
}

// The outputs of each key laid out from pass 1's counts: record_steps and present filled,
// step_offsets and values allocated; *value_start[r, k] is where record r's values of key k
// start (a prefix sum over records).
std::vector<FeatureListValues> LayOutLists(const std::vector<VarLenFeature>& keys,
                                           const ListCounts& counts, int64_t B,
                                           std::vector<int64_t>* value_start) {
  const int K = static_cast<int>(keys.size());
  std::vector<FeatureListValues> out(static_cast<size_t>(K));
  value_start->assign(static_cast<size_t>(B * K), 0);
  for (int k = 0; k < K; ++k) {
    FeatureListValues& f = out[k];
    f.record_steps = Tensor::Empty({B + 1}, DType::kInt64);
    int64_t* rs = f.record_steps.data<int64_t>();
    rs[0] = 0;
    int64_t total_values = 0;
    f.present.assign(static_cast<size_t>(B), 0);
    for (int64_t r = 0; r < B; ++r) {
      rs[r + 1] = rs[r] + counts.steps[r * K + k];
      (*value_start)[r * K + k] = total_values;
      total_values += counts.values[r * K + k];
      f.present[r] = counts.spans[r * K + k].begin != kAbsent;
    }
    f.step_offsets = Tensor::Empty({rs[B] + 1}, DType::kInt64);
    f.step_offsets.data<int64_t>()[0] = 0;
    f.values = Tensor::Empty({total_values}, keys[k].dtype);
  }
  return out;
}

// Pass 2: every record's step offsets and values into the outputs LayOutLists made.
void DecodeLists(const std::vector<std::string_view>& records,
                 const std::vector<VarLenFeature>& keys,
                 const std::vector<const std::string*>& key_ptrs, const ListCounts& counts,
                 const std::vector<int64_t>& value_start, std::vector<FeatureListValues>* lists) {
  const int64_t B = static_cast<int64_t>(records.size());
  const int K = static_cast<int>(keys.size());
  std::vector<FeatureListValues>& out = *lists;
  std::vector<int64_t*> step_offsets(K);
  std::vector<void*> data(K);
  for (int k = 0; k < K; ++k) {
    step_offsets[k] = out[k].step_offsets.data<int64_t>();
    data[k] = out[k].values.raw_data();
  }
  const std::vector<Span>& spans = counts.spans;
  const std::vector<int64_t>& values = counts.values;
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
}

}  // namespace
}  // namespace internal

std::vector<internal::FeatureListValues> internal::ParseFeatureLists(
    const std::vector<std::string_view>& records, const std::vector<VarLenFeature>& keys) {
  std::vector<const std::string*> key_ptrs;
  for (const VarLenFeature& k : keys) key_ptrs.push_back(&k.key);
  const ListCounts counts = CountLists(records, keys, key_ptrs);
  std::vector<int64_t> value_start;
  std::vector<FeatureListValues> out =
      LayOutLists(keys, counts, static_cast<int64_t>(records.size()), &value_start);
  DecodeLists(records, keys, key_ptrs, counts, value_start, &out);
  return out;
}

}  // namespace tensorkit::io
