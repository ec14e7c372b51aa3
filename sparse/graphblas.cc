// Sparse results of sparse operands through SuiteSparse:GraphBLAS (v7 pack/unpack API):
// elementwise union and intersection, and SpGEMM of matrices too wide for spgemm.cc's dense
// accumulator (GraphBLAS picks a hash-based product for those).
//
// Arrays cross the boundary without copies: inputs are CSR arrays that GraphBLAS borrows
// (packed, then unpacked again before the tensors that own them can be freed; their sparsity
// is pinned to "sparse" so GraphBLAS never converts them and never frees them), and results
// are unpacked into malloc'ed arrays that tensors adopt with std::free as deleter (GraphBLAS
// is initialised with the C allocator, so that deleter matches).
extern "C" {  // GraphBLAS.h declares C functions without a C++ guard
#include <GraphBLAS.h>
}

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <utility>
#include <vector>

#include "tensorkit/common/alloc_fault.h"
#include "tensorkit/common/parallel.h"
#include "tensorkit/dense/ops.h"
#include "tensorkit/sparse/device_ops.h"
#include "tensorkit/sparse/internal.h"
#include "tensorkit/sparse/products.h"

namespace tensorkit {
namespace si = sparse_internal;
namespace {

// Value dtypes GraphBLAS has built-in types for.
constexpr DTypeSet kGrbDTypes = si::kSparseResultDTypes;

// Built-in GraphBLAS type and operators of a C++ element type.
template <typename T>
struct Grb;
template <>
struct Grb<bool> {
  static GrB_Type Type() { return GrB_BOOL; }
  static GrB_Semiring PlusTimes() { return GrB_LOR_LAND_SEMIRING_BOOL; }
  static GrB_BinaryOp Plus() { return GrB_LOR; }
  static GrB_BinaryOp Times() { return GrB_LAND; }
};
#define TK_GRB_TRAITS(T, G)                                                 \
  template <>                                                               \
  struct Grb<T> {                                                           \
    static GrB_Type Type() { return GrB_##G; }                              \
    static GrB_Semiring PlusTimes() { return GrB_PLUS_TIMES_SEMIRING_##G; } \
    static GrB_BinaryOp Plus() { return GrB_PLUS_##G; }                     \
    static GrB_BinaryOp Times() { return GrB_TIMES_##G; }                   \
  };
TK_GRB_TRAITS(int8_t, INT8)
TK_GRB_TRAITS(uint8_t, UINT8)
TK_GRB_TRAITS(int16_t, INT16)
TK_GRB_TRAITS(int32_t, INT32)
TK_GRB_TRAITS(int64_t, INT64)
TK_GRB_TRAITS(float, FP32)
TK_GRB_TRAITS(double, FP64)
#undef TK_GRB_TRAITS

// Throws Error naming the operation and the GraphBLAS call when `info` is not success.
void CheckInfo(GrB_Info info, const char* op, const char* call) {
  if (info == GrB_SUCCESS) return;
  const ErrorCode code =
      info == GrB_OUT_OF_MEMORY ? ErrorCode::kResourceExhausted : ErrorCode::kInternal;
  Throw(code, op, ": GraphBLAS call ", call, " failed with GrB_Info ", static_cast<int>(info),
        info == GrB_OUT_OF_MEMORY ? " (out of memory)" : "");
}
#define TK_GRB(op, call) CheckInfo((call), op, #call)

// Starts GraphBLAS once per process, non-blocking, with the C allocator behind the tests'
// allocation-failure hook (common/alloc_fault.h).
void EnsureGraphBLAS(const char* op) {
  static std::once_flag once;
  std::call_once(once, [op] {
    TK_GRB(op, GxB_init(GrB_NONBLOCKING, alloc_fault::Malloc, alloc_fault::Calloc,
                        alloc_fault::Realloc, alloc_fault::Free));
  });
}

// A descriptor that gives GraphBLAS's OpenMP pool ForeignPoolThreads() threads: tensorkit's
// thread count, or one inside a oneTBB task (the batch tool converts files in a ParallelFor).
class Descriptor {
 public:
  explicit Descriptor(const char* op) {
    TK_GRB(op, GrB_Descriptor_new(&d_));
    TK_GRB(op, GxB_Desc_set_INT32(d_, GxB_DESCRIPTOR_NTHREADS, ForeignPoolThreads()));
  }
  ~Descriptor() { GrB_Descriptor_free(&d_); }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  GrB_Descriptor get() const { return d_; }

 private:
  GrB_Descriptor d_ = nullptr;
};

// A GrB_Matrix that borrows the arrays of a CsrMatrix (no duplicates) for one operation.
class BorrowedMatrix {
 public:
  BorrowedMatrix(const CsrMatrix& csr, GrB_Type type, const char* op) {
    TK_GRB(op, GrB_Matrix_new(&m_, type, csr.rows(), csr.cols()));
    TK_GRB(op, GxB_Matrix_Option_set_INT32(m_, GxB_SPARSITY_CONTROL, GxB_SPARSE));
    TK_GRB(op, GxB_Matrix_Option_set_FP64(m_, GxB_HYPER_SWITCH, GxB_NEVER_HYPER));
    if (csr.nnz() == 0) return;  // an empty matrix needs no arrays
    ap_ = static_cast<GrB_Index*>(csr.row_ptr().raw_data());
    aj_ = static_cast<GrB_Index*>(csr.col_indices().raw_data());
    ax_ = csr.values().raw_data();
    GrB_Index* ap = ap_;
    GrB_Index* aj = aj_;
    void* ax = ax_;
    const GrB_Index nnz = csr.nnz();
    TK_GRB(op, GxB_Matrix_pack_CSR(m_, &ap, &aj, &ax, (csr.rows() + 1) * sizeof(GrB_Index),
                                   nnz * sizeof(GrB_Index), nnz * DTypeSize(csr.dtype()),
                                   /*iso=*/false, /*jumbled=*/false, nullptr));
    packed_ = true;
  }
  ~BorrowedMatrix() {
    if (packed_) Unpack();
    GrB_Matrix_free(&m_);
  }
  BorrowedMatrix(const BorrowedMatrix&) = delete;
  BorrowedMatrix& operator=(const BorrowedMatrix&) = delete;
  GrB_Matrix get() const { return m_; }

  // Takes the arrays back; they must be the ones lent (the pinned sparsity guarantees it).
  void Release() {
    if (!packed_) return;
    packed_ = false;
    const bool same = Unpack();
    TK_INTERNAL_CHECK(same);
  }

 private:
  bool Unpack() {
    GrB_Index *ap = nullptr, *aj = nullptr;
    void* ax = nullptr;
    GrB_Index ap_size = 0, aj_size = 0, ax_size = 0;
    bool iso = false;
    GrB_Info info = GxB_Matrix_unpack_CSR(m_, &ap, &aj, &ax, &ap_size, &aj_size, &ax_size, &iso,
                                          nullptr, nullptr);
    return info == GrB_SUCCESS && ap == ap_ && aj == aj_ && ax == ax_ && !iso;
  }

  GrB_Matrix m_ = nullptr;
  GrB_Index* ap_ = nullptr;
  GrB_Index* aj_ = nullptr;
  void* ax_ = nullptr;
  bool packed_ = false;
};

// A GrB_Matrix owned by us (a result).
class OwnedMatrix {
 public:
  OwnedMatrix(GrB_Type type, int64_t rows, int64_t cols, const char* op) {
    TK_GRB(op, GrB_Matrix_new(&m_, type, rows, cols));
  }
  ~OwnedMatrix() { GrB_Matrix_free(&m_); }
  OwnedMatrix(const OwnedMatrix&) = delete;
  OwnedMatrix& operator=(const OwnedMatrix&) = delete;
  GrB_Matrix get() const { return m_; }

 private:
  GrB_Matrix m_ = nullptr;
};

// A 1-D tensor adopting a malloc'ed array of n elements (freed with std::free).
Tensor Adopt(void* data, int64_t n, int64_t size_bytes, DType dtype) {
  if (data == nullptr || n == 0) {
    std::free(data);
    return Tensor::Empty({n}, dtype);
  }
  auto storage = Storage::Wrap(data, size_bytes, Device::Cpu(), [](void* p) { std::free(p); });
  return Tensor(storage, DefaultPattern({n}), dtype);
}

// Unpacks a result matrix into a CsrMatrix whose tensors own GraphBLAS's arrays. The matrix
// may be left jumbled (unsorted rows): GraphBLAS's saxpy kernels leave rows in discovery order
// and its own sort (GrB_Matrix_wait) costs about as much as the product, so the rows are sorted
// here with SortSlices (columns within a row are distinct, so the order is unique).
CsrMatrix UnpackResult(GrB_Matrix m, DType dtype, int64_t rows, int64_t cols, const char* op) {
  GrB_Index *ap = nullptr, *aj = nullptr;
  void* ax = nullptr;
  GrB_Index ap_size = 0, aj_size = 0, ax_size = 0;
  bool jumbled = false;
  TK_GRB(op, GxB_Matrix_unpack_CSR(m, &ap, &aj, &ax, &ap_size, &aj_size, &ax_size, nullptr,
                                   &jumbled, nullptr));
  Tensor row_ptr = Adopt(ap, rows + 1, ap_size, DType::kInt64);
  if (ap == nullptr) row_ptr = Tensor::Zeros({rows + 1}, DType::kInt64);
  const int64_t nnz = row_ptr.data<int64_t>()[rows];
  Tensor col = Adopt(aj, nnz, aj_size, DType::kInt64);
  Tensor val = Adopt(ax, nnz, ax_size, dtype);
  if (jumbled && nnz > 0) {
    Dispatch<kGrbDTypes>(dtype, op, [&]<typename T>() {
      si::SortSlices<T>(row_ptr.data<int64_t>(), rows, col.data<int64_t>(), val.data<T>());
    });
  }
  return CsrMatrix::Create(row_ptr, col, val, {rows, cols});
}

// True when some row holds two entries with the same column.
bool HasDuplicates(const CsrMatrix& m) {
  const int64_t* ptr = m.row_ptr().data<int64_t>();
  const int64_t* col = m.col_indices().data<int64_t>();
  auto repeats = [&](int64_t r) {
    bool any = false;
    for (int64_t p = ptr[r] + 1; p < ptr[r + 1]; ++p) any |= col[p] == col[p - 1];
    return any;
  };
  return FirstWhere(m.rows(), repeats, kChunk / (m.nnz() / std::max<int64_t>(m.rows(), 1) + 1)) >=
         0;
}

// Sums entries with equal (row, column), in storage order (bool: or).
CsrMatrix SumDuplicates(const CsrMatrix& m, const char* op) {
  if (!HasDuplicates(m)) return m;
  const int64_t rows = m.rows();
  const int64_t* ptr = m.row_ptr().data<int64_t>();
  const int64_t* col = m.col_indices().data<int64_t>();
  Tensor new_ptr = Tensor::Empty({rows + 1}, DType::kInt64);
  int64_t* np = new_ptr.data<int64_t>();
  const int64_t grain = GrainFor(16 * (m.nnz() / std::max<int64_t>(rows, 1) + 1));
  ParallelFor(0, rows, grain, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      int64_t distinct = 0;
      for (int64_t p = ptr[r]; p < ptr[r + 1]; ++p) distinct += p == ptr[r] || col[p] != col[p - 1];
      np[r + 1] = distinct;
    }
  });
  np[0] = 0;
  for (int64_t r = 0; r < rows; ++r) np[r + 1] += np[r];
  Tensor new_col = Tensor::Empty({np[rows]}, DType::kInt64);
  Tensor new_val = Tensor::Empty({np[rows]}, m.dtype());
  int64_t* nc = new_col.data<int64_t>();
  Dispatch<kGrbDTypes>(m.dtype(), op, [&]<typename T>() {
    const T* val = m.values().data<T>();
    T* nv = new_val.data<T>();
    ParallelFor(0, rows, grain, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        int64_t q = np[r] - 1;
        for (int64_t p = ptr[r]; p < ptr[r + 1]; ++p) {
          if (p == ptr[r] || col[p] != col[p - 1]) {
            nc[++q] = col[p];
            nv[q] = val[p];
          } else {
            nv[q] = AddW(nv[q], val[p]);  // bool: or; integers wrap, as GraphBLAS does
          }
        }
      }
    });
  });
  return CsrMatrix::Create(new_ptr, new_col, new_val, {rows, m.cols()});
}

// The GraphBLAS type of `dtype`, or Error naming `op` with the supported list.
GrB_Type TypeOf(DType dtype, const char* op) {
  return Dispatch<kGrbDTypes>(dtype, op, []<typename T>() { return Grb<T>::Type(); });
}

enum class EWise { kAdd, kMultiply };

// C = A (+ or *) B elementwise, or A @ B, on duplicate-free CSR operands.
CsrMatrix RunGraphBLAS(const CsrMatrix& a, const CsrMatrix& b, bool product, EWise kind,
                       const char* op) {
  EnsureGraphBLAS(op);
  GrB_Type type = TypeOf(a.dtype(), op);
  const int64_t rows = a.rows(), cols = b.cols();
  Descriptor desc(op);
  BorrowedMatrix ga(a, type, op), gb(b, type, op);
  OwnedMatrix gc(type, rows, cols, op);
  Dispatch<kGrbDTypes>(a.dtype(), op, [&]<typename T>() {
    if (product) {
      TK_GRB(op, GrB_mxm(gc.get(), nullptr, nullptr, Grb<T>::PlusTimes(), ga.get(), gb.get(),
                         desc.get()));
    } else if (kind == EWise::kAdd) {
      TK_GRB(op, GrB_Matrix_eWiseAdd_BinaryOp(gc.get(), nullptr, nullptr, Grb<T>::Plus(), ga.get(),
                                              gb.get(), desc.get()));
    } else {
      TK_GRB(op, GrB_Matrix_eWiseMult_BinaryOp(gc.get(), nullptr, nullptr, Grb<T>::Times(),
                                               ga.get(), gb.get(), desc.get()));
    }
  });
  // No GrB_Matrix_wait: unpacking finishes the pending work itself, and a wait would also sort
  // the rows, which UnpackResult does faster. The result is taken before the inputs go back.
  CsrMatrix result = UnpackResult(gc.get(), a.dtype(), rows, cols, op);
  ga.Release();
  gb.Release();
  return result;
}

// Rows (product of all dims but the last) and columns of a sparse tensor seen as 2-D.
std::pair<int64_t, int64_t> FlatShape(const std::vector<int64_t>& shape, const char* op) {
  int64_t rows = 1;
  for (size_t a = 0; a + 1 < shape.size(); ++a) {
    TK_CHECK(shape[a] == 0 || rows <= (int64_t{1} << 60) / shape[a], kUnsupported, op, ": shape ",
             ShapeString(shape), " has more than 2^60 rows before its last axis");
    rows *= shape[a];
  }
  return {rows, shape.empty() ? 1 : shape.back()};
}

// A sparse tensor of any rank as CSR over FlatShape (duplicates summed).
CsrMatrix FlattenToCsr(const SparseTensor& st, const char* op) {
  if (st.rank() == 2) return SumDuplicates(si::CsrFromSparse(st, op), op);
  si::CheckIndexBounds(st, op);
  const auto [rows, cols] = FlatShape(st.shape(), op);
  const int64_t nnz = st.nnz(), rank = st.rank();
  Tensor row_key = Tensor::Zeros({nnz}, DType::kInt64);
  Tensor col_key = Tensor::Zeros({nnz}, DType::kInt64);
  if (nnz > 0 && rank > 0) {
    const int64_t* idx = st.indices().data<int64_t>();
    const int64_t s0 = st.indices().Stride(0), s1 = st.indices().Stride(1);
    int64_t* rk = row_key.data<int64_t>();
    int64_t* ck = col_key.data<int64_t>();
    const std::vector<int64_t>& shape = st.shape();
    ParallelFor(0, nnz, GrainFor(8 * (rank + 2)), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        int64_t key = 0;
        for (int64_t a = 0; a + 1 < rank; ++a) key = key * shape[a] + idx[i * s0 + a * s1];
        rk[i] = key;
        ck[i] = idx[i * s0 + (rank - 1) * s1];
      }
    });
  }
  si::Compressed c = si::Compress({row_key.data<int64_t>(), 1}, {col_key.data<int64_t>(), 1}, nnz,
                                  rows, st.values());
  return SumDuplicates(CsrMatrix::Create(c.ptr, c.minor, c.values, {rows, cols}), op);
}

// The inverse of FlattenToCsr: COO of `shape` in order {0..rank-1}.
SparseTensor UnflattenFromCsr(const CsrMatrix& m, const std::vector<int64_t>& shape) {
  const int rank = static_cast<int>(shape.size());
  if (rank == 2) return m.ToSparse();
  const int64_t nnz = m.nnz();
  Tensor idx = Tensor::Empty({nnz, rank}, DType::kInt64);
  if (nnz > 0 && rank > 0) {
    const int64_t* ptr = m.row_ptr().data<int64_t>();
    const int64_t* col = m.col_indices().data<int64_t>();
    int64_t* out = idx.data<int64_t>();
    ParallelFor(0, m.rows(), GrainFor(8 * rank * (nnz / std::max<int64_t>(m.rows(), 1) + 1)),
                [&](int64_t b, int64_t e) {
                  for (int64_t r = b; r < e; ++r) {
                    for (int64_t p = ptr[r]; p < ptr[r + 1]; ++p) {
                      int64_t key = r;
                      for (int a = rank - 2; a >= 0; --a) {
                        out[p * rank + a] = key % shape[a];
                        key /= shape[a];
                      }
                      out[p * rank + rank - 1] = col[p];
                    }
                  }
                });
  }
  return SparseTensor::Create(idx, m.values(), shape, si::Iota(rank));
}

// Shared checks and flow of SparseAdd / SparseMultiply.
SparseTensor Elementwise(const SparseTensor& a, const SparseTensor& b, EWise kind, const char* op) {
  TK_CHECK(a.shape() == b.shape(), kShapeMismatch, op, ": shapes differ: ", ShapeString(a.shape()),
           " and ", ShapeString(b.shape()));
  TK_CHECK(a.dtype() == b.dtype(), kDTypeMismatch, op, ": dtypes differ: ", DTypeName(a.dtype()),
           " and ", DTypeName(b.dtype()), "; convert the values of one operand");
  TypeOf(a.dtype(), op);
  CheckSameDevice(a.device(), b.device(), op);
  if (OnCuda(a)) {
    return kind == EWise::kMultiply ? sparse_cuda::SparseMultiply(a, b, op)
                                    : sparse_cuda::SparseAdd(a, b, op);
  }
  CsrMatrix ca = FlattenToCsr(a, op), cb = FlattenToCsr(b, op);
  return UnflattenFromCsr(RunGraphBLAS(ca, cb, false, kind, op), a.shape());
}

}  // namespace

CsrMatrix sparse_internal::GraphBLASProduct(const CsrMatrix& a, const CsrMatrix& b) {
  const char* op = "SparseSparseProduct";
  return RunGraphBLAS(SumDuplicates(a, op), SumDuplicates(b, op), true, EWise::kAdd, op);
}

SparseTensor SparseAdd(const SparseTensor& a, const SparseTensor& b) {
  return Elementwise(a, b, EWise::kAdd, "SparseAdd");
}

SparseTensor SparseMultiply(const SparseTensor& a, const SparseTensor& b) {
  return Elementwise(a, b, EWise::kMultiply, "SparseMultiply");
}

}  // namespace tensorkit
