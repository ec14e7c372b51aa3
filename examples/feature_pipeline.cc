// A feature pipeline: sparse categorical features of a batch meet a dense embedding table.
//
// Each example of the batch has a few (feature id, weight) pairs. They arrive unsorted as a COO
// SparseTensor [batch, vocabulary]; the pipeline validates them, sorts them by example, walks
// each example's entries with group(), computes weighted embedding sums with one sparse-dense
// product, and applies a nonlinearity.
#include <iostream>
#include <random>

#include "tensorkit/tensorkit.h"

using namespace tensorkit;

int main() {
  const int64_t batch = 4, vocabulary = 10, width = 3;
  // Unsorted (example, feature id) pairs with weights, as a feature extractor emits them.
  Tensor indices = Tensor::FromVector<int64_t>({2, 7, 0, 1, 3, 3, 0, 4, 2, 1, 0, 9}, {6, 2});
  Tensor weights = Tensor::FromVector<float>({0.5f, 1.0f, 2.0f, 1.5f, 1.0f, 0.25f});
  SparseTensor features = SparseTensor::Create(indices, weights, {batch, vocabulary});
  features.ValidateIndices();  // throws, naming the entry, if an id is out of range or repeated

  // Sort by example so that group({0}) can hand out each example's entries without copying.
  features.Reorder({0, 1});
  for (const auto& g : features.group({0})) {
    std::cout << "example " << g.group()[0] << ": " << g.values().NumElements() << " features, ids "
              << Select(g.indices(), 1, 1) << "\n";
  }

  // A dense embedding table [vocabulary, width] with reproducible values.
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> table_values(vocabulary * width);
  for (float& v : table_values) v = uniform(rng);
  Tensor table = Tensor::FromVector(table_values, {vocabulary, width});

  // embeddings = features @ table: the weighted sum of each example's embedding rows.
  Tensor embeddings = Tensor::Zeros({batch, width}, DType::kFloat32);
  SparseDenseProduct(1.0f, 0.0f, features, table, &embeddings);
  Tensor activated = Relu(embeddings);
  std::cout << "embeddings: " << embeddings << "\n";
  std::cout << "relu:       " << activated << "\n";
  // Per-example feature weight totals: a sparse reduction to a dense vector.
  std::cout << "weight sums: " << ReduceSum(features, {1}) << "\n";
  return 0;
}
