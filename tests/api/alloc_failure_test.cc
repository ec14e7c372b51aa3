// Public operations with each of their allocations failing in turn (alloc_failure_util.h): every
// failure is an Error(kResourceExhausted), leaves no CPU memory behind and leaves the outputs
// the op writes into unchanged, at one thread (every failure point in a fixed order) and at two
// (failures raised inside parallel tasks).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "api/alloc_failure_util.h"
#include "tensorkit/io/io.h"
#include "tensorkit/io/libsvm.h"
#include "tensorkit/io/tf_example.h"
#include "tensorkit/io/tfrecord.h"
#include "tensorkit/tensorkit.h"

namespace tensorkit {
namespace {

using testing::ExploreAllocationFailures;
using testing::FailureRun;

// A temporary folder removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/tk_alloc_fail.XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() { std::system(("rm -rf '" + path_ + "'").c_str()); }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

Tensor RandomFloats(std::vector<int64_t> dims, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = u(rng);
  return Tensor::FromVector(std::move(v), dims);
}

// A [rows, cols] COO with `nnz` random (possibly repeated) positions, unsorted.
SparseTensor RandomSparse(int64_t rows, int64_t cols, int64_t nnz, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<int64_t> idx;
  std::vector<float> vals;
  for (int64_t i = 0; i < nnz; ++i) {
    idx.push_back(static_cast<int64_t>(rng() % rows));
    idx.push_back(static_cast<int64_t>(rng() % cols));
    vals.push_back(static_cast<float>(rng() % 100) / 10.0f);
  }
  return SparseTensor::Create(Tensor::FromVector(std::move(idx), {nnz, 2}),
                              Tensor::FromVector(std::move(vals)), {rows, cols});
}

// Output buffers a host framework owns (here arrays), wrapped for the operation, as a
// TensorFlow kernel's are; the framework may refuse one.
class FrameworkBuffers : public OutputAllocator {
 public:
  Tensor Allocate(int, const std::vector<int64_t>& dims, DType dtype, Device device) override {
    if (alloc_fault::ShouldFail()) {
      Throw(ErrorCode::kResourceExhausted, "the host framework refused an output");
    }
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    // 8-byte elements hold any dtype the operations ask for.
    buffers_.push_back(std::make_unique<int64_t[]>(static_cast<size_t>(std::max<int64_t>(n, 1))));
    return WrapExternal(buffers_.back().get(), dims, {}, dtype, device);
  }
  void Commit() override { ++commits_; }
  // Runs op (which writes into these buffers): Commit once when it returns, never when it throws.
  template <typename Op>
  void Run(const Op& op) {
    try {
      op();
    } catch (...) {
      EXPECT_EQ(commits_, 0);
      throw;
    }
    EXPECT_EQ(commits_, 1);
  }

 private:
  int commits_ = 0;
  std::vector<std::unique_ptr<int64_t[]>> buffers_;
};

struct Case {
  std::string name;
  std::function<void()> op;
  std::vector<Tensor*> outputs = {};
};

// Runs every case at one and at two threads; returns the failure points tried.
int64_t RunCases(const std::vector<Case>& cases) {
  const int saved = GetNumThreads();
  int64_t points = 0;
  for (int threads : {1, 2}) {
    SetNumThreads(threads);
    for (const Case& c : cases) {
      const FailureRun run = ExploreAllocationFailures(
          c.name + " at " + std::to_string(threads) + " threads", c.op, c.outputs);
      EXPECT_EQ(run.successes, 1) << c.name;
      points += run.failure_points;
      if (threads == 1) {
        std::printf("  %-40s %3lld allocations\n", c.name.c_str(),
                    static_cast<long long>(run.failure_points));
      }
    }
  }
  SetNumThreads(saved);
  return points;
}

TEST(AllocationFailures, DenseOperations) {
  // Big enough that the parallel paths and the large-block cache are taken.
  const Tensor a = RandomFloats({300, 200}, 1);
  const Tensor b = RandomFloats({200, 300}, 2);
  const Tensor row = RandomFloats({1, 200}, 3);
  Tensor sums = Tensor::Zeros({1, 200}, DType::kFloat32);
  Tensor product = Tensor::Zeros({300, 1, 300}, DType::kFloat32);
  Tensor converted = Tensor::Zeros({300, 200}, DType::kFloat64);
  Tensor product_storage = RandomFloats({300, 300}, 14);
  Tensor product_t = Unsqueeze(Transpose(product_storage, 0, 1), 1);
  const std::vector<Case> cases = {
      {"Tensor::Zeros", [] { Tensor::Zeros({1 << 20}, DType::kFloat32); }},
      {"Tensor::FromVector",
       [] {
         Tensor::FromVector(std::vector<double>(5000, 1.5), {50, 100});
       }},
      {"Clone of a transposed view", [&] { Transpose(a, 0, 1).Clone(); }},
      {"Exp", [&] { Exp(a); }},
      {"Add with broadcasting", [&] { Add(a, row); }},
      {"Copy summing into a dim-1 output", [&] { Copy(a, &sums); }, {&sums}},
      {"Copy converting float32 to float64", [&] { Copy(a, &converted); }, {&converted}},
      {"AddProduct (GEMM)",
       [&] { AddProduct(1.0f, 0.0f, Unsqueeze(a, 2), Unsqueeze(b, 0), &product); },
       {&product}},
      {"AddProduct into a transposed output",
       [&] { AddProduct(1.0f, 1.0f, Unsqueeze(a, 2), Unsqueeze(b, 0), &product_t); },
       {&product_storage}},
      {"Exp summing into a dim-1 output", [&] { Exp(a, &sums); }, {&sums}},
      {"Concatenate",
       [&] {
         Concatenate({a, a, Slice(a, 0, 0, 100)}, 0);
       }},
      {"Split",
       [&] {
         Split(a, 1, {50, 150});
       }},
      {"CopyColumns", [&] { CopyColumns(a, 10, 190); }},
      {"Permute then Clone",
       [&] {
         Permute(Unsqueeze(a, 0), {2, 0, 1}).Clone();
       }},
  };
  const int64_t points = RunCases(cases);
  EXPECT_GT(points, static_cast<int64_t>(cases.size()));
  std::printf("dense: %zu operations, %lld failure points\n", cases.size(),
              static_cast<long long>(points));
}

TEST(AllocationFailures, SparseOperations) {
  const SparseTensor st = RandomSparse(500, 400, 20000, 4);
  SparseTensor sorted = st;
  sorted.Coalesce();
  const CsrMatrix csr = CsrMatrix::FromSparse(sorted);
  const Tensor dense_b = RandomFloats({400, 16}, 5);
  Tensor c = Tensor::Zeros({500, 16}, DType::kFloat32);
  Tensor dense_out = Tensor::Zeros({500, 400}, DType::kFloat32);
  const SparseTensor other = RandomSparse(400, 300, 5000, 6);
  const std::vector<Case> cases = {
      {"SparseTensor::Reorder",
       [&] {
         SparseTensor s = st;
         s.Reorder({1, 0});
       }},
      {"SparseTensor::Coalesce",
       [&] {
         SparseTensor s = st;
         s.Coalesce();
       }},
      {"ValidateIndices", [&] { sorted.ValidateIndices(); }},
      {"ToDense", [&] { st.ToDense(); }},
      {"ToDense into a tensor", [&] { sorted.ToDense(&dense_out, true); }, {&dense_out}},
      {"FromDense", [&] { SparseTensor::FromDense(sorted.ToDense()); }},
      {"Concat",
       [&] {
         SparseTensor::Concat({st, sorted, st}, 1);
       }},
      {"CsrMatrix::FromSparse", [&] { CsrMatrix::FromSparse(st); }},
      {"CscMatrix::FromSparse", [&] { CscMatrix::FromSparse(st); }},
      {"CsrMatrix::ToSparse", [&] { csr.ToSparse(); }},
      {"SparseDenseProduct (COO)", [&] { SparseDenseProduct(1.0f, 0.0f, st, dense_b, &c); }, {&c}},
      {"SparseDenseProduct (CSR)", [&] { SparseDenseProduct(1.0f, 0.0f, csr, dense_b, &c); }, {&c}},
      {"SparseSparseProduct", [&] { SparseSparseProduct(sorted, other); }},
      {"ReduceSum", [&] { ReduceSum(st, {0}); }},
      {"SparseTensor::group",
       [&] {
         SparseTensor s = sorted;
         double total = 0;
         for (const auto& g : s.group({0})) total += static_cast<double>(g.values().NumElements());
         EXPECT_GT(total, 0);
       }},
  };
  const int64_t points = RunCases(cases);
  EXPECT_GT(points, static_cast<int64_t>(cases.size()));
  std::printf("sparse: %zu operations, %lld failure points\n", cases.size(),
              static_cast<long long>(points));
}

TEST(AllocationFailures, FeatureOperations) {
  std::mt19937 rng(7);
  std::vector<int64_t> lengths, ids;
  for (int b = 0; b < 300; ++b) {
    lengths.push_back(static_cast<int64_t>(rng() % 9));
    for (int64_t j = 0; j < lengths.back(); ++j) ids.push_back(static_cast<int64_t>(rng() % 1000));
  }
  const JaggedTensor jagged =
      JaggedTensor::FromLengths(Tensor::FromVector(ids), Tensor::FromVector(lengths));
  const Tensor table = RandomFloats({1000, 32}, 8);
  const int64_t n = static_cast<int64_t>(ids.size());
  std::vector<int64_t> kjt_lengths = lengths;
  kjt_lengths.insert(kjt_lengths.end(), lengths.begin(), lengths.end());
  std::vector<int64_t> kjt_values = ids;
  kjt_values.insert(kjt_values.end(), ids.begin(), ids.end());
  const KeyedJaggedTensor kjt({"a", "b"}, Tensor::FromVector(kjt_values),
                              Tensor::FromVector(kjt_lengths, {2, 300}));
  const SparseTensor var_len = jagged.ToSparse();
  SparseTensor with_empty_rows = RandomSparse(400, 8, 300, 9);
  with_empty_rows.Coalesce();
  const Tensor data = RandomFloats({n, 16}, 10);
  std::vector<int64_t> seg(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) seg[static_cast<size_t>(i)] = i / 3;
  const Tensor segment_ids = Tensor::FromVector(seg);
  const Tensor grad = RandomFloats({300, 32}, 11);
  const std::vector<Case> cases = {
      {"JaggedTensor::FromLengths",
       [&] { JaggedTensor::FromLengths(Tensor::FromVector(ids), Tensor::FromVector(lengths)); }},
      {"JaggedTensor::ToPadded", [&] { jagged.ToPadded(8, Scalar(int64_t{-1})); }},
      {"JaggedTensor::ToSparse", [&] { jagged.ToSparse(); }},
      {"JaggedTensor::FromSparse", [&] { JaggedTensor::FromSparse(var_len); }},
      {"KeyedJaggedTensor::Permute",
       [&] {
         kjt.Permute({"b", "a"});
       }},
      {"FillEmptyRows", [&] { FillEmptyRows(with_empty_rows, Scalar(0.5f)); }},
      {"CountSparse", [&] { CountSparse(var_len, RandomFloats({var_len.nnz()}, 14)); }},
      {"SegmentReduce", [&] { SegmentReduce(data, segment_ids, -1, Combiner::kMean); }},
      {"UnsortedSegmentReduce",
       [&] { UnsortedSegmentReduce(data, segment_ids, -1, Combiner::kMax); }},
      {"SparseSegmentReduce",
       [&] {
         SparseSegmentReduce(data,
                             Tensor::FromVector(std::vector<int64_t>(seg.rbegin(), seg.rend())),
                             segment_ids, -1, Combiner::kSqrtN);
       }},
      {"EmbeddingBag", [&] { EmbeddingBag(table, jagged, Combiner::kSum); }},
      {"EmbeddingBags",
       [&] {
         EmbeddingBags({table, table}, kjt, {Combiner::kSum, Combiner::kMean});
       }},
      {"EmbeddingBagBackward", [&] { EmbeddingBagBackward(grad, jagged, Combiner::kMean, 1000); }},
      {"HashBucketFast", [&] { HashBucketFast(jagged.values(), 97); }},
      {"Cross",
       [&] {
         Cross({jagged, jagged});
       }},
  };
  const int64_t points = RunCases(cases);
  EXPECT_GT(points, static_cast<int64_t>(cases.size()));
  std::printf("features: %zu operations, %lld failure points\n", cases.size(),
              static_cast<long long>(points));
}

TEST(AllocationFailures, FileReadersAndWriters) {
  TempDir dir;
  const Tensor dense = RandomFloats({200, 50}, 12);
  SparseTensor sparse = RandomSparse(300, 200, 4000, 13);
  sparse.Coalesce();
  io::Write(dir / "d.npy", dense);
  io::Write(dir / "s.npz", sparse);
  io::Write(dir / "s.mtx", sparse);
  io::Write(dir / "s.tns", sparse);
  io::Write(dir / "s.svm", sparse);
  std::vector<std::string> examples;
  for (int i = 0; i < 50; ++i) {
    examples.push_back(io::SerializeExample(
        {{"ids", Tensor::FromVector(std::vector<int64_t>{i, 2 * i, 3 * i})},
         {"score", Tensor::FromVector(std::vector<float>{0.5f * static_cast<float>(i)})}}));
  }
  std::vector<std::string_view> views(examples.begin(), examples.end());
  io::TFRecordOptions gzip;
  gzip.compression = io::TFRecordCompression::kGzip;
  io::WriteTFRecords(dir / "e.tfrecord.gz", views, gzip);
  io::ExampleSpec spec;
  spec.var_len.push_back({"ids", DType::kInt64});
  spec.fixed.push_back({"score", DType::kFloat32, {}, {}});
  const std::vector<Case> cases = {
      {"io::Read .npy", [&] { io::Read(dir / "d.npy"); }},
      {"io::Read .npz (deflated)", [&] { io::Read(dir / "s.npz"); }},
      {"io::Read .mtx", [&] { io::Read(dir / "s.mtx"); }},
      {"io::Read .tns", [&] { io::Read(dir / "s.tns"); }},
      {"io::Read .svm", [&] { io::Read(dir / "s.svm"); }},
      {"io::ReadLibsvm", [&] { io::ReadLibsvm(dir / "s.svm"); }},
      {"io::Write .npy", [&] { io::Write(dir / "w.npy", dense); }},
      {"io::Write .npz", [&] { io::Write(dir / "w.npz", sparse); }},
      {"io::Write .mtx", [&] { io::Write(dir / "w.mtx", sparse); }},
      {"io::Write .tns", [&] { io::Write(dir / "w.tns", sparse); }},
      {"io::ReadTFRecordBatch (gzip)", [&] { io::ReadTFRecordBatch(dir / "e.tfrecord.gz", gzip); }},
      {"io::ParseExamples", [&] { io::ParseExamples(views, spec); }},
      {"io::WriteTFRecords (gzip)",
       [&] { io::WriteTFRecords(dir / "w.tfrecord.gz", views, gzip); }},
      {"io::ConvertLibsvm to .npz", [&] { io::ConvertLibsvm(dir / "s.svm", dir / "c.npz"); }},
      {"io::ConvertLibsvm to .mtx", [&] { io::ConvertLibsvm(dir / "s.svm", dir / "c.mtx"); }},
      {"io::ConvertExamplesToNpz (gzip)",
       [&] { io::ConvertExamplesToNpz(dir / "e.tfrecord.gz", dir / "e.npz", gzip); }},
  };
  const int64_t points = RunCases(cases);
  EXPECT_GT(points, static_cast<int64_t>(cases.size()));
  std::printf("io: %zu operations, %lld failure points\n", cases.size(),
              static_cast<long long>(points));
  // Writers that failed half-way left no temporary behind: only the files written whole remain.
  std::set<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir / "")) {
    names.insert(entry.path().filename().string());
  }
  EXPECT_EQ(names, (std::set<std::string>{"d.npy", "s.npz", "s.mtx", "s.tns", "s.svm",
                                          "e.tfrecord.gz", "w.npy", "w.npz", "w.mtx", "w.tns",
                                          "w.tfrecord.gz", "c.npz", "c.mtx", "e.npz"}));
}

TEST(AllocationFailures, BorrowedMemory) {
  // Operations on memory tensorkit does not own: the owner's memory is never freed by a failure
  // and its deleter runs exactly once.
  std::vector<float> owned(4096, 1.25f);
  SparseTensor with_empty_rows = RandomSparse(300, 6, 200, 15);
  with_empty_rows.Coalesce();
  std::vector<int64_t> id_values(static_cast<size_t>(with_empty_rows.nnz()));
  for (size_t i = 0; i < id_values.size(); ++i) id_values[i] = static_cast<int64_t>(i * 7 % 50);
  const SparseTensor count_ids = SparseTensor::Create(
      with_empty_rows.indices(), Tensor::FromVector(std::move(id_values)), with_empty_rows.shape());
  int deletions = 0;
  {
    Tensor ext = WrapExternal(owned.data(), {64, 64}, {}, DType::kFloat32, Device::Cpu(),
                              [&deletions](void*) { ++deletions; });
    const std::vector<Case> cases = {
        {"Exp of an external tensor", [&] { Exp(ext); }},
        {"Transpose(external).Clone", [&] { Transpose(ext, 0, 1).Clone(); }},
        {"FromDense of an external tensor", [&] { SparseTensor::FromDense(ext); }},
        {"ToDLPack and FromDLPack",
         [&] {
           Tensor back = FromDLPack(ToDLPack(ext));
           EXPECT_EQ(back.raw_data(), ext.raw_data());
         }},
        {"Add into an external output", [&] { Add(ext, ext, &ext); }, {&ext}},
        // As the TensorFlow kernels do: the outputs are buffers the framework allocates, and
        // the framework may refuse one; they are shown only when the whole result is written.
        {"FillEmptyRows into a host framework's buffers",
         [&] {
           FrameworkBuffers outputs;
           outputs.Run([&] { FillEmptyRows(with_empty_rows, Scalar(2.0f), outputs); });
         }},
        {"CountSparse into a host framework's buffers",
         [&] {
           FrameworkBuffers outputs;
           outputs.Run([&] { CountSparse(count_ids, Tensor(), false, -1, -1, outputs); });
         }},
    };
    RunCases(cases);
    EXPECT_EQ(deletions, 0);
  }
  EXPECT_EQ(deletions, 1);
  // Each thread count doubled it once: the warm-up is undone, the failed runs leave it alone.
  EXPECT_EQ(owned[0], 5.0f);
}

}  // namespace
}  // namespace tensorkit
