// tensorkit/features/vocabulary.h: vocabularies of string or integer values: counted over data
// (in shards), fitted, saved in TensorFlow's vocabulary file format, and looked up as Keras's
// StringLookup and IntegerLookup layers do.
//
// Glossary
//   token          one distinct value of the vocabulary: a byte string (any bytes, NUL and
//                  non-UTF-8 included) or an int64 (int32 values count as int64).
//   counts         how often each token was seen (VocabularyCounter). Counting is exact, so the
//                  counts of shards merged in any order equal the counts of all the data.
//   fit            the tokens kept from counts: those seen at least min_frequency times, the
//                  max_tokens most frequent, ordered by count descending and then by the token
//                  (TieOrder): bytes compared unsigned for strings, numbers for integers.
//   id             what Lookup gives: Keras's layout [mask?][OOV 0 .. num_oov_indices - 1]
//                  [tokens in vocabulary order]. The mask (when set) is id 0; a value not in the
//                  vocabulary (OOV) goes to one of the OOV ids; token i is id start + i, where
//                  start = (mask ? 1 : 0) + num_oov_indices.
//   OOV bucket     with num_oov_indices > 1, the OOV id of a value is oov_start + bucket:
//                  strings Fingerprint64(value) % n (tf.strings.to_hash_bucket_fast); integers
//                  floormod(value, n) (Keras's default oov_method) or, with kFarmHash, the
//                  fingerprint of the decimal string.
//   vocabulary file TensorFlow's format (StringLookup(vocabulary=path), TextFileInitializer with
//                  WHOLE_LINE keys): one token a line in id order, without the mask and OOV
//                  tokens, '\n' after each line; integers in decimal.
//   counts file    tensorkit's text format of counts (features/README.md, "Counts files"): a
//                  header line, then "COUNT<TAB>TOKEN" lines with the token escaped.
//   structure      a dense Tensor, a JaggedTensor or a SparseTensor: Lookup's output has the
//                  input's structure (dims, offsets or indices, shared) with int64 values.
#ifndef TENSORKIT_FEATURES_VOCABULARY_H_
#define TENSORKIT_FEATURES_VOCABULARY_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tensorkit/dense/tensor.h"
#include "tensorkit/features/jagged.h"
#include "tensorkit/sparse/sparse_tensor.h"

namespace tensorkit {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

// How tokens with equal counts are ordered. Keras's adapt() orders them descending (it sorts
// with np.lexsort and reverses); tensorkit's default is ascending.
enum class TieOrder { kValueAscending, kValueDescending };

// How an integer OOV value picks its OOV id when num_oov_indices > 1 (Keras's oov_method).
// Strings always use the fingerprint.
enum class OovMethod { kFloorMod, kFarmHash };

struct VocabularyFitOptions {
  int64_t min_frequency = 1;  // keep tokens counted at least this often (>= 1)
  int64_t max_tokens = -1;    // keep at most this many tokens (>= 0), -1 for all. Unlike Keras's
                              // max_tokens it does not count the mask and OOV ids.
  TieOrder ties = TieOrder::kValueAscending;
};

// Keras's StringLookup / IntegerLookup settings (invert and output modes other than "int" are
// not supported).
struct LookupOptions {
  int64_t num_oov_indices = 1;            // >= 0; 0 makes an OOV value an Error
  std::optional<std::string> mask_token;  // string vocabularies: this value gives id 0
  std::optional<int64_t> mask_value;      // integer vocabularies: this value gives id 0
  OovMethod oov_method = OovMethod::kFloorMod;
};

// Counts of tokens over a stream of values. Strings and integers cannot be mixed in one counter
// (an Error); an empty counter takes the kind of the first values added. Counting runs in
// parallel and its result does not depend on the thread count.
class VocabularyCounter {
 public:
  VocabularyCounter();
  ~VocabularyCounter();
  VocabularyCounter(const VocabularyCounter&);
  VocabularyCounter& operator=(const VocabularyCounter&);
  VocabularyCounter(VocabularyCounter&&) noexcept;
  VocabularyCounter& operator=(VocabularyCounter&&) noexcept;

  // Counts every element of values (kString, int32 or int64 on the CPU; any dims).
  void Add(const Tensor& values);
  void Add(const JaggedTensor& values);  // its values
  void Add(const SparseTensor& values);  // its values
  // Adds `count` (>= 1) to one token.
  void AddToken(std::string_view token, int64_t count = 1);
  void AddToken(int64_t token, int64_t count = 1);
  // Adds another counter's counts (a shard's): the result equals counting both inputs.
  void Merge(const VocabularyCounter& other);

  bool empty() const;
  // kString or kInt64 (kString while empty).
  DType dtype() const;
  // Distinct tokens, and the sum of all counts.
  int64_t num_tokens() const;
  int64_t total_count() const;
  // The count of a token, 0 when it was never seen.
  int64_t CountOf(std::string_view token) const;
  int64_t CountOf(int64_t token) const;

  // Every token and its count, by count descending and then `ties`: tokens 1-D kString or int64,
  // counts int64, both [num_tokens()].
  struct Sorted {
    Tensor tokens;
    Tensor counts;
  };
  Sorted SortedCounts(TieOrder ties = TieOrder::kValueAscending) const;

  // Writes the counts file (atomically; sorted as SortedCounts()).
  void Save(const std::string& path) const;
  // Reads a counts file; a malformed one is Error(kCorrupt) naming the file, line and column.
  static VocabularyCounter Load(const std::string& path);
  // Parses a counts file's bytes (`name` appears in messages).
  static VocabularyCounter Parse(std::string_view text, const std::string& name);
  // The bytes of the counts file Save writes.
  std::string Serialize() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

class Vocabulary {
 public:
  Vocabulary();  // an empty string vocabulary: every value is OOV

  // The tokens kept from counts (the glossary's "fit"). The mask token (or value) is never a
  // token. Bad options are Error(kInvalidArgument).
  static Vocabulary Fit(const VocabularyCounter& counts, const VocabularyFitOptions& fit = {},
                        const LookupOptions& lookup = {});
  // Counts values (all of one kind) and fits.
  static Vocabulary Fit(const std::vector<Tensor>& values, const VocabularyFitOptions& fit = {},
                        const LookupOptions& lookup = {});
  // A vocabulary of these tokens in this order (Keras's vocabulary=[...]): a repeated token or
  // the mask among them is an Error(kInvalidArgument) naming it.
  static Vocabulary FromTokens(const std::vector<std::string>& tokens,
                               const LookupOptions& lookup = {});
  static Vocabulary FromIntegers(const std::vector<int64_t>& tokens,
                                 const LookupOptions& lookup = {});
  // `tokens` 1-D kString or int32/int64.
  static Vocabulary FromTensor(const Tensor& tokens, const LookupOptions& lookup = {});

  // Reads a vocabulary file of `dtype` tokens (kString, or kInt64 for decimal lines). As
  // TensorFlow's reader: a '\r' before a line's '\n' is dropped, the last line may lack its '\n',
  // an empty line is an Error; a repeated token is an Error naming both lines.
  static Vocabulary Load(const std::string& path, DType dtype = DType::kString,
                         const LookupOptions& lookup = {});
  // Writes the vocabulary file (atomically). Tokens TensorFlow's reader would not give back
  // (empty, holding '\n', ending in '\r') are an Error(kInvalidArgument) naming the token.
  void Save(const std::string& path) const;

  // Ids of every value (the glossary's "id"): values kString for a string vocabulary, int32 or
  // int64 for an integer one. Integer values on a CUDA device are looked up there (in a sorted
  // copy of the tokens made on that device at its first lookup), with the same ids. An OOV
  // value with num_oov_indices == 0 is an Error(kInvalidArgument) naming the first one. The
  // result has the input's structure and does not depend on the thread count.
  Tensor Lookup(const Tensor& values) const;
  JaggedTensor Lookup(const JaggedTensor& values) const;
  SparseTensor Lookup(const SparseTensor& values) const;

  // The same tokens with other lookup settings (shares the table).
  Vocabulary WithOptions(const LookupOptions& lookup) const;

  DType dtype() const;          // kString or kInt64
  int64_t size() const;         // tokens, without the mask and OOV ids
  int64_t num_ids() const;      // size() + num_oov_indices + (mask ? 1 : 0): Keras's
                                // vocabulary_size()
  int64_t token_start() const;  // the id of token 0
  const LookupOptions& options() const { return options_; }
  // The tokens in id order: 1-D kString or int64 [size()].
  Tensor tokens() const;
  // Token i (0 <= i < size()) of a string / an integer vocabulary.
  std::string_view StringToken(int64_t i) const;
  int64_t IntegerToken(int64_t i) const;

  struct Table;

 private:
  Vocabulary(std::shared_ptr<const Table> table, const LookupOptions& lookup);
  std::shared_ptr<const Table> table_;
  LookupOptions options_;
};

}  // namespace tensorkit

#endif  // TENSORKIT_FEATURES_VOCABULARY_H_
