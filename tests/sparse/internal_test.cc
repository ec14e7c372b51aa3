// The sparse primitives of sparse/internal.h, and that every caller reports a mistake through
// them in the same words.
#include "tensorkit/sparse/internal.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "spcompute_test_util.h"
#include "tensorkit/common/simd_path.h"
#include "tensorkit/tensorkit.h"
#include "test_util.h"

namespace tensorkit {
namespace {

namespace si = sparse_internal;
using spcompute_testing::RandomCoo;
using ::tensorkit::testing::AtThreadCounts;
using ::tensorkit::testing::ErrorOf;
using ::tensorkit::testing::ExpectError;
using ::tensorkit::testing::MakeSparse;

TEST(SparsePrimitives, FirstWhereAndFirstFailureFindTheFirstBadItem) {
  std::mt19937 rng(5);
  const int64_t n = 5 * kChunk + 123;
  for (int trial = 0; trial < 12; ++trial) {
    std::vector<uint8_t> bad(static_cast<size_t>(n), 0);
    const int marks = trial % 4;  // 0: nothing bad
    for (int k = 0; k < marks; ++k) bad[rng() % n] = 1;
    if (trial == 5) bad[kChunk] = 1;  // first item of a chunk
    if (trial == 6) bad[n - 1] = 1;   // the very last item
    const int64_t want = std::find(bad.begin(), bad.end(), 1) - bad.begin();
    const int64_t expected = want == n ? -1 : want;
    const auto got = AtThreadCounts({1, 2, 3}, [&] {
      return std::vector<int64_t>{FirstWhere(n, [&](int64_t i) { return bad[i] != 0; }),
                                  FirstWhere(
                                      n, [&](int64_t i) { return bad[i] != 0; }, 1000),
                                  FirstFailure(
                                      n,
                                      [&](int64_t b, int64_t e) {
                                        return std::none_of(bad.begin() + b, bad.begin() + e,
                                                            [](uint8_t x) { return x; });
                                      },
                                      [&](int64_t i) { return bad[i] != 0; })};
    });
    for (const auto& g : got) EXPECT_EQ(g, (std::vector<int64_t>(3, expected))) << trial;
  }
  EXPECT_EQ(FirstWhere(0, [](int64_t) { return true; }), -1);
}

TEST(SparsePrimitives, SortSlicesIsAStableSortOfEachSlice) {
  std::mt19937_64 rng(6);
  // Short slices (insertion), long ones (packed keys) and minor keys past 2^32 (the fallback).
  for (int64_t top : {int64_t{7}, int64_t{1} << 20, int64_t{1} << 40}) {
    std::vector<int64_t> ptr{0};
    for (int64_t len : {0, 1, 5, 32, 33, 200, 3000, 2}) ptr.push_back(ptr.back() + len);
    const int64_t nnz = ptr.back();
    std::vector<int64_t> minor(static_cast<size_t>(nnz));
    std::vector<int32_t> values(static_cast<size_t>(nnz));
    for (int64_t i = 0; i < nnz; ++i) {
      minor[i] = static_cast<int64_t>(rng() % static_cast<uint64_t>(top));
      values[i] = static_cast<int32_t>(i);  // the input position: shows stability
    }
    std::vector<int64_t> want_minor = minor;
    std::vector<int32_t> want_values = values;
    for (size_t r = 0; r + 1 < ptr.size(); ++r) {
      std::vector<int64_t> perm(static_cast<size_t>(ptr[r + 1] - ptr[r]));
      std::iota(perm.begin(), perm.end(), ptr[r]);
      std::stable_sort(perm.begin(), perm.end(),
                       [&](int64_t x, int64_t y) { return minor[x] < minor[y]; });
      for (size_t k = 0; k < perm.size(); ++k) {
        want_minor[ptr[r] + k] = minor[perm[k]];
        want_values[ptr[r] + k] = values[perm[k]];
      }
    }
    si::SortSlices<int32_t>(ptr.data(), static_cast<int64_t>(ptr.size()) - 1, minor.data(),
                            values.data());
    EXPECT_EQ(minor, want_minor) << top;
    EXPECT_EQ(values, want_values) << top;
  }
}

TEST(SparsePrimitives, GatherValuesReadsStridedValuesAndMovesStrings) {
  Tensor base = Tensor::FromVector(std::vector<float>{0, 1, 2, 3, 4, 5}, {3, 2});
  Tensor column = Select(base, 1, 1);  // {1, 3, 5}, stride 2
  const std::vector<int64_t> perm{2, 0, 0, 1};
  EXPECT_EQ(si::GatherValues(column, perm.data(), 4).ToVector<float>(),
            (std::vector<float>{5, 1, 1, 3}));
  Tensor s = Tensor::FromVector(std::vector<std::string>{"a", "b"});
  const std::vector<int64_t> swap{1, 0};
  EXPECT_EQ(si::GatherValues(s, swap.data(), 2, /*may_move=*/false).ToVector<std::string>(),
            (std::vector<std::string>{"b", "a"}));
  EXPECT_EQ(s.ToVector<std::string>(), (std::vector<std::string>{"a", "b"}));
}

// Every operation that meets an index outside the shape says so in the one message.
TEST(SparsePrimitives, OneBoundsMessageForEveryOperation) {
  const SparseTensor st = MakeSparse<float>({0, 1, 1, 7, 2, 0}, {1, 2, 3}, {3, 5});
  const std::string what = ": entry 1 at [1 7] is out of bounds for shape [3 5] (axis 1: 7 >= 5)";
  auto expect = [&](const char* op, auto&& call) {
    ExpectError(call, ErrorCode::kOutOfRange, {std::string(op) + what});
  };
  Tensor dense = Tensor::Zeros({5, 2}, DType::kFloat32),
         out = Tensor::Zeros({3, 2}, DType::kFloat32);
  expect("ValidateIndices", [&] { st.ValidateIndices(); });
  expect("Reorder", [&] { SparseTensor(st).Reorder({1, 0}); });
  expect("Coalesce", [&] { SparseTensor(st).Coalesce(); });
  expect("ToDense", [&] { st.ToDense(); });
  expect("CsrMatrix::FromSparse", [&] { CsrMatrix::FromSparse(st); });
  expect("CscMatrix::FromSparse", [&] { CscMatrix::FromSparse(st); });
  expect("ReduceSum", [&] { ReduceSum(st, {0}); });
  expect("ReduceMaxSparse", [&] { ReduceMaxSparse(st, {1}); });
  expect("RowNnz", [&] { RowNnz(st, 0); });
  expect("SparseDenseProduct", [&] { SparseDenseProduct(1, 0, st, dense, &out); });
  expect("SparseSparseProduct", [&] {
    SparseSparseProduct(st, MakeSparse<float>({0, 0}, {1}, {5, 2}));
  });
  expect("SparseAdd", [&] { SparseAdd(st, st); });
  expect("Mul", [&] { Mul(st, Tensor::Zeros({5}, DType::kFloat32)); });
  expect("Split", [&] { Split(st, 1, 5); });
}

// Every operation on a default-constructed SparseTensor says so in the one message.
TEST(SparsePrimitives, OneMessageForAnEmptySparseTensor) {
  const SparseTensor empty;
  const std::string what =
      "the SparseTensor is empty (default-constructed); make one with SparseTensor::Create or "
      "SparseTensor::FromDense";
  auto expect = [&](auto&& call) { ExpectError(call, ErrorCode::kInvalidArgument, {what}); };
  expect([&] { empty.ValidateIndices(); });
  expect([&] { SparseTensor(empty).Reorder({}); });
  expect([&] { empty.ToDense(); });
  expect([&] { empty.To(Device::Cpu()); });
  expect([&] { Slice(empty, {}, {}); });
  expect([&] { Split(empty, 0, 2); });
  expect([&] { Permute(empty, {}); });
  expect([&] { Transpose(empty, 0, 1); });
  expect([&] { SparseTensor::Concat({empty}, 0); });
  expect([&] { ReduceSum(empty, {}); });
  expect([&] { CsrMatrix::FromSparse(empty); });
}

// Sparse and dense Split (and Transpose) report an axis mistake identically (NormalizeAxis).
TEST(SparsePrimitives, AxisMistakesAreReportedLikeTheDenseOnes) {
  const SparseTensor st = MakeSparse<float>({0, 1}, {1}, {3, 5});
  const Tensor dense = Tensor::Zeros({3, 5}, DType::kFloat32);
  for (int axis : {2, -3, 7}) {
    std::string sparse_msg, dense_msg;
    ErrorCode sparse_code{}, dense_code{};
    try {
      Split(st, axis, 1);
    } catch (const Error& e) {
      sparse_msg = e.what();
      sparse_code = e.code();
    }
    try {
      Split(dense, axis, {5});
    } catch (const Error& e) {
      dense_msg = e.what();
      dense_code = e.code();
    }
    EXPECT_EQ(sparse_code, ErrorCode::kOutOfRange);
    EXPECT_EQ(sparse_code, dense_code);
    EXPECT_EQ(sparse_msg, dense_msg);
  }
  ExpectError([&] { Transpose(st, 0, 2); }, ErrorCode::kOutOfRange, {"Transpose: axis 2"});
  ExpectError([&] { SparseTensor::Concat({st}, 3); }, ErrorCode::kOutOfRange, {"Concat: axis 3"});
}

// Split makes every piece from one grouping pass: random sizes (zeros included) and many
// pieces give the entries a naive filter gives, in input order, shifted.
TEST(SparsePrimitives, SplitPiecesMatchANaiveFilter) {
  std::mt19937 rng(8);
  for (int trial = 0; trial < 6; ++trial) {
    const int64_t dim = 1 + rng() % 300;
    SparseTensor st = RandomCoo<int32_t>(rng, {dim, 4}, 400);
    std::vector<int64_t> sizes;
    for (int64_t left = dim; left > 0;) {
      const int64_t s = std::min<int64_t>(left, rng() % 5);  // 0 to 4: empty pieces too
      sizes.push_back(s);
      left -= s;
    }
    const std::vector<SparseTensor> pieces =
        trial % 2 ? Split(st, 0, sizes) : Split(st, 0, static_cast<int64_t>(sizes.size()));
    if (trial % 2 == 0) {  // the num overload: first dim % num pieces one longer
      const int64_t num = static_cast<int64_t>(sizes.size());
      for (int64_t p = 0; p < num; ++p) sizes[p] = dim / num + (p < dim % num ? 1 : 0);
    }
    ASSERT_EQ(pieces.size(), sizes.size());
    const std::vector<int64_t> rows = st.indices().ToVector<int64_t>();
    const std::vector<int32_t> vals = st.values().ToVector<int32_t>();
    int64_t lo = 0;
    for (size_t p = 0; p < sizes.size(); ++p) {
      std::vector<int64_t> want_rows;
      std::vector<int32_t> want_vals;
      for (int64_t e = 0; e < st.nnz(); ++e) {
        if (rows[2 * e] < lo || rows[2 * e] >= lo + sizes[p]) continue;
        want_rows.insert(want_rows.end(), {rows[2 * e] - lo, rows[2 * e + 1]});
        want_vals.push_back(vals[e]);
      }
      EXPECT_EQ(pieces[p].shape(), (std::vector<int64_t>{sizes[p], 4}));
      EXPECT_EQ(pieces[p].indices().ToVector<int64_t>(), want_rows) << trial << " " << p;
      EXPECT_EQ(pieces[p].values().ToVector<int32_t>(), want_vals) << trial << " " << p;
      lo += sizes[p];
    }
  }
  // Far more pieces than entries.
  SparseTensor few = MakeSparse<float>({99999, 0, 3, 1}, {1, 2}, {100000, 2});
  const std::vector<SparseTensor> pieces = Split(few, 0, int64_t{100000});
  ASSERT_EQ(pieces.size(), 100000u);
  EXPECT_EQ(pieces[99999].nnz(), 1);
  EXPECT_EQ(pieces[3].nnz(), 1);
  EXPECT_EQ(pieces[3].indices().ToVector<int64_t>(), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(pieces[4].nnz(), 0);
}

// Many entries (several fixed chunks), a middle axis, strings and numbers, at 1 to 3 threads:
// every piece holds the entries a naive filter gives, in input order, shifted.
TEST(SparsePrimitives, LargeSplitsMatchANaiveFilterAtAnyThreadCount) {
  std::mt19937 rng(10);
  const std::vector<int64_t> shape = {50, 1000, 7};
  const int64_t n = 200000;
  std::vector<int64_t> rows;
  std::vector<std::string> words;
  std::vector<float> numbers;
  for (int64_t e = 0; e < n; ++e) {
    for (int64_t d : shape) rows.push_back(static_cast<int64_t>(rng() % d));
    words.push_back("w" + std::to_string(e));
    numbers.push_back(static_cast<float>(e));
  }
  const SparseTensor text = MakeSparse<std::string>(rows, words, shape);
  const SparseTensor floats = MakeSparse<float>(rows, numbers, shape);
  for (const std::vector<int64_t>& sizes :
       {std::vector<int64_t>{250, 250, 250, 250}, std::vector<int64_t>{100, 0, 650, 250}}) {
    for (int threads : {1, 2, 3}) {
      SetNumThreads(threads);
      const bool even = sizes[1] != 0;
      const std::vector<SparseTensor> a = even ? Split(text, 1, int64_t{4}) : Split(text, 1, sizes);
      const std::vector<SparseTensor> b =
          even ? Split(floats, 1, int64_t{4}) : Split(floats, 1, sizes);
      int64_t lo = 0;
      for (size_t p = 0; p < sizes.size(); ++p) {
        std::vector<int64_t> want_rows;
        std::vector<std::string> want_words;
        std::vector<float> want_numbers;
        for (int64_t e = 0; e < n; ++e) {
          const int64_t v = rows[3 * e + 1];
          if (v < lo || v >= lo + sizes[p]) continue;
          want_rows.insert(want_rows.end(), {rows[3 * e], v - lo, rows[3 * e + 2]});
          want_words.push_back(words[e]);
          want_numbers.push_back(numbers[e]);
        }
        EXPECT_EQ(a[p].shape(), (std::vector<int64_t>{50, sizes[p], 7}));
        EXPECT_EQ(a[p].indices().ToVector<int64_t>(), want_rows) << threads << " " << p;
        EXPECT_EQ(a[p].values().ToVector<std::string>(), want_words) << threads << " " << p;
        EXPECT_EQ(b[p].indices().ToVector<int64_t>(), want_rows) << threads << " " << p;
        EXPECT_EQ(b[p].values().ToVector<float>(), want_numbers) << threads << " " << p;
        lo += sizes[p];
      }
    }
  }
  SetNumThreads(2);
  // An entry outside the split axis, in the last chunk: named.
  rows[3 * (n - 5) + 1] = 1000;
  const SparseTensor bad = MakeSparse<float>(rows, numbers, shape);
  ExpectError([&] { Split(bad, 1, int64_t{4}); }, {"Split", "entry 199995"});
}

TEST(SparsePrimitives, ToDeviceCopiesEveryArray) {
  std::mt19937 rng(9);
  const SparseTensor st = RandomCoo<double>(rng, {6, 7}, 20, true, {});
  const SparseTensor copy = st.To(Device::Cpu());
  EXPECT_FALSE(SharesStorage(copy.indices(), st.indices()));
  EXPECT_FALSE(SharesStorage(copy.values(), st.values()));
  EXPECT_EQ(copy.indices().ToVector<int64_t>(), st.indices().ToVector<int64_t>());
  EXPECT_EQ(copy.values().ToVector<double>(), st.values().ToVector<double>());
  EXPECT_EQ(copy.shape(), st.shape());
  EXPECT_EQ(copy.order(), st.order());
  const CsrMatrix csr = CsrMatrix::FromSparse(st);
  const CsrMatrix csr2 = csr.To(Device::Cpu());
  EXPECT_FALSE(SharesStorage(csr2.row_ptr(), csr.row_ptr()));
  EXPECT_EQ(csr2.row_ptr().ToVector<int64_t>(), csr.row_ptr().ToVector<int64_t>());
  EXPECT_EQ(csr2.col_indices().ToVector<int64_t>(), csr.col_indices().ToVector<int64_t>());
  EXPECT_EQ(csr2.values().ToVector<double>(), csr.values().ToVector<double>());
  EXPECT_EQ(csr2.shape(), csr.shape());
  csr2.Validate();
  const CscMatrix csc = CscMatrix::FromSparse(st);
  const CscMatrix csc2 = csc.To(Device::Cpu());
  EXPECT_FALSE(SharesStorage(csc2.col_ptr(), csc.col_ptr()));
  EXPECT_EQ(csc2.col_ptr().ToVector<int64_t>(), csc.col_ptr().ToVector<int64_t>());
  EXPECT_EQ(csc2.row_indices().ToVector<int64_t>(), csc.row_indices().ToVector<int64_t>());
  EXPECT_EQ(csc2.ToSparse().values().ToVector<double>(),
            csc.ToSparse().values().ToVector<double>());
  // An empty matrix names what makes one.
  ExpectError([] { CsrMatrix().ToSparse(); }, ErrorCode::kInvalidArgument,
              {"CsrMatrix::ToSparse", "CsrMatrix::Create or CsrMatrix::FromSparse"});
}

TEST(SparsePrimitives, ToDeviceOnAGpuAndBack) {
  if (CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device visible";
  const Device gpu = Device::Cuda(0);
  std::mt19937 rng(10);
  const SparseTensor st = RandomCoo<float>(rng, {5, 9}, 30, true, {});
  const SparseTensor dev = st.To(gpu);
  EXPECT_EQ(dev.device(), gpu);
  EXPECT_EQ(dev.To(Device::Cpu()).indices().ToVector<int64_t>(), st.indices().ToVector<int64_t>());
  const CsrMatrix csr = CsrMatrix::FromSparse(st).To(gpu);
  EXPECT_EQ(csr.device(), gpu);
  Tensor x = Tensor::Zeros({9}, DType::kFloat32), y = Tensor::Zeros({5}, DType::kFloat32);
  ExpectError([&] { SparseDenseProduct(1, 0, csr, x, &y); }, ErrorCode::kUnsupported,
              {"CsrMatrix::To(Device::Cpu())"});
  ExpectError([&] { SparseDenseProduct(1, 0, dev, x, &y); }, ErrorCode::kUnsupported,
              {"SparseTensor::To(Device::Cpu())"});
  const CsrMatrix back = csr.To(Device::Cpu());
  SparseDenseProduct(1, 0, back, x, &y);
  EXPECT_EQ(back.col_indices().ToVector<int64_t>(),
            CsrMatrix::FromSparse(st).col_indices().ToVector<int64_t>());
}

// Threads of this process, from /proc (0 where /proc is missing).
int ProcessThreads() {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    if (key == "Threads:") {
      int n = 0;
      status >> n;
      return n;
    }
  }
  return 0;
}

// GraphBLAS (OpenMP) gets one thread inside oneTBB tasks: the same result, no new threads.
TEST(SparsePrimitives, GraphBLASInsideParallelRegionsUsesOneThread) {
  struct Restore {
    int saved = GetNumThreads();
    ~Restore() { SetNumThreads(saved); }
  } restore;
  SetNumThreads(4);
  EXPECT_FALSE(InParallelRegion());
  EXPECT_EQ(ForeignPoolThreads(), 4);
  std::mt19937 rng(11);
  const SparseTensor a = RandomCoo<double>(rng, {3000, 3000}, 300000, false);
  const SparseTensor b = RandomCoo<double>(rng, {3000, 3000}, 300000, false);
  const SparseTensor want = SparseAdd(a, b);  // outside: GraphBLAS may use 4 threads
  constexpr int kTasks = 6;
  std::vector<SparseTensor> got(kTasks);
  std::atomic<int> inside_threads{0}, max_threads{0};
  ParallelFor(0, kTasks, 1, [&](int64_t, int64_t) {});  // start oneTBB's workers
  const int before = ProcessThreads();
  ParallelFor(0, kTasks, 1, [&](int64_t tb, int64_t te) {
    for (int64_t t = tb; t < te; ++t) {
      if (InParallelRegion() && ForeignPoolThreads() == 1) inside_threads.fetch_add(1);
      got[t] = SparseAdd(a, b);
      int seen = ProcessThreads(), m = max_threads.load();
      while (seen > m && !max_threads.compare_exchange_weak(m, seen)) {
      }
    }
  });
  EXPECT_EQ(inside_threads.load(), kTasks);
  for (const SparseTensor& g : got) {
    EXPECT_EQ(g.indices().ToVector<int64_t>(), want.indices().ToVector<int64_t>());
    EXPECT_EQ(g.values().ToVector<double>(), want.values().ToVector<double>());
  }
  // OpenMP makes a team for every thread that opens a parallel region with more than one
  // thread: a oneTBB worker asking for 4 would add 3 threads. oneTBB itself may still wake a
  // worker it had not started.
  if (before > 0) {
    EXPECT_LE(max_threads.load() - before, 1) << "threads before: " << before;
  }
}

// The SpMM loops follow the one SimdPath switch; every path gives the same bits.
TEST(SparsePrimitives, SpmmIsBitIdenticalOnEverySimdPath) {
  std::mt19937 rng(12);
  const CsrMatrix a = CsrMatrix::FromSparse(RandomCoo<float>(rng, {300, 200}, 5000));
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> bv(200 * 24);
  for (float& v : bv) v = u(rng);
  const Tensor b = Tensor::FromVector(bv, {200, 24});
  const SimdPath saved = ActiveSimdPath();
  std::vector<std::vector<float>> results;
  for (SimdPath path : {SimdPath::kDefault, SimdPath::kAvx2, SimdPath::kAvx512}) {
    if (!SimdPathSupported(path)) continue;
    SetSimdPathForTesting(path);
    Tensor c = Tensor::Zeros({300, 24}, DType::kFloat32);
    SparseDenseProduct(1.5, 0, a, b, &c);
    results.push_back(c.ToVector<float>());
  }
  SetSimdPathForTesting(saved);
  for (const auto& r : results) EXPECT_EQ(r, results[0]);
}

}  // namespace
}  // namespace tensorkit
