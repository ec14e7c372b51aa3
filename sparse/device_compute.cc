// The CUDA bodies of the compute operations (device_ops.h, Note [sparse CUDA bodies]): reductions,
// products and the sparse-dense elementwise ops. Products run in cuSPARSE (cuda/compute.h);
// everything else is built from the structural primitives (CUB sorts and merges) and the dense
// engine's CUDA executor, with no kernel of its own (sparse/README.md, "On a CUDA device").
#include <optional>
#include <utility>

#include "tensorkit/dense/ops.h"
#include "tensorkit/dense/views.h"
#include "tensorkit/sparse/cuda/compute.h"
#include "tensorkit/sparse/device_ops.h"

namespace tensorkit::sparse_cuda {
namespace si = sparse_internal;
namespace {

// --- Reductions --------------------------------------------------------------------------------

// st coalesced (bounds, duplicates summed), its indices on the kept axes copied by the dense
// engine, and the shared sort and merge again, which combines each output's entries in a fixed
// order (stable sort, entry order within a position) by `kind`: max and min also meet the zero
// of an output whose slice has fewer stored positions than the slice size.
SparseTensor Reduce(const SparseTensor& st, const si::ReducePlan& plan, MergeOp kind,
                    const char* op) {
  CheckDType<si::kReduceDTypes>(st.dtype(), op);
  const SparseTensor full = Merge(st.indices(), st.values(), st.shape(), {}, op);
  const int kept = static_cast<int>(plan.out_shape.size());
  Tensor idx = Tensor::Empty({full.nnz(), kept}, DType::kInt64, st.device());
  for (int a = 0, j = 0; a < st.rank(); ++a) {
    if (plan.reduced[a]) continue;
    Tensor column = tensorkit::Slice(idx, 1, j, j + 1);
    Copy(tensorkit::Slice(full.indices(), 1, a, a + 1), &column);
    ++j;
  }
  const MergeRule rule = kind == MergeOp::kSum ? MergeRule{} : MergeRule{kind, 1, plan.slice_size};
  return MergeChecked(idx, full.values(), plan.out_shape, rule);
}

// --- Sparse-dense products (cuSPARSE) ----------------------------------------------------------

// The layout cuSPARSE can read t ([rows, cols], or a vector [rows] as [rows, 1]) in.
DenseLayout LayoutOf(const Tensor& t) {
  const bool matrix = t.NumAxes() == 2;
  return PlanDense(t.Dim(0), matrix ? t.Dim(1) : 1, t.Stride(0), matrix ? t.Stride(1) : 0);
}

// True for a 1-D tensor cusparseSpMV can take: contiguous.
bool PlainVector(const Tensor& t) {
  return t.NumAxes() == 1 && (t.Dim(0) <= 1 || t.Stride(0) == 1);
}

// c = alpha * (a @ b) + beta * c with a the device CSR arrays of a [rows, cols] matrix, b [cols]
// or [cols, N] and c [rows] or [rows, N], all checked and on one device. Operands whose strides
// cuSPARSE cannot take are copied (c back afterwards); nothing waits for the device.
void CsrProduct(const char* op, Scalar alpha, Scalar beta, const Tensor& ptr, const Tensor& minor,
                const Tensor& values, int64_t rows, int64_t cols, const Tensor& b, Tensor* c) {
  const int64_t n = b.NumAxes() == 2 ? b.Dim(1) : 1;
  if (rows == 0 || n == 0) return;
  const bool read_c = !(beta == Scalar(0));
  const int64_t nnz = minor.Dim(0);
  if (nnz == 0 || cols == 0) {  // alpha * 0 + beta * c
    if (read_c) {
      Scale(beta, c);
    } else {
      SetZero(c);
    }
    return;
  }
  const Tensor bw = LayoutOf(b).fits ? b : b.Clone();
  const bool staged = !LayoutOf(*c).fits;
  Tensor cw = *c;
  if (staged) {
    cw = read_c ? c->Clone() : Tensor::Empty(c->Dims(), c->dtype(), c->device());
  }
  // cuSPARSE does not document that beta == 0 leaves C unread (cuBLAS does), so c is zeroed
  // (a cudaMemsetAsync when contiguous): NaN in an uninitialised c cannot leak.
  if (!read_c) SetZero(&cw);
  const CsrOperand ao{
      ptr.data<int64_t>(), minor.data<int64_t>(), values.raw_data(), rows, cols, nnz};
  const DenseOperand bo{bw.raw_data(), cols, n, LayoutOf(bw)};
  const DenseOperand co{cw.raw_data(), rows, n, LayoutOf(cw)};
  const bool vector = PlainVector(bw) && PlainVector(cw);
  Spmm(op, values.dtype(), ao, bo, co, vector, alpha, beta, c->device().index);
  if (staged) Copy(cw, c);
}

// t [B, R, N] as [B * R, N]: a view when one exists, else (copy_to set) a contiguous copy's
// view, the copy in *copy_to (filled from t only when `fill`).
Tensor MergeBatches(const Tensor& t, bool fill, Tensor* copy_to) {
  if (std::optional<Tensor> v = MergeAxes(t, 0)) return *v;
  *copy_to = fill ? t.Clone() : Tensor::Empty(t.Dims(), t.dtype(), t.device());
  return *MergeAxes(*copy_to, 0);
}

// Dense a @ sparse b as c^T = b^T a^T (spmm_plan.h, op flags): `bt_*` are the CSR arrays of
// b^T ([n, k]); a and c are read transposed (views, no copies). cuSPARSE's transposed-sparse
// products are documented as not reproducible, so they are not used.
void TransposedProduct(const char* op, Scalar alpha, Scalar beta, const Tensor& a, bool vec,
                       const Tensor& bt_ptr, const Tensor& bt_minor, const Tensor& bt_values,
                       int64_t k, int64_t n, Tensor* c) {
  if (vec) {
    CsrProduct(op, alpha, beta, bt_ptr, bt_minor, bt_values, n, k, a, c);
    return;
  }
  Tensor ct = tensorkit::Transpose(*c, 0, 1);
  CsrProduct(op, alpha, beta, bt_ptr, bt_minor, bt_values, n, k, tensorkit::Transpose(a, 0, 1),
             &ct);
}

// SparseAdd / SparseMultiply: each operand coalesced (its duplicates summed in entry order, as
// the CPU does before GraphBLAS), then the runs of the two lists (a's entry first at each
// position) merged by `rule`: the CPU's results.
SparseTensor Join(const SparseTensor& a, const SparseTensor& b, const MergeRule& rule,
                  const char* op) {
  const std::vector<int64_t>& shape = a.shape();
  const SparseTensor ca = Merge(a.indices(), a.values(), shape, {}, op);
  const SparseTensor cb = Merge(b.indices(), b.values(), shape, {}, op);
  return MergeChecked(ConcatenateRows({ca.indices(), cb.indices()}),
                      Concatenate({ca.values(), cb.values()}, 0), shape, rule);
}

}  // namespace

// --- reduce.h ------------------------------------------------------------------------------------

Tensor ReduceDense(const SparseTensor& st, std::vector<int> axes, MergeOp kind, const char* op) {
  CheckDType<si::kReduceDTypes>(st.dtype(), op);
  const si::ReducePlan plan = si::MakePlan(st, std::move(axes), op);
  Tensor out = Tensor::Empty(plan.out_shape, st.dtype(), st.device());  // checks rank and size
  if (plan.out_size == 0) return out;
  if (kind != MergeOp::kSum) si::CheckExtremeSlices(st, plan, kind == MergeOp::kMax, op);
  Reduce(st, plan, kind, op).ToDense(&out);  // zeros where no entry is stored
  return out;
}

SparseTensor ReduceSparse(const SparseTensor& st, std::vector<int> axes, MergeOp kind,
                          const char* op) {
  const si::ReducePlan plan = si::MakePlan(st, std::move(axes), op);
  si::CheckSparseReduction(st, plan, kind != MergeOp::kSum, op);
  return Reduce(st, plan, kind, op);
}

// Counts as the sums of ones over every other axis, after every bound is checked.
Tensor RowNnz(const SparseTensor& st, int axis) {
  const char* op = "RowNnz";
  axis = NormalizeAxis(axis, st.rank(), op);
  CheckBounds(op, st.indices().Contiguous(), st.shape());
  Tensor one = Tensor::Empty({st.nnz()}, DType::kInt64, st.device());
  Set(1, &one);
  const SparseTensor counts =
      MergeChecked(tensorkit::Slice(st.indices(), 1, axis, axis + 1), one, {st.shape()[axis]}, {});
  Tensor out = Tensor::Empty({st.shape()[axis]}, DType::kInt64, st.device());
  counts.ToDense(&out);
  return out;
}

// --- products.h ----------------------------------------------------------------------------------

void SparseDenseProduct(const char* op, Scalar alpha, Scalar beta, const CsrMatrix& a,
                        const Tensor& b, Tensor* c) {
  si::CheckSparseDense(op, a.dtype(), kCusparseDTypes, a.device(), false, 1, a.rows(), a.cols(), b,
                       c);
  CsrProduct(op, alpha, beta, a.row_ptr(), a.col_indices(), a.values(), a.rows(), a.cols(), b, c);
}

// CSR arrays by the structural ops (on the device); a batched [B, M, K] operand as one 2-D
// matrix (spmm_plan.h, batch keys) and one product.
void SparseDenseProduct(const char* op, Scalar alpha, Scalar beta, const SparseTensor& a,
                        const Tensor& b, Tensor* c) {
  if (a.rank() == 2) {
    si::CheckSparseDense(op, a.dtype(), kCusparseDTypes, a.device(), false, 1, a.shape()[0],
                         a.shape()[1], b, c);
    const si::Compressed csr = CompressSparse(a, 0, op);
    CsrProduct(op, alpha, beta, csr.ptr, csr.minor, csr.values, a.shape()[0], a.shape()[1], b, c);
    return;
  }
  const int64_t batches = a.shape()[0], m = a.shape()[1], k = a.shape()[2];
  si::CheckSparseDense(op, a.dtype(), kCusparseDTypes, a.device(), true, batches, m, k, b, c);
  const bool block_diagonal = b.NumAxes() == 3;
  TK_CHECK(batches == 0 || (m <= INT64_MAX / batches && k <= INT64_MAX / batches), kOutOfRange, op,
           ": ", batches, " batches of [", m, " ", k, "] overflow int64");
  // Reorder checks the bounds, naming the first entry outside the shape.
  const SparseTensor sorted = Reorder(a, {0, 1, 2});
  const Tensor keys = BatchKeyRows(sorted.indices(), m, k, block_diagonal, op);
  const SparseTensor flat = SparseTensor::Create(
      keys, sorted.values(), {batches * m, block_diagonal ? batches * k : k}, {0, 1});
  const si::Compressed csr = CompressSparse(flat, 0, op);
  if (batches * m == 0) return;
  Tensor b_copy, c_copy;
  const Tensor b2 = block_diagonal ? MergeBatches(b, true, &b_copy) : b;
  Tensor c2 = MergeBatches(*c, !(beta == Scalar(0)), &c_copy);
  CsrProduct(op, alpha, beta, csr.ptr, csr.minor, csr.values, batches * m, flat.shape()[1], b2,
             &c2);
  if (c_copy.defined()) Copy(c_copy, c);
}

void DenseSparseProduct(const char* op, Scalar alpha, Scalar beta, const Tensor& a,
                        const CsrMatrix& b, Tensor* c) {
  const bool vec =
      si::CheckDenseSparse(op, a, b.dtype(), kCusparseDTypes, b.device(), b.rows(), b.cols(), c);
  const CscMatrix bt = b.ToCsc();  // b^T's CSR arrays
  TransposedProduct(op, alpha, beta, a, vec, bt.col_ptr(), bt.row_indices(), bt.values(), b.rows(),
                    b.cols(), c);
}

void DenseSparseProduct(const char* op, Scalar alpha, Scalar beta, const Tensor& a,
                        const SparseTensor& b, Tensor* c) {
  const bool vec = si::CheckDenseSparse(op, a, b.dtype(), kCusparseDTypes, b.device(), b.shape()[0],
                                        b.shape()[1], c);
  const si::Compressed bt = CompressSparse(b, 1, op);  // b^T's CSR arrays
  TransposedProduct(op, alpha, beta, a, vec, bt.ptr, bt.minor, bt.values, b.shape()[0],
                    b.shape()[1], c);
}

CsrMatrix SparseSparseProduct(const CsrMatrix& a, const CsrMatrix& b, const char* op) {
  // Exactly the float dtypes of the CPU's SpGEMM (kSparseResultDTypes, already checked): the
  // 16-bit floats are refused there, so a device product never meets them either.
  constexpr DTypeSet kSpgemmDTypes = Bit(DType::kFloat32) | Bit(DType::kFloat64);
  TK_CHECK((Bit(a.dtype()) & kSpgemmDTypes) != 0, kUnsupported, op, ": on ", a.device(),
           " the product runs in cuSPARSE, which takes float32 and float64 values, not ",
           DTypeName(a.dtype()), "; convert the values or run it on the CPU (To(Device::Cpu()))");
  for (const CsrMatrix* m : {&a, &b}) {
    TK_CHECK(m->rows() < kSpgemmIndexLimit && m->cols() < kSpgemmIndexLimit &&
                 m->nnz() < kSpgemmIndexLimit,
             kUnsupported, op, ": on ", a.device(), " an operand of ", m->rows(), "x", m->cols(),
             " with ", m->nnz(), " entries exceeds the 2^31 - 1 rows, columns or entries that ",
             "cuSPARSE's SpGEMM can index; multiply blocks of rows, or run it on the CPU");
  }
  const Device device = a.device();
  if (a.nnz() == 0 || b.nnz() == 0) {
    return si::WrapCsr(Tensor::Zeros({a.rows() + 1}, DType::kInt64, device),
                       Tensor::Empty({0}, DType::kInt64, device),
                       Tensor::Empty({0}, a.dtype(), device), a.rows(), b.cols());
  }
  // cuSPARSE's SpGEMM takes 32-bit indices: the engine's Copy narrows them and widens the
  // result's (every value checked above to fit).
  const auto narrow = [](const CsrMatrix& m) {
    return CsrArrays{Converted(m.row_ptr(), DType::kInt32),
                     Converted(m.col_indices(), DType::kInt32), m.values()};
  };
  CsrArrays c = Spgemm(op, narrow(a), a.cols(), narrow(b), b.cols());
  c.ptr = Converted(c.ptr, DType::kInt64);
  c.minor = Converted(c.minor, DType::kInt64);
  // Columns ascending within rows, as everywhere else: sorted here if cuSPARSE left any row
  // out of order (one pass when it did not).
  const Tensor rows = ExpandPointers(c.ptr, c.minor, 0);
  std::vector<int64_t> pair;
  if (FirstUnordered(rows, {0, 1}, false, &pair) >= 0) {
    Tensor sorted, sorted_values;
    SortEntries(rows, c.values, {a.rows(), b.cols()}, {0, 1}, &sorted, &sorted_values);
    c.minor = tensorkit::Select(sorted, 1, 1).Clone();
    c.values = sorted_values;
  }
  return si::WrapCsr(c.ptr, c.minor, c.values, a.rows(), b.cols());
}

SparseTensor SparseAdd(const SparseTensor& a, const SparseTensor& b, const char* op) {
  return Join(a, b, {}, op);
}

// Only the runs of two entries (a position in both coalesced operands): a's value times b's.
SparseTensor SparseMultiply(const SparseTensor& a, const SparseTensor& b, const char* op) {
  return Join(a, b, {MergeOp::kProduct, 2, 0}, op);
}

// --- mixed.h -------------------------------------------------------------------------------------

// Bounds checked on the device, one gather kernel reads the dense element each entry meets
// (broadcast strides), and the engine multiplies.
SparseTensor Mul(const SparseTensor& a, const Tensor& b, const std::vector<int64_t>& strides,
                 const char* op) {
  const Tensor idx = a.indices().Contiguous();
  CheckBounds(op, idx, a.shape());
  Tensor values = Tensor::Empty({a.nnz()}, a.dtype(), a.device());
  tensorkit::Mul(a.values(), GatherAt(idx, b, strides), &values);
  return SparseTensor::Create(a.indices(), values, a.shape(), a.order());
}

}  // namespace tensorkit::sparse_cuda
