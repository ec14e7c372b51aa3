// Sparse-dense products (SpMV, SpMM, batched SpMM, dense @ sparse) on CSR arrays. Products
// with sparse results live in spgemm.cc (SpGEMM) and graphblas.cc (elementwise); the CUDA
// bodies (cuSPARSE) in device_compute.cc.
#include "tensorkit/sparse/products.h"

#include <memory>
#include <type_traits>
#include <vector>

#include "tensorkit/common/parallel.h"
#include "tensorkit/common/simd_path.h"
#include "tensorkit/dense/ops.h"
#include "tensorkit/dense/views.h"
#include "tensorkit/sparse/device_ops.h"
#include "tensorkit/sparse/internal.h"

namespace tensorkit {
namespace {

namespace si = sparse_internal;
using si::kProductDTypes;

// Arithmetic is AddW/MulW (common/wrap.h) in the compute type: integers wrap, the 16-bit floats
// compute in float.
template <typename T>
ComputeType<T> ScalarToCompute(Scalar s) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(s.ToInt64());
  } else {
    return s.To<ComputeType<T>>();
  }
}

// The CSR operand of a kernel: rows = batches * rows_per_batch.
template <typename I>
struct CsrView {
  const int64_t* ptr;
  const I* col;
  const void* values;
  int64_t rows;
  int64_t rows_per_batch;
  int64_t nnz;
};

// A dense operand as up to three strided axes (batch, rows, columns), in elements.
struct DenseView {
  void* base;
  int64_t batch_stride, s0, s1;
};

// Writes c = alpha*acc + beta*c for one output row of n elements (stride cs1).
template <typename T>
inline void StoreRow(const ComputeType<T>* acc, int64_t n, ComputeType<T> alpha,
                     ComputeType<T> beta, bool read_c, T* c, int64_t cs1) {
  if (!read_c && cs1 == 1) {  // the common case, vectorised
    for (int64_t j = 0; j < n; ++j) c[j] = static_cast<T>(MulW(alpha, acc[j]));
  } else if (!read_c) {
    for (int64_t j = 0; j < n; ++j) c[j * cs1] = static_cast<T>(MulW(alpha, acc[j]));
  } else {
    for (int64_t j = 0; j < n; ++j)
      c[j * cs1] = static_cast<T>(
          AddW(MulW(alpha, acc[j]), MulW(beta, static_cast<ComputeType<T>>(c[j * cs1]))));
  }
}

// acc[0, n) += sum over p in [p0, p1) of val[p] * brow(col[p])[0, n), rows of b contiguous.
// Inlined into a baseline and an AVX2 copy below; the compiler vectorises the j loop.
template <typename T, typename I>
[[gnu::always_inline]] inline void AxpyRows(const I* col, const T* val, int64_t p0, int64_t p1,
                                            const T* b, int64_t bs0, int64_t n,
                                            ComputeType<T>* __restrict acc) {
  constexpr int64_t kAhead = 4;  // rows of b are random: fetch a few entries ahead
  const bool prefetch = n * static_cast<int64_t>(sizeof(T)) <= 512;
  for (int64_t p = p0; p < p1; ++p) {
    if (prefetch && p + kAhead < p1) {
      const char* next = reinterpret_cast<const char*>(b + col[p + kAhead] * bs0);
      for (int64_t off = 0; off < n * static_cast<int64_t>(sizeof(T)); off += 64) {
        __builtin_prefetch(next + off);
      }
    }
    const ComputeType<T> v = static_cast<ComputeType<T>>(val[p]);
    const T* __restrict brow = b + col[p] * bs0;
    for (int64_t j = 0; j < n; ++j)
      acc[j] = AddW(acc[j], MulW(v, static_cast<ComputeType<T>>(brow[j])));
  }
}

template <typename T, typename I>
void AxpyRowsBase(const I* col, const T* val, int64_t p0, int64_t p1, const T* b, int64_t bs0,
                  int64_t n, ComputeType<T>* acc) {
  AxpyRows<T, I>(col, val, p0, p1, b, bs0, n, acc);
}

// Same arithmetic (no FMA contraction), wider vectors: results equal the baseline copy's.
template <typename T, typename I>
[[gnu::target("avx2")]] void AxpyRowsAvx2(const I* col, const T* val, int64_t p0, int64_t p1,
                                          const T* b, int64_t bs0, int64_t n, ComputeType<T>* acc) {
  AxpyRows<T, I>(col, val, p0, p1, b, bs0, n, acc);
}

// Dot product of one CSR row with x: one loop and one chain of adds, so that the only branch
// that mispredicts is the loop exit (rows are short and of random lengths).
template <typename T, typename I>
inline ComputeType<T> RowDot(const I* col, const T* val, int64_t p0, int64_t p1, const T* x,
                             int64_t xs) {
  ComputeType<T> sum{};
  if (xs == 1) {
    for (int64_t p = p0; p < p1; ++p)
      sum = AddW(sum,
                 MulW(static_cast<ComputeType<T>>(val[p]), static_cast<ComputeType<T>>(x[col[p]])));
  } else {
    for (int64_t p = p0; p < p1; ++p)
      sum = AddW(sum, MulW(static_cast<ComputeType<T>>(val[p]),
                           static_cast<ComputeType<T>>(x[col[p] * xs])));
  }
  return sum;
}

// y[r] = alpha * (row r of a) . x + beta * y[r] for every row r: SpMV without the SpMM
// machinery. The per-row work is a handful of entries, so the loop carries nothing but the row
// bounds; the common contiguous, beta == 0 case gets its own loop. Rows are independent, so any
// split gives the same bits; tasks cover many rows because one row costs only nanoseconds.
template <typename T, typename I>
void SpmvKernel(const CsrView<I>& a, const T* x, int64_t xs, T* y, int64_t ys, Scalar alpha_s,
                Scalar beta_s) {
  const ComputeType<T> alpha = ScalarToCompute<T>(alpha_s), beta = ScalarToCompute<T>(beta_s);
  const bool read_c = !(beta_s == Scalar(0));
  const T* val = static_cast<const T*>(a.values);
  const I* col = a.col;
  const int64_t* ptr = a.ptr;
  const int64_t per_row = (a.nnz / std::max<int64_t>(a.rows, 1) + 1) * (sizeof(I) + sizeof(T));
  const int64_t grain = std::max<int64_t>(GrainFor(per_row), 4096);
  ParallelFor(0, a.rows, grain, [&](int64_t rb, int64_t re) {
    if (xs == 1 && ys == 1 && !read_c) {
      for (int64_t r = rb; r < re; ++r) {
        y[r] = static_cast<T>(MulW(alpha, RowDot<T, I>(col, val, ptr[r], ptr[r + 1], x, 1)));
      }
      return;
    }
    for (int64_t r = rb; r < re; ++r) {
      const ComputeType<T> sum = RowDot<T, I>(col, val, ptr[r], ptr[r + 1], x, xs);
      StoreRow<T>(&sum, 1, alpha, beta, read_c, y + r * ys, 1);
    }
  });
}

// c[r, :] = alpha * sum_p val[p] * b[col[p], :] + beta * c[r, :] for every row r.
template <typename T, typename I>
void SpmmKernel(const CsrView<I>& a, const DenseView& b, const DenseView& c, int64_t n,
                Scalar alpha_s, Scalar beta_s) {
  const ComputeType<T> alpha = ScalarToCompute<T>(alpha_s), beta = ScalarToCompute<T>(beta_s);
  const bool read_c = !(beta_s == Scalar(0));
  const T* val = static_cast<const T*>(a.values);
  const T* b_base = static_cast<const T*>(b.base);
  T* c_base = static_cast<T*>(c.base);
  if (n == 1 && a.rows_per_batch == a.rows) {  // one SpMV
    SpmvKernel<T, I>(a, b_base, b.s0, c_base, c.s0, alpha_s, beta_s);
    return;
  }
  const int64_t per_row = (a.nnz / std::max<int64_t>(a.rows, 1) + 1) * (16 + n * sizeof(T));
  constexpr bool kFloat = std::is_same_v<T, float> || std::is_same_v<T, double>;
  // The one instruction-set switch (common/simd_path.h; AVX-512 machines run AVX2 here).
  const bool avx2 = kFloat && ActiveSimdPath() != SimdPath::kDefault;
  ParallelFor(0, a.rows, GrainFor(per_row), [&](int64_t rb, int64_t re) {
    std::unique_ptr<ComputeType<T>[]> acc(
        new ComputeType<T>[static_cast<size_t>(std::max<int64_t>(n, 1))]);
    int64_t batch = rb / a.rows_per_batch, m = rb % a.rows_per_batch;
    for (int64_t r = rb; r < re; ++r, m = m + 1 == a.rows_per_batch ? 0 : m + 1) {
      if (m == 0 && r != rb) ++batch;
      const T* bb = b_base + batch * b.batch_stride;
      T* crow = c_base + batch * c.batch_stride + m * c.s0;
      const int64_t p0 = a.ptr[r], p1 = a.ptr[r + 1];
      if (n == 1) {  // SpMV: one dot product per row
        const ComputeType<T> sum = RowDot<T, I>(a.col, val, p0, p1, bb, b.s0);
        StoreRow<T>(&sum, 1, alpha, beta, read_c, crow, c.s1);
        continue;
      }
      ComputeType<T>* __restrict ac = acc.get();
      for (int64_t j = 0; j < n; ++j) ac[j] = ComputeType<T>{};
      if (b.s1 == 1 && r + 1 < re && m + 1 < a.rows_per_batch) {
        // b's rows are scattered: fetch those of the next row while this one is summed.
        const int64_t bytes = std::min<int64_t>(n * static_cast<int64_t>(sizeof(T)), 512);
        for (int64_t p = p1; p < a.ptr[r + 2]; ++p) {
          const char* row = reinterpret_cast<const char*>(bb + a.col[p] * b.s0);
          for (int64_t o = 0; o < bytes; o += 64) __builtin_prefetch(row + o);
        }
      }
      if (b.s1 == 1 && avx2) {  // contiguous rows of b: vectorised loops
        AxpyRowsAvx2<T, I>(a.col, val, p0, p1, bb, b.s0, n, ac);
      } else if (b.s1 == 1) {
        AxpyRowsBase<T, I>(a.col, val, p0, p1, bb, b.s0, n, ac);
      } else {
        for (int64_t p = p0; p < p1; ++p) {
          const ComputeType<T> v = static_cast<ComputeType<T>>(val[p]);
          const T* brow = bb + a.col[p] * b.s0;
          for (int64_t j = 0; j < n; ++j)
            ac[j] = AddW(ac[j], MulW(v, static_cast<ComputeType<T>>(brow[j * b.s1])));
        }
      }
      StoreRow<T>(ac, n, alpha, beta, read_c, crow, c.s1);
    }
  });
}

// c[m, :] = alpha * sum_k a[m, k] * b[k, :] + beta * c[m, :] with b in CSR.
template <typename T>
void DenseSparseKernel(const DenseView& a, int64_t m_rows, int64_t k_dim, const CsrView<int64_t>& b,
                       int64_t n, const DenseView& c, Scalar alpha_s, Scalar beta_s) {
  const ComputeType<T> alpha = ScalarToCompute<T>(alpha_s), beta = ScalarToCompute<T>(beta_s);
  const bool read_c = !(beta_s == Scalar(0));
  const T* val = static_cast<const T*>(b.values);
  const T* a_base = static_cast<const T*>(a.base);
  T* c_base = static_cast<T*>(c.base);
  const int64_t per_row = (b.nnz + k_dim + n) * 16;
  ParallelFor(0, m_rows, GrainFor(per_row), [&](int64_t rb, int64_t re) {
    std::unique_ptr<ComputeType<T>[]> acc(
        new ComputeType<T>[static_cast<size_t>(std::max<int64_t>(n, 1))]);
    ComputeType<T>* __restrict ac = acc.get();
    for (int64_t m = rb; m < re; ++m) {
      for (int64_t j = 0; j < n; ++j) ac[j] = ComputeType<T>{};
      const T* arow = a_base + m * a.s0;
      for (int64_t k = 0; k < k_dim; ++k) {
        const ComputeType<T> av = static_cast<ComputeType<T>>(arow[k * a.s1]);
        for (int64_t p = b.ptr[k]; p < b.ptr[k + 1]; ++p)
          ac[b.col[p]] = AddW(ac[b.col[p]], MulW(av, static_cast<ComputeType<T>>(val[p])));
      }
      StoreRow<T>(ac, n, alpha, beta, read_c, c_base + m * c.s0, c.s1);
    }
  });
}

// Checks dtypes and devices shared by every sparse-dense product: every operand on `device`,
// the sparse operand's, and a value dtype in `dtypes`, those the device's executor multiplies.
void CheckOperands(const char* op, DType sparse_dtype, DTypeSet dtypes, Device device,
                   const Tensor& dense, const Tensor* c) {
  dense.CheckDefined(op);
  TK_CHECK(c != nullptr, kInvalidArgument, op, ": the output pointer c is null");
  c->CheckDefined(op);
  TK_CHECK(dense.dtype() == sparse_dtype && c->dtype() == sparse_dtype, kDTypeMismatch, op,
           ": dtypes differ: sparse ", DTypeName(sparse_dtype), ", dense ",
           DTypeName(dense.dtype()), ", output ", DTypeName(c->dtype()),
           "; convert with Copy so that all three match");
  TK_CHECK(dense.device() == device && c->device() == device, kDeviceMismatch, op,
           ": the sparse operand is on ", device, " but the dense operand is on ", dense.device(),
           " and the output on ", c->device(), "; move them to one device with To(", device, ")");
  TK_CHECK(!SharesStorage(dense, *c) || !Overlap(dense.pattern(), c->pattern()), kInvalidArgument,
           op, ": the output overlaps the dense input; write into a separate tensor");
  CheckDType<kProductDTypes>(sparse_dtype, op);
  // Only cuSPARSE's set can fail here: the CPU's is kProductDTypes, checked just above.
  TK_CHECK((Bit(sparse_dtype) & dtypes) != 0, kUnsupported, op, ": ", DTypeName(sparse_dtype),
           " values on ", device,
           " are not supported (cuSPARSE multiplies float32, float64, float16 and bfloat16); ",
           "convert the operands with Copy, or move them to the CPU with To(Device::Cpu())");
}

// Strides of axis `axis` of t, or 0 when t has fewer axes (a broadcast batch).
int64_t StrideOr0(const Tensor& t, int axis) { return axis < t.NumAxes() ? t.Stride(axis) : 0; }

}  // namespace

int64_t sparse_internal::CheckSparseDense(const char* op, DType dtype, DTypeSet dtypes,
                                          Device device, bool batched, int64_t batches, int64_t m,
                                          int64_t k, const Tensor& b, const Tensor* c) {
  CheckOperands(op, dtype, dtypes, device, b, c);
  const std::vector<int64_t> bd = b.Dims(), cd = c->Dims();
  if (!batched) {
    // 2-D sparse operand: b [K] -> c [M], or b [K, N] -> c [M, N].
    TK_CHECK(bd.size() == 1 || bd.size() == 2, kShapeMismatch, op, ": b must be [K] or [K, N],",
             " got dims ", ShapeString(bd));
    const int64_t n = bd.size() == 2 ? bd[1] : 1;
    const std::vector<int64_t> want =
        bd.size() == 2 ? std::vector<int64_t>{m, n} : std::vector<int64_t>{m};
    TK_CHECK(bd[0] == k, kShapeMismatch, op, ": a is [", m, " ", k, "] but b has dims ",
             ShapeString(bd), "; b's first dim must be ", k);
    TK_CHECK(cd == want, kShapeMismatch, op, ": c has dims ", ShapeString(cd), " but a [", m, " ",
             k, "] @ b ", ShapeString(bd), " gives ", ShapeString(want));
    return n;
  }
  TK_CHECK(bd.size() == 2 || (bd.size() == 3 && bd[0] == batches), kShapeMismatch, op, ": a is [",
           batches, " ", m, " ", k, "] so b must be [", batches, " ", k, " N] or [", k,
           " N], got dims ", ShapeString(bd));
  const int off = bd.size() == 3 ? 1 : 0;
  const int64_t n = bd[off + 1];
  TK_CHECK(bd[off] == k, kShapeMismatch, op, ": a is [", batches, " ", m, " ", k,
           "] but b has dims ", ShapeString(bd), "; b's rows must number ", k);
  const std::vector<int64_t> want{batches, m, n};
  TK_CHECK(cd == want, kShapeMismatch, op, ": c has dims ", ShapeString(cd), " but the product",
           " is ", ShapeString(want));
  return n;
}

namespace {

// CheckSparseDense on the CPU, and b and c described as DenseViews; returns n.
int64_t DenseOperands(const char* op, DType dtype, bool batched, int64_t batches, int64_t m,
                      int64_t k, const Tensor& b, Tensor* c, DenseView* b_view, DenseView* c_view) {
  const int64_t n =
      si::CheckSparseDense(op, dtype, kProductDTypes, Device::Cpu(), batched, batches, m, k, b, c);
  if (!batched) {
    *b_view = {b.raw_data(), 0, b.Stride(0), b.NumAxes() == 2 ? b.Stride(1) : 0};
    *c_view = {c->raw_data(), 0, c->Stride(0), c->NumAxes() == 2 ? c->Stride(1) : 0};
  } else {
    const int off = b.NumAxes() == 3 ? 1 : 0;
    *b_view = {b.raw_data(), off ? StrideOr0(b, 0) : 0, b.Stride(off), b.Stride(off + 1)};
    *c_view = {c->raw_data(), c->Stride(0), c->Stride(1), c->Stride(2)};
  }
  return n;
}

// Runs the SpMM kernel on CSR arrays with `batches` * `m` rows and `k` columns.
// `narrow`, when given, is the matrix whose int32 column copy the kernel may read instead.
void RunSparseDense(const char* op, Scalar alpha, Scalar beta, const int64_t* ptr,
                    const int64_t* col, const Tensor& values, bool batched, int64_t batches,
                    int64_t m, int64_t k, const Tensor& b, Tensor* c,
                    const CsrMatrix* narrow = nullptr) {
  DenseView bv{}, cv{};
  const int64_t n = DenseOperands(op, values.dtype(), batched, batches, m, k, b, c, &bv, &cv);
  const int64_t rows = batches * m;
  if (rows == 0 || n == 0) return;
  const int64_t rpb = std::max<int64_t>(m, 1);
  const int32_t* col32 = narrow != nullptr ? narrow->col_indices32() : nullptr;
  Dispatch<kProductDTypes>(values.dtype(), op, [&]<typename T>() {
    if (col32 != nullptr) {
      const CsrView<int32_t> av{ptr, col32, values.raw_data(), rows, rpb, ptr[rows]};
      SpmmKernel<T, int32_t>(av, bv, cv, n, alpha, beta);
    } else {
      const CsrView<int64_t> av{ptr, col, values.raw_data(), rows, rpb, ptr[rows]};
      SpmmKernel<T, int64_t>(av, bv, cv, n, alpha, beta);
    }
  });
}

// Chunks of entries for a COO product straight from the entries, or 0 when building CSR pays
// off. Each chunk sums into a private accumulator shaped like c, so each chunk must hold at
// least 4 entries per element of c; the count depends only on the sizes (never on the thread
// count), which keeps the result bit-identical at any thread count.
int64_t DirectCooChunks(int64_t nnz, int64_t m, int64_t n) {
  const int64_t chunks = std::min<int64_t>(16, nnz / std::max<int64_t>(4 * m * n, 1));
  return chunks >= 2 ? chunks : 0;
}

// out[row, :] += val * b[col, :] for `count` COO entries; false when an index is out of range
// (that entry is skipped). Plain arguments, so that the random read-modify-writes of out are the
// only memory traffic the loop waits on.
template <typename T>
bool CooAccumulate(const int64_t* __restrict idx, int64_t s0, int64_t s1, const T* __restrict val,
                   int64_t vs, int64_t count, int64_t m, int64_t k, const T* __restrict b,
                   int64_t bs0, int64_t bs1, int64_t n, ComputeType<T>* __restrict out) {
  bool ok = true;
  for (int64_t e = 0; e < count; ++e) {
    const int64_t r = idx[e * s0], q = idx[e * s0 + s1];
    if (static_cast<uint64_t>(r) >= static_cast<uint64_t>(m) ||
        static_cast<uint64_t>(q) >= static_cast<uint64_t>(k)) {
      ok = false;
      continue;
    }
    const ComputeType<T> v = static_cast<ComputeType<T>>(val[e * vs]);
    if (n == 1) {  // SpMV: no inner loop
      out[r] = AddW(out[r], MulW(v, static_cast<ComputeType<T>>(b[q * bs0])));
      continue;
    }
    for (int64_t j = 0; j < n; ++j)
      out[r * n + j] =
          AddW(out[r * n + j], MulW(v, static_cast<ComputeType<T>>(b[q * bs0 + j * bs1])));
  }
  return ok;
}

// c = alpha * (a @ b) + beta * c for a 2-D COO a in any order: chunk c0 of the entries adds
// val * b[col, :] into row `row` of its accumulator; the accumulators are summed in chunk order
// per element. c is written only after every index was found in range.
template <typename T>
void DirectCooProduct(const SparseTensor& a, const DenseView& bv, const DenseView& cv, int64_t n,
                      int64_t num_chunks, Scalar alpha_s, Scalar beta_s, const char* op) {
  const int64_t nnz = a.nnz(), m = a.shape()[0], k = a.shape()[1];
  const int64_t* idx = a.indices().data<int64_t>();
  const int64_t s0 = a.indices().Stride(0), s1 = a.indices().Stride(1);
  const T* val = a.values().data<T>();
  const int64_t vs = a.values().Stride(0);
  const T* b = static_cast<const T*>(bv.base);
  const int64_t chunk = (nnz + num_chunks - 1) / num_chunks, size = m * n;
  // Zeroed storage (huge pages when large: the accumulators are hit at random).
  Tensor acc_t =
      Tensor::Zeros({num_chunks * size * int64_t{sizeof(ComputeType<T>)}}, DType::kUInt8);
  ComputeType<T>* acc = static_cast<ComputeType<T>*>(acc_t.raw_data());
  std::vector<char> bad(static_cast<size_t>(num_chunks), 0);
  ParallelChunks(nnz, chunk, [&](int64_t ci, int64_t eb, int64_t ee) {
    bad[ci] = !CooAccumulate<T>(idx + eb * s0, s0, s1, val + eb * vs, vs, ee - eb, m, k, b, bv.s0,
                                bv.s1, n, acc + ci * size);
  });
  if (std::find(bad.begin(), bad.end(), 1) != bad.end()) {
    si::CheckIndexBounds(a, op);  // throws, naming the first bad entry
  }
  const ComputeType<T> alpha = ScalarToCompute<T>(alpha_s), beta = ScalarToCompute<T>(beta_s);
  const bool read_c = !(beta_s == Scalar(0));
  T* c = static_cast<T*>(cv.base);
  ParallelFor(0, m, GrainFor(8 * n * (num_chunks + 1)), [&](int64_t rb, int64_t re) {
    std::vector<ComputeType<T>> row(static_cast<size_t>(n));
    for (int64_t r = rb; r < re; ++r) {
      for (int64_t j = 0; j < n; ++j) {
        ComputeType<T> sum = acc[r * n + j];
        for (int64_t ci = 1; ci < num_chunks; ++ci) sum = AddW(sum, acc[ci * size + r * n + j]);
        row[j] = sum;
      }
      StoreRow<T>(row.data(), n, alpha, beta, read_c, c + r * cv.s0, cv.s1);
    }
  });
}

}  // namespace

bool sparse_internal::CheckDenseSparse(const char* op, const Tensor& a, DType b_dtype,
                                       DTypeSet dtypes, Device device, int64_t k, int64_t n,
                                       const Tensor* c) {
  CheckOperands(op, b_dtype, dtypes, device, a, c);
  const std::vector<int64_t> ad = a.Dims(), cd = c->Dims();
  TK_CHECK(ad.size() == 1 || ad.size() == 2, kShapeMismatch, op,
           ": a must be [M, K] or [K], got dims ", ShapeString(ad));
  const bool vec = ad.size() == 1;
  TK_CHECK(ad.back() == k, kShapeMismatch, op, ": a has dims ", ShapeString(ad), " but b is [", k,
           " ", n, "]; a's last dim must be ", k);
  const std::vector<int64_t> want = vec ? std::vector<int64_t>{n} : std::vector<int64_t>{ad[0], n};
  TK_CHECK(cd == want, kShapeMismatch, op, ": c has dims ", ShapeString(cd), " but a ",
           ShapeString(ad), " @ b [", k, " ", n, "] gives ", ShapeString(want));
  return vec;
}

void SparseDenseProduct(Scalar alpha, Scalar beta, const CsrMatrix& a, const Tensor& b, Tensor* c) {
  const char* op = "SparseDenseProduct";
  if (OnCuda(a)) return sparse_cuda::SparseDenseProduct(op, alpha, beta, a, b, c);
  si::CheckCreated(a, op);
  RunSparseDense(op, alpha, beta, a.row_ptr().data<int64_t>(), a.col_indices().data<int64_t>(),
                 a.values(), /*batched=*/false, 1, a.rows(), a.cols(), b, c, &a);
}

void SparseDenseProduct(Scalar alpha, Scalar beta, const SparseTensor& a, const Tensor& b,
                        Tensor* c) {
  const char* op = "SparseDenseProduct";
  TK_CHECK(a.rank() == 2 || a.rank() == 3, kShapeMismatch, op,
           ": a must be [M, K] or [B, M, K], got shape ", ShapeString(a.shape()));
  if (OnCuda(a)) return sparse_cuda::SparseDenseProduct(op, alpha, beta, a, b, c);
  if (a.rank() == 2) {
    si::CheckCreated(a, op);
    DenseView bv{}, cv{};
    const int64_t n =
        DenseOperands(op, a.dtype(), false, 1, a.shape()[0], a.shape()[1], b, c, &bv, &cv);
    const int64_t chunks = DirectCooChunks(a.nnz(), a.shape()[0], n);
    if (chunks > 0) {
      Dispatch<kProductDTypes>(a.dtype(), op, [&]<typename T>() {
        DirectCooProduct<T>(a, bv, cv, n, chunks, alpha, beta, op);
      });
      return;
    }
    // One-off CSR arrays: an int32 column copy would not pay for itself.
    const si::Compressed csr = si::CompressSparse(a, 0, op);
    RunSparseDense(op, alpha, beta, csr.ptr.data<int64_t>(), csr.minor.data<int64_t>(), csr.values,
                   /*batched=*/false, 1, a.shape()[0], a.shape()[1], b, c);
    return;
  }
  // Batched: compress by the row key batch * M + m, columns by k.
  si::CheckIndexBounds(a, op);
  const int64_t batches = a.shape()[0], m = a.shape()[1], k = a.shape()[2];
  const int64_t nnz = a.nnz();
  TK_CHECK(batches == 0 || m <= INT64_MAX / batches, kOutOfRange, op, ": ", batches, " x ", m,
           " rows overflow int64");
  Tensor row_key = Tensor::Empty({nnz}, DType::kInt64);
  si::Compressed csr;
  if (nnz > 0) {
    const int64_t* idx = a.indices().data<int64_t>();
    const int64_t s0 = a.indices().Stride(0), s1 = a.indices().Stride(1);
    int64_t* key = row_key.data<int64_t>();
    ParallelFor(0, nnz, GrainFor(24), [&](int64_t b0, int64_t e0) {
      for (int64_t e = b0; e < e0; ++e) key[e] = idx[e * s0] * m + idx[e * s0 + s1];
    });
    csr = si::Compress({key, 1}, {idx + 2 * s1, s0}, nnz, batches * m, a.values());
  } else {
    csr.ptr = Tensor::Zeros({batches * m + 1}, DType::kInt64);
    csr.minor = Tensor::Empty({0}, DType::kInt64);
    csr.values = Tensor::Empty({0}, a.dtype());
  }
  RunSparseDense(op, alpha, beta, csr.ptr.data<int64_t>(), csr.minor.data<int64_t>(), csr.values,
                 /*batched=*/true, batches, m, k, b, c);
}

void DenseSparseProduct(Scalar alpha, Scalar beta, const Tensor& a, const CsrMatrix& b, Tensor* c) {
  const char* op = "DenseSparseProduct";
  if (OnCuda(b)) return sparse_cuda::DenseSparseProduct(op, alpha, beta, a, b, c);
  si::CheckCreated(b, op);
  const int64_t k = b.rows(), n = b.cols();
  const bool vec = si::CheckDenseSparse(op, a, b.dtype(), kProductDTypes, Device::Cpu(), k, n, c);
  const int64_t m = vec ? 1 : a.Dim(0);
  if (m == 0 || n == 0) return;
  DenseView av{a.raw_data(), 0, vec ? 0 : a.Stride(0), a.Stride(-1)};
  DenseView cv{c->raw_data(), 0, vec ? 0 : c->Stride(0), c->Stride(-1)};
  CsrView<int64_t> bv{b.row_ptr().data<int64_t>(),
                      b.col_indices().data<int64_t>(),
                      b.values().raw_data(),
                      k,
                      k,
                      b.nnz()};
  Dispatch<kProductDTypes>(
      b.dtype(), op, [&]<typename T>() { DenseSparseKernel<T>(av, m, k, bv, n, cv, alpha, beta); });
}

void DenseSparseProduct(Scalar alpha, Scalar beta, const Tensor& a, const SparseTensor& b,
                        Tensor* c) {
  const char* op = "DenseSparseProduct";
  TK_CHECK(b.rank() == 2, kShapeMismatch, op, ": b must be a 2-D sparse tensor, got shape ",
           ShapeString(b.shape()));
  if (OnCuda(b)) return sparse_cuda::DenseSparseProduct(op, alpha, beta, a, b, c);
  DenseSparseProduct(alpha, beta, a, si::CsrFromSparse(b, op), c);
}

}  // namespace tensorkit
