// tensorkit/io/tf_example_internal.h: internal to io/ (not installed): what tf_example.cc and
// tf_example_composite.cc share, and the TensorFlow parse ops' fast path (built in this tree).
#ifndef TENSORKIT_IO_TF_EXAMPLE_INTERNAL_H_
#define TENSORKIT_IO_TF_EXAMPLE_INTERNAL_H_

#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tensorkit/common/error.h"
#include "tensorkit/common/file_util.h"
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
struct BytesRef {
  const char* data;
  uint64_t size;
};
static_assert(sizeof(BytesRef) == 2 * sizeof(int64_t));

// ParseExamples of spec.fixed and spec.var_len only (keys unique among them); spec.sparse and
// spec.ragged are ignored. With `bytes_as_refs` every string output (a FixedLenFeature's, a
// VarLenFeature's values) is instead int64 with one more trailing dim of 2, each pair a
// BytesRef into `records` or into the default_value of `spec` (a contiguous CPU tensor): no
// std::string is made, and the caller copies the bytes where it keeps strings (the TensorFlow
// ops: into tstrings) while both are alive.
//
// `chunk_parsed`, when set, is called for each chunk of records right after pass 1 parsed it, on
// the thread that parsed it (so the records' bytes are still in cache), with the
// FixedLenFeature outputs, final for records [begin, end): the TensorFlow ops copy them to
// their outputs there.
using ChunkParsed =
    std::function<void(const std::vector<Tensor>& fixed, int64_t begin, int64_t end)>;
ParsedExamples ParseFixedAndVarLen(const std::vector<std::string_view>& records,
                                   const ExampleSpec& spec, bool bytes_as_refs = false,
                                   const ChunkParsed& chunk_parsed = {});

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

}  // namespace tensorkit::io::internal

#endif  // TENSORKIT_IO_TF_EXAMPLE_INTERNAL_H_
