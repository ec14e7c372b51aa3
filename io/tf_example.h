// tensorkit/io/tf_example.h: tf.Example records parsed by a feature spec, as tf.io.parse_example
// parses them, and written from tensors.
//
// Glossary
//   tf.Example    the protobuf message TensorFlow pipelines store in TFRecord files:
//                 Example{Features features = 1}, Features{map<string, Feature> feature = 1},
//                 Feature{oneof: BytesList bytes_list = 1, FloatList float_list = 2,
//                 Int64List int64_list = 3}, each list `repeated <T> value = 1`.
//   wire format   decoded by hand here, without libprotobuf: no generated code, no message
//                 objects (values go straight from the record into the output tensors), and no
//                 dependency that must match the one TensorFlow links. Packed and unpacked
//                 lists are both read, as protobuf reads them; unknown fields (wire types 0, 1,
//                 2, 5) are skipped at every level; groups (3, 4), wire types 6 and 7, a varint
//                 longer than 10 bytes and a length running past its message are an
//                 Error(kCorrupt) naming the record and the byte.
//   spec          FixedLenFeature(key, dtype, shape, default_value) -> a dense Tensor
//                 [B, *shape]; VarLenFeature(key, dtype) -> a JaggedTensor of B rows (its
//                 ToSparse() is TensorFlow's VarLenFeature SparseTensor: indices (row,
//                 position), dense_shape [B, max_len]). dtypes: kInt64 (int64_list), kFloat32
//                 (float_list), kString (bytes_list).
//   semantics     tf.io.parse_example's, checked against TensorFlow 2.21 (tests/embed):
//                 - a key repeated in one Features map: the last entry wins (protobuf's map
//                   rule; TensorFlow's parser does the same);
//                 - a feature holding another list type than the spec's dtype is an Error, even
//                   when the list is empty; a Feature with no list set counts as missing;
//                 - a missing FixedLenFeature takes its default_value, or is an Error without
//                   one; a present one must hold exactly prod(shape) values (an empty list is not
//                   missing);
//                 - int64 varints of 10 bytes keep their low 64 bits, as protobuf does.
//   deviations    where TensorFlow's fast parser refuses valid protobuf, tensorkit follows
//                 protobuf: unknown fields inside Features, a map entry or a Feature, a
//                 known field with another wire type (skipped as unknown), lists mixing packed
//                 and unpacked values, and several list fields in one Feature (the last list
//                 type wins, lists of one type are concatenated; TensorFlow reads the first).
//                 A packed float list whose length is not a multiple of 4 is an Error here
//                 (TensorFlow returns no values). A map entry with two values is an Error (as in
//                 TensorFlow; protobuf would merge them).
//   determinism   records are parsed in parallel over fixed chunks (ParallelChunks): outputs
//                 are bit-identical at any thread count, and the error reported is the first
//                 bad record's.
//   composites    SparseFeature, RaggedFeature and FixedLenSequenceFeature, as
//                 tf.io.parse_example builds them (TensorFlow's parsing_config and its parse
//                 op): their index, value and partition keys are parsed as VarLenFeatures, then
//                 assembled. Unlike TensorFlow (whose
//                 `validate` defaults to false and then yields wrong tensors), every record's
//                 pieces are checked: mismatched index/value lengths, an index outside `size`
//                 and partitions that do not tile the record's values are Errors naming the
//                 record and the feature.
//   SequenceExample  SequenceExample{Features context = 1; FeatureLists feature_lists = 2},
//                 FeatureLists{map<string, FeatureList> feature_list = 1}, FeatureList{repeated
//                 Feature feature = 1}: one Feature per step. ParseSequenceExamples parses the
//                 context like a tf.Example and the feature lists as
//                 tf.io.parse_sequence_example does (below).
#ifndef TENSORKIT_IO_TF_EXAMPLE_H_
#define TENSORKIT_IO_TF_EXAMPLE_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tensorkit/common/outputs.h"
#include "tensorkit/dense/tensor.h"
#include "tensorkit/features/jagged.h"
#include "tensorkit/io/tfrecord.h"
#include "tensorkit/sparse/sparse_tensor.h"

namespace tensorkit::io {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

struct FixedLenFeature {
  std::string key;
  DType dtype = DType::kFloat32;  // kInt64, kFloat32 or kString
  std::vector<int64_t> shape;     // of one example's value; {} is a scalar
  // Undefined: the feature is required. Else prod(shape) elements of `dtype` (any dims), or a
  // single element repeated.
  Tensor default_value;
};

struct VarLenFeature {
  std::string key;
  DType dtype = DType::kInt64;  // kInt64, kFloat32 or kString
};

// tf.io.FixedLenSequenceFeature as tf.io.parse_example reads it from tf.Examples: a record
// holds a multiple of prod(shape) values (none when the feature is missing), and the output
// is a dense Tensor [B, max_rows, *shape], each record's rows padded with `default_value` (one
// element; 0 or "" when undefined) up to the batch's longest.
struct FixedLenSequenceFeature {
  std::string key;
  DType dtype = DType::kFloat32;  // kInt64, kFloat32 or kString
  std::vector<int64_t> shape;     // of one row; {} is a scalar per row
  Tensor default_value;           // the padding
  // SequenceExamples only (tf.Examples ignore it, as TensorFlow does): a missing feature list
  // is no steps, else an Error.
  bool allow_missing = false;
};

// tf.io.SparseFeature: a SparseTensor [B, *size] whose entry j of record r sits at
// (r, index_keys[0][j], index_keys[1][j], ...) and holds value_key[j]. Every index key is an
// int64 feature of the value key's length in each record, its values in [0, size[d]). Sorted
// by index (a stable sort, as tf.sparse.reorder sorts) unless `already_sorted`, when the
// records' order is kept and order() is left unknown.
struct SparseFeature {
  std::string key;                      // the output's name
  std::vector<std::string> index_keys;  // one per dim of `size`
  std::string value_key;
  DType dtype = DType::kFloat32;  // of the value key: kInt64, kFloat32 or kString
  std::vector<int64_t> size;      // the dense shape past the batch dim
  bool already_sorted = false;
};

// One of tf.io.RaggedFeature's partitions. A keyed partition reads an int64 feature of the
// record; the record's values (or the rows an inner partition made of them) are split by it:
//   RowSplits    [0, ..., n]: row i is [s[i], s[i+1])        (an empty list: no rows, n == 0)
//   RowLengths   the rows' lengths, summing to n
//   RowStarts    [0, ...] non-decreasing, each <= n; the last row ends at n
//   RowLimits    non-decreasing, the last == n
//   ValueRowIds  one non-decreasing row id per value; rows = last id + 1 (empty rows between
//                are kept; at most 2^20 more rows than values in one record, so a hostile id
//                cannot allocate terabytes)
//   UniformRowLength(length >= 1): rows of `length`; n must be a multiple of it
struct RaggedPartition {
  enum class Kind { kRowSplits, kRowLengths, kRowStarts, kRowLimits, kValueRowIds, kUniform };
  Kind kind = Kind::kRowLengths;
  std::string key;     // the partition's feature (not for kUniform)
  int64_t length = 0;  // kUniform only

  static RaggedPartition RowSplits(std::string key) { return {Kind::kRowSplits, key, 0}; }
  static RaggedPartition RowLengths(std::string key) { return {Kind::kRowLengths, key, 0}; }
  static RaggedPartition RowStarts(std::string key) { return {Kind::kRowStarts, key, 0}; }
  static RaggedPartition RowLimits(std::string key) { return {Kind::kRowLimits, key, 0}; }
  static RaggedPartition ValueRowIds(std::string key) { return {Kind::kValueRowIds, key, 0}; }
  static RaggedPartition UniformRowLength(int64_t length) { return {Kind::kUniform, "", length}; }
};

// tf.io.RaggedFeature: the values of `value_key` (default: `key`) of each record, split by
// `partitions` (outermost first; applied innermost first, within each record), under a batch
// dim of B rows.
struct RaggedFeature {
  std::string key;              // the output's name
  DType dtype = DType::kInt64;  // kInt64, kFloat32 or kString
  std::string value_key;        // empty: `key`
  std::vector<RaggedPartition> partitions;
  DType row_splits_dtype = DType::kInt32;  // kInt32 (TensorFlow's default) or kInt64
};

// A RaggedTensor as TensorFlow's flat_values and nested_row_splits. Trailing UniformRowLength
// partitions become dense dims of flat_values ([N, length...]), as TensorFlow reshapes them;
// every other partition is a level of row splits (a uniform one with equal lengths).
struct RaggedOutput {
  Tensor flat_values;
  std::vector<Tensor> nested_row_splits;  // outermost (the batch: B + 1 splits) first
};

struct ExampleSpec {
  std::vector<FixedLenFeature> fixed;
  std::vector<VarLenFeature> var_len;
  std::vector<SparseFeature> sparse;
  std::vector<RaggedFeature> ragged;
  std::vector<FixedLenSequenceFeature> fixed_sequence;
};

struct ParsedExamples {
  std::vector<Tensor> fixed;           // in spec order, [B, *shape]
  std::vector<JaggedTensor> var_len;   // in spec order, B rows
  std::vector<SparseTensor> sparse;    // in spec order, [B, *size]
  std::vector<RaggedOutput> ragged;    // in spec order
  std::vector<Tensor> fixed_sequence;  // in spec order, [B, max_rows, *shape]
  std::vector<std::string> fixed_keys, var_len_keys, sparse_keys, ragged_keys, fixed_sequence_keys;
  // By key; an unknown key is an Error listing the keys.
  const Tensor& Fixed(std::string_view key) const;
  const JaggedTensor& VarLen(std::string_view key) const;
  const SparseTensor& Sparse(std::string_view key) const;
  const RaggedOutput& Ragged(std::string_view key) const;
  const Tensor& FixedSequence(std::string_view key) const;
};

// Parses serialized tf.Example records by `spec` (checked first: output names unique, the
// dtypes, shapes and defaults as above; as in TensorFlow, a FixedLenFeature's key is no other
// feature's input, the inputs of RaggedFeatures and those of Var/SparseFeatures are disjoint,
// and a key shared by several features has one dtype, and among RaggedFeatures one
// row_splits_dtype). Errors name the record (0-based) and
// the feature.
ParsedExamples ParseExamples(const std::vector<std::string_view>& records, const ExampleSpec& spec);
// The records of a TFRecordBatch (ReadTFRecordBatch), named apart so a braced list of records
// is never ambiguous.
ParsedExamples ParseExampleBatch(const TFRecordBatch& batch, const ExampleSpec& spec);

// tf.io.parse_sequence_example's spec. The context is any ExampleSpec. Feature lists:
//   feature_list_dense    FixedLenSequenceFeature: each step one Feature of prod(shape) values
//                         -> [B, max_steps, *shape], padded with default_value (0 or "" when
//                         undefined, as TensorFlow pads; TensorFlow takes no other); a missing
//                         list is an Error unless allow_missing. Its steps per record are
//                         feature_list_lengths, int64 [B].
//   feature_list_sparse   VarLenFeature: any values per step -> a SparseTensor
//                         [B, max_steps, max_values] of indices (record, step, position).
//   feature_list_ragged   RaggedFeature -> nested_row_splits [B + 1] (steps per record), then
//                         [steps + 1] (values per step), then its partitions' levels: their keys
//                         are feature lists with the value key's steps, each step partitioned as
//                         a tf.Example record is.
// A step whose Feature holds no list has no values; one of another list type is an Error.
struct SequenceExampleSpec {
  ExampleSpec context;
  std::vector<FixedLenSequenceFeature> feature_list_dense;
  std::vector<VarLenFeature> feature_list_sparse;
  std::vector<RaggedFeature> feature_list_ragged;
};

struct ParsedSequenceExamples {
  ParsedExamples context;
  std::vector<Tensor> feature_list_dense;    // in spec order, [B, max_steps, *shape]
  std::vector<Tensor> feature_list_lengths;  // per feature_list_dense, int64 [B]
  std::vector<SparseTensor> feature_list_sparse;
  std::vector<RaggedOutput> feature_list_ragged;
  std::vector<std::string> feature_list_dense_keys, feature_list_sparse_keys,
      feature_list_ragged_keys;
  // By key; an unknown key is an Error listing the keys.
  const Tensor& FeatureListDense(std::string_view key) const;
  const Tensor& FeatureListLength(std::string_view key) const;
  const SparseTensor& FeatureListSparse(std::string_view key) const;
  const RaggedOutput& FeatureListRagged(std::string_view key) const;
};

// Parses serialized tf.SequenceExample records by `spec` (checked as ParseExamples checks its
// spec; context and feature lists are apart, so a key may name one of each). Errors name the
// record, the feature list and the step.
ParsedSequenceExamples ParseSequenceExamples(const std::vector<std::string_view>& records,
                                             const SequenceExampleSpec& spec);

// --- Into the caller's outputs (common/outputs.h) ------------------------------------------------
//
// ParseExamples and ParseSequenceExamples can write their outputs through an OutputAllocator,
// as TensorFlow's parse ops lay them out: a FixedLenFeature or FixedLenSequenceFeature one
// dense tensor; a VarLenFeature, SparseFeature or feature_list_sparse a SparseTensor as three
// outputs: indices int64 [nnz, rank], values [nnz], dense_shape int64 [rank] (a VarLenFeature's
// indices (record, position) and dense_shape [B, max_len], as JaggedTensor::ToSparse gives);
// a RaggedFeature its flat_values, then each level of its nested_row_splits (outermost first);
// a feature_list_dense its values and then its lengths. Strings go to AllocateStrings, straight
// from the records (no std::string in between on the way of ExampleSpecs whose composites each
// read a key of their own: every spec TensorFlow's ParseExampleV2 takes). With `batch` false
// there is one record and no batch dim: dense outputs drop it, sparse indices lose their record
// column and dense_shape its first dim, lengths are scalars, and a ragged feature's batch row
// splits are written empty ([0]). Commit() ends a successful call; a failure leaves the
// outputs unshown.

// The output indices of an ExampleSpec's features, from `first` on: its FixedLenFeatures, then
// 3 per VarLenFeature (indices, values, dense_shape), 3 per SparseFeature, 1 per
// FixedLenSequenceFeature, and per RaggedFeature its flat_values then 1 + (its partitions but
// trailing UniformRowLengths) levels of row splits.
class ExampleOutputIndex {
 public:
  explicit ExampleOutputIndex(const ExampleSpec& spec, int first = 0);
  int Fixed(int i) const { return first_ + i; }
  int VarLen(int i) const { return var_len_ + 3 * i; }  // indices; values + 1; dense_shape + 2
  int Sparse(int i) const { return sparse_ + 3 * i; }   // the same
  int FixedSequence(int i) const { return sequence_ + i; }
  int Ragged(int i) const { return ragged_[static_cast<size_t>(i)]; }  // row splits from + 1
  int end() const { return end_; }

 private:
  int first_, var_len_, sparse_, sequence_, end_;
  std::vector<int> ragged_;
};

// A SequenceExampleSpec's: the context's (ExampleOutputIndex from 0), then 2 per
// feature_list_dense (values, lengths), 3 per feature_list_sparse, and per feature_list_ragged
// its flat_values then 2 + (its partitions but trailing UniformRowLengths) levels of row splits
// (steps per record first, then values per step, ...).
class SequenceOutputIndex {
 public:
  explicit SequenceOutputIndex(const SequenceExampleSpec& spec);
  const ExampleOutputIndex& context() const { return context_; }
  int FeatureListDense(int i) const { return dense_ + 2 * i; }
  int FeatureListSparse(int i) const { return sparse_ + 3 * i; }
  int FeatureListRagged(int i) const { return ragged_[static_cast<size_t>(i)]; }
  int end() const { return end_; }

 private:
  ExampleOutputIndex context_;
  int dense_, sparse_, end_;
  std::vector<int> ragged_;
};

// ParseExamples (the same checks and errors) into `out`, numbered by ExampleOutputIndex(spec).
void ParseExamples(const std::vector<std::string_view>& records, const ExampleSpec& spec,
                   OutputAllocator& out, bool batch = true);
// ParseSequenceExamples (the same checks and errors) into `out`, numbered by
// SequenceOutputIndex(spec).
void ParseSequenceExamples(const std::vector<std::string_view>& records,
                           const SequenceExampleSpec& spec, OutputAllocator& out,
                           bool batch = true);

// What a batch of tf.Example records holds (for `tensorkit info`): every feature key, in key
// order, with its list type, the records holding it and the values per record. A key repeated
// in one record counts once, its last entry (as parsing takes it); a Feature without a list is
// not held. A malformed record is an Error naming it.
struct ExampleFeatureSummary {
  std::string key;
  DType dtype = DType::kInt64;  // kInt64, kFloat32 or kString (bytes_list)
  bool mixed_types = false;     // records disagree on the list type (dtype: the first seen)
  int64_t records = 0;          // records holding the feature
  int64_t values = 0;           // its values in all of them
  int64_t bytes = 0;            // bytes_list: the bytes of those values (0 for the others)
  int64_t min_values = 0, max_values = 0;  // per record holding it
  // With count_lengths: values per record -> records holding that many (records without the
  // feature are not counted here: there are `records` of them fewer than the batch).
  std::map<int64_t, int64_t> lengths;
};
std::vector<ExampleFeatureSummary> SummarizeExamples(const std::vector<std::string_view>& records,
                                                     bool count_lengths = false);
// Adds the summary of later records to *into (both in key order): what SummarizeExamples of the
// two batches together gives.
void MergeExampleSummaries(std::vector<ExampleFeatureSummary>* into,
                           std::vector<ExampleFeatureSummary> later);
// SummarizeExamples of every record of a TFRecord file, read a batch at a time (memory: one batch
// of at most 64 MiB of records, whatever the file's size); errors name the file and the records.
struct ExampleFileSummary {
  int64_t records = 0;
  int64_t bytes = 0;  // of the records, without their framing
  std::vector<ExampleFeatureSummary> features;
};
ExampleFileSummary SummarizeExampleFile(const std::string& path,
                                        const TFRecordOptions& options = {},
                                        bool count_lengths = false);

// Converts a TFRecord file of tf.Example records into the .npz `out` without holding either
// in memory (two passes over the records, a batch at a time; members stored, written
// atomically). Every feature key, in key order, gives the members
//   <key>.row_splits    int64 [records + 1]: record i's values are
//                       values[row_splits[i]:row_splits[i + 1]] (a tf.RaggedTensor's
//                       row_splits; a record without the feature holds none);
//   <key>.values        int64 (int64_list) or float32 (float_list) values; for a bytes_list,
//                       uint8: every value's bytes back to back, with
//   <key>.value_splits  int64 [values + 1]: value k is values[value_splits[k]:value_splits[k+1]].
// A feature holding two list types is an Error naming it; malformed records are ParseExamples'
// Errors, naming the records. An empty file gives an archive without members.
void ConvertExamplesToNpz(const std::string& in, const std::string& out,
                          const TFRecordOptions& options = {});

// One tf.Example holding `features` in the given order: each Tensor's elements in C order (any
// dims) as an int64_list (kInt64), float_list (kFloat32, packed) or bytes_list (kString); other
// dtypes are an Error (convert them with Copy first). Keys must be unique.
std::string SerializeExample(const std::vector<std::pair<std::string, Tensor>>& features);
// B Examples, the inverse of ParseExamples: row i holds fixed[k].second[i] (a Tensor [B, ...])
// and the values of var_len[k].second.Row(i) (an empty list for an empty row). Serialized in
// parallel.
std::vector<std::string> SerializeExamples(
    const std::vector<std::pair<std::string, Tensor>>& fixed,
    const std::vector<std::pair<std::string, JaggedTensor>>& var_len);

}  // namespace tensorkit::io

#endif  // TENSORKIT_IO_TF_EXAMPLE_H_
