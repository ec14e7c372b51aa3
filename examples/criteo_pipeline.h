// A Criteo-like feature pipeline end to end, shared by examples/feature_pipeline.cc and
// bench/pipeline_bench.cc (bench/peers/pipeline_peers.py runs the same steps in TensorFlow):
//
//   records   tf.Example records in a TFRecord file: an int64 "label", 13 float features
//             "I1".."I13" (one value each, some missing) and 26 categorical bytes features
//             "C1".."C26" (0 to 3 values each: some multi-valued, some empty).
//   parse     FixedLenFeature for the label and the floats (default 0), VarLenFeature for the
//             categorical ones (JaggedTensors).
//   ids       every categorical feature hashed into kBuckets (StringToHashBucketFast), C1 x C2
//             crossed and hashed (SparseCrossHashed), the floats bucketized by fixed boundaries,
//             C3's empty rows filled with id 0 (SparseFillEmptyRows).
//   pool      one embedding table [kBuckets, kDim] per categorical feature, the cross and the
//             filled C3: sum bags; the bucket ids of the floats through one table [21, kDim].
#ifndef TENSORKIT_EXAMPLES_CRITEO_PIPELINE_H_
#define TENSORKIT_EXAMPLES_CRITEO_PIPELINE_H_

#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "tensorkit/tensorkit.h"

namespace criteo {

using namespace tensorkit;

inline constexpr int kDense = 13;
inline constexpr int kCategorical = 26;
inline constexpr int64_t kBuckets = 10000;
inline constexpr int64_t kDim = 8;

// The float boundaries of the dense features (TensorFlow's Bucketize takes floats): 20 of them.
inline std::vector<float> DenseBoundaries() {
  std::vector<float> b;
  for (int i = 0; i < 20; ++i) b.push_back(static_cast<float>(i * i) * 0.5f);
  return b;
}

// Built with a buffer: GCC 12 warns falsely (-Wrestrict) on "I" + std::to_string(...).
inline std::string Key(char prefix, int i) {
  char buf[16];  // a letter and an int
  std::snprintf(buf, sizeof(buf), "%c%d", prefix, i + 1);
  return buf;
}
inline std::string DenseKey(int i) { return Key('I', i); }
inline std::string CategoricalKey(int i) { return Key('C', i); }

// `rows` records, reproducible from `seed`, as serialized tf.Examples.
inline std::vector<std::string> MakeRecords(int64_t rows, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::pair<std::string, Tensor>> fixed;
  std::vector<int64_t> label(static_cast<size_t>(rows));
  for (int64_t& l : label) l = static_cast<int64_t>(rng() % 2);
  fixed.emplace_back("label", Tensor::FromVector(label, {rows, 1}));
  for (int d = 0; d < kDense; ++d) {
    std::vector<float> v(static_cast<size_t>(rows));
    for (float& x : v) x = static_cast<float>(rng() % 20000) / 100.0f;
    fixed.emplace_back(DenseKey(d), Tensor::FromVector(v, {rows, 1}));
  }
  std::vector<std::pair<std::string, JaggedTensor>> var_len;
  for (int c = 0; c < kCategorical; ++c) {
    std::vector<std::string> values;
    std::vector<int64_t> lengths;
    for (int64_t r = 0; r < rows; ++r) {
      // Mostly one value, some empty, a few multi-valued (up to 3).
      const uint64_t u = rng() % 10;
      const int64_t n = u == 0 ? 0 : u < 8 ? 1 : static_cast<int64_t>(2 + rng() % 2);
      lengths.push_back(n);
      for (int64_t k = 0; k < n; ++k) {
        char buf[24];  // room for any 64-bit value in hex
        std::snprintf(buf, sizeof(buf), "%08llx",
                      static_cast<unsigned long long>(rng() % (1000 * (c + 1))));
        values.emplace_back(buf);
      }
    }
    const int64_t n = static_cast<int64_t>(values.size());
    var_len.emplace_back(CategoricalKey(c),
                         JaggedTensor::FromLengths(Tensor::FromVector(std::move(values), {n}),
                                                   Tensor::FromVector(lengths)));
  }
  return io::SerializeExamples(fixed, var_len);
}

// The parse spec of the records.
inline io::ExampleSpec Spec() {
  io::ExampleSpec spec;
  io::FixedLenFeature label;
  label.key = "label";
  label.dtype = DType::kInt64;
  label.shape = {1};
  label.default_value = Tensor::FromVector(std::vector<int64_t>{0}, {1});
  spec.fixed.push_back(label);
  for (int d = 0; d < kDense; ++d) {
    io::FixedLenFeature f;
    f.key = DenseKey(d);
    f.dtype = DType::kFloat32;
    f.shape = {1};
    f.default_value = Tensor::FromVector(std::vector<float>{0.0f}, {1});
    spec.fixed.push_back(f);
  }
  for (int c = 0; c < kCategorical; ++c) {
    io::VarLenFeature v;
    v.key = CategoricalKey(c);
    v.dtype = DType::kString;
    spec.var_len.push_back(v);
  }
  return spec;
}

// Reproducible embedding tables: one per categorical feature, the cross, the filled C3 and the
// dense buckets (the last).
inline std::vector<Tensor> MakeTables() {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-0.05f, 0.05f);
  std::vector<Tensor> tables;
  for (int t = 0; t < kCategorical + 2; ++t) {
    std::vector<float> v(static_cast<size_t>(kBuckets * kDim));
    for (float& x : v) x = u(rng);
    tables.push_back(Tensor::FromVector(v, {kBuckets, kDim}));
  }
  std::vector<float> v(static_cast<size_t>(21 * kDim));
  for (float& x : v) x = u(rng);
  tables.push_back(Tensor::FromVector(v, {21, kDim}));
  return tables;
}

// The pipeline of one batch of records: the pooled [B, kDim] of every feature, in the order of
// the tables (categorical, cross, filled C3, then the 13 dense features' buckets).
inline std::vector<Tensor> Run(const std::vector<std::string_view>& records,
                               const io::ExampleSpec& spec, const std::vector<Tensor>& tables,
                               const std::vector<float>& boundaries) {
  const io::ParsedExamples parsed = io::ParseExamples(records, spec);
  std::vector<Tensor> pooled;
  std::vector<JaggedTensor> ids;
  for (int c = 0; c < kCategorical; ++c) {
    ids.push_back(HashBucketFast(parsed.var_len[c], kBuckets));
    pooled.push_back(EmbeddingBag(tables[c], ids.back(), Combiner::kSum));
  }
  CrossOptions cross;
  cross.output = CrossOutput::kHashedKeyed;  // SparseCrossHashed
  cross.num_buckets = kBuckets;
  const SparseTensor crossed = Cross({parsed.var_len[0], parsed.var_len[1]}, cross);
  pooled.push_back(
      EmbeddingBag(tables[kCategorical], JaggedTensor::FromSparse(crossed), Combiner::kSum));
  const FillEmptyRowsResult filled = FillEmptyRows(ids[2].ToSparse(), int64_t{0});
  pooled.push_back(EmbeddingBag(tables[kCategorical + 1], JaggedTensor::FromSparse(filled.output),
                                Combiner::kSum));
  const int64_t batch = static_cast<int64_t>(records.size());
  const Tensor ones = Tensor::FromVector(std::vector<int64_t>(static_cast<size_t>(batch), 1));
  for (int d = 0; d < kDense; ++d) {
    const Tensor buckets = Bucketize(parsed.fixed[1 + d], boundaries);  // [B, 1] int32
    const Tensor flat = Converted(Reshape(buckets, {batch}), DType::kInt64);
    pooled.push_back(
        EmbeddingBag(tables.back(), JaggedTensor::FromLengths(flat, ones), Combiner::kSum));
  }
  return pooled;
}

}  // namespace criteo

#endif  // TENSORKIT_EXAMPLES_CRITEO_PIPELINE_H_
