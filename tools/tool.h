// tensorkit/tools/tool.h: shared pieces of the `tensorkit` command-line tool.
//
// Glossary
//   subcommand  convert, info, validate, concat, manifest, vocab, spy: each file adds one to the
//               CLI11 app and returns the function that runs it after parsing.
//   exit codes  kExitOk (0) success; kExitFailed (1) an input is invalid or an operation failed;
//               kExitUsage (2) the command line is wrong (also for a UsageError found later).
//   output form what the output format needs: .npy dense, .tns sparse, .mtx sparse (coordinate),
//               .npz either; ForOutput converts with SummedDense / FromDense when needed.
#ifndef TENSORKIT_TOOLS_TOOL_H_
#define TENSORKIT_TOOLS_TOOL_H_

#include <CLI/CLI.hpp>
#include <functional>
#include <stdexcept>
#include <string>

#include "tensorkit/io/io.h"
#include "tensorkit/io/libsvm.h"
#include "tensorkit/io/tfrecord.h"

namespace tensorkit::tools {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitUsage = 2;

// A command-line mistake found after parsing (exit code 2).
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Subcommand {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

Subcommand AddConvert(CLI::App& app);
Subcommand AddInfo(CLI::App& app);
Subcommand AddValidate(CLI::App& app);
Subcommand AddConcat(CLI::App& app);
// `vocab fit|merge|build|lookup` (vocab.cc).
Subcommand AddVocab(CLI::App& app);
Subcommand AddSpy(CLI::App& app);

struct ConvertOptions {
  bool reorder = false;   // sort sparse entries in C order (Reorder({0..rank-1}))
  bool coalesce = false;  // sort and sum duplicate entries
  bool compress = false;  // deflate .npz members
  io::IndexBase index_base = io::IndexBase::kAuto;  // of .svm inputs (--index-base)
  bool multilabel = false;           // .svm inputs: comma-separated label lists (--multilabel)
  std::string compression = "auto";  // of TFRecord inputs (--compression)
};

// `data` in the form the output format needs, with --reorder/--coalesce applied; `source` (the
// input's name) is for messages.
io::TensorData ForOutput(io::TensorData data, io::Format out, const ConvertOptions& options,
                         const std::string& source = "");
// The dense form of `sparse` with repeated entries summed (bools OR-ed, strings: the last).
// A shape whose elements or bytes int64 cannot count (a hypersparse matrix, valid as a sparse
// file) is refused first, naming `source`, the shape and its number of cells.
Tensor SummedDense(SparseTensor sparse, const std::string& source = "");
// The distinct positions holding an entry of `st` when its entries are sorted (in its known
// order, or in C order), counted in one pass; -1 when they are not sorted (positions.cc).
int64_t DistinctIfSorted(const SparseTensor& st);
// The same for any entries, sorting a copy of the indices when they are not sorted (which
// throws, naming the first entry outside the shape). nnz - DistinctPositions = the entries that
// repeat an earlier entry's coordinates.
int64_t DistinctPositions(const SparseTensor& st);
// Reads `in`, converts and writes `out` (atomically).
void ConvertFile(const std::string& in, const std::string& out, const ConvertOptions& options);

// Whether `path` names a TFRecord file (.tfrecord or .tfrecords, any case).
bool IsTfrecordPath(const std::string& path);
// Calls read(options) with the TFRecord compression `compression` names ("NONE", "GZIP",
// "ZLIB"), or "auto": GZIP or ZLIB when the first bytes are their header, else none (read is
// called again with none when the guessed compression fails: a plain file whose first bytes
// only look like a zlib header).
void WithTfrecordCompression(const std::string& path, const std::string& compression,
                             const std::function<void(const io::TFRecordOptions&)>& read);

// The extension without a leading dot, lower case; throws UsageError when unknown or empty.
std::string NormalizeExtension(const std::string& ext);

}  // namespace tensorkit::tools

#endif  // TENSORKIT_TOOLS_TOOL_H_
