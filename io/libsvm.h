// tensorkit/io/libsvm.h: libsvm / svmlight text files (.svm, .libsvm, .svmlight), read as
// scikit-learn's load_svmlight_file reads them.
//
// Glossary
//   line         `label[,label...] [qid:Q] index:value index:value ... [# comment]`; tokens are
//                separated by blanks (space, tab, \r, \v, \f); everything from a '#' on is a
//                comment; a line with no token is skipped. Each other line is one sample (row).
//   label        a number (as strtod reads it); with `multilabel`, a comma-separated list of
//                numbers (kept sorted, as scikit-learn keeps them), or none when the first token
//                already holds a ':' (a sample without labels).
//   qid          a query id, an integer (the ranking sets: MSLR, Yahoo LTR).
//   index base   libsvm files carry no marker of 0- or 1-based indices. kZero keeps them, kOne
//                subtracts 1 (index 0 is then an Error), kAuto is scikit-learn's rule: 1-based
//                (subtract 1) when the smallest index of the whole file is above 0, else 0-based.
//   features     a 2-D SparseTensor [samples, features] of float64 (or float32) values, entries
//                sorted in order {0, 1}; explicit zeros are kept, as scikit-learn keeps them.
//                `features` columns: num_features when given (every index must be below it),
//                else the largest index + 1.
#ifndef TENSORKIT_IO_LIBSVM_H_
#define TENSORKIT_IO_LIBSVM_H_

#include <cstdint>
#include <string>

#include "tensorkit/common/dtype.h"
#include "tensorkit/dense/tensor.h"
#include "tensorkit/io/io.h"
#include "tensorkit/sparse/sparse_tensor.h"

namespace tensorkit::io {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

struct LibsvmReadOptions {
  IndexBase base = IndexBase::kAuto;
  bool multilabel = false;
  int64_t num_features = -1;      // -1: the largest index + 1
  DType dtype = DType::kFloat64;  // of the feature values: float64 or float32
  // The features as SciPy's CSR arrays (LibsvmData::csr) instead of a SparseTensor: what a
  // scipy.sparse.csr_matrix takes as it is, without a conversion.
  bool csr = false;
};

// The features of a read with LibsvmReadOptions::csr.
struct LibsvmCsr {
  // indptr int64 [samples + 1], indices int64 [nnz] (the dtype scikit-learn's reader gives
  // them), values [nnz].
  Tensor indptr, indices, values;
  std::vector<int64_t> shape;  // [samples, features]
};

struct LibsvmData {
  SparseTensor features;  // [samples, features], order {0, 1}; undefined with options.csr
  LibsvmCsr csr;          // with options.csr only
  // float64 [samples]; with multilabel, every sample's labels back to back, label_offsets
  // (int64 [samples + 1]) saying where each sample's start.
  Tensor labels;
  Tensor label_offsets;    // multilabel only
  Tensor qids;             // int64 [samples] when every sample has a qid; undefined when none has
  bool one_based = false;  // the base the indices were read with (kAuto's decision)
};

// How WriteLibsvm spells numbers and rows.
enum class LibsvmStyle {
  // Numbers in their shortest round-trip form (1e+09, 0.1); a row without features ends after
  // its labels (and qid).
  kShortest,
  // scikit-learn's dump_svmlight_file, byte for byte: values and labels of integer or bool dtype
  // as integers, floats (widened to double) as printf's "%.16g" (1000000000, 0.1000000014901161
  // for the float32 0.1; inf, -inf, and nan whatever its sign bit, as Python spells them), and a
  // space after the labels (and qid) of every row, features or not ("0,2 \n").
  kScikitLearn,
};

struct LibsvmWriteOptions {
  bool one_based = true;  // write index + 1 (libsvm's own convention, scikit-learn's default)
  LibsvmStyle style = LibsvmStyle::kShortest;
  // Written as is before the first line (comment lines, each starting with '#' and ending with
  // '\n', as scikit-learn's comment header).
  std::string header;
};

// Reads a libsvm file in parallel (chunks of whole lines). Errors (kCorrupt) name the file, the
// line and the column: a label or value that is not a number, an index that is not an integer,
// negative or (kOne) zero, indices not strictly increasing within a line, a qid that is not an
// integer, a qid on some lines but not others, an index >= num_features.
LibsvmData ReadLibsvm(const std::string& path, const LibsvmReadOptions& options = {});
// The (sample, feature) positions of a libsvm file without building the matrix, in two passes
// over the mapped file (the first finds the index base and the shape): blocks of positions go
// to `visit` as io::VisitMtxPositions gives them (from several threads, one chunk of lines at a
// time, so memory stays bounded); the shape, which on_shape also gets before the first block,
// and the errors are ReadLibsvm's.
std::vector<int64_t> VisitLibsvmPositions(
    const std::string& path, const PositionVisitor& visit,
    const std::function<void(const std::vector<int64_t>& shape)>& on_shape = {},
    const LibsvmReadOptions& options = {});
// Converts a libsvm file to `out` without holding it in memory: .npz as WriteNpz writes
// ReadLibsvm's result (scipy CSR members, then labels, label_offsets with multilabel, qids when
// every sample has one; members stored, not deflated), or a coordinate .mtx of the features as
// Write gives it; byte for byte the same files. Two parallel passes over the mapped input (the
// first finds the index base, the shape and where each chunk of lines goes); each chunk is
// written at its place and dropped, and the parsed pages are given back, so memory stays at a
// few chunks per thread whatever the file's size. Errors are ReadLibsvm's; the output is
// written atomically (nothing is left when one is thrown).
void ConvertLibsvm(const std::string& in, const std::string& out,
                   const LibsvmReadOptions& options = {});
LibsvmData ReadLibsvmFromMemory(const void* data, size_t size, const std::string& name,
                                const LibsvmReadOptions& options = {});

// Writes `data` (features a 2-D SparseTensor of numbers; labels numbers [samples], or undefined
// for labels 0; multilabel with label_offsets; qids optional) atomically, one line per row, in
// options.style. A repeated (row, column) or an index outside the shape is an Error.
void WriteLibsvm(const std::string& path, const LibsvmData& data,
                 const LibsvmWriteOptions& options = {});

}  // namespace tensorkit::io

#endif  // TENSORKIT_IO_LIBSVM_H_
