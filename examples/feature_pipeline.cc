// A feature pipeline over one generated batch, from parsed records to the embedding gradient.
//
//  1. Three categorical features per example (clicked items, query tokens, a country), of
//     varying length and often empty, arrive as one KeyedJaggedTensor (TorchRec's layout).
//  2. "country" also arrives as TensorFlow's VarLenFeature COO; its empty rows are filled with a
//     default id, as tf.sparse.fill_empty_rows does before an embedding lookup.
//  3. Each feature is reduced over its own embedding table (sum, mean and sqrtn bags) in one
//     table-batched pass into one [batch, sum of widths] matrix.
//  4. Ids made from raw values, as TensorFlow's feature columns make them: the tokens hashed
//     into buckets through their decimal strings, and (item, country) crossed and hashed
//     (tf.sparse.cross_hashed), then pooled over a table of their own.
//  5. A loss gradient flows back: the table gradient of the item feature is a sparse set of
//     rows (only the ids that occurred), summed deterministically.
//  6. The same from files: a Criteo-like TFRecord file of tf.Example records (13 float and 26
//     categorical features) is written, read back and parsed, its categorical features hashed,
//     crossed and pooled, its floats bucketized, empty rows filled (examples/criteo_pipeline.h,
//     which bench/pipeline_bench.cc times against TensorFlow's pipeline).
#include <filesystem>
#include <iostream>
#include <random>

#include "tensorkit/examples/criteo_pipeline.h"
#include "tensorkit/tensorkit.h"

using namespace tensorkit;

namespace {

// A [rows, width] float32 table with reproducible values.
Tensor RandomTable(int64_t rows, int64_t width, std::mt19937& rng) {
  std::uniform_real_distribution<float> uniform(-0.1f, 0.1f);
  std::vector<float> v(static_cast<size_t>(rows * width));
  for (float& x : v) x = uniform(rng);
  return Tensor::FromVector(v, {rows, width});
}

}  // namespace

int main() {
  const int64_t batch = 8;
  const std::vector<std::string> keys = {"items", "tokens", "country"};
  const std::vector<int64_t> vocabulary = {1000, 500, 50};
  const std::vector<int64_t> widths = {16, 8, 4};
  std::mt19937 rng(42);

  // 1. Lengths [F, B]: items 0-6 per example, tokens 0-4, country 0 or 1 (absent for some).
  std::vector<int64_t> lengths;
  std::vector<int64_t> ids;
  for (size_t f = 0; f < keys.size(); ++f) {
    const int64_t most = f == 0 ? 6 : f == 1 ? 4 : 1;
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t n = std::uniform_int_distribution<int64_t>(0, most)(rng);
      lengths.push_back(n);
      for (int64_t j = 0; j < n; ++j) {
        ids.push_back(std::uniform_int_distribution<int64_t>(0, vocabulary[f] - 1)(rng));
      }
    }
  }
  KeyedJaggedTensor features(keys, Tensor::FromVector(ids),
                             Tensor::FromVector(lengths, {3, batch}));
  std::cout << "batch of " << features.batch_size() << ", " << features.num_keys() << " features, "
            << features.values().NumElements() << " ids in all\n";
  for (const std::string& key : keys) {
    std::cout << "  " << key << " lengths: " << features.Get(key).lengths() << "\n";
  }

  // 2. The country feature as a VarLenFeature SparseTensor; missing countries get id 0.
  const SparseTensor country = features.ToSparse("country");
  const FillEmptyRowsResult filled = FillEmptyRows(country, int64_t{0});
  std::cout << "country rows that were empty: " << filled.empty_row_indicator << "\n";
  const JaggedTensor country_ids = JaggedTensor::FromSparse(filled.output);

  // 3. One table per feature; items and tokens as they come, country after filling.
  std::vector<Tensor> tables;
  for (size_t f = 0; f < keys.size(); ++f) {
    tables.push_back(RandomTable(vocabulary[f], widths[f], rng));
  }
  const Tensor pooled =
      EmbeddingBags(tables, features, {Combiner::kSum, Combiner::kMean, Combiner::kSqrtN});
  std::cout << "table-batched pooled embeddings: " << ShapeString(pooled.Dims()) << "\n";
  const Tensor country_vectors = EmbeddingBag(tables[2], country_ids, Combiner::kSum);
  std::cout << "country embeddings (filled): " << ShapeString(country_vectors.Dims()) << "\n";

  // 4. Hashed tokens keep their rows (the offsets are shared); crosses pair every item of an
  //    example with its country, in TensorFlow's order, and become a jagged feature again.
  const JaggedTensor hashed_tokens = HashBucketFast(features.Get("tokens"), 1 << 10);
  std::cout << "hashed tokens of example 0: " << hashed_tokens.Row(0) << "\n";
  CrossOptions cross;
  cross.num_buckets = 1000;
  const SparseTensor crossed = Cross({features.ToSparse("items"), filled.output}, cross);
  const Tensor cross_vectors = EmbeddingBag(RandomTable(cross.num_buckets, 4, rng),
                                            JaggedTensor::FromSparse(crossed), Combiner::kMean);
  std::cout << crossed.nnz() << " item x country crosses, pooled into "
            << ShapeString(cross_vectors.Dims()) << "\n";

  // 5. A gradient of ones through the item bags: the table gradient touches only the ids seen.
  const JaggedTensor items = features.Get("items");
  Tensor grad = Tensor::Zeros({batch, widths[0]}, DType::kFloat32);
  Set(1.0f, &grad);
  const SparseTensor item_grad = EmbeddingBagBackward(grad, items, Combiner::kSum, vocabulary[0]);
  std::cout << "item table gradient: " << item_grad.nnz() << " stored entries of "
            << ShapeString(item_grad.shape()) << "\n";
  Tensor dense_grad = Tensor::Zeros({vocabulary[0], widths[0]}, DType::kFloat32);
  EmbeddingBagBackward(grad, items, Combiner::kSum, &dense_grad);
  // Both forms hold the same numbers: each id's row is the number of times it occurred.
  Tensor difference = Sub(item_grad.ToDense(), dense_grad);
  Tensor total = Tensor::Zeros({1, 1}, DType::kFloat32);
  Copy(Abs(difference), &total);
  std::cout << "sparse and dense gradients differ by " << total.ToVector<float>()[0] << "\n";

  // 6. From a TFRecord file: 2000 records written, read back, through the whole pipeline.
  const std::string path =
      (std::filesystem::temp_directory_path() / "tensorkit_example_criteo.tfrecord").string();
  const std::vector<std::string> records = criteo::MakeRecords(2000, 1);
  io::WriteTFRecords(path, std::vector<std::string_view>(records.begin(), records.end()));
  const io::TFRecordBatch read = io::ReadTFRecordBatch(path);
  std::vector<std::string_view> views;
  for (int64_t i = 0; i < read.size(); ++i) views.push_back(read[i]);
  const std::vector<Tensor> pooled_features =
      criteo::Run(views, criteo::Spec(), criteo::MakeTables(), criteo::DenseBoundaries());
  std::filesystem::remove(path);
  std::cout << read.size()
            << " tf.Example records read from a TFRecord file: " << pooled_features.size()
            << " pooled features of " << ShapeString(pooled_features[0].Dims()) << "\n";
  const bool ok =
      read.size() == 2000 &&
      pooled_features.size() == static_cast<size_t>(criteo::kCategorical + 2 + criteo::kDense);
  return total.ToVector<float>()[0] == 0.0f && ok ? 0 : 1;
}
