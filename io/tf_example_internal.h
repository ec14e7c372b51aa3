// tensorkit/io/tf_example_internal.h: internal to io/ (not installed): what the tf_example*.cc
// files share: the parses of tf_example.cc (Example) and tf_example_sequence.cc (SequenceExample
// feature lists), the composites built on them (tf_example_composite.cc), and the writes into
// an OutputAllocator's outputs (tf_example_outputs.cc). The wire decoder is tf_example_wire.h.
#ifndef TENSORKIT_IO_TF_EXAMPLE_INTERNAL_H_
#define TENSORKIT_IO_TF_EXAMPLE_INTERNAL_H_

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tensorkit/common/error.h"
#include "tensorkit/common/file_util.h"
#include "tensorkit/common/outputs.h"
#include "tensorkit/common/parallel.h"
#include "tensorkit/io/tf_example.h"

namespace tensorkit::io::internal {

// The dtypes a tf.Example holds.
inline constexpr DTypeSet kExampleDTypes =
    Bit(DType::kInt64) | Bit(DType::kFloat32) | Bit(DType::kString);

// Records per parallel chunk: fixed, so outputs and the error reported do not depend on the
// thread count.
inline constexpr int64_t kRecordChunk = 256;

// Runs body(chunk, record) for every record over fixed chunks; rethrows the first record's
// Error.
template <typename Body>
void ForRecords(int64_t n, const Body& body) {
  std::vector<std::exception_ptr> errors(static_cast<size_t>(NumChunks(n, kRecordChunk)));
  ParallelChunks(n, kRecordChunk, [&](int64_t c, int64_t b, int64_t e) {
    try {
      for (int64_t i = b; i < e; ++i) body(c, i);
    } catch (...) {
      errors[c] = std::current_exception();
    }
  });
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

// The output of `key` among `keys` (the spec's order), else an Error listing the keys.
template <typename T>
const T& OutputOf(const std::vector<std::string>& keys, const std::vector<T>& outputs,
                  std::string_view key, const char* op, const char* kind) {
  for (size_t i = 0; i < keys.size(); ++i) {
    if (keys[i] == key) return outputs[i];
  }
  std::string all;
  for (const std::string& k : keys) all += (all.empty() ? "" : ", ") + k;
  Throw(ErrorCode::kInvalidArgument, op, ": no ", kind, " '", Excerpt(key), "'; the spec has ",
        keys.size(), " (", Excerpt(all, 200), ")");
}

// A bytes value where it lies: in its record, or in a spec's default_value.
using BytesRef = ByteSpan;
static_assert(sizeof(BytesRef) == 2 * sizeof(int64_t));

// Where ParseFixedAndVarLen puts one FixedLenFeature when it writes into an OutputAllocator's
// outputs: a contiguous numeric tensor of B * prod(shape) elements (decoded in place), or the
// string output it sets.
struct FixedTarget {
  Tensor numbers;
  StringOutput* strings = nullptr;
};

// ParseExamples of spec.fixed and spec.var_len only (keys unique among them); spec.sparse and
// spec.ragged are ignored. With `targets` (one per spec.fixed) the FixedLenFeatures go straight
// to them: numbers decoded in place, strings set chunk by chunk right after pass 1 parsed the
// chunk (its records still in cache; the whole output after pass 1 when it is InOrder), and the
// result's fixed tensors are then the targets (numbers) or BytesRef pairs (strings); every
// string output (a FixedLenFeature's, a VarLenFeature's values) is then int64 with one more
// trailing dim of 2, each pair a BytesRef into `records` or into the default_value of `spec` (a
// contiguous CPU tensor): no std::string is made, and the caller hands the bytes to its string
// outputs while both are alive.
ParsedExamples ParseFixedAndVarLen(const std::vector<std::string_view>& records,
                                   const ExampleSpec& spec,
                                   const std::vector<FixedTarget>* targets = nullptr);

// The spec that ParseFixedAndVarLen parses for `spec` when every composite of it reads one key of
// its own: no SparseFeature, and each FixedLenSequenceFeature and RaggedFeature (without
// partitions) reads a key that nothing else reads. Its fixed features, then as VarLenFeatures
// the var_len keys, the fixed_sequence keys and the ragged value keys, in that order. `spec` is
// checked as ParseExamples checks it (the same errors); nullopt when it has other composites.
std::optional<ExampleSpec> FlatSpec(const ExampleSpec& spec);

// Throws when RaggedFeature f's row splits reach `last`, past its int32 row_splits_dtype.
void CheckSplitsFit(const RaggedFeature& f, int64_t last);

// The rows of FixedLenSequenceFeature f's output for its values `j` (parsed as a
// VarLenFeature) of B records: the most any record holds. Throws naming the first record
// whose count of values is not a whole number of rows of f.shape.
int64_t SequenceRows(const FixedLenSequenceFeature& f, const JaggedTensor& j, int64_t B);

// One feature of a SequenceExample's feature_lists, every record's steps parsed.
struct FeatureListValues {
  Tensor values;                 // every step's values, in record then step order
  Tensor step_offsets;           // int64 [steps + 1]: step j holds values [o[j], o[j + 1])
  Tensor record_steps;           // int64 [B + 1]: record r holds steps [s[r], s[r + 1])
  std::vector<uint8_t> present;  // per record: it has the feature list (maybe of no steps)
};

// The feature lists `keys` (their dtypes checked at every step; a step with no list holds no
// values) of SequenceExample records. The last map entry of a key wins.
std::vector<FeatureListValues> ParseFeatureLists(const std::vector<std::string_view>& records,
                                                 const std::vector<VarLenFeature>& keys);

// --- Writing outputs (tf_example_outputs.cc) ---------------------------------------------------

// Where elements go: a contiguous numeric tensor's memory (elem bytes each) or a string output.
struct Dest {
  void* data = nullptr;
  int64_t elem = 0;
  StringOutput* strings = nullptr;
};
// A contiguous CPU tensor's elements (a kString one through a TensorStrings kept in `keep`).
Dest DestOf(const Tensor& t, std::vector<std::unique_ptr<StringOutput>>* keep);

// Element writes that run in one parallel pass: Run() splits all their items together, so
// that many small outputs (26 sparse features of a batch) cost one parallel loop rather than
// one each; serially, in order, when a string output needs its elements in order.
class Fills {
 public:
  void Add(int64_t items, std::function<void(int64_t, int64_t)> fill, const Dest* to = nullptr);
  void Run() const;

 private:
  std::vector<int64_t> start_ = {0};  // job j's items are [start_[j], start_[j + 1])
  std::vector<std::function<void(int64_t, int64_t)>> fills_;
  bool in_order_ = false;
};

// Elements [from, from + n) of parsed `values` (numbers, std::strings, or BytesRef pairs when
// `to` is a string output and values are int64) to elements [at, at + n) of `to`.
void CopyValues(const Tensor& values, int64_t from, const Dest& to, int64_t at, int64_t n);

// The [B, rows, *f.shape] output of a FixedLenSequenceFeature (or a feature_list_dense): record
// r's values [first[r], first[r + 1]) of `values`, then f.default_value (0 or "" when
// undefined) to the end of its rows, into `to` (row: rows * prod(f.shape) elements a record).
void AddPadded(Fills* fills, const FixedLenSequenceFeature& f, const Tensor& values,
               std::vector<int64_t> first, int64_t row, const Dest& to);

// The feature lists of `spec` parsed and built: after the feature-list keys are checked and
// before the records' lists are parsed, context() runs (ParseSequenceExamples parses the
// context there, so that its errors come in the same order whichever way it is written).
ParsedSequenceExamples ParseFeatureListsOf(const std::vector<std::string_view>& records,
                                           const SequenceExampleSpec& spec,
                                           const std::function<void()>& context);

}  // namespace tensorkit::io::internal

#endif  // TENSORKIT_IO_TF_EXAMPLE_INTERNAL_H_
