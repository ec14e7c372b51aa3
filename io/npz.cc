// .npz: a zip archive of .npy members. NumPy's savez/savez_compressed hold dense arrays;
// scipy.sparse.save_npz holds one matrix or array as members format ('coo', 'csr' or 'csc'),
// shape, row/col (2-D coo) or coords (n-D coo arrays) or indices/indptr, plus data.
#include <algorithm>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <type_traits>
#include <utility>

#include "tensorkit/common/alloc_fault.h"
#include "tensorkit/common/parallel.h"
#include "tensorkit/dense/views.h"
#include "tensorkit/io/formats.h"

namespace tensorkit::io {
namespace {

std::string StripNpy(const std::string& name) {
  return name.size() > 4 && name.compare(name.size() - 4, 4, ".npy") == 0
             ? name.substr(0, name.size() - 4)
             : name;
}

// An archive's members by name (without .npy), reading each on demand.
class Archive {
 public:
  explicit Archive(const Bytes& zip) : zip_(zip), entries_(ListZip(zip)) {
    for (size_t i = 0; i < entries_.size(); ++i) index_[StripNpy(entries_[i].name)] = i;
  }
  bool Has(const std::string& name) const { return index_.count(name) != 0; }
  const std::vector<ZipEntry>& entries() const { return entries_; }
  // The member read (or inflated) straight into the tensor's storage.
  Tensor Array(const std::string& name) {
    ZipMemberSource source(zip_, Entry(name));
    return ReadNpy(source);
  }
  // A member holding one string: SciPy writes 'format' as bytes (|S3) or, from some versions on
  // Python 3, as unicode (<U3).
  std::string String(const std::string& name) {
    Tensor t = Array(name);
    TK_CHECK(t.dtype() == DType::kString && t.NumElements() == 1, kCorrupt, "npz: '", zip_.name,
             "': member '", name, "' should hold one string (such as 'csr'), but holds ",
             DTypeName(t.dtype()), " of dims ", ShapeString(t.Dims()));
    return t.ToVector<std::string>()[0];
  }
  const ZipEntry& Entry(const std::string& name) const {
    auto it = index_.find(StripNpy(name));
    if (it == index_.end()) {
      std::string have;
      for (const auto& e : entries_) have += (have.empty() ? "" : ", ") + e.name;
      Throw(ErrorCode::kCorrupt, "npz: '", zip_.name, "' has no member '", Excerpt(name, 100),
            "' (members: ", have.empty() ? "none" : Excerpt(have, 200), ")");
    }
    return entries_[it->second];
  }
  const std::string& name() const { return zip_.name; }

 private:
  const Bytes& zip_;
  std::vector<ZipEntry> entries_;
  std::map<std::string, size_t> index_;
};

// An integer member (scipy writes int32 or int64) with the given dims, or 1-D when `dims` is
// empty.
Tensor IntTensor(Archive& ar, const std::string& name, const std::vector<int64_t>& dims = {}) {
  Tensor t = ar.Array(name);
  TK_CHECK(IsInteger(t.dtype()), kCorrupt, "npz: '", ar.name(), "': member '", name,
           "' should hold integers, got ", DTypeName(t.dtype()));
  TK_CHECK(dims.empty() ? t.NumAxes() == 1 : t.Dims() == dims, kCorrupt, "npz: '", ar.name(),
           "': member '", name, "' has dims ", ShapeString(t.Dims()), ", expected ",
           dims.empty() ? std::string("1-D") : ShapeString(dims));
  return t;
}

// A small 1-D integer member as int64 values.
std::vector<int64_t> IntMember(Archive& ar, const std::string& name) {
  Tensor t = IntTensor(ar, name);
  return Dispatch<kIntDTypes>(t.dtype(), "npz", [&]<typename T>() {
    std::vector<T> v = t.ToVector<T>();
    return std::vector<int64_t>(v.begin(), v.end());
  });
}

// Writes the integers of the 1-D view `src` to dst[i * dst_stride] as int64, in parallel,
// checking each against [0, limit); throws naming the first entry outside it.
void CopyIndexColumn(const Tensor& src, int64_t* dst, int64_t dst_stride, int64_t limit, int axis,
                     const std::string& file) {
  const int64_t n = src.Dim(0), stride = src.Stride(0);
  constexpr int64_t kChunk = 1 << 16;
  std::vector<int64_t> first_bad(static_cast<size_t>(NumChunks(n, kChunk)), -1);
  Dispatch<kIntDTypes>(src.dtype(), "npz", [&]<typename T>() {
    const T* in = src.data<T>();
    ParallelChunks(n, kChunk, [&](int64_t c, int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const int64_t v = static_cast<int64_t>(in[i * stride]);
        dst[i * dst_stride] = v;
        if ((v < 0 || v >= limit) && first_bad[c] < 0) first_bad[c] = i;
      }
    });
  });
  for (int64_t i : first_bad) {
    TK_CHECK(i < 0, kCorrupt, "npz: '", file, "': index ", dst[i * dst_stride], " on axis ", axis,
             " of entry ", i, " is out of range [0, ", limit, ")");
  }
}

// A scipy.sparse matrix or array as a SparseTensor in the file's entry order: coo of any rank
// (members row/col, or coords [rank, nnz] as SciPy writes n-D arrays), csr/csc (2-D, or a 1-D
// csr array: one row).
SparseTensor ReadScipy(Archive& ar) {
  const std::string format = ar.String("format");
  TK_CHECK(format == "coo" || format == "csr" || format == "csc", kUnsupported, "npz: '", ar.name(),
           "': scipy format '", Excerpt(format),
           "' is not supported (coo, csr, csc are); convert it with .tocoo() before save_npz");
  std::vector<int64_t> shape = IntMember(ar, "shape");
  bool shape_ok = !shape.empty();
  for (int64_t d : shape) shape_ok = shape_ok && d >= 0;
  TK_CHECK(
      shape_ok && (format == "coo" || shape.size() == 2 || (format == "csr" && shape.size() == 1)),
      kCorrupt, "npz: '", ar.name(), "': scipy shape ", ShapeString(shape),
      " does not suit format ", format);
  const int rank = static_cast<int>(shape.size());
  Tensor data = ar.Array("data");
  TK_CHECK(data.NumAxes() == 1, kCorrupt, "npz: '", ar.name(),
           "': member 'data' should be 1-D, got dims ", ShapeString(data.Dims()));
  data = data.IsContiguous() ? data : data.Clone();
  const int64_t nnz = data.Dim(0);
  Tensor indices = Tensor::Empty({nnz, rank}, DType::kInt64);
  int64_t* idx = indices.data<int64_t>();
  if (format == "coo") {
    if (ar.Has("coords")) {
      Tensor coords = IntTensor(ar, "coords", {rank, nnz});
      for (int a = 0; a < rank; ++a) {
        CopyIndexColumn(Select(coords, 0, a), idx + a, rank, shape[a], a, ar.name());
      }
    } else {
      TK_CHECK(rank == 2, kCorrupt, "npz: '", ar.name(), "': a coo file of shape ",
               ShapeString(shape), " needs a coords member");
      CopyIndexColumn(IntTensor(ar, "row", {nnz}), idx, 2, shape[0], 0, ar.name());
      CopyIndexColumn(IntTensor(ar, "col", {nnz}), idx + 1, 2, shape[1], 1, ar.name());
    }
    return SparseTensor::Create(indices, data, shape);
  }
  // csr / csc: ptr over the major axis, indices on the other; a 1-D csr array is a single row.
  const int major = format == "csr" ? 0 : 1;
  const int64_t num_major = rank == 1 ? 1 : shape[major];
  const int minor_axis = rank == 1 ? 0 : 1 - major;
  std::vector<int64_t> ptr = IntMember(ar, "indptr");
  TK_CHECK(
      static_cast<int64_t>(ptr.size()) == num_major + 1 && ptr.front() == 0 && ptr.back() == nnz,
      kCorrupt, "npz: '", ar.name(), "': ", format, " indptr (", ptr.size(), " entries, from ",
      ptr.front(), " to ", ptr.back(), ") does not fit shape ", ShapeString(shape), " with ", nnz,
      " values");
  for (int64_t m = 0; m < num_major; ++m) {  // first, so that the fill below stays in bounds
    TK_CHECK(ptr[m] <= ptr[m + 1], kCorrupt, "npz: '", ar.name(), "': indptr decreases at ", m,
             " (", ptr[m], " then ", ptr[m + 1], ")");
  }
  CopyIndexColumn(IntTensor(ar, "indices", {nnz}), idx + minor_axis, rank, shape[minor_axis],
                  minor_axis, ar.name());
  if (rank == 2) {
    ParallelFor(0, num_major, GrainFor(16 * (nnz / std::max<int64_t>(num_major, 1) + 1)),
                [&](int64_t b, int64_t e) {
                  for (int64_t m = b; m < e; ++m) {
                    for (int64_t k = ptr[m]; k < ptr[m + 1]; ++k) idx[2 * k + major] = m;
                  }
                });
  }
  return SparseTensor::Create(indices, data, shape);
}

bool IsScipy(const Archive& ar) { return ar.Has("format") && ar.Has("shape") && ar.Has("data"); }

// The npy bytes of `t` as header + data pieces, which live in *image.
std::vector<std::string_view> NpyPieces(const Tensor& t, NpyImage* image) {
  MakeNpyImage(t, image);
  return {std::string_view(image->header), image->data};
}

// Bytes of a piece of a member written from all threads: small enough that the piece a task
// has just made is still in its core's cache when its CRC and its write read it again.
constexpr int64_t kPieceBytes = int64_t{512} << 10;

// Calls body(c, b, e, scratch) for piece c holding elements [b, e) of n, pieces of `chunk`
// elements, from all threads; `scratch` is one task's buffers, reused across its pieces.
template <typename Body>
void ForEachPiece(int64_t n, int64_t chunk, const Body& body) {
  ParallelFor(0, NumChunks(n, chunk), 1, [&](int64_t cb, int64_t ce) {
    std::vector<std::vector<char>> scratch;
    for (int64_t c = cb; c < ce; ++c) body(c, c * chunk, std::min(n, (c + 1) * chunk), &scratch);
  });
}

// The coo index members of `st` (row and col for rank 2, else coords [rank, nnz]) in `dtype`,
// from one pass over its [nnz, rank] indices. Stored: each piece of every axis is written at its
// place as it is made (StreamedNpyMember), so nothing is gathered first.
void WriteCooIndices(const SparseTensor& st, DType dtype, AtomicFile* file, ZipWriter* zip,
                     bool compress) {
  const int rank = st.rank();
  const int64_t nnz = st.nnz();
  const int64_t* idx = st.indices().data<int64_t>();
  Dispatch<Bit(DType::kInt32) | Bit(DType::kInt64)>(dtype, "npz", [&]<typename T>() {
    // Axis a of entries [b, e) into out[a] (each e - b long).
    auto split = [&](int64_t b, int64_t e, T* const* out) {
      for (int64_t i = b; i < e; ++i) {
        for (int a = 0; a < rank; ++a) out[a][i - b] = static_cast<T>(idx[i * rank + a]);
      }
    };
    const int64_t chunk = kPieceBytes / static_cast<int64_t>(sizeof(T));
    if (compress) {  // deflate takes each member whole
      Tensor coords = Tensor::Empty({rank, nnz}, dtype);
      T* c0 = coords.data<T>();
      ForEachPiece(nnz, chunk, [&](int64_t, int64_t b, int64_t e, auto*) {
        std::vector<T*> out(static_cast<size_t>(rank));
        for (int a = 0; a < rank; ++a) out[static_cast<size_t>(a)] = c0 + a * nnz + b;
        split(b, e, out.data());
      });
      NpyImage image;
      if (rank == 2) {
        zip->Add("row.npy", NpyPieces(Select(coords, 0, 0), &image), true);
        zip->Add("col.npy", NpyPieces(Select(coords, 0, 1), &image), true);
      } else {
        zip->Add("coords.npy", NpyPieces(coords, &image), true);
      }
      return;
    }
    const size_t pieces = static_cast<size_t>(NumChunks(nnz, chunk));
    // Rank 2: two members of nnz; otherwise one of [rank, nnz], piece a * pieces + c of axis a.
    std::vector<StreamedNpyMember> members;
    members.reserve(2);
    if (rank == 2) {
      members.emplace_back(zip, file, "row", dtype, std::vector<int64_t>{nnz}, pieces);
      members.emplace_back(zip, file, "col", dtype, std::vector<int64_t>{nnz}, pieces);
    } else {
      members.emplace_back(zip, file, "coords", dtype, std::vector<int64_t>{rank, nnz},
                           static_cast<size_t>(rank) * pieces);
    }
    ForEachPiece(nnz, chunk, [&](int64_t c, int64_t b, int64_t e, auto* scratch) {
      scratch->resize(static_cast<size_t>(rank));
      std::vector<T*> out(static_cast<size_t>(rank));
      for (int a = 0; a < rank; ++a) {
        (*scratch)[a].resize(static_cast<size_t>(e - b) * sizeof(T));
        out[static_cast<size_t>(a)] = reinterpret_cast<T*>((*scratch)[a].data());
      }
      split(b, e, out.data());
      for (int a = 0; a < rank; ++a) {
        const std::string_view bytes((*scratch)[a].data(), (*scratch)[a].size());
        if (rank == 2) {
          members[static_cast<size_t>(a)].Put(static_cast<size_t>(c), b, bytes);
        } else {
          members[0].Put(static_cast<size_t>(a) * pieces + static_cast<size_t>(c), a * nnz + b,
                         bytes);
        }
      }
    });
    for (StreamedNpyMember& m : members) m.Seal();
  });
}

// data.npy from a contiguous host tensor: stored, in pieces written straight from its memory.
void WriteData(const Tensor& values, AtomicFile* file, ZipWriter* zip, bool compress) {
  NpyImage image;
  if (compress) {
    zip->Add("data.npy", NpyPieces(values, &image), true);
    return;
  }
  const char* data = static_cast<const char*>(values.raw_data());
  const int64_t n = values.NumElements(), item = static_cast<int64_t>(DTypeSize(values.dtype()));
  const int64_t chunk = std::max<int64_t>(1, kPieceBytes / item);
  StreamedNpyMember member(zip, file, "data", values.dtype(), std::vector<int64_t>{n},
                           static_cast<size_t>(NumChunks(n, chunk)));
  ForEachPiece(n, chunk, [&](int64_t c, int64_t b, int64_t e, auto*) {
    member.Put(static_cast<size_t>(c), b,
               std::string_view(data + b * item, static_cast<size_t>((e - b) * item)));
  });
  member.Seal();
}

// The CSR members of a 2-D matrix: indptr [rows + 1] and indices, in `dtype`, with *st sorted in
// row order first (data.npy then follows in that order).
void WriteCsrMembers(SparseTensor* st, DType dtype, ZipWriter* zip, bool compress) {
  if (!st->SortedIn({0, 1})) st->Reorder({0, 1});
  *st = HostContiguous(*st);
  const int64_t rows = st->shape()[0], nnz = st->nnz();
  Tensor indptr = Tensor::Zeros({rows + 1}, dtype);
  Tensor indices = Tensor::Empty({nnz}, dtype);
  const int64_t* in = st->indices().data<int64_t>();
  Dispatch<Bit(DType::kInt32) | Bit(DType::kInt64)>(dtype, "npz", [&]<typename T>() {
    T* ptr = indptr.data<T>();
    T* col = indices.data<T>();
    for (int64_t k = 0; k < nnz; ++k) {
      ++ptr[in[2 * k] + 1];
      col[k] = static_cast<T>(in[2 * k + 1]);
    }
    for (int64_t r = 0; r < rows; ++r) ptr[r + 1] += ptr[r];
  });
  NpyImage image;
  zip->Add("indices.npy", NpyPieces(indices, &image), compress);
  zip->Add("indptr.npy", NpyPieces(indptr, &image), compress);
}

// The integers of a 1-D member, read (or inflated) a block at a time: for streaming readers.
class IntStream {
 public:
  // The whole of a 1-D member, or (row >= 0) row `row` of a 2-D one in C order.
  IntStream(const Bytes& zip, const ZipEntry& entry, const std::string& file, int64_t row = -1)
      : source_(zip, entry), file_(file), member_(entry.name) {
    h_ = ReadNpyHeader(source_);
    const size_t axes = row < 0 ? 1 : 2;
    TK_CHECK((h_.kind == 'i' || h_.kind == 'u') && (h_.item_size == 4 || h_.item_size == 8) &&
                 h_.dims.size() == axes && (row < 0 || (!h_.fortran && row < h_.dims[0])),
             kCorrupt, "npz: '", file_, "': member '", member_, "' should be a ", axes,
             "-D array of 4- or 8-byte integers", row < 0 ? "" : " in C order", ", got kind '",
             h_.kind, "' of ", h_.item_size, " bytes and dims ", ShapeString(h_.dims));
    size_ = h_.dims.back();
    finish_ = false;
    if (row > 0) {  // skip the rows before it, a block at a time
      std::vector<int64_t> scratch(1 << 16);
      for (left_ = row * size_; left_ > 0;) Next(scratch.data(), 1 << 16);
    }
    left_ = size_;
    finish_ = row < 0 || row == h_.dims[0] - 1;  // the CRC is checked at the member's end only
  }
  int64_t size() const { return size_; }
  int64_t left() const { return left_; }
  // The next min(n, left()) integers into out; returns how many.
  int64_t Next(int64_t* out, int64_t n) {
    n = std::min(n, left_);
    alloc_fault::MaybeFailBuffer();
    raw_.resize(static_cast<size_t>(n * h_.item_size));
    source_.Read(raw_.data(), n * h_.item_size);
    if (h_.swap) SwapBytes(raw_.data(), n, static_cast<int>(h_.item_size));
    // One loop per element type, chosen once a block.
    const uint8_t* raw = raw_.data();
    auto widen = [&]<typename T>() {
      for (int64_t i = 0; i < n; ++i) {
        T v;
        std::memcpy(&v, raw + sizeof(T) * i, sizeof(T));
        if constexpr (std::is_same_v<T, uint64_t>) {
          TK_CHECK(v <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()), kCorrupt,
                   "npz: '", file_, "': member '", member_, "' holds an index past int64");
        }
        out[i] = static_cast<int64_t>(v);
      }
    };
    const bool is_signed = h_.kind == 'i';
    if (h_.item_size == 8) {
      is_signed ? widen.template operator()<int64_t>() : widen.template operator()<uint64_t>();
    } else {
      is_signed ? widen.template operator()<int32_t>() : widen.template operator()<uint32_t>();
    }
    left_ -= n;
    if (left_ == 0 && finish_) source_.Finish();  // the member's CRC
    return n;
  }

 private:
  ZipMemberSource source_;
  std::string file_, member_;
  NpyHeader h_;
  int64_t size_ = 0, left_ = 0;
  bool finish_ = true;
  std::vector<uint8_t> raw_;
};

}  // namespace

DType ScipyIndexDType(bool csr, const std::vector<int64_t>& shape, int64_t nnz) {
  // scipy.sparse._sputils.get_index_dtype with maxval max(shape) (coo) or max(nnz, shape)
  // (tocsr); coo of rank > 2 casts its coords to int64 whatever their values.
  if (!csr && shape.size() > 2) return DType::kInt64;
  int64_t most = csr ? nnz : 0;
  for (int64_t d : shape) most = std::max(most, d);
  return most <= std::numeric_limits<int32_t>::max() ? DType::kInt32 : DType::kInt64;
}

TensorData ReadNpzBytes(const Bytes& bytes, const ReadOptions& options) {
  Archive ar(bytes);
  TensorData out;
  if (!options.member.empty()) {
    out.dense = ar.Array(options.member);
  } else if (IsScipy(ar)) {
    out.sparse = ReadScipy(ar);
  } else {
    TK_CHECK(!ar.entries().empty(), kCorrupt, "npz: '", bytes.name, "' holds no arrays");
    out.dense = ar.Array(ar.entries().front().name);
  }
  return out;
}

std::vector<std::pair<std::string, Tensor>> ReadNpzMembersBytes(const Bytes& bytes) {
  Archive ar(bytes);
  std::vector<std::pair<std::string, Tensor>> out;
  for (const ZipEntry& e : ar.entries()) out.emplace_back(StripNpy(e.name), ar.Array(e.name));
  return out;
}

void WriteNpz(const std::string& path, const TensorData& data, const WriteOptions& options) {
  AtomicFile file(path);
  ZipWriter zip(&file);
  if (!data.is_sparse()) {
    NpyImage image;
    zip.Add("arr_0.npy", NpyPieces(data.dense, &image), options.compress);
  } else {
    SparseTensor st = HostContiguous(data.sparse);
    const int rank = st.rank();
    TK_CHECK(rank >= 1, kUnsupported, "npz: scipy.sparse has no rank-0 arrays; cannot write '",
             path, "' (use .tns)");
    TK_CHECK(st.dtype() != DType::kString && st.dtype() != DType::kBFloat16, kUnsupported,
             "npz: cannot write ", DTypeName(st.dtype()), " values to '", path, "'");
    const bool csr = rank == 2 && options.csr;
    const int64_t nnz = st.nnz();
    const DType index_dtype = ScipyIndexDType(csr, st.shape(), nnz);
    const std::string fmt = csr ? "csr" : "coo";
    std::string fmt_header = NpyByteStringHeader(fmt.size());
    zip.Add("format.npy", {fmt_header, fmt}, options.compress);
    Tensor shape = Tensor::FromVector<int64_t>(st.shape());
    NpyImage image;  // each Add writes its member before the next one reuses the image
    zip.Add("shape.npy", NpyPieces(shape, &image), options.compress);
    // 2-D: coo_matrix members row and col (every SciPy reads them); other ranks: a coo_array
    // with coords [rank, nnz] (SciPy 1.15 and later).
    if (csr) {
      WriteCsrMembers(&st, index_dtype, &zip, options.compress);
    } else {
      WriteCooIndices(st, index_dtype, &file, &zip, options.compress);
      if (rank != 2) {
        Tensor is_array = Tensor::FromVector(std::vector<bool>{true}, {});
        zip.Add("_is_array.npy", NpyPieces(is_array, &image), options.compress);
      }
    }
    WriteData(st.values(), &file, &zip, options.compress);
  }
  for (const auto& [name, array] : options.extra_members) {
    NpyImage image;
    zip.Add(name + ".npy", NpyPieces(array.HostContiguous(), &image), options.compress);
  }
  zip.Finish();
  file.Commit();
}

SparseTensor HostContiguous(const SparseTensor& st) {
  return SparseTensor::Create(st.indices().HostContiguous(), st.values().HostContiguous(),
                              st.shape(), st.order());
}

bool NpzStreamsPositions(const std::string& path) {
  if (FormatFromPath(path) != Format::kNpz) return false;
  MappedFile f(path);
  const Bytes bytes = f.bytes();
  Archive ar(bytes);
  if (!IsScipy(ar)) return false;
  const std::string format = ar.String("format");
  const std::vector<int64_t> shape = IntMember(ar, "shape");
  if (format == "coo" && ar.Has("coords")) {  // rows of coords stream in C order only
    ZipMemberSource source(bytes, ar.Entry("coords"));
    return shape.size() >= 2 && !ReadNpyHeader(source).fortran;
  }
  return shape.size() == 2 && (format == "csr" || format == "csc" ||
                               (format == "coo" && ar.Has("row") && ar.Has("col")));
}

namespace {

// What the streams of VisitNpzPositions share: the archive, its shape, the two chosen axes, and
// the blocks of integers read and of pairs handed to the visitor.
struct PositionStream {
  static constexpr int64_t kBlock = 1 << 16;
  void Check(int64_t v, int axis, int64_t entry) const {
    TK_CHECK(v >= 0 && v < shape[axis], kCorrupt, "npz: '", path, "': index ", v, " on axis ", axis,
             " of entry ", entry, " is out of range [0, ", shape[axis], ")");
  }
  // Emits entry k's indices on the two chosen axes, i on axis ia and j on axis ja.
  void Put(int64_t slot, int64_t i, int ia, int64_t j) {
    rc[2 * slot + (ia == ai ? 0 : 1)] = i;
    rc[2 * slot + (ia == ai ? 1 : 0)] = j;
  }

  const Bytes& bytes;
  const Archive& ar;
  const std::string& path;
  const std::vector<int64_t>& shape;
  const int ai, aj;
  std::vector<int64_t> a = std::vector<int64_t>(kBlock), b = std::vector<int64_t>(kBlock);
  std::vector<int64_t> rc = std::vector<int64_t>(2 * kBlock);
};

// A coo's positions: two streams over the axes' members (or the rows of coords for those axes).
void StreamCoo(PositionStream& s, bool coords, const PositionVisitor& visit) {
  auto stream = [&](int axis) {
    if (coords) return IntStream(s.bytes, s.ar.Entry("coords"), s.path, axis);
    return IntStream(s.bytes, s.ar.Entry(axis == 0 ? "row" : "col"), s.path);
  };
  IntStream si = stream(s.ai), sj = stream(s.aj);
  TK_CHECK(si.size() == sj.size(), kCorrupt, "npz: '", s.path, "': the index members have ",
           si.size(), " and ", sj.size(), " entries");
  for (int64_t done = 0; si.left() > 0;) {
    const int64_t n = si.Next(s.a.data(), PositionStream::kBlock);
    sj.Next(s.b.data(), n);
    for (int64_t k = 0; k < n; ++k) {
      s.Check(s.a[k], s.ai, done + k);
      s.Check(s.b[k], s.aj, done + k);
      s.Put(k, s.a[k], s.ai, s.b[k]);
    }
    visit(s.rc.data(), n);
    done += n;
  }
}

// A csr's or csc's positions: indptr and indices walked side by side, indptr checked as Read
// checks it.
void StreamCompressed(PositionStream& s, const std::string& format, const PositionVisitor& visit) {
  constexpr int64_t kBlock = PositionStream::kBlock;
  const std::string& path = s.path;
  const std::vector<int64_t>& shape = s.shape;
  const int major = format == "csr" ? 0 : 1;
  IntStream ptr(s.bytes, s.ar.Entry("indptr"), path), idx(s.bytes, s.ar.Entry("indices"), path);
  TK_CHECK(ptr.size() == shape[major] + 1, kCorrupt, "npz: '", path, "': ", format, " indptr has ",
           ptr.size(), " entries for ", shape[major], " major slices");
  int64_t m = -1, end = 0, ptr_at = 0, ptr_n = 0;
  std::vector<int64_t> p(kBlock);
  auto next_ptr = [&]() {
    if (ptr_at == ptr_n) {
      ptr_n = ptr.Next(p.data(), kBlock);
      ptr_at = 0;
    }
    return p[ptr_at++];
  };
  TK_CHECK(next_ptr() == 0, kCorrupt, "npz: '", path, "': ", format, " indptr starts at ", p[0],
           ", not 0");
  for (int64_t k = 0; idx.left() > 0;) {
    const int64_t n = idx.Next(s.a.data(), kBlock);
    for (int64_t i = 0; i < n; ++i, ++k) {
      while (k >= end) {  // the next major slice holding entry k
        TK_CHECK(m + 1 < shape[major], kCorrupt, "npz: '", path, "': ", format, " indptr ends at ",
                 end, " but indices has ", idx.size(), " entries");
        const int64_t next = next_ptr();
        TK_CHECK(next >= end, kCorrupt, "npz: '", path, "': indptr decreases at ", m + 1, " (", end,
                 " then ", next, ")");
        ++m;
        end = next;
      }
      s.Check(s.a[i], 1 - major, k);
      s.Put(i, m, major, s.a[i]);
    }
    visit(s.rc.data(), n);
  }
  TK_CHECK(end <= idx.size(), kCorrupt, "npz: '", path, "': ", format, " indptr reaches ", end,
           " but indices has ", idx.size(), " entries");
  // The rest of indptr: each the number of entries (empty trailing slices).
  while (ptr.left() > 0 || ptr_at < ptr_n) {
    const int64_t next = next_ptr();
    TK_CHECK(next == idx.size() && next >= end, kCorrupt, "npz: '", path, "': ", format,
             " indptr reaches ", next, " but indices has ", idx.size(), " entries");
    end = next;
  }
}

}  // namespace

std::vector<int64_t> VisitNpzPositions(
    const std::string& path,
    const std::function<std::pair<int, int>(const std::vector<int64_t>& shape)>& choose_axes,
    const PositionVisitor& visit) {
  MappedFile f(path);
  const Bytes bytes = f.bytes();
  Archive ar(bytes);
  TK_CHECK(IsScipy(ar), kUnsupported, "VisitNpzPositions: '", path,
           "' is not a scipy.sparse .npz (no format, shape and data members); read it with Read");
  const std::string format = ar.String("format");
  const std::vector<int64_t> shape = IntMember(ar, "shape");
  const int rank = static_cast<int>(shape.size());
  const bool coords = format == "coo" && ar.Has("coords");
  bool shape_ok = rank == 2 || (coords && rank > 2);
  for (int64_t d : shape) shape_ok = shape_ok && d >= 0;
  TK_CHECK(shape_ok && (format == "csr" || format == "csc" || format == "coo"), kUnsupported,
           "VisitNpzPositions: '", path, "' holds a ", Excerpt(format), " of shape ",
           ShapeString(shape),
           "; 2-D coo, csr and csc and n-D coo stream (read the rest with Read)");
  const std::pair<int, int> axes = choose_axes(shape);
  const int ai = axes.first, aj = axes.second;
  TK_CHECK(ai >= 0 && ai < rank && aj >= 0 && aj < rank && ai != aj, kInvalidArgument,
           "VisitNpzPositions: axes ", ai, " and ", aj, " for a rank-", rank, " tensor");
  PositionStream s{bytes, ar, path, shape, ai, aj};
  if (format == "coo") {
    StreamCoo(s, coords, visit);
  } else {
    StreamCompressed(s, format, visit);
  }
  return shape;
}

std::vector<int64_t> VisitNpzPositions(
    const std::string& path, const PositionVisitor& visit,
    const std::function<void(const std::vector<int64_t>& shape)>& on_shape) {
  return VisitNpzPositions(
      path,
      [&](const std::vector<int64_t>& shape) {
        TK_CHECK(shape.size() == 2, kUnsupported, "VisitNpzPositions: '", path, "' has shape ",
                 ShapeString(shape), "; (row, column) pairs need a 2-D file (choose two axes)");
        if (on_shape) on_shape(shape);
        return std::make_pair(0, 1);
      },
      visit);
}

}  // namespace tensorkit::io
