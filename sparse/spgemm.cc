// Sparse-sparse product (SpGEMM). Row-by-row Gustavson product with a dense accumulator: a
// symbolic pass counts each result row, a numeric pass fills it, sorted. Column sets are kept
// as a two-level bitmap (one bit per column, one bit per 64-column word), so a row comes out
// sorted by scanning set bits instead of sorting; short rows in wide matrices sort the list of
// touched words instead. Matrices wider than kMaxDenseCols (whose accumulators would not fit in
// cache-friendly memory) go to GraphBLAS's hash-based product.
//
// Determinism: every result entry sums its products in a fixed order (a's row order, then b's),
// independent of how rows are split across threads.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <memory>
#include <vector>

#include "tensorkit/common/parallel.h"
#include "tensorkit/dense/ops.h"
#include "tensorkit/dense/views.h"
#include "tensorkit/sparse/device_ops.h"
#include "tensorkit/sparse/internal.h"
#include "tensorkit/sparse/products.h"

namespace tensorkit {
namespace {

namespace si = sparse_internal;

// Widest b (columns) the dense accumulator serves: 4M columns = 32 MiB of float64 per task.
constexpr int64_t kMaxDenseCols = int64_t{1} << 22;

// Per-task workspace: accumulator, column bitmap, word bitmap and the list of touched words.
template <typename T>
struct Workspace {
  explicit Workspace(int64_t cols)
      : acc(new ComputeType<T>[static_cast<size_t>(cols)]),
        bits(static_cast<size_t>(cols / 64 + 1), 0),
        words(static_cast<size_t>(bits.size() / 64 + 1), 0),
        touched(bits.size()) {}
  std::unique_ptr<ComputeType<T>[]> acc;
  std::vector<uint64_t> bits;    // bit j: column j is in the current row
  std::vector<uint64_t> words;   // bit w: bits[w] != 0
  std::vector<int32_t> touched;  // indices w of the non-zero bits[] words, in discovery order
};

// The operands as raw arrays; column indices narrowed to 32 bits (cols <= kMaxDenseCols).
template <typename T>
struct Operand {
  explicit Operand(const CsrMatrix& m)
      : ptr(m.row_ptr().data<int64_t>()), col(m.col_indices32()), val(m.values().data<T>()) {}
  const int64_t* ptr;
  const int32_t* col;
  const T* val;
};

// How many entries of a ahead Scatter prefetches the row of b.
constexpr int64_t kPrefetch = 8;

// Marks the columns of row r of a @ b in `ws`; with kNumeric also accumulates the products.
// Returns the number of distinct columns and sets *num_words to the number of touched words.
template <typename T, bool kNumeric>
int64_t Scatter(const Operand<T>& a, const Operand<T>& b, int64_t r, int64_t a_limit,
                Workspace<T>* ws, int64_t* num_words) {
  uint64_t* bits = ws->bits.data();
  uint64_t* words = ws->words.data();
  int32_t* touched = ws->touched.data();
  ComputeType<T>* acc = ws->acc.get();
  int64_t n = 0, nw = 0;
  const int64_t a_end = a.ptr[r + 1];
  for (int64_t p = a.ptr[r]; p < a_end; ++p) {
    const int32_t k = a.col[p];
    // b's rows are scattered: fetch the one kPrefetch entries ahead (possibly in a later row of
    // a; a_limit bounds it to a's entries) while this one is processed.
    if (p + kPrefetch < a_limit) {
      const int64_t q = b.ptr[a.col[p + kPrefetch]];
      __builtin_prefetch(b.col + q);
      if constexpr (kNumeric) __builtin_prefetch(b.val + q);
    }
    [[maybe_unused]] const ComputeType<T> av =
        kNumeric ? static_cast<ComputeType<T>>(a.val[p]) : ComputeType<T>{};
    for (int64_t q = b.ptr[k]; q < b.ptr[k + 1]; ++q) {
      const int32_t j = b.col[q];
      const int32_t w = j >> 6;
      const uint64_t m = uint64_t{1} << (j & 63);
      const uint64_t old = bits[w];
      if (!(old & m)) {
        if (old == 0) {
          words[w >> 6] |= uint64_t{1} << (w & 63);
          touched[nw++] = w;
        }
        bits[w] = old | m;
        ++n;
        if constexpr (kNumeric) acc[j] = MulW(av, static_cast<ComputeType<T>>(b.val[q]));
      } else if constexpr (kNumeric) {
        acc[j] = AddW(acc[j], MulW(av, static_cast<ComputeType<T>>(b.val[q])));
      }
    }
  }
  *num_words = nw;
  return n;
}

// Clears the bitmaps after a symbolic row.
template <typename T>
void Clear(Workspace<T>* ws, int64_t num_words) {
  for (int64_t i = 0; i < num_words; ++i) {
    const int32_t w = ws->touched[i];
    ws->bits[w] = 0;
    ws->words[w >> 6] = 0;
  }
}

// Writes the marked columns in increasing order with their sums to col/val, clearing the
// bitmaps. Rows with many touched words scan the word bitmap; the others sort the touched list.
template <typename T>
void Gather(Workspace<T>* ws, int64_t num_words, int64_t* col, T* val) {
  uint64_t* bits = ws->bits.data();
  uint64_t* words = ws->words.data();
  const ComputeType<T>* acc = ws->acc.get();
  int64_t out = 0;
  auto emit_word = [&](int64_t w) {
    for (uint64_t m = bits[w]; m != 0; m &= m - 1) {
      const int64_t j = w * 64 + std::countr_zero(m);
      col[out] = j;
      val[out++] = static_cast<T>(acc[j]);
    }
    bits[w] = 0;
  };
  const int64_t scan_cost = static_cast<int64_t>(ws->words.size());
  const int64_t sort_cost = num_words * (std::bit_width(static_cast<uint64_t>(num_words)) + 1);
  if (sort_cost < scan_cost) {
    int32_t* t = ws->touched.data();
    std::sort(t, t + num_words);
    for (int64_t i = 0; i < num_words; ++i) {
      emit_word(t[i]);
      words[t[i] >> 6] = 0;
    }
    return;
  }
  for (int64_t x = 0; x < scan_cost; ++x) {
    for (uint64_t m = words[x]; m != 0; m &= m - 1) emit_word(x * 64 + std::countr_zero(m));
    words[x] = 0;
  }
}

// Row blocks of roughly equal work (products), so that tasks balance on skewed rows.
std::vector<int64_t> BlocksByWork(const int64_t* a_ptr, const int32_t* a_col, const int64_t* b_ptr,
                                  int64_t rows) {
  std::vector<int64_t> work(static_cast<size_t>(rows) + 1, 0);
  ParallelFor(0, rows, GrainFor(64), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      int64_t w = 1;  // an empty row still costs a visit
      for (int64_t p = a_ptr[r]; p < a_ptr[r + 1]; ++p) w += b_ptr[a_col[p] + 1] - b_ptr[a_col[p]];
      work[r + 1] = w;
    }
  });
  for (int64_t r = 0; r < rows; ++r) work[r + 1] += work[r];
  const int64_t target = std::max<int64_t>(work[rows] / (64 * GetNumThreads()), 16384);
  std::vector<int64_t> blocks{0};
  while (blocks.back() < rows) {
    const int64_t next =
        std::upper_bound(work.begin(), work.end(), work[blocks.back()] + target) - work.begin() - 1;
    blocks.push_back(std::clamp<int64_t>(next, blocks.back() + 1, rows));
  }
  return blocks;
}

// a @ b through the dense accumulator (b.cols() <= kMaxDenseCols); duplicates are summed.
template <typename T>
CsrMatrix GustavsonProduct(const CsrMatrix& a, const CsrMatrix& b) {
  const int64_t rows = a.rows(), cols = b.cols();
  const Operand<T> oa(a), ob(b);
  const std::vector<int64_t> blocks = BlocksByWork(oa.ptr, oa.col, ob.ptr, rows);
  const int64_t num_blocks = static_cast<int64_t>(blocks.size()) - 1;
  const int64_t a_limit = oa.ptr[rows];
  Tensor row_ptr = Tensor::Empty({rows + 1}, DType::kInt64);
  int64_t* ptr = row_ptr.data<int64_t>();
  ptr[0] = 0;
  ParallelFor(0, num_blocks, 1, [&](int64_t bb, int64_t be) {
    Workspace<T> ws(cols);
    for (int64_t r = blocks[bb]; r < blocks[be]; ++r) {
      int64_t num_words = 0;
      ptr[r + 1] = Scatter<T, false>(oa, ob, r, a_limit, &ws, &num_words);
      Clear(&ws, num_words);
    }
  });
  for (int64_t r = 0; r < rows; ++r) ptr[r + 1] += ptr[r];
  Tensor col = Tensor::Empty({ptr[rows]}, DType::kInt64);
  Tensor val = Tensor::Empty({ptr[rows]}, a.dtype());
  int64_t* c = col.data<int64_t>();
  T* v = val.data<T>();
  ParallelFor(0, num_blocks, 1, [&](int64_t bb, int64_t be) {
    Workspace<T> ws(cols);
    for (int64_t r = blocks[bb]; r < blocks[be]; ++r) {
      int64_t num_words = 0;
      const int64_t n = Scatter<T, true>(oa, ob, r, a_limit, &ws, &num_words);
      TK_INTERNAL_CHECK(n == ptr[r + 1] - ptr[r]);
      Gather(&ws, num_words, c + ptr[r], v + ptr[r]);
    }
  });
  return CsrMatrix::Create(row_ptr, col, val, {rows, cols});
}

// Checks the shapes ([M, K] and [K, N]) and dtypes of the operands before any work.
void CheckOperands(const std::vector<int64_t>& a_shape, const std::vector<int64_t>& b_shape,
                   DType a_dtype, DType b_dtype, const char* op) {
  TK_CHECK(a_shape.size() == 2 && b_shape.size() == 2, kShapeMismatch, op,
           ": needs 2-D sparse tensors, got shapes ", ShapeString(a_shape), " and ",
           ShapeString(b_shape));
  TK_CHECK(a_shape[1] == b_shape[0], kShapeMismatch, op, ": a is ", ShapeString(a_shape),
           " and b is ", ShapeString(b_shape), "; a's columns must equal b's rows");
  TK_CHECK(a_dtype == b_dtype, kDTypeMismatch, op, ": dtypes differ: ", DTypeName(a_dtype), " and ",
           DTypeName(b_dtype), "; convert the values of one operand");
  CheckDType<si::kSparseResultDTypes>(a_dtype, op);
}

}  // namespace

CsrMatrix SparseSparseProduct(const CsrMatrix& a, const CsrMatrix& b) {
  const char* op = "SparseSparseProduct";
  si::CheckCreated(a, op);
  si::CheckCreated(b, op);
  CheckSameDevice(a.device(), b.device(), op);
  CheckOperands(a.shape(), b.shape(), a.dtype(), b.dtype(), op);
  if (OnCuda(a)) return sparse_cuda::SparseSparseProduct(a, b, op);
  if (b.cols() > kMaxDenseCols || a.cols() > INT32_MAX) {
    return si::GraphBLASProduct(a, b);
  }
  return Dispatch<si::kSparseResultDTypes>(a.dtype(), op,
                                           [&]<typename T>() { return GustavsonProduct<T>(a, b); });
}

SparseTensor SparseSparseProduct(const SparseTensor& a, const SparseTensor& b) {
  const char* op = "SparseSparseProduct";
  CheckOperands(a.shape(), b.shape(), a.dtype(), b.dtype(), op);
  CheckSameDevice(a.device(), b.device(), op);
  return SparseSparseProduct(si::CsrFromSparse(a, op), si::CsrFromSparse(b, op)).ToSparse();
}

}  // namespace tensorkit
