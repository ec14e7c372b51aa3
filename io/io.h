// tensorkit/io/io.h: reading and writing tensor files.
//
// Glossary
//   Format      chosen from the file extension: .npy, .npz, .mtx, .tns, .svm (also .libsvm,
//               .svmlight: libsvm.h).
//   TensorData  what a file holds: a dense Tensor or a SparseTensor (exactly one is defined).
//   dtypes      .npy/.npz keep the dtype (bool, int8..int64, uint8, float16/32/64; NumPy byte
//               strings |S and unicode <U read as string, which is written as <U); .mtx and .tns
//               read as float64 (integer .mtx as int64, pattern .mtx as float64 ones).
//   numbers     text values are read as strtod reads them: too small is 0, too large is inf.
//   .tns shape  written as a first line "# shape: d1 ... dN", which the reader takes as the
//               shape, so a tensor without entries (or with none on its last rows) keeps it.
//   atomic write  writers write an unnamed file in `path`'s folder (O_TMPFILE; a hidden
//                 ".<name>.tmp.<pid>.<n>" where the filesystem lacks it) and give it the name
//                 `path` only when complete, so a failure never leaves a half-written output
//                 nor changes an existing one; a replaced file keeps its permission bits.
//   errors      Error(kIo) for what the OS refuses (open, read, write, rename), Error(kCorrupt)
//               for bad content (naming the file and the byte or line), Error(kUnsupported) for
//               valid files tensorkit does not read (complex values, structured dtypes, ...).
#ifndef TENSORKIT_IO_IO_H_
#define TENSORKIT_IO_IO_H_

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tensorkit/dense/tensor.h"
#include "tensorkit/sparse/sparse_tensor.h"

namespace tensorkit::io {

enum class Format { kNpy, kNpz, kMtx, kTns, kLibsvm };

// The one table of formats, in the order of Format: each one's extension and what it holds,
// dense arrays (.npy), sparse tensors (.tns) or both (.npz; .mtx writes a sparse tensor as its
// coordinate format and a dense matrix as its array format).
struct FormatInfo {
  Format format;
  const char* extension;  // lower case, without the dot
  bool dense;
  bool sparse;
};
inline constexpr FormatInfo kFileFormats[] = {{Format::kNpy, "npy", true, false},
                                              {Format::kNpz, "npz", true, true},
                                              {Format::kMtx, "mtx", true, true},
                                              {Format::kTns, "tns", false, true},
                                              {Format::kLibsvm, "svm", false, true}};
// Other extensions of the same formats.
struct FormatAlias {
  const char* extension;
  Format format;
};
inline constexpr FormatAlias kFormatAliases[] = {{"libsvm", Format::kLibsvm},
                                                 {"svmlight", Format::kLibsvm}};

// The index base of a libsvm file (libsvm.h): kAuto is scikit-learn's rule.
enum class IndexBase { kZero, kOne, kAuto };

struct ReadOptions {
  // .mtx symmetric/skew-symmetric: also return the mirrored entries (the full matrix); when
  // false, only the entries the file stores.
  bool expand_symmetry = true;
  // .tns: the shape; empty means the largest index on each axis.
  std::vector<int64_t> shape;
  // .npz: the member to read ("a" or "a.npy"); empty means the first (or scipy.sparse matrix).
  std::string member;
  // .svm: how its indices count (libsvm.h; the labels and qids need ReadLibsvm).
  IndexBase index_base = IndexBase::kAuto;
};

struct WriteOptions {
  bool compress = false;  // .npz: deflate the members (np.savez_compressed) instead of storing
  // .npz of a 2-D sparse matrix: scipy CSR (format 'csr', indptr, indices) instead of COO.
  bool csr = false;
  // .npz: more arrays after the tensor's own members (e.g. a libsvm file's labels and qids;
  // scipy.sparse.load_npz ignores them, np.load lists them), named without ".npy".
  std::vector<std::pair<std::string, Tensor>> extra_members;
};

// Matrix Market writing (WriteMtx with options): the choices of scipy.io.mmwrite.
enum class MtxField {
  kAuto,     // integer for integer and bool values, real for floating ones
  kReal,     // values converted to double
  kInteger,  // floats truncated toward zero; a NaN, an infinity or a value beyond int64 is an Error
  kPattern,  // positions only (coordinate files; an Error for a dense matrix)
};
enum class MtxSymmetry {
  kGeneral,
  // A sparse matrix's entries with row >= column, in entry order; a dense matrix's lower
  // triangle column by column. kHermitian is kSymmetric with its own banner word (the values
  // are real). The matrix must be square; its upper triangle is not compared with the lower.
  kSymmetric,
  kSkewSymmetric,  // as kSymmetric, a dense matrix without its diagonal
  kHermitian,
  // scipy.io.mmwrite's test of symmetry (MMFile._get_symmetry), with its results: general for
  // a matrix that is not square; for a dense one, symmetric when a[i][j] == a[j][i] everywhere,
  // else skew-symmetric when a[i][j] == -a[j][i] and the diagonal is 0, else general. A sparse
  // one is general at once when its nonzero entries below and above the diagonal differ in
  // number; else its repeated entries are summed and the test runs over the summed entries,
  // which are then written in row-major order (SciPy sums a coo matrix in place and writes it).
  kDetect,
};
struct MtxWriteOptions {
  // Comment lines after the banner: each line of `comment` (split at '\n') after a '%'.
  std::string comment;
  MtxField field = MtxField::kAuto;
  // Significant digits of real values, written as printf's "%.{precision - 1}e" (at least one
  // digit); -1: the shortest form that reads back exactly.
  int precision = -1;
  MtxSymmetry symmetry = MtxSymmetry::kGeneral;
  // scipy.io.mmwrite's text (SciPy 1.17, fast_matrix_market), byte for byte: a lone "%" line
  // when there is no comment, shortest reals in Ryu's scientific form ("2.5", "1.25E-7", "1E9",
  // "-0", "Infinity", "NaN"; float32 values with float32's shortest digits), and with a
  // precision "Infinity", "-Infinity" and "nan"; a coordinate file without entries is "real".
  bool scipy_text = false;
};

struct TensorData {
  Tensor dense;         // defined when the file holds a dense array
  SparseTensor sparse;  // used when dense is undefined
  bool is_sparse() const { return !dense.defined(); }
};

// Format from the extension of `path`; throws Error(kInvalidArgument) for an unknown one.
Format FormatFromPath(const std::string& path);
// The format of an extension without the dot, in any case; nullopt for an unknown one.
std::optional<Format> FormatFromExtension(std::string_view extension);
// Its extension: "npy", ...
const char* FormatName(Format format);
// Every extension, each after `prefix`, joined by `sep` and the last by `last_sep`: for messages,
// e.g. FormatList(".", ", ", " or ") is ".npy, .npz, .mtx or .tns".
std::string FormatList(const char* prefix, const char* sep, const char* last_sep);

// Reads any supported file (a regular file: a FIFO or a device is refused at once). Errors name
// the file and the byte or line at fault, quoting at most a short escaped excerpt of its bytes.
TensorData Read(const std::string& path);
TensorData Read(const std::string& path, const ReadOptions& options);
// Reads a file's bytes already in memory (fuzzers, tests); `name` appears in error messages.
TensorData ReadFromMemory(const void* data, size_t size, Format format, const std::string& name,
                          const ReadOptions& options = {});
// Every array of a NumPy .npz, in archive order, named without ".npy".
std::vector<std::pair<std::string, Tensor>> ReadNpzMembers(const std::string& path);

// Streams the positions of a Matrix Market coordinate file without building the tensor: calls
// visit(rc, n) with blocks of n 0-based (row, column) pairs (rc [n, 2]), from several threads at
// once, each block at most one chunk of lines (1 MiB of text), so memory stays bounded however
// large the file; symmetric files also give the mirrored positions. Returns the shape
// {rows, cols}, which on_shape also gets before the first block. Indices are checked (an Error
// names the line); values are not parsed. Another format, or an array .mtx, is an
// Error(kUnsupported) before anything is visited: read those with Read.
using PositionVisitor = std::function<void(const int64_t* rc, int64_t n)>;
std::vector<int64_t> VisitMtxPositions(
    const std::string& path, const PositionVisitor& visit,
    const std::function<void(const std::vector<int64_t>& shape)>& on_shape = {});

// The same for a 2-D scipy.sparse .npz (coo with row/col members, csr or csc): its index members
// are read (inflated) a block at a time on one thread, so memory stays bounded; indptr and the
// indices are checked as Read checks them. Other .npz files are an Error(kUnsupported).
std::vector<int64_t> VisitNpzPositions(
    const std::string& path, const PositionVisitor& visit,
    const std::function<void(const std::vector<int64_t>& shape)>& on_shape = {});
// The same for a FROSTT .tns of any rank: the positions on the two axes choose_axes(shape)
// picks (called once the shape is known), as (axis i, axis j) pairs, a chunk of lines at a time
// from several threads. Without a "# shape:" comment the file is parsed twice (the first pass
// finds the largest index on each axis). Errors as Read gives them.
std::vector<int64_t> VisitTnsPositions(
    const std::string& path,
    const std::function<std::pair<int, int>(const std::vector<int64_t>& shape)>& choose_axes,
    const PositionVisitor& visit);
// The same on any two axes: choose_axes(shape) picks them once the shape is known, and blocks
// of (axis i, axis j) pairs follow; n-D scipy coo arrays (a coords member) stream too.
std::vector<int64_t> VisitNpzPositions(
    const std::string& path,
    const std::function<std::pair<int, int>(const std::vector<int64_t>& shape)>& choose_axes,
    const PositionVisitor& visit);
// Whether VisitNpzPositions streams `path` (a .npz holding a scipy 2-D coo/csr/csc or an n-D
// coo array).
bool NpzStreamsPositions(const std::string& path);

// The one door to the visitors above (and VisitLibsvmPositions, libsvm.h), for callers that take
// any sparse file: VisitPositions chooses the visitor of the format of `path`. choose_axes(shape)
// picks two axes once the shape is known, before the first block (for the 2-D formats, .mtx and
// libsvm, (0, 1) or (1, 0): the pairs of (1, 0) come swapped), and blocks of (axis i, axis j)
// pairs follow, from several threads at once. Returns the shape; errors are the visitor's, and
// axes that are not two of the shape's an Error(kInvalidArgument). StreamsPositions says which
// files it streams: a coordinate .mtx, a .tns, a libsvm file and the .npz files of
// NpzStreamsPositions (read the others, an array .mtx or a .npy, with Read).
std::vector<int64_t> VisitPositions(
    const std::string& path,
    const std::function<std::pair<int, int>(const std::vector<int64_t>& shape)>& choose_axes,
    const PositionVisitor& visit);
bool StreamsPositions(const std::string& path);

// Writes `data` to `path` in the format of its extension (atomically).
void Write(const std::string& path, const TensorData& data);
void Write(const std::string& path, const Tensor& dense);
void Write(const std::string& path, const SparseTensor& sparse);
void Write(const std::string& path, const TensorData& data, const WriteOptions& options);
// Writes a .mtx with `options` (atomically): a SparseTensor of rank 2 as a coordinate file, a
// dense matrix as an array file.
void WriteMtx(const std::string& path, const TensorData& data, const MtxWriteOptions& options);
// A matrix as separate coordinate arrays, SciPy's COO (row, col, data): rows, cols and values
// 1-D of nnz elements each, rows and cols of an integer dtype (int32 and int64 are read where
// they lie).
struct MtxCoordinates {
  Tensor rows, cols, values;
  int64_t num_rows = 0, num_cols = 0;
};
// The file WriteMtx writes for the SparseTensor of the same entries in the same order, without
// first interleaving rows and cols into its [nnz, 2] indices (with kGeneral; the other
// symmetries go through that SparseTensor).
void WriteMtx(const std::string& path, const MtxCoordinates& matrix,
              const MtxWriteOptions& options);
// The symmetry MtxSymmetry::kDetect finds for `data` (kGeneral, kSymmetric or kSkewSymmetric).
MtxSymmetry DetectMtxSymmetry(const TensorData& data);
// Whether the format holds dense arrays or sparse tensors (kFileFormats).
bool FormatHoldsDense(Format format);
bool FormatHoldsSparse(Format format);

}  // namespace tensorkit::io

#endif  // TENSORKIT_IO_IO_H_
