// tf.Example writing: SerializeExample and SerializeExamples lay out each record as protobuf
// writes it (one list field per Feature, numbers packed), the layout the parse's fast paths read.
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tensorkit/common/error.h"
#include "tensorkit/common/file_util.h"
#include "tensorkit/common/parallel.h"
#include "tensorkit/io/tf_example.h"
#include "tensorkit/io/tf_example_wire.h"

namespace tensorkit::io {
namespace {

using internal::KindOf;
using internal::kNoList;

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
