// The feature specs of the tf.Example fuzz target, shared with the corpus replay test: a fixed
// and a var-len feature of each dtype, a SparseFeature, a FixedLenSequenceFeature, and
// RaggedFeatures of every partition kind. Their keys overlap ("vfloat32", "rv", "p", "q"), so
// one mutation reaches several features.
#ifndef TENSORKIT_TESTS_FUZZ_TF_EXAMPLE_SPEC_H_
#define TENSORKIT_TESTS_FUZZ_TF_EXAMPLE_SPEC_H_

#include <string>
#include <vector>

#include "tensorkit/io/tf_example.h"

namespace tensorkit::fuzz {

// The first spec holds every non-ragged feature; each next one a RaggedFeature with a
// different inner partition kind (parsed apart, so one kind's refusal hides no other).
inline std::vector<io::ExampleSpec> FuzzExampleSpecs() {
  io::ExampleSpec spec;
  for (DType d : {DType::kInt64, DType::kFloat32, DType::kString}) {
    spec.var_len.push_back({std::string("v") + DTypeName(d), d});
  }
  spec.fixed.push_back(
      {"label", DType::kInt64, {}, Tensor::FromVector(std::vector<int64_t>{0}, {})});
  spec.sparse.push_back({"sp", {"i0", "i1"}, "vfloat32", DType::kFloat32, {8, 1000}, false});
  spec.fixed_sequence.push_back({"seq", DType::kInt64, {3}, {}});
  std::vector<io::ExampleSpec> specs = {spec};
  using P = io::RaggedPartition;
  for (const P& p : {P::RowSplits("p"), P::RowLengths("p"), P::RowStarts("p"), P::RowLimits("p"),
                     P::ValueRowIds("p"), P::UniformRowLength(2)}) {
    io::ExampleSpec r;
    r.ragged.push_back({"r", DType::kInt64, "rv", {P::RowLengths("q"), p}});
    specs.push_back(r);
  }
  return specs;
}

// A SequenceExample spec reading the same keys as feature lists (and "label" as context).
inline io::SequenceExampleSpec FuzzSequenceExampleSpec() {
  io::SequenceExampleSpec spec;
  spec.context.fixed.push_back(
      {"label", DType::kInt64, {}, Tensor::FromVector(std::vector<int64_t>{0}, {})});
  spec.feature_list_dense.push_back({"seq", DType::kInt64, {3}, {}, true});
  spec.feature_list_sparse.push_back({"vfloat32", DType::kFloat32});
  using P = io::RaggedPartition;
  spec.feature_list_ragged.push_back({"r", DType::kInt64, "rv", {P::RowLengths("q")}});
  return spec;
}

}  // namespace tensorkit::fuzz

#endif  // TENSORKIT_TESTS_FUZZ_TF_EXAMPLE_SPEC_H_
