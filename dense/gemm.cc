// The CPU GEMM backend: BLIS 0.9 (Debian's libblis-dev) through its typed "expert" interface,
// driven by oneTBB: C is cut into a fixed grid of tiles and every tile is one single-threaded
// BLIS call in a ParallelFor task.
//
// Why BLIS. Candidates from Debian bookworm: OpenBLAS 0.3.21 (pthreads, DYNAMIC_ARCH), BLIS 0.9.0
// (the "x86_64" family: every x86 sub-configuration in one library), oneDNN 2.6.3 (dnnl_sgemm).
//   - CPU dispatch. OpenBLAS picks kernels from a table of CPU models; a model the table does not
//     know falls back to old kernels, and the only correction is the environment variable
//     OPENBLAS_CORETYPE, read once by the library's constructor before any code of ours can run.
//     BLIS picks its sub-configuration at its first call from cpuid, and honours BLIS_ARCH_TYPE
//     read at that moment, so the choice can still be ours (see ChooseKernels below).
//   - Which kernels. BLIS 0.9 maps an Intel AVX-512 part to "skx" only when it can tell from the
//     brand string that the core has two AVX-512 FMA units; for a generic brand string ("Intel(R)
//     Xeon(R) Processor", as virtual machines report) it takes "haswell" (AVX2), which halves
//     sgemm. So whenever the CPU and OS support AVX-512 F/DQ/BW/VL, tensorkit asks for skx,
//     whatever the vendor: on AMD Zen 4 BLIS 0.9 would take its AVX2 "zen3" kernels, and AVX-512
//     kernels (OpenBLAS's SkylakeX ones) measured as fast as those there, while AMD's own BLIS
//     uses AVX-512 kernels on Zen 4. Without AVX-512, BLIS's own choice stands (zen3, haswell).
//     A BLIS_ARCH_TYPE the user set always wins. BackendName() says what was chosen and why.
//   - Threads. OpenBLAS and oneDNN have one process-wide thread count (openblas_set_num_threads,
//     OpenMP's) and pools of their own that would compete with oneTBB's workers. BLIS takes a
//     runtime object per call (rntm_t): we ask for 1 thread and run the tiles as oneTBB tasks,
//     so GetNumThreads() is the only knob, nested calls (from a ParallelFor body) just add tasks,
//     and no OpenMP team ever spins next to oneTBB. A barrier-free split also degrades gracefully
//     when another process takes a core away (bench/gemm_bench.cc measures both).
//   - Determinism. The tile grid depends on m, n, k and the machine's core count only, and k is
//     never split, so every element of C comes from the same call and summation at any thread
//     count (tests/dense/gemm_test.cc checks bit equality at 1, 2 and 3 threads). oneDNN's
//     sgemm may split k across threads; it also has no float64 GEMM.
//   - Symbols. bli_sgemm_ex/bli_dgemm_ex are names only BLIS defines, so a process that also
//     loads OpenBLAS (NumPy, SuiteSparse) cannot bind our calls to the other library's cblas_*.
//   - 64-bit sizes. Debian's BLIS has 64-bit dim_t/inc_t, so int64 sizes need no splitting
//     (CheckFitsBackend guards 32-bit builds).
// Speed against the peers is measured by bench/gemm_bench.cc and bench/peers/gemm_peers.py.
#include "tensorkit/dense/gemm.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <thread>
#include <type_traits>

#include "tensorkit/common/error.h"
#include "tensorkit/common/parallel.h"
#include "tensorkit/common/simd_path.h"

// blis.h defines many macros; it comes last so that it cannot change our other headers.
#include <blis.h>

namespace tensorkit::gemm {
namespace {

// A product below this many flops is never cut into tiles, and a batch of them is grouped into
// oneTBB tasks of at least this much work.
constexpr double kMinTaskFlops = 2.0 * 128 * 128 * 128;
// Larger products are cut into tiles of C with edges between these (see TileEdge). Each tile
// packs its own panels of A and B, so smaller tiles cost more CPU time (bench/README.md).
constexpr int64_t kMinTileEdge = 256;
constexpr int64_t kMaxTileEdge = 1024;

double Flops(int64_t m, int64_t n, int64_t k) {
  return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
}

// Throws unless `v` fits BLIS's dim_t/inc_t (always true for 64-bit BLIS builds).
void CheckFitsBackend(const char* op, int64_t v) {
  if constexpr (sizeof(dim_t) < sizeof(int64_t) || sizeof(inc_t) < sizeof(int64_t)) {
    TK_CHECK(v <= std::numeric_limits<dim_t>::max() && v <= std::numeric_limits<inc_t>::max(),
             kUnsupported, op, ": size ", v, " exceeds the range of the BLIS build in use (",
             sizeof(dim_t) * 8, "-bit sizes); install a 64-bit BLIS or split the product");
  } else {
    (void)op, (void)v;
  }
}

// Checks sizes and leading dimensions the way cblas does for CblasRowMajor.
void CheckShapes(const char* op, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                 int64_t lda, int64_t ldb, int64_t ldc) {
  TK_CHECK(m >= 0 && n >= 0 && k >= 0, kInvalidArgument, op, ": sizes m=", m, " n=", n, " k=", k,
           " must be >= 0");
  // Row length of each stored operand (row-major): A is m x k or k x m, B is k x n or n x k.
  const int64_t row_a = std::max<int64_t>(1, trans_a ? m : k);
  const int64_t row_b = std::max<int64_t>(1, trans_b ? k : n);
  const int64_t row_c = std::max<int64_t>(1, n);
  TK_CHECK(lda >= row_a, kInvalidArgument, op, ": lda ", lda, " is less than ", row_a,
           ", the row length of A (", trans_a ? "k x m, transposed" : "m x k",
           "); pass lda >= that row length");
  TK_CHECK(ldb >= row_b, kInvalidArgument, op, ": ldb ", ldb, " is less than ", row_b,
           ", the row length of B (", trans_b ? "n x k, transposed" : "k x n",
           "); pass ldb >= that row length");
  TK_CHECK(ldc >= row_c, kInvalidArgument, op, ": ldc ", ldc, " is less than ", row_c,
           ", the row length of C (m x n); pass ldc >= n");
  for (int64_t v : {m, n, k, lda, ldb, ldc}) CheckFitsBackend(op, v);
}

// Checks that the operands a product will touch are not null.
void CheckPointers(const char* op, int64_t m, int64_t n, int64_t k, double alpha, const void* a,
                   const void* b, const void* c) {
  if (m == 0 || n == 0) return;
  TK_CHECK(c != nullptr, kInvalidArgument, op, ": C is null for a ", m, " x ", n, " product");
  if (k == 0 || alpha == 0) return;
  TK_CHECK(a != nullptr && b != nullptr, kInvalidArgument, op, ": ", a == nullptr ? "A" : "B",
           " is null for m=", m, " n=", n, " k=", k);
}

// Throws unless the byte offset of the last operand, (batch - 1) * stride elements, fits int64.
void CheckBatchStride(const char* what, int64_t stride, int64_t batch, int64_t elem_size) {
  int64_t elems = 0, bytes = 0;
  TK_CHECK(batch <= 1 || (!__builtin_mul_overflow(batch - 1, stride, &elems) &&
                          !__builtin_mul_overflow(elems, elem_size, &bytes)),
           kInvalidArgument, "GemmBatched: ", what, " ", stride, " times batch ", batch,
           " overflows int64; pass the real distance between operands");
}

// batch * per_item (rows or tiles of all products), or Error when it overflows int64.
int64_t CheckedProduct(int64_t batch, int64_t per_item) {
  int64_t total = 0;
  TK_CHECK(!__builtin_mul_overflow(batch, per_item, &total), kInvalidArgument,
           "GemmBatched: batch ", batch, " times ", per_item,
           " pieces of work per product overflows int64; split the batch");
  return total;
}

// How C of one product is cut into tiles: a function of m, n, k and the machine only, never of
// the thread count, so the backend sees the same sub-products (and rounds the same way) at any
// thread count.
struct TileGrid {
  int64_t tile_rows, tile_cols;  // of each tile but the last in its row/column
  int64_t row_tiles, col_tiles;
  int64_t count() const { return row_tiles * col_tiles; }
};

// ceil(a / b) for a >= 0, b > 0, without overflow.
int64_t CeilDiv(int64_t a, int64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

// The tile edge for an m x n C: about one tile per hardware thread, within [kMinTileEdge,
// kMaxTileEdge]. It depends on the machine (hardware_concurrency), never on SetNumThreads.
int64_t TileEdge(int64_t m, int64_t n) {
  static const double cores = std::max(1u, std::thread::hardware_concurrency());
  const double edge = std::sqrt(static_cast<double>(m) * static_cast<double>(n) / cores);
  return static_cast<int64_t>(std::clamp(edge, double{kMinTileEdge}, double{kMaxTileEdge}));
}

// Splits `extent` into about extent/edge equal parts whose size is a multiple of 16.
void SplitEdge(int64_t extent, int64_t edge, int64_t* size, int64_t* parts) {
  const int64_t want = std::max<int64_t>(1, extent / edge);
  *size = std::max<int64_t>(1, CeilDiv(extent, want));
  if (want > 1) *size = CeilDiv(*size, 16) * 16;
  *parts = std::max<int64_t>(1, CeilDiv(extent, *size));
}

TileGrid MakeTileGrid(int64_t m, int64_t n, int64_t k) {
  TileGrid g{std::max<int64_t>(m, 1), std::max<int64_t>(n, 1), 1, 1};
  if (Flops(m, n, k) < kMinTaskFlops) return g;
  const int64_t edge = TileEdge(m, n);
  SplitEdge(m, edge, &g.tile_rows, &g.row_tiles);
  SplitEdge(n, edge, &g.tile_cols, &g.col_tiles);
  return g;
}

// C = beta * C without reading C when beta == 0 (the product when k == 0 or alpha == 0).
template <typename T>
void ScaleC(int64_t m, int64_t n, T beta, T* c, int64_t ldc) {
  if (beta == T(1)) return;
  for (int64_t i = 0; i < m; ++i) {
    T* row = c + i * ldc;
    if (beta == T(0)) {
      std::fill(row, row + n, T(0));
    } else {
      for (int64_t j = 0; j < n; ++j) row[j] *= beta;
    }
  }
}

// The operands of one batch of products, typed, with sizes and pointers already checked.
template <typename T>
struct Problem {
  bool trans_a, trans_b;
  int64_t m, n, k;
  T alpha, beta;
  const T* a;
  int64_t lda, stride_a;
  const T* b;
  int64_t ldb, stride_b;
  T* c;
  int64_t ldc, stride_c;
};

// Rows [r0, r0+rows) and columns [c0, c0+cols) of C for product `item`, on the calling thread.
template <typename T>
void RunTile(const Problem<T>& p, int64_t item, int64_t r0, int64_t rows, int64_t c0,
             int64_t cols) {
  T* c = p.c + item * p.stride_c + r0 * p.ldc + c0;
  // op(A) rows r0.. and op(B) columns c0.. in BLIS's general-stride form: a transposed operand
  // just swaps its row and column strides.
  const T* a = p.a + item * p.stride_a + (p.trans_a ? r0 : r0 * p.lda);
  const T* b = p.b + item * p.stride_b + (p.trans_b ? c0 * p.ldb : c0);
  const inc_t rs_a = p.trans_a ? 1 : p.lda, cs_a = p.trans_a ? p.lda : 1;
  const inc_t rs_b = p.trans_b ? 1 : p.ldb, cs_b = p.trans_b ? p.ldb : 1;
  // One thread: the parallelism is ours (oneTBB tasks), so BLIS never starts an OpenMP team.
  rntm_t rntm = BLIS_RNTM_INITIALIZER;
  bli_rntm_set_num_threads(1, &rntm);
  T alpha = p.alpha, beta = p.beta;
  // BLIS takes non-const pointers but only reads A, B, alpha and beta.
  T* pa = const_cast<T*>(a);
  T* pb = const_cast<T*>(b);
  if constexpr (std::is_same_v<T, float>) {
    bli_sgemm_ex(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, rows, cols, p.k, &alpha, pa, rs_a, cs_a, pb,
                 rs_b, cs_b, &beta, c, p.ldc, 1, nullptr, &rntm);
  } else {
    bli_dgemm_ex(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, rows, cols, p.k, &alpha, pa, rs_a, cs_a, pb,
                 rs_b, cs_b, &beta, c, p.ldc, 1, nullptr, &rntm);
  }
}

// Every tile of every product, as oneTBB tasks; each tile is one single-threaded backend call.
template <typename T>
void RunBatch(const Problem<T>& p, int64_t batch) {
  if (batch == 0 || p.m == 0 || p.n == 0) return;
  if (p.k == 0 || p.alpha == T(0)) {  // C = beta * C, row by row
    const int64_t rows = CheckedProduct(batch, p.m);
    ParallelFor(0, rows, GrainFor(p.n * static_cast<int64_t>(sizeof(T))),
                [&](int64_t rb, int64_t re) {
                  for (int64_t r = rb; r < re; ++r) {
                    ScaleC(1, p.n, p.beta, p.c + (r / p.m) * p.stride_c + (r % p.m) * p.ldc, p.ldc);
                  }
                });
    return;
  }
  const TileGrid g = MakeTileGrid(p.m, p.n, p.k);
  const int64_t tiles = g.count();
  const int64_t total = CheckedProduct(batch, tiles);
  // Small products are grouped so that a task does at least kMinTaskFlops.
  const double tile_flops =
      std::max(1.0, Flops(g.tile_rows, g.tile_cols, std::max<int64_t>(p.k, 1)));
  const int64_t grain = std::max<int64_t>(1, static_cast<int64_t>(kMinTaskFlops / tile_flops));
  ParallelFor(0, total, grain, [&](int64_t tb, int64_t te) {
    for (int64_t t = tb; t < te; ++t) {
      const int64_t item = t / tiles, i = (t % tiles) / g.col_tiles, j = t % g.col_tiles;
      const int64_t r0 = i * g.tile_rows, c0 = j * g.tile_cols;
      RunTile(p, item, r0, std::min(g.tile_rows, p.m - r0), c0, std::min(g.tile_cols, p.n - c0));
    }
  });
}

constexpr DTypeSet kGemmDTypes = Bit(DType::kFloat32) | Bit(DType::kFloat64);

// Initialises BLIS with the sub-configuration tensorkit wants (see "Which kernels" above) and
// returns BackendName()'s text. Runs once, before the first BLIS call of the process that goes
// through tensorkit; BLIS reads BLIS_ARCH_TYPE only then, so it is set just for that moment.
std::string ChooseKernels() {
  std::string why = "BLIS's own choice";
  bool asked_skx = false;
#ifdef BLIS_CONFIG_SKX
  const bool avx512 = SimdPathSupported(SimdPath::kAvx512);
  if (std::getenv("BLIS_ARCH_TYPE") != nullptr) {
    why = "BLIS_ARCH_TYPE set in the environment";
  } else if (avx512) {
    asked_skx = setenv("BLIS_ARCH_TYPE", std::to_string(BLIS_ARCH_SKX).c_str(), 0) == 0;
    why = "chosen by tensorkit: the CPU has AVX-512 F/DQ/BW/VL";
  } else {
    why = "BLIS's own choice: no AVX-512 F/DQ/BW/VL";
  }
#endif
  bli_init();
  if (asked_skx) {
    unsetenv("BLIS_ARCH_TYPE");  // child processes see the environment the user gave
    if (bli_arch_query_id() != BLIS_ARCH_SKX) {
      why = "BLIS was initialised before tensorkit could choose; BLIS_ARCH_TYPE=" +
            std::to_string(static_cast<int>(BLIS_ARCH_SKX)) + " gives its AVX-512 kernels";
    }
  }
  cntx_t* cntx = bli_gks_query_cntx();
  const auto block = [&](num_t dt, bszid_t id) {
    return std::to_string(static_cast<int64_t>(bli_cntx_get_blksz_def_dt(dt, id, cntx)));
  };
  return std::string("blis(") + bli_arch_string(bli_arch_query_id()) + "): " + why +
         "; sgemm micro-tile " + block(BLIS_FLOAT, BLIS_MR) + "x" + block(BLIS_FLOAT, BLIS_NR) +
         ", dgemm " + block(BLIS_DOUBLE, BLIS_MR) + "x" + block(BLIS_DOUBLE, BLIS_NR);
}

// BackendName()'s text; the first call initialises BLIS (thread-safe static initialisation).
const std::string& KernelChoice() {
  static const std::string name = ChooseKernels();
  return name;
}

}  // namespace

namespace {

// The body of Gemm and GemmBatched (a Gemm is a batch of one); `op` names the call in errors.
void CheckedGemm(const char* op, DType dtype, bool trans_a, bool trans_b, int64_t m, int64_t n,
                 int64_t k, double alpha, const void* a, int64_t lda, int64_t stride_a,
                 const void* b, int64_t ldb, int64_t stride_b, double beta, void* c, int64_t ldc,
                 int64_t stride_c, int64_t batch) {
  Dispatch<kGemmDTypes>(dtype, op, [&]<typename T>() {
    KernelChoice();  // BLIS must start with the kernels chosen for this CPU
    CheckShapes(op, trans_a, trans_b, m, n, k, lda, ldb, ldc);
    TK_CHECK(batch >= 0, kInvalidArgument, op, ": batch ", batch, " must be >= 0");
    if (batch == 0) return;
    CheckPointers(op, m, n, k, alpha, a, b, c);
    CheckBatchStride("stride_a", stride_a, batch, sizeof(T));
    CheckBatchStride("stride_b", stride_b, batch, sizeof(T));
    CheckBatchStride("stride_c", stride_c, batch, sizeof(T));
    TK_CHECK(stride_c != 0 || batch == 1 || m == 0 || n == 0, kInvalidArgument, op,
             ": stride_c is 0 for a batch of ", batch,
             ", so every product would write the same C; give each product its own C");
    const Problem<T> p{trans_a,
                       trans_b,
                       m,
                       n,
                       k,
                       static_cast<T>(alpha),
                       static_cast<T>(beta),
                       static_cast<const T*>(a),
                       lda,
                       stride_a,
                       static_cast<const T*>(b),
                       ldb,
                       stride_b,
                       static_cast<T*>(c),
                       ldc,
                       stride_c};
    RunBatch(p, batch);
  });
}

}  // namespace

void Gemm(DType dtype, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
          const void* a, int64_t lda, const void* b, int64_t ldb, double beta, void* c,
          int64_t ldc) {
  CheckedGemm("Gemm", dtype, trans_a, trans_b, m, n, k, alpha, a, lda, 0, b, ldb, 0, beta, c, ldc,
              0, 1);
}

void GemmBatched(DType dtype, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                 double alpha, const void* a, int64_t lda, int64_t stride_a, const void* b,
                 int64_t ldb, int64_t stride_b, double beta, void* c, int64_t ldc, int64_t stride_c,
                 int64_t batch) {
  CheckedGemm("GemmBatched", dtype, trans_a, trans_b, m, n, k, alpha, a, lda, stride_a, b, ldb,
              stride_b, beta, c, ldc, stride_c, batch);
}

const char* BackendName() { return KernelChoice().c_str(); }

}  // namespace tensorkit::gemm
